"""Search results (search, vsearch, query, recall, the warm server) and the memory given as context."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .base import Answer, FromDict, Result


@dataclass(frozen=True, slots=True)
class LinkHint(Result):
    """A typed neighbour of a hit for an agent to follow (``graph_view.connection_hints``)."""

    type: str
    direction: str  # "out": the hit links to it; "in": it links to the hit
    id: str
    title: str
    kind: str = "note"  # note | entity
    reason: str | None = None  # left out when empty

    def data(self) -> dict[str, Any]:
        d = {"type": self.type, "direction": self.direction, "id": self.id, "title": self.title, "kind": self.kind}
        if self.reason:
            d["reason"] = self.reason
        return d


@dataclass(frozen=True, slots=True)
class Hit(Result):
    """One search result: a note, its score and the passage that matched."""

    id: str
    path: str
    title: str
    score: float
    snippet: str = ""
    type: str = "note"
    tags: list[str] = field(default_factory=list)
    scope: str = "global"
    date: str | None = None
    explain: dict[str, Any] | None = None  # the score's parts (--explain); left out when None
    links: list[LinkHint] | None = None  # connection hints (query, recall); left out when None
    vault: str | None = None  # the vault's name in an answer across vaults (``id`` is then NAME:id); else left out

    def data(self) -> dict[str, Any]:
        d = {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "score": self.score,
            "snippet": self.snippet,
            "type": self.type,
            "tags": list(self.tags),
            "scope": self.scope,
            "date": self.date,
        }
        if self.vault is not None:
            d["vault"] = self.vault
        if self.explain is not None:
            d["explain"] = dict(self.explain)
        if self.links is not None:
            d["links"] = [h.to_dict() for h in self.links]
        return d


class Hits(list[Hit], FromDict):
    """Hits in rank order, with the query and ``info`` (stages, coverage, intent); a list, as hits were before."""

    __slots__ = ("info", "query", "warnings")

    def __init__(
        self,
        results: Iterable[Hit] = (),
        query: str = "",
        info: dict[str, Any] | None = None,
        *,
        warnings: Iterable[str] = (),
    ) -> None:
        super().__init__(results)
        self.query = query
        self.info: dict[str, Any] = dict(info or {})
        self.warnings: tuple[str, ...] = tuple(warnings)  # as an ``Answer``'s

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"query": self.query, "count": len(self), "results": [h.to_dict() for h in self]}
        if self.info:
            d["info"] = self.info
        if self.warnings:
            d["warnings"] = list(self.warnings)
        return d


@dataclass(frozen=True, slots=True)
class ContextItem(Result):
    """A note given as context, and why."""

    id: str
    path: str
    title: str
    type: str
    why: str  # pinned | relevant
    score: float | None
    vault: str | None = None  # the vault's name in a context across vaults (``id`` is then NAME:id); else left out
    explain: dict[str, Any] | None = None  # the ranking's signals (asked for by a merge across vaults); else left out

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "type": self.type,
            "why": self.why,
            "score": self.score,
        }
        if self.vault is not None:
            d["vault"] = self.vault
        if self.explain is not None:
            d["explain"] = dict(self.explain)
        return d


@dataclass(frozen=True, slots=True)
class MemoryContext(Answer):
    """The memory for a prompt within a token budget (``context``; the prompt hook)."""

    text: str
    tokens: int
    budget: int
    items: list[ContextItem] = field(default_factory=list)
    intent: str | None = None
    ms: float = 0.0
    vectors: bool = False  # whether the vector leg ran (else BM25 alone)
    vaults: list[str] | None = None  # across vaults: their names (else left out)
    skipped: list[dict[str, str]] | None = None  # across vaults: those left out, and why (else left out)

    def data(self) -> dict[str, Any]:
        d = {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "items": [i.to_dict() for i in self.items],
            "intent": self.intent,
            "ms": self.ms,
            "vectors": self.vectors,
        }
        if self.vaults is not None:
            d["vaults"] = list(self.vaults)
        if self.skipped:
            d["skipped"] = [dict(s) for s in self.skipped]
        return d


@dataclass(frozen=True, slots=True)
class SimilarNote(Result):
    """A note like another one (``similar``): fused rank of meaning and distinctive words."""

    id: str
    path: str
    title: str
    type: str
    score: float  # the fused score (weighted RRF of the two lists)
    shared: float  # the share of the note's words this one holds too
    words: int  # how many of them
    cosine: float | None = None  # of the two notes' vectors, when both have them
    linked: str | None = None  # already linked: "out" (the note links to it), "in", "both"; else None


@dataclass(frozen=True, slots=True)
class SimilarNotes(Answer):
    """The notes most like one note, itself left out (``similar``)."""

    id: str
    path: str
    title: str
    results: list[SimilarNote] = field(default_factory=list)
    vectors: bool = False  # whether its vectors took part (else words alone)


@dataclass(frozen=True, slots=True)
class Profile(Answer):
    """The standing facts and the recent context, within ``budget`` tokens (``profile``); each item's
    ``why`` says its section: standing or recent."""

    text: str
    tokens: int
    budget: int
    items: list[ContextItem] = field(default_factory=list)
    omitted: int = 0  # notes that qualified but did not fit the budget
