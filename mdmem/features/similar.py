"""Notes like a note (``similar``): by meaning (its chunks' vectors, when the index has them) and by
its distinctive words (BM25 on the terms that characterise it, tf·idf), fused by weighted RRF, the
note itself left out and the notes it is already linked with marked. ``linking.suggest_links`` (the
links ``add`` proposes) is this list, less what is linked and what shares too little."""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

from ..core.rank import rrf
from ..core.text import terms, tokenize
from ..results.search import SimilarNote, SimilarNotes
from .graph_view import hints_graph

if TYPE_CHECKING:
    from ..core.note import Note
    from ..core.rank import Filters
    from ..index.reading import IndexRead
    from ..index.semantic import Semantic
    from ..index.store import IndexStore

DISTINCTIVE_TERMS = 12  # the note's words that make the BM25 query
WEIGHTS = {"words": 1.0, "meaning": 1.0}


def similar(
    store: IndexStore,
    sem: Semantic | None,
    ref: str,
    limit: int,
    filters: Filters,
    *,
    fresh: bool = True,
    notes: dict[str, tuple[Note, set[str]]] | None = None,
) -> SimilarNotes:
    """The ``limit`` notes most like ``ref`` that pass ``filters``, best first (``sem`` None: words only).
    ``fresh``: bring the vectors up to date first, as a vector read does (``Semantic.repair``, which may
    embed a few chunks); False for a writer's suggestions, which must not embed (``[embed] auto``).
    ``notes``: notes read (with their terms) by earlier calls of one pass, shared, so each is read once."""
    if sem is not None and fresh:
        sem.repair()  # the store's repair, then pending chunks get vectors: a just-written note has its own
    with store.reading(notice=not (sem is not None and fresh)) as idx:  # the vector side's repair noticed
        return _similar(store, idx, sem, ref, limit, filters, {} if notes is None else notes)


def _similar(
    store: IndexStore,
    idx: IndexRead,
    sem: Semantic | None,
    ref: str,
    limit: int,
    filters: Filters,
    notes: dict[str, tuple[Note, set[str]]],
) -> SimilarNotes:
    def read(path: str) -> tuple[Note, set[str]]:
        if path not in notes:
            n = store.files.read_note(path)[0]
            notes[path] = (n, set(terms(f"{n.title}\n{n.body}")))
        return notes[path]

    src = store.resolve(ref)
    note, mine = read(src)
    text = f"{note.title}\n{note.title}\n{note.body}"  # the title counts twice, as BM25F weighs it
    words = _by_words(idx, text, src, limit * 3 + 5, filters)
    vec = sem.note_vector(src) if sem is not None else None
    meaning: list[tuple[str, float]] = []
    if vec is not None and sem is not None:
        cands = sem.note_candidates(vec, limit * 3 + 5, filters, sem.query_settings.min_similarity)
        meaning = [(c.path, c.explain["cosine"]) for c in cands if c.path != src]
    fused = rrf({"words": words, "meaning": meaning}, WEIGHTS)
    order = sorted(fused, key=lambda p: (-fused[p]["rrf"], p))[:limit]
    g = hints_graph(store, [src])  # its edges as the whole graph has them, without building that graph
    out_of = {e.dst for e in g.out.get(src, ())}
    into = {e.src for e in g.inc.get(src, ())}
    rows = idx.rows(order)
    cosines = dict(meaning)
    results = []
    for path in order:
        row = rows.get(path)
        if row is None:
            continue
        try:
            shared = len(mine & read(path)[1])
        except OSError:
            continue
        linked = {(True, True): "both", (True, False): "out", (False, True): "in"}.get((path in out_of, path in into))
        results.append(
            SimilarNote(
                str(row["id"]),
                path,
                str(row["title"]),
                str(row["type"]),
                round(fused[path]["rrf"], 5),
                round(shared / len(mine), 3) if mine else 0.0,
                shared,
                cosines.get(path),
                linked,
            )
        )
    return SimilarNotes(note.id, src, note.title, results, vec is not None)


def _by_words(idx: IndexRead, text: str, src: str, k: int, filters: Filters) -> list[tuple[str, float]]:
    """BM25 for the note's most distinctive terms (tf·idf over the vault), weighted by it."""
    tf = Counter(t.text for t in tokenize(text[:20_000]))
    dfs, n = idx.doc_frequencies(tf)
    scored = sorted(
        (
            (t, (1.0 + math.log(c)) * math.log(1 + n / dfs[t]))
            for t, c in tf.items()
            if dfs.get(t, 0) >= 2 and len(t) >= 3 and not t.isdigit()
        ),
        key=lambda x: (-x[1], x[0]),
    )
    top = scored[:DISTINCTIVE_TERMS]
    if not top:
        return []
    best = top[0][1]
    hits = idx.search("", k + 1, filters, extra_terms=[(t, w / best) for t, w in top])
    return [(h.path, h.score) for h in hits if h.path != src]
