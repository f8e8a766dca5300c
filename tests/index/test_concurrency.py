"""Concurrency: real processes, real git, real indexes, all at once.

Each test starts several ``mdmem`` processes (CLI, MCP over stdio, ``serve``, git hooks) against
one vault and then checks that nothing was lost: every note is on disk, searchable, committed,
and the incremental index equals a ``reindex --full``. Process counts stay small (the suite
runs on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..conftest import git, mdmem, mdmem_in_process

WRITERS, PER_WRITER, MCP_NOTES = 4, 5, 5


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")  # only the serve test talks to a server


def word(*parts: int) -> str:
    """A word only one note contains: 'zq' + the parts, e.g. zq3x7."""
    return "zq" + "x".join(str(p) for p in parts)


def body_for(tag: str) -> str:
    return f"The {tag} fact stands alone: {tag}a {tag}b {tag}c {tag}d {tag}e."


def no_traceback(*streams: str) -> None:
    for s in streams:
        assert "Traceback" not in s, s


def index_state(vault: Path, queries: list[str]) -> tuple[dict[str, Any], list[list[str]]]:
    """Every catalogue row and the hit paths of each query, read in a fresh process-local Vault."""
    from mdmem import Vault

    v = Vault.open(vault)
    cat = v.store.catalog
    rows = cat.rows(sorted(cat.stamps()))
    hits = [[h.path for h in v.search(q, 20, include=["forgotten", "archived", "snoozed", "expired"])] for q in queries]
    v.close()
    return rows, hits


def assert_incremental_equals_full(vault: Path, queries: list[str]) -> dict[str, Any]:
    """The index as the concurrent writers left it == the index rebuilt from the files."""
    from mdmem import Vault

    before = index_state(vault, queries)
    with Vault.open(vault) as v:
        v.reindex(full=True)
    after = index_state(vault, queries)
    assert before[0].keys() == after[0].keys()
    for path in before[0]:
        assert before[0][path] == after[0][path], path
    assert before[1] == after[1]
    return before[0]


def cli_loop(vault: Path, calls: list[list[str]], out: list[subprocess.CompletedProcess[str]]) -> None:
    """Run mdmem commands one after the other (one writer process at a time per loop)."""
    for args in calls:
        out.append(
            subprocess.run(
                [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
                capture_output=True,
                text=True,
                env=dict(os.environ),
            )
        )


# -- 1. many writers at once ---------------------------------------------------------------------


def test_many_writers_at_once_lose_nothing(git_vault: Path, tmp_path: Path) -> None:
    """4 CLI processes adding 5 notes each (plus one shared title each), an MCP server adding 5,
    and a pin/correct loop, all at the same time."""
    from ..edges.test_mcp import stdio_session

    results: list[list[subprocess.CompletedProcess[str]]] = [[] for _ in range(WRITERS + 1)]
    threads = []
    for w in range(WRITERS):
        calls = [
            ["add", "--title", f"Writer note {word(w, j)}", "--body", body_for(word(w, j)), "--json"]
            for j in range(PER_WRITER)
        ]
        # The same title from every writer: each gets its own file, none is overwritten.
        calls.insert(2, ["add", "--title", "Shared title", "--body", body_for(word(w, 99)), "--no-dedupe", "--json"])
        threads.append(threading.Thread(target=cli_loop, args=(git_vault, calls, results[w])))
    lifecycle = [["pin", "Release train schedule"], ["unpin", "Release train schedule"]] * 2
    lifecycle.append(["correct", "notes/empty-frontmatter.md", "--body", "Corrected zqcorrected text."])
    threads.append(threading.Thread(target=cli_loop, args=(git_vault, lifecycle, results[WRITERS])))

    mcp_added: list[dict[str, Any]] = []
    errlog = tmp_path / "mcp-err.log"

    async def mcp_writer() -> None:
        async with stdio_session(git_vault, errlog) as s:
            await s.initialize()
            for t in threads:
                t.start()  # the server is up: everyone writes at once from here
            for k in range(MCP_NOTES):
                tag = word(7, k)
                r = await s.call_tool("add", {"title": f"MCP note {tag}", "body": body_for(tag)})
                assert not r.is_error, r.content
                mcp_added.append({**r.structured_content, "tag": tag})

    anyio.run(mcp_writer)
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)

    for procs in results:
        for p in procs:
            no_traceback(p.stderr)
            assert p.returncode == 0, (p.args, p.stderr)
    no_traceback(errlog.read_text())

    expected: dict[str, str] = {}  # path → the unique word its body holds
    for w in range(WRITERS):
        outs = [json.loads(p.stdout) for p in results[w]]
        assert all(o["written"] and o["commit"] for o in outs), outs
        for o, args in zip(outs, [p.args for p in results[w]]):
            expected[o["path"]] = args[args.index("--body") + 1].split()[1]
    for d in mcp_added:
        assert d["written"] and d["commit"], d
        expected[d["path"]] = d["tag"]
    assert len(expected) == WRITERS * (PER_WRITER + 1) + MCP_NOTES  # distinct paths: none overwritten
    shared = sorted(p for p in expected if "shared-title" in p)
    assert len(shared) == WRITERS

    for path, tag in expected.items():
        assert body_for(tag) in (git_vault / path).read_text(), path
    tracked = set(git(git_vault, "ls-files").split())
    assert set(expected) <= tracked
    assert git(git_vault, "status", "--porcelain", "--", "notes") == ""  # every write committed
    subjects = git(git_vault, "log", "--format=%s").splitlines()
    assert sum(s.startswith("mdmem: add") for s in subjects) == len(expected)
    assert sum(s.startswith("mdmem: correct") for s in subjects) == 1

    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert status["fresh"], status["git"]  # our own commits kept last_commit = HEAD
    queries = [tag for tag in expected.values()] + ["zqcorrected", "release train", "shared title"]
    rows = assert_incremental_equals_full(git_vault, queries)
    for path in expected:
        assert path in rows
    _, hits = index_state(git_vault, list(expected.values()))
    assert [h[:1] for h in hits] == [[p] for p in expected]


def test_a_writer_that_cannot_get_the_lock_says_so_in_one_line_and_writes_nothing(git_vault: Path) -> None:
    """Another process holds the writer lock past the timeout: add fails cleanly, before writing."""
    from mdmem import Vault

    before = sorted(p.name for p in (git_vault / "notes").iterdir())
    with Vault.open(git_vault) as v, v.writer_lock():
        p = mdmem(
            "--vault",
            str(git_vault),
            "add",
            "--title",
            "Too late",
            "--body",
            "zqlate",
            check=False,
            env={"MDMEM_LOCK_TIMEOUT": "0.3"},
        )
    no_traceback(p.stderr)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"(pid {os.getpid()})" in p.stderr and "retry" in p.stderr
    assert sorted(p.name for p in (git_vault / "notes").iterdir()) == before  # nothing half-done
    assert "zqlate" not in git(git_vault, "log", "--all", "-p")


def test_the_same_memory_added_at_once_is_written_once(git_vault: Path) -> None:
    """Three agents save the same text at the same moment: one ADD, the others NOOP."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mdmem",
                "--vault",
                str(git_vault),
                "add",
                "--title",
                "Deploys freeze on Fridays",
                "--body",
                "No deploys after 3 pm on Fridays.",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for (_, err), p in zip(outs, procs):
        no_traceback(err)
        assert p.returncode == 0, err
    decisions = sorted(json.loads(out)["decision"] for out, _ in outs)
    assert decisions == ["ADD", "NOOP", "NOOP"], decisions
    assert len(list((git_vault / "notes").glob("deploys-freeze-on-fridays*.md"))) == 1


# -- 2. git commit contention after add ------------------------------------------------------------


def test_add_while_git_index_is_locked_saves_indexes_and_says_so(git_vault: Path) -> None:
    lock = git_vault / ".git" / "index.lock"
    lock.write_text("")  # another git process (or a crashed one) holds the index
    p = mdmem(
        "--vault",
        str(git_vault),
        "add",
        "--title",
        "Locked out",
        "--body",
        "a zqlocked note",
        check=False,
        env={"MDMEM_GIT_LOCK_WAIT": "0.3"},
    )
    no_traceback(p.stderr)
    assert p.returncode == 0, p.stderr
    assert "added notes/locked-out.md" in p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "notes/locked-out.md" in lines[0] and "not committed" in lines[0] and "index.lock" in lines[0]
    assert "git commit" in lines[0]  # what to do
    assert "zqlocked" in (git_vault / "notes" / "locked-out.md").read_text()
    assert search_paths(git_vault, "zqlocked") == ["notes/locked-out.md"]
    lock.unlink()
    assert "locked-out" in git(git_vault, "status", "--porcelain")  # on disk, waiting to be committed


def test_add_waits_briefly_for_a_git_index_lock(git_vault: Path) -> None:
    lock = git_vault / ".git" / "index.lock"
    lock.write_text("")
    threading.Timer(0.5, lock.unlink).start()  # a concurrent git command finishes
    p = mdmem_in_process("--vault", str(git_vault), "add", "--title", "Waited", "--body", "a zqwaited note", "--json")
    assert json.loads(p.stdout)["commit"] and p.stderr == ""
    assert git(git_vault, "log", "-1", "--format=%s").startswith("mdmem: add")


def test_pin_and_correct_while_git_index_is_locked(git_vault: Path) -> None:
    (git_vault / ".git" / "index.lock").write_text("")
    env = {"MDMEM_GIT_LOCK_WAIT": "0.2"}
    for args in (
        ["pin", "Release train schedule"],
        ["correct", "Release train schedule", "--body", "The zqtrain leaves on Fridays."],
    ):
        p = mdmem("--vault", str(git_vault), *args, check=False, env=env)
        no_traceback(p.stderr)
        assert p.returncode == 0 and len(p.stderr.strip().splitlines()) == 1 and "not committed" in p.stderr
    assert search_paths(git_vault, "zqtrain")


def search_paths(vault: Path, q: str) -> list[str]:
    out = json.loads(mdmem_in_process("--vault", str(vault), "search", q, "--json").stdout)
    return [h["path"] for h in out["results"]]


def test_mcp_add_while_git_index_is_locked_reports_a_warning(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ..edges.test_mcp import stdio_session

    monkeypatch.setenv("MDMEM_GIT_LOCK_WAIT", "0.2")
    (git_vault / ".git" / "index.lock").write_text("")
    errlog = tmp_path / "err.log"

    async def main() -> None:
        async with stdio_session(git_vault, errlog) as s:
            await s.initialize()
            r = await s.call_tool("add", {"title": "Agent note", "body": "the zqagent fact"})
            assert not r.is_error
            d = r.structured_content
            assert d["written"] and d["commit"] is None and "not committed" in d["warnings"][0]
            assert "Warning:" in r.content[0].text and "index.lock" in r.content[0].text
            r = await s.call_tool("search", {"query": "zqagent"})
            assert r.structured_content["results"][0]["id"] == d["id"]

    anyio.run(main)
    no_traceback(errlog.read_text())


# -- 3. rapid commits fire overlapping hooks -------------------------------------------------------


def commit_by_hand(vault: Path, rel: str, text: str, message: str) -> int:
    """Write a note and commit it as a user would; retries while another git process holds
    .git/index.lock or moved HEAD under it (git itself fails at once then). Returns how many tries it took."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for attempt in range(1, 101):
        add = subprocess.run(["git", "add", "--", rel], cwd=vault, capture_output=True, text=True)
        proc = (
            add
            if add.returncode
            else subprocess.run(["git", "commit", "-qm", message, "--", rel], cwd=vault, capture_output=True, text=True)
        )
        if proc.returncode == 0:
            no_traceback(proc.stderr)
            return attempt
        # The only reasons a commit may fail here: git's own locks, taken by the other committer, a hook
        # or mdmem (index.lock), HEAD moved by another commit between git reading and updating it, or
        # our `git add` gone from git's index by the time of our commit (CI saw "pathspec … did not match
        # any file(s) known to git" while the other committer's `git commit -- path` ran: a partial
        # commit writes git's index back); the next try adds the note again, and the test still
        # checks every commit landed.
        assert (
            "index.lock" in proc.stderr
            or "cannot lock ref 'HEAD'" in proc.stderr
            or "did not match any file(s) known to git" in proc.stderr
        ), proc.stderr
        time.sleep(0.05)
    raise AssertionError(f"could not commit {rel}")


def test_rapid_commits_with_hooks_and_adds_lose_nothing(git_vault: Path) -> None:
    """30 hand commits from two committers at once (so their post-commit hooks overlap), in tight
    loops, while mdmem adds notes."""
    adds: list[subprocess.CompletedProcess[str]] = []
    calls = [
        ["add", "--title", f"Added during commits {word(5, j)}", "--body", body_for(word(5, j)), "--json"]
        for j in range(5)
    ]
    adder = threading.Thread(target=cli_loop, args=(git_vault, calls, adds))
    hand: dict[str, str] = {}
    tries: list[int] = []

    def committer(c: int) -> None:
        for i in range(15):
            # every third commit changes a note committed before
            rel = f"notes/hand-{c}-{i}.md" if i % 3 else f"notes/hand-{c}-0.md"
            tag = word(3, c, i)
            hand[rel] = tag
            tries.append(commit_by_hand(git_vault, rel, f"# Hand {c} {i}\n\n{body_for(tag)}\n", f"hand {c} {i}"))

    committers = [threading.Thread(target=committer, args=(c,)) for c in range(2)]
    for t in (adder, *committers):
        t.start()
    for t in committers:
        t.join(timeout=300)
    adder.join(timeout=300)
    for p in adds:
        no_traceback(p.stderr)
        assert p.returncode == 0 and json.loads(p.stdout)["commit"], p.stderr
    subjects = git(git_vault, "log", "--format=%s").splitlines()
    assert sum(s.startswith("hand ") for s in subjects) == 30
    assert sum(s.startswith("mdmem: add") for s in subjects) == 5
    assert git(git_vault, "status", "--porcelain", "--", "notes") == ""

    # Hooks may still be finishing (each waits up to 2 s for the lock, else leaves a stale mark).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _hooks_running(git_vault):
        time.sleep(0.2)
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)  # one command
    assert status["fresh"], (status["pending"], status["git"])
    added = {json.loads(p.stdout)["path"]: p.args[p.args.index("--body") + 1].split()[1] for p in adds}
    expected = {**hand, **added}
    for rel, tag in expected.items():
        assert search_paths(git_vault, tag) == [rel], rel
    assert_incremental_equals_full(git_vault, list(expected.values()))


def _hooks_running(vault: Path) -> bool:
    """Whether a git hook's "mdmem reindex --git-hook" is still running in this vault."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"--git-hook" in cmd and Path(f"/proc/{pid}/cwd").resolve() == vault.resolve():
                    return True
            except OSError:
                continue
    return False


def _hooks_waiting_for_the_lock(vault: Path) -> int:
    """How many git hooks' "mdmem reindex --git-hook" have the vault's writer lock file open (they open
    it, then poll for the lock; they read HEAD under it, or before it in the bug this test guards)."""
    lock = str((vault / ".mdmem" / "lock").resolve())
    waiting = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if b"--git-hook" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue
                fds = os.listdir(f"/proc/{pid}/fd")
                waiting += any(os.readlink(f"/proc/{pid}/fd/{fd}") == lock for fd in fds)
            except OSError:
                continue
    return waiting


def test_overlapping_hooks_never_move_the_index_back(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits from three terminals while a writer holds the lock: their hooks queue up and run in
    any order. The last indexed commit must end at HEAD, not at whichever hook ran last."""
    from mdmem import Vault

    monkeypatch.setenv("MDMEM_HOOK_LOCK_TIMEOUT", "30")
    v = Vault.open(git_vault)
    v.reindex()
    threads = []
    with v.writer_lock():
        for i in range(3):
            t = threading.Thread(
                target=commit_by_hand, args=(git_vault, f"notes/queued-{i}.md", body_for(word(8, i)), f"queued {i}")
            )
            t.start()
            threads.append(t)
            # This commit's hook has started and is waiting for the lock (it was a 1.5 s sleep).
            deadline = time.monotonic() + 30
            while _hooks_waiting_for_the_lock(git_vault) <= i and time.monotonic() < deadline:
                time.sleep(0.05)
    for t in threads:
        t.join(timeout=60)
    v.close()
    head = git(git_vault, "rev-parse", "HEAD").strip()
    with Vault.open(git_vault) as v:
        assert v.store.catalog.get_meta("last_commit") == head  # no mdmem command ran since the hooks
    status = json.loads(mdmem_in_process("--vault", str(git_vault), "status", "--json").stdout)
    assert status["fresh"] and status["git"]["last_indexed_commit"] == head
    for i in range(3):
        assert search_paths(git_vault, word(8, i)) == [f"notes/queued-{i}.md"]


# -- 4. readers during writes ----------------------------------------------------------------------

READER = textwrap.dedent("""
    import json, os, sys, time
    from mdmem import Vault
    v = Vault.open(sys.argv[1])
    stop = time.monotonic() + float(sys.argv[2])
    done, missing, errors = 0, [], []
    while time.monotonic() < stop and not os.path.exists(sys.argv[3]):  # the writer is done
        for method, text in (("search", "zqround"), ("search", "zqfresh"), ("query", "zqfresh")):
            try:
                if method == "search":
                    hits = v.search(text, 50)
                else:
                    hits = v.query(text, 50, vectors=False)
                rows = v.store.catalog.rows([h.path for h in hits])
                # A hit whose note the writer deleted right after this search may lose its row before
                # the rows are read; a note still on disk without a row is the inconsistency.
                missing += [h.path for h in hits if h.path not in rows and (v.root / h.path).exists()]
                done += 1
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps({"done": done, "missing": missing[:20], "n_missing": len(missing), "errors": errors[:5]}))
""")

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from mdmem import Vault
    from mdmem.index.catalog import Catalog
    root, rounds, pause = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    apply = Catalog.apply
    def slow_apply(self, *args, **kwargs):  # widen the gap between the lexical and catalogue commits
        time.sleep(pause)
        return apply(self, *args, **kwargs)
    Catalog.apply = slow_apply
    v = Vault.open(root)
    for r in range(rounds):
        for i in range(60):  # a batch of new notes, and the previous batch deleted
            (root / "gen" / f"r{r}-{i}.md").write_text(f"# Round {r} note {i}\\\\n\\\\nzqfresh zqround {r} " + "filler " * 20)
            (root / "gen" / f"r{r - 1}-{i}.md").unlink(missing_ok=True)
        for i in range(100):  # and many changed notes
            (root / "base" / f"b{i}.md").write_text(f"# Base {i}\\\\n\\\\nround {r} zqround " + "words " * 50)
        v.reindex()
    v.add(f"Added by the writer", "zqround at the end")
    print("ok")
""")


@pytest.mark.parametrize("pause", [0.0, 0.4], ids=["real", "slow-catalogue"])
def test_readers_during_writes_see_a_consistent_index(vault_dir: Path, pause: float) -> None:
    """One process searches in a loop while another adds, changes and deletes many notes (in the
    second case each catalogue commit comes 0.4 s after the lexical one)."""
    from mdmem import Vault

    (vault_dir / "gen").mkdir()
    (vault_dir / "base").mkdir()
    for i in range(100):
        (vault_dir / "base" / f"b{i}.md").write_text(f"# Base {i}\n\nzqround " + "words " * 50)
    Vault.open(vault_dir).reindex()
    run = [sys.executable, "-c"]
    # The reader reads for as long as the writer writes (it used to read for a fixed 12 s, most of them
    # after the writer had finished), and a moment more.
    writer_done = vault_dir.parent / "writer-done"
    reader = subprocess.Popen(
        [*run, READER, str(vault_dir), "120", str(writer_done)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = subprocess.run([*run, WRITER, str(vault_dir), "8", str(pause)], capture_output=True, text=True)
    time.sleep(0.5)
    writer_done.touch()
    out, err = reader.communicate(timeout=120)
    no_traceback(writer.stderr, err)
    assert writer.returncode == 0 and reader.returncode == 0, (writer.stderr, err)
    result = json.loads(out)
    assert result["done"] > 20 and result["errors"] == [], result
    assert result["n_missing"] == 0, result  # no hit points at a note the catalogue does not have
    assert_incremental_equals_full(vault_dir, ["zqround", "filler", "round"])


# -- 5. serve with concurrent writers --------------------------------------------------------------


def test_serve_answers_while_cli_processes_add_notes(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdmem.edges.serve import call_server, read_info

    monkeypatch.delenv("MDMEM_NO_SERVE")
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "mdmem", "--vault", str(git_vault), "serve", "--idle-timeout", "120"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(200):
            if read_info(git_vault):
                break
            time.sleep(0.05)
        assert read_info(git_vault), (tmp_path / "serve.log").read_text()
        results: list[list[subprocess.CompletedProcess[str]]] = [[], []]
        writers = [
            threading.Thread(
                target=cli_loop,
                args=(
                    git_vault,
                    [
                        ["add", "--title", f"Served note {word(6, w, j)}", "--body", body_for(word(6, w, j)), "--json"]
                        for j in range(5)
                    ],
                    results[w],
                ),
            )
            for w in range(2)
        ]
        answers: list[tuple[str, float, dict[str, Any] | None]] = []
        stop = threading.Event()

        def ask() -> None:
            i = 0
            while not stop.is_set():
                method = ("search", "query", "recall")[i % 3]
                t = time.perf_counter()
                a = call_server(git_vault, "ask", {"mode": method, "text": "release train zq6x1x3", "limit": 10})
                answers.append((method, time.perf_counter() - t, a))
                i += 1

        asker = threading.Thread(target=ask)
        asker.start()
        for t in writers:
            t.start()
        for t in writers:
            t.join(timeout=300)
        stop.set()
        asker.join(timeout=120)

        for p in results[0] + results[1]:
            no_traceback(p.stderr)
            assert p.returncode == 0, p.stderr
        assert len(answers) > 10
        assert all(a is not None and "results" in a for _, _, a in answers)  # never failed, never fell back
        print(f"serve: {len(answers)} answers, slowest {max(s for _, s, _ in answers):.2f} s")
        for _, _, a in answers:
            for h in a["results"]:  # type: ignore[index]
                assert (git_vault / h["path"]).is_file()
        # Every new note is findable through the server right away, by each method.
        added = [json.loads(p.stdout) for p in results[0] + results[1]]
        for d in added:
            tag = d["title"].split()[-1]
            for method in ("search", "query", "recall"):
                a = call_server(git_vault, "ask", {"mode": method, "text": tag, "limit": 3})
                assert a and a["results"] and a["results"][0]["path"] == d["path"], (method, tag, a)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    no_traceback((tmp_path / "serve.log").read_text())


def test_serve_keeps_answering_while_another_process_holds_the_writer_lock(
    vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long write elsewhere (a --full rebuild of a big vault) must not stall the warm server:
    its background embedding needs the lock, its answers do not."""
    from mdmem import Vault
    from mdmem.edges.serve import call_server, read_info

    monkeypatch.delenv("MDMEM_NO_SERVE")
    v = Vault.open(vault_dir)
    v.reindex()  # chunks, none embedded: serve starts filling vectors at once
    log = open(tmp_path / "serve.log", "w")
    server = None
    try:
        with v.writer_lock():
            # A read that waited for the lock would wait 60 s: longer than each call may take below.
            server = subprocess.Popen(
                [sys.executable, "-m", "mdmem", "--vault", str(vault_dir), "serve", "--idle-timeout", "60"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "MDMEM_LOCK_TIMEOUT": "60"},
            )
            for _ in range(200):
                if read_info(vault_dir):
                    break
                time.sleep(0.05)
            time.sleep(1.0)  # the fill thread has embedded a batch and now wants the lock
            for _ in range(5):
                a = call_server(vault_dir, "ask", {"mode": "search", "text": "coffee", "limit": 3}, timeout=20)
                assert a and a["results"], "no answer within 20 s: a search waited for another process's write"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not v.semantic.coverage()[0]:
            time.sleep(0.2)  # once the lock is free, the vectors get filled
        assert v.semantic.coverage()[0] > 0
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        log.close()
        v.close()
    no_traceback((tmp_path / "serve.log").read_text())


# -- the soak benchmark ----------------------------------------------------------------------------


def _bench_soak() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        import bench_soak
    finally:
        sys.path.pop(0)
    return bench_soak


def test_soak_runs_briefly_and_passes(tmp_path: Path) -> None:
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_soak.py"
    env = {k: v for k, v in os.environ.items() if k != "MDMEM_NO_SERVE"}
    p = subprocess.run(
        [
            sys.executable,
            str(bench),
            "--seconds",
            "2",
            "--notes",
            "60",
            "--clients",
            "2",
            "--tmp",
            str(tmp_path),
            "--out",
            "-",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "incremental index == reindex --full: yes" in p.stdout and "result: PASS" in p.stdout
    assert "| **all** |" in p.stdout


def test_soak_checks_can_fail(git_vault: Path) -> None:
    """The soak's end checks see a catalogue row, a search result or a note that went wrong."""
    import sqlite3

    from mdmem import Vault

    bench = _bench_soak()
    assert bench.compare_with_full(git_vault, ["coffee", "release"]) == ([], [])
    with Vault.open(git_vault) as v:
        gen = v.store.generation
    db = sqlite3.connect(git_vault / ".mdmem" / gen / "catalog.sqlite")
    path = db.execute("SELECT path FROM notes ORDER BY path LIMIT 1").fetchone()[0]
    db.execute("UPDATE notes SET title='tampered' WHERE path=?", (path,))
    db.commit()
    db.close()
    diffs, _ = bench.compare_with_full(git_vault, ["coffee"])
    assert diffs == [f"{path}: catalogue row differs in title"]

    with Vault.open(git_vault) as v:
        hit = v.search("coffee")[0].path
        v.store.lexical.write([], [hit])  # the lexical index loses a note the files still have
    diffs, _ = bench.compare_with_full(git_vault, ["coffee"])
    assert len(diffs) == 1 and diffs[0].startswith("search 'coffee'") and hit in diffs[0]

    written = bench.Written(added={"notes/never-written.md": "zqghost"})
    lost = bench.check_written(git_vault, written)
    assert lost and lost[0].startswith("lost: notes/never-written.md")
