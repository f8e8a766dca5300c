"""Git integration with real repositories: hooks keep the index fresh and never break git."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ..conftest import git, mdmem, mdmem_in_process, snapshot


def search_paths(vault: Path, query: str) -> list[str]:
    out = mdmem_in_process("--vault", str(vault), "search", query, "--json").stdout
    return [r["path"] for r in json.loads(out)["results"]]


def test_init_creates_a_committed_vault_with_hooks(tmp_path: Path) -> None:
    v = tmp_path / "new"
    proc = mdmem_in_process("init", str(v))
    assert "Initialised a git repository" in proc.stdout
    assert (v / "mdmem.toml").is_file() and (v / ".git").is_dir()
    assert ".mdmem/" in (v / ".gitignore").read_text()
    assert git(v, "status", "--porcelain") == ""  # template committed, index ignored
    hooks = {p.name for p in (v / ".git" / "hooks").iterdir() if not p.name.endswith(".sample")}
    assert hooks == {"post-commit", "post-merge", "post-checkout", "post-rewrite"}
    assert search_paths(v, "hotwire")[0] == "notes/use-hotwire-for-new-frontends.md"
    status = json.loads(mdmem_in_process("--vault", str(v), "status", "--json").stdout)
    assert status["fresh"] and status["git"]["head"] == status["git"]["last_indexed_commit"]


def test_hand_written_notes_are_searchable_right_after_commit(git_vault: Path) -> None:
    (git_vault / "notes" / "hand.md").write_text("---\ntitle: [unclosed\n---\nThe capybara protocol ERR_CAPY_7.\n")
    (git_vault / "notes" / "中文.md").write_text("# 会议纪要\n\n我们讨论了缓存失效的问题。\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "hand notes")
    assert search_paths(git_vault, "ERR_CAPY_7")[0] == "notes/hand.md"
    assert search_paths(git_vault, "缓存失效") == ["notes/中文.md"]
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert status["fresh"], status["pending"]


def test_uncommitted_edit_and_delete_show_after_reindex(git_vault: Path) -> None:
    (git_vault / "notes" / "bare-date.md").write_text("Now about narwhals.\n")
    (git_vault / "notes" / "cjk.md").unlink()
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert not status["fresh"]
    assert status["pending"] == {"new": [], "changed": ["notes/bare-date.md"], "deleted": ["notes/cjk.md"]}
    mdmem_in_process("--vault", str(git_vault), "reindex")
    assert search_paths(git_vault, "narwhals") == ["notes/bare-date.md"]
    assert search_paths(git_vault, "数据库") == []


def test_checkout_and_merge_reindex(git_vault: Path) -> None:
    git(git_vault, "checkout", "-q", "-b", "feature")
    (git_vault / "notes" / "feature.md").write_text("Feature branch note about lemurs.\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "feature")
    assert search_paths(git_vault, "lemurs") == ["notes/feature.md"]
    git(git_vault, "checkout", "-q", "main")
    assert search_paths(git_vault, "lemurs") == []
    git(git_vault, "merge", "-q", "--no-edit", "feature")
    assert search_paths(git_vault, "lemurs") == ["notes/feature.md"]


def test_rebase_reindexes_through_post_rewrite(git_vault: Path) -> None:
    (git_vault / "notes" / "r.md").write_text("first tapir\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "r")
    (git_vault / "notes" / "r.md").write_text("amended okapi\n")
    git(git_vault, "commit", "-qa", "--amend", "--no-edit")
    assert search_paths(git_vault, "okapi") == ["notes/r.md"]


def test_existing_hook_is_chained_and_restored(tmp_path: Path) -> None:
    v = tmp_path / "v"
    v.mkdir()
    git(v, "init", "-q")
    hook = v / ".git" / "hooks" / "post-commit"
    hook.write_text('#!/bin/sh\necho legacy-ran >> "$(git rev-parse --show-toplevel)/../legacy.log"\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    original = hook.read_text()
    out = mdmem_in_process("init", str(v)).stdout
    assert "post-commit.legacy" in out
    assert (tmp_path / "legacy.log").read_text() == "legacy-ran\n"  # init's own commit (mdmem.toml, .gitignore)
    (v / "n.md").write_text("a quokka\n")
    git(v, "add", "-A")
    git(v, "commit", "-qm", "x")
    assert (tmp_path / "legacy.log").read_text() == "legacy-ran\n" * 2
    assert search_paths(v, "quokka") == ["n.md"]
    mdmem_in_process("--vault", str(v), "hooks", "uninstall")
    assert hook.read_text() == original
    assert not (v / ".git" / "hooks" / "post-commit.legacy").exists()
    assert not (v / ".git" / "hooks" / "post-merge").exists()


def test_failing_legacy_checkout_hook_keeps_its_exit_status(git_vault: Path) -> None:
    mdmem_in_process("--vault", str(git_vault), "hooks", "uninstall")
    hook = git_vault / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\nexit 3\n")
    hook.chmod(0o755)
    mdmem_in_process("--vault", str(git_vault), "hooks", "install")
    proc = os.system(f"cd {git_vault} && git checkout -q -b other 2>/dev/null")
    assert os.waitstatus_to_exitcode(proc) != 0  # the user's failing hook still fails checkout


def test_hook_never_fails_the_commit(git_vault: Path) -> None:
    (git_vault / "mdmem.toml").write_text("this is [not toml\n")
    (git_vault / "notes" / "x.md").write_text("llama\n")
    git(git_vault, "add", "-A")
    proc = os.system(f"cd {git_vault} && git commit -qm broken-config 2>/dev/null")
    assert proc == 0
    assert "broken-config" in git(git_vault, "log", "-1", "--format=%s")


def test_hook_marks_stale_when_lock_is_held_and_next_command_catches_up(git_vault: Path) -> None:
    from mdmem import Vault

    v = Vault.open(git_vault)
    (git_vault / "notes" / "late.md").write_text("a late pangolin\n")
    git(git_vault, "add", "-A")
    with v.writer_lock():
        proc = mdmem(
            "--vault", str(git_vault), "reindex", "--git-hook", "post-commit", env={"MDMEM_HOOK_LOCK_TIMEOUT": "0.1"}
        )
        assert proc.returncode == 0 and "index not updated" in proc.stderr
        assert (git_vault / ".mdmem" / "stale").exists()
    assert search_paths(git_vault, "pangolin") == ["notes/late.md"]
    assert not (git_vault / ".mdmem" / "stale").exists()


def test_hooks_path_is_refused_with_a_hint(git_vault: Path) -> None:
    git(git_vault, "config", "core.hooksPath", ".githooks")
    proc = mdmem_in_process("--vault", str(git_vault), "hooks", "install", check=False)
    assert proc.returncode == 1 and "hint:" in proc.stderr


def test_init_adopts_an_existing_folder_without_rewriting_notes(vault_dir: Path) -> None:
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian" / "app.json").write_text("{}")
    before = snapshot(vault_dir)
    out = mdmem_in_process("init", str(vault_dir)).stdout
    assert "Adopted" in out
    after = snapshot(vault_dir)
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) == {"mdmem.toml", ".gitignore"}
    doctor = json.loads(mdmem_in_process("--vault", str(vault_dir), "doctor", "--json", check=False).stdout)
    assert doctor["count"] > 0 and f"({doctor['count']} problem(s): run" in out  # doctor's count, dangling links too


def test_status_counts_missing_hooks_as_the_vaults_problem_not_a_notes(git_vault: Path) -> None:
    """A fresh clone has no hooks: that is the vault's set-up, not two broken notes."""
    import shutil

    notes = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    for hook in (git_vault / ".git" / "hooks").glob("post-*"):
        hook.unlink()
    shutil.rmtree(git_vault / ".mdmem")
    after = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert after["vault_problems"] == 1 and after["problems"] == notes["problems"] + 1
    assert after["notes_with_problems"] == notes["notes_with_problems"]
    text = mdmem_in_process("--vault", str(git_vault), "status").stdout
    assert f"in {notes['notes_with_problems']} note(s), 1 in the vault's set-up — run" in text


def _user_repo(root: Path) -> Path:
    """A repository of someone's notes: a committed .gitignore, then a staged edit and an untracked note."""
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# A\n\nAlpacas graze.\n")
    (root / ".gitignore").write_text("node_modules\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes")
    (root / "notes" / "a.md").write_text("# A\n\nAlpacas graze at dawn.\n")
    git(root, "add", "notes/a.md")
    (root / "notes" / "b.md").write_text("untracked draft\n")
    return root


def test_init_on_an_existing_repository_says_what_it_did_and_commits_only_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: init said it "added .gitignore" when it appended to it, left mdmem.toml and .gitignore
    uncommitted without a word, and printed a relative path in its hint."""
    v = _user_repo(tmp_path / "v")
    before = snapshot(v)
    monkeypatch.chdir(tmp_path)
    out = mdmem_in_process("init", "v").stdout
    assert f"Adopted vault at {v} (created mdmem.toml; appended .mdmem/ to .gitignore)" in out
    assert "added" not in out
    assert f'Next: mdmem --vault {v} search "WORDS"' in out  # absolute: right from any folder
    assert git(v, "show", "--name-only", "--format=%s", "HEAD").split() == [
        "mdmem:",
        "adopt",
        "this",
        "folder",
        "as",
        "a",
        "vault",
        "(mdmem.toml,",
        ".gitignore)",
        ".gitignore",
        "mdmem.toml",
    ]
    assert "Committed mdmem.toml, .gitignore" in out
    assert git(v, "status", "--porcelain").splitlines() == ["M  notes/a.md", "?? notes/b.md"]  # theirs, untouched
    after = snapshot(v)
    assert {k: b for k, b in after.items() if k != ".gitignore" and k in before} == {
        k: b for k, b in before.items() if k != ".gitignore"
    }  # no note touched
    assert after[".gitignore"].startswith(before[".gitignore"])  # appended to, not rewritten
    again = mdmem_in_process("init", str(v)).stdout  # nothing left to do: nothing made, nothing committed
    assert "Committed" not in again and "created" not in again and git(v, "rev-list", "--count", "HEAD") == "2\n"


def test_init_no_commit_and_a_gitignore_with_the_users_changes_stay_uncommitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v = _user_repo(tmp_path / "v")
    out = mdmem_in_process("init", str(v), "--no-commit").stdout
    assert f"Not committed (--no-commit): {v / 'mdmem.toml'}, {v / '.gitignore'}." in out
    assert git(v, "rev-list", "--count", "HEAD") == "1\n"
    w = _user_repo(tmp_path / "w")
    with open(w / ".gitignore", "a") as fh:
        fh.write("*.log\n")  # the user's own uncommitted change
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key)  # and no git identity at all (HOME is empty): mdmem's commits still work
    out = mdmem_in_process("init", str(w)).stdout
    assert "Committed mdmem.toml (" in out and f"Not committed (it has changes of yours): {w / '.gitignore'}." in out
    assert git(w, "show", "--name-only", "--format=%an", "HEAD").split() == ["mdmem", "mdmem.toml"]
    assert " M .gitignore" in git(w, "status", "--porcelain")


def test_add_commits_only_its_note(git_vault: Path) -> None:
    (git_vault / "notes" / "staged.md").write_text("staged by the user\n")
    git(git_vault, "add", "notes/staged.md")
    out = json.loads(
        mdmem_in_process(
            "--vault",
            str(git_vault),
            "add",
            "--title",
            "Saved by agent",
            "--json",
            input="Body of the saved note about ibexes.",
        ).stdout
    )
    assert git(git_vault, "show", "--name-only", "--format=%s", "HEAD").split() == [
        "mdmem:",
        "add",
        "note",
        '"Saved',
        "by",
        'agent"',
        out["path"],
    ]
    assert "A  notes/staged.md" in git(git_vault, "status", "--porcelain")  # still staged, not committed
    assert search_paths(git_vault, "ibexes") == [out["path"]]
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert status["git"]["last_indexed_commit"] == status["git"]["head"]


@pytest.mark.parametrize("state", ["merge", "rebase"])
def test_mid_merge_or_rebase_conflicts_are_indexed_and_reported(git_vault: Path, state: str) -> None:
    note = git_vault / "notes" / "bare-date.md"
    git(git_vault, "checkout", "-q", "-b", "a")
    note.write_text("version a iguana\n")
    git(git_vault, "commit", "-qam", "a")
    git(git_vault, "checkout", "-q", "main")
    note.write_text("version main iguana\n")
    git(git_vault, "commit", "-qam", "main")
    cmd = ["merge", "a"] if state == "merge" else ["rebase", "a"]
    proc = os.system(f"cd {git_vault} && git {' '.join(cmd)} >/dev/null 2>&1")
    assert proc != 0  # conflict
    mdmem_in_process("--vault", str(git_vault), "reindex")
    assert search_paths(git_vault, "iguana") == ["notes/bare-date.md"]
    doc = mdmem_in_process("--vault", str(git_vault), "doctor", "--json", check=False)
    assert doc.returncode == 1
    assert any(
        p["path"] == "notes/bare-date.md" and "conflict" in p["message"] for p in json.loads(doc.stdout)["problems"]
    )


def test_file_checkout_restoring_a_note_is_reindexed(git_vault: Path) -> None:
    note = git_vault / "notes" / "bare-date.md"
    note.write_text("scribbled wombat\n")
    mdmem_in_process("--vault", str(git_vault), "reindex")
    assert search_paths(git_vault, "wombat") == ["notes/bare-date.md"]
    git(git_vault, "checkout", "--", "notes/bare-date.md")  # post-checkout with flag 0, HEAD unchanged
    assert search_paths(git_vault, "wombat") == []
    assert search_paths(git_vault, "Tuesday") == ["notes/bare-date.md"]


def test_hook_reindexes_only_what_the_commit_touched(git_vault: Path) -> None:
    from mdmem import Vault

    (git_vault / "notes" / "uncommitted.md").write_text("dingo draft\n")
    (git_vault / "notes" / "committed.md").write_text("committed numbat\n")
    git(git_vault, "add", "notes/committed.md")
    git(git_vault, "commit", "-qm", "one note")
    v = Vault.open(git_vault)
    v.store.follow_generation()  # the catalogue as the hook left it, before a read's repair() looks around
    indexed = v.store.catalog.stamps()
    assert "notes/committed.md" in indexed
    assert "notes/uncommitted.md" not in indexed  # not committed: not for the hook
    assert v.store.catalog.get_meta("last_commit") == git(git_vault, "rev-parse", "HEAD").strip()
    # A read notices the new file in notes/ (the folder's mtime) and indexes it before it answers.
    assert [h.path for h in v.search("numbat")] == ["notes/committed.md"]
    assert [h.path for h in v.search("dingo")] == ["notes/uncommitted.md"]
    git(git_vault, "rm", "-q", "notes/committed.md")
    git(git_vault, "commit", "-qm", "remove")
    assert v.search("numbat") == []


def test_hook_rebuild_runs_in_the_background(git_vault: Path) -> None:
    import shutil
    import time

    shutil.rmtree(git_vault / ".mdmem")
    proc = mdmem("--vault", str(git_vault), "reindex", "--git-hook", "post-commit")
    assert "in the background" in proc.stderr
    for _ in range(200):
        if (git_vault / ".mdmem" / "manifest.json").exists():
            break
        time.sleep(0.1)
    assert search_paths(git_vault, "descaling") == ["notes/empty-frontmatter.md"]


@pytest.mark.parametrize(
    ("stderr", "retry"),
    [
        ("fatal: Unable to create '/v/.git/index.lock': File exists.", True),
        ("fatal: cannot lock ref 'HEAD': Unable to create '/v/.git/HEAD.lock': File exists.", True),
        ("fatal: cannot lock ref 'HEAD': is at 0bd3160 but expected 76c526d", True),  # another commit won the race
        ("error: pathspec 'notes/x.md' did not match any file(s) known to git", False),
        ("fatal: unable to write new index file", False),
    ],
)
def test_only_git_lock_contention_is_retried(stderr: str, retry: bool) -> None:
    from mdmem.adapters.git import lock_contention

    assert lock_contention(stderr) is retry


def test_a_sparse_checkout_counts_only_its_own_notes_as_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook weighs a change by the notes the commits touched that are here: a sparse checkout's diff
    also names the files outside it, which made a pull of one note of this checkout "21 notes changed;
    indexing them in the background" (3,662 notes on disk said "17896 notes changed")."""
    import subprocess

    monkeypatch.setenv("MDMEM_INLINE_MAX", "5")
    origin, sparse = tmp_path / "origin", tmp_path / "sparse"
    for name in ["a/a0", "a/a1", *(f"b/b{i:02}" for i in range(20))]:
        (origin / "notes" / name).parent.mkdir(parents=True, exist_ok=True)
        (origin / "notes" / f"{name}.md").write_text(f"# {name}\n\nFirst words of {name}.\n")
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "notes")
    git(tmp_path, "clone", "-q", "--no-checkout", str(origin), str(sparse))
    git(sparse, "sparse-checkout", "set", "notes/a")
    git(sparse, "checkout", "-q", "main")
    mdmem_in_process("init", "--no-commit", str(sparse))
    for note in [origin / "notes" / "a" / "a0.md", *sorted((origin / "notes" / "b").glob("*.md"))]:
        note.write_text(note.read_text() + "\nAlso about the okapi.\n")
    git(origin, "commit", "-qam", "okapi everywhere")
    pull = subprocess.run(["git", "pull", "-q"], cwd=sparse, capture_output=True, text=True, check=True)
    assert "notes changed" not in pull.stderr, pull.stderr
    assert search_paths(sparse, "okapi") == ["notes/a/a0.md"]  # indexed by the hook, not a job
