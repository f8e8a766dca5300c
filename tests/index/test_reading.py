"""The read door (``IndexStore.reading``): one repair per read, a damaged index rebuilt once by the view
itself, and no BM25 hit whose note the catalogue does not have."""

from __future__ import annotations

import gc
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdmem.adapters.config import load_config
from mdmem.index.lexical import LexicalIndex
from mdmem.index.store import IndexStore


@pytest.fixture
def indexed(vault_dir: Path) -> Iterator[IndexStore]:
    """The fixture notes' store, indexed."""
    root = vault_dir.resolve()
    store = IndexStore(root, load_config(root))
    store.repair()
    yield store
    store.close()


def test_a_read_inside_a_read_is_the_same_view_and_repairs_once(
    indexed: IndexStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    repairs: list[bool] = []
    real = indexed.repair

    def counted(damaged: Exception | None = None, *, notice: bool = True) -> None:
        repairs.append(notice)
        real(damaged, notice=notice)

    monkeypatch.setattr(indexed, "repair", counted)
    with indexed.reading(notice=False) as outer:
        with indexed.reading() as inner:
            assert inner is outer
            assert [h.path for h in inner.search("descaling", 5)] == ["notes/empty-frontmatter.md"]
    assert repairs == [False]  # the outermost read decides, and repairs once
    with indexed.reading() as again:
        assert again is not outer
    assert repairs == [False, True]


# Whoosh leaks a file handle when it meets a garbage TOC (see test_index.test_garbage_index_is_rebuilt).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_damaged_index_is_rebuilt_once_and_the_read_answers(indexed: IndexStore) -> None:
    old = indexed.generation
    indexed.close()
    for f in (indexed.state.dir / old / "lexical").iterdir():
        f.write_bytes(b"\x00garbage")
    with indexed.reading() as idx:  # the catalogue is fine, so the repair alone does not notice
        assert idx.generation == old
        assert [h.path for h in idx.search("descaling", 5)] == ["notes/empty-frontmatter.md"]
        assert idx.rebuilt and idx.generation == indexed.generation != old
        assert idx.row("notes/empty-frontmatter.md") is not None
    indexed.close()
    with warnings.catch_warnings():  # collect whoosh's leaked handle here, not in a later test
        warnings.simplefilter("ignore")
        gc.collect()


def test_a_read_that_fails_again_after_the_rebuild_raises(indexed: IndexStore, monkeypatch: pytest.MonkeyPatch) -> None:
    generations: list[str] = []

    def broken(self: LexicalIndex, *args: object, **kwargs: object) -> None:
        generations.append(indexed.generation)
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(LexicalIndex, "corrections", broken)
    with indexed.reading() as idx:
        with pytest.raises(sqlite3.DatabaseError):
            idx.corrections("descaling")
        with pytest.raises(sqlite3.DatabaseError):
            idx.corrections("descaling")  # once per read: no second rebuild
    assert len(generations) == 3 and generations[0] != generations[1] == generations[2]


def test_a_bm25_hit_without_its_catalogue_row_is_no_hit(indexed: IndexStore) -> None:
    """A writer indexes BM25 first and the catalogue second; a reader in between sees the note in neither."""
    with indexed.reading() as idx:
        assert [h.path for h in idx.search("descaling", 5)] == ["notes/empty-frontmatter.md"]
        with indexed.catalog.db:  # the catalogue as it is before such a writer's second step
            indexed.catalog.db.execute("DELETE FROM notes WHERE path = ?", ("notes/empty-frontmatter.md",))
        assert [h.path for h in indexed.lexical.search("descaling", 5)] == ["notes/empty-frontmatter.md"]
        assert idx.search("descaling", 5) == []
        assert idx.search("descaling", 5, coverage=True, corrections=idx.corrections("descaling")) == []
