"""Every public answer of mdmem as a typed record with ``to_dict()``: what the Python API returns,
what ``--json`` prints and what MCP sends (``render`` turns them into text)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .note import Problem


@dataclass(frozen=True, slots=True)
class Hit:
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
    explain: dict[str, Any] | None = None
    links: list[dict[str, Any]] | None = None  # connection hints: a few typed neighbours to follow

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("explain", "links"):
            if d[key] is None:
                del d[key]
        return d


@dataclass(slots=True)
class ReindexReport:
    """What a reindex did."""

    full: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    commit: str | None = None
    reason: str = ""

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.updated) + len(self.deleted)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["problems"] = [asdict(p) for p in self.problems]
        return d


@dataclass(frozen=True, slots=True)
class AddResult:
    """The note ``add`` wrote."""

    id: str
    path: str
    title: str
    commit: str | None


@dataclass(slots=True)
class Change:
    """What a lifecycle command did to one note."""

    action: str
    id: str
    path: str
    title: str
    fields: dict[str, Any] = field(default_factory=dict)
    commit: str | None = None
    changed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class EmbedReport:
    """What ``embed`` did."""

    model: str
    embedded: int = 0  # chunks run through the model
    reused: int = 0  # chunks whose vector came from the cache
    removed: int = 0
    done: int = 0  # chunks with a vector now
    total: int = 0
    interrupted: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]
