"""Shared fixtures: a copy of the fixture corpus, optionally as a real git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "vault"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("MDMEM_VAULT", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "MDMEM_SKIP_HOOK"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A plain folder holding a copy of the fixture notes (not a git repository)."""
    dest = tmp_path / "vault"
    shutil.copytree(FIXTURE, dest)
    return dest


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def mdmem(*args: str, cwd: Path | None = None, input: str | None = None, check: bool = True,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess (as a user or a git hook would)."""
    proc = subprocess.run([sys.executable, "-m", "mdmem", *args], cwd=cwd, input=input,
                          capture_output=True, text=True, env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"mdmem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def git_vault(vault_dir: Path) -> Path:
    """The fixture notes in a real git repository, committed, with mdmem's hooks installed."""
    git(vault_dir, "init", "-q", "-b", "main")
    mdmem("init", str(vault_dir))
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-qm", "fixture notes")
    return vault_dir


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file outside .git and .mdmem, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".mdmem"} & set(p.relative_to(root).parts)
    }
