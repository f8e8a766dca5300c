"""Queries a vault provides itself (pure): titles, aliases, headings, anchor texts, first sentences."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .eval_data import Query

# What each kind measures (``mdmem eval --self``; docs/benchmarks.md, "How well mdmem finds your own notes").
KINDS: dict[str, str] = {
    "title": "a note asked for by its title: finding a known note by name (the easy case)",
    "alias": "a note asked for by another name its aliases give it",
    "heading": "a section's heading (not the title): finding the note that holds a topic",
    "anchor": "the words another note links to it with, when they are not its title: how others name it",
    "sentence": "the note's first sentence: finding a note by what it says, not by what it is called",
}
PER_KIND = 200  # queries drawn per kind: enough for a rate within a few points, bounded on any vault
SHARED_MAX = 3  # a text that many notes carry (a heading "Examples", a link "here") tells no note apart
SENTENCE_WORDS = (5, 25)  # a first sentence shorter says too little, longer is a paragraph
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)", re.DOTALL)
_EDGE_PUNCT = " \t\n.,;:!?\"'()[]{}<>*_`#|-–—"


@dataclass(frozen=True, slots=True)
class SelfNote:
    """What a note offers as queries: its names, headings, the anchor texts of links to it, its opening."""

    path: str
    title: str
    aliases: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()  # the label of each link from another note to this one
    text: str = ""  # the body as plain text (``Note.text``)
    names: tuple[str, ...] = field(default=())  # other names that make a query trivial (the file's stem)


def norm(text: str) -> str:
    """A query's text compared loosely: case-folded, single spaces, no punctuation at the ends."""
    return " ".join(text.split()).strip(_EDGE_PUNCT).casefold()


def first_sentence(text: str, skip: Iterable[str] = ()) -> str | None:
    """The first sentence of a note's plain text past the lines that are its headings or title
    (``skip``), if it has ``SENTENCE_WORDS`` words; else None."""
    skipped = {norm(s) for s in skip}
    lines = [ln for ln in text.splitlines() if ln.strip() and norm(ln) not in skipped]
    prose = " ".join(" ".join(ln.split()) for ln in lines[:8])
    m = _SENTENCE.match(prose)
    sentence = (m.group(1) if m else prose).strip()
    n = len(sentence.split())
    return sentence if SENTENCE_WORDS[0] <= n <= SENTENCE_WORDS[1] else None


def self_queries(notes: Sequence[SelfNote], *, per_kind: int = PER_KIND, seed: int = 0) -> list[Query]:
    """The self-generated queries of a vault: up to ``per_kind`` of each kind, drawn with a seeded
    generator from the candidates in a fixed order (the same vault gives the same queries). A query
    is answered by any note that offers the same text as that kind (two notes titled alike, a heading
    two notes share, a note titled so); a text more than ``SHARED_MAX`` notes offer is left out, and so is a heading,
    alias, anchor or sentence that is just the note's title or file name."""
    offers: dict[str, dict[str, tuple[str, set[str]]]] = {k: {} for k in KINDS}

    def offer(kind: str, text: str, path: str) -> None:
        key = norm(text)
        if len(key) < 2:
            return
        shown, paths = offers[kind].setdefault(key, (" ".join(text.split()), set()))
        paths.add(path)

    for n in notes:
        trivial = {norm(n.title), *(norm(x) for x in n.names)}
        offer("title", n.title, n.path)
        for kind, texts in (("alias", n.aliases), ("heading", n.headings), ("anchor", n.anchors)):
            for t in texts:
                if norm(t) not in trivial:
                    offer(kind, t, n.path)
        sentence = first_sentence(n.text, (n.title, *n.headings))
        if sentence and norm(sentence) not in trivial:
            offer("sentence", sentence, n.path)
    titled = offers["title"]
    out: list[Query] = []
    for kind, by_text in offers.items():
        if kind != "title":  # a note titled with the words answers them too (an alias naming another note)
            by_text = {
                k: (shown, paths | titled[k][1]) if k in titled else (shown, paths)
                for k, (shown, paths) in by_text.items()
            }
        cands = sorted(
            (k, shown, tuple(sorted(paths))) for k, (shown, paths) in by_text.items() if len(paths) <= SHARED_MAX
        )
        rng = random.Random(f"{seed}:{kind}")
        picked = sorted(rng.sample(range(len(cands)), min(per_kind, len(cands))))
        for i in picked:
            _key, shown, paths = cands[i]
            out.append(Query(f"{kind}:{i}", shown, dict.fromkeys(paths, 1), group=kind, any_of=True))
    return out


def anchor_map(links: Iterable[tuple[str, str, str]]) -> Mapping[str, list[str]]:
    """(source, target, label) of links → target → the labels other notes link to it with."""
    out: dict[str, list[str]] = {}
    for src, dst, label in links:
        if src != dst and label.strip():
            out.setdefault(dst, []).append(label)
    return out
