"""BM25's document counts over the notes that are there: whoosh counts a deleted document (every
re-indexing deletes the note's old version) in a term's document frequency and in the number of
documents until its segment is merged, so two indexes of the same files scored them apart — a clone's
fresh index and the first machine's, which had indexed every note twice (once when adopted, again
at its first commit, dated by git).

The average field length stays whoosh's, over every version a segment holds: the exact lengths of
deleted documents are not kept (whoosh stores each document's length rounded to a byte), and an
old version of a note re-indexed unchanged has its length. With no deletion every figure is
whoosh's own, so a fresh index scores as it always did."""

from __future__ import annotations

import math
from typing import Any

from whoosh.scoring import BM25F

ATTR = "mdmem_live_stats"  # where a searcher keeps its LiveStats (a searcher is one generation)


class LiveStats:
    """The document count and document frequencies of a searcher's undeleted documents."""

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self.reader = searcher.reader()
        self.n = int(self.reader.doc_count())
        self.deletions = bool(self.reader.has_deletions())
        self._df: dict[tuple[str, Any], int] = {}

    def df(self, field: str, text: Any) -> int:
        """How many undeleted documents have ``text`` (a term as str or bytes) in ``field``."""
        if not self.deletions:
            return int(self.reader.doc_frequency(field, text))
        key = (field, text)
        got = self._df.get(key)
        if got is None:
            btext = text if isinstance(text, bytes) else self.searcher.schema[field].to_bytes(text)
            got = 0
            if (field, btext) in self.reader:
                got = sum(1 for _ in self.reader.postings(field, btext).all_ids())  # deleted ones skipped
            self._df[key] = got
        return got

    def idf(self, field: str, text: Any) -> float:
        """whoosh's BM25F IDF, ``log(N / (df + 1)) + 1``, over the undeleted documents."""
        return math.log(self.n / (self.df(field, text) + 1)) + 1 if self.n else 1.0


def live_stats(searcher: Any) -> LiveStats:
    """The top-level searcher's ``LiveStats``, made once."""
    top = searcher.get_parent()
    got = getattr(top, ATTR, None)
    if got is None:
        got = LiveStats(top)
        setattr(top, ATTR, got)
    return got


class LiveBM25F(BM25F):
    """whoosh's BM25F with ``LiveStats``' IDF."""

    def idf(self, searcher: Any, fieldname: str, text: Any) -> float:
        return live_stats(searcher).idf(fieldname, text)
