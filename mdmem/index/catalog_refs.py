"""The catalogue's external references and person identities: their SQL, a part of
``catalog`` in a module of its own (``Catalog.refs`` reads them; ``Catalog`` calls
``write_refs``/``delete_refs`` inside its own transaction), so the catalogue stays readable.

``refs``: what each note cites (kind, canonical value, as written, frontmatter or body).
``identities``: the keys each person note is found by (``refs.identity_keys`` of its title, aliases
and ``identities``), with their strength.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.refs import AS_WRITTEN, identity_keys, note_refs

if TYPE_CHECKING:
    from ..core.note import Note

SCHEMA = """
CREATE TABLE IF NOT EXISTS refs (
  src TEXT NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL, written TEXT NOT NULL, origin TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS refs_src ON refs(src);
CREATE INDEX IF NOT EXISTS refs_value ON refs(value);
CREATE TABLE IF NOT EXISTS identities (
  path TEXT NOT NULL, key TEXT NOT NULL, written TEXT NOT NULL, strength INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS identities_path ON identities(path);
CREATE INDEX IF NOT EXISTS identities_key ON identities(key);
"""

PERSON = "person"


def write_refs(cur: sqlite3.Cursor, note: Note) -> None:
    """Record a note's references and, for a person note, its identities (after ``delete_refs``)."""
    cur.executemany(
        "INSERT INTO refs VALUES (?,?,?,?,?)",
        [(note.path, r.kind, r.value, r.written, r.origin) for r in note_refs(note.refs, note.body_refs)],
    )
    if note.type != PERSON:
        return
    rows: dict[str, tuple[str, int]] = {}
    for written in [note.title, *note.aliases, *note.identities]:
        for key, strength in identity_keys(written):
            if key not in rows or strength < rows[key][1]:
                rows[key] = (written, strength)
    cur.executemany("INSERT INTO identities VALUES (?,?,?,?)", [(note.path, key, w, s) for key, (w, s) in rows.items()])


def delete_refs(cur: sqlite3.Cursor, path: str) -> None:
    cur.execute("DELETE FROM refs WHERE src=?", (path,))
    cur.execute("DELETE FROM identities WHERE path=?", (path,))


class CatalogRefs:
    """The reads of references and identities: ``Catalog.refs``, on the catalogue's connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def refs_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(src, kind, value, written, origin) of every reference, as ``graph.build_graph`` takes them."""
        return self.db.execute("SELECT src, kind, value, written, origin FROM refs ORDER BY rowid").fetchall()

    def identity_rows(self) -> list[tuple[str, str, int]]:
        """(person note, key, strength) of every identity."""
        return self.db.execute("SELECT path, key, strength FROM identities ORDER BY rowid").fetchall()

    def refs_of(self, path: str) -> list[dict[str, Any]]:
        """A note's references in the order written (frontmatter first)."""
        cur = self.db.execute("SELECT kind, value, written, origin FROM refs WHERE src=? ORDER BY rowid", (path,))
        return [dict(zip(("kind", "value", "written", "origin"), r)) for r in cur]

    def citing(self, kind: str, value: str) -> list[dict[str, Any]]:
        """Every note that cites (kind, value), each with how it wrote it and where, by path."""
        cur = self.db.execute(
            "SELECT src, written, origin FROM refs WHERE kind=? AND value=? ORDER BY src, rowid", (kind, value)
        )
        return [dict(zip(("path", "written", "origin"), r)) for r in cur]

    def similar_refs(self, value: str, limit: int = 5) -> list[str]:
        """Cited values that contain ``value`` (for a reference nobody cites: what was meant)."""
        like = "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT value FROM refs WHERE value LIKE ? ESCAPE '\\' ORDER BY value LIMIT ?", (like, limit)
            )
        ]

    def identities_of(self, path: str) -> list[str]:
        """A person note's identities as written (its title and aliases among them), once each."""
        rows = self.db.execute(
            "SELECT written FROM identities WHERE path=? AND strength=? ORDER BY rowid", (path, AS_WRITTEN)
        )
        return list(dict.fromkeys(r[0] for r in rows))

    def people_named(self, names: list[str]) -> bool:
        """Whether one of ``names`` (case-folded) is an identity of a person note or the first word of
        one: a cheap look before a question is read as one about someone."""
        if not names:
            return False
        marks = ",".join("?" * len(names))
        row = self.db.execute(
            f"SELECT 1 FROM identities WHERE key IN ({marks}) OR "
            f"substr(key, 1, instr(key || ' ', ' ') - 1) IN ({marks}) LIMIT 1",
            [*names, *names],
        ).fetchone()
        return row is not None

    def has_people(self) -> bool:
        """Whether any person note is indexed (each has identities: its title at least)."""
        return self.db.execute("SELECT 1 FROM identities LIMIT 1").fetchone() is not None
