"""Questions about several things → one sub-query per topic, and a fair merge of their answers (pure).

``split(text)`` proposes the parts of "the database migration and the login bug" (on "and", "as well
as", "plus", ";"; not on a bare comma, which mostly lists); it proposes nothing when a side is a single
word ("salt and pepper", "terms and conditions", "Priya and Tomás", "Kafka and Redis": one topic or a
name far more often than two questions), when a side leans on another ("Melanie and her kids", "and
how does he cope") or is a clause ("Based on X, did A"), or when one question goes on past its "and"
("when did she hike and have a bad time"). The caller then checks that each part stands as a query on its own (its
own BM25 hits) before it splits. ``interleave`` merges the parts' ranked lists round-robin, so one
topic's many close matches cannot crowd the other out of the top of the list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .text import terms

_JOIN = re.compile(r"\s*(?:;|,\s*(?:and|as well as|plus)\s+|\s+(?:and also|as well as|and|plus)\s+)\s*", re.I)
# a leading question frame the parts share: "what do we know about A and B" → A, B
_FRAME = re.compile(r"^\s*(?:what|tell me|remind me|show me|anything)\b[^,?]*?\b(?:about|regarding)\s+", re.I)
# a question word or auxiliary: a part that starts so is a question; a noun phrase is not
_ASKS = re.compile(
    r"(?:what|when|where|who|whom|whose|why|how|which|did|does|do|is|are|was|were|has|have|had|can|"
    r"could|would|will|should)\b",
    re.I,
)
_WH = re.compile(r"(?:what|when|where|who|whom|whose|why|how|which)\b", re.I)
# a part that leans on another: it refers back (he, them, both) — "Melanie and her kids", "and how does he cope"
_LEANS = re.compile(r"\b(?:her|his|their|its|she|he|they|it|them|him|both|also|then)\b", re.I)
MIN_WORDS = 2  # content words every part needs to stand as a query of its own


def split(text: str) -> list[str]:
    """The topics of a question about several things, or [] when it is about one (see the module)."""
    if not _JOIN.search(text):
        return []
    frame = _FRAME.match(text)
    body = text[frame.end() :] if frame else text
    parts = [p.strip(" ?.!") for p in _JOIN.split(body) if p and p.strip(" ?.!")]
    if len(parts) < 2 or len(parts) > 4:
        return []
    if any(_LEANS.search(p) or "," in p or "?" in p for p in parts):
        return []  # "Melanie and her kids", "Caroline and Melanie both painted": one question
    if not frame:
        if _ASKS.match(parts[0]) and not all(_WH.match(p) for p in parts[1:]):
            return []  # "when did she hike and have a bad time": one question; "how A … and where B …": two
        if not _ASKS.match(parts[0]) and any(_WH.match(p) for p in parts[1:]):
            return []  # "the trip and what we learned": one question about a thing
    words = [terms(p) for p in parts]
    if any(len(w) < MIN_WORDS for w in words):
        return []  # "the ledger and the queue", "salt and pepper": one thing, or too little to stand alone
    if len({" ".join(w) for w in words}) < len(words):
        return []
    return parts


def interleave(lists: Sequence[Sequence[str]], limit: int) -> list[tuple[str, int, int]]:
    """Round-robin over the parts' ranked lists: (item, part, rank in that part), each item once, at
    its first turn; at most ``limit`` items."""
    out: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    depth = max((len(li) for li in lists), default=0)
    for rank in range(depth):
        for part, li in enumerate(lists):
            if rank < len(li) and li[rank] not in seen:
                seen.add(li[rank])
                out.append((li[rank], part, rank + 1))
                if len(out) >= limit:
                    return out
    return out
