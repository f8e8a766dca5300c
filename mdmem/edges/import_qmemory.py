"""A Qmemory database as ``surreal export`` writes it, as entries: a note per memory and entity, edges as links.

What maps to what (docs/importing.md has the table): a ``memory`` record's ``content`` → body,
``category`` → type (``style`` → preference), ``salience``, ``confidence``, ``scope``, ``valid_from``
and ``valid_until`` kept; ``is_active: false`` → ``archived`` when a newer version replaced it (a
``prev_version`` edge or field points at it), else ``forgotten`` (Qmemory's soft delete); the newer
version ``supersedes`` it. An ``entity`` → a note of its own (``person`` → type person with its external ids
and its ``has_identity`` contacts' as identities, ``contact`` → reference, ``project`` → project,
others → hub, the original type kept),
and its name in the ``entities`` of every memory an edge joins to it. A ``relates`` edge → a link on
its ``in`` note to its ``out`` note with its type (``relationship_type`` when set) and ``reason``.
Each note's id comes from its record id, so a re-run adds nothing. Sessions, messages and the other
tables have no notes; what is not kept is counted in the report's ``dropped``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .import_entries import Dropped, Entry, entry_id, iso, link, map_type, title_of, unit

if TYPE_CHECKING:
    from ..core.surql import Record, Rid

NOTE_TABLES = ("memory", "entity")
VERSION_EDGES = ("prev_version",)
# Fields of a memory kept by no note (Qmemory's own bookkeeping): a value is counted as dropped.
UNKEPT = "embedding source_type linked evidence_type recall_count last_recalled context_mood section".split()
DEFAULTS = {"source_type": "conversation", "evidence_type": "observed"}  # Qmemory's: nothing to keep
KEPT = {"content", "category", "salience", "valid_from", "valid_until", "scope", "is_active", "confidence"}
KEPT |= {"created_at", "updated_at", "prev_version", "source_person", "pinned", "snoozed_until", "tags"}
ENTITY_KEPT = {"name", "type", "aliases", "external_id", "external_url", "external_source", "external_channel"}
ENTITY_KEPT |= {"embedding", "created_at", "updated_at", "description"}
# A contact is one of a person's identities (``has_identity``): the person holds it, the contact note cites it.
ENTITY_TYPES = {"person": "person", "contact": "reference", "project": "project"}
_SCOPE = re.compile(r"^(global|(project|topic):[\w.\-/]+)$")


def _key(rid: Rid) -> str:
    return f"qmemory:{rid}"


def _memory(rec: Record, source: str, dropped: Dropped, errors: list[str]) -> Entry | None:
    f = rec.fields
    content = f.get("content")
    if not isinstance(content, str) or not content.strip():
        errors.append(f"{source} line {rec.line}: {rec.id} has no content; not imported")
        return None
    typ, original = map_type(f.get("category"))
    extra: dict[str, Any] = {"original_type": original} if original else {}
    if f.get("is_active") is False:
        extra["status"] = "forgotten"  # "archived" once a newer version is known to replace it
    for k in ("confidence",):
        if unit(f.get(k)) is not None:
            extra[k] = unit(f.get(k))
    for k in ("valid_from", "valid_until", "snoozed_until"):
        if f.get(k) is not None:
            value = iso(f.get(k))
            if value is None:
                dropped.add(f"memory.{k} that is not a date")
            extra[k] = value
    extra["updated"] = iso(f.get("updated_at"))
    scope = f.get("scope")
    if isinstance(scope, str) and scope and not _SCOPE.match(scope):
        dropped.add("memory.scope not global, project:NAME or topic:NAME")
        scope = None
    for k in UNKEPT:
        if f.get(k) not in (None, "", [], False, 0, DEFAULTS.get(k)):
            dropped.add(f"memory.{k}")
    for k in f:
        if k not in KEPT and k not in UNKEPT:
            dropped.add(f"memory.{k}")
    tags: list[Any] = f["tags"] if isinstance(f.get("tags"), list) else []
    text = content.strip()
    return Entry(
        key=_key(rec.id),
        title=title_of(text),
        title_chars=200,
        body=text,
        type=typ,
        created=iso(f.get("created_at")),
        tags=[str(t).lstrip("#") for t in tags if isinstance(t, (str, int))],
        salience=unit(f.get("salience")),
        scope=scope if scope and scope != "global" else None,
        pinned=f.get("pinned") is True,
        source=source,
        extra=extra,
    )


def _identities(f: dict[str, Any]) -> list[str]:
    out = []
    for k in ("external_id", "external_channel", "external_url"):
        v = f.get(k)
        if isinstance(v, str) and v.strip() and v.strip() not in out:
            out.append(v.strip())
    return out


def _entity(rec: Record, source: str, dropped: Dropped) -> Entry | None:
    f = rec.fields
    name = f.get("name")
    if not isinstance(name, str) or not name.strip():
        dropped.add("entity without a name")
        return None
    raw = str(f.get("type") or "entity").strip().lower()
    typ = ENTITY_TYPES.get(raw, "hub")
    extra: dict[str, Any] = {"original_type": raw} if raw != typ else {}
    aliases = [str(a) for a in f.get("aliases") or [] if isinstance(a, str) and a.strip()]
    extra["aliases"] = aliases or None
    ids = _identities(f)
    if typ == "person":
        extra["identities"] = ids or None
    else:
        extra["refs"] = ids or None
    extra["updated"] = iso(f.get("updated_at"))
    for k in f:
        if k not in ENTITY_KEPT:
            dropped.add(f"entity.{k}")
    desc = f.get("description")
    body = desc.strip() if isinstance(desc, str) and desc.strip() else f"{name.strip()}: a {raw} (from Qmemory)."
    return Entry(
        key=_key(rec.id),
        title=name.strip(),
        body=body,
        type=typ,
        created=iso(f.get("created_at")),
        source=source,
        extra=extra,
    )


def qmemory_entries(records: list[Record], source: str) -> tuple[list[Entry], list[str], list[str]]:
    """The entries of a Qmemory export (its records, in order), the problems found, and what no note keeps."""
    from ..core.surql import Rid

    dropped = Dropped()
    errors: list[str] = []
    latest: dict[Rid, Record] = {}
    for rec in records:  # a later statement about the same record replaces the earlier one
        latest.pop(rec.id, None)
        if not rec.deleted:
            latest[rec.id] = rec
    entries: dict[Rid, Entry] = {}
    names: dict[Rid, str] = {}
    edges: list[Record] = []
    for rec in latest.values():
        if rec.source is not None:
            edges.append(rec)
        elif rec.id.table == "memory":
            e = _memory(rec, source, dropped, errors)
            if e is not None:
                entries[rec.id] = e
        elif rec.id.table == "entity":
            e = _entity(rec, source, dropped)
            if e is not None:
                entries[rec.id] = e
                names[rec.id] = e.title
        else:
            dropped.add(f"table {rec.id.table} records")
    links: dict[Rid, list[dict[str, Any]]] = {}

    def add_link(src: Rid, dst: Rid, typ: Any, reason: Any) -> None:
        entry = link(entry_id(_key(dst)), typ, reason)
        mine = links.setdefault(src, [])
        if not any(x["to"] == entry["to"] and x["type"] == entry["type"] for x in mine):
            mine.append(entry)

    def supersede(newer: Rid, older: Rid) -> None:
        if newer not in entries or older not in entries or newer == older:
            dropped.add("version edge to a record not in the export")
            return
        if entries[older].extra.get("status") == "forgotten":
            entries[older].extra["status"] = "archived"
        if entries[newer].extra.get("supersedes") == entry_id(_key(older)):
            return  # both the field and the edge say it
        if "supersedes" in entries[newer].extra:
            add_link(newer, older, "supersedes", None)
        else:
            entries[newer].extra["supersedes"] = entry_id(_key(older))

    def mention(memory: Rid, entity: Rid) -> None:
        e = entries.get(memory)
        if e is not None and memory.table == "memory" and entity in names and names[entity] not in e.entities:
            e.entities.append(names[entity])

    for rid in list(entries):
        prev = latest[rid].fields.get("prev_version")
        if rid.table == "memory" and prev is not None and not isinstance(prev, Rid):
            dropped.add("memory.prev_version that is not a record id")
        elif rid.table == "memory" and prev is not None:
            supersede(rid, prev)
        person = latest[rid].fields.get("source_person")
        if rid.table == "memory" and person is not None and person in entries:
            add_link(rid, person, "source_person", None)
            mention(rid, person)
    for edge in edges:
        assert edge.source is not None and edge.target is not None
        src, dst = edge.source, edge.target
        if edge.id.table in VERSION_EDGES:
            supersede(src, dst)
            continue
        if edge.id.table != "relates":
            dropped.add(f"table {edge.id.table} edges")
            continue
        if src not in entries or dst not in entries:
            kinds = {src.table, dst.table} - set(NOTE_TABLES)
            what = "/".join(sorted(kinds)) if kinds else "record not in the export"
            dropped.add(f"relates edge to a {what}")
            continue
        f = edge.fields
        typ = f.get("relationship_type") or f.get("type") or "related"
        add_link(src, dst, typ, f.get("reason"))
        mention(src, dst)
        mention(dst, src)
        if str(typ).lower() == "has_identity" and entries[src].type == "person":
            ids = entries[src].extra.get("identities") or []
            more = [i for i in _identities(latest[dst].fields) if i not in ids]
            entries[src].extra["identities"] = ids + more or None
        for k in ("confidence", "created_by"):
            if f.get(k) is not None:
                dropped.add(f"relates.{k}")
    for src, items in links.items():
        entries[src].extra["links"] = items
    return list(entries.values()), errors, dropped.lines()
