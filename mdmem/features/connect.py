"""Graph queries: links, backlinks, neighbors, path, why, timeline, entity, export, and a
note's external references and the notes citing one (refs, cites).

Reads over the store's graph (``graph_view``) and the pure ``graph`` module; matches for why,
timeline and entity come from the retrieval pipelines (``hybrid``), imported by those queries only
(``links`` and ``neighbors`` start faster without them). Writing links is ``linking``.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from ..core.errors import MdmemError, NoteNotFound
from ..core.graph import ABOUT, CITES, MENTIONS, VIRTUAL
from ..core.graph import timeline as order_timeline
from ..core.memory import WHY_MATCHES
from ..core.note import iso_from_timestamp
from ..results.graph import (
    BacklinksAnswer,
    EntityAnswer,
    EntityLink,
    EntityMention,
    LinksAnswer,
    Neighbor,
    NeighborsAnswer,
    PathAnswer,
    TimelineAnswer,
    TimelineItem,
    WhyAnswer,
    WhyItem,
)
from .graph_view import Visible, edge_types, graph_node, graph_of, graph_step, link_rows, load_graph, node_key

if TYPE_CHECKING:
    from ..index.reading import IndexRead
    from ..index.semantic import Semantic
    from ..index.store import IndexStore
    from ..results.refs import CitesAnswer, RefsAnswer

TIMELINE_RELATED_HITS = 5  # search hits for the anchor's title that join its related notes
TIMELINE_HUB_LIMIT = 12  # an entity with more notes than this is a hub, not a shared story
PERSON_REF_KINDS = ("email", "handle", "id", "url")  # references that may be a person's identity


# -- structure ------------------------------------------------------------------------------------


def links(store: IndexStore, ref: str) -> LinksAnswer:
    """Edges going out of a note: frontmatter links, body mentions, supersedes, entities."""
    g = load_graph(store)
    key = node_key(store, g, ref)
    return LinksAnswer(graph_node(g, key), link_rows(store, g, g.out.get(key, [])))


def backlinks(store: IndexStore, ref: str) -> BacklinksAnswer:
    """Edges coming into a note (or entity) from other notes."""
    g = load_graph(store)
    key = node_key(store, g, ref)
    return BacklinksAnswer(
        graph_node(g, key), link_rows(store, g, [e for e in g.inc.get(key, ()) if e.src != key], into=True)
    )


def neighbors(
    store: IndexStore,
    ref: str,
    depth: int = 1,
    *,
    types: list[str] | None = None,
    direction: str = "both",
    limit: int | None = None,
) -> NeighborsAnswer:
    """Notes and entities within ``depth`` hops, nearest first, each with the edge that reached it."""
    if depth < 1:
        raise MdmemError("--depth must be 1 or more.")
    g = load_graph(store)
    key = node_key(store, g, ref)
    steps = g.neighbors(key, depth, types=edge_types(types), direction=direction, limit=limit)
    return NeighborsAnswer(
        graph_node(g, key), depth, [Neighbor(graph_node(g, s.node), s.depth, graph_step(g, s)) for s in steps]
    )


def shortest_path(
    store: IndexStore, a: str, b: str, *, types: list[str] | None = None, max_depth: int | None = None
) -> PathAnswer:
    """The fewest hops between two notes, whatever the edges' directions."""
    g = load_graph(store)
    ka, kb = node_key(store, g, a), node_key(store, g, b)
    na, nb = graph_node(g, ka), graph_node(g, kb)
    steps = g.shortest_path(ka, kb, types=edge_types(types), max_depth=max_depth)
    if steps is not None:
        return PathAnswer(na, nb, True, len(steps) - 1, [graph_step(g, s) for s in steps[1:]])
    deg_a = sum(1 for _ in g.edges(ka))
    deg_b = sum(1 for _ in g.edges(kb))
    return PathAnswer(
        na,
        nb,
        False,
        message=(
            f"No path between {g.title(ka)!r} and {g.title(kb)!r}: they are not connected "
            f"({deg_a} and {deg_b} edge(s) of their own"
            + (f", within {max_depth} hops" if max_depth else "")
            + f'). Connect them with "mdmem link {shlex.quote(na.id)} {shlex.quote(nb.id)} --type TYPE".'
        ),
    )


# -- why -----------------------------------------------------------------------------------------


def _use_vectors(idx: IndexRead, vectors: bool | None) -> bool:
    if vectors is not None:
        return vectors
    done, _ = idx.coverage()
    return done > 0  # never load the model just for this when nothing is embedded yet


def _query(
    store: IndexStore, sem: Semantic | None, text: str, limit: int, filters: dict[str, Any], vectors: bool = True
) -> list[Any]:
    from . import hybrid

    return hybrid.query(store, sem if vectors else None, text, limit, store.filters(**filters))


def why(
    store: IndexStore,
    sem: Semantic | None,
    text: str,
    limit: int = 10,
    *,
    depth: int = 3,
    vectors: bool | None = None,
    seeds: list[Any] | None = None,
    filters: dict[str, Any] | None = None,
) -> WhyAnswer:
    """The notes that best match ``text`` with their causes (and effects) along causal edges."""
    from . import hybrid

    with store.reading() as idx:
        filters = filters or {}
        route = "hybrid" if vectors else "given"  # seeds from elsewhere: CLI --vectors asks mdmem serve
        if seeds is None:
            # BM25 finds the matches unless vectors are asked for: the causal edges, not the matcher,
            # bridge the gap to a cause in other words or another language (the gold why-questions
            # score the same either way), and in a big vault a hybrid query alone takes longer than a
            # why may cost (docs/benchmarks.md, "The graph").
            # With no BM25 match at all, the vectors (if the vault has them) get their turn.
            if vectors:
                seeds, route = _query(store, sem, text, WHY_MATCHES, filters), "hybrid"
            else:
                seeds, route = hybrid.search(store, text, WHY_MATCHES, store.filters(**filters)), "bm25"
                if not seeds and vectors is None and _use_vectors(idx, None):
                    seeds, route = _query(store, sem, text, WHY_MATCHES, filters), "hybrid (no BM25 match)"
        g = graph_of(idx)
        visible = Visible(idx, store.filters(**filters), g)
        scores: dict[str, float] = {}
        for h in seeds[:WHY_MATCHES]:
            scores[h.path] = max(scores.get(h.path, 0.0), float(h.score))
        hits = g.causal(scores, depth, allow=visible)[:limit]
        return WhyAnswer(
            text,
            route,
            [
                WhyItem(
                    graph_node(g, h.node),
                    round(h.score, 4),
                    h.role,
                    h.depth,
                    graph_node(g, h.seed),
                    [graph_step(g, s) for s in h.chain[1:]],
                )
                for h in hits
            ],
        )


# -- timeline ------------------------------------------------------------------------------------


def timeline(
    store: IndexStore,
    sem: Semantic | None,
    ref: str,
    window: int = 5,
    *,
    all_notes: bool = False,
    vectors: bool | None = None,
    filters: dict[str, Any] | None = None,
) -> TimelineAnswer:
    """The notes just before and after a note in time: among its related notes (graph neighbours
    within two hops and notes on the same subject), or among all notes with ``all_notes``."""
    from . import hybrid

    with store.reading() as idx:
        filters = filters or {}
        g = graph_of(idx)
        from_query = False
        try:
            anchor = store.resolve(ref)
        except NoteNotFound:
            hits = _query(store, sem, ref, 1, filters, vectors=_use_vectors(idx, vectors))
            if not hits:
                raise MdmemError(f'No note matches {ref!r}. Try other words, or "mdmem search {ref}".') from None
            anchor, from_query = hits[0].path, True
        visible = Visible(idx, store.filters(**filters), g)
        if all_notes:
            keys = [k for k, n in g.nodes.items() if n.kind == "note"]
        else:
            # Its story: links, mentions and versions within two hops, what it is about (or cites) and,
            # for entities (and external things) that are not hubs, the other notes about them (citing
            # them), then notes on the same subject.
            shared = frozenset({ABOUT, CITES})
            keys = [s.node for s in g.neighbors(anchor, 2, skip=shared)]
            for e0, ent, _ in g.edges(anchor, "out", shared):
                keys.append(ent)
                about = [e.src for e in g.inc.get(ent, ()) if e.type == e0.type]
                if len(about) <= TIMELINE_HUB_LIMIT:
                    keys += about
            title = g.nodes[anchor].title if anchor in g.nodes else ref
            hits = hybrid.search(store, title, TIMELINE_RELATED_HITS, store.filters(**filters))
            keys += [h.path for h in hits if h.score >= 0.5 * hits[0].score]  # same subject, not a shared word
            keys = [k for k in keys if not k.startswith(VIRTUAL)]
        visible.prefetch(keys)
        pool = [g.nodes[k] for k in dict.fromkeys(keys) if k in g.nodes and k != anchor and visible(k)]
        if anchor in g.nodes:
            pool.append(g.nodes[anchor])
        before, after = order_timeline(pool, anchor, window, window)

        def item(key: str) -> TimelineItem:
            node = g.nodes.get(key)
            return TimelineItem(graph_node(g, key), iso_from_timestamp(node.date) if node is not None else None)

        return TimelineAnswer(
            item(anchor),
            from_query,
            "all" if all_notes else "related",
            [item(n.key) for n in before],
            [item(n.key) for n in after],
        )


# -- entity ----------------------------------------------------------------------------------------


def entity(store: IndexStore, name: str, *, filters: dict[str, Any] | None = None, mentions: int = 10) -> EntityAnswer:
    """Everything about an entity: its own note, notes about it (``entities``) under any of its
    names, notes linking to its note, and notes whose text mentions one of its names."""
    from ..core.graph import entity_norm
    from . import hybrid

    with store.reading() as idx:
        filters = filters or {}
        g = graph_of(idx)
        visible = Visible(idx, store.filters(**filters), g)
        # Its own note is one titled or aliased so (not a file stem: "hotwire" is no note about Hotwire);
        # an id or path names one too.
        homes = g.named(name)
        key = g.entity(name)
        if key is not None and key not in homes:
            homes.append(key)
        if not homes:
            try:
                homes.append(store.resolve(name))
            except NoteNotFound:
                pass
        names: dict[str, None] = {}
        for h in homes:
            node = g.nodes.get(h)
            if node is not None:
                names[node.title] = None
            if node is not None and node.kind == "note":
                row = idx.row(h) or {}
                names.update({a: None for a in row.get("aliases", [])})
        # Other spellings that resolve to the same node (entities written as an alias of the note).
        for h in homes:
            for e in g.inc.get(h, ()):
                if e.type == ABOUT:
                    names.setdefault(e.target, None)
        names.setdefault(" ".join(name.split()), None)
        dedup: dict[str, str] = {}
        for n in names:
            dedup.setdefault(entity_norm(n), n)
        about: list[EntityLink] = []
        linked: list[EntityLink] = []
        seen = set(homes)
        for h in homes:
            for e in g.inc.get(h, ()):
                if e.src in seen or not visible(e.src):
                    continue
                seen.add(e.src)
                (about if e.type == ABOUT else linked).append(EntityLink(graph_node(g, e.src), e.type, e.reason))
        mentioned: list[EntityMention] = []
        for n in dedup.values():
            if len(mentioned) >= mentions:
                break
            pattern = re.compile(r"(?<!\w)" + re.escape(n) + r"(?!\w)", re.IGNORECASE)
            for hit in hybrid.search(store, n, mentions, store.filters(**filters)):
                if hit.path in seen:
                    continue
                try:
                    body = store.files.body(hit.path)
                except OSError:
                    continue
                if pattern.search(hit.title) or pattern.search(body):
                    seen.add(hit.path)
                    mentioned.append(EntityMention(graph_node(g, hit.path), MENTIONS, hit.snippet))
                if len(mentioned) >= mentions:
                    break
        if not homes and not mentioned:
            raise MdmemError(f'No note or entity is named {name!r}. Try "mdmem search {name}".')
        return EntityAnswer(
            name,
            sorted(dedup.values(), key=str.casefold),
            [graph_node(g, h) for h in homes if h in g.nodes and g.nodes[h].kind == "note" and visible(h)],
            about,
            linked,
            mentioned,
        )


# -- export ----------------------------------------------------------------------------------------


def export_graph(
    store: IndexStore,
    fmt: str = "json",
    *,
    types: list[str] | None = None,
    entities: bool = True,
    external: bool = True,
    filters: dict[str, Any] | None = None,
) -> str:
    """The graph as JSON, Graphviz DOT or a self-contained HTML page that draws it."""
    import json

    from ..core.graph import export_data, to_dot

    with store.reading() as idx:
        g = graph_of(idx)
        keep = None
        if filters:
            visible = Visible(idx, store.filters(**filters), g)
            visible.prefetch([k for k, n in g.nodes.items() if n.kind == "note"])
            keep = visible
        data = export_data(g, types=edge_types(types), entities=entities, external=external, keep=keep)
        # Tags are not in the cached graph (no graph query needs them); the HTML page filters by them.
        rows = idx.rows(n["key"] for n in data["nodes"] if n["kind"] == "note")
        for n in data["nodes"]:
            if n["key"] in rows:
                n["tags"] = rows[n["key"]].get("tags") or []
        if fmt == "json":
            return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        if fmt == "dot":
            return to_dot(data)
        if fmt == "html":
            from ..render.graph_html import to_html

            return to_html(data, title=f"mdmem graph — {store.root.name}")
        raise MdmemError(f"Unknown format {fmt!r}; use json, dot or html.")


# -- external references ----------------------------------------------------------------------------


def refs(store: IndexStore, ref: str) -> RefsAnswer:
    """A note's external references: its ``refs:`` and the URLs and e-mail addresses of its body,
    each with its kind, canonical value, as written, and the person it names (if any)."""
    from ..results.refs import RefItem, RefsAnswer

    with store.reading() as idx:
        g = graph_of(idx)
        path = store.resolve(ref)
        items = []
        for r in idx.refs_of(path):
            person = g.people.get(r["value"]) if r["kind"] in PERSON_REF_KINDS else None
            items.append(
                RefItem(
                    r["kind"],
                    r["value"],
                    r["written"],
                    r["origin"],
                    graph_node(g, person) if person is not None else None,
                )
            )
        return RefsAnswer(graph_node(g, path), items)


def cites(store: IndexStore, ref: str, *, filters: dict[str, Any] | None = None) -> CitesAnswer:
    """The notes that cite a URL, e-mail address, ticket, DOI or path, however each wrote it
    (``refs.classify``: scheme, ``www.``, trailing slash, fragment, case where it does not matter)."""
    from ..core.refs import classify
    from ..results.refs import Citation, CitesAnswer

    with store.reading() as idx:
        kv = classify(ref)
        if kv is None:
            raise MdmemError("Give a reference: a URL, e-mail address, ticket (PAY-1234), DOI or path.")
        rows = idx.citing(*kv)
        if not rows and kv[0] in ("path", "other"):  # "example.com/page" is a URL written without its scheme
            url = classify("https://" + ref.strip())
            if url is not None and url[0] == "url" and idx.citing(*url):
                kv, rows = url, idx.citing(*url)
        g = graph_of(idx)
        visible = Visible(idx, store.filters(**(filters or {})), g)
        visible.prefetch([r["path"] for r in rows])
        seen: set[str] = set()
        notes = []
        for r in rows:
            if r["path"] not in seen and visible(r["path"]):
                seen.add(r["path"])
                notes.append(Citation(graph_node(g, r["path"]), r["written"], r["origin"]))
        similar = [] if rows else idx.similar_refs(kv[1].removeprefix("https://"))
        return CitesAnswer(ref, kv[0], kv[1], notes, similar)
