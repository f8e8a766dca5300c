"""Pure text analysis shared by the index and the snippets: tokens for any language.

Latin-script words are lower-cased, accent-folded and stemmed (Snowball English: deploy, deployed
and deployment are one term); identifiers such as ``ERR_X_42`` or ``user.email`` are kept whole *and*
split into their parts; runs of CJK characters become overlapping bigrams (the usual trick for
languages without spaces). ``exact_counts`` gives the same words unstemmed, for the exact-form field.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from .slug import slugify  # noqa: F401  (where the other modules look for it)

# A "word": letters/digits joined by _ . - (so ERR_X_42 and v1.2.3 stay one token).
_WORD = re.compile(r"[^\W_]+(?:[_.\-][^\W_]+)*|_+[^\W_]+(?:_[^\W_]+)*", re.UNICODE)
_PART = re.compile(r"[^\W_]+", re.UNICODE)

# Han, Hiragana, Katakana, Hangul and CJK punctuation-free letters.
_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Ext A
    (0x4E00, 0x9FFF),  # CJK Unified
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility
    (0x20000, 0x2FA1F),  # CJK Ext B+
)

STOPWORDS = frozenset(
    """a an and are as at be by did do does for from had has have how i in is it its
    me my of on or our so that the their them then there these they this to was we were
    what when where which who whom why will with you your s t""".split()
)


_CJK_RUN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]+")


def is_cjk(ch: str) -> bool:
    """True for a character of a script written without spaces between words."""
    return _CJK_RUN.match(ch) is not None


@dataclass(frozen=True, slots=True)
class Token:
    """One index term and where it came from in the text."""

    text: str
    start: int
    end: int


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    # Snowball's English stemmer (Porter 2): the original Porter stemmer whoosh ships splits word forms
    # ("deploy" → deploi but "deployment" → deployment, "spotting" → spott but "spot" → spot).
    from whoosh.lang.porter2 import stem  # pure Python; small import

    return stem(word)


@lru_cache(maxsize=200_000)
def fold(word: str) -> str:
    """Lower-case and strip accents (café → cafe); other scripts pass through."""
    w = word.lower()
    if w.isascii():
        return w
    decomposed = unicodedata.normalize("NFKD", w)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=200_000)
def normalize_term(word: str) -> str:
    """The index form of one word: folded, and stemmed when it is a plain ASCII word."""
    w = fold(word)
    if w.isascii() and w.isalpha() and len(w) > 2:
        return _stem(w)
    return w


@lru_cache(maxsize=200_000)
def _index_term(word: str) -> str:
    """``normalize_term(word)``, or "" for a stop word: one as written (the stemmer turns "does" and
    "why" into "doe" and "whi", which are no stop words) or one as stemmed ("doing" → "do")."""
    if fold(word) in STOPWORDS:
        return ""
    term = normalize_term(word)
    return "" if term in STOPWORDS else term


def _split_cjk(text: str, offset: int) -> Iterator[tuple[str, int, bool]]:
    """Yield (piece, start, is_cjk) runs of a word that may mix CJK and other letters."""
    if text.isascii():  # the common case, decided in C
        yield text, offset, False
        return
    pos = 0
    for m in _CJK_RUN.finditer(text):
        if m.start() > pos:
            yield text[pos : m.start()], offset + pos, False
        yield m.group(), offset + m.start(), True
        pos = m.end()
    if pos < len(text):
        yield text[pos:], offset + pos, False


def tokenize(text: str, *, stopwords: bool = True) -> list[Token]:
    """Split text into index terms with their character spans."""
    out: list[Token] = []
    for m in _WORD.finditer(text):
        word, wstart = m.group(), m.start()
        for piece, pstart, cjk in _split_cjk(word, wstart):
            if cjk:
                if len(piece) == 1:
                    out.append(Token(piece, pstart, pstart + 1))
                for i in range(len(piece) - 1):
                    out.append(Token(piece[i : i + 2], pstart + i, pstart + i + 2))
                continue
            parts = list(_PART.finditer(piece))
            if len(parts) > 1:
                # An identifier: the whole (for exact matches) and each part (for partial ones).
                out.append(Token(fold(piece), pstart, pstart + len(piece)))
                for p in parts:
                    term = _index_term(p.group()) if stopwords else normalize_term(p.group())
                    if term:
                        out.append(Token(term, pstart + p.start(), pstart + p.end()))
                continue
            term = _index_term(piece) if stopwords else normalize_term(piece)
            if term:
                out.append(Token(term, pstart, pstart + len(piece)))
    return out


def index_terms(text: str) -> list[str]:
    """The terms of ``tokenize(text)`` without their spans — the indexing fast path."""
    out: list[str] = []
    append = out.append
    for word in _WORD.findall(text):
        if word.isascii() and word.isalnum():  # a plain word: the vast majority
            term = _index_term(word)
            if term:
                append(term)
        else:
            out.extend(t.text for t in tokenize(word))
    return out


def term_counts(text: str) -> dict[str, int]:
    """``Counter(index_terms(text))``, in the same order, with each distinct word analysed once: the
    words are counted in C first (a huge note has hundreds of thousands of words but a few thousand
    distinct ones; per word, the analysis took most of its reindex)."""
    from collections import Counter

    out: dict[str, int] = {}
    for word, n in Counter(_WORD.findall(text)).items():
        if word.isascii() and word.isalnum():
            term = _index_term(word)
            if term:
                out[term] = out.get(term, 0) + n
        else:
            for t in tokenize(word):
                out[t.text] = out.get(t.text, 0) + n
    return out


def counts_with_exact(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """``term_counts(text)``, and the same words as written (folded, never stemmed) with their counts:
    what the exact-form field holds. CJK pairs have no exact form of their own (they are never
    stemmed, so it would say nothing new). One pass over the words for both."""
    from collections import Counter

    stems: dict[str, int] = {}
    exact: dict[str, int] = {}
    for word, n in Counter(_WORD.findall(text)).items():
        if word.isascii() and word.isalnum():
            term = _index_term(word)
            if term:
                stems[term] = stems.get(term, 0) + n
                w = word.lower()
                exact[w] = exact.get(w, 0) + n
        else:
            for t in tokenize(word):
                stems[t.text] = stems.get(t.text, 0) + n
                if not is_cjk(t.text[0]):
                    w = fold(word[t.start : t.end])
                    exact[w] = exact.get(w, 0) + n
    return stems, exact


def exact_counts(text: str) -> dict[str, int]:
    """The exact-form field's terms of ``text`` and their counts (``counts_with_exact``)."""
    return counts_with_exact(text)[1]


def exact_forms(text: str) -> list[str]:
    """Each term of ``tokenize(text)`` as written (folded, unstemmed), CJK pairs left out."""
    return [fold(text[t.start : t.end]) for t in tokenize(text) if not is_cjk(t.text[0])]


def exact_words(text: str) -> dict[str, str]:
    """Each index term of a query and its form as written (folded, unstemmed; the first one written,
    CJK pairs left out): ``"deployed pipelines"`` → ``{"deploy": "deployed", "pipelin": "pipelines"}``."""
    out: dict[str, str] = {}
    for t in tokenize(text):
        if t.text not in out and not is_cjk(t.text[0]):
            out[t.text] = fold(text[t.start : t.end])
    return out


def terms(text: str) -> list[str]:
    """The distinct index terms of a query, in order of first appearance."""
    seen: dict[str, None] = {}
    for tok in tokenize(text):
        seen.setdefault(tok.text, None)
    return list(seen)


def edit_distance(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``: insert, delete, replace a character, or swap two neighbours
    (optimal string alignment), so the typo "dataveiw" is one edit from "dataview"."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def looks_like_name(word: str, *, first: bool = False) -> bool:
    """Whether a query word is written like a name: a capital after its first letter (GDPR, iOS,
    PagerDuty), or a capital first letter where a sentence does not start (``first``: the query's
    first word, capitalised by habit). Words with digits are codes (Q2), not names."""
    if not word or any(c.isdigit() for c in word) or not word[0].isalpha():
        return False
    if any(c.isupper() for c in word[1:]):
        return True
    return word[0].isupper() and not first


def shorten(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, an ellipsis saying it was cut. Redact before cutting: a cut
    secret (``ghp_ab…``) no longer looks like one."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def estimate_tokens(text: str) -> int:
    """A cheap model-free token estimate (~4 chars per token; CJK ~1 char per token)."""
    cjk = sum(len(m.group()) for m in _CJK_RUN.finditer(text))
    return cjk + (len(text) - cjk + 3) // 4


_LOOKALIKE = {"**": "\u2217\u2217"}


def snippet(text: str, query_terms: set[str], *, width: int = 220, mark: str = "**") -> str:
    """The passage of ``text`` with the most distinct query terms, hits wrapped in ``mark`` (the only
    marks in it). Give it plain text (``links.display_text``), not markdown."""
    if not text.strip():
        return ""
    passages = _passages(text)
    hits = [t for t in tokenize(text) if t.text in query_terms]  # one pass over the text, in order
    best, best_key = passages[0], (-1, 0)
    k = 0  # passages and hits are both in text order: one sweep (a loop over all hits per passage
    for start, end in passages:  # is quadratic: 30,000 paragraphs that hold the query word took seconds)
        while k < len(hits) and hits[k].start < start:
            k += 1
        first = k
        while k < len(hits) and hits[k].start < end:
            k += 1
        key = (len({t.text for t in hits[first:k]}), k - first)
        if key > best_key:
            best, best_key = (start, end), key
    start, end = best
    if end - start > width:
        # Centre the window on the first hit so the reason for the match is visible.
        first = next((t.start for t in hits if start <= t.start < end), start)
        start = max(start, first - width // 3)
        end = min(end, start + width)
    spans = _merge_spans([(t.start - start, t.end - start) for t in hits if start <= t.start and t.end <= end])
    # The marks are the only ones in a snippet: a mark already in the text (``2**10`` in code, an
    # author's **bold** when given raw markdown) becomes look-alike asterisks (U+2217) of the same
    # length, so a reader (and ``render.highlight``) never sees a match nested in the author's
    # emphasis ("**Open local **graph****").
    piece = text[start:end].replace(mark, _LOOKALIKE.get(mark, " " * len(mark)))
    outp, pos = [], 0
    for s, e in spans:
        outp.append(piece[pos:s])
        outp.append(f"{mark}{piece[s:e]}{mark}")
        pos = e
    outp.append(piece[pos:])
    result = " ".join("".join(outp).split())
    prefix = "…" if start > 0 and text[start - 1] not in "\n" else ""
    suffix = "…" if end < len(text) and text[end : end + 1] not in ("\n", "") else ""
    return f"{prefix}{result}{suffix}"


def _passages(text: str) -> list[tuple[int, int]]:
    """Non-empty paragraphs (blank-line separated) as spans, line by line (an expression with a
    look-ahead over blanks after every line break took quadratic time on many blank lines)."""
    spans = []
    start = pos = 0
    para = False  # the current run of lines holds text
    for line in text.splitlines(keepends=True):
        if line.strip():
            if not para:
                start, para = pos, True
        elif para:
            spans.append((start, pos - 1 if text[pos - 1 : pos] == "\n" else pos))
            para = False
        pos += len(line)
    if para:
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


def _merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged
