"""list: the notes the filters alone select (no query), newest first, as hits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.note import iso_from_timestamp
from ..results.search import Hit, Hits

if TYPE_CHECKING:
    from ..core.rank import Filters
    from ..index.store import IndexStore

FIRST_READ = 200  # dated notes read first; doubled until ``limit`` pass the filters or none are left


def list_notes(store: IndexStore, limit: int, filters: Filters, given: dict[str, object]) -> Hits:
    """Up to ``limit`` notes passing ``filters``, newest first (dated as the index dates them: their
    own dates, else git's), each with its key line; ``given`` (the filters as asked) goes in ``info``."""
    from .recall import key_line

    end = None if filters.until is None else filters.until + 1e-3
    with store.reading() as idx:
        want, paths = FIRST_READ, []
        while True:
            dated = idx.dated_between(filters.since, end, max(want, limit))
            rows = idx.rows(dated)
            paths = [p for p in dated if p in rows and filters.matches(rows[p])]
            if len(paths) >= limit or len(dated) < max(want, limit):
                break
            want *= 4
        hits = Hits(query="", info={"listed": given, "order": "newest first"})
        for path in paths[:limit]:
            row = rows[path]
            try:
                body = store.files.body(path)
            except OSError:
                body = ""
            hits.append(
                Hit(
                    id=row["id"],
                    path=path,
                    title=row["title"],
                    score=0.0,
                    snippet=key_line(body),
                    type=row["type"],
                    tags=row["tags"],
                    scope=row["scope"],
                    date=iso_from_timestamp(row["date"]),
                )
            )
    return hits
