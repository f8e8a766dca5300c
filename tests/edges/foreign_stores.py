"""Test stores of the two memory systems mdmem imports from, in their real shapes.

A ClawMem store is made with the ``CREATE TABLE`` and ``ALTER TABLE`` statements ClawMem's store runs
(its ``documents`` table grew by migrations: pins, snoozes, archiving, invalidation), in WAL mode as
ClawMem keeps it. A Qmemory export is written as ``surreal export`` writes one: the schema's
``DEFINE`` statements, then each table's records as ``INSERT [ … ];`` and edges as
``INSERT RELATION [ … ];``, values in SurrealQL's literal syntax (``d'…'`` datetimes, ``0.9f`` floats,
``⟨…⟩`` record keys, ``NONE``). Each comes with the spec it was built from, for the assertions.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLAWMEM_DDL = [
    """CREATE TABLE IF NOT EXISTS content (
      hash TEXT PRIMARY KEY,
      doc TEXT NOT NULL,
      created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS documents (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      collection TEXT NOT NULL,
      path TEXT NOT NULL,
      title TEXT NOT NULL,
      hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      modified_at TEXT NOT NULL,
      active INTEGER NOT NULL DEFAULT 1,
      domain TEXT,
      workstream TEXT,
      tags TEXT,
      content_type TEXT NOT NULL DEFAULT 'note',
      review_by TEXT,
      confidence REAL NOT NULL DEFAULT 0.5,
      access_count INTEGER NOT NULL DEFAULT 0,
      content_hash TEXT,
      FOREIGN KEY (hash) REFERENCES content(hash) ON DELETE CASCADE,
      UNIQUE(collection, path)
    )""",
    "ALTER TABLE documents ADD COLUMN quality_score REAL NOT NULL DEFAULT 0.5",
    "ALTER TABLE documents ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE documents ADD COLUMN snoozed_until TEXT",
    "ALTER TABLE documents ADD COLUMN last_accessed_at TEXT",
    "ALTER TABLE documents ADD COLUMN archived_at TEXT",
    "ALTER TABLE documents ADD COLUMN memory_type TEXT DEFAULT 'semantic'",
    "ALTER TABLE documents ADD COLUMN normalized_hash TEXT",
    "ALTER TABLE documents ADD COLUMN duplicate_count INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE documents ADD COLUMN last_seen_at TEXT",
    "ALTER TABLE documents ADD COLUMN topic_key TEXT",
    "ALTER TABLE documents ADD COLUMN revision_count INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE documents ADD COLUMN authored_at TEXT",
    "ALTER TABLE documents ADD COLUMN invalidated_at TEXT",
    "ALTER TABLE documents ADD COLUMN invalidated_by INTEGER",
    "ALTER TABLE documents ADD COLUMN superseded_by INTEGER",
    """CREATE TABLE IF NOT EXISTS session_log (
      session_id TEXT PRIMARY KEY,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      handoff_path TEXT,
      machine TEXT,
      files_changed TEXT,
      summary TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS memory_relations (
      source_id INTEGER NOT NULL,
      target_id INTEGER NOT NULL,
      relation_type TEXT NOT NULL,
      weight REAL DEFAULT 1.0,
      metadata TEXT,
      created_at TEXT,
      PRIMARY KEY (source_id, target_id, relation_type),
      FOREIGN KEY (source_id) REFERENCES documents(id) ON DELETE CASCADE,
      FOREIGN KEY (target_id) REFERENCES documents(id) ON DELETE CASCADE
    )""",
    "ALTER TABLE memory_relations ADD COLUMN contradict_confidence REAL",
    """CREATE TABLE IF NOT EXISTS entity_nodes (
      entity_id TEXT PRIMARY KEY,
      entity_type TEXT,
      name TEXT,
      description TEXT,
      created_at TEXT,
      mention_count INTEGER DEFAULT 0,
      last_seen TEXT,
      canonical_id TEXT,
      vault TEXT DEFAULT 'default'
    )""",
    """CREATE TABLE IF NOT EXISTS entity_mentions (
      entity_id TEXT NOT NULL,
      doc_id INTEGER NOT NULL,
      mention_text TEXT,
      created_at TEXT,
      PRIMARY KEY (entity_id, doc_id),
      FOREIGN KEY (entity_id) REFERENCES entity_nodes(entity_id) ON DELETE CASCADE,
      FOREIGN KEY (doc_id) REFERENCES documents(id) ON DELETE CASCADE
    )""",
    """CREATE TABLE IF NOT EXISTS entity_triples (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      subject_entity_id TEXT NOT NULL,
      predicate TEXT NOT NULL,
      object_entity_id TEXT,
      object_literal TEXT,
      valid_from TEXT,
      valid_to TEXT,
      confidence REAL DEFAULT 1.0,
      source_doc_id INTEGER,
      source_fact TEXT,
      created_at TEXT DEFAULT (datetime('now')),
      FOREIGN KEY (subject_entity_id) REFERENCES entity_nodes(entity_id),
      FOREIGN KEY (object_entity_id) REFERENCES entity_nodes(entity_id),
      FOREIGN KEY (source_doc_id) REFERENCES documents(id)
    )""",
]
CLAWMEM_TYPES = [
    "decision",
    "preference",
    "hub",
    "research",
    "project",
    "handoff",
    "conversation",
    "progress",
    "milestone",
    "problem",
    "note",
    "deductive",
    "antipattern",
]
# ClawMem's relation types and the link types mdmem gives them.
CLAWMEM_LINKS = {
    "causal": "causes",
    "supporting": "supports",
    "semantic": "related",
    "temporal": "precedes",
    "contradicts": "contradicts",
}
ENTITIES = ["Railway", "Postgres", "Hotwire", "Stripe"]
WORDS = "billing ledger invoices retries webhooks payroll dashboards exports onboarding search caching queues".split()


@dataclass
class Spec:
    """What a store holds, as the test expects to find it in the vault."""

    docs: dict[Any, dict[str, Any]] = field(default_factory=dict)  # source id → expected fields
    edges: list[tuple[Any, Any, str, str | None]] = field(default_factory=list)  # (from, to, type, reason)


def clawmem_store(path: Path, n: int = 60) -> Spec:
    """A ClawMem store of ``n`` documents covering pins, snoozes, confidence, archived and removed
    documents, invalidations, supersessions, every relation type and entity mentions."""
    spec = Spec()
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA foreign_keys = ON")
    for ddl in CLAWMEM_DDL:
        db.execute(ddl)
    for k, name in enumerate(ENTITIES):
        db.execute(
            "INSERT INTO entity_nodes (entity_id, entity_type, name, created_at) VALUES (?, 'tool', ?, ?)",
            (f"ent-{k}", name, "2026-01-01T00:00:00Z"),
        )
    for i in range(1, n + 1):
        typ = CLAWMEM_TYPES[i % len(CLAWMEM_TYPES)]
        word = WORDS[i % len(WORDS)]
        title = f"Memory {i:02d} about {word}"
        body = f"Memory {i:02d}: the {word} service keeps note number {i} (marker clawmem{i:03d})."
        doc = f"---\ntitle: {title}\ncontent_type: {typ}\n---\n\n{body}\n"
        h = f"hash{i:04d}"
        e: dict[str, Any] = {
            "title": title,
            "type": {"deductive": "fact"}.get(typ, typ),
            "pinned": i % 5 == 0,
            "confidence": round(0.3 + (i % 7) / 10, 2),
            "snoozed_until": f"2027-0{1 + i % 9}-15" if i % 7 == 0 else None,
            "status": "active",
            "valid_until": None,
            "supersedes": None,
            "entities": [ENTITIES[(i // 2) % 4]] if i % 2 == 0 else [],
            "marker": f"clawmem{i:03d}",
            "path": f"mem/{i:02d}-{word}.md",
        }
        archived_at = None
        active = 1
        if i % 9 == 0:
            active, archived_at, e["status"] = 0, "2026-04-01T00:00:00Z", "archived"
        elif i % 11 == 0:
            active, e["status"] = 0, "forgotten"
        invalidated = i % 13 == 0 and i < n
        if invalidated:
            e["valid_until"] = "2026-05-01T00:00:00Z"
        superseded = i % 17 == 0 and i + 2 <= n
        db.execute("INSERT INTO content (hash, doc, created_at) VALUES (?, ?, ?)", (h, doc, "2026-02-01T00:00:00Z"))
        db.execute(
            "INSERT INTO documents (id, collection, path, title, hash, created_at, modified_at, active, tags, "
            "content_type, confidence, pinned, snoozed_until, archived_at, invalidated_at, invalidated_by, "
            "superseded_by) VALUES (?, 'notes', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                i,
                e["path"],
                title,
                h,
                f"2026-02-{1 + i % 27:02d}T09:00:00Z",
                f"2026-03-{1 + i % 27:02d}T09:00:00Z",
                active,
                json.dumps([word]),
                typ,
                e["confidence"],
                int(e["pinned"]),
                e["snoozed_until"],
                archived_at,
                e["valid_until"],
                None,
                None,
            ),
        )
        spec.docs[i] = e
        if e["entities"]:
            db.execute(
                "INSERT INTO entity_mentions (entity_id, doc_id, mention_text) VALUES (?, ?, ?)",
                (f"ent-{(i // 2) % 4}", i, e["entities"][0]),
            )
        if invalidated:
            spec.edges.append((i + 1, i, "invalidates", "invalidated as contradicted in ClawMem"))
        if superseded:
            spec.docs.setdefault(-(i + 2), {})["supersedes"] = i  # filled in below, once i + 2 exists
    for i in range(1, n + 1):  # the columns that point at later documents, now that they exist
        if spec.docs[i]["valid_until"]:
            db.execute("UPDATE documents SET invalidated_by = ? WHERE id = ?", (i + 1, i))
        if -i in spec.docs:
            older = spec.docs.pop(-i)["supersedes"]
            spec.docs[i]["supersedes"] = older
            db.execute("UPDATE documents SET superseded_by = ? WHERE id = ?", (i, older))

    def relate(src: int, dst: int, typ: str, reason: str | None, key: str = "reasoning") -> None:
        meta = json.dumps({key: reason}) if reason else None
        db.execute(
            "INSERT INTO memory_relations (source_id, target_id, relation_type, weight, metadata, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (src, dst, typ, 0.8, meta, "2026-03-01T00:00:00Z"),
        )
        spec.edges.append((src, dst, CLAWMEM_LINKS[typ], reason))

    for i in range(1, n):
        if i % 3 == 0:
            relate(i, i + 1, "causal", f"the {WORDS[i % 12]} change in {i} caused {i + 1}")
        if i % 4 == 0 and i + 2 <= n:
            relate(i, i + 2, "supporting", None)
        if i % 5 == 1 and i + 3 <= n:
            relate(i, i + 3, "semantic", None)
        if i % 6 == 0:
            relate(i, i + 1, "temporal", None)
        if i % 10 == 2 and i + 5 <= n:
            relate(i, i + 5, "contradicts", f"{i} and {i + 5} disagree on retries", key="reason")
    db.execute(
        "INSERT INTO entity_triples (subject_entity_id, predicate, object_entity_id, valid_from) "
        "VALUES ('ent-0', 'hosts', 'ent-1', '2026-01-01')"
    )
    db.execute("INSERT INTO session_log (session_id, started_at) VALUES ('s1', '2026-03-01T00:00:00Z')")
    db.commit()
    db.close()
    return spec


# -- Qmemory -----------------------------------------------------------------------------------------

QMEMORY_SCHEMA = """\
DEFINE TABLE entity TYPE NORMAL SCHEMAFULL PERMISSIONS NONE;

DEFINE FIELD aliases ON entity TYPE array<string> DEFAULT [] PERMISSIONS FULL;
DEFINE FIELD created_at ON entity TYPE datetime DEFAULT time::now() PERMISSIONS FULL;
DEFINE FIELD external_channel ON entity TYPE option<string> PERMISSIONS FULL;
DEFINE FIELD external_id ON entity TYPE option<string> PERMISSIONS FULL;
DEFINE FIELD external_source ON entity TYPE option<string> PERMISSIONS FULL;
DEFINE FIELD external_url ON entity TYPE option<string> PERMISSIONS FULL;
DEFINE FIELD name ON entity TYPE string PERMISSIONS FULL;
DEFINE FIELD type ON entity TYPE string PERMISSIONS FULL;
DEFINE FIELD updated_at ON entity TYPE datetime DEFAULT time::now() PERMISSIONS FULL;

DEFINE INDEX idx_entity_name ON entity FIELDS name;
DEFINE INDEX idx_entity_type ON entity FIELDS type;

DEFINE TABLE memory TYPE NORMAL SCHEMAFULL PERMISSIONS NONE;

DEFINE FIELD category ON memory TYPE string PERMISSIONS FULL;
DEFINE FIELD confidence ON memory TYPE float DEFAULT 0.8f PERMISSIONS FULL;
DEFINE FIELD content ON memory TYPE string PERMISSIONS FULL;
DEFINE FIELD created_at ON memory TYPE datetime DEFAULT time::now() PERMISSIONS FULL;
DEFINE FIELD embedding ON memory TYPE option<array<float>> PERMISSIONS FULL;
DEFINE FIELD is_active ON memory TYPE bool DEFAULT true PERMISSIONS FULL;
DEFINE FIELD prev_version ON memory TYPE option<record<memory>> PERMISSIONS FULL;
DEFINE FIELD salience ON memory TYPE float DEFAULT 0.5f PERMISSIONS FULL;
DEFINE FIELD scope ON memory TYPE string DEFAULT 'global' PERMISSIONS FULL;
DEFINE FIELD source_type ON memory TYPE string DEFAULT 'conversation' PERMISSIONS FULL;
DEFINE FIELD updated_at ON memory TYPE datetime DEFAULT time::now() PERMISSIONS FULL;
DEFINE FIELD valid_from ON memory TYPE option<datetime> PERMISSIONS FULL;
DEFINE FIELD valid_until ON memory TYPE option<datetime> PERMISSIONS FULL;

DEFINE ANALYZER qmemory_analyzer TOKENIZERS BLANK,CLASS FILTERS LOWERCASE;
DEFINE INDEX idx_memory_content ON memory FIELDS content FULLTEXT ANALYZER qmemory_analyzer BM25(1.2,0.75);
DEFINE INDEX idx_memory_active ON memory FIELDS is_active;

DEFINE TABLE relates TYPE RELATION IN session | message | memory | entity OUT session | message | memory | entity SCHEMAFULL PERMISSIONS NONE;

DEFINE FIELD confidence ON relates TYPE float DEFAULT 0.8f PERMISSIONS FULL;
DEFINE FIELD created_at ON relates TYPE datetime DEFAULT time::now() PERMISSIONS FULL;
DEFINE FIELD created_by ON relates TYPE string PERMISSIONS FULL;
DEFINE FIELD in ON relates TYPE record<session | message | memory | entity> PERMISSIONS FULL;
DEFINE FIELD out ON relates TYPE record<session | message | memory | entity> PERMISSIONS FULL;
DEFINE FIELD reason ON relates TYPE option<string> PERMISSIONS FULL;
DEFINE FIELD type ON relates TYPE string PERMISSIONS FULL;

DEFINE TABLE prev_version TYPE RELATION IN memory OUT memory SCHEMAFULL PERMISSIONS NONE;

DEFINE TABLE session TYPE NORMAL SCHEMAFULL PERMISSIONS NONE;

DEFINE FIELD channel ON session TYPE string PERMISSIONS FULL;
DEFINE FIELD scope ON session TYPE string DEFAULT 'global' PERMISSIONS FULL;
DEFINE FIELD session_key ON session TYPE string PERMISSIONS FULL;
"""
CATEGORIES = ["style", "preference", "context", "decision", "idea", "feedback", "domain"]
QM_ENTITIES = {
    # record key → (name, type, extra fields)
    "ent_ahmed": ("Ahmed", "person", {"aliases": ["Ahmed S."], "external_id": "ahmed@example.com"}),
    "ent_ahmed_wa": ("Ahmed WhatsApp", "contact", {"external_source": "whatsapp", "external_channel": "+966501234567"}),
    "⟨ent-railway⟩": ("Railway", "system", {}),
    "ent_surreal": ("SurrealDB", "system", {}),
    "ent_rcrm": ("r-crm", "project", {}),
    "ent_acme": ("Acme", "org", {}),
}


def surql(value: Any) -> str:
    """A Python value in SurrealQL's literal syntax, as an export writes it."""
    if value is None:
        return "NONE"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value}f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(surql(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k}: {surql(v)}" for k, v in sorted(value.items())) + " }"
    if isinstance(value, Raw):
        return value.text
    s = str(value)
    if "'" in s:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "'" + s.replace("\\", "\\\\") + "'"


@dataclass(frozen=True)
class Raw:
    """SurrealQL written as is: a record id, a datetime literal."""

    text: str


def when(iso: str) -> Raw:
    return Raw(f"d'{iso}'")


def qmemory_export(path: Path, n: int = 55) -> Spec:
    """A Qmemory export of ``n`` memories covering categories, salience, scopes, validity, soft
    deletes, corrected versions (``prev_version``) and ``relates`` edges to memories, entities and a
    session; plus its entities and a session and message that have no notes."""
    spec = Spec()
    memories = []
    versions = []
    for i in range(1, n + 1):
        cat = CATEGORIES[i % len(CATEGORIES)]
        word = WORDS[i % len(WORDS)]
        rid = f"memory:mem{i:03d}"
        vf = f"2026-0{1 + i % 6}-01T00:00:00Z" if i % 4 == 0 else None
        vu = (
            (f"2025-1{i % 3}-01T00:00:00Z" if i % 8 == 0 else f"2027-0{1 + i % 6}-01T00:00:00Z") if i % 4 == 0 else None
        )
        scope = ["global", "project:r-crm", "topic:infra"][i % 3]
        e: dict[str, Any] = {
            "type": {"style": "preference"}.get(cat, cat),
            "salience": round(0.2 + (i % 8) / 10, 1),
            "scope": scope,
            "valid_from": vf,
            "valid_until": vu,
            "status": "active",
            "supersedes": None,
            "entities": [],
            "marker": f"qmem{i:03d}",
        }
        record: dict[str, Any] = {
            "id": Raw(rid),
            "content": f"Qmemory {i:03d}: the {word} team's rule (marker qmem{i:03d}) — it's kept",
            "category": cat,
            "salience": e["salience"],
            "scope": scope,
            "valid_from": when(vf) if vf else None,
            "valid_until": when(vu) if vu else None,
            "is_active": True,
            "confidence": 0.8,
            "source_type": "conversation",
            "prev_version": None,
            "embedding": [0.1, -0.25, 0.5] if i % 2 else None,
            "created_at": when(f"2026-03-{1 + i % 27:02d}T10:00:00Z"),
            "updated_at": when(f"2026-03-{1 + i % 27:02d}T11:00:00Z"),
        }
        if i % 10 == 5:  # a correction of the memory before it: the old one soft-deleted, a version edge
            record["prev_version"] = Raw(f"memory:mem{i - 1:03d}")
            e["supersedes"] = i - 1
            memories[-1][1]["is_active"] = False
            spec.docs[i - 1]["status"] = "archived"
            versions.append({"id": Raw(f"prev_version:v{i}"), "in": Raw(rid), "out": Raw(f"memory:mem{i - 1:03d}")})
        elif i % 6 == 0:  # deleted (qmemory_correct action "delete")
            record["is_active"] = False
            e["status"] = "forgotten"
        spec.docs[i] = e
        memories.append((i, record))
    entities = []
    for key, (name, typ, more) in QM_ENTITIES.items():
        entities.append(
            {"id": Raw(f"entity:{key}"), "name": name, "type": typ, "aliases": [], **more}
            | {"created_at": when("2026-01-05T00:00:00Z"), "updated_at": when("2026-01-05T00:00:00Z")}
        )
        mdmem_type = {"person": "person", "contact": "reference", "project": "project"}.get(typ, "hub")
        spec.docs[f"entity:{key.strip('⟨⟩')}"] = {"title": name, "type": mdmem_type}
    relates = []
    ent_keys = list(QM_ENTITIES)
    memory_edge_types = ["supports", "contradicts", "caused_by", "depends_on"]

    def relate(k: int, src: str, dst: str, typ: str, reason: str | None) -> None:
        relates.append(
            {
                "id": Raw(f"relates:r{k:04d}"),
                "in": Raw(src),
                "out": Raw(dst),
                "type": typ,
                "reason": reason,
                "confidence": 0.8,
                "created_by": "agent",
                "created_at": when("2026-03-20T00:00:00Z"),
            }
        )

    k = 0
    for i in range(1, n + 1):
        ent = ent_keys[2 + i % 4]  # the systems, the project, the org
        k += 1
        reason = f"memory {i} names {QM_ENTITIES[ent][0]}" if i % 2 else None
        relate(k, f"memory:mem{i:03d}", f"entity:{ent}", "mentions_entity" if i % 3 else "deployed_on", reason)
        spec.edges.append((i, f"entity:{ent.strip('⟨⟩')}", "mentions_entity" if i % 3 else "deployed_on", reason))
        spec.docs[i]["entities"].append(QM_ENTITIES[ent][0])
        if i % 3 == 1 and i + 2 <= n:
            k += 1
            typ = memory_edge_types[i % 4]
            relate(k, f"memory:mem{i:03d}", f"memory:mem{i + 2:03d}", typ, f"{i} {typ} {i + 2}")
            spec.edges.append((i, i + 2, typ, f"{i} {typ} {i + 2}"))
        if i % 11 == 0:
            k += 1
            relate(k, f"memory:mem{i:03d}", "entity:ent_ahmed", "assigned_to", "Ahmed owns it")
            spec.edges.append((i, "entity:ent_ahmed", "assigned_to", "Ahmed owns it"))
            spec.docs[i]["entities"].append("Ahmed")
    k += 1
    relate(k, "entity:ent_ahmed", "entity:ent_ahmed_wa", "has_identity", None)
    spec.edges.append(("entity:ent_ahmed", "entity:ent_ahmed_wa", "has_identity", None))
    k += 1
    relate(k, "session:s1", "memory:mem001", "discussed_in", None)  # a session has no note: dropped

    def table(name: str, rows: list[dict[str, Any]], relation: bool = False) -> str:
        banner = f"-- ------------------------------\n-- TABLE DATA: {name}\n-- ------------------------------\n\n"
        if not rows:
            return banner
        return banner + f"INSERT {'RELATION ' if relation else ''}[ " + ", ".join(surql(r) for r in rows) + " ];\n\n"

    text = (
        "-- ------------------------------\n-- OPTION\n-- ------------------------------\n\nOPTION IMPORT;\n\n"
        + QMEMORY_SCHEMA
        + "\n"
        + table("entity", entities)
        + table("memory", [r for _, r in memories])
        + table("prev_version", versions, relation=True)
        + table("relates", relates, relation=True)
        + table("session", [{"id": Raw("session:s1"), "channel": "telegram", "scope": "global", "session_key": "k1"}])
    )
    path.write_text(text, encoding="utf-8")
    return spec
