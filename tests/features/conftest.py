"""Fixtures of the feature tests: a shared repository and its clones, each an mdmem vault."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import git, mdmem_in_process


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


def clone(bare: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(bare), str(dest))
    mdmem_in_process("init", str(dest))  # adopts the notes; installs the hooks, builds this clone's index
    return dest
