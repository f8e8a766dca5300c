"""The graph part of ``Vault`` (a mixin in the vault's layer, split off so ``vault.py`` stays short):
graph reads (links, backlinks, neighbors, path, why, timeline, entity, refs, cites, person, export) and
link writes, each a documented delegation to ``connect``, ``people`` or ``linking``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import results as r
    from ..core.graph import Graph
    from ..index.semantic import Semantic
    from ..index.store import IndexStore


class VaultGraph:
    """The note graph of a ``Vault``: it needs the vault's ``store`` and ``semantic``."""

    store: IndexStore
    semantic: Semantic

    def graph(self) -> Graph:
        """The note graph (typed edges, entity nodes, adjacency both ways), cached until the index changes."""
        from ..features.graph_view import load_graph

        return load_graph(self.store)

    def links(self, ref: str) -> r.LinksAnswer:
        """Edges out of a note: typed frontmatter links, body mentions, supersedes, entities."""
        from ..features.connect import links

        return links(self.store, ref)

    def backlinks(self, ref: str) -> r.BacklinksAnswer:
        """Edges into a note (or an entity) from other notes."""
        from ..features.connect import backlinks

        return backlinks(self.store, ref)

    def neighbors(self, ref: str, depth: int = 1, *, types: list[str] | None = None,
                  direction: str = "both", limit: int | None = None) -> r.NeighborsAnswer:
        """Notes and entities within ``depth`` hops (only along ``types``; "out", "in" or "both")."""
        from ..features.connect import neighbors

        return neighbors(self.store, ref, depth, types=types, direction=direction, limit=limit)

    def shortest_path(self, a: str, b: str, *, types: list[str] | None = None,
                      max_depth: int | None = None) -> r.PathAnswer:
        """The fewest hops between two notes, in either edge direction (``found`` False if none)."""
        from ..features.connect import shortest_path

        return shortest_path(self.store, a, b, types=types, max_depth=max_depth)

    def why(self, text: str, limit: int = 10, *, depth: int = 3, vectors: bool | None = None,
            seeds: list[r.Hit] | None = None, **filters: Any) -> r.WhyAnswer:
        """Causal answer: the best matches for ``text`` with their causes and effects.

        Args:
            depth: causal hops to follow from each match, each way.
            vectors: True: hybrid matches; False: BM25 only; None: BM25, hybrid only if BM25 finds
                nothing and the vault has vectors.
            seeds: matches found elsewhere (e.g. by a warm server) instead of running a query.
        """
        from ..features.connect import why

        sem = None if vectors is False else self.semantic  # vectors=False: no model code loads
        return why(self.store, sem, text, limit, depth=depth, vectors=vectors, seeds=seeds, filters=filters)

    def timeline(self, ref: str, window: int = 5, *, all_notes: bool = False, vectors: bool | None = None,
                 **filters: Any) -> r.TimelineAnswer:
        """The ``window`` notes before and after a note (or a query's best match) in time, among its
        related notes (``all_notes``: among all)."""
        from ..features.connect import timeline

        sem = None if vectors is False else self.semantic
        return timeline(self.store, sem, ref, window, all_notes=all_notes, vectors=vectors, filters=filters)

    def entity(self, name: str, **filters: Any) -> r.EntityAnswer:
        """Everything about an entity and its aliases: its note, notes about it, links, mentions."""
        from ..features.connect import entity

        return entity(self.store, name, filters=filters)

    def refs(self, ref: str) -> r.RefsAnswer:
        """A note's external references (``refs:`` and the body's URLs and e-mail addresses): kind,
        canonical value, as written, frontmatter or body, and the person an identity names."""
        from ..features.connect import refs

        return refs(self.store, ref)

    def cites(self, ref: str, **filters: Any) -> r.CitesAnswer:
        """The notes citing a URL, e-mail address, ticket, DOI or path, given in any written form."""
        from ..features.connect import cites

        return cites(self.store, ref, filters=filters)

    def person(self, name: str, **filters: Any) -> r.PersonAnswer:
        """Who someone is, found by any identity (name, e-mail, @handle, service:handle): their person
        note, identities and summary, the notes that mention them, and their timeline."""
        from ..features.people import person

        return person(self.store, name, filters=filters)

    def link(self, a: str, b: str, type: str = "related", reason: str | None = None, *,
             commit: bool | None = None) -> r.Change:
        """Add a typed link from note A to note B in A's frontmatter."""
        from ..features.linking import link

        return link(self.store, a, b, type, reason, commit=commit)

    def unlink(self, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> r.Change:
        """Remove A's frontmatter links to B (only of ``type`` if given)."""
        from ..features.linking import unlink

        return unlink(self.store, a, b, type, commit=commit)

    def similar(self, ref: str, limit: int = 10, *, vectors: bool = True, **filters: Any) -> r.SimilarNotes:
        """The notes most like ``ref`` by meaning (its vectors, when the index has them; no model runs)
        and by its distinctive words, fused; itself left out, those already linked with it marked
        (``SimilarNote.linked``). ``vectors`` False: words alone."""
        from ..features.similar import similar

        return similar(self.store, self.semantic if vectors else None, ref, limit, self.store.filters(**filters))

    def suggest_links(self, ref: str, limit: int = 3) -> list[r.LinkSuggestion]:
        """Similar notes ``ref`` does not link to yet, as ``mdmem link`` commands (nothing is written)."""
        from ..features.linking import suggest_links

        return suggest_links(self.store, self.semantic, ref, limit)

    def export_graph(self, fmt: str = "json", *, types: list[str] | None = None, entities: bool = True,
                     external: bool = True, **filters: Any) -> str:
        """The graph as json, dot or a self-contained html page (``external``: with the URLs, e-mail
        addresses, tickets, … notes cite, as nodes of their own)."""
        from ..features.connect import export_graph

        return export_graph(self.store, fmt, types=types, entities=entities, external=external, filters=filters)
