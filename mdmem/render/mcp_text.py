"""MCP text: each tool's text for the model, and its structured content (``to_dict()`` or a selection of it)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .lines import (
    Table,
    commit_suffix,
    dated_line,
    edge_line,
    fields_text,
    hints_line,
    language_line,
    node_line,
    nothing_relevant,
    reason_suffix,
    revision_line,
    similar_detail,
    skipped_line,
    strip_marks,
    unmentioned_line,
)

if TYPE_CHECKING:
    from ..results.changes import AddReport, Change, Correction, History, NoteAt, NoteDiff
    from ..results.graph import NeighborsAnswer, TimelineAnswer, WhyAnswer
    from ..results.notes import NoteBatch, NoteText
    from ..results.reports import VaultStatus, VaultStatuses
    from ..results.review import ReviewQueue
    from ..results.search import Hit, Hits, MemoryContext, Profile, SimilarNotes


_mcp = Table("MCP")


def mcp(result: Any, **options: Any) -> tuple[str, dict[str, Any]]:
    """A tool's text and structured content for ``result``: its own MCP text where it has one, else the
    CLI's text and its whole ``to_dict()``. An answer's warnings (say, a commit git refused) go in both."""
    if _mcp.has(result):
        text, data = _mcp(result, **options)
    else:
        from .cli_text import cli

        text, data = cli(result).out.rstrip("\n"), result.to_dict()
    warnings = list(getattr(result, "warnings", ()))
    if warnings:
        sep = "\n" if type(result).__name__ == "Hits" else " "  # after a list of hits, on a line of its own
        text += f"{sep}Warning: " + " ".join(warnings)
        data = {**data, "warnings": warnings}
    return text, data


def pick(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The items of ``d`` under ``keys``, in that order (those it has)."""
    return {k: d[k] for k in keys if k in d}


# -- retrieval and notes ---------------------------------------------------------------------------------


def compact_hit(hit: Hit) -> dict[str, Any]:
    """The fields an agent needs to decide whether to open a note: a selection of ``hit.to_dict()``."""
    d = hit.to_dict()
    # Not the title again: the hit's line shows it (a snippet of display text starts with the heading's words).
    key = re.sub(r"^(?:#+\s*)?" + re.escape(d["title"]) + r"(?:\s+|$)", "", strip_marks(d["snippet"]))
    return {**pick(d, ("id", "type", "title")), "key": key, **pick(d, ("score", "path", "date", "links", "vault"))}


@_mcp.register
def _hits(hits: Hits, *, tool: str = "search") -> tuple[str, dict[str, Any]]:
    """``tool``: the tool's name, which the text starts with."""
    d = hits.to_dict()
    items = [compact_hit(h) for h in hits]
    data: dict[str, Any] = {"query": d["query"], "count": d["count"], "results": items}
    info = hits.info
    if "listed" in info:  # no query: the filters chose them, newest first
        data["listed"] = info["listed"]
        what = ", ".join(f"{k} {v}" for k, v in info["listed"].items()) or "no filter"
        head = f"{tool}: {len(items)} note(s), newest first ({what})"
        if not items:
            return head + ". No note passes these filters.", data
    else:
        head = f"{tool}: {len(items)} note(s) for {hits.query!r}"
    if info.get("intent"):
        data["intent"], data["route"] = info["intent"], info.get("route")
        head += f" (intent {info['intent']}: {info.get('route')})"
    if info.get("skipped"):
        data["skipped"] = info["skipped"]
        head += " (" + "; ".join(skipped_line(s).removeprefix("mdmem: ") for s in info["skipped"]) + ")"
    if info.get("language"):
        data["language"] = info["language"]
        head += " (" + language_line(info).removeprefix("note: ") + ")"
    if not items:
        return head + ". Nothing matches: try other words, search for exact identifiers, or vsearch for meaning.", data
    if info.get("relevant") is False:
        data["relevant"], data["unknown"] = False, info.get("unknown", [])
        return f"{head}. {nothing_relevant(info)} (The weak matches are in the structured result.)", data
    lines = [head + ". Whole note: get(id)."]
    if info.get("unknown"):
        data["unknown"] = info["unknown"]
        lines.append(unmentioned_line(info))
    for i, (h, it) in enumerate(zip(hits, items, strict=True), 1):
        rank = f"dated {(it.get('date') or 'never')[:10]}" if "listed" in info else f"score {it['score']:.3g}"
        lines.append(f"{i}. [{it['type']}] {it['title']} (id {it['id']}, {rank})")
        if it["key"]:
            lines.append(f"   {it['key']}")
        if h.links:
            lines.append("   links: " + hints_line(h.links))
    return "\n".join(lines), data


@_mcp.register
def _note_text(note: NoteText) -> tuple[str, dict[str, Any]]:
    return f"{note.note.path} (id {note.note.id})\n{note.text}", note.to_dict()


@_mcp.register
def _note_batch(batch: NoteBatch) -> tuple[str, dict[str, Any]]:
    from ..results.notes import MissingNote  # loaded already: NoteBatch lives beside it

    parts = [
        f"=== {i.ref}: {i.error}" if isinstance(i, MissingNote) else f"=== {i.note.path} (id {i.note.id})\n{i.text}"
        for i in batch.items
    ]
    return "\n\n".join(parts), batch.to_dict()


# -- writing and lifecycle -------------------------------------------------------------------------------


def compact_add(r: AddReport) -> dict[str, Any]:
    """``r.to_dict()`` with each suggested link cut to id, title and similarity (no shell command for an agent)."""
    d = r.to_dict()
    if r.written:
        d["suggested_links"] = [pick(s, ("id", "title", "similarity")) for s in d["suggested_links"]]
    return d


@_mcp.register
def _add(r: AddReport) -> tuple[str, dict[str, Any]]:
    if r.updated is not None:
        u = r.updated
        text = (
            f"UPDATE: {r.check.reason}; the new text went into it ({u.path}, id {u.id})"
            + commit_suffix(u.commit, ", ")
            + ". Add with force=true for a new note instead."
            if u.changed
            else f"UPDATE: {u.title} (id {u.id}) holds this text already; nothing written."
        )
    elif r.added is not None:
        text = f"{r.check.decision}: wrote {r.added.path} (id {r.added.id})" + commit_suffix(r.added.commit, ", ") + "."
        if r.suggested_links:
            text += (
                " Similar notes it may relate to (link it if one explains or depends on it): "
                + "; ".join(f"{sg.title} (id {sg.id})" for sg in r.suggested_links)
                + "."
            )
    else:
        m = r.check.matches[0]
        text = f"{r.check.decision}: not written — {r.check.reason}. Existing: {m.title} (id {m.id}). " + (
            "Call correct on it to change it, or add with force=true." if r.check.decision == "UPDATE" else ""
        )
    for m in r.check.contradicts:
        text += (
            f" It may contradict {m.title} (id {m.id}): {'; '.join(m.evidence)}. If the new note replaces it, "
            f"call supersede with new={r.added.id if r.added else 'the new id'} and old={m.id}; else leave both."
        )
    if r.redacted:
        text += f" {r.redacted} secret(s) redacted."
    return text, compact_add(r)


@_mcp.register
def _correct(c: Correction) -> tuple[str, dict[str, Any]]:
    return f"corrected {c.old.path} → {c.new.path} (id {c.new.id}); the old note is archived.", c.to_dict()


@_mcp.register
def _change(c: Change, *, link_type: str | None = None) -> tuple[str, dict[str, Any]]:
    """``link_type``: the type as the link tool was given it (its text repeats that, not the stored type)."""
    if c.action == "link":
        title = (c.fields.get("to") or {}).get("title", "?")
        if not c.changed:
            return f"{c.path} already links to {title}; nothing changed.", c.to_dict()
        typ = link_type if link_type is not None else (c.fields.get("links") or {}).get("type", "about")
        return f"linked {c.path} -{typ}-> {title}" + commit_suffix(c.commit, ", "), c.to_dict()
    if not c.changed:
        return f"{c.path}: already so, nothing changed.", c.to_dict()
    return f"{c.action}: {c.path} ({fields_text(c.fields)})" + commit_suffix(c.commit, ", "), c.to_dict()


@_mcp.register
def _history(h: History) -> tuple[str, dict[str, Any]]:
    lines = []
    for v in h.versions:
        lines.append(f"{'*' if v.current else ' '} {v.id}  {v.title}  [{v.status}]  {v.path}")
        for c in v.git_log:
            lines.append(f"    {c.commit[:8]} {c.date[:10]} {c.subject}")
            if c.diff:
                lines.append(c.diff.rstrip("\n"))
        if v.truncated:
            lines.append(f"    … the newest {len(v.git_log)} of {v.commits} commits")
    return "\n".join(lines), h.to_dict()


@_mcp.register
def _note_diff(d: NoteDiff) -> tuple[str, dict[str, Any]]:
    head = f"{d.path}: {revision_line(d.old)} → {revision_line(d.new, 'the file')} (+{d.added} -{d.removed})"
    return head + ("\n" + d.diff.rstrip("\n") if d.diff else "; no change"), d.to_dict()


@_mcp.register
def _note_at(n: NoteAt) -> tuple[str, dict[str, Any]]:
    return f"{n.revision.path} at {revision_line(n.revision)}:\n{n.text}", n.to_dict()


@_mcp.register
def _similar(a: SimilarNotes) -> tuple[str, dict[str, Any]]:
    lines = [
        f"{len(a.results)} note(s) like {a.title!r}"
        + ("" if a.vectors else " (by words; no vectors yet)")
        + ". Unlinked ones may deserve a link."
    ]
    lines += [f"{i}. {n.title} [{n.type}] id {n.id} {similar_detail(n)}" for i, n in enumerate(a.results, 1)]
    return "\n".join(lines), a.to_dict()


@_mcp.register
def _profile(pr: Profile) -> tuple[str, dict[str, Any]]:
    more = f"\n({pr.omitted} more did not fit; a larger budget shows them.)" if pr.omitted else ""
    return (pr.text.rstrip("\n") or "The vault has no standing facts or recent context yet.") + more, pr.to_dict()


@_mcp.register
def _context(c: MemoryContext) -> tuple[str, dict[str, Any]]:
    return (c.text.rstrip("\n") or "Nothing in the vault for this prompt."), c.to_dict()


# -- the graph and the vault -----------------------------------------------------------------------------


@_mcp.register
def _why(a: WhyAnswer) -> tuple[str, dict[str, Any]]:
    lines = [f"why: {len(a.results)} note(s) for {a.query!r}. Whole note: get(id)."]
    for i, r in enumerate(a.results, 1):
        lines.append(f"{i}. {node_line(r.node)} — {r.role}")
        lines += [f"   {edge_line(c)}{reason_suffix(c.reason)}" for c in r.chain]
    return "\n".join(lines), a.to_dict()


@_mcp.register
def _timeline(a: TimelineAnswer, *, ref: str = "") -> tuple[str, dict[str, Any]]:
    """``ref``: the note or query as given (named when the anchor is a query's best match)."""
    lines = [f"best match for {ref!r}:"] if a.from_query else []
    lines += [dated_line(" ", n) for n in a.before] + [dated_line("▶", a.anchor)]
    lines += [dated_line(" ", n) for n in a.after]
    return "\n".join(lines), a.to_dict()


@_mcp.register
def _neighbors(a: NeighborsAnswer) -> tuple[str, dict[str, Any]]:
    lines = [f"{node_line(a.note)}: {len(a.neighbors)} neighbour(s) within {a.depth} hop(s)"]
    for n in a.neighbors:
        lines.append(f"{n.distance}  {node_line(n.node)}\n   via {edge_line(n.via)}{reason_suffix(n.via.reason)}")
    return "\n".join(lines), a.to_dict()


def compact_status(s: VaultStatus) -> dict[str, Any]:
    """A selection of ``s.to_dict()``: pending files as counts, no index details."""
    d = s.to_dict()
    return {
        **pick(d, ("vault", "notes", "types", "fresh")),
        "pending": {k: len(v) for k, v in d["pending"].items()},
        **pick(d, ("vectors", "problems", "git", "catching_up", "conflicts")),
    }


@_mcp.register
def _statuses(s: VaultStatuses) -> tuple[str, dict[str, Any]]:
    parts = {name: _status(one) for name, one in s.vaults.items()}
    text = "\n\n".join(f"{name}:\n{t}" for name, (t, _) in parts.items())
    data: dict[str, Any] = {"vaults": {name: d for name, (_, d) in parts.items()}}
    if s.skipped:
        data["skipped"] = s.skipped
    return text, data


@_mcp.register
def _status(s: VaultStatus) -> tuple[str, dict[str, Any]]:
    d = compact_status(s)
    vec = s.vectors
    lines = [
        f"{s.notes} notes in {s.vault} (" + ", ".join(f"{k} {v}" for k, v in s.types.items()) + ")",
        "index: "
        + (
            f"catching up in the background ({s.catching_up})"
            if s.catching_up
            else "up to date"
            if s.fresh
            else f"stale ({sum(d['pending'].values())} file change(s) not indexed)"
        ),
        "vectors: "
        + (
            vec.error
            if vec.error is not None
            else f"{vec.chunks_with_vectors}/{vec.chunks} chunks ({vec.model})"
            + (
                f"; embedding {vec.running['done']}/{vec.running['total']} new chunks now"
                if vec.running
                else f", embedding {vec.embedding}"
                if vec.embedding and not vec.complete
                else ""
            )
        ),
    ]
    for copy, note in s.conflicts.items():  # both versions are notes: search finds either
        lines.append(f"conflict: {note} has another version in {copy} (a person settles it: mdmem resolve)")
    if s.problems:
        lines.append(f"problems: {s.problems} (run mdmem doctor)")
    return "\n".join(lines), d


@_mcp.register
def _review(r: ReviewQueue) -> tuple[str, dict[str, Any]]:
    if not r.items:
        return "Nothing to review.", r.to_dict()
    lines = [f"{r.total} item(s) to review" + (f", the first {len(r.items)}:" if r.total > len(r.items) else ":")]
    for i, it in enumerate(r.items, 1):
        notes = "; ".join(f"{n.title} (id {n.id}, {n.type}{', ' + n.date if n.date else ''})" for n in it.notes)
        lines.append(f"{i}. {it.kind}: {it.summary}. Notes: {notes}.")
        if it.evidence:
            lines.append("   Evidence: " + "; ".join(it.evidence) + ".")
        lines.append("   Settle with: " + " | ".join(it.commands) + f" (key {it.key})")
    lines.append("Settle an item only when its evidence convinces you; dismiss it otherwise.")
    return "\n".join(lines), r.to_dict()
