"""Everything mdmem keeps in SQLite — with its parts below, the only modules that run SQL.

``Catalog`` (one per index generation): note metadata, names, links, problems, content hashes
and the chunks vectors are made from. Its parts in modules of their own: ``catalog_refs`` (links),
``catalog_near`` (near-duplicates) and ``catalog_embeddings`` (the embedding cache).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.chunk import chunk_note
from ..core.links import normalize_ref
from ..core.note import Note, NoteDates, Problem
from ..core.text import terms
from .catalog_refs import SCHEMA as REFS_SCHEMA
from .catalog_refs import CatalogRefs, delete_refs, write_refs

if TYPE_CHECKING:
    from .catalog_near import CatalogNear


_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
  path TEXT PRIMARY KEY, id TEXT NOT NULL, title TEXT NOT NULL, type TEXT NOT NULL,
  status TEXT NOT NULL, scope TEXT NOT NULL, salience REAL, confidence REAL, pinned INTEGER,
  tags TEXT, aliases TEXT, entities TEXT, supersedes TEXT,
  created TEXT, updated TEXT, authored TEXT, snoozed_until TEXT, valid_from TEXT, valid_until TEXT,
  date REAL, hash TEXT NOT NULL, mtime_ns INTEGER, size INTEGER, problems TEXT, has_id INTEGER,
  created_from TEXT, updated_from TEXT, git_created REAL, git_updated REAL
);
CREATE INDEX IF NOT EXISTS notes_id ON notes(id);
CREATE TABLE IF NOT EXISTS names (norm TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS names_norm ON names(norm);
CREATE INDEX IF NOT EXISTS names_path ON names(path);
CREATE TABLE IF NOT EXISTS links (
  src TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL, label TEXT, heading TEXT, reason TEXT,
  target_norm TEXT NOT NULL, property TEXT
);
CREATE TABLE IF NOT EXISTS attachments (path TEXT PRIMARY KEY);
CREATE INDEX IF NOT EXISTS links_norm ON links(target_norm);
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS chunks (
  key INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, ord INTEGER NOT NULL, hash TEXT NOT NULL,
  heading TEXT, embed_text TEXT NOT NULL, vec INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_vec ON chunks(vec);
CREATE TABLE IF NOT EXISTS vec_dead (key INTEGER PRIMARY KEY);
"""


@dataclass(frozen=True, slots=True)
class FileState:
    """What the catalogue remembers about a file to decide whether to re-read it."""

    hash: str
    mtime_ns: int
    size: int


class Catalog:
    """SQLite store of note metadata; one connection per process, WAL for concurrent readers. Two
    families of reads live beside it on the same connection: ``refs`` (references and person
    identities, ``catalog_refs.py``) and ``near`` (the rows around a few notes, ``catalog_near.py``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA + REFS_SCHEMA)
        self.refs = CatalogRefs(self.db)
        self.read_only = False  # opened by ``frozen``
        # Decoded note rows, chunk paths and counts, kept while the database is unchanged: a warm
        # process (serve, eval) reads the same ones for every query. Another process's commit
        # changes PRAGMA data_version; our own writes bump _writes.
        self._caches: dict[str, dict[Any, Any]] = {}
        self._caches_key: tuple[int, int] = (-1, -1)
        self._writes = 0

    @classmethod
    def frozen(cls, path: Path) -> Catalog | None:
        """The catalogue opened to read only, creating no file (on a full disk SQLite cannot make the
        ``-shm`` file WAL mode reads through); None when a ``-wal`` file holds changes such a read would
        miss. Writes through it fail (read-only)."""
        import urllib.parse

        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return None
        self = cls.__new__(cls)
        self.path = path
        uri = f"file:{urllib.parse.quote(str(path))}?immutable=1"
        self.db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        self.refs = CatalogRefs(self.db)
        self._caches, self._caches_key, self._writes = {}, (-1, -1), 0
        self.read_only = True
        return self

    @functools.cached_property
    def near(self) -> CatalogNear:
        """The reads of the rows around a few notes (opened on first use: a writer never needs them)."""
        from .catalog_near import CatalogNear

        return CatalogNear(self.db)

    def close(self) -> None:
        self.db.close()

    # -- writing ---------------------------------------------------------------------------

    def apply(
        self,
        notes: Iterable[tuple[Note, FileState, NoteDates]],
        deletes: Iterable[str],
        touches: Iterable[tuple[str, FileState]] = (),
    ) -> None:
        """Upsert notes with their dates, delete paths and refresh file stats in one transaction."""
        cur = self.db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        self._writes += 1
        try:
            for path in deletes:
                self._delete(cur, path)
            for note, state, d in notes:
                self._delete(cur, note.path)
                cur.execute(
                    "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        note.path,
                        note.id,
                        note.title,
                        note.type,
                        note.status,
                        note.scope,
                        note.salience,
                        note.confidence,
                        int(note.pinned),
                        json.dumps(note.tags),
                        json.dumps(note.aliases),
                        json.dumps(note.entities),
                        note.supersedes,
                        # created/updated: the frontmatter's, else git's, else the file's (as lexical's date)
                        d.created,
                        d.updated,
                        note.authored,
                        note.snoozed_until,
                        note.valid_from,
                        note.valid_until,
                        d.date,
                        state.hash,
                        state.mtime_ns,
                        state.size,
                        json.dumps([_problem_dict(p) for p in note.problems]),
                        int(note.has_id),
                        d.created_from,
                        d.updated_from,
                        d.git_created,
                        d.git_updated,
                    ),
                )
                stem = note.path.rsplit("/", 1)[-1]
                titled = "title" if note.meta.get("title") not in (None, "") else "heading"
                names = [("id", note.id), ("path", note.path), ("stem", stem), (titled, note.title)]
                names += [("alias", a) for a in note.aliases]
                cur.executemany(
                    "INSERT INTO names VALUES (?,?,?)",
                    {(normalize_ref(n), note.path, k) for k, n in names if n},
                )
                cur.executemany(
                    "INSERT INTO links VALUES (?,?,?,?,?,?,?,?)",
                    [
                        (
                            note.path,
                            ln.target,
                            ln.type,
                            ln.label,
                            ln.heading,
                            ln.reason,
                            normalize_ref(ln.target),
                            ln.property,
                        )
                        for ln in note.links
                    ],
                )
                cur.executemany(
                    "INSERT INTO chunks (path, ord, hash, heading, embed_text) VALUES (?,?,?,?,?)",
                    [(note.path, c.ord, c.hash, c.heading, c.embed_text) for c in chunk_note(note.title, note.body)],
                )
                write_refs(cur, note)
            for path, state in touches:
                cur.execute("UPDATE notes SET mtime_ns=?, size=? WHERE path=?", (state.mtime_ns, state.size, path))
            cur.execute(_BUMP_ROWS)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def set_attachments(self, present: Iterable[str], gone: Iterable[str] = (), *, replace: bool = False) -> None:
        """Record the vault's attachments (non-markdown files links may name): add ``present``,
        drop ``gone``; ``replace`` makes ``present`` the whole set (after a full scan)."""
        self._writes += 1
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if replace:
                self.db.execute("DELETE FROM attachments")
            self.db.executemany("DELETE FROM attachments WHERE path=?", [(p,) for p in gone])
            self.db.executemany("INSERT OR IGNORE INTO attachments VALUES (?)", [(p,) for p in present])
            self.db.execute(_BUMP_ROWS)

    def attachments(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT path FROM attachments ORDER BY path")]

    @staticmethod
    def _delete(cur: sqlite3.Cursor, path: str) -> None:
        # Vectors of removed chunks leave the usearch index at the next embed.
        cur.execute("INSERT OR IGNORE INTO vec_dead SELECT key FROM chunks WHERE path=? AND vec=1", (path,))
        cur.execute("DELETE FROM chunks WHERE path=?", (path,))
        cur.execute("DELETE FROM notes WHERE path=?", (path,))
        cur.execute("DELETE FROM names WHERE path=?", (path,))
        cur.execute("DELETE FROM links WHERE src=?", (path,))
        delete_refs(cur, path)

    def pending_hashes(self, *, every: bool = False) -> list[tuple[int, str]]:
        """(key, content hash) of the chunks without a vector (``every``: of all chunks), without their text;
        every note's first chunk (title and lead) before any second one, so those are embedded first."""
        where = "" if every else " WHERE vec=0"
        return list(self.db.execute(f"SELECT key, hash FROM chunks{where} ORDER BY ord > 0, key"))

    def not_embedded(self, paths: Sequence[str]) -> set[str]:
        """Those of ``paths`` with a chunk that has no vector yet."""
        out: set[str] = set()
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            out.update(
                p
                for (p,) in self.db.execute(
                    f"SELECT DISTINCT path FROM chunks WHERE vec=0 AND path IN ({','.join('?' * len(part))})", part
                )
            )
        return out

    def dead_keys(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT key FROM vec_dead")]

    def finish_vector_sync(self, added: list[int], removed: list[int]) -> None:
        self._writes += 1
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("UPDATE chunks SET vec=1 WHERE key=?", [(k,) for k in added])
            self.db.executemany("DELETE FROM vec_dead WHERE key=?", [(k,) for k in removed])

    def reset_vectors(self, model: str) -> None:
        """Forget which chunks are in the vector index (a new model, or a rebuilt index)."""
        self._writes += 1
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("UPDATE chunks SET vec=0")
            self.db.execute("DELETE FROM vec_dead")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('vector_model', ?)", (model,))

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, all chunks); counted again only when the database changed."""
        cache = self._fresh_cache("coverage")
        if "counts" not in cache:
            done, total = self.db.execute("SELECT coalesce(sum(vec), 0), count(*) FROM chunks").fetchone()
            cache["counts"] = (int(done), int(total))
        return cache["counts"]

    def chunks_first(self, path: str) -> list[tuple[str, str]]:
        """[(hash, embed_text)] of a note's first chunk (empty if the note is not indexed)."""
        return list(self.db.execute("SELECT hash, embed_text FROM chunks WHERE path=? ORDER BY ord LIMIT 1", (path,)))

    def chunk_hashes(self, path: str) -> list[str]:
        """The content hashes of a note's chunks, in order (their vectors are cached by hash)."""
        return [h for (h,) in self.db.execute("SELECT hash FROM chunks WHERE path=? ORDER BY ord", (path,))]

    def chunk_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """How many chunks each of these notes has."""
        paths = list(paths)
        out: dict[str, int] = {}
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            q = f"SELECT path, count(*) FROM chunks WHERE path IN ({','.join('?' * len(part))}) GROUP BY path"
            out.update(dict(self.db.execute(q, part)))
        return out

    def chunk_terms(self, path: str) -> list[frozenset[str]]:
        """Each of a note's chunks as the set of its index terms (``text.terms`` of its embed_text),
        kept until the index changes: a warm process reads and tokenises a note's sections once."""
        cache = self._fresh_cache("chunk_terms")
        if path not in cache:
            if len(cache) > 20_000:
                cache.clear()
            cache[path] = [
                frozenset(terms(t))
                for (t,) in self.db.execute("SELECT embed_text FROM chunks WHERE path=? ORDER BY ord", (path,))
            ]
        return cache[path]

    def chunks_by_key(self, keys: Iterable[int], *, text: bool = True) -> dict[int, dict[str, Any]]:
        """Chunks by vector key; ``text=False`` leaves out embed_text (a vector query looks at
        hundreds of chunks but shows the text of a few)."""
        out: dict[int, dict[str, Any]] = {}
        keys = list(keys)
        cache = self._fresh_cache("chunks") if not text else {}
        if not text:
            out = {k: cache[k] for k in keys if k in cache}
            keys = [k for k in keys if k not in cache]
        cols = "key, path, ord, hash, heading" + (", embed_text" if text else ", NULL")
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT {cols} FROM chunks WHERE key IN ({','.join('?' * len(part))})"
            for k, path, ord_, h, heading, body in self.db.execute(q, part):
                out[k] = {"path": path, "ord": ord_, "hash": h, "heading": heading, "embed_text": body}
                if not text and len(cache) < 200_000:
                    cache[k] = out[k]
        return out

    def set_meta(self, key: str, value: str | None) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (key, value))

    # -- reading ---------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def stamps(self, paths: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
        """path → (mtime_ns, size) of every note, or of ``paths``: enough to tell which files may have changed."""
        q = "SELECT path, mtime_ns, size FROM notes"
        return {p: (m, z) for p, m, z in (self.db.execute(q) if paths is None else self._in(q, paths))}

    def _in(self, query: str, paths: Iterable[str]) -> Iterator[tuple[Any, ...]]:
        """The rows of ``query`` (which ends in its FROM clause) for ``paths``, 500 at a time."""
        wanted = list(dict.fromkeys(paths))
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            yield from self.db.execute(f"{query} WHERE path IN ({','.join('?' * len(part))})", part)

    def paths_containing(self, text: str) -> list[str]:
        """Indexed paths with ``text`` in them, ignoring case (the conflict copies sync keeps: a table scan
        in SQLite, ~100x cheaper than walking the vault)."""
        return [
            p for (p,) in self.db.execute("SELECT path FROM notes WHERE instr(lower(path), ?) > 0", (text.lower(),))
        ]

    def hashes(self, paths: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        paths = list(paths)
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            q = f"SELECT path, hash FROM notes WHERE path IN ({','.join('?' * len(part))})"
            out.update(self.db.execute(q, part))
        return out

    def file_dates(self, paths: Iterable[str]) -> dict[str, tuple[str, NoteDates]]:
        """path → (content hash, the dates indexed): what decides whether a note must be rewritten."""
        out: dict[str, tuple[str, NoteDates]] = {}
        paths = list(paths)
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            for path, h, *d in self.db.execute(
                "SELECT path, hash, date, created, updated, created_from, updated_from, git_created, git_updated "
                f"FROM notes WHERE path IN ({','.join('?' * len(part))})",
                part,
            ):
                out[path] = (h, NoteDates(*d))
        return out

    def git_dates(self, paths: Iterable[str] | None) -> dict[str, tuple[float, float] | None]:
        """path → (first commit, last commit) as indexed (None: git did not know the file); all notes
        when ``paths`` is None."""
        q = "SELECT path, git_created, git_updated FROM notes"
        if paths is None:
            rows: Iterable[tuple[str, float | None, float | None]] = self.db.execute(q)
        else:
            wanted = list(dict.fromkeys(paths))
            rows = [
                r
                for i in range(0, len(wanted), 500)
                for r in self.db.execute(
                    f"{q} WHERE path IN ({','.join('?' * len(wanted[i : i + 500]))})", wanted[i : i + 500]
                )
            ]
        return {p: (c, u) if c is not None and u is not None else None for p, c, u in rows}

    def set_git_dates(self, dates: dict[str, tuple[float, float]]) -> None:
        """Record notes' first and last commits only (a commit of notes whose frontmatter dates them)."""
        self._writes += 1
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "UPDATE notes SET git_created=?, git_updated=? WHERE path=?", [(c, u, p) for p, (c, u) in dates.items()]
            )
            self.db.execute(_BUMP_ROWS)

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM notes").fetchone()[0])

    def counts_by(self, column: str) -> dict[str, int]:
        assert column in ("type", "status", "scope")
        return dict(self.db.execute(f"SELECT {column}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC"))

    def lookup(self, ref: str) -> list[tuple[str, str]]:
        """(path, kind) pairs whose id/path/stem/title/alias equals ``ref`` (case-insensitive)."""
        return list(self.db.execute("SELECT path, kind FROM names WHERE norm=?", (normalize_ref(ref),)))

    def exact(self, ref: str) -> list[str]:
        """Paths whose id or path is exactly ``ref`` (case and all): what ``lookup`` cannot tell apart."""
        md = ref if ref.lower().endswith(".md") else f"{ref}.md"
        return [r[0] for r in self.db.execute("SELECT path FROM notes WHERE id=? OR path=? OR path=?", (ref, ref, md))]

    def all_names(self) -> list[str]:
        return [
            r[0]
            for r in self.db.execute("SELECT DISTINCT norm FROM names WHERE kind IN ('id','title','heading','stem')")
        ]

    def row(self, path: str) -> dict[str, Any] | None:
        cur = self.db.execute("SELECT * FROM notes WHERE path=?", (path,))
        row = cur.fetchone()
        if row is None:
            return None
        return _decode(dict(zip([c[0] for c in cur.description], row)))

    def _fresh_cache(self, name: str) -> dict[Any, Any]:
        """A named in-memory cache, emptied whenever the database changed since it was filled."""
        key = (self.db.execute("PRAGMA data_version").fetchone()[0], self._writes)
        if key != self._caches_key:
            self._caches.clear()
            self._caches_key = key
        return self._caches.setdefault(name, {})

    def rows(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Catalogue rows of many notes (one query per 500 paths not yet cached); each a fresh dict."""
        cache = self._fresh_cache("rows")
        order = list(dict.fromkeys(paths))
        wanted = [p for p in order if p not in cache]
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            cur = self.db.execute(f"SELECT * FROM notes WHERE path IN ({','.join('?' * len(part))})", part)
            cols = [c[0] for c in cur.description]
            for row in cur:
                d = _decode(dict(zip(cols, row)))
                cache[d["path"]] = d
        out = {p: {**cache[p]} for p in order if p in cache}
        if len(cache) > 50_000:
            cache.clear()  # bounded: the next call starts over
        return out

    def superseded_by(self, paths: Iterable[str]) -> dict[str, str]:
        """For each path that another note's ``supersedes`` names: the path of that successor
        (the first by path when several do)."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, str] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            for path, src in self.db.execute(
                f"SELECT n.path, min(l.src) FROM names n JOIN links l ON l.target_norm = n.norm "
                f"JOIN notes s ON s.path = l.src WHERE l.type = 'supersedes' AND l.src != n.path "
                f"AND n.path IN ({','.join('?' * len(part))}) GROUP BY n.path",
                part,
            ):
                out[path] = src
        return out

    def problems(self) -> Iterator[Problem]:
        for (raw,) in self.db.execute("SELECT problems FROM notes WHERE problems != '[]' ORDER BY path"):
            for p in json.loads(raw):
                yield Problem(**p)

    # -- graph -----------------------------------------------------------------------------------

    def graph_rows(self) -> tuple[list[Any], list[Any], list[Any], list[str], list[Any], list[Any]]:
        """(notes, names, links, attachments, refs, identities) rows ``graph.build_graph`` takes, read in
        one transaction."""
        with self.db:
            self.db.execute("BEGIN")
            notes = self.db.execute(
                "SELECT path, id, title, type, status, entities, aliases, date, created, "
                "authored, snoozed_until, valid_from, valid_until FROM notes"
            ).fetchall()
            names = self.db.execute("SELECT norm, path, kind FROM names").fetchall()
            links = self.db.execute(
                "SELECT src, target, type, label, heading, reason, target_norm, property FROM links ORDER BY rowid"
            ).fetchall()
            attachments = [r[0] for r in self.db.execute("SELECT path FROM attachments")]
            refs, identities = self.refs.refs_rows(), self.refs.identity_rows()
        return notes, names, links, attachments, refs, identities

    # -- queries for the features ----------------------------------------------------------------

    def all_chunks(self) -> list[tuple[int, str, str]]:
        """(key, hash, embed_text) of every chunk (the benchmarks read them)."""
        return list(self.db.execute("SELECT key, hash, embed_text FROM chunks ORDER BY key"))

    def pinned_paths(self) -> list[str]:
        """Active pinned notes, most salient first."""
        return [
            r[0]
            for r in self.db.execute(
                "SELECT path FROM notes WHERE pinned=1 AND status='active' ORDER BY salience DESC, path"
            )
        ]

    def newest_paths(self, type: str, limit: int) -> list[str]:
        """The ``limit`` newest notes of one type (by date, then path)."""
        return [
            r[0]
            for r in self.db.execute(
                "SELECT path FROM notes WHERE type=? ORDER BY date DESC, path LIMIT ?", (type, limit)
            )
        ]

    def dated_between(self, start: float | None, end: float | None, limit: int) -> list[str]:
        """Up to ``limit`` paths of notes dated in ``[start, end)`` (None: open), newest first."""
        return [
            r[0]
            for r in self.db.execute(
                "SELECT path FROM notes WHERE date IS NOT NULL AND date >= ? AND date < ? "
                "ORDER BY date DESC, path LIMIT ?",
                (start if start is not None else float("-inf"), end if end is not None else float("inf"), limit),
            )
        ]

    def unpinned_active(self) -> list[tuple[str, str, str, str, float | None, float | None]]:
        """(path, id, title, type, salience, date) of every active note that is not pinned."""
        return list(
            self.db.execute(
                "SELECT path, id, title, type, salience, date FROM notes WHERE status='active' AND pinned=0"
            )
        )

    def sequence_neighbours(
        self, paths: set[str], types: Sequence[str], max_bytes: int
    ) -> dict[str, list[tuple[str, str]]]:
        """For each of ``paths``: (neighbour, edge label) along links of ``types`` both ways, between
        notes of at most ``max_bytes`` (the reverse direction labelled ``TYPE⁻¹``)."""
        adj: dict[str, list[tuple[str, str]]] = {}
        types = tuple(types)
        marks = ",".join("?" * len(types))
        plist = sorted(paths)
        for i in range(0, len(plist), 400):
            part = plist[i : i + 400]
            pm = ",".join("?" * len(part))
            # out-edges, each target resolved by the best kind of name (id > path > stem > title > alias)
            for src, typ, other in self.db.execute(
                f"SELECT x.src, x.type, x.other FROM (SELECT l.src, l.type, (SELECT n.path FROM names n "
                f"WHERE n.norm = l.target_norm ORDER BY CASE n.kind WHEN 'id' THEN 0 WHEN 'path' THEN 1 "
                f"WHEN 'stem' THEN 2 WHEN 'title' THEN 3 WHEN 'heading' THEN 3 ELSE 4 END LIMIT 1) AS other "
                f"FROM links l "
                f"JOIN notes s ON s.path = l.src WHERE l.src IN ({pm}) AND l.type IN ({marks}) "
                f"AND s.size <= ?) x JOIN notes t ON t.path = x.other WHERE t.size <= ?",
                (*part, *types, max_bytes, max_bytes),
            ):
                if other and other != src:
                    adj.setdefault(src, []).append((other, typ))
            for src, typ, target in self.db.execute(
                f"SELECT l.src, l.type, n.path FROM links l JOIN names n ON n.norm = l.target_norm "
                f"JOIN notes t ON t.path = n.path JOIN notes s ON s.path = l.src "
                f"WHERE n.path IN ({pm}) AND l.type IN ({marks}) AND t.size <= ? AND s.size <= ?",
                (*part, *types, max_bytes, max_bytes),
            ):
                if src != target:
                    adj.setdefault(target, []).append((src, f"{typ}⁻¹"))
        return adj

    def rows_token(self) -> str | None:
        """Differs after any commit that changed notes, links, names, references or attachments, by this
        connection or another; not after one that only recorded vectors (the embedding job commits every
        round: a graph cache keyed on any commit was rebuilt each time)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='rows_version'").fetchone()
        return None if row is None else str(row[0])


# In the transaction of every write of rows (``rows_token``): a counter in ``meta``.
_BUMP_ROWS = (
    "INSERT INTO meta VALUES ('rows_version', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)


def _problem_dict(p: Problem) -> dict[str, str]:
    return {"path": p.path, "field": p.field, "message": p.message, "fix": p.fix}


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("tags", "aliases", "entities", "problems"):
        row[key] = json.loads(row[key]) if row.get(key) else []
    row["pinned"] = bool(row.get("pinned"))
    row["has_id"] = bool(row.get("has_id"))
    return row
