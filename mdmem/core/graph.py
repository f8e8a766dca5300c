"""Pure note graph: typed edges resolved from catalogue rows, neighbours, shortest
paths, causal chains, timelines and exports.

No I/O here: ``build_graph`` takes the rows ``Catalog.graph_rows`` reads, and ``connect.py``
caches the result per index change, so warm graph queries never touch SQLite. The ``Graph`` is
the adjacency API other code (graph-aware ranking) can reuse: ``edges``, ``neighbors``,
``causes``/``effects``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .links import normalize_ref
from .mentions import ProseNames
from .note import iso_to_timestamp
from .refs import EXTERNAL, IdentityClash, classify, mention_key, node_key, person_index, site_target
from .targets import LinkResolver

ENTITY = "entity:"  # node-key prefix of entity nodes (note keys are paths ending in .md)
ATTACHMENT = "attachment"  # the kind of a node that is a non-markdown file (its key is its path)
ABOUT = "about"  # note → entity it is about (from ``entities``)
MENTIONS = "mentions"  # body [[wikilinks]] and markdown links
CITES = "cites"  # note → an external thing it references (``refs:``, a URL in the body), or a person by e-mail
EXTERNAL_KIND = "external"  # the kind of a node that is a URL, e-mail address, ticket, DOI, …
VIRTUAL = (ENTITY, EXTERNAL)  # key prefixes of nodes that are no file: never a search result, always visible
PERSON_IDENTITY = "person identity"  # how a link or reference that names a person's identity was resolved
SITE_URL = "site url"  # how a link to one of the vault's own published pages (``[site]``) was resolved
NAME_RANK = {"id": 0, "path": 1, "stem": 2, "title": 3, "heading": 3, "alias": 4}  # as Vault.resolve

# Causal edge types and their direction. "X caused_by Y": Y is the cause (the edge points from the
# effect to its cause). "X led_to Y": X is the cause. ``supersedes`` points at the older version,
# which came first. Types are compared after ``edge_type`` normalisation.
CAUSE_TO_EFFECT = frozenset(
    {
        "led_to",
        "leads_to",
        "causes",
        "caused",
        "enables",
        "enabled",
        "triggers",
        "triggered",
        "motivates",
        "motivated",
        "prompted",
        "results_in",
        "resulted_in",
        "blocks",
        "required_by",
        "explains",
    }
)
EFFECT_TO_CAUSE = frozenset(
    {
        "caused_by",
        "because",
        "because_of",
        "due_to",
        "reason",
        "result_of",
        "motivated_by",
        "triggered_by",
        "prompted_by",
        "informed_by",
        "justified_by",
        "driven_by",
        "explained_by",
        "follows_from",
        "derived_from",
        "based_on",
        "depends_on",
        "requires",
        "needs",
        "blocked_by",
        "supersedes",
    }
)
CAUSAL_TYPES = CAUSE_TO_EFFECT | EFFECT_TO_CAUSE

# Scores in a causal answer, relative to the best match (1.0). For a why-question the cause is the
# answer, so a direct cause ties with the match it explains and is listed first; effects rank lower.
CAUSE_WEIGHT = 1.0
# Preconditions and predecessors explain less than a direct cause ("caused_by" beats "depends_on").
WEAK_CAUSAL = frozenset(
    {
        "depends_on",
        "requires",
        "needs",
        "blocked_by",
        "enables",
        "enabled",
        "blocks",
        "required_by",
        "supersedes",
        "based_on",
        "derived_from",
        "informed_by",
    }
)
WEAK_WEIGHT = 0.9
EFFECT_WEIGHT = 0.5
HOP_DECAY = 0.8
_ROLE_ORDER = {"cause": 0, "match": 1, "effect": 2}


def edge_type(raw: str) -> str:
    """Canonical edge type: lower case, spaces and dashes as underscores ("Caused-by" → caused_by)."""
    return re.sub(r"[\s\-]+", "_", raw.strip()).casefold() or "related"


def entity_norm(name: str) -> str:
    """Canonical entity name: case-folded, inner whitespace collapsed."""
    return " ".join(name.split()).casefold()


class Node(NamedTuple):
    """A note (key: its path) or an entity named in ``entities`` that no note is titled after.

    Node, Edge and Step are named tuples: immutable like the cached graph they live in, and
    ~4x cheaper to create than frozen dataclasses (a 10k-note graph has ~50k edges)."""

    key: str
    id: str
    title: str
    type: str = "note"
    kind: str = "note"  # note | entity | attachment (a non-markdown file a link names) | external
    status: str = "active"
    date: float | None = None  # when it happened: authored, else created, else the index date
    snoozed_until: str | None = None  # the visibility fields, so default filters need no SQL
    valid_from: str | None = None
    valid_until: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.key if self.kind in ("note", ATTACHMENT) else None,
            "title": self.title,
            "type": self.type,
            "kind": self.kind,
            "status": self.status,
        }


class Edge(NamedTuple):
    """A typed edge from a note; ``dst`` is None when the target matches no note (dangling)."""

    src: str
    dst: str | None
    type: str
    target: str  # as written in the note
    reason: str | None = None
    label: str | None = None
    heading: str | None = None
    candidates: tuple[str, ...] = ()  # all files a shared name matched (dst is one of them)
    how: str = ""  # how the target was found (``LinkResolver``): "path", "name, same folder", …
    property: str | None = None  # the frontmatter property a property link was written in


class Step(NamedTuple):
    """One node reached by a walk: how far, from which node, over which edge.

    ``direction`` is "out" when ``parent -edge-> node`` and "in" when ``node -edge-> parent``.
    """

    node: str
    depth: int
    parent: str | None = None
    edge: Edge | None = None
    direction: str = ""


@dataclass(slots=True)
class CausalHit:
    """A note in a causal answer: a match, or a cause/effect reached from one."""

    node: str
    score: float
    role: str  # match | cause | effect
    depth: int
    seed: str
    chain: list[Step] = field(default_factory=list)  # seed first, then each hop to ``node``


class Graph:
    """Notes, entity nodes and typed edges, with outgoing and incoming adjacency lists."""

    __slots__ = (
        "nodes",
        "out",
        "inc",
        "dangling",
        "_names",
        "_entities",
        "resolver",
        "people",
        "clashes",
        "prose",
        "ambiguous",
    )

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, list[Edge]] = {}
        self.inc: dict[str, list[Edge]] = {}
        self.dangling: list[Edge] = []
        self._names: dict[str, list[tuple[str, str]]] = {}
        self._entities: dict[str, str] = {}  # entity_norm → node key (an entity node or a note)
        self.resolver: LinkResolver | None = None
        self.people: dict[str, str] = {}  # identity key (``refs.identity_keys``) → person note
        self.clashes: list[IdentityClash] = []  # identities two person notes claim alike
        self.prose: ProseNames = ProseNames()  # the forms people are named by in prose (``mentions``)
        self.ambiguous: dict[str, list[str]] = {}  # note → the names of several people its prose writes

    # -- lookups -------------------------------------------------------------------------------

    def resolve(self, ref: str, src: str | None = None) -> tuple[str | None, tuple[str, ...]]:
        """The note (or attachment) a link target written in ``src`` names, as Obsidian resolves
        it (``LinkResolver``), and every candidate when several shared the name."""
        dst, _how, cands = self._resolver().resolve(ref, normalize_ref(ref), src)
        return dst, cands

    def _resolver(self) -> LinkResolver:
        if self.resolver is None:  # build_graph sets it; a hand-made Graph gets one here
            self.resolver = LinkResolver(
                ((n, p, k) for n, items in self._names.items() for p, k in items), (), self.nodes
            )
        return self.resolver

    def _pick(self, cands: list[tuple[str, str]]) -> tuple[str | None, tuple[str, ...]]:
        """Of notes sharing a title or alias (an entity's name): the best kind of name, then the
        active version of a note, then the first by path (all candidates returned when unsure)."""
        if len(cands) == 1:
            return cands[0][0], ()
        best = min(NAME_RANK.get(k, 9) for _, k in cands)
        paths = sorted({p for p, k in cands if NAME_RANK.get(k, 9) == best})
        if len(paths) == 1:
            return paths[0], ()
        # Versions of one note share a title: the active one is meant (as in Vault.resolve).
        active = [p for p in paths if p in self.nodes and self.nodes[p].status == "active"]
        if len(active) == 1:
            return active[0], ()
        return (active or paths)[0], tuple(paths)

    def entity(self, name: str) -> str | None:
        """The node an entity name stands for (a person it names, a note titled/aliased so, or an entity node)."""
        return self.person(name) or self._entities.get(entity_norm(name))

    def person(self, name: str) -> str | None:
        """The person note one of whose identities ``name`` is (a name, e-mail address, handle, …)."""
        return self.people.get(mention_key(name)) if self.people else None

    def external(self, written: str) -> str | None:
        """The node of an external thing (URL, e-mail, ticket, …) as any note may write it, if cited."""
        kv = classify(written)
        key = node_key(*kv) if kv is not None else None
        return key if key in self.nodes else None

    def named(self, name: str) -> list[str]:
        """Notes whose title or an alias is ``name`` (case-insensitive)."""
        return sorted({p for p, k in self._names.get(normalize_ref(name), ()) if k in ("title", "heading", "alias")})

    def title(self, key: str) -> str:
        node = self.nodes.get(key)
        return node.title if node else key

    # -- adjacency -----------------------------------------------------------------------------

    def edges(
        self, key: str, direction: str = "both", types: frozenset[str] | None = None, skip: frozenset[str] = frozenset()
    ) -> Iterator[tuple[Edge, str, str]]:
        """(edge, other node, "out"|"in") for each resolved edge at ``key`` (no self-loops);
        only edges of ``types`` if given, never edges of ``skip``."""
        if direction in ("both", "out"):
            for e in self.out.get(key, ()):
                if e.dst is not None and e.dst != key and (types is None or e.type in types) and e.type not in skip:
                    yield e, e.dst, "out"
        if direction in ("both", "in"):
            for e in self.inc.get(key, ()):
                if e.src != key and (types is None or e.type in types) and e.type not in skip:
                    yield e, e.src, "in"

    def neighbors(
        self,
        start: str,
        depth: int = 1,
        *,
        types: frozenset[str] | None = None,
        skip: frozenset[str] = frozenset(),
        direction: str = "both",
        allow: Callable[[str], bool] | None = None,
        limit: int | None = None,
    ) -> list[Step]:
        """Breadth-first walk from ``start`` up to ``depth`` hops (``start`` itself excluded)."""
        seen = {start}
        frontier = [start]
        found: list[Step] = []
        for d in range(1, depth + 1):
            nxt: list[str] = []
            for key in frontier:
                for e, other, way in self.edges(key, direction, types, skip):
                    if other in seen or (allow is not None and not allow(other)):
                        continue
                    seen.add(other)
                    found.append(Step(other, d, key, e, way))
                    nxt.append(other)
                    if limit is not None and len(found) >= limit:
                        return found
            frontier = nxt
            if not frontier:
                break
        return found

    def shortest_path(
        self, a: str, b: str, *, types: frozenset[str] | None = None, max_depth: int | None = None
    ) -> list[Step] | None:
        """Fewest hops from ``a`` to ``b`` ignoring edge direction (each step keeps its own);
        ``[Step(a, 0)]`` when a == b, None when they are not connected (within ``max_depth``).

        Breadth-first from both ends, a whole level of the smaller frontier at a time, so two
        far-apart notes in a 10k-note vault meet after touching a few hundred nodes, not all."""
        if a == b:
            return [Step(a, 0)]
        # node → (depth from its end, previous node, edge, direction seen from the previous node)
        seen: tuple[dict[str, tuple[int, str | None, Edge | None, str]], ...] = (
            {a: (0, None, None, "")},
            {b: (0, None, None, "")},
        )
        frontier = ([a], [b])
        depths = [0, 0]
        while frontier[0] and frontier[1]:
            if max_depth is not None and depths[0] + depths[1] >= max_depth:
                return None
            side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
            mine, theirs = seen[side], seen[1 - side]
            depths[side] += 1
            nxt: list[str] = []
            meet: list[str] = []
            for key in frontier[side]:
                for e, other, way in self.edges(key, "both", types):
                    if other in mine:
                        continue
                    mine[other] = (depths[side], key, e, way)
                    nxt.append(other)
                    if other in theirs:
                        meet.append(other)
            if meet:  # the whole level is done, so the shortest meeting point is among these
                m = min(meet, key=lambda k: (seen[0][k][0] + seen[1][k][0], k))
                return self._join(m, seen[0], seen[1])
            frontier = (nxt, frontier[1]) if side == 0 else (frontier[0], nxt)
        return None

    @staticmethod
    def _join(m: str, from_a: dict[str, Any], from_b: dict[str, Any]) -> list[Step]:
        """The path a → m → b from both searches' back-pointers."""
        left = [m]
        while from_a[left[-1]][1] is not None:
            left.append(from_a[left[-1]][1])
        left.reverse()  # a … m
        steps = [Step(left[0], 0)]
        for i, key in enumerate(left[1:], 1):
            _, prev, e, way = from_a[key]
            steps.append(Step(key, i, prev, e, way))
        cur = m
        while from_b[cur][1] is not None:
            _, nxt, e, way = from_b[cur]  # found from ``nxt``: ``way`` is as seen from it
            steps.append(Step(nxt, len(steps), cur, e, "in" if way == "out" else "out"))
            cur = nxt
        return steps

    def causes(self, key: str) -> Iterator[tuple[Edge, str, str]]:
        """(edge, cause, direction) for each note ``key`` is caused by / depends on / supersedes."""
        for e in self.out.get(key, ()):
            if e.dst is not None and e.dst != key and e.type in EFFECT_TO_CAUSE:
                yield e, e.dst, "out"
        for e in self.inc.get(key, ()):
            if e.src != key and e.type in CAUSE_TO_EFFECT:
                yield e, e.src, "in"

    def effects(self, key: str) -> Iterator[tuple[Edge, str, str]]:
        """(edge, effect, direction) for each note that ``key`` caused, enabled or was replaced by."""
        for e in self.inc.get(key, ()):
            if e.src != key and e.type in EFFECT_TO_CAUSE:
                yield e, e.src, "in"
        for e in self.out.get(key, ()):
            if e.dst is not None and e.dst != key and e.type in CAUSE_TO_EFFECT:
                yield e, e.dst, "out"

    def causal(
        self, seeds: dict[str, float], depth: int = 3, *, allow: Callable[[str], bool] | None = None
    ) -> list[CausalHit]:
        """The seeds (scored matches) with their causes and effects up to ``depth`` hops each way,
        best first. Scores are relative to the best seed; a node reached twice keeps its best."""
        if not seeds:
            return []
        top = max(seeds.values()) or 1.0
        best: dict[str, CausalHit] = {}

        def offer(hit: CausalHit) -> None:
            old = best.get(hit.node)
            if old is None or (hit.score, -_ROLE_ORDER[hit.role]) > (old.score, -_ROLE_ORDER[old.role]):
                best[hit.node] = hit

        for seed, raw in seeds.items():
            s = raw / top
            offer(CausalHit(seed, s, "match", 0, seed, [Step(seed, 0)]))
            for role, walk, weight in (("cause", self.causes, CAUSE_WEIGHT), ("effect", self.effects, EFFECT_WEIGHT)):
                chains = {seed: [Step(seed, 0)]}
                frontier = [seed]
                for d in range(1, depth + 1):
                    nxt = []
                    for key in frontier:
                        for e, other, way in walk(key):
                            if other in chains or (allow is not None and not allow(other)):
                                continue
                            chains[other] = [*chains[key], Step(other, d, key, e, way)]
                            nxt.append(other)
                            w = weight * (WEAK_WEIGHT if e.type in WEAK_CAUSAL else 1.0)
                            offer(CausalHit(other, s * w * HOP_DECAY ** (d - 1), role, d, seed, chains[other]))
                    frontier = nxt
        return sorted(best.values(), key=lambda h: (-h.score, _ROLE_ORDER[h.role], h.depth, h.node))

    def stats(self) -> dict[str, int]:
        notes = sum(1 for n in self.nodes.values() if n.kind == "note")
        external = sum(1 for n in self.nodes.values() if n.kind == EXTERNAL_KIND)
        return {
            "notes": notes,
            "entities": len(self.nodes) - notes - external,
            "external": external,
            "edges": sum(len(v) for v in self.out.values()) - len(self.dangling),
            "dangling": len(self.dangling),
        }


# -- building ------------------------------------------------------------------------------------

NoteRow = tuple[Any, ...]
LinkRow = tuple[Any, ...]


def build_graph(
    notes: Iterable[NoteRow],
    names: Iterable[tuple[str, str, str]],
    links: Iterable[LinkRow],
    attachments: Iterable[str] = (),
    refs: Iterable[tuple[str, str, str, str, str]] = (),
    identities: Iterable[tuple[str, str, int]] = (),
    sites: tuple[tuple[str, str], ...] = (),
) -> Graph:
    """The graph from catalogue rows.

    notes: (path, id, title, type, status, entities JSON, aliases JSON, date, created, authored
    [, snoozed_until, valid_from, valid_until]); names: (norm, path, kind);
    links: (src, target, type, label, heading, reason, target_norm[, property]); attachments: file paths;
    refs: (src, kind, value, written, origin); identities of person notes: (path, key, strength).

    A person's identity resolves an entity, a link that names no file and an e-mail (or handle,
    id, URL) reference to the person's note; a URL under one of the vault's ``sites``
    ((URL prefix, folder): the vault is published there) is a link to the note it shows; any other
    reference is an external node.
    """
    g = Graph()
    entity_lists: list[tuple[str, list[str]]] = []
    for row in notes:
        path = row[0]
        g.nodes[path] = note_node(row)
        ents = json_list(row[5])
        if ents:
            entity_lists.append((path, ents))
    for norm, path, kind in names:
        g._names.setdefault(norm, []).append((path, kind))
    resolver = g.resolver = LinkResolver(
        ((n, p, k) for n, items in g._names.items() for p, k in items), attachments, g.nodes
    )
    g.people, g.clashes = person_index(row for row in identities if row[0] in g.nodes)
    people = g.people
    # Many links share a target and a handful of types: the resolver caches each target's lookup.
    # (This loop is most of a cold graph command at 10k notes, hence the local names.)
    types: dict[str, str] = {}
    nodes, out, inc, dangling, resolve = g.nodes, g.out, g.inc, g.dangling, resolver.resolve
    for src, target, typ, label, heading, reason, norm, *rest in links:
        if src not in nodes:
            continue
        dst, how, cands = resolve(target, norm, src)
        if dst is None and people:
            dst = people.get(mention_key(target))
            how = PERSON_IDENTITY if dst is not None else how
        if dst is not None and dst not in nodes:
            name = dst.rpartition("/")[2]
            nodes[dst] = Node(dst, dst, name, ATTACHMENT, ATTACHMENT)
        t = types.get(typ)
        if t is None:
            t = types[typ] = edge_type(typ)
        e = Edge(src, dst, t, target, reason, label, heading, cands, how, rest[0] if rest else None)
        if src in out:
            out[src].append(e)
        else:
            out[src] = [e]
        if dst is None:
            dangling.append(e)
        elif dst in inc:
            inc[dst].append(e)
        else:
            inc[dst] = [e]
    for src, ents in entity_lists:
        seen: set[str] = set()
        for name in ents:
            en = entity_norm(name)
            if not en or en in seen:
                continue
            seen.add(en)
            key = _entity_node(g, name, en)
            if key != src:
                _add(g, Edge(src, key, ABOUT, name))
    if g.dangling and g._entities:
        _to_entities(g)
    for src, kind, value, written, origin in refs:
        if src not in nodes:
            continue
        page = site_target(value, sites) if sites and kind == "url" else None
        if page is not None:
            dst, how, cands = resolve(page, normalize_ref(page), src)
            if dst is not None and dst in nodes and nodes[dst].kind == "note":
                if dst != src:
                    _add(g, Edge(src, dst, MENTIONS, written, candidates=cands, how=f"{SITE_URL}, {how}"))
                continue
        dst = people.get(value) if kind in ("email", "handle", "id", "url") else None
        if dst is None:
            dst = node_key(kind, value)
            if dst not in nodes:
                nodes[dst] = Node(dst, dst, value, kind, EXTERNAL_KIND)
        if dst != src:
            _add(g, Edge(src, dst, CITES, written, how=origin))
    return g


def note_node(row: NoteRow) -> Node:
    """A note's node from its ``build_graph`` row."""
    path, nid, title, typ, status, _entities, _aliases, date, created, authored = row[:10]
    when = iso_to_timestamp(authored) if authored else None
    if when is None and created:
        when = iso_to_timestamp(created)
    return Node(path, nid, title, typ, "note", status, when if when is not None else date, *row[10:13])


def _entity_node(g: Graph, name: str, en: str) -> str:
    """The node an entity name points to: a note titled or aliased so, else an entity node."""
    key = g._entities.get(en)
    if key is not None:
        return key
    key = g.person(name)
    if key is not None:
        g._entities[en] = key
        return key
    norm = normalize_ref(name)
    cands = [(p, k) for p, k in g._names.get(norm, ()) if k in ("title", "heading", "alias")] if norm == en else []
    if cands:
        key = g._pick(cands)[0]
    if key is None:
        key = ENTITY + en
        g.nodes[key] = Node(key, ENTITY + " ".join(name.split()), " ".join(name.split()), "entity", "entity")
    g._entities[en] = key
    return key


def _to_entities(g: Graph) -> None:
    """A link that names no file but an entity some note is about (``link NOTE Railway --type
    depends_on``) is an edge to the entity's node."""
    left = []
    for e in g.dangling:
        key = g._entities.get(entity_norm(e.target))
        if key is None or key == e.src or e.type == MENTIONS:  # a [[link]] in the body stays unresolved
            left.append(e)
            continue
        moved = Edge(e.src, key, e.type, e.target, e.reason, e.label, e.heading, e.candidates, "entity")
        edges = g.out[e.src]
        edges[edges.index(e)] = moved
        g.inc.setdefault(key, []).append(moved)
    g.dangling[:] = left


def _add(g: Graph, e: Edge) -> None:
    g.out.setdefault(e.src, []).append(e)
    if e.dst is None:
        g.dangling.append(e)
    else:
        g.inc.setdefault(e.dst, []).append(e)


def json_list(raw: str | None) -> list[str]:
    if not raw or raw == "[]":
        return []
    try:
        v = json.loads(raw)
    except ValueError:
        return []
    return [str(x) for x in v] if isinstance(v, list) else []


# -- timeline ------------------------------------------------------------------------------------


def timeline(nodes: Iterable[Node], anchor: str, before: int, after: int) -> tuple[list[Node], list[Node]]:
    """The ``before`` notes just earlier than ``anchor`` and the ``after`` notes just later
    (oldest first), among ``nodes``; undated notes are left out."""
    dated = sorted((n for n in nodes if n.date is not None and n.kind == "note"), key=lambda n: (n.date, n.key))
    idx = next((i for i, n in enumerate(dated) if n.key == anchor), None)
    if idx is None:
        return [], []
    return dated[max(0, idx - before) : idx], dated[idx + 1 : idx + 1 + after]


# -- export --------------------------------------------------------------------------------------


def export_data(
    g: Graph,
    *,
    types: frozenset[str] | None = None,
    entities: bool = True,
    external: bool = True,
    keep: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Nodes and edges as JSON-ready data; dangling targets become nodes of kind "missing"."""
    nodes: dict[str, dict[str, Any]] = {}
    for key, n in g.nodes.items():
        if (n.kind == "entity" and not entities) or (n.kind == EXTERNAL_KIND and not external):
            continue
        if n.kind == "note" and keep is not None and not keep(key):
            continue
        nodes[key] = {"key": key, **n.to_dict()}
    edges = []
    for src in sorted(g.out):
        if src not in nodes:
            continue
        for e in g.out[src]:
            if types is not None and e.type not in types:
                continue
            dst = e.dst
            if dst is None:
                dst = "missing:" + normalize_ref(e.target)
                nodes.setdefault(
                    dst,
                    {
                        "key": dst,
                        "id": dst,
                        "path": None,
                        "title": e.target,
                        "type": "missing",
                        "kind": "missing",
                        "status": "missing",
                    },
                )
            elif dst not in nodes or dst == src:
                continue
            edges.append({"source": src, "target": dst, "type": e.type, "reason": e.reason, "written": e.target})
    return {"nodes": list(nodes.values()), "edges": edges}


def to_dot(data: dict[str, Any]) -> str:
    """Graphviz DOT of ``export_data``: notes as boxes, entities as ellipses, dangling dashed."""
    shape = {"note": "box", "entity": "ellipse", "missing": "box", EXTERNAL_KIND: "hexagon"}
    lines = [
        "digraph mdmem {",
        "  rankdir=LR;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n in data["nodes"]:
        attrs = [f"label={_dot_str(n['title'])}", f"shape={shape.get(n['kind'], 'box')}"]
        if n["kind"] == "missing":
            attrs.append("style=dashed")
        elif n["status"] != "active":
            attrs.append('color="gray"')
        if n["kind"] == "note":
            attrs.append(f"tooltip={_dot_str(n['id'] + ' · ' + (n['path'] or ''))}")
        lines.append(f"  {_dot_str(n['key'])} [{', '.join(attrs)}];")
    for e in data["edges"]:
        attrs = [f"label={_dot_str(e['type'])}"]
        if e["type"] in CAUSAL_TYPES:
            attrs.append('color="firebrick"')
        if e["reason"]:
            attrs.append(f"tooltip={_dot_str(e['reason'])}")
        lines.append(f"  {_dot_str(e['source'])} -> {_dot_str(e['target'])} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "") + '"'
