"""Time phrases in a query → a time window (pure).

``window(text, now)`` finds the first phrase of a query that names a time — a calendar one ("March
2026", "in 2025", "autumn 2025", "between 12 and 18 October 2025", "2025-10-14") or one relative to
``now`` ("yesterday", "3 days ago", "last week", "this month", "in March", "since Monday", "the past 10
days") — and returns it as a ``Window``: the half-open span ``[start, end)`` in Unix seconds (UTC days),
the words that named it and what it was measured from. "before X", "after X", "since X" and "until X"
with an X that is not a date ("before the migration") leave ``anchor`` = X: the caller dates it (by the
note about it) and calls ``around_anchor``. English only.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

MONTHS = {
    m: i
    for i, m in enumerate(
        ("january february march april may june july august september october november december").split(), 1
    )
}
_MON = {**MONTHS, **{m[:3]: i for m, i in MONTHS.items()}, "sept": 9}
DAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_NUM = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUM.update({"a": 1, "an": 1, "a couple of": 2, "a few": 3, "several": 3})
UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 31, "year": 366}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month; three months each
_DAY = 86400.0

_MONTH_RE = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_YEAR_RE = r"(?<![\w-])((?:19|20)\d{2})(?![\w-])"  # not the year in INV-2026-000123
_N_RE = r"(\d{1,3}|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT_RE = r"(day|week|fortnight|month|year)s?"
_DAY_RE = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"


@dataclass(frozen=True)
class Window:
    """A span of time a query names: ``[start, end)`` in Unix seconds (None: open on that side)."""

    start: float | None
    end: float | None
    phrase: str  # the query's words that named it
    source: str  # "calendar", "relative to 2026-11-29", "anchor …"
    anchor: str | None = None  # "before the migration": the words to date by a note ("the migration")
    side: str | None = None  # for an anchor: "before", "after" (since) or "until"

    def contains(self, ts: float | None) -> bool:
        if ts is None:
            return False
        return (self.start is None or ts >= self.start) and (self.end is None or ts < self.end)

    def describe(self) -> dict[str, str | None]:
        """What ``--explain`` shows: the span as ISO days (end inclusive), the phrase and its source."""

        def day(ts: float | None, shift: float = 0.0) -> str | None:
            return None if ts is None else dt.datetime.fromtimestamp(ts + shift, dt.UTC).date().isoformat()

        return {"from": day(self.start), "to": day(self.end, -1.0), "phrase": self.phrase, "source": self.source}


def _midnight(d: dt.date) -> float:
    return dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC).timestamp()


def _month_span(year: int, month: int, months: int = 1) -> tuple[float, float]:
    end_m = month - 1 + months
    return _midnight(dt.date(year, month, 1)), _midnight(dt.date(year + end_m // 12, end_m % 12 + 1, 1))


def _n(word: str) -> int:
    w = word.lower()
    return int(w) if w.isdigit() else _NUM.get(w, 1)


def _last_month_named(month: int, today: dt.date) -> int:
    """The year of the latest ``month`` that has begun by ``today`` ("in March" said in November)."""
    return today.year if month <= today.month else today.year - 1


def strip(text: str, phrase: str) -> str:
    """The query without the time phrase (and a preposition left dangling before it)."""
    i = text.lower().find(phrase.lower())
    if i < 0:
        return text
    head = re.sub(r"\b(in|on|during|from|of|at|since|before|after|until|between)\s*$", "", text[:i], flags=re.I)
    return " ".join((head + " " + text[i + len(phrase) :]).split())


# What a question about a time says besides the time and its topic ("what did I learn about SQLite
# last year": only SQLite is its topic), as index terms (stemmed): matched as content, these words padded
# a window with every note that happened to use them.
# Words that ask for a kind of event rather than a topic ("what problems did we hit", "what did the team
# ship or decide", "incidents in January") count as such words too: the window's notes are the answer.
QUESTION_WORDS = frozenset(
    """happen do done doing anyth everyth someth thing work learn learnt write wrote
    note go went get got make made new chang about up on talk said say tell wa been last week month year day time
    past recent ago start begin end earli late middl team we us our ship shipped decid decis problem issu incid
    hit fix fixed releas""".split()
)


def named_in(phrase: str) -> str:
    """The words of a time phrase that name a month, a season or a day ("in June" → "June"): notes
    say those in words ("we went camping in June"), unlike "last", "ago" or "this week"."""
    return " ".join(
        w for w in re.findall(r"[A-Za-z]+", phrase) if w.lower() in _MON or w.lower() in SEASONS or w.lower() in DAYS
    )


def topic_terms(text: str) -> list[str]:
    """The index terms of a time question (its time phrase already stripped) that name its topic:
    ``[]`` when it asks for whatever the window holds ("what happened last month")."""
    from .text import terms

    return [t for t in terms(text) if t not in QUESTION_WORDS and not t.isdigit()]


def topic_text(text: str) -> str:
    """The words of a time question (its time phrase already stripped) that name its topic, as
    written: "what did I learn about SQLite" → "SQLite"; "" when it has none."""
    from .text import tokenize

    keep = [text[t.start : t.end] for t in tokenize(text) if t.text not in QUESTION_WORDS and not t.text.isdigit()]
    return " ".join(dict.fromkeys(keep))


def window(text: str, now: float | None) -> Window | None:
    """The time window the query names, or None (see the module's doc). Relative phrases need ``now``."""
    w = _explicit(text, now)
    if w is not None:
        return _opened(text, w, now)
    return _relative(text, now) or _anchor(text, now)


def _opened(text: str, w: Window, now: float | None) -> Window:
    """ "since 2025", "before March 2026": a calendar window opened on one side by the word before it."""
    i = text.lower().find(w.phrase.lower())
    m = re.search(r"\b(since|after|from|before|until|till|prior to)\s*$", text[:i], re.I) if i >= 0 else None
    if not m or w.start is None or w.end is None:
        return w
    side, phrase = m[1].lower(), text[m.start(1) : i + len(w.phrase)]
    # The named span stays in: a note is dated when it was written, and what happened "the week before
    # 3 August" is written down on 3 August (LoCoMo: 6 such questions lost their answer without it).
    if side in ("since", "after", "from"):
        end = max(w.end, _midnight(_today(now)) + _DAY) if now is not None else None
        return Window(w.start, end, phrase, w.source)
    return Window(None, w.end, phrase, w.source)


def _explicit(text: str, now: float | None) -> Window | None:
    """Calendar phrases, most specific first."""
    cal = "calendar"
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text)
    if m:
        try:
            d = dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            d = None
        if d is not None:
            return Window(_midnight(d), _midnight(d) + _DAY, m[0], cal)
    m = re.search(
        r"\bbetween (\d{1,2})(?:st|nd|rd|th)? and (\d{1,2})(?:st|nd|rd|th)? " + _MONTH_RE + r"\s+" + _YEAR_RE,
        text,
        re.I,
    )
    if m:
        month, year = _MON[m[3].lower()], int(m[4])
        try:
            a, b = dt.date(year, month, int(m[1])), dt.date(year, month, int(m[2]))
            return Window(_midnight(a), _midnight(b) + _DAY, m[0], cal)
        except ValueError:
            pass
    m = re.search(r"\b(first|second|third|fourth|last) week of " + _MONTH_RE + r"(?:\s+" + _YEAR_RE + ")?", text, re.I)
    if m and (m[3] or now is not None):
        month = _MON[m[2].lower()]
        year = int(m[3]) if m[3] else _last_month_named(month, _today(now))
        start_ts, end_ts = _month_span(year, month)
        k = ("first", "second", "third", "fourth").index(m[1].lower()) if m[1].lower() != "last" else None
        start = start_ts + 7 * _DAY * k if k is not None else end_ts - 7 * _DAY
        return Window(start, start + 7 * _DAY, m[0], cal if m[3] else _rel(now))
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?" + _MONTH_RE + r",?\s+" + _YEAR_RE, text, re.I) or re.search(
        r"\b" + _MONTH_RE + r" (\d{1,2})(?:st|nd|rd|th)?,?\s+" + _YEAR_RE, text, re.I
    )
    if m:
        day, mon = (m[1], m[2]) if m[1].isdigit() else (m[2], m[1])
        try:
            d = dt.date(int(m[3]), _MON[mon.lower()], int(day))
            return Window(_midnight(d), _midnight(d) + _DAY, m[0], cal)
        except ValueError:
            pass
    m = re.search(r"\b" + _MONTH_RE + r",?\s+" + _YEAR_RE, text, re.I)
    if m:
        return Window(*_month_span(int(m[2]), _MON[m[1].lower()]), m[0], cal)
    m = re.search(r"\b(spring|summer|autumn|fall|winter) (?:of )?" + _YEAR_RE, text, re.I)
    if m:
        first, year = SEASONS[m[1].lower()], int(m[2])
        return Window(*_month_span(year, first, 3), m[0], cal)  # winter 2025: Dec 2025 - Feb 2026
    m = re.search(r"\b(?:the )?(start|beginning|early|end|late|middle|mid)(?: of)?[ -]" + _YEAR_RE, text, re.I)
    if m:
        first = {"start": 1, "beginning": 1, "early": 1, "middle": 5, "mid": 5}.get(m[1].lower(), 10)
        return Window(*_month_span(int(m[2]), first, 3), m[0], cal)
    m = re.search(r"\b(?:in |during |of )?" + _YEAR_RE, text, re.I)
    if m:
        return Window(*_month_span(int(m[1]), 1, 12), m[0].strip(), cal)
    return None


def _today(now: float | None) -> dt.date:
    return dt.datetime.fromtimestamp(now or 0.0, dt.UTC).date()


def _rel(now: float | None) -> str:
    return f"relative to {_today(now).isoformat()}"


def _relative(text: str, now: float | None) -> Window | None:
    """Phrases measured from ``now``."""
    if now is None:
        return None
    today = _today(now)
    t0 = _midnight(today)
    rel = _rel(now)
    m = re.search(r"\b(the day before yesterday|yesterday|today|tonight|this morning)\b", text, re.I)
    if m:
        back = {"the day before yesterday": 2, "yesterday": 1}.get(m[1].lower(), 0)
        return Window(t0 - back * _DAY, t0 - (back - 1) * _DAY, m[0], rel)
    # not "4 years ago": an event that far back is recounted in notes written since, not dated then
    m = re.search(r"\b" + _N_RE + r" (day|week|fortnight|month)s? ago\b", text, re.I)
    if m:
        n, unit = _n(m[1]), m[2].lower()
        if unit == "day":  # that day, give or take one
            return Window(t0 - (n + 1) * _DAY, t0 - (n - 2) * _DAY, m[0], rel)
        span = UNIT_DAYS[unit] * _DAY
        center = t0 - n * span
        return Window(center - span / 2, center + span / 2 + _DAY, m[0], rel)
    m = re.search(
        r"\b(?:in |over |during |within )?the (?:last|past) " + _N_RE + r" " + _UNIT_RE + r"\b", text, re.I
    ) or re.search(
        r"\b(?:in |over |during )?(?:the )?(?:last|past) (\d{1,3}|two|three|four|five|six|seven|"
        r"eight|nine|ten|eleven|twelve|few|couple of) " + _UNIT_RE + r"\b",
        text,
        re.I,
    )
    if m:
        n = _n({"few": "a few", "couple of": "a couple of"}.get(m[1].lower(), m[1]))
        return Window(t0 - n * UNIT_DAYS[m[2].lower()] * _DAY, t0 + _DAY, m[0], rel)
    m = re.search(r"\b(last|past|this) (week|month|year|quarter)\b", text, re.I)
    if m:
        which, unit = m[1].lower(), m[2].lower()
        if which == "past":
            days = {"week": 7, "month": 31, "year": 366, "quarter": 92}[unit]
            return Window(t0 - days * _DAY, t0 + _DAY, m[0], rel)
        back = which == "last"
        if unit == "week":
            monday = today - dt.timedelta(days=today.weekday() + 7 * back)
            return Window(_midnight(monday), _midnight(monday) + 7 * _DAY, m[0], rel)
        if unit == "year":
            return Window(*_month_span(today.year - back, 1, 12), m[0], rel)
        months = 3 if unit == "quarter" else 1
        first = (today.month - 1) // months * months  # 0-based first month of this month/quarter
        index = today.year * 12 + first - months * back
        return Window(*_month_span(index // 12, index % 12 + 1, months), m[0], rel)
    m = re.search(r"\b(since|after|before|until) (?:last )?" + _DAY_RE + r"\b", text, re.I) or re.search(
        r"\b(on|last|this) " + _DAY_RE + r"\b", text, re.I
    )
    if m:
        back = (today.weekday() - DAYS[m[2].lower()]) % 7 or (7 if m[1].lower() in ("last", "before") else 0)
        day = _midnight(today - dt.timedelta(days=back))
        side = m[1].lower()
        if side in ("since", "after"):
            return Window(day + (_DAY if side == "after" else 0.0), t0 + _DAY, m[0], rel)
        if side in ("before", "until"):
            return Window(None, day + (_DAY if side == "until" else 0.0), m[0], rel)
        return Window(day, day + _DAY, m[0], rel)
    names = "(" + "|".join(MONTHS) + ")"
    m = re.search(
        r"\b(since|before|after|until|in|during|from|of) " + names + r"\b(?![ ,]*\d)", text, re.I
    ) or re.search(r"\b(early|late|mid)[ -]" + names + r"\b(?![ ,]*\d)", text, re.I)
    if m:
        month = _MON[m[2].lower()]
        start, end = _month_span(_last_month_named(month, today), month)
        side = m[1].lower()
        if side in ("since", "after", "from"):
            return Window(start if side != "after" else end, t0 + _DAY, m[0], rel)
        if side in ("before", "until"):
            return Window(None, start if side == "before" else end, m[0], rel)
        return Window(start, end, m[0], rel)
    m = re.search(r"\b(?:in |during )?(?:the )?(spring|summer|autumn|fall|winter)\b", text, re.I)
    if m:
        first = SEASONS[m[1].lower()]
        year = _last_month_named(first, today)
        return Window(*_month_span(year, first, 3), m[0], rel)
    return None


_ANCHOR_STOP = r"(?=\s+(?:and|but|or|when|while|because)\b|[?.!,;]|$)"


def _anchor(text: str, now: float | None) -> Window | None:
    """ "before the migration", "since the outage", "after we moved to Postgres": the event to date."""
    m = re.search(
        r"\b(before|prior to|after|since|until|till)\s+((?:the|our|we|our team's|they)\b.+?)" + _ANCHOR_STOP, text, re.I
    )
    if not m:
        return None
    side = {"prior to": "before", "since": "after", "till": "until"}.get(m[1].lower(), m[1].lower())
    return Window(None, None, m[0], "anchor", anchor=m[2].strip(), side=side)


ANCHOR_DAYS = 183.0  # how far "before X" / "after X" reach from X's date


def around_anchor(w: Window, anchor: float, anchor_id: str, now: float | None) -> Window:
    """A window for "before/after/until X" once X is dated at ``anchor`` (the note ``anchor_id``):
    before X is the half year up to its day, after (since) X from its day on for a half year (or to now)."""
    day = _midnight(dt.datetime.fromtimestamp(anchor, dt.UTC).date())
    source = f"anchor {anchor_id} ({dt.datetime.fromtimestamp(anchor, dt.UTC).date().isoformat()})"
    if w.side in ("before", "until"):
        end = day + (_DAY if w.side == "until" else 0.0)
        return Window(end - ANCHOR_DAYS * _DAY, end, w.phrase, source, w.anchor, w.side)
    end = day + ANCHOR_DAYS * _DAY
    if now is not None:
        end = max(min(end, _midnight(_today(now)) + _DAY), day + _DAY)
    return Window(day, end, w.phrase, source, w.anchor, w.side)
