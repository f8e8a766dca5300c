"""BM25F full-text index on Whoosh — the only module that uses whoosh (index/lean.py imports it lean)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import lexical_spelling as spelling
from .lean import import_whoosh_lean
from .lexical_files import read_segments_in_place

import_whoosh_lean()
read_segments_in_place()  # else a cold search copies every mapped segment file

from whoosh import index as windex  # noqa: E402
from whoosh.analysis import Token as WToken  # noqa: E402
from whoosh.analysis import Tokenizer  # noqa: E402
from whoosh.fields import ID, KEYWORD, NUMERIC, STORED, TEXT, Schema  # noqa: E402
from whoosh.query import And, NumericRange, Or, Prefix, Term, Wildcard  # noqa: E402
from whoosh.system import pack_uint  # noqa: E402

from ..core.text import Token, counts_with_exact, exact_counts, index_terms, tokenize  # noqa: E402
from ..core.text import term_counts as counted_terms  # noqa: E402
from .lexical_live import LiveBM25F, live_stats  # noqa: E402
from .lexical_spelling import EXACT_FIELD, Word  # noqa: E402

if TYPE_CHECKING:
    from ..core.rank import Filters

ENGINE = "whoosh-reloaded"
BM25_B, BM25_K1 = 0.75, 1.2
FOREVER = 4.0e10  # a timestamp past any note's validity (year ~3237)
INDEX_NAME = "notes"

# Field weights for BM25F: a hit in the title or an alias says more than one in the body.
FIELD_WEIGHTS = {
    "title": 4.0,
    "aliases": 3.0,
    "entities": 2.0,
    "tags": 2.0,
    "headings": 1.5,
    "body": 1.0,
}
# A query word also scores in the exact-form field, so of the notes one stem finds (deploy, deployed,
# deployment) those with the word as written rank first; an identifier's form is its own stem.
EXACT_WEIGHT = 0.5
# Without length normalisation there: that a note has the form says it, and its length is the stem
# fields' to weigh (else a title word more in one of two notes with the same body reordered them).
EXACT_B = 0.0
TEXT_FIELDS = (*spelling.NAME_FIELDS, "body", EXACT_FIELD)  # the TermsText fields


def engine_version() -> str:
    """Engine name and version, stamped into the manifest (index files are pickles)."""
    import whoosh

    return f"{ENGINE} {whoosh.versionstring()}"


class MdmemTokenizer(Tokenizer):
    """Whoosh tokenizer over ``mdmem.core.text.tokenize`` (CJK bigrams, identifiers, stems)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[WToken]:
        t = WToken(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if tokenize and not chars and not positions and not keeporiginal:
            for term in index_terms(value):  # indexing: terms only, no spans needed
                t.text = term
                t.boost = 1.0
                t.stopped = False
                yield t
            return
        for pos, tok in enumerate(_tokens(value) if tokenize else []):
            t.text = tok.text
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = tok.text
            if positions:
                t.pos = start_pos + pos
            if chars:
                t.startchar = start_char + tok.start
                t.endchar = start_char + tok.end
            yield t


def _tokens(value: str) -> list[Token]:
    return tokenize(value)


class TermsText(TEXT):
    """A TEXT field whose indexing counts ``index_terms`` directly: the postings whoosh's analyzer
    chain and ``Frequency.word_values`` would make (the analyzer is the bare tokenizer), without a
    token object per word. Queries still go through the analyzer."""

    def index(self, value: Any, **kwargs: Any) -> list[tuple[bytes, int, float, bytes]]:
        return self.postings(counted_terms(value))

    def postings(self, counts: dict[str, int]) -> list[tuple[bytes, int, float, bytes]]:
        """``index``'s answer for a value whose terms were counted already (``term_counts``)."""
        boost = self.format.field_boost
        return [(w.encode("utf-8"), f, f * boost, pack_uint(f)) for w, f in counts.items()]


class ExactText(TermsText):
    """The exact-form field: every word of a note's text fields as written (folded, never stemmed)."""

    def index(self, value: Any, **kwargs: Any) -> list[tuple[bytes, int, float, bytes]]:
        return self.postings(exact_counts(value))


def make_schema() -> Schema:
    """The index schema. Changing it means bumping the manifest's schema version."""
    analyzer = MdmemTokenizer()
    # phrase=False: positions are never queried; frequency-only postings index faster.
    return Schema(
        path=ID(stored=True, unique=True),
        nid=ID(stored=True),
        title=TermsText(analyzer=analyzer, stored=True, phrase=False),
        aliases=TermsText(analyzer=analyzer, phrase=False),
        entities=TermsText(analyzer=analyzer, phrase=False),
        tags=TermsText(analyzer=analyzer, phrase=False),
        headings=TermsText(analyzer=analyzer, phrase=False),
        body=TermsText(analyzer=analyzer, phrase=False),
        exact=ExactText(analyzer=analyzer, phrase=False),
        tagf=KEYWORD(lowercase=True, commas=True, stored=True),
        type=ID(stored=True),
        scope=ID(stored=True),
        status=ID(stored=True),
        date=NUMERIC(numtype=float, stored=True),
        # Visibility windows as timestamps, so default filtering happens inside the index.
        # Visibility: "constrained" marks the few notes that are not plainly active and always
        # valid; their windows are stored and checked per query into a mask (cheap even at 50k).
        constrained=ID(),
        hide_until=STORED(),
        vfrom=STORED(),
        vuntil=STORED(),
        hash=STORED(),
    )


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    """One note as the lexical index sees it."""

    path: str
    id: str
    title: str
    aliases: str
    entities: str
    tags: Sequence[str]
    headings: str
    body: str
    type: str
    scope: str
    status: str
    date: float
    hash: str
    hide_until: float = 0.0  # snoozed until (0: not snoozed)
    vfrom: float = 0.0  # valid from (0: always)
    vuntil: float = FOREVER  # valid until, exclusive (FOREVER: no end)
    # the terms of TEXT_FIELDS, counted ahead (term_counts, in a full build's parse worker), or None
    counts: tuple[dict[str, int], ...] | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """A scored document from the lexical index."""

    path: str
    id: str
    title: str
    type: str
    scope: str
    tags: list[str]
    date: float | None
    score: float
    coverage: float = 1.0  # share of the query's IDF mass this note matched (with coverage=True)


class LexicalIndex:
    """A Whoosh index in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._ix: Any = None
        self._searcher: Any = None
        self._filter_cache: dict[Any, set[int]] = {}
        self._scorer: _ArrayBM25 | None = None  # the warm path, for the searcher's generation
        self._name_words: tuple[Any, dict[str, set[str]]] | None = None  # corrections' vocabulary, per searcher
        self._searches = 0  # queries answered in this process, across searchers: more than one is a warm process
        self._expanded: dict[tuple[int, str], dict[str, tuple[str, ...]]] = {}  # _prefixes' answers

    @classmethod
    def create(cls, directory: Path) -> LexicalIndex:
        """Make an empty index in ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        self = cls(directory)
        self._ix = windex.create_in(str(directory), make_schema(), indexname=INDEX_NAME)
        return self

    @property
    def ix(self) -> Any:
        if self._ix is None:
            self._ix = windex.open_dir(str(self.directory), indexname=INDEX_NAME)
        return self._ix

    def write(self, upserts: Iterable[LexicalDoc], deletes: Iterable[str], *, bulk: bool = False) -> None:
        """Apply upserts and deletes in one atomic commit (readers see all of it or none)."""
        deletes = list(deletes)
        if bulk and not deletes and self.ix.is_empty():
            # a new generation's build: one segment written straight through the codec (lexical_bulk)
            from .lexical_bulk import write_new_segment

            schema = self.ix.schema
            write_new_segment(self.ix, ((_fields(doc), _counted(schema, doc)) for doc in upserts))
            return
        from ..adapters.disk import check_room
        from .lexical_room import abandon, merge_within, opened_files, segment_estimate

        with opened_files(self.ix.storage) as files:
            writer = self.ix.writer(limitmb=96 if bulk else 32)
            new = 0
            try:
                for path in deletes:
                    writer.delete_by_term("path", path)
                add = writer.add_document if bulk else writer.update_document
                text = 0
                for doc in upserts:
                    add(**_fields(doc))
                    text += sum(len(t) for t in _texts(doc))
                new = segment_estimate(text)
                check_room(self.directory, 2 * new)  # the segment's files, then their compound copy
                writer.commit(mergetype=merge_within(self.directory, new))
            except BaseException as exc:
                abandon(self.ix, writer, files)
                if isinstance(exc, OSError) and new and not hasattr(exc, "need"):
                    exc.need = 2 * new  # type: ignore[attr-defined]  # what to free, for the message
                raise

    def doc_count(self) -> int:
        return int(self.ix.doc_count())

    def body_words(self) -> int:
        """How many words the notes' bodies hold in all (index terms): how much a word's absence says."""
        return int(self._current_searcher().reader().field_length("body") or 0)

    def corrections(self, text: str) -> dict[str, str]:
        """Spelling fixes for the query's words that no note has, read against the vault's names
        (``lexical_spelling``): "dataveiw" → dataview, "Graphview" → graph view, "Quick Add" → quickadd."""
        s = self._current_searcher()
        return spelling.corrections(s, text, lambda: self._names(s), self._prefixes(s, text))

    def term_weights(self, text: str, corrections: dict[str, str] | None = None) -> dict[str, float]:
        """The query's index terms with the IDF weights ``LexicalHit.coverage`` counts them by."""
        s = self._current_searcher()
        return _coverage_idf(s, spelling.query_words(text, corrections, self._prefixes(s, text)))

    def unknown_names(
        self, text: str, corrections: dict[str, str] | None = None, *, first_word: bool = False
    ) -> list[str]:
        """The query's names that no note has (``lexical_spelling.unknown_names``)."""
        s = self._current_searcher()
        return spelling.unknown_names(s, text, corrections, first_word=first_word, prefixes=self._prefixes(s, text))

    def unknown_share(self, text: str, corrections: dict[str, str] | None = None) -> float:
        """The share of the query (IDF-weighted, as coverage counts it) in words no note has."""
        s = self._current_searcher()
        prefixes = self._prefixes(s, text)
        weights = _coverage_idf(s, spelling.query_words(text, corrections, prefixes))
        missing = set(spelling.unknown_terms(s, text, corrections, prefixes))
        return sum(w for t, w in weights.items() if t in missing) / (sum(weights.values()) or 1.0)

    def _prefixes(self, s: Any, text: str) -> dict[str, tuple[str, ...]]:
        """The query's prefix words (``deploy*``) that expand, each to the terms it searches; per
        searcher and query, since one question asks for them several times."""
        if "*" not in text:
            return {}
        key = (id(s), text)
        got = self._expanded.get(key)
        if got is None:
            got = {}
            for own, prefix in spelling.prefix_words(text).items():
                if found := spelling.expand(s, prefix):
                    got[own] = found
            if len(self._expanded) > 64:
                self._expanded.clear()
            self._expanded[key] = got
        return got

    def _names(self, s: Any) -> dict[str, set[str]]:
        """The words of the name fields by first letter, read once per searcher."""
        if self._name_words is None or self._name_words[0] is not s:
            self._name_words = (s, spelling.name_words(s))
        return self._name_words[1]

    def search(
        self,
        text: str,
        limit: int,
        filters: Filters | None = None,
        extra_terms: Sequence[tuple[str, float]] = (),
        coverage: bool = False,
        corrections: dict[str, str] | None = None,
    ) -> list[LexicalHit]:
        """BM25F over the weighted fields; only notes containing a query term are returned.

        ``extra_terms`` are (term, weight) pairs added to the query (pseudo-relevance feedback).
        ``coverage`` fills ``LexicalHit.coverage``: how much of the query (IDF-weighted) matched.
        ``corrections`` (from ``corrections``) replace misspelled query terms.
        """
        s = self._current_searcher()
        words = spelling.query_words(text, corrections, self._prefixes(s, text))
        weighted = [(w, 1.0) for w in words] + [(Word(t, (t,)), w) for t, w in extra_terms]
        if not weighted:
            return []
        query = Or(
            [
                Term(field, term, boost=weight * fw)
                for word, weight in weighted
                for term in word.terms
                for field, fw in FIELD_WEIGHTS.items()
            ]
            + [Term(EXACT_FIELD, word.exact, boost=weight * EXACT_WEIGHT) for word, weight in weighted if word.exact]
        )
        flt = self._filter_docs(s, filters) if filters else None
        if flt is not None and not flt:
            return []  # nothing passes the filter (whoosh would read an empty set as "no filter")
        mask = _hidden_docs(s, filters) if filters else None
        self._searches += 1
        if self._searches > 1:
            # A warm process (serve, eval, a hook host): the same scores from cached postings
            # arrays, many times faster than whoosh's matcher tree once the terms have been seen.
            if self._scorer is None or self._scorer.searcher is not s:
                self._scorer = _ArrayBM25(s)
            return self._scorer.search(weighted, limit, flt, mask, _coverage_idf(s, words) if coverage else None)
        # A tie at the limit is cut by docnum, i.e. by the order notes entered the index: ask for more
        # until the boundary's whole tie is in, so the sort below picks by path and an incremental
        # index and a full rebuild return the same notes (CI saw them differ among 60 equal notes).
        want = limit + 1  # one more than asked tells whether a tie runs past the limit
        while True:
            results = s.search(query, limit=want, filter=flt, mask=mask or None, terms=coverage)
            # scored_length(): the hits collected; len(results) would count every matching note
            if results.scored_length() < want or round(results[limit - 1].score, 9) > round(results[want - 1].score, 9):
                break
            want *= 2
        idf = _coverage_idf(s, words) if coverage else {}
        total = sum(idf.values()) or 1.0
        heads = _heads(words)

        def covered(r: Any) -> float:
            matched = {
                heads.get((f == EXACT_FIELD, tb.decode() if isinstance(tb, bytes) else tb))
                for f, tb in (r.matched_terms() or [])
            }
            return sum(w for t, w in idf.items() if t in matched) / total

        hits = [_hit(r, float(r.score), covered(r) if coverage else 1.0) for r in results]
        # Equal scores in path order, not in the index's insertion order, so an incremental
        # index and a full rebuild rank the same.
        hits.sort(key=lambda h: (-round(h.score, 9), h.path))
        return hits[:limit]

    def _filter_docs(self, searcher: Any, filters: Filters) -> Any:
        """The filter's document set, cached per index generation: the visibility ranges cost
        more than the query itself when whoosh re-evaluates them every time."""
        filters = dataclasses.replace(filters, visible_at=None)  # visibility is the mask's job
        key = (searcher.reader().generation(), filters)
        docs = self._filter_cache.get(key)
        if docs is None:
            query = _filter_query(filters)
            if query is None:
                return None
            docs = set(searcher.docs_for_query(query))
            if len(self._filter_cache) > 32:
                self._filter_cache.clear()
            self._filter_cache[key] = docs
        return docs

    def _current_searcher(self) -> Any:
        """One searcher kept open across queries, refreshed when a writer committed."""
        # Not Searcher.refresh(): it reuses segment readers across generations and so misses
        # deletions another process committed to an existing segment.
        if self._searcher is not None and self._searcher.reader().generation() != self.ix.latest_generation():
            self._searcher.close()
            self._searcher = None
        if self._searcher is None:
            weighting = LiveBM25F(B=BM25_B, K1=BM25_K1, **{f"{EXACT_FIELD}_B": EXACT_B})
            self._searcher = self.ix.searcher(weighting=weighting)
            # a warm process stays warm when a writer commits: its next search reads the postings it
            # needs into arrays again rather than walking whoosh's matchers (several times slower)
            self._scorer = None
        return self._searcher

    def doc_frequencies(self, words: Iterable[str]) -> tuple[dict[str, int], int]:
        """Body document frequency of each term, and the number of documents."""
        live = live_stats(self._current_searcher())
        return {w: live.df("body", w) for w in words}, live.n

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        if self._ix is not None:
            self._ix.close()
            self._ix = None


def _texts(doc: LexicalDoc) -> tuple[str, ...]:
    """The values of TEXT_FIELDS (the exact-form field's: all the others')."""
    texts = (doc.title, doc.aliases, doc.entities, " ".join(doc.tags), doc.headings, doc.body)
    return (*texts, "\n".join(texts))


def term_counts(doc: LexicalDoc) -> tuple[dict[str, int], ...]:
    """Each of TEXT_FIELDS' terms and how often it occurs: what indexing ``doc`` counts, counted ahead."""
    out: list[dict[str, int]] = []
    exact: dict[str, int] = {}
    for text in _texts(doc)[:-1]:
        stems, forms = counts_with_exact(text)
        out.append(stems)
        for w, n in forms.items():
            exact[w] = exact.get(w, 0) + n
    return (*out, exact)


def _counted(schema: Any, doc: LexicalDoc) -> dict[str, Any] | None:
    """What indexing the text fields of ``doc`` gives, from its terms counted ahead (None if not)."""
    if doc.counts is None:
        return None
    return {name: schema[name].postings(c) for name, c in zip(TEXT_FIELDS, doc.counts, strict=True)}


def _fields(doc: LexicalDoc) -> dict[str, Any]:
    """A note's whoosh fields."""
    return dict(
        zip(TEXT_FIELDS, _texts(doc)),
        path=doc.path,
        nid=doc.id,
        tagf=",".join(t.lower() for t in doc.tags) or None,
        type=doc.type,
        scope=doc.scope,
        status=doc.status,
        date=doc.date,
        hide_until=doc.hide_until,
        vfrom=doc.vfrom,
        vuntil=doc.vuntil,
        hash=doc.hash,
        constrained="y" if (doc.status != "active" or doc.hide_until or doc.vfrom or doc.vuntil < FOREVER) else None,
    )


def _coverage_idf(searcher: Any, words: Sequence[Word]) -> dict[str, float]:
    """Each query word's weight in ``LexicalHit.coverage``, by its head: its IDF over the fields, from
    the busiest of its terms (a word no note has weighs most: it is missing)."""
    live = live_stats(searcher)
    n = max(1, live.n)
    out: dict[str, float] = {}
    for w in words:
        df = max(live.df(f, t) for t in w.terms for f in FIELD_WEIGHTS)
        if w.exact:
            df = max(df, live.df(EXACT_FIELD, w.exact))
        out.setdefault(w.head, math.log(1 + n / max(1, df)))
    return out


def _heads(words: Sequence[Word]) -> dict[tuple[bool, str], str]:
    """(in the exact-form field, term) → the head of the query word it belongs to."""
    out: dict[tuple[bool, str], str] = {}
    for w in words:
        for t in w.terms:
            out.setdefault((False, t), w.head)
        if w.exact:
            out.setdefault((True, w.exact), w.head)
    return out


class _ArrayBM25:
    """Whoosh's BM25F scores (the same formula, IDF (``LiveBM25F``'s), field lengths and boosts) computed with numpy
    over postings read once per (field, term) and kept for the searcher's generation.

    Whoosh walks a tree of matchers in Python for every query (slow on a large vault); here a
    query is a handful of array additions once its terms have been seen.
    """

    MAX_POSTINGS = 4_000_000  # cached postings across terms (~48 MB) before the cache starts over

    def __init__(self, searcher: Any) -> None:
        import numpy as np

        self.searcher = searcher
        self.reader = searcher.reader()
        self.n = self.reader.doc_count_all()
        self._np = np
        self._postings: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._size = 0
        self._masks: dict[int, Any] = {}
        self._lengths: dict[str, Any] = {}  # field → every document's length, once a common term needed it

    def _term(self, field: str, term: str) -> tuple[Any, Any]:
        """(docnums, BM25 scores before boosts) of a term in a field."""
        key = (field, term)
        got = self._postings.get(key)
        if got is not None:
            return got
        np, s = self._np, self.searcher
        ids: list[int] = []
        weights: list[float] = []
        btext = s.schema[field].to_bytes(term)
        if (field, btext) in self.reader:
            m = self.reader.postings(field, btext)
            while m.is_active():
                ids.append(m.id())
                weights.append(m.weight())
                m.next()
        docs = np.array(ids, dtype=np.int64)
        if ids:
            idf = s.idf(field, term)
            avgfl = s.avg_field_length(field) or 1
            lengths = self._lengths.get(field)
            if lengths is None and len(ids) * 8 > self.n:
                # a common term: read the whole field's lengths once (cheaper from now on)
                lengths = self._lengths[field] = np.array(
                    [s.doc_field_length(d, field, 1) for d in range(self.n)], dtype=np.float64
                )
            if lengths is not None:
                fl = lengths[docs]
            else:
                fl = np.array([s.doc_field_length(d, field, 1) for d in ids], dtype=np.float64)
            tf = np.array(weights, dtype=np.float64)
            b = EXACT_B if field == EXACT_FIELD else BM25_B
            scores = idf * ((tf * (BM25_K1 + 1)) / (tf + BM25_K1 * ((1 - b) + b * fl / avgfl)))
        else:
            scores = np.zeros(0)
        if self._size + len(ids) > self.MAX_POSTINGS:
            self._postings.clear()
            self._size = 0
        self._postings[key] = (docs, scores)
        self._size += len(ids)
        return docs, scores

    def _allowed(self, docs: set[int] | frozenset[int] | None) -> Any:
        np = self._np
        key = id(docs)
        got = self._masks.get(key)
        if got is not None and got[0] is docs:
            return got[1]
        arr = np.zeros(self.n, dtype=bool)
        if docs:
            arr[np.fromiter(docs, dtype=np.int64, count=len(docs))] = True
        if len(self._masks) > 32:
            self._masks.clear()
        self._masks[key] = (docs, arr)
        return arr

    def search(
        self,
        weighted: Sequence[tuple[Word, float]],
        limit: int,
        flt: set[int] | None,
        mask: set[int] | None,
        idf: dict[str, float] | None = None,
    ) -> list[LexicalHit]:
        """The top ``limit`` documents; with ``idf`` (``_coverage_idf``) each hit's coverage too."""
        np = self._np
        scores = np.zeros(self.n)
        matched = np.zeros(self.n, dtype=bool)
        covered = np.zeros(self.n)
        pending = dict(idf or {})  # each query word counts once, however often it is in the query
        for word, weight in weighted:
            has = np.zeros(self.n, dtype=bool) if word.head in pending else None
            parts = [(f, t, fw) for t in word.terms for f, fw in FIELD_WEIGHTS.items()]
            if word.exact:
                parts.append((EXACT_FIELD, word.exact, EXACT_WEIGHT))
            for field, term, fw in parts:
                docs, sc = self._term(field, term)
                if len(docs):
                    scores[docs] += (weight * fw) * sc
                    matched[docs] = True
                    if has is not None:
                        has[docs] = True
            if has is not None:
                covered[has] += pending.pop(word.head)
        total = sum((idf or {}).values()) or 1.0
        if flt is not None:
            matched &= self._allowed(flt)
        if mask:
            matched[np.fromiter(mask, dtype=np.int64, count=len(mask))] = False
        cand = np.flatnonzero(matched)
        if len(cand) > limit:
            cand = cand[np.argpartition(-scores[cand], limit - 1)[:limit]]
            # the boundary may cut through a tie: take every doc with the limit-th score (the sort
            # below then picks among them by path, as LexicalIndex.search does)
            floor = scores[cand].min()
            cand = np.flatnonzero(matched & (scores >= floor))
        hits = []
        for d in cand.tolist():
            r = self.searcher.stored_fields(d)
            hits.append(_hit(r, float(scores[d]), float(covered[d]) / total if idf is not None else 1.0))
        hits.sort(key=lambda h: (-round(h.score, 9), h.path))
        return hits[:limit]


def _hit(fields: Any, score: float, coverage: float) -> LexicalHit:
    """A hit from a document's stored fields (a whoosh hit or ``stored_fields``: both map names)."""
    return LexicalHit(
        path=fields["path"],
        id=fields["nid"],
        title=fields.get("title", ""),
        type=fields.get("type", "note"),
        scope=fields.get("scope", "global"),
        tags=[t for t in (fields.get("tagf") or "").split(",") if t],
        date=fields.get("date"),
        score=score,
        coverage=coverage,
    )


def _hidden_docs(searcher: Any, f: Filters) -> set[int]:
    """Documents default retrieval must not show now: forgotten, archived, snoozed, outside their
    validity window. Only "constrained" notes are looked at, so this stays cheap."""
    if f.visible_at is None or f.statuses:
        return set()
    inc, now = set(f.include), f.visible_at
    allowed = {"active"} | {s for s in ("archived", "forgotten") if s in inc}
    hidden = set()
    for docnum in searcher.docs_for_query(Term("constrained", "y")):
        doc = searcher.stored_fields(docnum)
        if doc.get("status", "active") not in allowed:
            hidden.add(docnum)
        elif "snoozed" not in inc and (doc.get("hide_until") or 0.0) > now:
            hidden.add(docnum)
        elif "expired" not in inc and (
            (doc.get("vfrom") or 0.0) > now or (doc.get("vuntil") if doc.get("vuntil") is not None else FOREVER) <= now
        ):
            hidden.add(docnum)
    return hidden


def _filter_query(f: Filters) -> Any:
    parts: list[Any] = []
    # (visibility: see _hidden_docs)
    for field, values in (("type", f.types), ("scope", f.scopes), ("status", f.statuses)):
        if values:  # a scope such as topic:* is every scope with that prefix (rank.scope_in)
            parts.append(
                Or([Prefix(field, v[:-1]) if field == "scope" and v.endswith(":*") else Term(field, v) for v in values])
            )
    if f.tags:
        parts.append(And([Term("tagf", t.lower().lstrip("#")) for t in f.tags]))
    if f.since is not None or f.until is not None:
        parts.append(NumericRange("date", f.since, f.until))
    if f.path:
        p = f.path.strip("/")
        if any(c in p for c in "*?["):
            parts.append(Wildcard("path", p))
        else:  # a folder or a note: the path itself, or anything below it
            parts.append(Or([Term("path", p), Term("path", p + ".md"), Prefix("path", p + "/")]))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(parts)
