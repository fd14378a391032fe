# The loopback help centre of the ingest tests, for `citadel ingest URL` and `citadel sync`.
from tests.ingest.conftest import help_site, site  # noqa: F401 - fixtures
