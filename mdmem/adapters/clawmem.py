"""A ClawMem store (its SQLite file), read only: documents with their content and metadata, relations, entities.

The file is opened read-only through SQLite's ``mode=ro`` URI and ``PRAGMA query_only``: nothing is
written to it, and a store ClawMem has open is read with its write-ahead log (not replayed into it).
Only columns the store has are asked for, so older stores (before pins, snoozes or invalidation) read
too. A file that is no SQLite database, or one without ClawMem's ``documents`` and ``content`` tables,
is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import MdmemError

SQLITE_HEADER = b"SQLite format 3\x00"
MAX_DOCUMENTS = 200_000
MAX_TEXT = 256 * 1024 * 1024  # characters of document content in one store
# Columns of ``documents`` read when the store has them (its migrations added them over time).
DOC_COLUMNS = (
    "id collection path title hash created_at modified_at active domain workstream tags content_type "
    "review_by confidence pinned snoozed_until archived_at authored_at invalidated_at invalidated_by "
    "superseded_by quality_score access_count memory_type topic_key"
).split()
# Tables whose rows are not notes or links: how many the store holds is reported, not imported.
OTHER_TABLES = ("entity_triples", "consolidated_observations", "session_log", "memory_evolution", "beads_issues")


@dataclass(slots=True)
class ClawDocument:
    """One ``documents`` row with its content (``content.doc``) and the names of its entities."""

    id: int
    row: dict[str, Any]
    text: str
    entities: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClawRelation:
    """One ``memory_relations`` row: source document, target document, type, weight and its metadata text."""

    source: int
    target: int
    type: str
    weight: float | None
    metadata: str | None


@dataclass(slots=True)
class ClawStore:
    """What a ClawMem store holds for an import."""

    documents: list[ClawDocument]
    relations: list[ClawRelation]
    other_rows: dict[str, int]  # table → rows not imported


def is_sqlite(path: Path) -> bool:
    """Whether the file starts with SQLite's header."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_HEADER
    except OSError:
        return False


def read_store(path: Path) -> ClawStore:
    """Every document, relation and entity mention of the ClawMem store at PATH (read only)."""
    import sqlite3

    name = path.name
    # With no write-ahead log beside it, the file is the whole store: ``immutable`` reads it without
    # the -wal and -shm files a read-only open of a WAL database would otherwise leave next to it. With
    # one (ClawMem has it open, or was killed), ``mode=ro`` reads the log too, through the files it has.
    live = path.with_name(name + "-wal").exists()
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?{'mode=ro' if live else 'mode=ro&immutable=1'}", uri=True)
    except sqlite3.Error as exc:
        raise MdmemError(f"{name}: cannot open it as a SQLite database ({exc}).") from None
    try:
        db.execute("PRAGMA query_only = 1")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"documents", "content"} <= tables:
            raise MdmemError(f"{name} is a SQLite database but not a ClawMem store (no documents and content tables).")
        cols = {r[1] for r in db.execute("PRAGMA table_info(documents)")}
        missing = {"id", "path", "title", "hash"} - cols
        if missing:
            raise MdmemError(f"{name}: its documents table lacks {', '.join(sorted(missing))}: not a ClawMem schema.")
        wanted = [c for c in DOC_COLUMNS if c in cols]
        (count,) = db.execute("SELECT count(*) FROM documents").fetchone()
        if count > MAX_DOCUMENTS:
            raise MdmemError(f"{name} holds {count:,} documents, more than {MAX_DOCUMENTS:,}: too big to import.")
        select = ", ".join(f"d.{c}" for c in wanted)
        docs: list[ClawDocument] = []
        total = 0
        query = f"SELECT {select}, c.doc FROM documents d LEFT JOIN content c ON c.hash = d.hash ORDER BY d.id"
        for row in db.execute(query):
            values = dict(zip(wanted, row[:-1]))
            text = row[-1] if isinstance(row[-1], str) else ""
            total += len(text)
            if total > MAX_TEXT:
                raise MdmemError(f"{name} holds more than {MAX_TEXT // 2**20} MB of text: too big to import.")
            docs.append(ClawDocument(int(values["id"]), values, text))
        relations: list[ClawRelation] = []
        if "memory_relations" in tables:
            rcols = {r[1] for r in db.execute("PRAGMA table_info(memory_relations)")}
            weight = "weight" if "weight" in rcols else "NULL"
            meta = "metadata" if "metadata" in rcols else "NULL"
            for s, t, typ, w, m in db.execute(
                f"SELECT source_id, target_id, relation_type, {weight}, {meta} FROM memory_relations "
                "ORDER BY source_id, target_id, relation_type"
            ):
                relations.append(ClawRelation(int(s), int(t), str(typ), w, m if isinstance(m, str) else None))
        if {"entity_nodes", "entity_mentions"} <= tables:
            by_id = {d.id: d for d in docs}
            for doc_id, ename in db.execute(
                "SELECT m.doc_id, coalesce(n.name, m.entity_id) FROM entity_mentions m "
                "LEFT JOIN entity_nodes n ON n.entity_id = m.entity_id ORDER BY m.doc_id, n.name"
            ):
                d = by_id.get(doc_id)
                if d is not None and ename and str(ename) not in d.entities:
                    d.entities.append(str(ename))
        other = {}
        for t in OTHER_TABLES:
            if t in tables:
                (n,) = db.execute(f'SELECT count(*) FROM "{t}"').fetchone()
                if n:
                    other[t] = int(n)
        return ClawStore(docs, relations, other)
    except sqlite3.DatabaseError as exc:
        raise MdmemError(f"{name}: the SQLite database cannot be read ({exc}); is it damaged?") from None
    finally:
        db.close()
