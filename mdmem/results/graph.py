"""Graph answers (links, backlinks, neighbors, path, why, timeline, entity): nodes, edges and walks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import FLAT, Answer, Result


@dataclass(frozen=True, slots=True)
class GraphNode(Result):
    """A note or an entity of the graph (``graph_view.graph_node``)."""

    id: str
    path: str | None  # None for an entity
    title: str
    type: str = "note"
    kind: str = "note"  # note | entity | attachment | external (its type: url, email, ticket, doi, path, …)
    status: str = "active"  # "unindexed": a file the index has not seen yet


def flat(node: GraphNode, **extra: Any) -> dict[str, Any]:
    """A node's fields, then ``extra``: how a neighbour, a why result or a timeline item is written."""
    return {**node.to_dict(), **extra}


@dataclass(frozen=True, slots=True)
class GraphEdge(Result):
    """A typed edge as stored (``from_`` → ``to``), with both ends named (``graph_view.graph_edge``)."""

    from_: GraphNode
    type: str
    to: GraphNode | None  # None: the target matches no note (dangling)
    written: str  # the target as the note wrote it
    reason: str | None = None
    heading: str | None = None  # left out when empty, as are the three below
    ambiguous: list[str] | None = None  # every note an ambiguous target names
    dangling: bool | None = None  # ``links`` says it for each edge
    direction: str | None = None  # a walk's step: "out" (it went from → to) or "in"
    # ``links``/``backlinks`` rows: one per linked note and type, with how often the note links
    # it, the first line that does, and how the target was found (``targets.LinkResolver``)
    count: int | None = None
    context: str | None = None
    how: str | None = None

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "from": self.from_.to_dict(),
            "type": self.type,
            "to": self.to.to_dict() if self.to is not None else None,
            "written": self.written,
            "reason": self.reason,
        }
        if self.heading:
            d["heading"] = self.heading
        if self.ambiguous:
            d["ambiguous"] = list(self.ambiguous)
        if self.dangling is not None:
            d["dangling"] = self.dangling
        if self.direction is not None:
            d["direction"] = self.direction
        for name in ("count", "context", "how"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        return d


@dataclass(frozen=True, slots=True)
class LinksAnswer(Answer):
    """Edges out of a note (``links``)."""

    note: GraphNode
    links: list[GraphEdge] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"note": self.note.to_dict(), "count": len(self.links), "links": [e.to_dict() for e in self.links]}


@dataclass(frozen=True, slots=True)
class BacklinksAnswer(Answer):
    """Edges into a note or an entity from other notes (``backlinks``)."""

    note: GraphNode
    backlinks: list[GraphEdge] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {
            "note": self.note.to_dict(),
            "count": len(self.backlinks),
            "backlinks": [e.to_dict() for e in self.backlinks],
        }


@dataclass(frozen=True, slots=True)
class Neighbor(Result):
    """A node some hops away and the step that reached it."""

    node: GraphNode = field(metadata=FLAT)
    distance: int
    via: GraphEdge

    def data(self) -> dict[str, Any]:
        return flat(self.node, distance=self.distance, via=self.via.to_dict())


@dataclass(frozen=True, slots=True)
class NeighborsAnswer(Answer):
    """Notes and entities within ``depth`` hops of a note, nearest first (``neighbors``)."""

    note: GraphNode
    depth: int
    neighbors: list[Neighbor] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {
            "note": self.note.to_dict(),
            "depth": self.depth,
            "count": len(self.neighbors),
            "neighbors": [n.to_dict() for n in self.neighbors],
        }


@dataclass(frozen=True, slots=True)
class PathAnswer(Answer):
    """The fewest hops between two nodes (``path``); ``message`` says why there is none."""

    from_: GraphNode
    to: GraphNode
    found: bool
    length: int | None = None
    steps: list[GraphEdge] = field(default_factory=list)
    message: str | None = None  # left out when None

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "from": self.from_.to_dict(),
            "to": self.to.to_dict(),
            "found": self.found,
            "length": self.length,
            "steps": [s.to_dict() for s in self.steps],
        }
        if self.message is not None:
            d["message"] = self.message
        return d


@dataclass(frozen=True, slots=True)
class WhyItem(Result):
    """A match, or a cause or effect of one, with the chain of edges from the match to it."""

    node: GraphNode = field(metadata=FLAT)
    score: float
    role: str  # match | cause | effect
    hops: int
    match: GraphNode
    chain: list[GraphEdge] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return flat(
            self.node,
            score=self.score,
            role=self.role,
            hops=self.hops,
            match=self.match.to_dict(),
            chain=[c.to_dict() for c in self.chain],
        )


@dataclass(frozen=True, slots=True)
class WhyAnswer(Answer):
    """Why something is so: the best matches with their causes and effects (``why``)."""

    query: str
    matches: str  # how the matches were found: bm25, hybrid, given, …
    results: list[WhyItem] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "matches": self.matches,
            "count": len(self.results),
            "results": [r.to_dict() for r in self.results],
        }


@dataclass(frozen=True, slots=True)
class TimelineItem(Result):
    """A node and its date."""

    node: GraphNode = field(metadata=FLAT)
    date: str | None

    def data(self) -> dict[str, Any]:
        return flat(self.node, date=self.date)


@dataclass(frozen=True, slots=True)
class TimelineAnswer(Answer):
    """The notes just before and after a note in time (``timeline``)."""

    anchor: TimelineItem
    from_query: bool  # the anchor is the best match for a query, not a note named
    scope: str  # related | all
    before: list[TimelineItem] = field(default_factory=list)
    after: list[TimelineItem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EntityLink(Result):
    """A note about an entity, or linking to its note, and the edge type that says so."""

    node: GraphNode = field(metadata=FLAT)
    via: str
    reason: str | None = None

    def data(self) -> dict[str, Any]:
        return flat(self.node, via=self.via, reason=self.reason)


@dataclass(frozen=True, slots=True)
class EntityMention(Result):
    """A note whose text mentions one of an entity's names."""

    node: GraphNode = field(metadata=FLAT)
    via: str
    snippet: str

    def data(self) -> dict[str, Any]:
        return flat(self.node, via=self.via, snippet=self.snippet)


@dataclass(frozen=True, slots=True)
class EntityAnswer(Answer):
    """Everything about an entity under any of its names (``entity``)."""

    name: str
    names: list[str] = field(default_factory=list)
    notes: list[GraphNode] = field(default_factory=list)  # its own note(s)
    about: list[EntityLink] = field(default_factory=list)
    linked: list[EntityLink] = field(default_factory=list)
    mentions: list[EntityMention] = field(default_factory=list)
