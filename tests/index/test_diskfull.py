"""A full disk is survivable: each write path fails in one line, leaves nothing half-written, and recovers
once about twice the space the message names is freed.

Most tests run everywhere on ``tests/diskfault.SmallDisk`` (the free space mdmem is told, and whoosh writes
that fail past it); the last one fills a real tmpfs, where the machine lets us mount one.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import FIXTURE, FIXTURE_IGNORE, git, mdmem_in_process
from ..diskfault import SmallDisk
from .test_crashes import CONFIG, assert_equals_full, fill, hits, notes, one_clear_line, run, run_process

MB = 1 << 20


@pytest.fixture(autouse=True)
def _hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    """The fixture notes and one long note (its segment is what a merge would copy), indexed."""
    (vault_dir / "mdmem.toml").write_text(CONFIG)
    words = " ".join(f"w{i * 7919 % 100003}q" for i in range(60000))  # distinct terms: a segment of MBs
    (vault_dir / "notes" / "long.md").write_text("# Long\n\nkettle descaling notes\n\n" + words + "\n")
    run(vault_dir, "reindex")
    return vault_dir


def lexical_dir(vault: Path) -> Path:
    import json

    gen = json.loads((vault / ".mdmem" / "manifest.json").read_text())["generation"]
    return vault / ".mdmem" / gen / "lexical"


def segments(vault: Path) -> list[str]:
    """The segments the lexical index's TOC names."""
    from mdmem.index.lexical import LexicalIndex

    lex = LexicalIndex(lexical_dir(vault))
    try:
        return sorted(seg.segment_id() for seg in lex.ix._read_toc().segments)
    finally:
        lex.close()


def strays(vault: Path) -> list[str]:
    """Files in the lexical folder that no segment of the TOC owns (a half-written segment), and temp files."""
    named = set(segments(vault))
    lex = lexical_dir(vault)
    out = [p.name for p in lex.iterdir() if p.name.startswith("notes_") and p.name.split(".")[0] not in named]
    out = [n for n in out if "LOCK" not in n]
    return sorted(out + [p.name for p in lex.iterdir() if p.name.endswith(".tmp")])


def edit(vault: Path, i: int) -> None:
    (vault / "notes" / "bare-date.md").write_text(f"---\ntitle: Release train\n---\nthe platypus ships {i}\n")


def named_mb(line: str) -> int:
    m = re.search(r"at least (\d+) MB", line)
    assert m, line
    return int(m.group(1))


def test_a_commit_the_disk_refuses_leaves_no_segment_file_and_the_retry_works(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = segments(vault)
    disk = SmallDisk(monkeypatch, free=2000, says=100 * MB)  # the check passes; the disk fills meanwhile
    (vault / "notes" / "new-one.md").write_text("# Wombat\n\nwombats dig burrows\n" * 50)
    proc = run_process_in(vault, "reindex")
    one_clear_line(proc, "disk full", "at least")
    assert strays(vault) == []  # the half-written segment is gone: it does not keep the disk full
    assert segments(vault) == before
    assert (vault / ".mdmem" / "dirty").exists()  # the next command catches up
    disk.give_back(2 * named_mb(proc.stderr) * MB)
    disk.says = None
    assert hits(vault, "search", "wombats") == ["notes/new-one.md"]
    assert strays(vault) == []
    monkeypatch.undo()  # (a rebuild from scratch needs room for a whole index)
    assert_equals_full(vault)


def test_merges_wait_for_room_so_freeing_what_the_write_needs_is_enough(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """whoosh's merge policy folds the long note's segment into the fifth small commit; on a nearly full
    disk that merge (not the one note) filled it, again on every retry."""
    for i in range(4):
        edit(vault, i)
        run(vault, "reindex")
    assert len(segments(vault)) == 5
    merged = sum(p.stat().st_size for p in lexical_dir(vault).iterdir())
    disk = SmallDisk(monkeypatch, free=2 * MB)  # room for one note's segment, not to copy the whole index
    assert merged > MB
    edit(vault, 4)
    proc = run_process_in(vault, "reindex")
    assert proc.returncode == 0, proc.stderr
    assert len(segments(vault)) == 6  # no merge: written beside the others
    assert disk.written < MB
    assert strays(vault) == []
    disk.give_back(100 * MB)  # room again: the next commit merges
    edit(vault, 5)
    run(vault, "reindex")
    assert len(segments(vault)) < 6
    assert hits(vault, "search", "platypus") == ["notes/bare-date.md"]
    monkeypatch.undo()
    assert_equals_full(vault)


def test_a_vector_save_the_disk_refuses_is_a_warning_and_the_query_answers(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """usearch says only "Failed to serialize into stream"; the query answered with a traceback."""
    from usearch.index import Index

    run(vault, "embed")
    (vault / "notes" / "new-one.md").write_text("# Wombat\n\nwombats dig burrows\n")
    run(vault, "reindex")
    disk = SmallDisk(monkeypatch, free=100 * MB)

    def save(self: Any, path: Any, *a: Any, **k: Any) -> None:
        Path(path).write_bytes(b"\0" * 100)  # half a file, then the disk is full
        disk.free = 0
        raise RuntimeError("Failed to serialize into stream")

    monkeypatch.setattr(Index, "save", save)
    proc = run_process_in(vault, "query", "descaling kettle", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "vectors not updated" in lines[0] and "disk full" in lines[0], proc.stderr
    assert '"path": "notes/empty-frontmatter.md"' in proc.stdout or '"path": "notes/long.md"' in proc.stdout
    assert list(vault.rglob("*.tmp")) == []
    monkeypatch.undo()
    assert "notes/new-one.md" in hits(vault, "query", "wombats burrows")


def full_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every catalogue write finds the disk full (SQLite's own error)."""
    from mdmem.index import catalog

    def apply(self: Any, *a: Any, **k: Any) -> None:
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
        raise exc

    monkeypatch.setattr(catalog.Catalog, "apply", apply)


def test_a_failed_add_leaves_no_file_and_a_failed_edit_puts_the_note_back(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An add that exited 1 with "Notes on disk are untouched" left a complete note file, uncommitted."""
    (git_vault / "mdmem.toml").write_text(CONFIG)
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "settings")
    run(git_vault, "reindex")
    before = notes(git_vault)
    full_catalogue(monkeypatch)
    for args in (["add", "-t", "Full disk", "-b", "no room"], ["set", "notes/bare-date", "tags=full"]):
        proc = run_process_in(git_vault, *args)
        assert notes(git_vault) == before, args  # no new note, and the edited one as it was
        one_clear_line(proc, "disk full", "untouched", "at least 1 MB")
        assert git(git_vault, "status", "--porcelain") == "", args
        assert list(git_vault.rglob(".*.tmp")) == []
    monkeypatch.undo()
    run(git_vault, "add", "-t", "Full disk", "-b", "room again")
    assert hits(git_vault, "search", "room again") == ["notes/full-disk.md"]
    assert git(git_vault, "status", "--porcelain") == ""


def test_reads_answer_from_what_is_there_when_the_catalogue_cannot_open(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full disk SQLite cannot make the -shm file a WAL read needs: reads failed, or rebuilt the index."""
    from mdmem.index import catalog

    generation = lexical_dir(vault).parent.name

    def no_shm(self: Any, path: Path) -> None:
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
        raise exc

    monkeypatch.setattr(catalog.Catalog, "__init__", no_shm)
    SmallDisk(monkeypatch, free=0)
    for cmd in ("search", "query"):
        proc = run_process_in(vault, cmd, "descaling", "--json")
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "notes/empty-frontmatter.md" in proc.stdout
    assert lexical_dir(vault).parent.name == generation  # answered from it, not rebuilt
    monkeypatch.undo()
    assert_equals_full(vault)


def run_process_in(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command in this process (so the faked disk applies), judged as the real process would be."""
    return mdmem_in_process("--vault", str(vault), *args, check=False)


@pytest.fixture
def real_small_disk(tmp_path: Path) -> Any:
    """A real 24 MB tmpfs (needs root or CAP_SYS_ADMIN; the tests above fake the same on any machine)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)]
    if shutil.which("mount") is None or subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (SmallDisk covers the same paths)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_real_full_disk_fails_in_one_line_and_twice_the_named_space_recovers(real_small_disk: Path) -> None:
    vault = real_small_disk / "vault"
    shutil.copytree(FIXTURE, vault, ignore=FIXTURE_IGNORE)
    (vault / "mdmem.toml").write_text(CONFIG)
    for i in range(200):
        (vault / "notes" / f"gen-{i}.md").write_text(f"# Note {i}\n\n" + f"word{i} kettle platypus river\n" * 40)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "notes")
    run(vault, "reindex")
    run(vault, "embed")
    before = notes(vault)
    filler = fill(real_small_disk)

    named = 1
    for args in (["add", "-t", "Full disk", "-b", "zanzibar no room"], ["set", "notes/gen-1", "tags=full"], ["embed"]):
        proc = run_process(vault, *args)
        one_clear_line(proc, "disk full", "at least")
        named = max(named, named_mb(proc.stderr))
        assert notes(vault) == before, args
        assert git(vault, "--no-optional-locks", "status", "--porcelain") == "", args
        assert strays(vault) == [] and list(vault.rglob("*.tmp")) == [], args
    for cmd in ("search", "query"):  # reads answer from what is there, with one line saying why not fresher
        proc = run_process(vault, cmd, "descaling")
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "notes/empty-frontmatter.md" in proc.stdout
        assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) <= 1, proc.stderr

    with open(filler, "r+b") as fh:  # twice what the failures named, no more
        fh.truncate(max(0, filler.stat().st_size - 2 * named * MB))
    proc = run_process(vault, "add", "-t", "Full disk", "-b", "zanzibar room again")
    assert proc.returncode == 0, proc.stderr
    assert hits(vault, "search", "zanzibar") == ["notes/full-disk.md"]
    assert git(vault, "--no-optional-locks", "status", "--porcelain") == ""
    assert strays(vault) == []
