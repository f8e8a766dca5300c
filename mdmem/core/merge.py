"""A note both sides of a sync changed: a three-way merge that knows frontmatter (key by
key, ``updated`` the later of the two) and leaves the body to a line merge the caller gives (git
merge-file); and the texts a true conflict leaves: the other side's version as a conflict copy beside
the note, that copy back as the note (``--theirs``), and both versions in one note (``--both``). Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .note import frontmatter_span, parse_note, set_fields

CONFLICT_OF = "conflict_of"  # in a conflict copy: the path of the note it is the other version of
CONFLICT_FROM = "conflict_from"  # … and the commit that version came from
COPY_TITLE = " (conflict copy)"
_COPY_NAME = re.compile(r"\.conflict-([0-9a-f]{7,40})(?:-\d+)?\.md$", re.IGNORECASE)
_KEY = re.compile(r"^(['\"]?)([^\s'\"#:\-][^:]*?)\1\s*:(\s|$)")

LineMerge = Callable[[str, str, str], "str | None"]  # (base, ours, theirs) → merged text, None on conflict


@dataclass(frozen=True, slots=True)
class Parts:
    """A note's text cut at its frontmatter: ``head`` (opening fence), ``fm`` (None: no frontmatter),
    ``fence`` (the closing fence with its line end) and ``body``."""

    head: str
    fm: str | None
    fence: str
    body: str

    def text(self) -> str:
        if self.fm is None:
            return self.body
        return (self.head or "---\n") + self.fm + (self.fence or "---\n") + self.body


def parts(text: str) -> Parts:
    """``text`` cut into its frontmatter and its body."""
    span = frontmatter_span(text)
    if span is None:
        return Parts("", None, "", text)
    start, end, body = span
    return Parts(text[:start], text[start:end], text[end:body], text[body:])


def key_blocks(fm: str) -> tuple[str, list[tuple[str, str]]]:
    """Frontmatter as (the lines before its first key, [(key, the key's lines)]): a key's block runs
    to the next top-level key, so nested values, list items and comments travel with their key."""
    pre = ""
    blocks: list[list[str]] = []
    for line in fm.splitlines(keepends=True):
        m = _KEY.match(line)
        if m:
            blocks.append([m.group(2), line])
        elif blocks:
            blocks[-1][1] += line
        else:
            pre += line
    return pre, [(k, t if t.endswith("\n") else t + "\n") for k, t in blocks]


_CONFLICT = object()


def _pick(base: str | None, ours: str | None, theirs: str | None) -> object:
    """The three-way choice for one value: the side that changed it, or ``_CONFLICT``."""

    def same(a: str | None, b: str | None) -> bool:
        return (a or "").rstrip() == (b or "").rstrip() and (a is None) == (b is None)

    if same(ours, theirs):
        return ours
    if same(ours, base):
        return theirs
    if same(theirs, base):
        return ours
    return _CONFLICT


def _value(block: str) -> str:
    return block.split(":", 1)[1].split("#", 1)[0].strip().strip("'\"")


def merge_frontmatter(base: str, ours: str, theirs: str) -> tuple[str | None, list[str]]:
    """Frontmatter merged key by key: a key only one side changed takes that side's lines, in ours'
    order (keys theirs added go after the key before them in theirs); ``updated`` changed on both
    sides takes the later time. Returns (merged, []), or (None, the keys both sides changed apart)."""
    (bp, b), (op, o), (tp, t) = key_blocks(base), key_blocks(ours), key_blocks(theirs)
    bd, od, td = dict(b), dict(o), dict(t)
    if len(od) != len(o) or len(td) != len(t) or len(bd) != len(b):
        return None, ["duplicate keys"]
    order = [k for k, _ in o]
    for i, (k, _) in enumerate(t):
        if k not in order:
            before = next((p for p, _ in reversed(t[:i]) if p in order), None)
            order.insert(order.index(before) + 1 if before is not None else 0, k)
    out, conflicts = [], []
    pre = _pick(bp, op, tp)
    if pre is _CONFLICT:
        conflicts.append("(comments before the first key)")
    for k in order:
        v = _pick(bd.get(k), od.get(k), td.get(k))
        if v is _CONFLICT and k == "updated" and od.get(k) and td.get(k):
            v = max(od[k], td[k], key=_value)
        if v is _CONFLICT:
            conflicts.append(k)
        elif isinstance(v, str):
            out.append(v)
    if conflicts:
        return None, conflicts
    return (pre if isinstance(pre, str) else "") + "".join(out), []


@dataclass(frozen=True, slots=True)
class Merged:
    """A three-way merge of a note: its ``text``, or None with what both sides changed apart."""

    text: str | None
    conflicts: list[str]


def merge_note(base: str | None, ours: str, theirs: str, merge_lines: LineMerge) -> Merged:
    """Merge two versions of a note that both changed since ``base`` (None: both added it): the
    frontmatter by key (``merge_frontmatter``), the body by lines (``merge_lines``). One side's
    frontmatter change and the other's body edit (a pin here, an edit there) always merge."""
    if ours == theirs:
        return Merged(ours, [])
    b, o, t = parts(base or ""), parts(ours), parts(theirs)
    conflicts: list[str] = []
    body = _pick(b.body, o.body, t.body)
    if body is _CONFLICT:
        body = merge_lines(b.body, o.body, t.body)
        if body is None:
            conflicts.append("body")
    fm = _pick(b.fm, o.fm, t.fm)
    if fm is _CONFLICT:
        fm, keys = merge_frontmatter(b.fm or "", o.fm or "", t.fm or "")
        conflicts += keys
    if conflicts:
        return Merged(None, conflicts)
    shape = o if o.fm is not None else t
    return Merged(Parts(shape.head, fm if isinstance(fm, str) else None, shape.fence, str(body)).text(), [])


# -- conflict copies -----------------------------------------------------------------------------


def copy_name(rel: str, commit: str, taken: Callable[[str], bool]) -> str:
    """The path of the conflict copy of ``rel`` from ``commit``: ``notes/a.conflict-1a2b3c4.md`` beside
    it (``-2``, ``-3`` … while ``taken``). Other files keep their extension."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    base = f"{folder + '/' if folder else ''}{stem}.conflict-{commit[:7]}"
    candidate, n = f"{base}{dot}{ext}", 2
    while taken(candidate):
        candidate, n = f"{base}-{n}{dot}{ext}", n + 1
    return candidate


_FILE_COPY = re.compile(r"\.conflict-[0-9a-f]{7,40}(?:-\d+)?(?=(?:\.[^./]+)?$)", re.IGNORECASE)


def copy_original(rel: str) -> str | None:
    """The path a conflict copy's name was made from (``img/a.conflict-1a2b3c4.png`` → ``img/a.png``),
    for files that are not notes, whose copies carry no frontmatter; None when ``rel`` is not named so."""
    folder, _, name = rel.rpartition("/")
    m = _FILE_COPY.search(name)
    if m is None:
        return None
    name = name[: m.start()] + name[m.end() :]
    return f"{folder}/{name}" if folder else name


def is_copy_name(rel: str) -> bool:
    """Whether a path is named as a conflict copy (its frontmatter says which note it belongs to)."""
    return copy_commit(rel) is not None


def copy_commit(rel: str) -> str | None:
    """The commit a conflict copy's name carries (``NOTE.conflict-COMMIT.md``), or None for another name."""
    m = _COPY_NAME.search(rel)
    return m.group(1) if m else None


def conflict_copy(theirs: str, original: str, commit: str) -> str:
    """The other side's text as a note of its own: its frontmatter names the note it conflicts with
    (``conflict_of``) and the commit (``conflict_from``); its id, if any, gets a suffix so the note's
    id still names one note; its title says it is a conflict copy — also when the title came from the
    note's ``# heading`` or file name (written then with ``DERIVED``, so ``strip_copy`` removes it
    again). ``strip_copy`` undoes this."""
    note = parse_note(theirs, original)
    meta = note.meta
    updates: dict[str, object] = {CONFLICT_OF: original, CONFLICT_FROM: commit}
    if isinstance(meta.get("id"), str):
        updates["id"] = f"{meta['id']}-conflict-{commit[:7]}"
    derived = not isinstance(meta.get("title"), str)
    updates["title"] = (note.title if derived else meta["title"]) + COPY_TITLE
    text = set_fields(theirs, updates)
    if derived:
        text = _mark_title(text)
    return text


DERIVED = "  # mdmem: from the note's heading"  # a title conflict_copy wrote where the note had none


def _mark_title(text: str) -> str:
    p = parts(text)
    if p.fm is None:
        return text
    fm = re.sub(
        r"^(title:[^\n]*?)(\r?)$", lambda m: m.group(1) + DERIVED + m.group(2), p.fm, count=1, flags=re.MULTILINE
    )
    return Parts(p.head, fm, p.fence, p.body).text()


def copy_of(text: str, rel: str) -> tuple[str, str] | None:
    """(the note it is a copy of, the commit) when ``text`` is a conflict copy, else None."""
    meta = parse_note(text, rel).meta
    of, commit = meta.get(CONFLICT_OF), meta.get(CONFLICT_FROM)
    return (of, str(commit or "")) if isinstance(of, str) and of else None


def strip_copy(text: str, rel: str) -> str:
    """A conflict copy's text as the note it was: the conflict keys gone, id and title restored (a title
    ``conflict_copy`` added is removed, and a frontmatter block it made is removed when left empty)."""
    meta = parse_note(text, rel).meta
    commit = str(meta.get(CONFLICT_FROM) or "")[:7]
    updates: dict[str, object] = {CONFLICT_OF: None, CONFLICT_FROM: None}
    note_id, title = meta.get("id"), meta.get("title")
    if isinstance(note_id, str) and note_id.endswith(f"-conflict-{commit}"):
        updates["id"] = note_id.removesuffix(f"-conflict-{commit}")
    p = parts(text)
    if p.fm is not None and re.search(r"^title:[^\n]*" + re.escape(DERIVED) + r"\r?$", p.fm, re.MULTILINE):
        updates["title"] = None
    elif isinstance(title, str) and title.endswith(COPY_TITLE):
        updates["title"] = title.removesuffix(COPY_TITLE)
    out = set_fields(text, updates)
    p = parts(out)
    if p.fm is not None and not p.fm.strip() and updates.get("title", "") is None:
        return p.body  # the block conflict_copy made for a note that had none
    return out


def both_texts(ours: str, others: list[tuple[str, str]]) -> str:
    """``--both``: one note holding every version: ours (its frontmatter, with the keys only the
    others have), then each other version's body under a heading naming where it came from
    (``others``: (label, text as the note it was))."""
    o = parts(ours)
    fm = o.fm
    body = o.body.rstrip("\n") + "\n"
    for label, text in others:
        t = parts(text)
        if t.fm is not None:
            have = {k for k, _ in key_blocks(fm or "")[1]}
            extra = "".join(b for k, b in key_blocks(t.fm)[1] if k not in have)
            fm = (fm or "") + extra if extra else fm
        if t.body.strip() and t.body.strip() != o.body.strip():
            body += f"\n## Other version ({label})\n\n" + t.body.strip("\n") + "\n"
    return Parts(o.head, fm, o.fence, body).text()
