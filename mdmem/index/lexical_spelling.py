"""A query's words as BM25 searches them (a part of ``lexical``): misspellings read against the
vault's own names (the words of titles, aliases, entities, tags and headings), prefix words expanded.
Works on the lexical index's searcher (whoosh's API: the fields' lexicons; document counts of the
undeleted notes from ``lexical_live``, imported where used) without importing whoosh itself.

A query word no note has in any form (neither its stem nor as written: "spotting" is never "corrected"
in a vault that says "spot" or "spotted") is read as the name word it most likely misspells: one edit away (a swapped,
missing, doubled or, in a long word, replaced letter; two from 9 letters on), or two name words it
joins ("Graphview" → graph view, "Tagwrangler" → tag wrangler). Two query words that one name joins
("Quick Add" → quickadd, "git hub" → github) also search for the name. The index stores stems, so a
word is compared both as its stem and as written ("Hotkyes": the stem "hotky", the word one swap from
"hotkeys").

A prefix word (``deploy*``) searches the vault's words that start with it: a bounded read of the
exact-form field's lexicon (``expand``).

Corrections are ``{query term: replacement terms}``, where a key of two terms ("work space") names a
pair of query words and its value the term both join; ``query_terms`` applies them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import Any

from ..core.text import edit_distance, exact_words, fold, looks_like_name, normalize_term, terms, tokenize

FIELDS = ("title", "aliases", "entities", "tags", "headings", "body")  # where a word counts as known
EXACT_FIELD = "exact"  # every word of a note as written (folded, unstemmed)
PREFIX_SCAN = 5000  # exact forms read for one prefix at most, so a short prefix costs no more than this
PREFIX_TERMS = 32  # of those, the forms most notes have are searched
_PREFIX = re.compile(r"([^\W_][\w.\-]*)\*", re.UNICODE)
NAME_FIELDS = ("title", "aliases", "entities", "tags", "headings")  # where a misspelled name is looked up
TITLE_FIELDS = ("title", "aliases")  # where a name two query words join is looked up (every query pays for it)
MIN_TYPO = 5  # letters a word needs before it is read as a typo (shorter words are too often other words)
MIN_PART = 3  # letters each part of a split word needs
# Words a question starts with, capitalised because they start it: never a name there ("Whose birthday …")
OPENERS = frozenset(
    """what which whose where when why how would could should will shall does were have list name
    tell show give find please about after before during since warum wann welche welcher welches wieso weshalb
    pourquoi comment quand quel quelle quels quelles combien qu'est""".split()
)
# Words a person asks with, not words of what is asked ("what do we know about X? I want to change it"):
# that no note has one says nothing about whether the vault holds the answer. A prompt is chat, and a
# vault of terse notes may never say "want" or "know"; counted, they silenced every such prompt.
ASKING = frozenset(
    """about again also anything change could everything explain find give help just know like look make
    maybe mean might need please really remember should show something tell thing think update want
    wonder work would""".split()
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a query as BM25 searches it."""

    head: str  # the term coverage counts it by (its stem; a prefix's own term)
    terms: tuple[str, ...]  # searched in the weighted fields: the stem, or a prefix's expansions
    exact: str | None = None  # the form as written, searched in the exact-form field


def prefix_words(text: str) -> dict[str, str]:
    """The query's prefix words (``deploy*``): each one's own index term and the prefix its forms
    start with, folded (``{"deploy": "deploy"}``; ``ERR_PAY*`` → ``{"err_pay": "err_pay"}``)."""
    out: dict[str, str] = {}
    for m in _PREFIX.finditer(text):
        word = m.group(1)
        own = tokenize(word, stopwords=False)
        if own and len(fold(word)) >= 2:
            out.setdefault(own[0].text, fold(word))
    return out


def expand(s: Any, prefix: str) -> tuple[str, ...]:
    """The index terms of the vault's words that start with ``prefix``: at most ``PREFIX_TERMS`` of
    the first ``PREFIX_SCAN`` exact forms in the lexicon, those most notes have (a bounded, linear read)."""
    reader = s.reader()
    forms = [b.decode("utf-8") for b in islice(reader.expand_prefix(EXACT_FIELD, prefix), PREFIX_SCAN)]
    from .lexical_live import live_stats  # whoosh's module, imported with it

    live = live_stats(s)
    forms.sort(key=lambda w: -live.df(EXACT_FIELD, w))
    return tuple(dict.fromkeys(normalize_term(w) if w.isalpha() else w for w in forms[:PREFIX_TERMS]))


def known(s: Any, term: str, fields: Iterable[str] = FIELDS) -> int:
    """How many notes have ``term`` in the busiest of ``fields`` (0: no note has it there)."""
    from .lexical_live import live_stats

    live = live_stats(s)  # a word only a deleted version of a note had is one no note has
    return max(live.df(f, term) for f in fields)


def name_words(s: Any) -> dict[str, set[str]]:
    """The words of the name fields by first letter (the lexicons' stems of 3+ letters)."""
    reader = s.reader()
    by_letter: dict[str, set[str]] = {}
    for f in NAME_FIELDS:
        for w in (s.schema[f].from_bytes(b) for b in reader.lexicon(f)):
            if len(w) >= 3 and w.isalpha():
                by_letter.setdefault(w[0], set()).add(w)
    return by_letter


def replaces_a_letter(a: str, b: str) -> bool:
    """Whether one edit from ``a`` to ``b`` replaces a letter: in a short word that more often makes
    another word than a typo ("recent" → "retent"; a swap, a missing or doubled letter stay typos)."""
    return len(a) == len(b) and sorted(a) != sorted(b)


def _one_edit(word: str) -> dict[str, bool]:
    """The words one swap, deletion or insertion of a letter from ``word`` (no replacement: in a
    short word that makes other words), each with whether it was a deletion."""
    out = {word[:i] + c + word[i:]: False for i in range(len(word) + 1) for c in _LETTERS}
    out.update({word[:i] + word[i + 1] + word[i] + word[i + 2 :]: False for i in range(len(word) - 1)})
    out.update({word[:i] + word[i + 1 :]: True for i in range(len(word))})
    out.pop(word, None)
    return out


def _fix_word(s: Any, term: str, written: str, names: dict[str, set[str]]) -> str | None:
    """The name term one unknown query term (``written`` as typed) most likely misspells, or None."""
    maxdist = 2 if len(term) >= 9 else 1
    near = [
        (d, -known(s, w), w)
        for w in names.get(term[0], ())
        if abs(len(w) - len(term)) <= maxdist
        and (d := edit_distance(w, term)) <= maxdist
        and (len(term) >= 7 or not replaces_a_letter(w, term))
    ]
    if written.isascii() and written.isalpha():
        for cand, deleted in _one_edit(written).items():
            stem = normalize_term(cand)
            # a letter less whose stem is two shorter makes another word ("ticker" → "ticke" → tick)
            if (
                stem != term
                and stem[:1] == term[:1]
                and not (deleted and len(stem) < len(term) - 1)
                and stem in names.get(stem[0], ())
                and (df := known(s, stem, NAME_FIELDS))
            ):
                near.append((1, -df, stem))
    return min(near)[2] if near else None


def _split(s: Any, written: str) -> str | None:
    """Two name words an unknown query word joins ("graphview" → "graph view"), the pair most notes
    have (the rarer half's count), or None."""
    best: tuple[int, str] | None = None
    for i in range(MIN_PART, len(written) - MIN_PART + 1):
        left, right = normalize_term(written[:i]), normalize_term(written[i:])
        df = min(known(s, left, NAME_FIELDS), known(s, right, NAME_FIELDS))
        if df and (best is None or df > best[0]):
            best = (df, f"{left} {right}")
    return best[1] if best else None


def corrections(s: Any, text: str, names: Any, prefixes: Iterable[str] = ()) -> dict[str, str]:
    """The query's corrections (see the module docstring). ``names`` is called for the name words
    (``name_words``, cached by the caller) only when a word needs them. A word the vault has in any
    form (its stem, or as written) is never corrected, nor a prefix word (``prefixes``: their terms)."""
    fixes: dict[str, str] = {}
    skip = set(prefixes)
    words = [(tok.text, fold(text[tok.start : tok.end])) for tok in tokenize(text)]
    for term, written in words:
        if (
            term in fixes
            or term in skip
            or not term.isalpha()
            or len(written) < MIN_TYPO
            or known(s, term)
            or known(s, written, (EXACT_FIELD,))
        ):
            continue
        fixed = _fix_word(s, term, written, names())
        if fixed is None and written.isalpha() and len(written) >= 2 * MIN_PART:
            fixed = _split(s, written)
        if fixed is not None:
            fixes[term] = fixed
    for (a, wa), (b, wb) in zip(words, words[1:]):
        if not (wa.isalpha() and wb.isalpha()) or f"{a} {b}" in fixes:
            continue
        for joined in (normalize_term(wa + wb), wa + "-" + wb):
            if joined not in (a, b) and known(s, joined, TITLE_FIELDS):
                fixes[f"{a} {b}"] = joined
                break
    return fixes


def query_words(
    text: str, corrections: dict[str, str] | None, prefixes: dict[str, tuple[str, ...]] | None = None
) -> list[Word]:
    """The query's distinct words with ``corrections`` applied (a misspelled term replaced, a split one
    by both parts, and after two words one name joins, the name too) and ``prefixes`` (a prefix
    word's term → the terms it expands to). A word as typed is also searched by its exact form."""
    fixes, pre = corrections or {}, prefixes or {}
    written = exact_words(text)
    qterms = terms(text)
    out: dict[str, Word] = {}
    for i, t in enumerate(qterms):
        if t in pre:
            out.setdefault(t, Word(t, pre[t]))
        elif t in fixes:
            for part in fixes[t].split():
                out.setdefault(part, Word(part, (part,)))
        else:
            out.setdefault(t, Word(t, (t,), written.get(t)))
        if fixes and i + 1 < len(qterms) and (joined := fixes.get(f"{t} {qterms[i + 1]}")):
            out.setdefault(joined, Word(joined, (joined,)))
    return list(out.values())


def query_terms(
    text: str, corrections: dict[str, str] | None, prefixes: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """The query's distinct index terms (``query_words``' heads)."""
    return [w.head for w in query_words(text, corrections, prefixes)]


def unknown_names(
    s: Any,
    text: str,
    corrections: dict[str, str] | None = None,
    *,
    first_word: bool = False,
    prefixes: Iterable[str] = (),
) -> list[str]:
    """The query's names that no note has: words written like a name (GDPR, iOS, or capitalised
    after the first word: "at Datadog"; with ``first_word`` the first word too, capitalised by habit,
    when it has 4+ letters and is not a question word: "Terraform state …") in no field of any note
    and not a typo of one. A question about a thing the vault never mentions ("our account manager
    at Datadog") has no answer here."""
    fixes = corrections or {}
    joined = {w for k in fixes if " " in k for w in k.split()} | set(prefixes)
    out: list[str] = []
    start = len(text) - len(text.lstrip())
    for tok in tokenize(text):
        word = text[tok.start : tok.end]
        first = tok.start == start and not (
            first_word and len(word) >= 4 and word.isalpha() and word.lower() not in OPENERS
        )
        if (
            looks_like_name(word, first=first)
            and tok.text not in fixes
            and tok.text not in joined
            and word not in out
            and not known(s, tok.text)
        ):
            out.append(word)
    return out


def unknown_terms(
    s: Any, text: str, corrections: dict[str, str] | None = None, prefixes: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """The query's words (Latin letters, 4+ of them, after ``corrections``) that no note has in any
    field (a prefix that expands is known), words of asking (``ASKING``) left out."""
    asking = asking_terms()
    return [
        t
        for t in query_terms(text, corrections, prefixes)
        if t.isascii()
        and t.isalpha()
        and len(t) >= 4
        and t not in (prefixes or {})
        and t not in asking
        and not known(s, t)
    ]


@cache
def asking_terms() -> frozenset[str]:
    """``ASKING`` as index terms (stemmed as the query's words are)."""
    return frozenset(normalize_term(w) for w in ASKING)
