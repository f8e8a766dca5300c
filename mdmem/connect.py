"""Graph commands over a vault (DESIGN §5, issue 5): links, backlinks, neighbors, path, why,
timeline, entity, link/unlink, export, link suggestions after ``add`` and dangling-link checks.

The glue between ``Vault`` (catalogue, files, git) and the pure ``graph`` module. Results are
JSON-ready dicts; the CLI renders them.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from .errors import MdmemError, NoteNotFound
from .graph import ABOUT, ENTITY, MENTIONS, Edge, Graph, Step, build_graph, edge_type, timeline as order_timeline

if TYPE_CHECKING:
    from .lifecycle import Change
    from .note import Problem
    from .rank import Filters
    from .vault import Vault

WHY_SEEDS = 8  # best matches whose causal chains a why-answer follows
# A note is suggested as a link when it holds at least this share of the new note's words (and two
# of them): on the gold vault 0.2 kept the related notes and dropped one-shared-word matches.
SUGGEST_MIN_SHARE = 0.2
TIMELINE_RELATED_HITS = 5  # search hits for the anchor's title that join its related notes
TIMELINE_HUB_LIMIT = 12  # an entity with more notes than this is a hub, not a shared story


def load_graph(vault: Vault) -> Graph:
    """The vault's graph, rebuilt only when the catalogue changed since the last call."""
    cat = vault.catalog
    token = cat.change_token()  # read before the rows: a write in between only costs a rebuild
    cached = vault._graph_cache
    if cached is not None and cached[0] is cat and cached[1] == token:
        return cached[2]  # type: ignore[no-any-return]
    import gc

    # ~150k small tuples and no reference cycles: the cyclic GC would only rescan them (-30 %).
    enabled = gc.isenabled()
    gc.disable()
    try:
        graph = build_graph(*cat.graph_rows())
    finally:
        if enabled:
            gc.enable()
    vault._graph_cache = (cat, token, graph)  # holding ``cat`` keeps its id from being reused
    return graph


def node_key(vault: Vault, graph: Graph, ref: str) -> str:
    """The node ``ref`` names: a note (id, path, stem, title, alias), else an entity name."""
    try:
        return vault.resolve(ref)
    except NoteNotFound:
        key = graph.entity(ref)
        if key is not None:
            return key
        raise


def node_dict(graph: Graph, key: str) -> dict[str, Any]:
    node = graph.nodes.get(key)
    if node is None:  # a file on disk the index has not seen yet
        return {"id": key.removesuffix(".md"), "path": key, "title": key, "type": "note", "kind": "note",
                "status": "unindexed"}
    return node.to_dict()


def edge_dict(graph: Graph, e: Edge) -> dict[str, Any]:
    """An edge as stored (source → target), with both ends named."""
    d: dict[str, Any] = {
        "from": node_dict(graph, e.src), "type": e.type,
        "to": node_dict(graph, e.dst) if e.dst is not None else None,
        "written": e.target, "reason": e.reason,
    }
    if e.heading:
        d["heading"] = e.heading
    if e.candidates:
        d["ambiguous"] = list(e.candidates)
    return d


def _step_dict(graph: Graph, step: Step) -> dict[str, Any]:
    assert step.edge is not None
    return {**edge_dict(graph, step.edge), "direction": step.direction}


def connection_hints(vault: Vault, paths: list[str], per_note: int = 3) -> dict[str, list[dict[str, Any]]]:
    """A few typed neighbours of each note, for an agent to follow: causal links first, then other
    typed links, then entities and mentions; hidden notes (forgotten, snoozed, …) left out.
    Each: {"type", "direction": "out"|"in", "id", "title", "kind"} (+ "reason" when the link has one)."""
    from .graph import CAUSAL_TYPES

    g = load_graph(vault)
    visible = _Visible(vault, vault._filters(), g)

    def rank(item: tuple[Edge, str, str]) -> tuple[int, str, str]:
        e, other, _ = item
        group = 0 if e.type in CAUSAL_TYPES else 2 if e.type in (MENTIONS, ABOUT) else 1
        return group, e.type, other

    out: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        seen: set[str] = set()
        hints: list[dict[str, Any]] = []
        for e, other, way in sorted(g.edges(path), key=rank):
            if other in seen or not visible(other):
                continue
            seen.add(other)
            node = node_dict(g, other)
            hint = {"type": e.type, "direction": way, "id": node["id"], "title": node["title"], "kind": node["kind"]}
            if e.reason:
                hint["reason"] = e.reason
            hints.append(hint)
            if len(hints) >= per_note:
                break
        out[path] = hints
    return out


def _types(types: list[str] | tuple[str, ...] | None) -> frozenset[str] | None:
    return frozenset(edge_type(t) for t in types) if types else None


class _Visible:
    """Whether a node passes retrieval filters (hidden notes out by default). Visibility alone is
    judged from the graph's nodes; other filters need catalogue rows, fetched lazily."""

    def __init__(self, vault: Vault, filters: Filters, graph: Graph | None = None) -> None:
        from dataclasses import replace

        self.cat = vault.catalog
        self.filters = filters
        self.cache: dict[str, bool] = {}
        only_visibility = replace(filters, visible_at=None, include=()).empty
        self.graph = graph if only_visibility else None
        self.vis = filters.visibility() if filters.visible_at is not None else None

    def prefetch(self, keys: list[str]) -> None:
        if self.graph is not None:
            return  # judged from the graph's nodes
        rows = self.cat.rows(k for k in keys if k not in self.cache and not k.startswith(ENTITY))
        for k in keys:
            if k not in self.cache and not k.startswith(ENTITY):
                row = rows.get(k)
                self.cache[k] = row is not None and self.filters.matches(row)

    def __call__(self, key: str) -> bool:
        if key.startswith(ENTITY):
            return True
        if self.graph is not None:
            if key not in self.graph.nodes:
                return False  # not indexed (yet): nothing to judge it by
            if self.vis is None:
                return True
            from .memory import hidden_reason

            n = self.graph.nodes[key]
            if n.status == "active" and not (n.snoozed_until or n.valid_from or n.valid_until):
                return True
            return hidden_reason({"status": n.status, "snoozed_until": n.snoozed_until, "valid_from": n.valid_from,
                                  "valid_until": n.valid_until}, self.vis) is None
        if key not in self.cache:
            self.prefetch([key])
        return self.cache[key]


# -- structure ------------------------------------------------------------------------------------


def links(vault: Vault, ref: str) -> dict[str, Any]:
    """Edges going out of a note: frontmatter links, body mentions, supersedes, entities."""
    g = load_graph(vault)
    key = node_key(vault, g, ref)
    out = [{**edge_dict(g, e), "dangling": e.dst is None} for e in g.out.get(key, ())]
    return {"note": node_dict(g, key), "count": len(out), "links": out}


def backlinks(vault: Vault, ref: str) -> dict[str, Any]:
    """Edges coming into a note (or entity) from other notes."""
    g = load_graph(vault)
    key = node_key(vault, g, ref)
    inc = [edge_dict(g, e) for e in g.inc.get(key, ()) if e.src != key]
    return {"note": node_dict(g, key), "count": len(inc), "backlinks": inc}


def neighbors(vault: Vault, ref: str, depth: int = 1, *, types: list[str] | None = None,
              direction: str = "both", limit: int | None = None) -> dict[str, Any]:
    """Notes and entities within ``depth`` hops, nearest first, each with the edge that reached it."""
    if depth < 1:
        raise MdmemError("--depth must be 1 or more.")
    g = load_graph(vault)
    key = node_key(vault, g, ref)
    steps = g.neighbors(key, depth, types=_types(types), direction=direction, limit=limit)
    return {"note": node_dict(g, key), "depth": depth, "count": len(steps),
            "neighbors": [{**node_dict(g, s.node), "distance": s.depth, "via": _step_dict(g, s)} for s in steps]}


def shortest_path(vault: Vault, a: str, b: str, *, types: list[str] | None = None,
                  max_depth: int | None = None) -> dict[str, Any]:
    """The fewest hops between two notes, whatever the edges' directions."""
    g = load_graph(vault)
    ka, kb = node_key(vault, g, a), node_key(vault, g, b)
    steps = g.shortest_path(ka, kb, types=_types(types), max_depth=max_depth)
    doc: dict[str, Any] = {"from": node_dict(g, ka), "to": node_dict(g, kb), "found": steps is not None,
                           "length": len(steps) - 1 if steps else None,
                           "steps": [_step_dict(g, s) for s in (steps or [])[1:]]}
    if steps is None:
        deg_a = sum(1 for _ in g.edges(ka))
        deg_b = sum(1 for _ in g.edges(kb))
        doc["message"] = (f"No path between {g.title(ka)!r} and {g.title(kb)!r}: they are not connected "
                          f"({deg_a} and {deg_b} edge(s) of their own"
                          + (f", within {max_depth} hops" if max_depth else "") + "). Connect them with "
                          f"\"mdmem link {shlex.quote(node_dict(g, ka)['id'])} {shlex.quote(node_dict(g, kb)['id'])}"
                          " --type TYPE\".")
    return doc


# -- why -----------------------------------------------------------------------------------------


def _use_vectors(vault: Vault, vectors: bool | None) -> bool:
    if vectors is not None:
        return vectors
    done, _ = vault.catalog.coverage()
    return done > 0  # never load the model just for this when nothing is embedded yet


def why(vault: Vault, text: str, limit: int = 10, *, depth: int = 3, vectors: bool | None = None,
        seeds: list[Any] | None = None, filters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The notes that best match ``text`` with their causes (and effects) along causal edges."""
    filters = filters or {}
    route = "hybrid" if vectors else "given"  # seeds from elsewhere: CLI --vectors asks mdmem serve
    if seeds is None:
        # BM25 finds the matches unless vectors are asked for: the causal edges, not the matcher,
        # bridge the gap to a cause in other words or another language (gold: 12/12 either way),
        # and at 10k notes a hybrid query alone takes longer than the 100 ms a why may cost.
        # With no BM25 match at all, the vectors (if the vault has them) get their turn.
        if vectors:
            seeds, route = vault.query(text, WHY_SEEDS, **filters), "hybrid"
        else:
            seeds, route = vault.search(text, WHY_SEEDS, **filters), "bm25"
            if not seeds and vectors is None and _use_vectors(vault, None):
                seeds, route = vault.query(text, WHY_SEEDS, **filters), "hybrid (no BM25 match)"
    g = load_graph(vault)
    visible = _Visible(vault, vault._filters(**filters), g)
    scores: dict[str, float] = {}
    for h in seeds[:WHY_SEEDS]:
        scores[h.path] = max(scores.get(h.path, 0.0), float(h.score))
    hits = g.causal(scores, depth, allow=visible)[:limit]
    results = []
    for h in hits:
        results.append({**node_dict(g, h.node), "score": round(h.score, 4), "role": h.role, "hops": h.depth,
                        "match": node_dict(g, h.seed), "chain": [_step_dict(g, s) for s in h.chain[1:]]})
    return {"query": text, "matches": route, "count": len(results), "results": results}


# -- timeline ------------------------------------------------------------------------------------


def timeline(vault: Vault, ref: str, window: int = 5, *, all_notes: bool = False, vectors: bool | None = None,
             filters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The notes just before and after a note in time: among its related notes (graph neighbours
    within two hops and notes on the same subject), or among all notes with ``all_notes``."""
    filters = filters or {}
    g = load_graph(vault)
    from_query = False
    try:
        anchor = vault.resolve(ref)
    except NoteNotFound:
        hits = vault.query(ref, 1, vectors=_use_vectors(vault, vectors), **filters)
        if not hits:
            raise MdmemError(f"No note matches {ref!r}. Try other words, or \"mdmem search {ref}\".") from None
        anchor, from_query = hits[0].path, True
    visible = _Visible(vault, vault._filters(**filters), g)
    if all_notes:
        keys = [k for k, n in g.nodes.items() if n.kind == "note"]
    else:
        # Its story: links, mentions and versions within two hops, what it is about and, for
        # entities that are not hubs, the other notes about them, then notes on the same subject.
        keys = [s.node for s in g.neighbors(anchor, 2, skip=frozenset({ABOUT}))]
        for _, ent, _ in g.edges(anchor, "out", frozenset({ABOUT})):
            keys.append(ent)
            about = [e.src for e in g.inc.get(ent, ()) if e.type == ABOUT]
            if len(about) <= TIMELINE_HUB_LIMIT:
                keys += about
        title = g.nodes[anchor].title if anchor in g.nodes else ref
        hits = vault.search(title, TIMELINE_RELATED_HITS, **filters)
        keys += [h.path for h in hits if h.score >= 0.5 * hits[0].score]  # same subject, not a shared word
        keys = [k for k in keys if not k.startswith(ENTITY)]
    visible.prefetch(keys)
    pool = [g.nodes[k] for k in dict.fromkeys(keys) if k in g.nodes and k != anchor and visible(k)]
    if anchor in g.nodes:
        pool.append(g.nodes[anchor])
    before, after = order_timeline(pool, anchor, window, window)

    def item(key: str) -> dict[str, Any]:
        node = g.nodes[key]
        return {**node.to_dict(), "date": _iso(node.date)}

    return {"anchor": {**node_dict(g, anchor), "date": _iso(g.nodes[anchor].date) if anchor in g.nodes else None},
            "from_query": from_query, "scope": "all" if all_notes else "related",
            "before": [item(n.key) for n in before], "after": [item(n.key) for n in after]}


def _iso(ts: float | None) -> str | None:
    import datetime as dt

    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- entity ----------------------------------------------------------------------------------------


def entity(vault: Vault, name: str, *, filters: dict[str, Any] | None = None, mentions: int = 10) -> dict[str, Any]:
    """Everything about an entity: its own note, notes about it (``entities``) under any of its
    names, notes linking to its note, and notes whose text mentions one of its names."""
    from .graph import entity_norm

    filters = filters or {}
    g = load_graph(vault)
    visible = _Visible(vault, vault._filters(**filters), g)
    # Its own note is one titled or aliased so (not a file stem: "hotwire" is no note about Hotwire);
    # an id or path names one too.
    homes = g.named(name)
    key = g.entity(name)
    if key is not None and key not in homes:
        homes.append(key)
    if not homes:
        try:
            homes.append(vault.resolve(name))
        except NoteNotFound:
            pass
    names: dict[str, None] = {}
    for h in homes:
        node = g.nodes.get(h)
        if node is not None:
            names[node.title] = None
        if node is not None and node.kind == "note":
            row = vault.catalog.row(h) or {}
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
    about: list[dict[str, Any]] = []
    linked: list[dict[str, Any]] = []
    seen = set(homes)
    for h in homes:
        for e in g.inc.get(h, ()):
            if e.src in seen or not visible(e.src):
                continue
            seen.add(e.src)
            item = {**node_dict(g, e.src), "via": e.type, "reason": e.reason}
            (about if e.type == ABOUT else linked).append(item)
    mentioned: list[dict[str, Any]] = []
    for n in dedup.values():
        if len(mentioned) >= mentions:
            break
        pattern = re.compile(r"(?<!\w)" + re.escape(n) + r"(?!\w)", re.IGNORECASE)
        for hit in vault.search(n, mentions, **filters):
            if hit.path in seen:
                continue
            try:
                body = vault._body_for_snippet(hit.path)
            except OSError:
                continue
            if pattern.search(hit.title) or pattern.search(body):
                seen.add(hit.path)
                mentioned.append({**node_dict(g, hit.path), "via": MENTIONS, "snippet": hit.snippet})
            if len(mentioned) >= mentions:
                break
    if not homes and not mentioned:
        raise MdmemError(f"No note or entity is named {name!r}. Try \"mdmem search {name}\".")
    return {"name": name, "names": sorted(dedup.values(), key=str.casefold),
            "notes": [node_dict(g, h) for h in homes if h in g.nodes and g.nodes[h].kind == "note"
                      and visible(h)],
            "about": about, "linked": linked, "mentions": mentioned}


# -- link / unlink --------------------------------------------------------------------------------


def link(vault: Vault, a: str, b: str, type: str = "related", reason: str | None = None, *,
         commit: bool | None = None) -> Change:
    """Add ``{to: B, type: T, reason: R}`` to A's frontmatter ``links`` (B by its id when it has one)."""
    from .note import _yaml_scalar

    typ = edge_type(type)
    if not re.fullmatch(r"[\w.:/]+", typ):
        raise MdmemError(f"--type {type!r} is not a usable edge type; use a word like depends_on or caused_by.")
    reason = reason.strip() if reason and reason.strip() else None

    def edit(text: str, src: str, g: Graph) -> tuple[str, dict[str, Any]]:
        dst = vault.resolve(b)
        if dst == src:
            raise MdmemError("A note cannot link to itself; name two different notes.")
        target = vault.read_note(dst)[0]
        to = target.id if target.has_id else f"[[{target.path.removesuffix('.md')}]]"
        entry: dict[str, Any] = {"to": to, "type": typ}
        if reason:
            entry["reason"] = reason
        same = _entry_matcher(g, src, dst, b, typ)
        existing: list[Any] = []

        def found(item: Any) -> bool:
            if same(item):
                existing.append(item)
                return True
            return False

        text2, _, _ = remove_link_entries(text, found)
        if existing and (reason is None or any(_reason(it) == reason for it in existing)):
            return text, {"to": node_dict(g, dst)}  # already linked so
        # A new reason replaces the old entry for the same target and type.
        return add_link_entry(text2, _yaml_scalar(entry)), {"links": entry, "to": node_dict(g, dst)}

    return _edit_links(vault, a, edit, "link", commit,
                       lambda src, f: f"mdmem: link \"{_title(vault, src)}\" -{typ}-> \"{f['to']['title']}\"")


def unlink(vault: Vault, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> Change:
    """Remove A's frontmatter links to B (of one type, or all); body mentions are left alone."""
    typ = edge_type(type) if type else None

    def edit(text: str, src: str, g: Graph) -> tuple[str, dict[str, Any]]:
        try:
            dst: str | None = vault.resolve(b)
        except NoteNotFound:
            dst = None  # a dangling target: match it as written
        same = _entry_matcher(g, src, dst, b, typ)
        text2, removed, _ = remove_link_entries(text, same)
        if not removed:
            return text, {}
        mentions = sum(1 for e in g.out.get(src, ()) if e.type == MENTIONS and dst is not None and e.dst == dst)
        return text2, {"removed": removed, "to": node_dict(g, dst) if dst else {"title": b},
                       "body_mentions_left": mentions}

    return _edit_links(vault, a, edit, "unlink", commit,
                       lambda src, f: f"mdmem: unlink \"{_title(vault, src)}\" from \"{f['to']['title']}\"")


def _reason(item: Any) -> str | None:
    r = item.get("reason") if isinstance(item, dict) else None
    return str(r).strip() if r is not None and str(r).strip() else None


def _entry_matcher(g: Graph, src: str, dst: str | None, written: str, typ: str | None) -> Any:
    """Whether a ``links`` entry (as YAML read it) points at ``dst`` (or at ``written``) with ``typ``."""
    from .links import normalize_ref
    from .note import _to_link

    def same(item: Any) -> bool:
        ln = _to_link(item)
        if ln is None or (typ is not None and edge_type(ln.type) != typ):
            return False
        if dst is not None and g.resolve(ln.target, src)[0] == dst:
            return True
        return normalize_ref(ln.target) == normalize_ref(written)

    return same


def _title(vault: Vault, path: str) -> str:
    row = vault.catalog.row(path)
    return str(row["title"]) if row else path


def _edit_links(vault: Vault, a: str, edit: Any, action: str, commit: bool | None, message: Any) -> Change:
    """Rewrite A's ``links`` (``lifecycle.edit_note``: writer lock, atomic write, reindex, commit)."""
    from .lifecycle import edit_note

    return edit_note(vault, a, lambda text, src, note: edit(text, src, load_graph(vault)), action, commit=commit,
                     message=lambda src, title, fields: message(src, fields))


# Frontmatter text edits: only the ``links`` block changes; other keys, comments and the body stay
# byte for byte. A block list gains or loses whole item lines (its other items keep their
# formatting); any other shape of ``links`` is rewritten in flow style by ``set_fields``.

_FM = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)(.*?)(^(?:---|\.\.\.)[ \t]*\r?$)", re.S | re.M)
_KEY = re.compile(r"^(['\"]?)links\1\s*:(.*)$")


def _fm_lines(m: re.Match[str]) -> tuple[str, list[str], bool]:
    """The frontmatter's newline, its lines, and whether it ended with a newline (line dropped)."""
    fm = m.group(2)
    nl = "\r\n" if "\r\n" in fm else "\n"
    lines = fm.split(nl)
    trailing = bool(lines) and lines[-1] == ""
    if trailing:
        lines.pop()
    return nl, lines, trailing


def _links_block(lines: list[str]) -> tuple[int, int] | None:
    """(key line, end) of the top-level ``links`` key, like ``note.set_fields`` finds keys."""
    for i, line in enumerate(lines):
        if _KEY.match(line):
            end = i + 1
            while end < len(lines) and lines[end][:1] in (" ", "\t", "-"):
                end += 1
            return i, end
    return None


def _value_part(key_line: str) -> str:
    m = _KEY.match(key_line)
    value = m.group(2) if m else ""
    return re.sub(r"(^|\s)#.*$", "", value).strip()


def add_link_entry(text: str, entry: str) -> str:
    """``text`` with ``- ENTRY`` appended to its frontmatter ``links`` list."""
    from .note import set_fields

    m = _FM.match(text)
    if m is None:
        return f"---\nlinks:\n  - {entry}\n---\n" + text
    nl, lines, trailing = _fm_lines(m)
    found = _links_block(lines)
    if found is None:
        lines += ["links:", f"  - {entry}"]
    else:
        start, end = found
        value = _value_part(lines[start])
        if value in ("", "[]", "null", "~"):
            items = [ln for ln in lines[start + 1 : end] if ln.lstrip().startswith("- ")]
            indent = items[0][: len(items[0]) - len(items[0].lstrip())] if items else "  "
            if value:
                lines[start] = lines[start].replace(value, "", 1).rstrip()
            while end > start + 1 and lines[end - 1].lstrip().startswith("#"):
                end -= 1  # a trailing comment stays after the list
            lines.insert(end, f"{indent}- {entry}")
        else:
            import yaml

            current = _load_value(lines[start:end])
            current = current if isinstance(current, list) else [current] if current is not None else []
            return set_fields(text, {"links": [*current, yaml.safe_load(entry)]})
    new_fm = nl.join(lines) + (nl if trailing or lines else "")
    return text[: m.start(2)] + new_fm + text[m.end(2) :]


def remove_link_entries(text: str, match: Any) -> tuple[str, int, list[Any]]:
    """``text`` without the ``links`` entries ``match(item)`` accepts; (text, removed, kept items)."""
    from .note import set_fields

    m = _FM.match(text)
    if m is None:
        return text, 0, []
    nl, lines, trailing = _fm_lines(m)
    found = _links_block(lines)
    if found is None:
        return text, 0, []
    start, end = found
    value = _value_part(lines[start])
    if value not in ("", "null", "~"):  # flow style or a scalar: rewrite the value
        current = _load_value(lines[start:end])
        if not isinstance(current, list):
            return text, 0, [current]
        kept = [it for it in current if not match(it)]
        if len(kept) == len(current):
            return text, 0, kept
        return set_fields(text, {"links": kept or None}), len(current) - len(kept), kept
    # Block list: split into items (an item runs until the next "- " at the items' indent).
    body = lines[start + 1 : end]
    starts = [i for i, ln in enumerate(body) if ln.lstrip().startswith("- ")]
    if not starts:
        return text, 0, []
    indent = len(body[starts[0]]) - len(body[starts[0]].lstrip())
    starts = [i for i in starts if len(body[i]) - len(body[i].lstrip()) == indent]
    drop: set[int] = set()
    kept_items: list[Any] = []
    removed = 0
    for n, i in enumerate(starts):
        j = starts[n + 1] if n + 1 < len(starts) else len(body)
        while j > i + 1 and body[j - 1].lstrip().startswith("#"):
            j -= 1  # comment lines after an item belong to no item
        item = _load_value(["x:", *body[i:j]])
        item = item[0] if isinstance(item, list) and item else item
        if match(item):
            drop.update(range(i, j))
            removed += 1
        else:
            kept_items.append(item)
    if not removed:
        return text, 0, kept_items
    new_body = [ln for i, ln in enumerate(body) if i not in drop]
    if kept_items:
        lines[start + 1 : end] = new_body
    else:
        lines[start:end] = [ln for ln in new_body if ln.strip()]  # comments stay; the empty key goes
    new_fm = nl.join(lines) + (nl if lines else "")
    return text[: m.start(2)] + new_fm + text[m.end(2) :], removed, kept_items


def _load_value(lines: list[str]) -> Any:
    import yaml

    try:
        doc = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError:
        return None
    return next(iter(doc.values())) if isinstance(doc, dict) and doc else None


# -- suggestions and checks ------------------------------------------------------------------------


def suggest_links(vault: Vault, ref: str, limit: int = 3) -> list[dict[str, Any]]:
    """Existing notes similar to ``ref`` that it does not link to yet, each with the ``mdmem link``
    command that would connect them. Nothing is written."""
    from .text import terms

    g = load_graph(vault)
    src = vault.resolve(ref)
    note = vault.read_note(src)[0]
    linked = {e.dst for e in g.out.get(src, ())} | {e.src for e in g.inc.get(src, ())}
    qset = set(terms(f"{note.title}\n{note.body}"))
    if not qset:
        return []
    out: list[dict[str, Any]] = []
    for h in vault.search(f"{note.title} {note.body[:500]}", limit + 5):
        if h.path == src or h.path in linked:
            continue
        try:
            other = vault.read_note(h.path)[0]
        except OSError:
            continue
        shared = len(qset & set(terms(f"{other.title}\n{other.body}")))
        share = shared / len(qset)
        if shared < 2 or share < SUGGEST_MIN_SHARE:
            continue
        out.append({"id": h.id, "path": h.path, "title": h.title, "similarity": round(share, 3),
                    "command": f"mdmem link {shlex.quote(note.id)} {shlex.quote(h.id)} --type related"})
        if len(out) >= limit:
            break
    return out


def dangling_problems(vault: Vault) -> list[Problem]:
    """One problem per link whose target matches no note, and per ambiguous target."""
    from .note import Problem

    g = load_graph(vault)
    out = []
    for src, edges in sorted(g.out.items()):
        for e in edges:
            fld = "body" if e.type == MENTIONS else "supersedes" if e.type == "supersedes" else "links"
            if e.dst is None:
                if fld == "body":
                    fix = f"create a note named {e.target!r}, or correct the link in the body"
                else:
                    fix = (f"create a note named {e.target!r}, correct the target, or remove it: "
                           f"mdmem unlink {shlex.quote(src)} {shlex.quote(e.target)}")
                out.append(Problem(src, fld, f"dangling {e.type} link: {e.target!r} matches no note", fix))
            elif e.candidates:
                out.append(Problem(src, fld, f"{e.type} link {e.target!r} is ambiguous: it matches "
                                   f"{', '.join(e.candidates)} (using {e.dst})",
                                   "link by the note's id or path instead"))
    return out


# -- export ----------------------------------------------------------------------------------------


def export_graph(vault: Vault, fmt: str = "json", *, types: list[str] | None = None, entities: bool = True,
                 filters: dict[str, Any] | None = None) -> str:
    """The graph as JSON, Graphviz DOT or a self-contained HTML page that draws it."""
    import json

    from .graph import export_data, to_dot

    g = load_graph(vault)
    keep = None
    if filters:
        visible = _Visible(vault, vault._filters(**filters), g)
        visible.prefetch([k for k, n in g.nodes.items() if n.kind == "note"])
        keep = visible
    data = export_data(g, types=_types(types), entities=entities, keep=keep)
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    if fmt == "dot":
        return to_dot(data)
    if fmt == "html":
        from .graph_html import to_html

        return to_html(data, title=f"mdmem graph — {vault.root.name}")
    raise MdmemError(f"Unknown format {fmt!r}; use json, dot or html.")
