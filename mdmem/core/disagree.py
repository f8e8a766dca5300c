"""Whether two notes on the same subject may disagree, found without a model and shown as evidence:
one negates what the other states, they choose different things after the same verb, or they give
different values for the same key; and the names two notes share (a paraphrase keeps its names).
Pure: text in, evidence lines out; the agent judges."""

from __future__ import annotations

import re

HEAD_CHARS = 4000  # what a note says first is what it claims; a long note's tail is not compared
# Words that turn a statement round. "no longer" and the contractions are matched as written.
NEGATIONS = (
    "not",
    "no",
    "never",
    "don't",
    "doesn't",
    "didn't",
    "won't",
    "isn't",
    "aren't",
    "can't",
    "cannot",
    "shouldn't",
    "no longer",
    "stop",
    "stopped",
    "avoid",
    "against",
    "drop",
    "dropped",
    "deprecated",
    "abandon",
    "abandoned",
    "instead of",
    "rather than",
    "nor",
)
# Verbs of choice: "use X" in one note and "use Y" in the other is two choices for one thing.
CHOICE_VERBS = (
    "use",
    "uses",
    "using",
    "choose",
    "chose",
    "pick",
    "picked",
    "prefer",
    "prefers",
    "adopt",
    "adopted",
    "switch to",
    "switched to",
    "move to",
    "moved to",
    "migrate to",
    "migrated to",
    "go with",
    "went with",
    "standardize on",
    "settled on",
    "deploy to",
    "deploy on",
    "run on",
    "host on",
)
_FILLER = frozenset("a an the our my their its this that to on for with of all".split())
_COPULAS = frozenset("is are was were be been at about around now set max min up".split())
_WORD = re.compile(r"[\w][\w.'+#/:-]*", re.UNICODE)
# The forms of a verb of choice, as one: "switched to" in one note and "switch to" in the other agree.
_VERB_FORMS = {
    "uses": "use",
    "using": "use",
    "chose": "choose",
    "picked": "pick",
    "prefers": "prefer",
    "adopted": "adopt",
    "switched to": "switch to",
    "moved to": "move to",
    "migrated to": "migrate to",
    "went with": "go with",
}
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?[a-z%]*$")


def _words(text: str) -> list[str]:
    return [w.strip(".':").casefold() for w in _WORD.findall(text.replace("\u2019", "'"))]


def _by_first(phrases: tuple[str, ...]) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for p in phrases:
        out.setdefault(p.split()[0], []).append(p.split())
    return out


_FIRST = {id(NEGATIONS): _by_first(NEGATIONS), id(CHOICE_VERBS): _by_first(CHOICE_VERBS)}


def _phrases(words: list[str], phrases: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index after the phrase, phrase) for each place a phrase of ``phrases`` occurs in ``words``
    (one pass: only the phrases that start with a word are tried there)."""
    first = _FIRST.get(id(phrases)) or _by_first(phrases)
    out = []
    for i, w in enumerate(words):
        for parts in first.get(w, ()):
            if words[i : i + len(parts)] == parts:
                out.append((i + len(parts), " ".join(parts)))
    return out


def negations(text: str, other: str = "") -> set[str]:
    """The negating words and phrases ``text`` holds; with ``other``, only those followed closely by a
    word ``other`` has too (what is negated is what the other note says)."""
    words = _words(text)
    theirs = set(_words(other)) - _FILLER - set(NEGATIONS)
    return {p for end, p in _phrases(words, NEGATIONS) if not other or any(w in theirs for w in words[end : end + 3])}


def names(text: str) -> set[str]:
    """The names and identifiers ``text`` holds: capitalised words not opening a sentence, words with
    digits or inner capitals (case-folded)."""
    out = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        for i, w in enumerate(_WORD.findall(sentence)):
            w = w.strip(".':")
            if (i and w[:1].isupper()) or any(c.isdigit() for c in w) or (w[1:] != w[1:].lower() and len(w) > 1):
                out.add(w.casefold())
    return out


def choices(text: str) -> dict[str, str]:
    """Verb of choice → the first word it is followed by (articles and the like skipped)."""
    words = _words(text)
    out: dict[str, str] = {}
    for end, verb in _phrases(words, CHOICE_VERBS):
        rest = [w for w in words[end : end + 4] if w not in _FILLER]
        if rest and not _NUMBER.match(rest[0]):
            out.setdefault(_VERB_FORMS.get(verb, verb), rest[0])
    return out


def values(text: str) -> dict[str, str]:
    """Key → value for "key: value" and "key = value" lines, and for each number (with its unit) after a
    word (the number a "timeout", a "port" or a "limit is" is given)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"(?m)^\s*[-*]?\s*([\w][\w .-]{0,40}?)\s*[:=]\s*(\S[^\n]{0,60})$", text):
        out.setdefault(m.group(1).strip().casefold(), m.group(2).strip().casefold())
    words = _words(text)
    for i, w in enumerate(words):
        if not _NUMBER.match(w):
            continue
        j = i - 1
        while j >= 0 and j > i - 4 and (words[j] in _FILLER or words[j] in _COPULAS):
            j -= 1
        if j >= 0 and not _NUMBER.match(words[j]) and words[j] not in _FILLER and words[j] not in _COPULAS:
            out.setdefault(words[j], w)
    return out


def disagreement(a: str, b: str) -> list[str]:
    """Evidence that texts ``a`` and ``b`` (two notes on one subject) say different things: each line
    names what differs. Empty when nothing cheap tells them apart."""
    a, b = a[:HEAD_CHARS], b[:HEAD_CHARS]
    evidence: list[str] = []
    na, nb = negations(a, b), negations(b, a)
    if na != nb and not (na and nb):  # one negates, the other states
        which, words = ("the first", na) if na else ("the second", nb)
        evidence.append(f'only {which} says "{", ".join(sorted(words))}"')
    ca, cb = choices(a), choices(b)
    for verb in sorted(ca.keys() & cb.keys()):
        if ca[verb] != cb[verb]:
            evidence.append(f'{verb} "{ca[verb]}" vs {verb} "{cb[verb]}"')
    va, vb = values(a), values(b)
    for key in sorted(va.keys() & vb.keys()):
        if va[key] != vb[key]:
            evidence.append(f"{key}: {va[key]} vs {vb[key]}")
    return evidence[:4]


SUBJECT_COSINE = 0.75  # same subject by meaning, when no entity, title word or names are shared


def subject(
    a: tuple[str, list[str], str],
    b: tuple[str, list[str], str],
    cosine: float | None = None,
    known: tuple[set[str], set[str]] | None = None,
) -> list[str]:
    """Why two notes, each (title, entities, text), are about the same thing: shared entities, title
    words, two or more names, or (``cosine``) meaning; as evidence lines, empty when they are not.
    ``known``: the two texts' ``names``, when the caller has them already."""
    from .graph import entity_norm
    from .text import terms

    shared = sorted({entity_norm(e) for e in a[1]} & {entity_norm(e) for e in b[1]})
    if shared:
        return [f"both about {', '.join(shared)}"]
    na, nb = known or (names(a[2][:HEAD_CHARS]), names(b[2][:HEAD_CHARS]))
    same = sorted(na & nb)
    if len(same) >= 2:
        return [f"both name {', '.join(same[:5])}"]
    ta, tb = set(terms(a[0])), set(terms(b[0]))
    if ta & tb and len(ta & tb) * 2 >= min(len(ta), len(tb)):
        return [f"titles share {', '.join(sorted(ta & tb))}"]
    return ["close in meaning"] if cosine is not None and cosine >= SUBJECT_COSINE else []
