"""`EngineProvider.current`: the engine, without work, or None when `get` has work to do
(the app's `get_engine` then calls `get` in a worker thread, off the event loop)."""

from citadel.server.provider import EngineProvider


def test_current_is_the_served_engine_once_its_lease_is_taken(hashing_engine):
    provider = EngineProvider(hashing_engine.settings, engine=hashing_engine)
    assert provider.current() is None  # the caller's engine is leased on first `get`
    assert provider.get() is hashing_engine
    assert provider.current() is hashing_engine


def test_current_is_none_while_an_alias_check_is_due(hashing_engine, monkeypatch):
    now = [0.0]
    settings = hashing_engine.settings.model_copy(update={"snapshot_check_seconds": 5.0})
    provider = EngineProvider(settings, opener=lambda s, previous: hashing_engine,
                              clock=lambda: now[0])
    monkeypatch.setattr(provider, "_lease", lambda engine: None)
    assert provider.current() is None  # nothing opened yet
    assert provider.get() is hashing_engine
    assert provider.current() is hashing_engine
    now[0] = 4.0
    assert provider.current() is hashing_engine
    now[0] = 5.0
    assert provider.current() is None  # time to read the alias
