"""People: a ``person`` note lists the ``identities`` someone goes by (names, e-mail
addresses, handles such as ``@alice`` or ``github:alice``); a mention of any of them in another note
(its ``entities``, a link, an e-mail in ``refs:`` or the body, a name or handle in its prose:
``mentions``) is a mention of that person.

The graph does the resolving (``graph.build_graph`` with the catalogue's identities): this module
reads it. ``person`` answers who someone is; ``people_in`` finds the people a question names, for
``recall``; ``identity_problems`` reports identities two person notes claim (for ``doctor``);
``write_identities`` adds and removes a person's identities (the ``identity`` command).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import MdmemError, NoteNotFound
from ..core.graph import ABOUT, CITES, MENTIONS, Graph
from ..core.note import Problem, iso_from_timestamp
from ..core.refs import BODY
from .graph_view import Visible, graph_node, graph_of, load_graph
from .mentions import PROSE

if TYPE_CHECKING:
    from ..index.store import IndexStore
    from ..results.changes import Change
    from ..results.refs import PersonAnswer

PERSON = "person"
SUMMARY_CHARS = 300
# identity-shaped words in a question: e-mail addresses, @handles, service:handle ids
_IDENTITY_WORD = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?<![\w@])@[\w.-]*\w|\b[A-Za-z][\w.+-]*:[\w.-]*\w", re.UNICODE
)
_NAME_WORD = re.compile(r"[^\W\d_][\w.'\-]*", re.UNICODE)


def find_person(store: IndexStore, g: Graph, name: str) -> str:
    """The person note ``name`` names: by any identity (name, e-mail, handle, …) or a first name
    only they go by, else a note reference (id, path, title) to a person note. A first name several
    people share is an error that lists them."""
    path = g.person(name)
    if path is not None:
        return path
    named = g.prose.who(name)
    if len(named) == 1:
        return named[0]
    if named:
        raise MdmemError(
            f"{name!r} names {len(named)} people: "
            f"{', '.join(f'{g.title(p)} ({p})' for p in named)}. Name one by a fuller name, "
            "a handle or its path."
        )
    try:
        path = store.resolve(name)
    except NoteNotFound:
        path = None
    if path is not None and path in g.nodes and g.nodes[path].type == PERSON:
        return path
    what = f"{name!r} is a note, not a person note" if path is not None else f"No person is known as {name!r}"
    raise MdmemError(
        f"{what}. A person is a note with 'type: person' and 'identities: [names, e-mail "
        f'addresses, @handles]\'; try "mdmem entity {name}" for notes that only mention it.'
    )


def _via(e: Any) -> str:
    """How a note names the person: ``entities: @alice``, ``link: [[Alice Smith]]``, ``refs: a@x.org``."""
    if e.type == ABOUT:
        return f"entities: {e.target}"
    if e.type == MENTIONS:
        return f"{'prose' if e.how == PROSE else 'link'}: {e.target}"
    if e.type == CITES:
        return f"{'body' if e.how == BODY else 'refs'}: {e.target}"
    return f"links ({e.type}): {e.target}"


def summary(body: str, title: str) -> str:
    """A person note's first paragraph as text (not its heading), cut to ``SUMMARY_CHARS``."""
    from ..core.links import display_text

    for para in display_text(body).split("\n\n"):
        text = " ".join(para.split())
        if text and text.casefold() != title.casefold():
            return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"
    return ""


def person(store: IndexStore, name: str, *, filters: dict[str, Any] | None = None) -> PersonAnswer:
    """Who someone is: their person note (title, identities, summary), the notes that mention any
    of their identities (by title), and those notes in time order (dated as the index dates them)."""
    from ..results.graph import TimelineItem
    from ..results.refs import PersonAnswer, PersonMention

    with store.reading() as idx:
        g = graph_of(idx)
        path = find_person(store, g, name)
        row = idx.row(path) or {}
        visible = Visible(idx, store.filters(**(filters or {})), g)
        ways: dict[str, list[str]] = {}
        for e in g.inc.get(path, ()):
            if e.src != path:
                ways.setdefault(e.src, []).append(_via(e))
        visible.prefetch(list(ways))
        nodes = {src: g.nodes[src] for src in ways if src in g.nodes and visible(src)}

        def date(src: str) -> str | None:
            return iso_from_timestamp(nodes[src].date)

        mentions = [
            PersonMention(graph_node(g, src), date(src), list(dict.fromkeys(ways[src])))
            for src in sorted(nodes, key=lambda s: (nodes[s].title.casefold(), s))
        ]
        dated = sorted((s for s in nodes if nodes[s].date is not None), key=lambda s: (nodes[s].date, s))
        try:
            body = store.files.body(path)
        except (OSError, MdmemError):
            body = ""
        title = str(row.get("title") or g.title(path))
        clashes = [
            f"{c.key}: also claimed by {', '.join(p for p in (c.winner, *c.others) if p != path)}; "
            f"mentions go to {c.winner} (the first by path)"
            for c in g.clashes
            if path == c.winner or path in c.others
        ]
        for src, written in sorted(g.ambiguous.items()):  # names in prose that may be this person or another
            for w in dict.fromkeys(w for w in written if path in g.prose.who(w)):
                others = [p for p in g.prose.who(w) if p != path]
                clashes.append(
                    f"{src}: {w!r} may be {g.title(path)} or {', '.join(g.title(p) for p in others)}; "
                    "not counted as a mention of either"
                )
        return PersonAnswer(
            name,
            graph_node(g, path),
            idx.identities_of(path),
            summary(body, title),
            mentions,
            [TimelineItem(graph_node(g, s), date(s)) for s in dated],
            clashes,
        )


def people_in(g: Graph, text: str, ambiguous: dict[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """person note → how ``text`` names them: identity-shaped words (``alice@example.com``,
    ``@alice``, ``github:alice``), then names of up to three words, longest first (a first name only
    one person goes by among them). A name several people go by names none; ``ambiguous`` gets it
    (name → their notes)."""
    if not g.people:
        return {}
    found: dict[str, str] = {}
    for m in _IDENTITY_WORD.finditer(text):
        path = g.person(m.group().rstrip(".,;:!?"))
        if path is not None:
            found.setdefault(path, m.group())
    words = _NAME_WORD.findall(_IDENTITY_WORD.sub(" ", text))
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            name = " ".join(words[i : i + n])
            if n == 1 and len(name) < 3:
                continue
            if any(name in other for other in found.values()):
                continue
            path = g.person(name)
            named = (path,) if path is not None else g.prose.who(name) if name[0].isupper() else ()
            if len(named) == 1:
                found.setdefault(named[0], name)
            elif named and ambiguous is not None:
                ambiguous[name] = named
    return found


def identity_problems(store: IndexStore, *, notice: bool = True) -> list[Problem]:
    """One problem per identity that two person notes claim alike, on each note it does not go to."""
    g = load_graph(store, notice=notice)
    out = []
    for c in g.clashes:
        for other in c.others:
            out.append(
                Problem(
                    other,
                    "identities",
                    f"identity {c.key!r} is also claimed by {c.winner}; "
                    f"mentions of it resolve to {c.winner} (the first by path)",
                    "keep each identity on one person note: remove it here or there, or merge the notes",
                )
            )
    return out


# -- writing a person's identities ------------------------------------------------------------------


def write_identities(
    store: IndexStore, name: str, add: Sequence[str], remove: Sequence[str], *, commit: bool | None = None
) -> Change:
    """Add identities to the person note ``name`` names (by any identity, or as a note) and remove
    others, in its frontmatter ``identities`` (only that key; atomic; one commit). One another person
    note claims is refused. With no person known by ``name`` and no note of that name, a person note
    titled ``name`` is written, its identities ``name`` and ``add``."""
    from ..core.refs import mention_key
    from ..results.changes import Change
    from .lifecycle import add as add_note
    from .lifecycle import edit_note

    g = load_graph(store)
    try:
        path = find_person(store, g, name)
    except MdmemError:
        try:
            store.resolve(name)
        except NoteNotFound:
            path = None
        else:
            raise
    for ident in add:
        other = g.person(ident)
        if other is not None and other != path:
            raise MdmemError(
                f"{ident!r} is already an identity of {g.title(other)} ({other}); an identity names one person. "
                f'Remove it there first: mdmem identity "{g.title(other)}" --remove "{ident}".'
            )
    if path is None:
        if remove:
            raise MdmemError(f"No person is known as {name!r}; there is nothing to remove.")
        wanted = list(dict.fromkeys([" ".join(name.split()), *add]))
        made = add_note(store, name, "", type=PERSON, commit=commit, extra={"identities": wanted})
        return Change("identity", made.id, made.path, made.title, {"identities": wanted, "created": True}, made.commit)
    drop = {mention_key(x) for x in remove}

    def edit(text: str, rel: str, note: Any) -> tuple[str, dict[str, Any]]:
        from ..core.note import set_fields

        raw = note.meta.get("identities")
        have = [str(x) for x in raw] if isinstance(raw, list) else [str(raw)] if raw else []
        missing = [x for x in remove if mention_key(x) not in {mention_key(h) for h in have}]
        if missing:
            raise MdmemError(f"{rel} has no identity {missing[0]!r}; its identities are: {', '.join(have) or 'none'}.")
        kept = [h for h in have if mention_key(h) not in drop]
        known = {mention_key(h) for h in kept}
        new = kept + [x for x in dict.fromkeys(add) if mention_key(x) not in known]
        if new == have:
            return text, {}
        added = [x for x in new if x not in have]
        removed = [x for x in have if x not in new]
        return set_fields(text, {"identities": new}), {"identities": new, "added": added, "removed": removed}

    def message(rel: str, title: str, fields: dict[str, Any]) -> str:
        said = [*(f"+{x}" for x in fields.get("added", [])), *(f"-{x}" for x in fields.get("removed", []))]
        return f'mdmem: identities of "{title}": {", ".join(said)}'

    return edit_note(store, path, edit, "identity", commit=commit, message=message)
