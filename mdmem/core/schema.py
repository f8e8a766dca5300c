"""The vocabulary of the vault format and of retrieval: note types and statuses, the
date keys, what can be hidden, and the filters every read takes (``FilterArgs``). Only the standard
library's dataclasses, so the CLI can build its options from it without loading anything."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

TYPES = frozenset(
    """decision preference fact context idea feedback domain problem milestone research project
    progress handoff conversation antipattern hub reference person note""".split()
)
STATUSES = ("active", "archived", "forgotten")
DATE_KEYS = ("created", "updated", "authored", "snoozed_until", "valid_from", "valid_until")
# Notes default retrieval hides, each shown again by ``--include``.
INCLUDE_CHOICES = ("forgotten", "archived", "snoozed", "expired")


def _filter(default: Any, help: str, about: str, metavar: str = "", choices: tuple[str, ...] = ()) -> Any:
    """A ``FilterArgs`` field with what the CLI's ``--help`` says (``help``), what the model reads
    (``about``), the value's name in ``--help`` and its choices."""
    return field(default=default, metadata={"help": help, "about": about, "metavar": metavar, "choices": choices})


@dataclass(frozen=True, slots=True)
class FilterArgs:
    """The retrieval filters every read takes, as the CLI's options, the MCP tools' parameters and the
    Vault's arguments alike (each derived from these fields); ``IndexStore.filters`` judges them
    (``rank.Filters``). A tuple field is a list (a repeatable option); the others one value or None."""

    type: tuple[str, ...] = _filter(
        (),
        "Only notes of this type (repeatable: any of them).",
        "Only these note types, e.g. decision, preference, fact, problem, handoff.",
        "TYPE",
    )
    tag: tuple[str, ...] = _filter(
        (), "Only notes with this tag (repeatable: all of them).", "Only notes with all of these tags.", "TAG"
    )
    scope: tuple[str, ...] = _filter(
        (),
        "Only notes in this scope, e.g. project:acme, or topic:* for every topic (global notes always qualify).",
        "Only these scopes (e.g. project:acme, topic:* for every topic); global notes always qualify.",
        "SCOPE",
    )
    status: tuple[str, ...] = _filter(
        (), "Only notes with this status.", "Only notes with these statuses: active, archived, forgotten.", "", STATUSES
    )
    since: str | None = _filter(
        None,
        "Only notes dated on or after DATE (YYYY-MM-DD; a note without dates of its own: its last commit).",
        "Only notes dated on or after this day (YYYY-MM-DD); undated notes by their last commit.",
        "DATE",
    )
    until: str | None = _filter(
        None,
        "Only notes dated on or before DATE (YYYY-MM-DD).",
        "Only notes dated on or before this day (YYYY-MM-DD).",
        "DATE",
    )
    path: str | None = _filter(
        None,
        "Only notes under this folder or matching this glob.",
        "Only notes under this folder (e.g. projects/acme) or matching this glob (e.g. notes/*.md).",
        "FOLDER|GLOB",
    )
    include: tuple[str, ...] = _filter(
        (),
        "Also show notes hidden by default (repeatable).",
        "Also show notes hidden by default: forgotten, archived, snoozed, expired.",
        "",
        INCLUDE_CHOICES,
    )
    as_of: str | None = _filter(
        None,
        "Judge snoozes and validity at DATE instead of today.",
        "Judge snoozes and validity at this day (YYYY-MM-DD) instead of today.",
        "DATE",
    )

    @classmethod
    def of(cls, filters: FilterArgs | None = None, /, **given: Any) -> FilterArgs:
        """``filters`` with the keyword filters ``given`` set on it (a string or a list each; None,
        "" and empty lists are unset); an unknown name is a ``TypeError``."""
        base = filters if filters is not None else cls()
        if not given:
            return base
        lists = {f.name for f in fields(cls) if f.default == ()}
        unknown = set(given) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown filters: {', '.join(sorted(unknown))} (one of {', '.join(FILTER_ARGS)})")
        values = {k: _as_list(v) if k in lists else (v if v != "" else None) for k, v in given.items()}
        return cls(**{f.name: getattr(base, f.name) for f in fields(cls)} | values)

    def given(self) -> dict[str, Any]:
        """The filters that are set, by name (as ``to_dict`` without the unset ones)."""
        return {k: v for k, v in self.to_dict().items() if v not in (None, [])}

    def to_dict(self) -> dict[str, Any]:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> FilterArgs:
        return cls.of(**(d or {}))


def _as_list(v: Any) -> tuple[str, ...]:
    if v is None or v == "":
        return ()
    if isinstance(v, str):
        return (v,)
    return tuple(v)


# The filters' names, in the order the CLI lists them.
FILTER_ARGS = tuple(f.name for f in fields(FilterArgs))
# Edge types that mean "comes right before/after" (a conversation, a log, a series of notes): ``query``
# lends relevance along them (``config.QuerySettings.spread``). The causal types are in ``graph``.
SEQUENCE_EDGES = (
    "follows",
    "precedes",
    "next",
    "previous",
    "prev",
    "reply_to",
    "replies_to",
    "continues",
    "continued_by",
)
# The frontmatter keys ``mdmem set`` edits (the rest: the lifecycle commands, or the file itself).
SETTABLE = ("salience", "confidence", "pinned", "type", "tags", "scope", "valid_from", "valid_until")
