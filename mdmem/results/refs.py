"""Answers about what notes cite outside the vault and about people: refs, cites, person."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import FLAT, Answer, Result
from .graph import GraphNode, TimelineItem, flat


@dataclass(frozen=True, slots=True)
class RefItem(Result):
    """One reference of a note: its kind, canonical value, as written, and where (frontmatter or body)."""

    kind: str  # url | email | doi | ticket | path | handle | id | other
    value: str
    written: str
    origin: str  # frontmatter | body
    person: GraphNode | None = None  # the person note whose identity it is (left out when none)

    def data(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "value": self.value, "written": self.written, "origin": self.origin}
        if self.person is not None:
            d["person"] = self.person.to_dict()
        return d


@dataclass(frozen=True, slots=True)
class RefsAnswer(Answer):
    """A note's external references (``refs``)."""

    note: GraphNode
    refs: list[RefItem] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"note": self.note.to_dict(), "count": len(self.refs), "refs": [r.to_dict() for r in self.refs]}


@dataclass(frozen=True, slots=True)
class Citation(Result):
    """A note that cites a reference, with how it wrote it and where."""

    node: GraphNode = field(metadata=FLAT)
    written: str
    origin: str

    def data(self) -> dict[str, Any]:
        return flat(self.node, written=self.written, origin=self.origin)


@dataclass(frozen=True, slots=True)
class CitesAnswer(Answer):
    """The notes that cite a reference, however they wrote it (``cites``); ``similar``: cited values
    that contain it, when no note cites it."""

    ref: str  # as asked
    kind: str
    value: str  # what was matched
    notes: list[Citation] = field(default_factory=list)
    similar: list[str] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "value": self.value,
            "count": len(self.notes),
            "notes": [c.to_dict() for c in self.notes],
            "similar": list(self.similar),
        }


@dataclass(frozen=True, slots=True)
class PersonMention(Result):
    """A note about a person, its date, and each way it names them (``entities: @alice``, …)."""

    node: GraphNode = field(metadata=FLAT)
    date: str | None
    via: list[str] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return flat(self.node, date=self.date, via=list(self.via))


@dataclass(frozen=True, slots=True)
class PersonAnswer(Answer):
    """Who someone is (``person``): their note, identities and summary, the notes about them (by
    title) and their timeline (those notes with a date, oldest first); ``clashes``: identities
    another person note claims too, and which note they resolve to, and names in a note's prose that
    may be this person or another (counted for neither)."""

    name: str  # as asked
    person: GraphNode
    identities: list[str] = field(default_factory=list)
    summary: str = ""
    notes: list[PersonMention] = field(default_factory=list)
    timeline: list[TimelineItem] = field(default_factory=list)
    clashes: list[str] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "person": self.person.to_dict(),
            "identities": list(self.identities),
            "summary": self.summary,
            "count": len(self.notes),
            "notes": [n.to_dict() for n in self.notes],
            "timeline": [t.to_dict() for t in self.timeline],
            "clashes": list(self.clashes),
        }
