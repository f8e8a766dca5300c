"""Notes read: get and multi_get (what notes were written and changed: ``changes``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Self

from ..core.links import Link as NoteLink  # a link as the note wrote it: target, type, label, heading, reason
from ..core.note import Note, NoteDates, Problem
from .base import FLAT, Answer, Result, from_keys

# What an agent does not need of a note it reads whole: the file's text holds the body and headings.
MCP_NOTE_LEAVES_OUT = ("body", "problems", "headings")
CUT_MARK = "\n… (cut; raise max_chars for more)"


@dataclass(frozen=True, slots=True)
class NoteDoc(Answer):
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
    created_from: str | None = None  # where created and updated came from: frontmatter, git or mtime
    updated_from: str | None = None
    snoozed_until: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    supersedes: str | None = None
    links: list[NoteLink] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # their texts
    problems: list[Problem] = field(default_factory=list)
    body: str = ""


def note_doc(n: Note, dates: NoteDates | None = None) -> NoteDoc:
    """A parsed note as a result; with ``dates`` (``Vault.dates``), created and updated are the ones
    the index goes by (the frontmatter's, else git's, else the file's) and say where each came from."""
    if dates is not None:
        return replace(
            note_doc(n),
            created=dates.created,
            updated=dates.updated,
            created_from=dates.created_from,
            updated_from=dates.updated_from,
        )
    return NoteDoc(
        id=n.id,
        path=n.path,
        title=n.title,
        type=n.type,
        status=n.status,
        scope=n.scope,
        salience=n.salience,
        confidence=n.confidence,
        pinned=n.pinned,
        tags=list(n.tags),
        aliases=list(n.aliases),
        entities=list(n.entities),
        created=n.created,
        updated=n.updated,
        authored=n.authored,
        snoozed_until=n.snoozed_until,
        valid_from=n.valid_from,
        valid_until=n.valid_until,
        supersedes=n.supersedes,
        links=list(n.links),
        headings=[h.text for h in n.headings],
        problems=list(n.problems),
        body=n.body,
    )


@dataclass(frozen=True, slots=True)
class NoteText(Answer):
    """A note and its file's text, perhaps cut (``get``; MCP ``get``, whose shape ``to_dict()`` is)."""

    note: NoteDoc = field(metadata=FLAT)  # the body, problems and headings left out: the text holds them
    text: str
    truncated: bool = False

    @classmethod
    def cut(cls, note: NoteDoc, text: str, max_chars: int) -> Self:
        """The note with its text cut after ``max_chars`` characters, saying so."""
        cut = len(text) > max_chars
        return cls(note, text[:max_chars] + (CUT_MARK if cut else ""), cut)

    def data(self) -> dict[str, Any]:
        d = {k: v for k, v in self.note.to_dict().items() if k not in MCP_NOTE_LEAVES_OUT}
        return {**d, "text": self.text, "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class MissingNote(Result):
    """A note asked for that could not be read, and why."""

    ref: str
    error: str


@dataclass(frozen=True, slots=True)
class NoteBatch(Answer):
    """Several notes read at once, found or missing, in the order asked (MCP ``multi_get``)."""

    # the JSON lists found notes, then missing ones: it does not keep the order asked
    items: list[NoteText | MissingNote] = field(default_factory=list, metadata=from_keys("notes", "missing"))

    def data(self) -> dict[str, Any]:
        return {
            "notes": [i.to_dict() for i in self.items if isinstance(i, NoteText)],
            "missing": [i.to_dict() for i in self.items if isinstance(i, MissingNote)],
        }
