"""The read door of the index: one view per read that repairs once and answers the features' queries.

Features ask the view (``IndexStore.reading()``), never the catalogue or the BM25 index of the store:

    with store.reading() as idx:
        hits = idx.search(text, 10, filters)
        rows = idx.rows(h.path for h in hits)

The outermost ``reading()`` of a thread repairs the index (``IndexStore.repair``, its ``notice`` as
given); a ``reading()`` inside it is the same view, so a feature that calls another one repairs once
and every read of the answer sees the same generation (the store follows another one only when
repaired). A read that finds the index damaged (anything but an ``MdmemError``) has it rebuilt once
and is read again. A writer indexes BM25 first and the catalogue second (``IndexStore._incremental``):
a BM25 hit whose note the catalogue does not have yet is no hit here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..core.errors import MdmemError, write_failure

if TYPE_CHECKING:
    from ..adapters.config import Config
    from ..adapters.files import Files
    from ..core.note import Problem
    from ..core.rank import Filters
    from .catalog import Catalog
    from .lexical import LexicalHit, LexicalIndex

T = TypeVar("T")
Row = dict[str, Any]


class Readable(Protocol):
    """What a view reads through: the store's current handles and its repair (``IndexStore``)."""

    memo: dict[str, Any]

    @property
    def files(self) -> Files: ...

    @property
    def config(self) -> Config: ...

    @property
    def generation(self) -> str: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def lexical(self) -> LexicalIndex: ...

    def repair(self, damaged: Exception | None = None, *, notice: bool = True) -> None: ...


_open = threading.local()  # the thread's outermost view of each store: id(store) → view


@contextmanager
def read_view(store: Readable, *, notice: bool = True) -> Iterator[IndexRead]:
    """The thread's view of ``store``: a new one (repaired, ``notice`` as ``IndexStore.repair``), or
    the one already open around this call."""
    views: dict[int, IndexRead] = _open.__dict__.setdefault("views", {})
    outer = views.get(id(store))
    if outer is not None and outer.store is store:
        yield outer
        return
    view = IndexRead(store, notice=notice)
    views[id(store)] = view
    try:
        yield view
    finally:
        views.pop(id(store), None)


class IndexRead:
    """One read of the index: the queries features ask, on the generation the repair left current."""

    def __init__(self, store: Readable, *, notice: bool = True) -> None:
        self.store = store
        self.files = store.files  # the notes' text, which snippets and feedback read
        store.repair(notice=notice)
        self.generation = store.generation
        self.rebuilt = False  # whether this read found the index damaged and had it rebuilt

    @property
    def config(self) -> Config:
        """The vault's settings (``mdmem.toml``), as the repair left them."""
        return self.store.config

    def _read(self, fn: Callable[[], T]) -> T:
        """``fn()``; when the index turns out damaged: rebuilt (once per view) and read again."""
        try:
            return fn()
        except MdmemError:
            raise
        except Exception as exc:
            full = write_failure(exc, self.store.files.root)
            if full is not None:  # a full disk is no damage: a rebuild would need room for a whole index
                raise full from exc
            if self.rebuilt:
                raise
            self.rebuilt = True
            self.store.repair(damaged=exc)
            self.generation = self.store.generation
            return fn()

    def _cat(self) -> Catalog:
        return self.store.catalog

    def _lex(self) -> LexicalIndex:
        return self.store.lexical

    # -- memos of values derived from the catalogue (the graph) --------------------------------------

    def memoised(self, name: str) -> Any:
        """What ``memoise`` kept under ``name``, if the catalogue has not changed since (else None)."""
        cached = self.store.memo.get(name)
        if cached is None:
            return None
        cat = self._cat()
        if cached[0] is cat and cached[1] == self.rows_token():
            return cached[2]
        return None

    def memoise(self, name: str, token: str | None, value: Any) -> None:
        """Keep ``value``, derived from the catalogue as of ``token`` (``rows_token``, read before the rows)."""
        self.store.memo[name] = (self._cat(), token, value)  # holding the catalogue keeps its id from being reused

    # -- BM25 -----------------------------------------------------------------------------------------

    def search(
        self,
        text: str,
        limit: int,
        filters: Filters | None = None,
        *,
        extra_terms: Sequence[tuple[str, float]] = (),
        coverage: bool = False,
        corrections: dict[str, str] | None = None,
    ) -> list[LexicalHit]:
        """BM25 hits (``LexicalIndex.search``) of the notes the catalogue has.

        A writer commits BM25 first, the catalogue second: a reader in between would get a new note
        the catalogue cannot resolve yet (``get(id)`` fails), so such a hit waits for its row."""

        def read() -> list[LexicalHit]:
            hits = self._lex().search(
                text, limit, filters, extra_terms=extra_terms, coverage=coverage, corrections=corrections
            )
            known = self._cat().stamps([h.path for h in hits]) if hits else {}
            return [h for h in hits if h.path in known]

        return self._read(read)

    def corrections(self, text: str) -> dict[str, str]:
        """Spelling fixes for the query's words no note has (``LexicalIndex.corrections``)."""
        return self._read(lambda: self._lex().corrections(text))

    def body_words(self) -> int:
        """How many words the notes' bodies hold in all."""
        return self._read(lambda: self._lex().body_words())

    def term_weights(self, text: str, corrections: dict[str, str] | None = None) -> dict[str, float]:
        """The query's index terms with their coverage weights (IDF)."""
        return self._read(lambda: self._lex().term_weights(text, corrections))

    def unknown_names(
        self, text: str, corrections: dict[str, str] | None = None, *, first_word: bool = False
    ) -> list[str]:
        """The query's names that no note has."""
        return self._read(lambda: self._lex().unknown_names(text, corrections, first_word=first_word))

    def unknown_share(self, text: str, corrections: dict[str, str] | None = None) -> float:
        """The share of the query (IDF-weighted) in words no note has."""
        return self._read(lambda: self._lex().unknown_share(text, corrections))

    def doc_frequencies(self, words: Iterable[str]) -> tuple[dict[str, int], int]:
        """Body document frequency of each term, and the number of documents."""
        wanted = list(words)
        return self._read(lambda: self._lex().doc_frequencies(wanted))

    # -- the catalogue: notes -----------------------------------------------------------------------

    def row(self, path: str) -> Row | None:
        """The catalogue row of one note (None: not indexed)."""
        return self._read(lambda: self._cat().row(path))

    def rows(self, paths: Iterable[str]) -> dict[str, Row]:
        """The catalogue rows of the indexed notes among ``paths``, in their order."""
        wanted = list(paths)
        return self._read(lambda: self._cat().rows(wanted))

    def stamps(self) -> dict[str, tuple[int, int]]:
        """path → (mtime_ns, size) of every indexed note."""
        return self._read(lambda: self._cat().stamps())

    def hashes(self, paths: Iterable[str]) -> dict[str, str]:
        """path → content hash of the indexed notes among ``paths``."""
        wanted = list(paths)
        return self._read(lambda: self._cat().hashes(wanted))

    def lookup(self, ref: str) -> list[tuple[str, str]]:
        """(path, kind of name) of the notes ``ref`` names (id, path, stem, title, alias)."""
        return self._read(lambda: self._cat().lookup(ref))

    def superseded_by(self, paths: Iterable[str]) -> dict[str, str]:
        """For each of ``paths`` another note supersedes: that successor's path."""
        wanted = list(paths)
        return self._read(lambda: self._cat().superseded_by(wanted))

    def paths_containing(self, text: str) -> list[str]:
        """Indexed paths with ``text`` in them, ignoring case."""
        return self._read(lambda: self._cat().paths_containing(text))

    def pinned_paths(self) -> list[str]:
        """Active pinned notes, most salient first."""
        return self._read(lambda: self._cat().pinned_paths())

    def newest_paths(self, type: str, limit: int) -> list[str]:
        """The ``limit`` newest notes of one type."""
        return self._read(lambda: self._cat().newest_paths(type, limit))

    def dated_between(self, start: float | None, end: float | None, limit: int) -> list[str]:
        """Up to ``limit`` notes dated in ``[start, end)``, newest first."""
        return self._read(lambda: self._cat().dated_between(start, end, limit))

    def unpinned_active(self) -> list[tuple[str, str, str, str, float | None, float | None]]:
        """(path, id, title, type, salience, date) of every active note that is not pinned."""
        return self._read(lambda: self._cat().unpinned_active())

    def problems(self) -> list[Problem]:
        """The problems the index recorded when it read the notes, by path."""
        return self._read(lambda: list(self._cat().problems()))

    def count(self) -> int:
        """How many notes are indexed."""
        return self._read(lambda: self._cat().count())

    def counts_by(self, column: str) -> dict[str, int]:
        """How many notes have each value of ``column`` (type, status)."""
        return self._read(lambda: self._cat().counts_by(column))

    def meta(self, key: str) -> str | None:
        """A value the index keeps about itself (``last_commit``, ``indexed_at``)."""
        return self._read(lambda: self._cat().get_meta(key))

    def sequence_neighbours(
        self, paths: set[str], types: Sequence[str], max_bytes: int
    ) -> dict[str, list[tuple[str, str]]]:
        """Neighbours along links of ``types`` both ways (``Catalog.sequence_neighbours``)."""
        return self._read(lambda: self._cat().sequence_neighbours(paths, types, max_bytes))

    # -- the catalogue: chunks and vectors ------------------------------------------------------------

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks)."""
        return self._read(lambda: self._cat().coverage())

    def not_embedded(self, paths: Sequence[str]) -> set[str]:
        """The notes among ``paths`` with a chunk that has no vector yet."""
        return self._read(lambda: self._cat().not_embedded(paths))

    def chunks_first(self, path: str) -> list[tuple[str, str]]:
        """(hash, text to embed) of a note's first chunk ([] when it has none)."""
        return self._read(lambda: self._cat().chunks_first(path))

    def chunk_counts(self, paths: Sequence[str]) -> dict[str, int]:
        """How many chunks each of ``paths`` has."""
        return self._read(lambda: self._cat().chunk_counts(paths))

    def chunk_terms(self, path: str) -> list[frozenset[str]]:
        """The index terms of each of a note's chunks."""
        return self._read(lambda: self._cat().chunk_terms(path))

    # -- the graph's rows -----------------------------------------------------------------------------

    def rows_token(self) -> str | None:
        """Differs after any write of notes, links, names or references (``Catalog.rows_token``)."""
        return self._read(lambda: self._cat().rows_token())

    def graph_rows(self) -> tuple[list[Any], list[Any], list[Any], list[str], list[Any], list[Any]]:
        """The rows ``graph.build_graph`` takes, read in one transaction."""
        return self._read(lambda: self._cat().graph_rows())

    def snapshot(self) -> AbstractContextManager[None]:
        """Every catalogue read inside sees one state of it (a read transaction)."""
        return self._cat().near.snapshot()

    def note_rows_of(self, paths: Iterable[str]) -> list[tuple[Any, ...]]:
        """The graph's note rows of ``paths`` (``CatalogNear.note_rows_of``)."""
        wanted = list(paths)
        return self._read(lambda: self._cat().near.note_rows_of(wanted))

    def names_of(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of every name of ``paths``."""
        return self._read(lambda: self._cat().near.names_of(paths))

    def link_names(self) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of every name a link target resolves by."""
        return self._read(lambda: self._cat().near.link_names())

    def link_names_for(self, norms: Iterable[str], files: Iterable[str]) -> list[tuple[str, str, str]]:
        """The ``link_names`` rows a lookup of ``norms`` and of the file names ``files`` reads."""
        n, f = list(norms), list(files)
        return self._read(lambda: self._cat().near.link_names_for(n, f))

    def odd_paths(self) -> bool:
        """Whether a note's file name may normalise otherwise than its path (``CatalogNear.odd_paths``),
        kept until the catalogue changes: it reads every path, and every query's hints asked it (a tenth of
        a warm query's time at 10k notes)."""
        kept = self.memoised("odd_paths")
        if kept is not None:
            return bool(kept)
        token = self.rows_token()  # read before the rows: a write in between only costs another look
        odd = bool(self._read(lambda: self._cat().near.odd_paths()))
        self.memoise("odd_paths", token, odd)
        return odd

    def display_names(self, norms: Iterable[str]) -> list[tuple[str, str, str]]:
        """(norm, path, kind) of the headings and aliases named ``norms``."""
        wanted = list(norms)
        return self._read(lambda: self._cat().near.display_names(wanted))

    def attachment_paths(self) -> list[str]:
        """The vault's files that are not notes."""
        return self._read(lambda: self._cat().near.attachment_paths())

    def links_near(
        self, srcs: Sequence[str], exact: Sequence[str], names: Sequence[str], words: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """The link rows written in ``srcs`` or that may name one of them (``CatalogNear.links_near``)."""
        return self._read(lambda: self._cat().near.links_near(srcs, exact, names, words))

    def entity_paths(self, words: Sequence[str] | None) -> set[str]:
        """Notes with entities that may have one of ``words`` (all of them: None)."""
        return self._read(lambda: self._cat().near.entity_paths(words))

    def refs_near(self, srcs: Sequence[str], values: Sequence[str]) -> list[tuple[str, str, str, str, str]]:
        """Reference rows written in ``srcs`` or citing one of ``values`` as a person is cited."""
        return self._read(lambda: self._cat().near.refs_near(srcs, values))

    def identity_rows_of(self, paths: Sequence[str] = (), keys: Iterable[str] = ()) -> list[tuple[str, str, int]]:
        """Identity rows of the person notes ``paths`` and of the ``keys``."""
        wanted = list(keys)
        return self._read(lambda: self._cat().near.identity_rows_of(paths, wanted))

    # -- references and people ----------------------------------------------------------------------

    def refs_of(self, path: str) -> list[Row]:
        """A note's references in the order written."""
        return self._read(lambda: self._cat().refs.refs_of(path))

    def citing(self, kind: str, value: str) -> list[Row]:
        """Every note that cites (kind, value), with how and where it wrote it."""
        return self._read(lambda: self._cat().refs.citing(kind, value))

    def similar_refs(self, value: str, limit: int = 5) -> list[str]:
        """Cited values that contain ``value``."""
        return self._read(lambda: self._cat().refs.similar_refs(value, limit))

    def identities_of(self, path: str) -> list[str]:
        """A person note's identities as written."""
        return self._read(lambda: self._cat().refs.identities_of(path))

    def people_named(self, names: list[str]) -> bool:
        """Whether one of ``names`` is a person's identity or its first word."""
        return self._read(lambda: self._cat().refs.people_named(names))

    def has_people(self) -> bool:
        """Whether any person note is indexed."""
        return self._read(lambda: self._cat().refs.has_people())
