"""A warm process (one that watches the note folders: serve, MCP) never answers from a state older than
the files: a save that comes while another writer holds the lock, during a rebuild's swap, within the
same mtime tick at the same size, or before the watch began is found by the next read, and a read that
cannot index a save says so. Two ``Vault``s of one vault stand for two processes (their writer locks
exclude each other); each race is ordered by a hook at the point where it happens, never by a sleep."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mdmem import Vault

from .test_fresh import NOTE, save_in_place


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


@pytest.fixture
def warm(git_vault: Path) -> Iterator[Vault]:
    """The vault as a warm process holds it: watching its folders, its index read once."""
    with Vault.open(git_vault) as v:
        assert v.watch_files()
        assert NOTE in paths(v, "hotwire")
        yield v


def paths(v: Vault, word: str) -> list[str]:
    return [h.path for h in v.search(word)]


def test_a_save_during_a_rebuilds_swap_is_found_by_the_read_waiting_for_it(
    git_vault: Path, warm: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mdmem.index.state as state_module

    waiting = threading.Event()
    real = state_module.flock_within

    def flock_within(fd: int, seconds: float, poll: float = 0.05) -> bool:
        if seconds > 0 and threading.current_thread().name == "reader":
            waiting.set()  # the warm read waits for the lock the rebuild holds
        return real(fd, seconds, poll)

    monkeypatch.setattr(state_module, "flock_within", flock_within)
    answers: list[list[str]] = []
    reader = threading.Thread(target=lambda: answers.append(paths(warm, "dugongs")), name="reader")

    class SaveAtTheSwap:
        """The rebuild has read every note; its generation is about to replace the current one."""

        def notes_indexed(self, *, inline: bool) -> None:
            pass

        def new_generation(self, directory: Path, catalog: Any) -> None:
            save_in_place(git_vault / NOTE, "Hotwire", "Dugongs")
            reader.start()
            assert waiting.wait(30), "the read did not wait for the writer lock"

    with Vault.open(git_vault) as job:
        indexer = job.store.indexer
        indexer.listeners = (*indexer.listeners, SaveAtTheSwap())
        job.reindex(full=True)
    reader.join(60)
    assert answers == [[NOTE]]  # the new generation did not have the save; the read indexed it into it
    assert NOTE in paths(warm, "dugongs") and NOTE not in paths(warm, "hotwire")


def test_a_read_that_cannot_get_the_lock_says_so_and_the_next_read_indexes_the_save(
    git_vault: Path, warm: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDMEM_READ_LOCK_WAIT", "0")
    with Vault.open(git_vault) as other, other.store.writer_lock():
        save_in_place(git_vault / NOTE, "Hotwire", "Dugongs")
        hits = warm.search("dugongs")
        assert NOTE not in [h.path for h in hits]
        assert any("index not updated" in w and "writing the index" in w for w in hits.warnings), hits.warnings
    assert NOTE in paths(warm, "dugongs")  # the watch's report was kept: no later event is needed


def test_a_read_waits_briefly_for_another_writer(git_vault: Path, warm: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import mdmem.index.state as state_module

    real = state_module.flock_within
    released = threading.Event()
    with Vault.open(git_vault) as other:
        lock = other.store.writer_lock()
        lock.__enter__()

        def flock_within(fd: int, seconds: float, poll: float = 0.05) -> bool:
            if seconds > 0 and not released.is_set():
                released.set()
                lock.__exit__(None, None, None)  # the other writer finishes while the read waits
            return real(fd, seconds, poll)

        monkeypatch.setattr(state_module, "flock_within", flock_within)
        try:
            save_in_place(git_vault / NOTE, "Hotwire", "Dugongs")
            hits = warm.search("dugongs")
        finally:
            if not released.is_set():
                lock.__exit__(None, None, None)
    assert [h.path for h in hits] == [NOTE] and not hits.warnings


def test_a_save_that_leaves_size_and_mtime_as_they_were_is_found(git_vault: Path, warm: Vault) -> None:
    note = git_vault / NOTE
    before = os.stat(note)
    save_in_place(note, "Hotwire", "Dugongs")
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # as a save within the same mtime tick
    after = os.stat(note)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert paths(warm, "dugongs") == [NOTE]
    assert NOTE not in paths(warm, "hotwire")


def test_a_save_before_the_watch_began_is_found(git_vault: Path) -> None:
    with Vault.open(git_vault) as v:
        assert NOTE in paths(v, "hotwire")  # read once, without a watch: the index is current
        save_in_place(git_vault / NOTE, "Hotwire", "Dugongs")
        assert v.watch_files()
        assert paths(v, "dugongs") == [NOTE]


def test_a_process_that_cannot_watch_checks_the_files_before_every_read(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mdmem.adapters.watch as watch_module
    import mdmem.index.indexer as indexer_module

    def no_watches(*args: Any) -> None:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watch_module, "FolderWatch", no_watches)
    monkeypatch.setattr(indexer_module, "NOTICE_EVERY", 3600.0)  # reads close together, however loaded
    with Vault.open(git_vault) as v:
        assert not v.watch_files()
        assert NOTE in paths(v, "hotwire")
        save_in_place(git_vault / NOTE, "Hotwire", "Dugongs")
        assert paths(v, "dugongs") == [NOTE]


def whole_tree_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the indexer's whole-tree passes (a reindex with no list of notes) from here on."""
    import mdmem.index.indexer as indexer_module

    passes: list[int] = []
    real = indexer_module.Indexer._update

    def counted(self: Any, full: bool, progress: Any, only: list[str] | None, head: str | None = None) -> Any:
        if only is None:
            passes.append(id(self))
        return real(self, full, progress, only, head)

    monkeypatch.setattr(indexer_module.Indexer, "_update", counted)
    return passes


def test_after_an_add_in_another_warm_process_a_read_indexes_that_note_alone(
    git_vault: Path, warm: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mdmem's own add changes its folder; a watching process learns the new file's name from the
    watch, so neither it nor the writer compares every file again (each add was a whole-tree pass)."""
    with Vault.open(git_vault) as writer:
        assert writer.watch_files()
        assert NOTE in paths(writer, "hotwire")
        passes = whole_tree_passes(monkeypatch)
        for word in ("zqfirstadd", "zqsecondadd"):
            added = writer.save(f"Added {word}", f"The {word} note.", type="fact", force=True).added
            assert added is not None
            assert paths(warm, word) == [added.path]
            assert paths(writer, word) == [added.path]
        removed = git_vault / added.path
        removed.unlink()
        assert paths(warm, "zqsecondadd") == [] and paths(writer, "zqsecondadd") == []
    assert passes == []


def test_a_folder_moved_out_of_the_vault_is_noticed_by_a_watching_process(
    git_vault: Path, warm: Vault, tmp_path: Path
) -> None:
    """Its notes leave without an event each: the watch says it lost track, and every file is compared."""
    (git_vault / "away").mkdir()
    (git_vault / "away" / "n.md").write_text("# N\n\nThe okapiway note.\n")
    assert paths(warm, "okapiway") == ["away/n.md"]
    os.replace(git_vault / "away", tmp_path / "away")
    assert paths(warm, "okapiway") == []
