"""What a vault answers, whether one vault (``Vault``) or several merged on one scale (``VaultSet``):
the ``Reader`` protocol both implement, and ``Ask``, one retrieval question that any reader answers
and that a warm server takes over the wire. The edges hold a ``Reader`` and never care which."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from ..core.schema import FilterArgs

if TYPE_CHECKING:
    from ..results.search import Hits, MemoryContext

Mode = Literal["search", "vsearch", "query", "recall"]
MODES: tuple[Mode, ...] = get_args(Mode)


class Reader(Protocol):
    """The reads a vault, or a set of vaults, answers: a retrieval question (``Ask``), the memory for a
    prompt and the status."""

    def ask(self, question: Ask) -> Hits:
        """The hits for ``question``: search (BM25), vsearch (vectors), query (hybrid) or recall
        (intent-routed)."""
        ...

    def status(self) -> Any:
        """The vault's status (``VaultStatus``), or each vault's (``VaultStatuses``)."""
        ...

    def context(
        self,
        prompt: str,
        budget: int = 600,
        *,
        scope: list[str] | None = None,
        vectors: bool | None = True,
        as_of: str | None = None,
        explain: bool = False,
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
    filters: FilterArgs = field(default_factory=FilterArgs)

    def of(self, reader: Reader) -> Hits:
        """The hits ``reader`` gives for this question."""
        return reader.ask(self)

    def of_vault(self, vault: Any) -> Hits:
        """The hits one ``Vault`` gives: its method for the mode, asked with this question's arguments
        (``Vault.ask``; the type is not named, as the vault module imports this one)."""
        match self.mode:
            case "search":
                return vault.search(self.text, self.limit, filters=self.filters, explain=self.explain)
            case "vsearch":
                return vault.vsearch(self.text, self.limit, filters=self.filters, explain=self.explain)
            case "query":
                return vault.query(
                    self.text, self.limit, filters=self.filters, explain=self.explain, vectors=self.vectors
                )
            case "recall":
                return vault.recall(
                    self.text, self.limit, filters=self.filters, explain=self.explain, vectors=self.vectors
                )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "text": self.text,
            "limit": self.limit,
            "explain": self.explain,
            "vectors": self.vectors,
            "filters": self.filters.given(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Ask:
        """The question ``d`` describes; an unknown mode is a ``ValueError``, an unknown filter a ``TypeError``."""
        mode = d.get("mode")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
        return cls(
            mode,
            str(d["text"]),
            int(d.get("limit", 10)),
            bool(d.get("explain", False)),
            bool(d.get("vectors", True)),
            FilterArgs.from_dict(d.get("filters")),
        )
