"""The store's note graph as features read it: cached per index change, nodes and edges as results,
retrieval visibility on graph nodes, the connection hints hits carry, and the dangling links doctor reports.

The pure graph is ``graph.py``; this is its view of one store, read through its read door (``index.reading``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..adapters.config import site_urls
from ..core.errors import MdmemError, NoteNotFound
from ..core.graph import (
    ABOUT,
    ATTACHMENT,
    CAUSAL_TYPES,
    CITES,
    MENTIONS,
    VIRTUAL,
    Edge,
    Graph,
    Step,
    build_graph,
    edge_type,
)
from ..core.links import normalize_ref
from ..core.note import Problem
from ..core.targets import names_attachment
from ..results.graph import GraphEdge, GraphNode
from ..results.reports import DANGLING_LINK, MISSING_ATTACHMENT, Unwritten

if TYPE_CHECKING:
    from ..core.rank import Filters
    from ..index.reading import IndexRead
    from ..index.store import IndexStore
    from ..results.search import LinkHint


def load_graph(store: IndexStore, *, notice: bool = True) -> Graph:
    """The store's graph, rebuilt only when the catalogue changed since the last call (``notice``:
    as ``IndexStore.repair``)."""
    with store.reading(notice=notice) as idx:
        return graph_of(idx)


def graph_of(idx: IndexRead) -> Graph:
    """The graph of the index this read sees, rebuilt only when the catalogue changed since the last call."""
    cached = memoised_graph(idx)
    if cached is not None:
        return cached
    token = idx.rows_token()  # read before the rows: a write in between only costs a rebuild
    import gc

    # ~150k small tuples and no reference cycles: the cyclic GC would only rescan them (-30 %).
    enabled = gc.isenabled()
    gc.disable()
    try:
        graph = build_graph(*idx.graph_rows(), sites=site_urls(idx.config.extra))
    finally:
        if enabled:
            gc.enable()
    if any(n.type == "person" and n.kind == "note" for n in graph.nodes.values()):
        from .mentions import add_prose_mentions  # people named in prose: read only when there are people

        add_prose_mentions(idx, graph)
    idx.memoise("graph", token, graph)
    return graph


def memoised_graph(idx: IndexRead) -> Graph | None:
    """The graph ``load_graph`` keeps, if the catalogue has not changed since it was built."""
    graph: Graph | None = idx.memoised("graph")
    return graph


def node_key(store: IndexStore, graph: Graph, ref: str) -> str:
    """The node ``ref`` names: a note (id, path, stem, title, alias), else an entity name (a person's
    identity among them), else an external thing some note cites (a URL, e-mail address, ticket, …)."""
    try:
        return store.resolve(ref)
    except NoteNotFound:
        key = graph.entity(ref) or graph.external(ref)
        if key is not None:
            return key
        raise


def graph_node(graph: Graph, key: str) -> GraphNode:
    """The node as a result: a note or an entity (or a file on disk the index has not seen yet)."""
    node = graph.nodes.get(key)
    if node is None:
        return GraphNode(id=key.removesuffix(".md"), path=key, title=key, status="unindexed")
    return GraphNode(
        id=node.id,
        path=node.key if node.kind in ("note", ATTACHMENT) else None,
        title=node.title,
        type=node.type,
        kind=node.kind,
        status=node.status,
    )


def graph_edge(
    graph: Graph,
    e: Edge,
    *,
    dangling: bool | None = None,
    direction: str | None = None,
    count: int | None = None,
    context: str | None = None,
    how: str | None = None,
) -> GraphEdge:
    """An edge as stored (source → target), with both ends named; ``direction`` for a walk's step;
    ``count``, ``context`` and ``how`` for a ``links`` row."""
    return GraphEdge(
        from_=graph_node(graph, e.src),
        type=e.type,
        to=graph_node(graph, e.dst) if e.dst is not None else None,
        written=e.target,
        reason=e.reason,
        heading=e.heading or None,
        ambiguous=list(e.candidates) or None,
        dangling=dangling,
        direction=direction,
        count=count,
        context=context,
        how=how,
    )


def link_rows(store: IndexStore, graph: Graph, edges: list[Edge], *, into: bool = False) -> list[GraphEdge]:
    """``links``/``backlinks`` rows: one per linked note (or dangling target) and edge type, in the
    order first written, with the number of links and the first line in the linking note that
    has one (body links; a typed link's reason says why instead)."""
    groups: dict[tuple[str, str], list[Edge]] = {}
    for e in edges:
        other = e.src if into else (e.dst if e.dst is not None else "\0" + normalize_ref(e.target))
        groups.setdefault((other, e.type), []).append(e)
    bodies: dict[str, list[str]] = {}
    rows = []
    for group in groups.values():
        e = group[0]
        context = None
        if e.type == MENTIONS:
            if e.src not in bodies:
                try:
                    bodies[e.src] = store.files.body(e.src).splitlines()
                except (OSError, MdmemError):
                    bodies[e.src] = []
            context = _context_line(bodies[e.src], [x.target for x in group])
        how = e.how or ("entity" if e.type == ABOUT else None)
        rows.append(
            graph_edge(graph, e, dangling=None if into else e.dst is None, count=len(group), context=context, how=how)
        )
    return rows


def _context_line(lines: list[str], targets: list[str], width: int = 160) -> str | None:
    """The first line that links one of ``targets`` (``[[t``, ``](t``, URL-encoded or not), trimmed."""
    from urllib.parse import quote

    wanted = {
        f"{mark}{w}" for t in targets for w in (t.casefold(), quote(t).casefold()) if w for mark in ("[[", "](", "](<")
    }
    for line in lines:
        low = line.casefold()
        if any(w in low for w in wanted):
            text = " ".join(line.split())
            return text if len(text) <= width else text[: width - 1].rstrip() + "…"
    return None


def graph_step(graph: Graph, step: Step) -> GraphEdge:
    """A walk's step: the edge it took and the way it went along it."""
    assert step.edge is not None
    return graph_edge(graph, step.edge, direction=step.direction)


def connection_hints(store: IndexStore, paths: list[str], per_note: int = 3) -> dict[str, list[LinkHint]]:
    """A few typed neighbours of each note, for an agent to follow: causal links first, then other
    typed links, then entities and mentions, then what it cites; hidden notes (forgotten, snoozed, …) left out."""
    from ..results.search import LinkHint  # the search results' type: graph commands do not load them

    with store.reading() as idx:
        g = hints_graph(store, paths)
        visible = Visible(idx, store.filters(), g)

        def rank(item: tuple[Edge, str, str]) -> tuple[int, str, str]:
            e, other, _ = item
            group = 0 if e.type in CAUSAL_TYPES else 2 if e.type in (MENTIONS, ABOUT) else 3 if e.type == CITES else 1
            return group, e.type, other

        out: dict[str, list[LinkHint]] = {}
        for path in paths:
            seen: set[str] = set()
            hints: list[LinkHint] = []
            for e, other, way in sorted(g.edges(path), key=rank):
                if other in seen or not visible(other):
                    continue
                seen.add(other)
                node = graph_node(g, other)
                hints.append(
                    LinkHint(
                        type=e.type,
                        direction=way,
                        id=node.id,
                        title=node.title,
                        kind=node.kind,
                        reason=e.reason or None,
                    )
                )
                if len(hints) >= per_note:
                    break
            out[path] = hints
        return out


def hints_graph(store: IndexStore, paths: list[str]) -> Graph:
    """A graph with the edges of ``paths`` as the whole graph has them: the whole graph when a warm
    process keeps it, else only the part around them (``graph_near``: a cold ``query`` of a 50k-note
    vault would spend far longer building the whole one for three hits' hints)."""
    from .graph_near import near_graph

    with store.reading() as idx:
        g = memoised_graph(idx)
        if g is None and not site_urls(store.config.extra):  # links to the vault's site pages are references
            g = near_graph(idx, paths)  # the rows around the notes would miss: the whole graph then
            if g is not None and idx.has_people():
                from .mentions import add_prose_mentions

                add_prose_mentions(idx, g, paths)  # people the notes name in prose, as the whole graph has them
        return g if g is not None else graph_of(idx)


def edge_types(types: list[str] | tuple[str, ...] | None) -> frozenset[str] | None:
    return frozenset(edge_type(t) for t in types) if types else None


class Visible:
    """Whether a node passes retrieval filters (hidden notes out by default). Visibility alone is
    judged from the graph's nodes; other filters need catalogue rows, fetched lazily."""

    def __init__(self, idx: IndexRead, filters: Filters, graph: Graph | None = None) -> None:
        from dataclasses import replace

        self.idx = idx
        self.filters = filters
        self.cache: dict[str, bool] = {}
        only_visibility = replace(filters, visible_at=None, include=()).empty
        self.graph = graph if only_visibility else None
        self.vis = filters.visibility() if filters.visible_at is not None else None

    def prefetch(self, keys: list[str]) -> None:
        if self.graph is not None:
            return  # judged from the graph's nodes
        rows = self.idx.rows(k for k in keys if k not in self.cache and not k.startswith(VIRTUAL))
        for k in keys:
            if k not in self.cache and not k.startswith(VIRTUAL):
                row = rows.get(k)
                self.cache[k] = row is not None and self.filters.matches(row)

    def __call__(self, key: str) -> bool:
        if key.startswith(VIRTUAL):
            return True
        if self.graph is not None:
            if key not in self.graph.nodes:
                return False  # not indexed (yet): nothing to judge it by
            if self.vis is None:
                return True
            from ..core.memory import hidden_reason

            n = self.graph.nodes[key]
            if n.status == "active" and not (n.snoozed_until or n.valid_from or n.valid_until):
                return True
            return (
                hidden_reason(
                    {
                        "status": n.status,
                        "snoozed_until": n.snoozed_until,
                        "valid_from": n.valid_from,
                        "valid_until": n.valid_until,
                    },
                    self.vis,
                )
                is None
            )
        if key not in self.cache:
            self.prefetch([key])
        return self.cache[key]


def dangling(store: IndexStore, *, notice: bool = True) -> tuple[list[Problem], list[Unwritten]]:
    """The links that match no file: a missing attachment (a target with a file extension) and a
    typed ``links:`` or ``supersedes`` entry that matches no note are problems, one per note and
    target; a ``[[link]]`` in the body or a property to a name no note has is a note not written yet
    (Obsidian's way of planning one), reported apart. A name several files share is not a problem:
    it resolves as Obsidian resolves it (``links --explain`` shows the choice)."""
    from shlex import quote

    g = load_graph(store, notice=notice)
    found: dict[tuple[str, str, str], list[Edge]] = {}
    for src, edges in sorted(g.out.items()):
        for e in edges:
            if e.dst is None:
                fld = e.property or (
                    "body" if e.type == MENTIONS else "supersedes" if e.type == "supersedes" else "links"
                )
                found.setdefault((src, fld, normalize_ref(e.target)), []).append(e)
    out: list[Problem] = []
    unwritten: list[Unwritten] = []
    for (src, fld, _), edges in found.items():
        e = edges[0]
        times = f" ({len(edges)} links)" if len(edges) > 1 else ""
        name = e.target.rsplit("/", 1)[-1]
        if names_attachment(e.target):
            out.append(
                Problem(
                    src,
                    fld,
                    f"{MISSING_ATTACHMENT}: {e.target!r} is not in the vault{times}",
                    f"add the file {name!r} to the vault (any folder), or correct the link",
                )
            )
        elif e.property is not None or e.type == MENTIONS:
            unwritten.append(Unwritten(src, fld, e.target, len(edges)))
        else:
            fix = (
                f"create a note named {e.target!r}, correct the target, or remove it: "
                f"mdmem unlink {quote(src)} {quote(e.target)}"
            )
            out.append(Problem(src, fld, f"{DANGLING_LINK}: {e.type} {e.target!r} matches no note{times}", fix))
    return out, unwritten
