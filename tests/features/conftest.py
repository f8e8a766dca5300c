"""Fixtures of the feature tests: a shared repository and its clones, each an mdmem vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import clone, git, mdmem_in_process


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare repository and two clones, each an mdmem vault with its hooks: (bare, a, b)."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(bare), str(a))
    mdmem_in_process("init", str(a))
    git(a, "push", "-q", "-u", "origin", "main")
    b = clone(bare, tmp_path / "b")
    return bare, a, b


def project_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository and a clone of it holding code (``app.py``) and a vault in ``memory/``, pushed:
    (bare, a). Clone it again with ``clone(bare, DEST, "memory")``."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(bare), str(a))
    (a / "app.py").write_text("print('v1')\n")
    git(a, "add", "app.py")
    git(a, "commit", "-q", "-m", "code")
    mdmem_in_process("init", str(a / "memory"))
    git(a, "push", "-q", "-u", "origin", "main")
    return bare, a
