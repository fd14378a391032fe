"""Settings input from the environment: typos and empty values are refused, never guessed."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from citadel.config import ConfigError, Settings


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITADEL_")}
    return {**env, **extra}


def test_a_misspelt_citadel_variable_is_refused_naming_the_closest_setting(tmp_path):
    with pytest.raises(ConfigError) as err:
        Settings.load(env={"CITADEL_HOME": str(tmp_path), "CITADEL_TOPK": "3"})
    message = str(err.value)
    assert "CITADEL_TOPK" in message and "CITADEL_TOP_K" in message


def test_deliberate_non_setting_citadel_variables_are_accepted(tmp_path):
    env = {"CITADEL_HOME": str(tmp_path), "CITADEL_DEBUG": "1", "CITADEL_CONFIG": "",
           "CITADEL_TEST_POSTGRES_DSN": "postgresql://x", "CITADEL_PG_PORT": "1",
           "CITADEL_API_KEY": "k", "CITADEL_RERANKER_API_KEY": "k",
           "CITADEL_MONITOR_LOW_AUTHORITY": "0.3", "CITADEL_TOP_K": "3"}
    assert Settings.load(env=env).top_k == 3


def test_the_cli_exits_non_zero_with_one_line_for_an_unknown_variable(tmp_path):
    env = _clean_env(CITADEL_HOME=str(tmp_path), CITADEL_EMBEDER="hashing")
    out = subprocess.run([sys.executable, "-m", "citadel", "kb", "list"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "CITADEL_EMBEDER" in lines[0] and "CITADEL_EMBEDDER" in lines[0]
    assert "Traceback" not in out.stderr


def test_an_empty_citadel_home_is_an_error_not_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        Settings.load(env={"CITADEL_HOME": ""})
    assert "CITADEL_HOME" in str(err.value) and "empty" in str(err.value)


def test_an_empty_home_in_the_config_file_is_an_error(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('home = ""\n')
    with pytest.raises(ConfigError, match="empty"):
        Settings.load(env={"CITADEL_CONFIG": str(config)})


def test_an_unset_citadel_home_still_means_the_default_folder():
    assert Settings.load(env={}).home == Path(".citadel")
