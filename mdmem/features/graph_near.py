"""The graph around a few notes: their edges, both ways, exactly as the whole graph has
them, from the catalogue rows that can touch them, so a cold ``query`` shows its hits' connection
hints without building the graph of a big vault (seconds and hundreds of MB: docs/benchmarks.md).

It is ``graph.build_graph`` run on a part of the rows, chosen so that every edge at the notes comes
out as in the whole graph:

- links: those the notes write, and every link whose target may name one of them (``CatalogNear.
  links_near``: by path, suffix, file name, id, title, a person's identity, or a relative target whose
  text and file may differ); the resolver has every name those links' lookups read (the paths,
  ids and titles they may be, the files their last part may name, found by stem; every path, id
  and title when a file name may normalise otherwise than its path: ``CatalogNear.odd_paths``),
  so each resolves as in the whole graph;
- entities: every note whose entities may name one of the notes, one of the notes' own entities or
  a person's identity of theirs (by a word of it), so that each entity name's first spelling, which
  names its node, is the whole graph's;
- references the notes make and those that cite a person among them, with the person identities
  every name, target and reference read here may be;
- the notes at the other end of each edge, and those the resolver and entities judge by status.

None when that cannot be assured (a note not indexed, an identity with neither an ASCII word nor a
character outside ASCII to search by): the caller builds the whole graph then. For three notes it
takes a small part of the whole graph's time and memory (docs/benchmarks.md, "The graph").
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any

from ..core.graph import ATTACHMENT, Graph, build_graph, entity_norm, json_list, note_node
from ..core.links import normalize_ref
from ..core.refs import mention_key

if TYPE_CHECKING:
    from ..index.reading import IndexRead

_RUN = re.compile(r"[A-Za-z0-9]+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_PERSON_REF_KINDS = ("email", "handle", "id", "url")
_NAME_KINDS = ("title", "heading", "alias")  # the names an entity resolves by


def search_word(key: str) -> str | None:
    """The longest run of ASCII letters and digits in ``key`` that any text ``key`` is the canonical
    form of contains too (in some case), unless that text has a percent sign or a character outside
    ASCII (the queries take every such text): a URL's scheme and percent escapes left out. "" when
    ``key`` has no such run but a character outside ASCII (so has every text it is the form of);
    None when it has neither."""
    rest = key.split("://", 1)[1] if "://" in key else key
    runs = _RUN.findall(_ESCAPE.sub(" ", rest))
    if runs:
        return max(runs, key=len)
    return "" if any(ord(c) > 127 for c in key) else None


def near_graph(idx: IndexRead, paths: list[str]) -> Graph | None:
    """A graph whose edges at ``paths`` (``Graph.edges``) and the nodes at their other ends are
    those of the whole graph; None when that cannot be assured (see the module docstring)."""
    paths = sorted(set(paths))
    if not paths:
        return Graph()
    with idx.snapshot():
        own = idx.note_rows_of(paths)
        if len(own) != len(paths):
            return None
        mine = idx.names_of(paths)
        person_keys = sorted({k for _, k, _ in idx.identity_rows_of(paths=paths)})
        words = [search_word(k) for k in person_keys]
        if None in words:
            return None
        exact = sorted({n for n, _, k in mine if k in ("path", "id", "title")})
        names = sorted({n.rpartition("/")[2] for n, _, k in mine if k == "path"})
        links = idx.links_near(paths, exact, names, [w for w in words if w is not None])

        own_entities = {entity_norm(n) for r in own for n in json_list(r[5])}
        wanted = {x for x in own_entities | {n for n, _, k in mine if k in _NAME_KINDS} | set(person_keys) if x}
        entity_words = [search_word(x) for x in wanted]
        known = [w for w in entity_words if w is not None]
        with_entities = idx.entity_paths(known if len(known) == len(entity_words) else None)
        refs = idx.refs_near(paths, person_keys)

        first = {*paths, *(r[0] for r in links), *with_entities, *(r[0] for r in refs)}
        rows = {r[0]: r for r in idx.note_rows_of(first)}
        spellings = [n for p in with_entities if p in rows for n in json_list(rows[p][5])]
        keys = {mention_key(r[1]) for r in links} | {mention_key(n) for n in spellings} | set(person_keys)
        keys |= {r[2] for r in refs if r[1] in _PERSON_REF_KINDS}
        identities = idx.identity_rows_of(keys=keys)

        entity_norms = {normalize_ref(n) for n in spellings}
        entity_norms = {n for n in entity_norms if n}
        if idx.odd_paths():
            resolver_names = idx.link_names()
        else:  # only the names the links' lookups read (``LinkResolver.resolve``)
            norms, files = _lookups(links)
            resolver_names = idx.link_names_for(norms | entity_norms, files)
        display = idx.display_names(entity_norms)
        titled = {r[6].lstrip("/") for r in links} | entity_norms
        more = {p for n, p, k in resolver_names if k == "title" and n in titled}
        more |= {p for _, p, _ in display} | {r[0] for r in identities}
        if more - rows.keys():
            rows.update((r[0], r) for r in idx.note_rows_of(more - rows.keys()))
        # in the catalogue's order, as graph_rows reads them: an entity's first spelling names its node
        notes = [r if r[0] in with_entities else (*r[:5], None, *r[6:]) for r in idx.note_rows_of(rows)]
        g = build_graph(notes, resolver_names + display, links, idx.attachment_paths(), refs, identities)
        # a note no row above brought in, that a link names, is taken for an attachment: make it a note
        taken = [k for k, n in g.nodes.items() if n.kind == ATTACHMENT]
        for row in idx.note_rows_of(taken):
            g.nodes[row[0]] = note_node(row)
    return g


def _lookups(links: list[tuple[Any, ...]]) -> tuple[set[str], set[str]]:
    """The names (paths, ids, titles) and file names ``LinkResolver.resolve`` may look up for ``links``."""
    norms: set[str] = set()
    files: set[str] = set()
    for src, target, _type, _label, _heading, _reason, norm, *_ in links:
        n = norm.lstrip("/")
        norms.add(n)
        files.add(n.rpartition("/")[2])
        norms.add(normalize_ref(posixpath.normpath(posixpath.join(posixpath.dirname(src), target.strip()))))
    return norms, files
