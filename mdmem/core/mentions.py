"""People named in prose (pure): the forms a person's names and handles take in a note's text, and
where a text names them outside code. A form two people share names neither: it is ambiguous.

A person note's identities as written (its title and aliases among them, ``Catalog.identities_of``)
give the forms: each name (case-folded; a name of one word is only taken when the text capitalises it,
so "will" is no mention of Will), the first name of a name of several words ("Ada" of "Ada Lovelace",
weaker than a name written as such), and each handle ("@alice"; "github:alice" also as "@alice").
E-mail addresses and URLs are references (``refs``), not prose names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .links import code_spans, shown_part
from .refs import blank_refs, classify

WRITTEN, GIVEN = 0, 1  # a form's strength: a name or handle as the person note writes it, a first name
MAX_WORDS = 4  # the longest name looked for
_HANDLE = re.compile(r"(?<![\w@/.:])@([A-Za-z0-9_](?:[\w.-]*[A-Za-z0-9_])?)")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)  # "O'Brien" is O + Brien, "Ada's" Ada + s: alike in names and text
_NAME = re.compile(r"[^\W\d_][^\W\d_'’.\s-]*(?:[\s'’.-]+[^\W\d_]+)*[.]?", re.UNICODE)
_JOINERS = ("", "'", "’", "-", ".")  # what may stand between two words of one name (beside spaces)
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_WIKILINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]")  # no "[" inside: each "[[" is tried once, not to the line's end


@dataclass(frozen=True, slots=True)
class ProseNames:
    """Every form (case-folded name, or ``@handle``) → the person notes it names, best claims only
    (two or more: ambiguous); ``single``: the one-word names, taken only when capitalised."""

    forms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    single: frozenset[str] = frozenset()

    def who(self, form: str) -> tuple[str, ...]:
        """The person notes a form (as a question or a note writes it) names: one, several (ambiguous) or none."""
        key = form.strip().casefold()
        return self.forms.get(key if key.startswith("@") else " ".join(key.split()), ())


def name_forms(written: str) -> list[tuple[str, int]]:
    """The prose forms of one identity as written, with their strength (see the module docstring)."""
    kv = classify(written)
    if kv is None:
        return []
    kind, value = kv
    if kind == "handle":
        return [(value, WRITTEN)]
    if kind == "id" and ":" in value:
        return [("@" + value.split(":", 1)[1], WRITTEN)]
    if kind != "other":
        return []  # e-mail addresses, URLs, tickets, paths: references, not names
    if not _NAME.fullmatch(written.strip()):
        return []  # digits or signs in it: not a name people write in prose
    words = _WORD.findall(written)
    out = [(" ".join(w.casefold() for w in words), WRITTEN)]
    if len(words) > 1 and len(words[0]) >= 3 and words[0][0].isupper():
        out.append((words[0].casefold(), GIVEN))
    return out


def prose_names(people: Iterable[tuple[str, Iterable[str]]]) -> ProseNames:
    """The forms of every person (path, identities as written): each goes to the notes that claim
    it most strongly; two such notes make it ambiguous."""
    claims: dict[str, dict[str, int]] = {}
    single: set[str] = set()
    for path, identities in people:
        for written in identities:
            for form, strength in name_forms(written):
                mine = claims.setdefault(form, {})
                mine[path] = min(strength, mine.get(path, strength))
                if not form.startswith("@") and " " not in form:
                    single.add(form)
    forms = {}
    for form, by in claims.items():
        best = min(by.values())
        forms[form] = tuple(sorted(p for p, s in by.items() if s == best))
    return ProseNames(forms, frozenset(single))


def prose_of(body: str) -> str:
    """A markdown body without its fenced code blocks, code spans and wikilinks (what its prose says:
    not code, and not links, which are edges of their own). Only the part ``display_text`` shows is
    read (``links.shown_part``): the names are looked for in that text."""
    out: list[str] = []
    fence = ""
    for line in shown_part(body).splitlines():
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        out.append(line)
    text = "\n".join(out)
    parts, pos = [], 0
    for start, end, _ in code_spans(text):  # paired in one pass (a back-reference was quadratic on backticks)
        parts.append(text[pos:start])
        pos = end
    parts.append(text[pos:])
    return _WIKILINK.sub(" ", " ".join(parts))


def find_names(text: str, names: ProseNames) -> list[tuple[str, str]]:
    """(form, as written) of each person's name or handle in ``text`` (prose: code already
    removed), longest names first, each stretch of text counted once, in order of appearance."""
    text = blank_refs(text)  # an e-mail address or a URL is a reference (refs), not prose
    found: list[tuple[int, str, str]] = []
    for m in _HANDLE.finditer(text):
        form = "@" + m.group(1).casefold()
        if form in names.forms:
            found.append((m.start(), form, m.group()))
    lengths: dict[str, set[int]] = {}  # a name's first word → how many words its names have
    for name in names.forms:
        if not name.startswith("@"):
            first, *rest = name.split(" ")
            lengths.setdefault(first, set()).add(1 + len(rest))
    words = list(_WORD.finditer(text))
    folded = [w.group().casefold() for w in words]
    starts = [i for i, w in enumerate(folded) if w in lengths]  # (most words start no name)
    used: set[int] = set()
    for n in range(MAX_WORDS, 0, -1):
        for i in starts:
            if n not in lengths[folded[i]] or i + n > len(words) or any(j in used for j in range(i, i + n)):
                continue
            span = words[i : i + n]
            if any(text[a.end() : b.start()].strip() not in _JOINERS for a, b in zip(span, span[1:])):
                continue  # a name's words stand next to each other
            form = " ".join(folded[i : i + n])
            if form not in names.forms or (form in names.single and not span[0].group()[0].isupper()):
                continue
            if text[span[0].start() - 1 : span[0].start()] == "@":
                continue  # part of a handle
            used.update(range(i, i + n))
            found.append((span[0].start(), form, text[span[0].start() : span[-1].end()]))
    return [(form, written) for _, form, written in sorted(found)]
