"""Fuzz the HTTP API from its own OpenAPI schema: whatever schemathesis sends (valid or not),
the server answers with a documented status and body, and never with a 5xx.

`/v1/agent` is called with a demo customer's key, so its cases reach the agent; schemathesis'
`ignored_auth` check then replays them without a key and with a wrong one and expects 401.

Bounded: a fixed number of derandomized examples per operation and generation mode. (The
schemathesis pytest plugin does not support pytest 9, so the operations are driven here.)
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from citadel.server import create_app
from tests.helpers_agent import ALICE_KEY, with_demo_business

EXAMPLES = 20


AUTH = {"Authorization": f"Bearer {ALICE_KEY}"}


@pytest.fixture(scope="module")
def api_schema(hashing_engine, tmp_path_factory):
    engine = with_demo_business(hashing_engine,
                                tmp_path_factory.mktemp("fuzz") / "business.sqlite")
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(engine))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_schema(api_schema, mode):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {"POST /v1/answer", "POST /v1/answer/stream", "GET /v1/chunks/{chunk_id}",
            "GET /v1/documents/{document_id}", "GET /healthz", "GET /readyz",
            "POST /v1/agent"} <= labels
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not list(operation.iter_parameters()) \
                and not list(operation.body):
            continue  # nothing to get wrong

        @given(case=operation.as_strategy(mode))
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate(headers=AUTH if case.operation.label == "POST /v1/agent"
                                   else None)

        try:
            check()
        except Unsatisfiable:
            # Its parameters have no constraint to break (GET /v1/documents/{id} lost its only
            # constrained one, `tenant`, which now comes from the API key): nothing to get wrong.
            if mode is GenerationMode.NEGATIVE:
                continue
            raise
        except Exception as exc:
            raise AssertionError(f"{operation.label} ({mode.value}): {exc}") from exc
