"""Issue 7, crashes and a damaged index: real kill -9 at chosen points, a full disk, damaged files.

Each test asserts three things: the notes are byte-identical, the next ordinary command works
(or says in one line what to run), and afterwards the index equals a ``reindex --full``.
The kills are real SIGKILLs of a subprocess (tests/crash_driver.py); nothing runs after them.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import FIXTURE, FIXTURE_IGNORE, git, mdmem, mdmem_in_process

REPO = Path(__file__).resolve().parents[2]
CONFIG = '[embed]\nmodel = "hash"\nbatch_size = 2\n'


@pytest.fixture(autouse=True)
def _hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    """The fixture notes, indexed, with the hash embedder in small batches."""
    (vault_dir / "mdmem.toml").write_text(CONFIG)
    run(vault_dir, "reindex")
    return vault_dir


# -- helpers ---------------------------------------------------------------------------------------


def killed(point: str, vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mdmem --vault VAULT ARGS`` and SIGKILL it at ``point``; assert it really died there."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.crash_driver", point, "--vault", str(vault), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -signal.SIGKILL, f"not killed at {point}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def run(vault: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """An ordinary command, run in this process (what happens after the kill is what is tested)."""
    return mdmem_in_process("--vault", str(vault), *args, check=check)


def run_process(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a real process, where its exit status and stderr are what is checked: the first
    command after an index file was damaged, and the commands on a full disk."""
    return mdmem("--vault", str(vault), *args, check=False)


def start_process(vault: Path, *args: str) -> subprocess.Popen[str]:
    """``run_process`` started, not waited for (``finished`` waits)."""
    return subprocess.Popen(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def notes(vault: Path) -> dict[str, bytes]:
    """Every note file (not hidden, outside .git and .mdmem) with its bytes."""
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*.md"))
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    }


def leftovers(vault: Path) -> list[str]:
    """Temp files and index generations a finished run should not leave behind."""
    state = vault / ".mdmem"
    out = [p.relative_to(vault).as_posix() for p in vault.rglob("*.tmp")]
    gens = sorted(p.name for p in state.glob("gen-*"))
    if len(gens) != 1:
        out += gens
    return sorted(out)


def index_state(vault: Path) -> dict[str, Any]:
    """What the current generation holds, read straight from its files (nothing is repaired)."""
    from mdmem.index.lexical import LexicalIndex

    manifest = json.loads((vault / ".mdmem" / "manifest.json").read_text())
    gen = vault / ".mdmem" / manifest["generation"]
    db = sqlite3.connect(gen / "catalog.sqlite")
    try:
        state: dict[str, Any] = {
            "notes": sorted(db.execute("SELECT * FROM notes")),
            "names": sorted(db.execute("SELECT norm, path, kind FROM names")),
            "links": sorted(db.execute("SELECT src, target, type, label, heading, reason, target_norm FROM links")),
            "chunks": sorted(db.execute("SELECT path, ord, hash, heading, embed_text FROM chunks")),
            "last_commit": db.execute("SELECT value FROM meta WHERE key='last_commit'").fetchone(),
        }
    finally:
        db.close()
    lex = LexicalIndex(gen / "lexical")
    try:
        with lex.ix.searcher() as s:
            state["lexical"] = sorted((sorted(d.items()) for d in s.all_stored_fields()), key=repr)
        state["lexical_docs"] = lex.doc_count()  # duplicates would show here
    finally:
        lex.close()
    return state


def assert_equals_full(vault: Path) -> None:
    """The index as it stands equals a rebuild from scratch; nothing is left behind."""
    now = index_state(vault)
    run(vault, "reindex", "--full")
    assert now == index_state(vault)


def one_clear_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """A failure the user can act on: exit 1, no traceback, one line naming the fix."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


def hits(vault: Path, cmd: str, text: str) -> list[str]:
    out = json.loads(run(vault, cmd, text, "--json").stdout)
    return [h["path"] for h in out["results"]]


def change_notes(vault: Path) -> None:
    """One note changed, one added, one deleted."""
    (vault / "notes" / "bare-date.md").write_text("---\ntitle: Release train\n---\nthe platypus ships\n")
    (vault / "notes" / "new-one.md").write_text("# Wombat\n\nwombats dig burrows\n")
    (vault / "notes" / "cjk.md").unlink()


# -- 1. kill -9 during reindex -----------------------------------------------------------------------

INCREMENTAL_POINTS = ["lexical-inside", "lexical-toc", "after-lexical", "catalog-inside", "after-catalog"]


@pytest.mark.parametrize("next_command", ["search", "reindex"])
@pytest.mark.parametrize("point", INCREMENTAL_POINTS)
def test_kill_during_incremental_reindex(vault: Path, point: str, next_command: str) -> None:
    change_notes(vault)
    before = notes(vault)
    killed(point, vault, "reindex")
    assert notes(vault) == before
    if next_command == "reindex":
        run(vault, "reindex")
    # The next ordinary command sees every change, whatever the kill left half-done.
    assert hits(vault, "search", "platypus") == ["notes/bare-date.md"]
    assert hits(vault, "search", "wombats") == ["notes/new-one.md"]
    assert hits(vault, "search", "数据库") == []
    assert notes(vault) == before
    assert leftovers(vault) == []
    assert_equals_full(vault)


FULL_POINTS = [*INCREMENTAL_POINTS, "manifest", "old-generations"]


@pytest.mark.parametrize("point", FULL_POINTS)
def test_kill_during_full_rebuild(vault: Path, point: str) -> None:
    change_notes(vault)
    before = notes(vault)
    killed(point, vault, "reindex", "--full")
    assert notes(vault) == before
    assert hits(vault, "search", "platypus") == ["notes/bare-date.md"]
    assert hits(vault, "search", "数据库") == []
    assert leftovers(vault) == []  # the half-built (or the replaced) generation is gone
    assert notes(vault) == before
    assert_equals_full(vault)


# -- 2. kill -9 during embedding ---------------------------------------------------------------------


def embed_json(vault: Path) -> dict[str, Any]:
    return json.loads(run(vault, "embed", "--json").stdout)


def vector_state(vault: Path) -> dict[str, Any]:
    """Vector search answers and usearch size, compared with those after a full rebuild."""
    from usearch.index import Index

    gen = json.loads((vault / ".mdmem" / "manifest.json").read_text())["generation"]
    files = list((vault / ".mdmem" / gen).glob("vectors-*.usearch"))
    size = len(Index.restore(str(files[0]), view=True)) if files else 0
    queries = ["descaling coffee machine", "kafka consumer lag", "hotwire frontend decision"]
    return {"usearch": size, **{q: hits(vault, "vsearch", q) for q in queries}}


@pytest.mark.parametrize("point", ["embed-batch2", "usearch-tmp", "usearch-half", "after-vector-save"])
def test_kill_during_embedding(vault: Path, point: str) -> None:
    before = notes(vault)
    total = int(json.loads(run(vault, "status", "--json").stdout)["vectors"]["chunks"])
    killed(point, vault, "embed")
    assert notes(vault) == before
    report = embed_json(vault)
    assert report["done"] == report["total"] == total
    if point == "embed-batch2":
        assert report["embedded"] == total - 2  # the first batch (2 chunks) was kept in the cache
    else:
        assert report["embedded"] == 0  # every vector came from the cache
    assert leftovers(vault) == []  # the temp usearch file is gone
    vectors = vector_state(vault)
    assert vectors["usearch"] == total  # no duplicate keys
    assert any(vectors[q] for q in vectors if q != "usearch")
    run(vault, "reindex", "--full")
    embed_json(vault)
    assert vector_state(vault) == vectors
    assert notes(vault) == before


# -- 3. kill -9 during add ---------------------------------------------------------------------------


@pytest.fixture
def gvault(git_vault: Path) -> Path:
    (git_vault / "mdmem.toml").write_text(CONFIG)
    git(git_vault, "add", "mdmem.toml")
    git(git_vault, "commit", "-qm", "config")
    run(git_vault, "reindex")
    return git_vault


@pytest.mark.parametrize("point", ["add-before-link", "add-after-link", "catalog-inside", "add-before-commit"])
def test_kill_during_add(gvault: Path, point: str) -> None:
    before = notes(gvault)
    killed(point, gvault, "add", "-t", "Platypus policy", "-b", "Every platypus gets a name.")
    after = notes(gvault)
    new = {k: v for k, v in after.items() if k not in before}
    assert {k: v for k, v in after.items() if k in before} == before  # no other note touched
    if point == "add-before-link":
        assert new == {}  # nothing half-written in place
    else:
        assert list(new) == ["notes/platypus-policy.md"]
        text = new["notes/platypus-policy.md"].decode()
        assert text.startswith("---\n") and "title: Platypus policy" in text
        assert text.rstrip().endswith("Every platypus gets a name.")  # the whole note, not a part
    # The next ordinary command indexes whatever reached its place.
    expected = ["notes/platypus-policy.md"] if new else []
    assert hits(gvault, "search", "platypus") == expected
    assert notes(gvault) == after
    temps = [p.relative_to(gvault).as_posix() for p in gvault.rglob(".*.tmp")]
    if point == "add-before-link":
        # The unfinished note stays (it is the only copy of what the agent wrote) and doctor names it.
        assert len(temps) == 1
        doctor = run(gvault, "doctor", "--json", check=False)
        problems = json.loads(doctor.stdout)["problems"]
        assert any(p["path"] == temps[0] and "unfinished" in p["message"] for p in problems), problems
    else:
        assert temps == []  # a temp file that duplicates a placed note is removed
        assert leftovers(gvault) == []
    assert_equals_full(gvault)
    if new:
        # Not committed by the killed run; git shows it as a new file for the user to commit.
        assert "notes/platypus-policy.md" in git(gvault, "status", "--porcelain")


# -- 5. truncated or garbage index files -------------------------------------------------------------

DAMAGED_FILES = ["catalog", "catalog-wal", "manifest", "lexical-toc", "lexical-segment", "usearch", "cache"]


def damage(vault: Path, what: str, how: str) -> Path:
    state = vault / ".mdmem"
    gen = state / json.loads((state / "manifest.json").read_text())["generation"]
    path = {
        "catalog": gen / "catalog.sqlite",
        "catalog-wal": gen / "catalog.sqlite-wal",
        "manifest": state / "manifest.json",
        "usearch": next(gen.glob("vectors-*.usearch"), gen / "missing"),
        "cache": state / "embeddings.sqlite",
        "lexical-toc": next((gen / "lexical").glob("*.toc"), gen / "missing"),
        "lexical-segment": next((gen / "lexical").glob("*.seg"), gen / "missing"),
    }[what]
    size = path.stat().st_size
    assert size > 0, path
    if how == "truncated":
        os.truncate(path, size // 2)
    else:
        path.write_bytes(os.urandom(size))
    return path


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("how", ["truncated", "garbage"])
@pytest.mark.parametrize("what", DAMAGED_FILES)
def test_damaged_index_files(vault: Path, tmp_path: Path, what: str, how: str) -> None:
    embed_json(vault)
    expected_vectors = hits(vault, "vsearch", "descaling coffee machine")
    assert expected_vectors
    if what == "catalog-wal":
        # A WAL file outlives only a killed process: kill one right after a catalogue commit.
        (vault / "notes" / "bare-date.md").write_text("---\ntitle: Release train\n---\nthe platypus ships\n")
        killed("after-catalog", vault, "reindex")
    before = notes(vault)
    damage(vault, what, how)
    copies = {command: tmp_path / f"copy-{command}" for command in ("search", "vsearch", "query", "status")}
    started = {}
    for command, copy in copies.items():
        shutil.copytree(vault, copy)
        # The four first commands run at once, each a real process on its own copy.
        started[command] = start_process(copy, *([command] if command == "status" else [command, "descaling"]))
    first = {command: finished(proc) for command, proc in started.items()}  # all waited for, pass or fail
    for command, copy in copies.items():
        proc = first[command]
        assert proc.returncode == 0, f"{command}: {proc.stderr}"  # repaired on the way, not refused
        assert "Traceback" not in proc.stderr, proc.stderr
        assert notes(copy) == before
        # The next ordinary command answers from a sound index; it equals a rebuild from scratch.
        assert hits(copy, "search", "descaling") == ["notes/empty-frontmatter.md"], command
        if what in ("usearch", "cache"):
            assert hits(copy, "vsearch", "descaling coffee machine") == expected_vectors, command
        assert leftovers(copy) == []
        assert_equals_full(copy)
        assert notes(copy) == before
        # Whoosh leaves the file of a segment it failed to read open until it is collected; a process
        # that exits never notices, but in process its ResourceWarning must come here, under this
        # test's mark, not in whichever test the garbage collector happens to run next.
        gc.collect()


# -- 4. disk full --------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A real 16 MB tmpfs (needs root or CAP_SYS_ADMIN; skipped elsewhere)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if (
        shutil.which("mount") is None
        or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill the disk to the last byte with one file; delete it to give the space back."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def test_disk_full_gives_one_line_and_the_next_command_repairs(small_disk: Path) -> None:
    vault = small_disk / "vault"
    shutil.copytree(FIXTURE, vault, ignore=FIXTURE_IGNORE)
    (vault / "mdmem.toml").write_text(CONFIG)
    run(vault, "reindex")
    embed_json(vault)
    change_notes(vault)
    (vault / "notes" / "bare-date.md").write_text(
        "---\ntitle: Release train\n---\nthe platypus ships\n" + "release notes and more words\n" * 2000
    )
    before = notes(vault)
    filler = fill(small_disk)

    for args in (["reindex"], ["reindex", "--full"], ["add", "-t", "Full disk", "-b", "no room"], ["embed"]):
        proc = run_process(vault, *args)
        one_clear_line(proc, "disk full", "free some space")
        assert notes(vault) == before, args
        assert leftovers(vault) == [], args  # no half-built generation, no temp file
    # A read answers from the previous index, saying why it is not fresh, or fails in one line
    # (SQLite cannot open the catalogue without room for its -shm file).
    proc = run_process(vault, "search", "descaling")
    if proc.returncode == 0:
        assert "notes/empty-frontmatter.md" in proc.stdout
        assert "disk full" in proc.stderr and "Traceback" not in proc.stderr
    else:
        one_clear_line(proc, "disk full", "free some space")

    filler.unlink()  # the space comes back: the next ordinary command catches up by itself
    assert hits(vault, "search", "platypus") == ["notes/bare-date.md"]
    assert hits(vault, "search", "wombats") == ["notes/new-one.md"]
    assert notes(vault) == before
    assert leftovers(vault) == []
    assert_equals_full(vault)
    assert embed_json(vault)["done"] == embed_json(vault)["total"]


@pytest.mark.parametrize("point", ["enospc-note", "enospc-cache"])
def test_disk_full_in_add_and_embed_writes(vault: Path, point: str) -> None:
    """The writes a real full disk never reached above (it fails earlier, at the catalogue)."""
    before = notes(vault)
    args = ["add", "-t", "Full disk", "-b", "no room"] if point == "enospc-note" else ["embed"]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.crash_driver", point, "--vault", str(vault), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    one_clear_line(proc, "disk full", "free some space")
    assert notes(vault) == before  # no note, and no half of one
    assert leftovers(vault) == []
    assert list(vault.rglob(".*.tmp")) == []
    run(vault, *args)  # space is back: the same command works
    assert hits(vault, "search", "descaling") == ["notes/empty-frontmatter.md"]
    assert_equals_full(vault)


def test_mcp_answers_from_the_previous_index_and_says_so_when_the_disk_is_full(vault: Path, tmp_path: Path) -> None:
    """An agent is told, as the CLI user is, that its answer came from an index that could not be refreshed."""
    import anyio

    from ..edges.test_mcp import stdio_session

    change_notes(vault)
    (vault / ".mdmem" / "stale").touch()  # as a git hook leaves it when it could not update the index
    before = notes(vault)
    full_disk = ("-m", "tests.crash_driver", "enospc-catalog")

    async def main() -> None:
        async with stdio_session(vault, tmp_path / "err.log", prefix=full_disk, cwd=REPO) as s:
            await s.initialize()
            r = await s.call_tool("search", {"query": "release train"})
            assert not r.is_error
            assert "disk full" in r.content[0].text and "free some space" in r.content[0].text
            assert any("index not updated" in w for w in r.structured_content["warnings"])
            assert r.structured_content["count"] >= 1  # still answered, from the old index

    anyio.run(main)
    assert notes(vault) == before
    assert (vault / ".mdmem" / "stale").exists() or (vault / ".mdmem" / "dirty").exists()  # caught up later
    assert hits(vault, "search", "wombats") == ["notes/new-one.md"]  # space is back: the next command catches up
    assert_equals_full(vault)
