"""People named in a note's prose, added to the graph as the links they are: "Ada Lovelace reviewed the
table" and "Pinged @countess_ada" mention Ada as ``[[Ada Lovelace]]`` would. The forms and the matching
are pure (``core.mentions``); this module finds the notes that may hold a form (BM25: every word of it)
and reads their prose (not code, not links: a link is an edge already). A form two people share is no
mention of either: the graph keeps the notes that write one in ``ambiguous``, for ``person`` to show.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from ..core.graph import MENTIONS, Edge, Graph, note_node
from ..core.links import display_text
from ..core.mentions import ProseNames, find_names, prose_names, prose_of

if TYPE_CHECKING:
    from ..index.reading import IndexRead

PROSE = "prose"  # how a mention found in a note's text was resolved (``Edge.how``)
CANDIDATES = 2000  # notes read per form at most (BM25's best for all its words)
PERSON = "person"


def people_names(idx: IndexRead) -> ProseNames:
    """The prose forms of the vault's person notes (their identities as written)."""
    people = sorted(idx.newest_paths(PERSON, 1_000_000))
    return prose_names((p, idx.identities_of(p)) for p in people)


def add_prose_mentions(idx: IndexRead, g: Graph, paths: Collection[str] | None = None) -> None:
    """Add an edge from each note whose prose names a person (by a form only they go by) to their
    note, and keep ``g.prose`` (the forms) and ``g.ambiguous`` (note → the shared forms it writes).
    ``paths``: only the edges at these notes, each as the whole graph has it (a graph of the notes
    around them: ``graph_near``; the other end's node is added when it lacks it)."""
    names = people_names(idx)
    g.prose = names
    if not names.forms:
        return
    at = set(paths) if paths is not None else None
    wanted: set[str] = set(at or ())

    def holding(words: str) -> set[str]:  # the notes with every word of a form (BM25's best ones)
        hits = idx.search(words, CANDIDATES, coverage=True)
        return {h.path for h in hits if h.coverage >= 0.999}

    for form, people in names.forms.items():
        if at is not None and not at.intersection(people):
            continue  # edges into people outside ``paths``: only those ``paths`` write are needed
        wanted |= holding(form.lstrip("@"))
    rows = (
        {
            r[0]: r
            for r in idx.note_rows_of(wanted | {p for ps in names.forms.values() for p in ps})
            if r[0] not in g.nodes
        }
        if at is not None
        else {}
    )
    for src in sorted(wanted):
        if src not in g.nodes and src not in rows:
            continue
        try:
            text = display_text(prose_of(idx.files.body(src)))
        except OSError:
            continue
        seen: set[str] = set()
        for form, written in find_names(text, names):
            people = names.forms[form]
            if len(people) > 1:
                g.ambiguous.setdefault(src, []).append(written)
                continue
            dst = people[0]
            if dst == src or dst in seen or (at is not None and src not in at and dst not in at):
                continue
            seen.add(dst)
            for key in (src, dst):
                if key not in g.nodes and key in rows:
                    g.nodes[key] = note_node(rows[key])
            edge = Edge(src, dst, MENTIONS, written, how=PROSE)
            g.out.setdefault(src, []).append(edge)
            g.inc.setdefault(dst, []).append(edge)
