"""Reads answer from the files as they are now: an editor's in-place save (same file truncated and
rewritten, its folder's mtime unchanged) is seen by the next CLI read, the prompt hook and a running MCP
server, in a git vault (committed, staged or untracked notes) and in a plain folder."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from ..conftest import git, mdmem, mdmem_in_process

NOTE = "notes/with-id.md"


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


def save_in_place(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` (same length) as many editors save: the same file truncated and
    rewritten; then the folder's mtime is put back, so nothing but the file itself shows the change."""
    assert len(old) == len(new)
    folder = os.stat(path.parent)
    text = path.read_text()
    assert old in text
    with open(path, "r+", encoding="utf-8") as fh:
        fh.seek(0)
        fh.write(text.replace(old, new))
        fh.truncate()
    os.utime(path.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))
    assert os.stat(path.parent).st_mtime_ns == folder.st_mtime_ns


def found(vault: Path, word: str) -> list[str]:
    out = json.loads(mdmem_in_process("--vault", str(vault), "search", word, "--json").stdout)
    assert "index" not in out.get("info", {})
    return [r["path"] for r in out["results"]]


def test_the_next_cli_search_sees_an_in_place_save(git_vault: Path) -> None:
    assert found(git_vault, "hotwire") == [NOTE]
    save_in_place(git_vault / NOTE, "Hotwire", "Quokkas")
    assert NOTE in found(git_vault, "quokkas")
    assert NOTE not in found(git_vault, "hotwire")
    # saved again, then staged: git's index now matches the file, HEAD does not
    save_in_place(git_vault / NOTE, "Quokkas", "Wombats")
    git(git_vault, "add", NOTE)
    assert NOTE in found(git_vault, "wombats") and NOTE not in found(git_vault, "quokkas")
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert status["pending"] == {"new": [], "changed": [], "deleted": []}


@pytest.mark.parametrize("first_seen_by", ["a read", "a whole scan"])
def test_a_save_back_to_the_committed_text_is_seen(git_vault: Path, first_seen_by: str) -> None:
    """Saved in place, indexed, then saved back to HEAD's text: once anything refreshes git's index
    (``git status``), git no longer lists the note, yet the index still holds the edit."""
    mdmem_in_process("--vault", str(git_vault), "reindex", "--full")  # a whole scan: git tracks every note
    save_in_place(git_vault / NOTE, "Hotwire", "Quokkas")
    if first_seen_by == "a whole scan":
        mdmem_in_process("--vault", str(git_vault), "reindex", "--full")
    assert NOTE in found(git_vault, "quokkas")
    save_in_place(git_vault / NOTE, "Quokkas", "Hotwire")
    old = os.stat(git_vault / NOTE).st_mtime - 60  # not "racily clean": git trusts the stat it refreshes
    os.utime(git_vault / NOTE, (old, old))
    git(git_vault, "status", "--porcelain")
    assert git(git_vault, "diff-index", "--name-only", "HEAD") == ""  # git no longer lists the note
    assert NOTE in found(git_vault, "hotwire") and NOTE not in found(git_vault, "quokkas")


def test_in_place_saves_of_an_untracked_note_and_in_a_folder_without_git(
    git_vault: Path, vault_dir: Path, tmp_path: Path
) -> None:
    (git_vault / "notes" / "draft.md").write_text("# Draft\n\nThe capybara plan.\n")
    assert found(git_vault, "capybara") == ["notes/draft.md"]  # a new file: its folder changed
    save_in_place(git_vault / "notes" / "draft.md", "capybara", "platypus")
    assert found(git_vault, "platypus") == ["notes/draft.md"] and found(git_vault, "capybara") == []

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.md").write_text("# A\n\nThe axolotl note.\n")
    mdmem_in_process("--vault", str(plain), "reindex")
    save_in_place(plain / "a.md", "axolotl", "narwhal")
    assert found(plain, "narwhal") == ["a.md"] and found(plain, "axolotl") == []


def test_the_prompt_hook_sees_an_in_place_save(git_vault: Path) -> None:
    mdmem_in_process("--vault", str(git_vault), "reindex")
    save_in_place(git_vault / NOTE, "Hotwire", "Okapiis")
    payload = {"prompt": "what did we decide about okapiis for new frontends?", "cwd": str(git_vault)}
    proc = mdmem(
        "--vault", str(git_vault), "hook", "prompt", "--time-budget", "30000", input=json.dumps(payload), check=False
    )  # (the budget: a loaded machine; the test is about what the hook sees)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Okapiis" in context


def test_a_running_mcp_server_sees_in_place_saves(git_vault: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    note = git_vault / NOTE
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mdmem", "--vault", str(git_vault), "mcp"], env=dict(os.environ)
    )

    async def paths(s: ClientSession, word: str) -> list[str]:
        r = await s.call_tool("search", {"query": word, "limit": 5})
        assert not r.is_error
        return [h["path"] for h in r.structured_content["results"]]

    async def main() -> None:
        with open(tmp_path / "err.log", "w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    assert NOTE in await paths(s, "hotwire")
                    save_in_place(note, "Hotwire", "Dugongs")  # at once: no pause between the two reads
                    assert NOTE in await paths(s, "dugongs")
                    assert NOTE not in await paths(s, "hotwire")
                    save_in_place(note, "Dugongs", "Manatee")
                    assert NOTE in await paths(s, "manatee")

    anyio.run(main)


def test_a_watching_process_sees_saves_renames_and_new_folders(git_vault: Path) -> None:
    from mdmem import Vault

    with Vault.open(git_vault) as v:
        assert v.watch_files()
        assert NOTE in [h.path for h in v.search("hotwire")]
        save_in_place(git_vault / NOTE, "Hotwire", "Gharial")
        assert NOTE in [h.path for h in v.search("gharial")]
        (git_vault / "deep" / "er").mkdir(parents=True)
        (git_vault / "deep" / "er" / "n.md").write_text("# N\n\nThe pangolin note.\n")
        assert [h.path for h in v.search("pangolin")] == ["deep/er/n.md"]
        save_in_place(git_vault / "deep" / "er" / "n.md", "pangolin", "tapirsss")  # a folder watched since
        assert [h.path for h in v.search("tapirsss")] == ["deep/er/n.md"]
        os.replace(git_vault / "deep" / "er" / "n.md", git_vault / "deep" / "m.md")
        assert [h.path for h in v.search("tapirsss")] == ["deep/m.md"]


@pytest.mark.parametrize("inline", [True, False], ids=["hook-inline", "background-job"])
def test_excluded_files_never_pend_after_a_checkout_whatever_mdmem_toml_said(
    git_vault: Path, inline: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the older commit the vault had no mdmem.toml excludes (README.md was a note); at the newer one
    README.md is excluded. Checking out one and back leaves nothing pending and README.md no note."""
    from .test_catchup import checkout, wait_for_job

    (git_vault / "README.md").write_text("# Readme\n\nThe axolotl readme.\n")
    (git_vault / "mdmem.toml").write_text("[vault]\nexclude = []\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "readme is a note")
    git(git_vault, "tag", "before")
    (git_vault / "mdmem.toml").write_text('[vault]\nexclude = ["README.md", "AGENTS.md"]\n')
    git(git_vault, "commit", "-qam", "readme is not")
    if not inline:
        monkeypatch.setenv("MDMEM_INLINE_MAX", "0")
    for ref, readme_found in (("before", True), ("main", False), ("before", True), ("main", False)):
        assert checkout(git_vault, ref).returncode == 0
        wait_for_job(git_vault)
        status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
        assert status["pending"] == {"new": [], "changed": [], "deleted": []} and status["fresh"], ref
        assert (found(git_vault, "axolotl") == ["README.md"]) is readme_found


def test_without_mdmem_toml_the_templates_excludes_apply(tmp_path: Path) -> None:
    import tomllib

    from mdmem.adapters.config import DEFAULT_EXCLUDE, load_config

    template = Path(__file__).resolve().parents[2] / "vault_template" / "mdmem.toml"
    assert tuple(tomllib.loads(template.read_text())["vault"]["exclude"]) == DEFAULT_EXCLUDE
    assert load_config(tmp_path).exclude == DEFAULT_EXCLUDE
    (tmp_path / "mdmem.toml").write_text('[vault]\nnotes_dir = "n"\n')
    assert load_config(tmp_path).exclude == ()  # a file that names no excludes: none
