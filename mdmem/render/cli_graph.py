"""CLI text of the graph's answers: links, backlinks, neighbours, paths, causes, timelines, entities."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.targets import names_attachment
from .cli_base import CLI_TABLE, Printer
from .lines import bold, dated_line, edge_line, node_line, reason_suffix

if TYPE_CHECKING:
    from ..results.graph import (
        BacklinksAnswer,
        EntityAnswer,
        GraphEdge,
        LinksAnswer,
        NeighborsAnswer,
        PathAnswer,
        TimelineAnswer,
        WhyAnswer,
    )


@CLI_TABLE.register
def _links(a: LinksAnswer, p: Printer, *, explain: bool = False) -> None:
    p(node_line(a.note))
    if not a.links:
        p(f"  no links. Add one: mdmem link {a.note.id} OTHER --type TYPE")
    for e in a.links:
        if e.to is not None:
            target = node_line(e.to)
        elif names_attachment(e.written):
            target = f"{e.written!r}  MISSING ATTACHMENT: no such file in the vault"
        else:
            target = f"{e.written!r}  DANGLING: no note matches"
        p(f"  {e.type:<12} → {target}{_times(e.count)}{reason_suffix(e.reason)}")
        _row_details(e, p, explain)


@CLI_TABLE.register
def _backlinks(a: BacklinksAnswer, p: Printer, *, explain: bool = False) -> None:
    p(node_line(a.note))
    if not a.backlinks:
        p("  no backlinks.")
    for e in a.backlinks:
        p(f"  {e.type:<12} ← {node_line(e.from_)}{_times(e.count)}{reason_suffix(e.reason)}")
        _row_details(e, p, explain)


def _times(count: int | None) -> str:
    return f"  ×{count}" if count and count > 1 else ""


def _row_details(e: GraphEdge, p: Printer, explain: bool) -> None:
    """A links row's first context line; with ``explain``, how its target was found."""
    if e.context:
        p(f"{'':15}“{e.context}”")
    if explain:
        how = e.how or ("no file matches" if e.to is None else "?")
        also = f"; candidates: {', '.join(e.ambiguous)}" if e.ambiguous else ""
        p(f"{'':15}found by: {how} (written {e.written!r}){also}")


@CLI_TABLE.register
def _neighbors(a: NeighborsAnswer, p: Printer) -> None:
    p(f"{node_line(a.note)}: {len(a.neighbors)} neighbour(s) within {a.depth} hop(s)")
    for n in a.neighbors:
        p(f"  {n.distance}  {node_line(n.node)}")
        p(f"       via {edge_line(n.via)}{reason_suffix(n.via.reason)}")


@CLI_TABLE.register
def _path(a: PathAnswer, p: Printer) -> None:
    if not a.found:
        p(a.message or "")
        return
    p(f"{a.length} hop(s):")
    p(f"  {node_line(a.from_)}")
    for s in a.steps:
        if s.direction == "out":
            p(f"    -{s.type}->  {node_line(s.to)}{reason_suffix(s.reason)}")
        else:
            p(f"    <-{s.type}-  {node_line(s.from_)}{reason_suffix(s.reason)}")


@CLI_TABLE.register
def _why(a: WhyAnswer, p: Printer) -> None:
    if not a.results:
        p(f'No notes match {a.query!r}. Try other words, or "mdmem search WORDS".', err=True)
    for i, r in enumerate(a.results, 1):
        p(f"{i:>2}. {node_line(r.node)}  — {r.role}")
        for c in r.chain:
            p(f"      {edge_line(c)}{reason_suffix(c.reason)}")


@CLI_TABLE.register
def _timeline(a: TimelineAnswer, p: Printer, *, ref: str = "", color: bool = False) -> None:
    """``ref``: the note or query as given (named when the anchor is a query's best match)."""
    if a.from_query:
        p(f"best match for {ref!r}:")
    for n in a.before:
        p(dated_line(" ", n, local=True))
    p(bold(dated_line("▶", a.anchor, local=True), color))
    for n in a.after:
        p(dated_line(" ", n, local=True))
    if not a.before and not a.after:
        p("  (no related notes; try --all)")


@CLI_TABLE.register
def _entity(a: EntityAnswer, p: Printer) -> None:
    others = [n for n in a.names if n.casefold() != a.name.casefold()]
    p(a.name + (f"  (also: {', '.join(others)})" if others else ""))
    for node in a.notes:
        p(f"  {'note':<9} {node_line(node)}")
    for label, items in (("about", a.about), ("linked", a.linked)):
        for e in items:
            via = f"  via {e.via}" if label == "linked" else ""
            p(f"  {label:<9} {node_line(e.node)}{via}{reason_suffix(e.reason)}")
    for m in a.mentions:
        p(f"  {'mentions':<9} {node_line(m.node)}")
