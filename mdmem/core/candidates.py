"""Pure: candidate memories in a session's transcript — decisions, preferences and facts said in so many
words ("we decided", "let's use", "I prefer", "always/never", a name with its value) — found by cue
phrases, without an LLM. The stop hook writes them into the session's handoff under ``## Candidates``
and the review queue lists each with the sentence and the command that saves it; nothing here becomes a
note by itself.

Every pattern is a plain alternation with bounded repeats (no nested quantifiers), run on sentences of
at most ``ITEM_CHARS`` characters: linear in the transcript whatever it holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .handoff import ITEM_CHARS, sentences

SECTION = "## Candidates"
KINDS = ("decision", "preference", "fact")
MAX_CANDIDATES = 8  # per session: the latest ones
TAIL_BYTES = 256 * 1024  # of the transcript read for candidates: the session's latest turns

_DECISION = re.compile(
    r"\b(we|i)( have| had|'ve)? decided\b|\bdecided (to|on|that)\b|\bdecision is\b|\bsettled on\b|"
    r"\blet'?s (use|go with|keep|switch to|stick with|adopt|drop|move to)\b|"
    r"\bwe('ll| will| are going to| should) (use|go with|keep|switch to|stick with|adopt|drop|move to)\b|"
    r"\b(going|go) with\b|\bwe chose\b|\bwe agreed\b|\bfrom now on\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\bi (really )?(prefer|like|dislike|hate|want|don'?t want|don'?t like)\b|\bi'?d rather\b|"
    r"\bmy preference\b|\b(please )?(always|never)\b|\bdon'?t ever\b",
    re.I,
)
# A fact worth keeping names something and its value: "the staging host is db2.internal",
# "tests run on port 5433", "the API lives in services/api".
_FACT_VERB = re.compile(
    r"\b(is|are|was|lives in|lives at|runs on|listens on|is at|located (in|at)|stored in|points to|"
    r"defaults to|requires)\b",
    re.I,
)
_IDENTIFIER = re.compile(
    r"`[^`\n]{2,80}`|\b[\w.-]{1,60}\.(com|org|net|io|dev|internal|local|py|ts|js|toml|yaml|yml|json|md)\b|"
    r"\b\d{1,3}(\.\d{1,3}){3}\b|\bport \d{2,5}\b|\bv?\d+\.\d+(\.\d+)?\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,40}\b|"
    r"\b[\w-]{1,40}/[\w./-]{1,80}"
)
_QUESTION = re.compile(r"\?\s*$")
_HEDGED = re.compile(r"\b(maybe|perhaps|should we|do we|could we|what if|not sure|i think|might)\b", re.I)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sentence of the session that may be worth a note of ``kind``."""

    kind: str  # decision | preference | fact
    text: str

    @property
    def digest(self) -> str:
        """What names the candidate in its review key: the same sentence, the same key in any handoff."""
        return hashlib.sha1(f"{self.kind}\n{self.text.casefold()}".encode()).hexdigest()[:10]


def kind_of(sentence: str, *, prompt: bool) -> str | None:
    """The kind of memory a sentence states, or None (a question, a hedge or no cue). Preferences are
    the person's (``prompt``); decisions and facts come from either side."""
    if _QUESTION.search(sentence) or _HEDGED.search(sentence):
        return None
    if _DECISION.search(sentence):
        return "decision"
    if prompt and _PREFERENCE.search(sentence):
        return "preference"
    if _FACT_VERB.search(sentence) and _IDENTIFIER.search(sentence):
        return "fact"
    return None


def find_candidates(turns: Iterable[tuple[str, bool]], limit: int = MAX_CANDIDATES) -> list[Candidate]:
    """The latest ``limit`` distinct candidates in ``turns`` ((text, is the person's prompt)), oldest first."""
    found: dict[str, Candidate] = {}
    for text, prompt in turns:
        for s in sentences(text):
            kind = kind_of(s, prompt=prompt)
            if kind is not None:
                c = Candidate(kind, s[:ITEM_CHARS])
                found.pop(c.text.casefold(), None)  # said again: counts as its latest
                found[c.text.casefold()] = c
    return list(found.values())[-limit:]


def section(cands: list[Candidate]) -> str:
    """The handoff's ``## Candidates`` section (empty without candidates)."""
    if not cands:
        return ""
    lines = [SECTION, "Not saved as notes; each is in mdmem review with the command that saves or dismisses it."]
    lines += [f"- {c.kind}: {c.text}" for c in cands]
    return "\n".join(lines) + "\n"


_LINE = re.compile(rf"^- (decision|preference|fact): (.{{1,{ITEM_CHARS + 8}}})$")


def parse_section(body: str) -> list[Candidate]:
    """The candidates a handoff's body lists (``section``'s form), in order."""
    start = body.find("\n" + SECTION + "\n")
    if start < 0 and not body.startswith(SECTION + "\n"):
        return []
    out = []
    for line in body[start + 1 if start >= 0 else 0 :].splitlines()[1:]:
        if line.startswith("## "):
            break
        m = _LINE.match(line.strip())
        if m:
            out.append(Candidate(m.group(1), m.group(2).strip()))
    return out
