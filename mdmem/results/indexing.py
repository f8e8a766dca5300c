"""What the index writers report: reindex and embed.

Apart from the other reports because every commit's hook builds a ``ReindexReport``: it loads these two
types, not a dozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.note import Problem
from .base import Answer


@dataclass(frozen=True, slots=True)
class ReindexReport(Answer):
    """What a reindex did."""

    full: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    commit: str | None = None
    reason: str = ""  # why it was a full rebuild

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.updated) + len(self.deleted)


@dataclass(frozen=True, slots=True)
class EmbedReport(Answer):
    """What ``embed`` did."""

    model: str
    embedded: int = 0  # chunks run through the model
    reused: int = 0  # chunks whose vector came from the cache
    removed: int = 0
    done: int = 0  # chunks with a vector now
    total: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    runtime: str | None = None  # what ran the model: "onnx" or "torch" (None: nothing was embedded)
    threads: int | None = None
    from_pack: int = 0  # chunks whose vector came from a fetched vector pack
