"""`citadel llm`: listing, assembling and serving local models, with errors that say what to do."""

from click.testing import CliRunner

from citadel.cli import main


def run(tmp_path, *args):
    env = {"CITADEL_HOME": str(tmp_path / "home"),
           "CITADEL_LLM_MODELS_DIR": str(tmp_path / "models")}
    result = CliRunner().invoke(main, ["llm", *args], env=env)
    assert "Traceback" not in result.output
    return result


def test_models_lists_each_local_model_and_where_it_stands(tmp_path):
    result = run(tmp_path, "models")
    assert result.exit_code == 0
    assert "qwen2.5-coder-1.5b (default)" in result.output
    assert "qwen2.5-coder-0.5b" in result.output
    assert "not assembled" in result.output  # a fresh models folder


def test_assemble_an_unknown_model_names_the_known_ones(tmp_path):
    result = run(tmp_path, "assemble", "gpt-9")
    assert result.exit_code == 1
    assert "unknown local model 'gpt-9'" in result.output
    assert "qwen2.5-coder-1.5b" in result.output


def test_serve_refuses_an_unknown_model_before_starting_anything(tmp_path):
    result = run(tmp_path, "serve", "gpt-9", "--port", "0")
    assert result.exit_code == 1 and "unknown local model" in result.output
