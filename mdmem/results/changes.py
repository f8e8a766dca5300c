"""Notes written and changed: add (with its duplicate check and link suggestions), correct, the
lifecycle changes (pin, snooze, forget, restore, link, …), history and sweep."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import FLAT, Answer, Result


@dataclass(frozen=True, slots=True)
class Change(Answer):
    """What a lifecycle command (pin, snooze, forget, restore, link, unlink, …) did to one note."""

    action: str
    id: str
    path: str
    title: str
    fields: dict[str, Any] = field(default_factory=dict)  # the keys set (None: removed); link/unlink: more
    commit: str | None = None
    changed: bool = True


@dataclass(frozen=True, slots=True)
class AddResult(Answer):
    """The note ``add`` wrote."""

    id: str
    path: str
    title: str
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class DuplicateMatch(Result):
    """An existing note like a new one: the same text (``similarity``) or close (``lexical``, ``cosine``)."""

    id: str
    path: str
    title: str
    similarity: float | None = None  # these three are left out when None
    lexical: float | None = None
    cosine: float | None = None
    evidence: list[str] = field(default_factory=list)  # why it may contradict the new note (left out when empty)

    def data(self) -> dict[str, Any]:
        return {k: v for k, v in Result.data(self).items() if v is not None and v != []}


@dataclass(frozen=True, slots=True)
class DuplicateCheck(Result):
    """How a new note relates to the vault: ADD (new), UPDATE (a near duplicate) or NOOP (already there)."""

    decision: str
    reason: str = ""  # a written note's JSON has none
    matches: list[DuplicateMatch] = field(default_factory=list)
    contradicts: list[DuplicateMatch] = field(default_factory=list)  # active notes it may disagree with

    def data(self) -> dict[str, Any]:
        d = Result.data(self)
        if not self.contradicts:
            del d["contradicts"]
        return d


@dataclass(frozen=True, slots=True)
class LinkSuggestion(Result):
    """A similar note the new one does not link to yet, with the command that would link them."""

    id: str
    path: str
    title: str
    similarity: float
    command: str


@dataclass(frozen=True, slots=True)
class AddReport(Answer):
    """``add`` after its duplicate check: the note written (None: not written), or the near duplicate
    that took its text (``updated``), and likely links."""

    check: DuplicateCheck = field(metadata=FLAT)
    added: AddResult | None = field(default=None, metadata=FLAT)
    suggested_links: list[LinkSuggestion] = field(default_factory=list)
    redacted: int | None = None  # secrets redacted: MCP reports it, the CLI says it on stderr
    updated: Change | None = None

    @property
    def written(self) -> bool:
        return self.added is not None

    def data(self) -> dict[str, Any]:
        if self.added is None:
            d = {**self.check.to_dict(), "written": self.updated is not None and self.updated.changed}
        else:
            d = {
                "decision": self.check.decision,
                "written": True,
                **self.added.to_dict(),
                "matches": [m.to_dict() for m in self.check.matches],
                "suggested_links": [s.to_dict() for s in self.suggested_links],
            }
            if self.check.contradicts:
                d["contradicts"] = [m.to_dict() for m in self.check.contradicts]
        if self.updated is not None:
            d["updated"] = self.updated.to_dict()
        if self.redacted is not None:
            d["redacted"] = self.redacted
        return d


@dataclass(frozen=True, slots=True)
class Correction(Answer):
    """``correct``: the successor note and the old one's change (archived, pointing to its successor)."""

    new: AddResult
    old: Change
    redacted: int | None = None  # left out when None

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "new": {"id": self.new.id, "path": self.new.path, "title": self.new.title},
            "old": self.old.to_dict(),
            "commit": self.old.commit,
        }
        if self.redacted is not None:
            d["redacted"] = self.redacted
        return d


# -- history and sweep -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogEntry(Result):
    """One commit in a file's git log."""

    commit: str
    date: str
    author: str
    subject: str
    diff: str | None = None  # ``history --diff``: what this commit changed in the note (unified diff)

    def data(self) -> dict[str, Any]:
        d = Result.data(self)
        if self.diff is None:
            del d["diff"]
        return d


@dataclass(frozen=True, slots=True)
class Version(Result):
    """One note in a version chain."""

    id: str
    path: str
    title: str
    status: str
    created: str | None
    updated: str | None
    supersedes: str | None
    current: bool
    git_log: list[LogEntry] = field(default_factory=list)  # newest first; the newest ``History.limit``
    commits: int = 0  # how many commits touched the file in all (git_log may show fewer)

    @property
    def truncated(self) -> bool:
        """True when ``git_log`` shows only the newest of the file's commits."""
        return self.commits > len(self.git_log)

    def data(self) -> dict[str, Any]:
        return {**Result.data(self), "truncated": self.truncated}  # slots: no zero-argument super()


@dataclass(frozen=True, slots=True)
class History(Answer):
    """The version chain through a note, oldest first (``history``)."""

    note: str  # the path of the note asked about
    versions: list[Version] = field(default_factory=list)
    limit: int | None = None  # commits shown per version at most (None: all)


@dataclass(frozen=True, slots=True)
class Revision(Result):
    """A note as a commit left it: the commit and the note's path then (vault-relative)."""

    commit: str
    date: str
    author: str
    subject: str
    path: str


@dataclass(frozen=True, slots=True)
class NoteDiff(Answer):
    """What changed in a note between two versions (``diff``): ``old`` None: nothing before (its first
    version); ``new`` None: the file as it is now (edits not committed included)."""

    id: str
    path: str
    title: str
    old: Revision | None
    new: Revision | None
    diff: str  # unified diff, "" when the two are the same
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class NoteAt(Answer):
    """A note's text as it was in a commit (``show NOTE@REV``); ``id`` and ``title`` are today's."""

    id: str
    title: str
    rev: str  # as asked for (HEAD~2, a tag, a sha)
    revision: Revision
    text: str


@dataclass(frozen=True, slots=True)
class SweepRule(Result):
    """Which notes a sweep archives: active, unpinned, old, of low salience and of a type that decays."""

    min_age_days: float = 180.0
    max_salience: float = 0.3
    types: tuple[str, ...] = ("handoff", "progress", "conversation", "context", "note", "idea")


@dataclass(frozen=True, slots=True)
class SweepCandidate(Result):
    """A note a sweep archives (or would)."""

    id: str
    path: str
    title: str
    type: str
    salience: float | None
    age_days: int


@dataclass(frozen=True, slots=True)
class SweepReport(Answer):
    """What ``sweep`` found and, when applied, archived."""

    rule: SweepRule
    applied: bool
    notes: list[SweepCandidate] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)  # paths


@dataclass(frozen=True, slots=True)
class Written(Answer):
    """Notes and files written in one go (an import's batch, a new vault's files): the paths new and
    updated, how many were already there as they are, and the commit (None: not committed)."""

    new: list[str]
    updated: list[str]
    skipped: int
    commit: str | None
