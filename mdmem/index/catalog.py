"""The note catalogue: metadata, names, links, problems and content hashes, in SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..links import normalize_ref
from ..note import Note, Problem, iso_to_timestamp

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
  path TEXT PRIMARY KEY, id TEXT NOT NULL, title TEXT NOT NULL, type TEXT NOT NULL,
  status TEXT NOT NULL, scope TEXT NOT NULL, salience REAL, confidence REAL, pinned INTEGER,
  tags TEXT, aliases TEXT, entities TEXT, supersedes TEXT,
  created TEXT, updated TEXT, authored TEXT, snoozed_until TEXT, valid_from TEXT, valid_until TEXT,
  date REAL, hash TEXT NOT NULL, mtime_ns INTEGER, size INTEGER, problems TEXT, has_id INTEGER
);
CREATE INDEX IF NOT EXISTS notes_id ON notes(id);
CREATE TABLE IF NOT EXISTS names (norm TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS names_norm ON names(norm);
CREATE INDEX IF NOT EXISTS names_path ON names(path);
CREATE TABLE IF NOT EXISTS links (
  src TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL, label TEXT, heading TEXT, reason TEXT
);
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""

# The order in which name kinds win when a reference matches several notes.
NAME_KINDS = ("id", "path", "stem", "title", "alias")


@dataclass(frozen=True, slots=True)
class FileState:
    """What the catalogue remembers about a file to decide whether to re-read it."""

    hash: str
    mtime_ns: int
    size: int


class Catalog:
    """SQLite store of note metadata; one connection per process, WAL for concurrent readers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    # -- writing ---------------------------------------------------------------------------

    def apply(self, notes: Iterable[tuple[Note, FileState]], deletes: Iterable[str],
              touches: Iterable[tuple[str, FileState]] = ()) -> None:
        """Upsert notes, delete paths and refresh file stats in one transaction."""
        cur = self.db.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            for path in deletes:
                self._delete(cur, path)
            for note, state in notes:
                self._delete(cur, note.path)
                cur.execute(
                    "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        note.path, note.id, note.title, note.type, note.status, note.scope,
                        note.salience, note.confidence, int(note.pinned), json.dumps(note.tags),
                        json.dumps(note.aliases), json.dumps(note.entities), note.supersedes,
                        note.created, note.updated, note.authored, note.snoozed_until,
                        note.valid_from, note.valid_until, iso_to_timestamp(note.date),
                        state.hash, state.mtime_ns, state.size,
                        json.dumps([_problem_dict(p) for p in note.problems]), int(note.has_id),
                    ),
                )
                stem = note.path.rsplit("/", 1)[-1]
                names = [("id", note.id), ("path", note.path), ("stem", stem), ("title", note.title)]
                names += [("alias", a) for a in note.aliases]
                cur.executemany(
                    "INSERT INTO names VALUES (?,?,?)",
                    {(normalize_ref(n), note.path, k) for k, n in names if n},
                )
                cur.executemany(
                    "INSERT INTO links VALUES (?,?,?,?,?,?)",
                    [(note.path, ln.target, ln.type, ln.label, ln.heading, ln.reason) for ln in note.links],
                )
            for path, state in touches:
                cur.execute("UPDATE notes SET mtime_ns=?, size=? WHERE path=?",
                            (state.mtime_ns, state.size, path))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    @staticmethod
    def _delete(cur: sqlite3.Cursor, path: str) -> None:
        cur.execute("DELETE FROM notes WHERE path=?", (path,))
        cur.execute("DELETE FROM names WHERE path=?", (path,))
        cur.execute("DELETE FROM links WHERE src=?", (path,))

    def forget_hashes(self, paths: Iterable[str]) -> None:
        """Mark notes as needing a re-read (used to repair after an interrupted write)."""
        self.db.executemany("UPDATE notes SET hash='', mtime_ns=-1 WHERE path=?", [(p,) for p in paths])

    def set_meta(self, key: str, value: str | None) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (key, value))

    # -- reading ---------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def file_states(self) -> dict[str, FileState]:
        return {
            p: FileState(h, m, s)
            for p, h, m, s in self.db.execute("SELECT path, hash, mtime_ns, size FROM notes")
        }

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM notes").fetchone()[0])

    def counts_by(self, column: str) -> dict[str, int]:
        assert column in ("type", "status", "scope")
        return dict(self.db.execute(f"SELECT {column}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC"))

    def lookup(self, ref: str) -> list[tuple[str, str]]:
        """(path, kind) pairs whose id/path/stem/title/alias equals ``ref`` (case-insensitive)."""
        return list(self.db.execute("SELECT path, kind FROM names WHERE norm=?", (normalize_ref(ref),)))

    def all_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT DISTINCT norm FROM names WHERE kind IN ('id','title','stem')")]

    def row(self, path: str) -> dict[str, Any] | None:
        cur = self.db.execute("SELECT * FROM notes WHERE path=?", (path,))
        row = cur.fetchone()
        if row is None:
            return None
        return _decode(dict(zip([c[0] for c in cur.description], row)))

    def rows(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {p: r for p in paths if (r := self.row(p)) is not None}

    def problems(self) -> Iterator[Problem]:
        for (raw,) in self.db.execute("SELECT problems FROM notes WHERE problems != '[]' ORDER BY path"):
            for p in json.loads(raw):
                yield Problem(**p)

    def links_from(self, path: str) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT target, type, label, heading, reason FROM links WHERE src=?", (path,))
        return [dict(zip(("target", "type", "label", "heading", "reason"), r)) for r in cur]


def _problem_dict(p: Problem) -> dict[str, str]:
    return {"path": p.path, "field": p.field, "message": p.message, "fix": p.fix}


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("tags", "aliases", "entities", "problems"):
        row[key] = json.loads(row[key]) if row.get(key) else []
    row["pinned"] = bool(row.get("pinned"))
    row["has_id"] = bool(row.get("has_id"))
    return row
