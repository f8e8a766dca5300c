"""What a vault answers, whether one vault (``Vault``) or several merged on one scale (``VaultSet``):
the ``Reader`` protocol both implement, and ``Ask``, one retrieval question that any reader answers
and that a warm server takes over the wire. The edges hold a ``Reader`` and never care which."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

if TYPE_CHECKING:
    from ..results.search import Hits, MemoryContext

Mode = Literal["search", "vsearch", "query", "recall"]
MODES: tuple[Mode, ...] = get_args(Mode)


class Reader(Protocol):
    """The reads a vault, or a set of vaults, answers. Filters are ``schema.FILTER_ARGS`` keywords."""

    def search(self, text: str, limit: int = 10, *, explain: bool = False, **filters: Any) -> Hits:
        """BM25: exact words, names and identifiers; no model is loaded."""
        ...

    def vsearch(self, text: str, limit: int = 10, *, explain: bool = False, **filters: Any) -> Hits:
        """Vectors: the notes closest in meaning."""
        ...

    def query(self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True, **filters: Any) -> Hits:
        """Hybrid: BM25 and vectors fused (``vectors`` False: BM25 alone, no model)."""
        ...

    def recall(
        self, text: str, limit: int = 10, *, explain: bool = False, vectors: bool = True, **filters: Any
    ) -> Hits:
        """Intent-routed retrieval: why, when, who, recent, or the hybrid query."""
        ...

    def context(
        self,
        prompt: str,
        budget: int = 600,
        *,
        scope: list[str] | None = None,
        vectors: bool | None = True,
        as_of: str | None = None,
    ) -> MemoryContext:
        """Memory for a prompt within ``budget`` tokens: pinned notes first, then the relevant ones."""
        ...


@dataclass(frozen=True, slots=True)
class Ask:
    """One retrieval question: the mode, the text, how many hits, whether to explain, the vector leg
    (query and recall) and the filters. ``of(reader)`` asks it; ``to_dict``/``from_dict`` carry it to
    a warm server and back."""

    mode: Mode
    text: str
    limit: int = 10
    explain: bool = False
    vectors: bool = True
    filters: dict[str, Any] = field(default_factory=dict)

    def of(self, reader: Reader) -> Hits:
        """The hits ``reader`` gives for this question."""
        match self.mode:
            case "search":
                return reader.search(self.text, self.limit, explain=self.explain, **self.filters)
            case "vsearch":
                return reader.vsearch(self.text, self.limit, explain=self.explain, **self.filters)
            case "query":
                return reader.query(self.text, self.limit, explain=self.explain, vectors=self.vectors, **self.filters)
            case "recall":
                return reader.recall(self.text, self.limit, explain=self.explain, vectors=self.vectors, **self.filters)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "text": self.text,
            "limit": self.limit,
            "explain": self.explain,
            "vectors": self.vectors,
            "filters": dict(self.filters),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ask:
        """The question ``d`` describes; an unknown mode is a ``ValueError``."""
        mode = d.get("mode")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
        return cls(
            mode,
            str(d["text"]),
            int(d.get("limit", 10)),
            bool(d.get("explain", False)),
            bool(d.get("vectors", True)),
            dict(d.get("filters") or {}),
        )
