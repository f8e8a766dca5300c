"""A ClawMem store as entries: one note per document, its relations, supersessions and invalidations as typed links.

What maps to what (docs/importing.md has the table): ``content_type`` → type (``deductive`` → fact);
``pinned``, ``snoozed_until``, ``confidence`` kept; ``active = 0`` → ``archived`` when ClawMem archived
it (``archived_at``), else ``forgotten`` (its file was removed); ``invalidated_at`` → ``valid_until``
and, on the invalidating note, a link of type ``invalidates``; ``superseded_by`` → ``supersedes`` on
the newer note; ``memory_relations`` → ``links`` (``causal`` → causes, ``supporting`` → supports,
``semantic`` → related, ``temporal`` → precedes, ``contradicts``), the reasoning ClawMem stored as
the reason; entity mentions → ``entities``. Each note's id comes from its collection and path, so a
re-run adds nothing. What has no place in a note is counted in the report's ``dropped``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .import_entries import Dropped, Entry, entry_id, iso, link, map_type, title_of, unit

if TYPE_CHECKING:
    from ..adapters.clawmem import ClawRelation, ClawStore

RELATION_TYPES = {
    "causal": "causes",  # ClawMem's causal inference links the cause (source) to its effect (target)
    "supporting": "supports",
    "semantic": "related",
    "temporal": "precedes",  # consecutive documents, the earlier first
    "entity": "shares_entity",
    "contradicts": "contradicts",
}
# Columns kept by no note, with ClawMem's defaults: another value in one of them is counted as dropped.
UNKEPT = {"review_by": None, "quality_score": 0.5, "access_count": 0, "memory_type": "semantic", "topic_key": None}
MAX_METADATA = 64 * 1024  # characters of a relation's metadata JSON read for its reason


def _tags(row: dict[str, Any]) -> list[str]:
    from ..core.text import slugify

    raw = row.get("tags")
    items: list[Any] = []
    if isinstance(raw, str) and raw.strip():
        try:
            loaded = json.loads(raw) if len(raw) <= MAX_METADATA else None
        except ValueError:
            loaded = None
        items = loaded if isinstance(loaded, list) else re.split(r"[,\s]+", raw)
    items += [row.get("domain"), row.get("workstream")]
    out: list[str] = []
    for t in items:
        s = slugify(str(t).lstrip("#")) if isinstance(t, (str, int)) and str(t).strip() else ""
        if s and s != "note" and s not in out:
            out.append(s)
    return out


def _reason(rel: ClawRelation) -> str | None:
    if not rel.metadata or len(rel.metadata) > MAX_METADATA:
        return None
    try:
        meta = json.loads(rel.metadata)
    except ValueError:
        return None
    if not isinstance(meta, dict):
        return None
    reason = meta.get("reasoning") or meta.get("reason")
    return reason if isinstance(reason, str) else None


def clawmem_entries(store: ClawStore, source: str) -> tuple[list[Entry], list[str]]:
    """The entries of a ClawMem store and what it held that no note keeps."""
    from ..core.note import split_frontmatter

    dropped = Dropped()
    ids: dict[int, str] = {}
    entries: dict[int, Entry] = {}
    for doc in store.documents:
        row = doc.row
        key = f"clawmem:{row.get('collection') or ''}/{row['path']}"
        body = split_frontmatter(doc.text)[1].strip() if doc.text else ""
        title = str(row.get("title") or "").strip() or title_of(body)
        typ, original = map_type(row.get("content_type"))
        extra: dict[str, Any] = {}
        if original:
            extra["original_type"] = original
        active = row.get("active", 1) not in (0, "0", False)
        if not active:
            extra["status"] = "archived" if row.get("archived_at") else "forgotten"
        for k, v in (("confidence", unit(row.get("confidence"))), ("snoozed_until", iso(row.get("snoozed_until")))):
            if v is not None:
                extra[k] = v
        extra["updated"] = iso(row.get("modified_at"))
        extra["authored"] = iso(row.get("authored_at"))
        if row.get("invalidated_at"):
            extra["valid_until"] = iso(row.get("invalidated_at"))
        if row.get("archived_at"):
            dropped.add("archived_at date (the note is archived)")
        for col, default in UNKEPT.items():
            if row.get(col) not in (None, "", default):
                dropped.add(f"documents.{col}")
        ids[doc.id] = entry_id(key)
        entries[doc.id] = Entry(
            key=key,
            title=title,
            title_chars=200,
            body=body or title,
            type=typ,
            created=iso(row.get("created_at")),
            tags=_tags(row),
            entities=list(doc.entities),
            pinned=row.get("pinned") not in (None, 0, "0", False),
            source=source,
            extra=extra,
        )
    links: dict[int, list[dict[str, Any]]] = {}

    def add_link(src: int, dst: int, typ: str, reason: str | None) -> None:
        if src == dst:
            return
        if src not in ids or dst not in ids:
            dropped.add("relation to a document not in the store")
            return
        entry = link(ids[dst], typ, reason)
        mine = links.setdefault(src, [])
        if not any(x["to"] == entry["to"] and x["type"] == entry["type"] for x in mine):
            mine.append(entry)

    for rel in store.relations:
        add_link(rel.source, rel.target, RELATION_TYPES.get(rel.type, rel.type), _reason(rel))
        if rel.weight is not None:
            dropped.add("relation weight")
    for doc in store.documents:
        newer, invalidator = doc.row.get("superseded_by"), doc.row.get("invalidated_by")
        if isinstance(newer, int) and newer in entries and newer != doc.id:
            if "supersedes" in entries[newer].extra:
                add_link(newer, doc.id, "supersedes", None)
            else:
                entries[newer].extra["supersedes"] = ids[doc.id]
        if isinstance(invalidator, int):
            add_link(invalidator, doc.id, "invalidates", "invalidated as contradicted in ClawMem")
    for src, items in links.items():
        entries[src].extra["links"] = items
    for table, n in store.other_rows.items():
        dropped.add(f"table {table} rows", n)
    return list(entries.values()), dropped.lines()
