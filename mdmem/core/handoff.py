"""Pure: a Claude Code session transcript → a handoff note (what was asked, decided, learned and left
open, files touched), without an LLM. Used by the stop and pre-compact hooks (agent_hooks.py); secrets
are redacted here, before anything is cut.

A transcript is JSONL: ``{"type": "user"|"assistant"|…, "message": {"role", "content"}, "cwd",
"sessionId", "timestamp", …}``; ``content`` is a string or a list of blocks (``text``, ``tool_use``
with ``name`` and ``input``, ``tool_result``, ``thinking``). User entries marked ``isMeta`` and text
Claude Code injects (command echoes, system reminders, compaction summaries) are not prompts.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .redact import Redaction


@dataclass(slots=True)
class Transcript:
    """What a session transcript says, reduced to what a handoff needs."""

    session_id: str = ""
    cwd: str = ""
    started: str | None = None
    prompts: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)  # assistant text, one entry per message
    turns: list[str] = field(default_factory=list)  # prompts and replies in the order they came
    edited: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)


_EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool", "create_file"}
_READ_TOOLS = {"Read", "NotebookRead", "view"}
_INJECTED = (
    "<command-",
    "<local-command",
    "<system-reminder",
    "<user-prompt-submit-hook",
    "Caveat:",
    "This session is being continued",
    "[Request interrupted",
)


def parse_transcript(lines: Iterable[str]) -> Transcript:
    """Read Claude Code's JSONL transcript (one JSON object per line); bad lines are skipped."""
    t = Transcript()
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        t.session_id = t.session_id or str(entry.get("sessionId") or "")
        t.cwd = t.cwd or str(entry.get("cwd") or "")
        kind = entry.get("type")
        msg = entry.get("message")
        if kind not in ("user", "assistant") or not isinstance(msg, dict):
            continue
        t.started = t.started or (str(entry["timestamp"]) if entry.get("timestamp") else None)
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        if kind == "user":
            if entry.get("isMeta") or entry.get("isCompactSummary"):
                continue
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "text":
                    text = str(b.get("text") or "").strip()
                    if text and not text.startswith(_INJECTED):
                        t.prompts.append(text)
                        t.turns.append(text)
            continue
        texts = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                texts.append(str(b.get("text") or ""))
            elif b.get("type") == "tool_use":
                name = str(b.get("name") or "")
                given = b.get("input")
                args: dict[str, Any] = given if isinstance(given, dict) else {}
                path = args.get("file_path") or args.get("notebook_path") or args.get("path")
                if isinstance(path, str) and path:
                    target = t.edited if name in _EDIT_TOOLS else t.read if name in _READ_TOOLS else None
                    if target is not None and path not in target:
                        target.append(path)
        if any(x.strip() for x in texts):
            t.replies.append("\n".join(texts))
            t.turns.append(t.replies[-1])
    return t


_DECIDED = re.compile(
    r"\b(decided|decide to|decision|we('ll| will| are going to) (use|go with|keep|switch|move|drop|adopt)|"
    r"going with|go with|chose|chosen|opted|settled on|agreed|the plan is|switch(ed)? to|"
    r"let'?s (use|go|keep|switch|do|drop|stick)|instead of|stick with|root cause|the fix (is|was)|fixed by|"
    r"from now on|always|never)\b",
    re.I,
)
_OPEN = re.compile(
    r"\b(todo|fixme|next steps?|still (need|needs|have to|failing|fails|broken|open|missing)|not yet|"
    r"remaining|left to|follow[- ]up|open question|unresolved|couldn'?t|could not|unable to|blocked|"
    r"needs? (to be|more)|later|pending|tbd|not (done|finished|implemented|fixed))\b",
    re.I,
)
_LEARNED = re.compile(
    r"\b(turns? out|found (that|out)|learn(ed|t)|it seems|apparently|the (problem|issue|cause|reason) (is|was)|"
    r"is caused by|was caused by|because|so that'?s why|note that|noticed|discovered|the culprit|"
    r"(does|did|do)(n'?t| not) (work|support|handle)|only works|requires?)\b",
    re.I,
)
_FENCED = re.compile(r"```.*?(```|\Z)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
ITEM_CHARS = 240


def sentences(text: str) -> list[str]:
    """The sentences of a turn as the handoff lists them (code blocks out, list marks off, clipped)."""
    out = []
    for s in _SENTENCE.split(_FENCED.sub(" ", text)):
        s = re.sub(r"^[\s>*#\-\d.)]+", "", s).strip().replace("**", "")
        if len(s) >= 12:
            out.append(_clip(s))
    return out


def _clip(s: str, n: int = ITEM_CHARS) -> str:
    from .text import shorten

    return shorten(" ".join(s.split()), n)


def _unique(items: Iterable[str], limit: int, *, last: bool = False) -> list[str]:
    seen: dict[str, str] = {}
    for s in items:
        seen.setdefault(s.casefold(), s)
    vals = list(seen.values())
    return vals[-limit:] if last else vals[:limit]


@dataclass(frozen=True, slots=True)
class Handoff:
    """A handoff note's title and body (already redacted)."""

    title: str
    body: str
    redacted: int


def redacted(t: Transcript) -> tuple[Transcript, int]:
    """The transcript with its secrets replaced, and how many there were. Whole texts are redacted
    before anything is cut or split: a title cut at 60 characters must not keep ``ghp_ab…``."""
    from .redact import redact

    done: dict[str, Redaction] = {}

    def clean(s: str) -> str:
        if s not in done:
            done[s] = redact(s)
        return done[s].text

    out = Transcript(
        t.session_id,
        clean(t.cwd),
        t.started,
        [clean(s) for s in t.prompts],
        [clean(s) for s in t.replies],
        [clean(s) for s in t.turns],
        [clean(s) for s in t.edited],
        [clean(s) for s in t.read],
    )
    return out, sum(r.count for r in done.values())


def build_handoff(t: Transcript, *, max_items: int = 8) -> Handoff | None:
    """What was asked, decided, learned and left open, and the files touched; None if nothing was asked.
    Secrets are redacted first (``redacted``), so no cut below can leave part of one."""
    from .redact import redact

    if not t.prompts:
        return None
    t, found = redacted(t)
    asked = [_clip(t.prompts[0], 400)] + [_clip(p) for p in t.prompts[1:]]
    if len(asked) > max_items:  # the first request and the latest ones
        asked = asked[:1] + asked[-(max_items - 1) :]
    decided = _unique((s for text in t.turns for s in sentences(text) if _DECIDED.search(s)), max_items, last=True)
    learned = _unique(
        (s for text in t.turns for s in sentences(text) if _LEARNED.search(s) and not _DECIDED.search(s)),
        max_items,
        last=True,
    )
    last = t.replies[-1] if t.replies else ""
    open_items = [s for text in t.replies for s in sentences(text) if _OPEN.search(s)]
    open_items += [s for s in sentences(last) if s.endswith("?")]
    opened = _unique(open_items, max_items, last=True)
    cwd = t.cwd.rstrip("/") + "/" if t.cwd else ""

    def short(p: str) -> str:
        return p[len(cwd) :] if cwd and p.startswith(cwd) else p

    edited = [short(p) for p in t.edited][:20]
    read = [short(p) for p in t.read if p not in t.edited][:10]
    lines = ["## Asked", *(f"- {a}" for a in asked), ""]
    lines += ["## Decided", *(f"- {d}" for d in decided or ["(nothing recorded as decided)"]), ""]
    lines += ["## Learned", *(f"- {x}" for x in learned or ["(nothing recorded as learned)"]), ""]
    lines += ["## Open", *(f"- {o}" for o in opened or ["(nothing recorded as open)"]), ""]
    lines += ["## Files touched", *(f"- `{p}` (edited)" for p in edited), *(f"- `{p}` (read)" for p in read)]
    if not edited and not read:
        lines.append("- (none)")
    if last:
        lines += ["", "## Last reply", _clip(_FENCED.sub(" ", last), 600)]
    day = (t.started or "")[:10] or time.strftime("%Y-%m-%d")
    title = f"Handoff {day}: {_clip(t.prompts[0].splitlines()[0], 60)}"
    body, title_r = redact("\n".join(lines) + "\n"), redact(title)  # a second net; finds nothing new
    return Handoff(title_r.text, body.text, found + body.count + title_r.count)
