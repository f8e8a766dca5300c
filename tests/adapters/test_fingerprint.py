"""A model's fingerprint is its files' content: a fine-tune of the same size put in the same folder is
another model (its vectors, its ONNX export and its vector pack are never mixed with the old ones)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mdmem.adapters.embed import EmbedSettings, TransformersEmbedder, bundled_model_path


def test_same_names_and_sizes_with_other_weights_are_another_model(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copyfile(bundled_model_path() / "config.json", folder / "config.json")
    weights = folder / "model.safetensors"
    weights.write_bytes(b"\0" * 4096)
    first = TransformersEmbedder(folder, EmbedSettings(), name="model").fingerprint
    assert TransformersEmbedder(folder, EmbedSettings(), name="model").fingerprint == first  # stable
    stat = weights.stat()
    weights.write_bytes(b"\0" * 4095 + b"\1")  # a fine-tune: same name, same size, same mtime
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size
    second = TransformersEmbedder(folder, EmbedSettings(), name="model").fingerprint
    assert second != first


def test_the_bundled_model_keeps_the_id_its_vectors_have() -> None:
    emb = TransformersEmbedder(bundled_model_path(), EmbedSettings(), name="all-MiniLM-L6-v2")
    assert emb.model_digest == "69fec7cedea7"  # vaults embedded before keep their vectors
