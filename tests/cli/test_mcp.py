"""`citadel mcp`: its warm-up (the protocol itself: tests/server/test_mcp_door.py)."""

import onnxruntime
import pytest
import spacy

from citadel.cli.mcp import warm_up
from citadel.config import Settings
from citadel.engine import Engine


def test_after_the_warm_up_an_answer_loads_no_model(minilm_home, monkeypatch):
    engine = Engine.open(Settings(home=minilm_home, log_requests=False))
    try:
        warm_up(engine)

        def no_load(*args, **kwargs):
            pytest.fail("a model was loaded during the answer")

        monkeypatch.setattr(onnxruntime, "InferenceSession", no_load)
        monkeypatch.setattr(spacy, "load", no_load)
        answer = engine.answer("How long are gift cards valid?")
    finally:
        engine.close()
    assert answer.citations
