"""Knowledge: immutable, fingerprinted snapshots behind an atomic alias.

`snapshots` (catalog, manifests, fingerprints), `snapshot_admin` (list, activate, rollback,
delete, gc), `readiness` (may this snapshot be served by this configuration?), `verify`
(re-check a saved answer's citation receipts), `build_lock` and `sqlite_wal`.
"""
