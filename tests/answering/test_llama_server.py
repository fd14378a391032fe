"""The in-process llama.cpp server and the `local` generator: errors that say what to do.
(A real model answering is `make test-llm`, outside the default suite.)"""

import builtins

import pytest

from citadel.answering.generators import get_generator
from citadel.answering.generators.llama_server import LlamaServer
from citadel.answering.generators.model_packages import ModelUnavailable
from citadel.config import ConfigError, Settings


def test_missing_xllamacpp_gives_the_install_hint(tmp_path, monkeypatch):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    real_import = builtins.__import__

    def no_xllamacpp(name, *args, **kwargs):
        if name == "xllamacpp":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_xllamacpp)
    with pytest.raises(ModelUnavailable, match=r"\.\[llm\]"):
        LlamaServer(model, alias="m")


def test_missing_model_file_is_refused(tmp_path):
    with pytest.raises(ModelUnavailable, match="no model file"):
        LlamaServer(tmp_path / "absent.gguf", alias="m")


def test_local_generator_with_unknown_model_is_a_config_error(tmp_path):
    settings = Settings(home=tmp_path, generator="local", llm_local_model="gpt-9")
    with pytest.raises(ConfigError, match="generator 'local': unknown local model"):
        get_generator(settings)


def test_unknown_generator_names_the_three_choices(tmp_path):
    with pytest.raises(ConfigError, match="'extractive', 'openai' or 'local'"):
        get_generator(Settings(home=tmp_path, generator="gpt"))
