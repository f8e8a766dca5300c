"""Notes read (get, multi_get), notes written (add, correct) and lifecycle changes (pin, …, history, sweep)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from ..links import Link as NoteLink  # a link as the note wrote it: target, type, label, heading, reason
from ..note import Note, Problem
from .base import Result, own, problems

# What an agent does not need of a note it reads whole: the file's text holds the body and headings.
MCP_NOTE_LEAVES_OUT = ("body", "problems", "headings")
CUT_MARK = "\n… (cut; raise max_chars for more)"


@dataclass(frozen=True, slots=True)
class NoteDoc(Result):
    """A parsed note with every field (``get --json``)."""

    id: str
    path: str
    title: str
    type: str = "note"
    status: str = "active"
    scope: str = "global"
    salience: float = 0.5
    confidence: float = 1.0
    pinned: bool = False
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    created: str | None = None
    updated: str | None = None
    authored: str | None = None
    snoozed_until: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    supersedes: str | None = None
    links: list[NoteLink] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # their texts
    problems: list[Problem] = field(default_factory=list)
    body: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(**{**own(cls, d), "links": [NoteLink(**x) for x in d.get("links", [])],
                      "problems": problems(d.get("problems", []))})


def note_doc(n: Note) -> NoteDoc:
    """A parsed note as a result."""
    return NoteDoc(
        id=n.id, path=n.path, title=n.title, type=n.type, status=n.status, scope=n.scope, salience=n.salience,
        confidence=n.confidence, pinned=n.pinned, tags=list(n.tags), aliases=list(n.aliases),
        entities=list(n.entities), created=n.created, updated=n.updated, authored=n.authored,
        snoozed_until=n.snoozed_until, valid_from=n.valid_from, valid_until=n.valid_until, supersedes=n.supersedes,
        links=list(n.links),
        headings=[h.text for h in n.headings], problems=list(n.problems), body=n.body,
    )


@dataclass(frozen=True, slots=True)
class NoteText(Result):
    """A note and its file's text, perhaps cut (``get``; MCP ``get``, whose shape ``to_dict()`` is)."""

    note: NoteDoc
    text: str
    truncated: bool = False

    @classmethod
    def cut(cls, note: NoteDoc, text: str, max_chars: int) -> Self:
        """The note with its text cut after ``max_chars`` characters, saying so."""
        cut = len(text) > max_chars
        return cls(note, text[:max_chars] + (CUT_MARK if cut else ""), cut)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.note.to_dict().items() if k not in MCP_NOTE_LEAVES_OUT}
        return {**d, "text": self.text, "truncated": self.truncated}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(NoteDoc.from_dict(d), d["text"], d["truncated"])


@dataclass(frozen=True, slots=True)
class MissingNote(Result):
    """A note asked for that could not be read, and why."""

    ref: str
    error: str


@dataclass(frozen=True, slots=True)
class NoteBatch(Result):
    """Several notes read at once, found or missing, in the order asked (MCP ``multi_get``)."""

    items: list[NoteText | MissingNote] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"notes": [i.to_dict() for i in self.items if isinstance(i, NoteText)],
                "missing": [i.to_dict() for i in self.items if isinstance(i, MissingNote)]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        """Found notes first, then missing ones: the dict does not keep the order asked."""
        found: list[NoteText | MissingNote] = [NoteText.from_dict(n) for n in d["notes"]]
        return cls(found + [MissingNote.from_dict(m) for m in d["missing"]])


# -- writing -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change(Result):
    """What a lifecycle command (pin, snooze, forget, restore, link, unlink, …) did to one note."""

    action: str
    id: str
    path: str
    title: str
    fields: dict[str, Any] = field(default_factory=dict)  # the keys set (None: removed); link/unlink: more
    commit: str | None = None
    changed: bool = True


@dataclass(frozen=True, slots=True)
class AddResult(Result):
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

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in Result.to_dict(self).items() if v is not None}


@dataclass(frozen=True, slots=True)
class DuplicateCheck(Result):
    """How a new note relates to the vault: ADD (new), UPDATE (a near duplicate) or NOOP (already there)."""

    decision: str
    reason: str
    matches: list[DuplicateMatch] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(d["decision"], d.get("reason", ""), [DuplicateMatch.from_dict(m) for m in d["matches"]])


@dataclass(frozen=True, slots=True)
class LinkSuggestion(Result):
    """A similar note the new one does not link to yet, with the command that would link them."""

    id: str
    path: str
    title: str
    similarity: float
    command: str


@dataclass(frozen=True, slots=True)
class AddReport(Result):
    """``add`` after its duplicate check: the note written (None: not written) and likely links."""

    check: DuplicateCheck
    added: AddResult | None = None
    suggested_links: list[LinkSuggestion] = field(default_factory=list)
    redacted: int | None = None  # secrets redacted: MCP reports it, the CLI says it on stderr

    @property
    def written(self) -> bool:
        return self.added is not None

    def to_dict(self) -> dict[str, Any]:
        if self.added is None:
            d = {**self.check.to_dict(), "written": False}
        else:
            d = {"decision": self.check.decision, "written": True, **self.added.to_dict(),
                 "matches": [m.to_dict() for m in self.check.matches],
                 "suggested_links": [s.to_dict() for s in self.suggested_links]}
        if self.redacted is not None:
            d["redacted"] = self.redacted
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        check = DuplicateCheck.from_dict(d)  # a written note's dict has no reason
        if not d["written"]:
            return cls(check, redacted=d.get("redacted"))
        links = [LinkSuggestion.from_dict(s) for s in d["suggested_links"]]
        return cls(check, AddResult.from_dict(d), links, d.get("redacted"))


@dataclass(frozen=True, slots=True)
class Correction(Result):
    """``correct``: the successor note and the old one's change (archived, pointing to its successor)."""

    new: AddResult
    old: Change
    redacted: int | None = None  # left out when None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"new": {"id": self.new.id, "path": self.new.path, "title": self.new.title},
                             "old": self.old.to_dict(), "commit": self.old.commit}
        if self.redacted is not None:
            d["redacted"] = self.redacted
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(AddResult.from_dict(d["new"]), Change.from_dict(d["old"]), d.get("redacted"))


# -- history and sweep -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogEntry(Result):
    """One commit in a file's git log."""

    commit: str
    date: str
    author: str
    subject: str


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
    git_log: list[LogEntry] = field(default_factory=list)  # newest first

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(**{**own(cls, d), "git_log": [LogEntry.from_dict(c) for c in d["git_log"]]})


@dataclass(frozen=True, slots=True)
class History(Result):
    """The version chain through a note, oldest first (``history``)."""

    note: str  # the path of the note asked about
    versions: list[Version] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(d["note"], [Version.from_dict(v) for v in d["versions"]])


@dataclass(frozen=True, slots=True)
class SweepRule(Result):
    """Which notes a sweep archives: active, unpinned, old, of low salience and of a type that decays."""

    min_age_days: float = 180.0
    max_salience: float = 0.3
    types: tuple[str, ...] = ("handoff", "progress", "conversation", "context", "note", "idea")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(**{**own(cls, d), "types": tuple(d["types"])})


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
class SweepReport(Result):
    """What ``sweep`` found and, when applied, archived."""

    rule: SweepRule
    applied: bool
    notes: list[SweepCandidate] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)  # paths

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(SweepRule.from_dict(d["rule"]), d["applied"], [SweepCandidate.from_dict(n) for n in d["notes"]],
                   list(d["archived"]))
