"""Writing links: link and unlink (edits of a note's frontmatter ``links`` through
``lifecycle.edit_note``), and ``save``: add after the duplicate check, with link suggestions (from ``similar``).

The reads of the graph are ``connect``; this is the part that writes and searches.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.errors import MdmemError, NoteNotFound
from ..core.graph import MENTIONS, Graph, edge_type
from ..core.linkedit import add_link_entry, remove_link_entries
from ..core.note import set_fields, to_link, yaml_scalar
from ..results.changes import AddReport, Change, LinkSuggestion
from .graph_view import graph_node, load_graph
from .lifecycle import add_checked, edit_note

if TYPE_CHECKING:
    from ..core.note import Note
    from ..index.semantic import Semantic
    from ..index.store import IndexStore

# A note is suggested as a link when it holds at least this share of the new note's words (and two
# of them): on the gold vault 0.2 kept the related notes and dropped one-shared-word matches.
SUGGEST_MIN_SHARE = 0.2
SUGGEST_MIN_COSINE = 0.8  # or when their vectors are this close


# -- link / unlink --------------------------------------------------------------------------------


def link(
    store: IndexStore,
    a: str,
    b: str,
    type: str = "related",
    reason: str | None = None,
    *,
    entity: bool = False,
    commit: bool | None = None,
) -> Change:
    """Add ``{to: B, type: T, reason: R}`` to A's frontmatter ``links`` (B by its id when it has one).
    A B that is no note (or ``entity``) is an entity: it joins A's ``entities`` (``_about_entity``); a
    person's identity links to the person's note. Secrets in the reason are redacted (every caller)."""
    from ..core.redact import redact_text

    typ = edge_type(type)
    if not re.fullmatch(r"[\w.:/]+", typ):
        raise MdmemError(f"--type {type!r} is not a usable edge type; use a word like depends_on or caused_by.")
    reason = redact_text(reason.strip()) if reason and reason.strip() else None

    def edit(text: str, src: str, g: Graph, note: Note) -> tuple[str, dict[str, Any]]:
        try:
            dst = None if entity else store.resolve(b)
        except NoteNotFound as e:
            # not a note: a person's identity ("@dana") links to the person's note; any other name is an
            # entity, a node of its own that the note is about (its ``entities``), unless it is so close
            # to a note's name that it is more likely that note misspelt
            dst = g.person(b)
            if dst is None and e.suggestions and g.entity(b) is None:
                raise MdmemError(
                    f"{e} If {b!r} is an entity (a system, product or person) rather than a note, "
                    f"link it with --entity."
                ) from None
        if dst is None:
            return _about_entity(text, src, note, b, typ, reason, g)
        if dst == src:
            raise MdmemError("A note cannot link to itself; name two different notes.")
        target = store.files.read_note(dst)[0]
        to = target.id if target.has_id else f"[[{target.path.removesuffix('.md')}]]"
        entry: dict[str, Any] = {"to": to, "type": typ}
        if reason:
            entry["reason"] = reason
        text2, existing = _without_entries(text, _entry_matcher(g, src, dst, b, typ))
        if existing and (reason is None or any(_reason(it) == reason for it in existing)):
            return text, {"to": graph_node(g, dst).to_dict()}  # already linked so
        # A new reason replaces the old entry for the same target and type.
        return add_link_entry(text2, yaml_scalar(entry)), {"links": entry, "to": graph_node(g, dst).to_dict()}

    return _edit_links(
        store,
        a,
        edit,
        "link",
        commit,
        lambda src, f: f'mdmem: link "{_title(store, src)}" -{typ if "links" in f else "about"}-> "{f["to"]["title"]}"',
    )


def unlink(store: IndexStore, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> Change:
    """Remove A's frontmatter links to B (of one type, or all); body mentions are left alone."""
    typ = edge_type(type) if type else None

    def edit(text: str, src: str, g: Graph, note: Note) -> tuple[str, dict[str, Any]]:
        try:
            dst: str | None = store.resolve(b)
        except NoteNotFound:
            dst = None  # a dangling target: match it as written
        same = _entry_matcher(g, src, dst, b, typ)
        text2, removed, _ = remove_link_entries(text, same)
        if not removed:
            return text, {}
        mentions = sum(1 for e in g.out.get(src, ()) if e.type == MENTIONS and dst is not None and e.dst == dst)
        return text2, {
            "removed": removed,
            "to": graph_node(g, dst).to_dict() if dst else {"title": b},
            "body_mentions_left": mentions,
        }

    return _edit_links(
        store,
        a,
        edit,
        "unlink",
        commit,
        lambda src, f: f'mdmem: unlink "{_title(store, src)}" from "{f["to"]["title"]}"',
    )


ABOUT_TYPES = ("related", "about")  # a link of these types to an entity is the note's ``entities`` alone


def _about_entity(
    text: str, src: str, note: Note, name: str, typ: str, reason: str | None, g: Graph
) -> tuple[str, dict[str, Any]]:
    """Link a note to an entity that is no note: the name joins its ``entities`` (an ``about`` edge to
    the entity's node) unless it is there in any spelling. A ``--type`` of its own also writes a
    ``links`` entry to the name, which the graph resolves to that node."""
    from ..core.graph import ENTITY, entity_norm

    name = " ".join(name.split())
    if not name or name.startswith(("[[", "http://", "https://")):
        raise NoteNotFound(name, [])
    raw = note.meta.get("entities")
    have = [str(x) for x in raw] if isinstance(raw, list) else [str(raw)] if raw else []
    fields: dict[str, Any] = {}
    out = text
    if entity_norm(name) not in {entity_norm(x) for x in have}:
        out = set_fields(out, {"entities": [*have, name]})
        fields["entities"] = [*have, name]
    if typ not in ABOUT_TYPES:
        entry: dict[str, Any] = {"to": name, "type": typ, **({"reason": reason} if reason else {})}
        out2, existing = _without_entries(out, _entry_matcher(g, src, None, name, typ))
        if not existing or (reason is not None and all(_reason(it) != reason for it in existing)):
            out = add_link_entry(out2, yaml_scalar(entry))
            fields["links"] = entry
    to = {"id": ENTITY + name, "path": None, "title": name, "type": "entity", "kind": "entity", "status": "active"}
    return out, ({**fields, "to": to} if fields else {"to": to})


def _reason(item: Any) -> str | None:
    r = item.get("reason") if isinstance(item, dict) else None
    return str(r).strip() if r is not None and str(r).strip() else None


def _without_entries(text: str, same: Callable[[Any], bool]) -> tuple[str, list[Any]]:
    """The text without the ``links:`` entries ``same`` picks, and those entries (a new reason replaces them)."""
    existing: list[Any] = []

    def found(item: Any) -> bool:
        if same(item):
            existing.append(item)
            return True
        return False

    return remove_link_entries(text, found)[0], existing


def _entry_matcher(g: Graph, src: str, dst: str | None, written: str, typ: str | None) -> Any:
    """Whether a ``links`` entry (as YAML read it) points at ``dst`` (or at ``written``) with ``typ``."""
    from ..core.links import normalize_ref

    def same(item: Any) -> bool:
        ln = to_link(item)
        if ln is None or (typ is not None and edge_type(ln.type) != typ):
            return False
        if dst is not None and g.resolve(ln.target, src)[0] == dst:
            return True
        return normalize_ref(ln.target) == normalize_ref(written)

    return same


def _title(store: IndexStore, path: str) -> str:
    with store.reading(notice=False) as idx:  # the note was indexed just now, by its edit
        row = idx.row(path)
    return str(row["title"]) if row else path


def _edit_links(store: IndexStore, a: str, edit: Any, action: str, commit: bool | None, message: Any) -> Change:
    """Rewrite A's ``links`` (``lifecycle.edit_note``: writer lock, atomic write, reindex, commit)."""
    return edit_note(
        store,
        a,
        lambda text, src, note: edit(text, src, load_graph(store), note),
        action,
        commit=commit,
        message=lambda src, title, fields: message(src, fields),
    )


# -- suggestions and checks ------------------------------------------------------------------------


def suggest_links(store: IndexStore, sem: Semantic | None, ref: str, limit: int = 3) -> list[LinkSuggestion]:
    """Existing notes like ``ref`` (``similar.similar``) that it is not linked with yet and that share
    enough of its words, or are very close in meaning, each with the ``mdmem link`` command that
    would connect them. Nothing is written."""
    from .similar import similar

    found = similar(store, sem, ref, limit + 5, store.filters(), fresh=False)  # add must not embed
    out: list[LinkSuggestion] = []
    for s in found.results:
        close = s.cosine is not None and s.cosine >= SUGGEST_MIN_COSINE
        if s.linked or not (close or (s.words >= 2 and s.shared >= SUGGEST_MIN_SHARE)):
            continue
        out.append(
            LinkSuggestion(
                s.id,
                s.path,
                s.title,
                s.shared,
                f"mdmem link {shlex.quote(found.id)} {shlex.quote(s.id)} --type related",
            )
        )
        if len(out) >= limit:
            break
    return out


def save(
    store: IndexStore, sem: Semantic, title: str, body: str, *, force: bool = False, dedupe: bool = True, **fields: Any
) -> AddReport:
    """``add`` after the duplicate check (``lifecycle.add_checked``), with the links the new note may
    want (``suggest_links``, never written)."""
    check, done = add_checked(store, sem, title, body, force=force, dedupe=dedupe, **fields)
    if isinstance(done, Change):
        return AddReport(check, updated=done)
    if done is None:
        return AddReport(check)
    against = {m.path for m in check.contradicts}  # named already, with the command that settles them
    return AddReport(check, done, [s for s in suggest_links(store, sem, done.path) if s.path not in against])
