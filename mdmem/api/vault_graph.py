"""The Vault facade's graph methods: links, backlinks, neighbours, paths, causes, timelines, entities,
people and their identities, references, similar notes, and the graph's export (``Vault`` inherits them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.schema import FilterArgs
from .answering import answers

if TYPE_CHECKING:
    from ..core.graph import Graph
    from ..index.semantic import Semantic
    from ..index.store import IndexStore
    from ..results.changes import Change, LinkSuggestion
    from ..results.graph import (
        BacklinksAnswer,
        EntityAnswer,
        LinksAnswer,
        NeighborsAnswer,
        PathAnswer,
        TimelineAnswer,
        WhyAnswer,
    )
    from ..results.refs import CitesAnswer, PersonAnswer, RefsAnswer
    from ..results.search import Hit, SimilarNotes


class GraphMethods:
    """The graph's half of the facade; it delegates to ``features`` as the rest of ``Vault`` does."""

    store: IndexStore
    answering: int  # ``answers`` counts the calls under way

    if TYPE_CHECKING:

        @property
        def semantic(self) -> Semantic: ...  # the Vault's

    def graph(self) -> Graph:
        """The note graph (typed edges, entity nodes, adjacency both ways), cached until the index changes."""
        from ..features.graph_view import load_graph

        return load_graph(self.store)

    @answers
    def links(self, ref: str) -> LinksAnswer:
        """Edges out of a note: typed frontmatter links, body mentions, supersedes, entities."""
        from ..features.connect import links

        return links(self.store, ref)

    @answers
    def backlinks(self, ref: str) -> BacklinksAnswer:
        """Edges into a note (or an entity) from other notes."""
        from ..features.connect import backlinks

        return backlinks(self.store, ref)

    @answers
    def neighbors(
        self,
        ref: str,
        depth: int = 1,
        *,
        types: list[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
    ) -> NeighborsAnswer:
        """Notes and entities within ``depth`` hops (only along ``types``; "out", "in" or "both")."""
        from ..features.connect import neighbors

        return neighbors(self.store, ref, depth, types=types, direction=direction, limit=limit)

    @answers
    def shortest_path(
        self, a: str, b: str, *, types: list[str] | None = None, max_depth: int | None = None
    ) -> PathAnswer:
        """The fewest hops between two notes, in either edge direction (``found`` False if none)."""
        from ..features.connect import shortest_path

        return shortest_path(self.store, a, b, types=types, max_depth=max_depth)

    @answers
    def why(
        self,
        text: str,
        limit: int = 10,
        *,
        depth: int = 3,
        vectors: bool | None = None,
        seeds: list[Hit] | None = None,
        filters: FilterArgs | None = None,
        **given: Any,
    ) -> WhyAnswer:
        """Causal answer: the best matches for ``text`` with their causes and effects.

        Args:
            depth: causal hops to follow from each match, each way.
            vectors: True: hybrid matches; False: BM25 only; None: BM25, hybrid only if BM25 finds
                nothing and the vault has vectors.
            seeds: matches found elsewhere (e.g. by a warm server) instead of running a query.
        """
        from ..features.connect import why

        sem = None if vectors is False else self.semantic  # vectors=False: no model code loads
        f = FilterArgs.of(filters, **given).given()
        return why(self.store, sem, text, limit, depth=depth, vectors=vectors, seeds=seeds, filters=f)

    @answers
    def timeline(
        self,
        ref: str,
        window: int = 5,
        *,
        all_notes: bool = False,
        vectors: bool | None = None,
        filters: FilterArgs | None = None,
        **given: Any,
    ) -> TimelineAnswer:
        """The ``window`` notes before and after a note (or a query's best match) in time, among its
        related notes (``all_notes``: among all)."""
        from ..features.connect import timeline

        sem = None if vectors is False else self.semantic
        f = FilterArgs.of(filters, **given).given()
        return timeline(self.store, sem, ref, window, all_notes=all_notes, vectors=vectors, filters=f)

    @answers
    def entity(self, name: str, *, filters: FilterArgs | None = None, **given: Any) -> EntityAnswer:
        """Everything about an entity and its aliases: its note, notes about it, links, mentions."""
        from ..features.connect import entity

        return entity(self.store, name, filters=FilterArgs.of(filters, **given).given())

    @answers
    def refs(self, ref: str) -> RefsAnswer:
        """A note's external references (``refs:`` and the body's URLs and e-mail addresses): kind,
        canonical value, as written, frontmatter or body, and the person an identity names."""
        from ..features.connect import refs

        return refs(self.store, ref)

    @answers
    def cites(self, ref: str, *, filters: FilterArgs | None = None, **given: Any) -> CitesAnswer:
        """The notes citing a URL, e-mail address, ticket, DOI or path, given in any written form."""
        from ..features.connect import cites

        return cites(self.store, ref, filters=FilterArgs.of(filters, **given).given())

    @answers
    def person(self, name: str, *, filters: FilterArgs | None = None, **given: Any) -> PersonAnswer:
        """Who someone is, found by any identity (name, e-mail, @handle, service:handle): their person
        note, identities and summary, the notes that mention them, and their timeline."""
        from ..features.people import person

        return person(self.store, name, filters=FilterArgs.of(filters, **given).given())

    @answers
    def identity(
        self, name: str, add: Sequence[str], remove: Sequence[str] = (), *, commit: bool | None = None
    ) -> Change:
        """Add identities (e-mail addresses, @handles, names) to a person's note and remove others (a new
        person note when no one goes by ``name``): its ``identities`` only, one commit."""
        from ..features.people import write_identities

        return write_identities(self.store, name, add, remove, commit=commit)

    @answers
    def link(self, a: str, b: str, type: str = "related", reason: str | None = None, **options: Any) -> Change:
        """Add a typed link from note A to note B in A's frontmatter; B may be an entity (a name no note
        has, or ``entity=True``: it joins A's ``entities``) or a person's identity. Options: entity, commit."""
        from ..features.linking import link

        return link(self.store, a, b, type, reason, **options)

    @answers
    def unlink(self, a: str, b: str, type: str | None = None, *, commit: bool | None = None) -> Change:
        """Remove A's frontmatter links to B (only of ``type`` if given)."""
        from ..features.linking import unlink

        return unlink(self.store, a, b, type, commit=commit)

    @answers
    def similar(
        self, ref: str, limit: int = 10, *, vectors: bool = True, filters: FilterArgs | None = None, **given: Any
    ) -> SimilarNotes:
        """The notes most like ``ref`` by meaning (its vectors, when the index has them; no model runs)
        and by its distinctive words, fused; itself left out, those already linked with it marked
        (``SimilarNote.linked``). ``vectors`` False: words alone."""
        from ..features.similar import similar

        return similar(self.store, self.semantic if vectors else None, ref, limit, self.store.filters(filters, **given))

    def suggest_links(self, ref: str, limit: int = 3) -> list[LinkSuggestion]:
        """Similar notes ``ref`` does not link to yet, as ``mdmem link`` commands (nothing is written)."""
        from ..features.linking import suggest_links

        return suggest_links(self.store, self.semantic, ref, limit)

    def export_graph(
        self,
        fmt: str = "json",
        *,
        types: list[str] | None = None,
        entities: bool = True,
        external: bool = True,
        filters: FilterArgs | None = None,
        **given: Any,
    ) -> str:
        """The graph as json, dot or a self-contained html page (``external``: with the URLs, e-mail
        addresses, tickets, … notes cite, as nodes of their own)."""
        from ..features.connect import export_graph

        # Any filter given, even an empty one (include=[]), means only the notes retrieval would show.
        f = FilterArgs.of(filters, **given).to_dict() if filters is not None or given else None
        return export_graph(self.store, fmt, types=types, entities=entities, external=external, filters=f)
