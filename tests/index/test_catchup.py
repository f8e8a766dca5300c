"""Big git changes are indexed by one background job; reads notice what no hook reported.

Real git repositories with mdmem's hooks, as git runs them. ``MDMEM_INLINE_MAX=3`` makes a change of
more than three notes "big" on the small fixture vault (the default is 150 notes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import git, mdmem_in_process
from .test_concurrency import assert_incremental_equals_full

BIG = [f"notes/big-{i}.md" for i in range(8)]


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


@pytest.fixture
def git_vault(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture vault (set up with the default limit), then a limit of three notes for its hooks."""
    monkeypatch.setenv("MDMEM_INLINE_MAX", "3")
    return git_vault


def search(vault: Path, query: str) -> tuple[list[str], dict, str]:
    """(hit paths, the JSON's info, stderr) of a CLI search."""
    proc = mdmem_in_process("--vault", str(vault), "search", query, "--json")
    out = json.loads(proc.stdout)
    return [r["path"] for r in out["results"]], out.get("info", {}), proc.stderr


def make_big_branch(vault: Path, name: str = "big") -> None:
    """A branch whose last commit adds eight notes (committed without hooks; HEAD back on main)."""
    git(vault, "checkout", "-q", "-b", name)
    for i, rel in enumerate(BIG):
        (vault / rel).write_text(f"# Big {i}\n\nThe okapi{i} ledger and the shared okapi herd.\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "eight notes", env={"MDMEM_SKIP_HOOK": "1"})
    git(vault, "checkout", "-q", "main")  # the hook: the index saw main, no note differs


def checkout(vault: Path, ref: str) -> subprocess.CompletedProcess[str]:
    """``git checkout REF`` as a user runs it (hooks on); git's stderr is captured."""
    return subprocess.run(["git", "checkout", "-q", ref], cwd=vault, capture_output=True, text=True)


def job_pids(vault: Path) -> list[int]:
    """Processes running this vault's background job (``reindex --git-hook catch-up``)."""
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"catch-up" in cmd and str(vault).encode() in cmd:
                pids.append(int(pid))
    return pids


def wait_for_job(vault: Path, limit: float = 120) -> None:
    """Poll until no job is queued or running and no request is pending (not a timing assertion:
    the limit only keeps a broken build from hanging the suite)."""
    from mdmem.index.state import IndexState

    state = IndexState(vault, 1.0)
    deadline = time.monotonic() + limit
    while state.job_request() is not None or state.job_active():
        assert time.monotonic() < deadline, (vault / ".mdmem" / "catchup.log").read_text()
        time.sleep(0.05)


def test_a_big_checkout_returns_at_once_and_a_background_job_catches_up(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdmem import Vault

    make_big_branch(git_vault)
    monkeypatch.setenv("MDMEM_CATCHUP_WAIT", "0")  # reads do not wait for the job this test holds back
    held = Vault.open(git_vault)
    with held.writer_lock():  # the job cannot finish while this test holds the writer lock
        proc = checkout(git_vault, "big")
        assert proc.returncode == 0
        assert "indexing them in the background" in proc.stderr
        assert (git_vault / ".mdmem" / "catchup").exists()
        paths, info, err = search(git_vault, "okapi")
        assert paths == []  # the index as it was: the job has not indexed them yet, and the read says so
        assert info["index"]["catching_up"] is True and "post-checkout" in info["index"]["why"]
        assert "index catching up in the background" in err
        status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
        assert status["catching_up"] and not status["fresh"]
    held.close()
    wait_for_job(git_vault)
    paths, info, err = search(git_vault, "okapi")
    assert sorted(paths) == BIG and "index" not in info and err == ""
    assert not (git_vault / ".mdmem" / "catchup").exists()
    head = git(git_vault, "rev-parse", "HEAD").strip()
    with Vault.open(git_vault) as v:
        assert v.store.catalog.get_meta("last_commit") == head
    assert_incremental_equals_full(git_vault, ["okapi", "okapi3", "decision"])


def test_overlapping_big_hooks_start_at_most_one_follow_up_and_end_at_the_final_state(git_vault: Path) -> None:
    from mdmem import Vault

    make_big_branch(git_vault)
    held = Vault.open(git_vault)
    with held.writer_lock():
        assert checkout(git_vault, "big").returncode == 0  # job 1: takes the running lock, waits for ours
        deadline = time.monotonic() + 60
        while not _running_lock_held(git_vault):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for ref in ("main", "big", "main", "big", "main"):  # job 2 waits behind job 1; no third job
            assert checkout(git_vault, ref).returncode == 0
        assert len(job_pids(git_vault)) == 2
    held.close()
    wait_for_job(git_vault)
    deadline = time.monotonic() + 60
    while job_pids(git_vault):  # both jobs exit (they release their lock just before)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    paths, info, err = search(git_vault, "okapi")
    assert paths == [] and "index" not in info and err == ""  # main: the eight notes are not there
    with Vault.open(git_vault) as v:
        assert v.store.catalog.get_meta("last_commit") == git(git_vault, "rev-parse", "HEAD").strip()
    assert_incremental_equals_full(git_vault, ["okapi", "decision", "hotwire"])


def test_a_read_right_after_a_big_checkout_answers_from_the_commit_checked_out(git_vault: Path) -> None:
    make_big_branch(git_vault)
    proc = checkout(git_vault, "big")
    assert "indexing them in the background" in proc.stderr  # more notes than a hook indexes itself
    paths, info, err = search(git_vault, "okapi")  # at once: the read waits for the job
    assert sorted(paths) == BIG and "index" not in info and err == ""
    assert checkout(git_vault, "main").returncode == 0
    assert search(git_vault, "okapi") == ([], {}, "")
    # A one-note commit while a big catch-up is pending: the read sees that note too.
    assert checkout(git_vault, "big").returncode == 0
    (git_vault / "notes" / "late.md").write_text("The okapi census of the last day.\n")
    git(git_vault, "add", "notes/late.md")
    git(git_vault, "commit", "-qm", "late")
    paths, info, err = search(git_vault, "okapi")
    assert sorted(paths) == sorted([*BIG, "notes/late.md"]) and "index" not in info and err == ""


def _running_lock_held(vault: Path) -> bool:
    import fcntl

    fd = os.open(vault / ".mdmem" / "catchup.running", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_a_killed_job_is_finished_by_the_next_read(git_vault: Path) -> None:
    from mdmem import Vault

    make_big_branch(git_vault)
    held = Vault.open(git_vault)
    with held.writer_lock():
        assert checkout(git_vault, "big").returncode == 0
        deadline = time.monotonic() + 60
        while not job_pids(git_vault):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for pid in job_pids(git_vault):
            os.kill(pid, signal.SIGKILL)
        while job_pids(git_vault):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    held.close()
    assert (git_vault / ".mdmem" / "catchup").exists()  # the mark the killed job left
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert "interrupted" in status["catching_up"]
    paths, info, err = search(git_vault, "okapi")  # this read finishes the job's work first
    assert sorted(paths) == BIG and "index" not in info and err == ""
    assert not (git_vault / ".mdmem" / "catchup").exists()
    assert_incremental_equals_full(git_vault, ["okapi", "okapi5", "decision"])


def test_reads_notice_reset_stash_and_edits_that_no_hook_reported(git_vault: Path) -> None:
    note = git_vault / "notes" / "removed-later.md"
    note.write_text("The quokka migration plan.\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "quokka")  # post-commit hook: indexed
    assert search(git_vault, "quokka")[0] == ["notes/removed-later.md"]
    git(git_vault, "reset", "-q", "--hard", "HEAD~1")  # git runs no hook
    paths, info, err = search(git_vault, "quokka")
    assert paths == [] and "index" not in info and err == ""
    # An edit stashed away: git replaces the file, which its folder's mtime shows.
    target = git_vault / "notes" / "bare-date.md"
    target.write_text("A scribbled wombat.\n")
    (git_vault / "notes" / "outside-git.md").write_text("A jerboa written by another editor.\n")
    assert search(git_vault, "jerboa")[0] == ["notes/outside-git.md"]  # a new file outside git
    assert search(git_vault, "wombat")[0] == ["notes/bare-date.md"]
    git(git_vault, "stash", "-q")
    assert search(git_vault, "wombat")[0] == []
    (git_vault / "notes" / "outside-git.md").unlink()
    assert search(git_vault, "jerboa")[0] == []
    from mdmem import Vault

    with Vault.open(git_vault) as v:
        assert v.store.catalog.get_meta("last_commit") == git(git_vault, "rev-parse", "HEAD").strip()


def test_a_big_reset_is_handed_to_the_job_and_reads_say_so(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem import Vault

    monkeypatch.setenv("MDMEM_CATCHUP_WAIT", "0")  # reads do not wait for the job this test holds back
    make_big_branch(git_vault)
    git(git_vault, "merge", "-q", "--ff-only", "big", env={"MDMEM_SKIP_HOOK": "1"})
    mdmem_in_process("--vault", str(git_vault), "reindex")
    assert sorted(search(git_vault, "okapi")[0]) == BIG
    held = Vault.open(git_vault)
    with held.writer_lock():
        git(git_vault, "reset", "-q", "--hard", "HEAD~1")  # eight notes gone, no hook
        paths, info, err = search(git_vault, "okapi")
        assert info["index"]["catching_up"] is True and "HEAD moved" in info["index"]["why"]
        assert "index catching up" in err
    held.close()
    wait_for_job(git_vault)
    paths, info, err = search(git_vault, "okapi")
    assert paths == [] and "index" not in info and err == ""


def test_vectors_survive_a_checkout_round_trip_without_embedding(git_vault: Path) -> None:
    from mdmem import Vault

    make_big_branch(git_vault)
    mdmem_in_process("--vault", str(git_vault), "embed")
    with Vault.open(git_vault) as v:
        done, total = v.store.catalog.coverage()
        assert done == total > 0
        cached = v.semantic.cache.db.execute("SELECT count(*) FROM vec").fetchone()[0]
    git(git_vault, "checkout", "-q", "-b", "away")
    git(
        git_vault, "rm", "-q", "notes/bare-date.md", "notes/cjk.md", "notes/empty-frontmatter.md", "notes/code-fence.md"
    )
    git(git_vault, "commit", "-qm", "four notes away", env={"MDMEM_SKIP_HOOK": "1"})
    git(git_vault, "checkout", "-q", "main", env={"MDMEM_SKIP_HOOK": "1"})  # the index never saw "away"
    git(git_vault, "checkout", "-q", "away")  # four notes leave: the job drops their chunks
    wait_for_job(git_vault)
    with Vault.open(git_vault) as v:
        assert v.store.catalog.coverage()[1] < total
    git(git_vault, "checkout", "-q", "main")  # and back: their chunks return, with new keys
    wait_for_job(git_vault)
    with Vault.open(git_vault) as v:
        cat = v.store.catalog
        assert cat.get_meta("last_commit") == git(git_vault, "rev-parse", "HEAD").strip()
        # Straight after the job, before any vector read: every chunk has its vector back.
        assert cat.coverage() == (total, total)
        assert cat.dead_keys() == []
        assert v.semantic.cache.db.execute("SELECT count(*) FROM vec").fetchone()[0] == cached
        embedded: list[str] = []
        real = v.semantic.embedder.embed

        def counting(texts: list[str], *, query: bool = False) -> object:
            embedded.extend(("query: " if query else "chunk: ") + t for t in texts)
            return real(texts, query=query)

        v.semantic.embedder.embed = counting  # type: ignore[method-assign]
        hits = v.vsearch("descaling the machine", 3)
        assert embedded == ["query: descaling the machine"]  # the query; no chunk was embedded again
        assert hits and hits[0].path == "notes/empty-frontmatter.md"
