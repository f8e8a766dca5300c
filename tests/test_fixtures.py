"""The shared fixtures themselves: ``git_vault``'s copy of a vault built once per worker is that vault."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import FIXTURE, FIXTURE_IGNORE, _build_git_vault, git, mdmem_in_process


def test_git_vault_is_the_vault_built_in_place(git_vault: Path, tmp_path: Path) -> None:
    """Nothing under ``.git`` or ``.mdmem`` names the folder it was built in (a copy would point at the
    template), and the copy has the history, the files and the clean tree of one built where it is."""
    for part in (".git", ".mdmem"):
        for p in (git_vault / part).rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                assert b"git-vault-template" not in data, p
                assert str(tmp_path).encode() not in data, p
    here = tmp_path / "here"
    shutil.copytree(FIXTURE, here, ignore=FIXTURE_IGNORE)
    _build_git_vault(here)
    for args in (["status", "--porcelain"], ["log", "--format=%s%n%b"], ["ls-files", "-s"], ["config", "--list"]):
        assert git(git_vault, *args) == git(here, *args), args
    hooks = sorted(p.name for p in (here / ".git" / "hooks").iterdir() if not p.name.endswith(".sample"))
    assert hooks and all(
        (git_vault / ".git" / "hooks" / h).read_bytes() == (here / ".git/hooks" / h).read_bytes() for h in hooks
    )


def test_git_vault_index_is_fresh_under_this_tests_key(git_vault: Path) -> None:
    """The copy's index is sealed with this test's key and matches the notes: nothing is rebuilt or read again."""
    out = json.loads(mdmem_in_process("--vault", str(git_vault), "reindex", "--json").stdout)
    assert (out["full"], out["added"], out["updated"], out["deleted"], out["reason"]) == (False, [], [], [], "")
    assert out["unchanged"] == len(list((git_vault / "notes").rglob("*.md")))
