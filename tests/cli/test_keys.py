"""`citadel keys`: a key store others can change is refused with one line saying the chmod."""

from __future__ import annotations

from click.testing import CliRunner

from citadel.cli import main


def test_a_key_store_others_can_write_is_refused_with_the_chmod_to_run(tmp_path):
    env = {"CITADEL_HOME": str(tmp_path), "CITADEL_EMBEDDER": "hashing"}
    runner = CliRunner()
    assert runner.invoke(main, ["keys", "rotate"], env=env).exit_code == 0
    keys = tmp_path / "keys"
    keys.chmod(0o777)
    for command in (["keys", "list"], ["keys", "rotate"], ["keys", "export"]):
        result = runner.invoke(main, command, env=env)
        assert result.exit_code == 1, result.output
        assert result.output.startswith(f"Error: {keys} has mode 0777: others can write in it")
        assert f"run `chmod 700 {keys}`" in result.output
        assert "Traceback" not in result.output and "unexpected" not in result.output
