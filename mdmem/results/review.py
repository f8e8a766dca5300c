"""The review queue: what needs judgement (possible contradictions, duplicates, related notes not
linked, expired or superseded notes still linked as current, stale handoffs), each with its evidence
and the commands that settle it; and what ``dismiss`` and ``supersede`` did."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Answer, Result
from .changes import Change


@dataclass(frozen=True, slots=True)
class ReviewNote(Result):
    """A note an item is about."""

    id: str
    path: str
    title: str
    type: str
    date: str | None = None  # the note's date (YYYY-MM-DD)


@dataclass(frozen=True, slots=True)
class ReviewItem(Result):
    """One thing to judge: its kind, the notes, why (evidence) and the commands that settle it; ``key``
    is what ``dismiss`` takes."""

    key: str
    kind: str  # contradiction | duplicate | unlinked | expired_linked | superseded_linked | stale_handoff
    summary: str
    notes: list[ReviewNote]
    evidence: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # the first one settles it as the evidence suggests
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class ReviewQueue(Answer):
    """``review``: the items, most pressing first, at most ``limit``; ``total`` found before the limit,
    ``dismissed`` left out because they were dismissed, ``scanned`` notes looked at."""

    items: list[ReviewItem]
    total: int = 0
    dismissed: int = 0
    scanned: int = 0
    dismissals: str = ""  # the file the dismissals are kept in, in the vault


@dataclass(frozen=True, slots=True)
class Dismissal(Answer):
    """``dismiss``: the item keys now dismissed (and those that already were), the file and its commit."""

    keys: list[str]
    already: list[str] = field(default_factory=list)
    path: str = ""
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class Superseded(Answer):
    """``supersede``: the note that replaces the others, the changes to it and to them, and the commit."""

    id: str
    path: str
    title: str
    changes: list[Change]
    commit: str | None = None
