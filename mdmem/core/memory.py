"""Pure memory semantics: what is eligible now, bounded priors, decay, query intent.

Relevance comes first (ClawMem measured direct queries' first answers fall far down when recency and
confidence were mixed into them; docs/retrieval.md), so on a direct query priors only break ties:
fused scores of neighbouring ranks differ by more than a prior may add (at most 1 % of the top).
They weigh more on recency-intent queries and in context injection.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DAY = 86400.0

# Half-lives in days (None: no decay). Decisions and preferences hold; handoffs go stale fast.
HALF_LIFE_DAYS: dict[str, float | None] = {
    "decision": None,
    "preference": None,
    "antipattern": None,
    "domain": None,
    "hub": None,
    "reference": None,
    "person": None,
    "fact": 365.0,
    "project": 180.0,
    "research": 180.0,
    "problem": 90.0,
    "feedback": 120.0,
    "idea": 120.0,
    "context": 60.0,
    "milestone": 180.0,
    "progress": 30.0,
    "conversation": 30.0,
    "handoff": 14.0,
    "note": 120.0,
}

PRIOR_WEIGHT = {"direct": 0.01, "recent": 0.5, "context": 0.3}
# Why-questions, two uses of the best matches: ``mdmem why`` shows the causal chains of this many
# matches; recall's why route lends score from only its top 5 hits to their causes (lending from 8
# lowered the gold set's why-question recall).
WHY_MATCHES = 8
RECALL_WHY_SEEDS = 5
SUPERSEDED_FACTOR = 0.5  # a superseded note keeps half its score and never outranks its successor


def superseded_scores(scores: Mapping[str, float], successors: Mapping[str, str]) -> dict[str, float]:
    """The scores after version chains: each note another note supersedes (``successors``: old → new)
    keeps ``SUPERSEDED_FACTOR`` of its score and, when its successor is listed, stays below it.
    Newest links first, so in v1 → v2 → v3 v2 is placed below v3 before v1 is placed below v2."""

    def depth(path: str) -> int:  # links from ``path`` to the head of its chain
        seen, n = {path}, 0
        while path in successors and successors[path] not in seen:
            path = successors[path]
            seen.add(path)
            n += 1
        return n

    out = dict(scores)
    for old in sorted(successors, key=lambda p: (depth(p), p)):
        new = successors[old]
        score = out[old] * SUPERSEDED_FACTOR
        if new in out and score >= out[new]:
            score = out[new] - 1e-6
        out[old] = score
    return out


@dataclass(frozen=True, slots=True)
class Visibility:
    """Which notes default retrieval may show; flags widen it."""

    now: float
    include_forgotten: bool = False
    include_archived: bool = False
    include_snoozed: bool = False
    include_expired: bool = False


def hidden_reason(row: Mapping[str, Any], vis: Visibility) -> str | None:
    """Why a catalogue row is hidden from default retrieval, or None if it may be shown."""
    from .note import iso_to_timestamp

    status = row.get("status", "active")
    if status == "forgotten" and not vis.include_forgotten:
        return "forgotten"
    if status == "archived" and not vis.include_archived:
        return "archived"
    snoozed = iso_to_timestamp(row.get("snoozed_until"))
    if snoozed is not None and snoozed > vis.now and not vis.include_snoozed:
        return f"snoozed until {row.get('snoozed_until')}"
    if not vis.include_expired:
        start = iso_to_timestamp(row.get("valid_from"))
        end = iso_to_timestamp(row.get("valid_until"))
        if start is not None and start > vis.now:
            return f"valid from {row.get('valid_from')}"
        if end is not None and end + (DAY if len(str(row.get("valid_until"))) == 10 else 0) <= vis.now:
            return f"expired {row.get('valid_until')}"
    return None


def recency(row: Mapping[str, Any], now: float) -> float:
    """0..1: how fresh the note is for its type (exponential decay by half-life; 1 if no decay)."""
    half = HALF_LIFE_DAYS.get(str(row.get("type")), HALF_LIFE_DAYS["note"])
    date = row.get("date")
    if half is None or date is None:
        return 1.0 if half is None else 0.5
    age_days = max(0.0, (now - float(date)) / DAY)
    return math.pow(0.5, age_days / half)


def prior(row: Mapping[str, Any], now: float, *, recent_intent: bool = False) -> dict[str, float]:
    """The prior's parts and total (0..1). Recency dominates for recency-intent queries."""
    salience, confidence = row.get("salience"), row.get("confidence")
    sal = float(salience) if salience is not None else 0.5
    conf = float(confidence) if confidence is not None else 1.0
    pin = 1.0 if row.get("pinned") else 0.0
    rec = recency(row, now) if not recent_intent else _freshness(row, now)
    w = (0.15, 0.15, 0.6, 0.1) if recent_intent else (0.4, 0.3, 0.2, 0.1)
    total = w[0] * sal + w[1] * pin + w[2] * rec + w[3] * conf
    return {
        "salience": round(sal, 3),
        "pinned": pin,
        "recency": round(rec, 3),
        "confidence": round(conf, 3),
        "prior": round(total, 4),
    }


def _freshness(row: Mapping[str, Any], now: float) -> float:
    """For "latest/last time" questions: newer is better regardless of type (30-day half-life)."""
    date = row.get("date")
    if date is None:
        return 0.0
    return math.pow(0.5, max(0.0, (now - float(date)) / DAY) / 30.0)


def parse_until(until: str | None, duration: str | None, today: dt.date | None = None) -> str:
    """A snooze end from ``--until DATE`` or ``--for 30d|2w|6m|1y``."""
    from .errors import MdmemError
    from .note import to_iso

    if bool(until) == bool(duration):
        raise MdmemError("Give exactly one of --until DATE or --for DURATION (e.g. 30d, 2w, 6m).")
    if until:
        iso = to_iso(until.strip())
        if iso is None:
            raise MdmemError(f"--until must be a date like 2026-12-31, got {until!r}.")
        return iso
    m = re.fullmatch(r"\s*(\d+)\s*([dwmy])\s*", duration or "")
    if not m:
        raise MdmemError(f"--for takes a number and d, w, m or y (e.g. 30d), got {duration!r}.")
    n, unit = int(m.group(1)), m.group(2)
    days = n * {"d": 1, "w": 7, "m": 30, "y": 365}[unit]
    return ((today or dt.date.today()) + dt.timedelta(days=days)).isoformat()


# -- intent --------------------------------------------------------------------------------------

# patterns, not compiled ones: re compiles (and caches) them on the first classify, off the import path
_INTENTS: tuple[tuple[str, str], ...] = (
    ("why", r"\b(why|reason|reasons|because|cause[ds]?|rationale|motivation|led to|warum|pourquoi)\b|为什么|なぜ"),
    (
        "recent",
        r"\b(latest|recent(ly)?|last time|newest|current(ly)?|now|most recent|these days|nowadays|this week|today|yesterday)\b",
    ),
    (
        "when",
        r"\b(when|what date|which day|how long ago|timeline|since when|(last|past) (week|month|year)|in (january|february|march|april|may|june|july|august|september|october|november|december))\b"
        # a year, but not one inside an identifier such as INV-2026-000123
        r"|(?<![\w-])(19|20)\d{2}(?![\w-])",
    ),
    (
        "who",
        r"\b(who|whom|whose|everything about|all about|tell me about|know about|what about|who is|who are)\b"
        # someone named by a handle or an e-mail address: "what did @alice decide"
        r"|(?<![\w@])@[A-Za-z]\w*|\b[\w.+-]+@[\w-]+\.[\w.-]+\b",
    ),
)


def classify(text: str) -> str:
    """The intent of a query: why, recent, when, who or general (first match wins)."""
    for name, pattern in _INTENTS:
        if re.search(pattern, text, re.I):
            return name
    return "general"


# -- newest first --------------------------------------------------------------------------------

# A question asks for the newest notes of one type when it says both: a recency word ("latest",
# "last", "yesterday", "now") and the type's name ("decisions", "handoff"). A session's record is its
# handoff, so "last session" and "what did we do" ask for handoffs. "conversation" is left out: in a
# chat log it names the medium every note shares, not a kind of memory.
_RECENCY_CUE = (
    r"\b(latest|newest|recent(ly)?|most recent|last|yesterday|today|tonight|this (morning|week|month)|"
    r"current(ly)?|now|these days|nowadays|so far)\b"
)
_ASKED_TYPES: tuple[tuple[str, str], ...] = (
    ("handoff", r"hand-?offs?|sessions?|what (did|have) (we|i) (do|done|work(ed)? on)|where did (we|i) leave off"),
    ("decision", r"decisions?|decided|decide"),
    ("preference", r"preferences?|prefer(red|s)?"),
    ("fact", r"facts?"),
    ("problem", r"problems?|incidents?|outages?|bugs?"),
    ("idea", r"ideas?"),
    ("feedback", r"feedback"),
    ("milestone", r"milestones?"),
    ("antipattern", r"anti-?patterns?"),
)


@dataclass(frozen=True, slots=True)
class NewestAsked:
    """What a recency question asks for: the newest notes of ``type``; ``said`` the words that asked
    (the recency cue and the type's name), which are no topic."""

    type: str
    said: tuple[str, ...]


def newest_asked(text: str) -> NewestAsked | None:
    """The type a question asks for newest first ("What are the latest decisions" → decision; "what
    did we do yesterday" → handoff), or None when it names no recency or no type (first type wins)."""
    cues = [m[0] for m in re.finditer(_RECENCY_CUE, text, re.I)]
    if not cues:
        return None
    for name, pattern in _ASKED_TYPES:
        named = [m[0] for m in re.finditer(r"\b(" + pattern + r")\b", text, re.I)]
        if named:
            return NewestAsked(name, (*cues, *named))
    return None
