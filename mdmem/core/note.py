"""Pure note parsing and writing: frontmatter + markdown body.

Reading never fails: broken YAML, bad values and odd bytes give a note with defaults for what
could not be read, plus a list of ``Problem``s naming the field and the fix. Writing edits the
frontmatter text in place so comments, key order and unknown keys survive a round trip.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .links import Heading, Link, analyze_body, property_links, split_wikilink
from .schema import DATE_KEYS, STATUSES, TYPES

MAX_FRONTMATTER = 64 * 1024  # larger YAML blocks are not parsed (YAML bombs, pasted dumps)
# Without aliases, loaded YAML holds at most about one value or character per byte of its text;
# anchors and aliases ("billion laughs") can make 500 bytes expand to 9^9 values.
MAX_EXPANDED = 2 * MAX_FRONTMATTER

_FENCE = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_CONFLICT = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
_SCOPE = re.compile(r"^(global|(project|topic):[\w.\-/]+)$", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with a note: where, what, and how to fix it."""

    path: str
    field: str
    message: str
    fix: str = ""


@dataclass(slots=True)
class Note:
    """A parsed note. ``meta`` holds the raw frontmatter (every key, as YAML read it)."""

    path: str  # vault-relative POSIX path
    id: str
    title: str
    body: str
    meta: dict[str, Any] = field(default_factory=dict)
    type: str = "note"
    salience: float = 0.5
    confidence: float = 1.0
    pinned: bool = False
    status: str = "active"
    scope: str = "global"
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)  # external references as written
    identities: list[str] = field(default_factory=list)  # a person's names, e-mail addresses, handles
    links: list[Link] = field(default_factory=list)
    supersedes: str | None = None
    created: str | None = None
    updated: str | None = None
    authored: str | None = None
    snoozed_until: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    headings: list[Heading] = field(default_factory=list)
    text: str = ""  # the body as plain text, for the index
    body_refs: list[str] = field(default_factory=list)  # URLs and e-mail addresses in the body (not in code)
    problems: list[Problem] = field(default_factory=list)
    has_id: bool = False  # True when ``id`` came from the frontmatter

    @property
    def date(self) -> str | None:
        """When the content dates from: authored, else updated, else created."""
        return self.authored or self.updated or self.created


@dataclass(frozen=True, slots=True)
class NoteDates:
    """A note's dates as the index keeps them, and where each came from: "frontmatter", "git" (the
    first and last commit that touched the file, following renames) or "mtime"."""

    date: float | None  # what filters, recency and decay go by (see ``note_dates``)
    created: str | None = None
    updated: str | None = None
    created_from: str | None = None
    updated_from: str | None = None
    git_created: float | None = None  # the file's first and last commit (author time), if git knows it
    git_updated: float | None = None


def note_dates(note: Note, mtime: float, git: tuple[float, float] | None = None, modified: bool = False) -> NoteDates:
    """Dates for a note: the frontmatter's win; git's history fills what it leaves out; the file's
    mtime is used only for a file git does not know, or a tracked file edited (``modified``) since
    its last commit, when that edit is newer.

    ``date`` is the frontmatter's own date (authored, updated, created) when it has one, else
    ``updated``. ``created`` stays empty for a note whose frontmatter has only other dates and that
    git does not know, so its timeline place is still its own date, not the file's.
    """
    git_created, git_updated = git if git is not None else (None, None)
    own = note.date is not None
    created: str | None
    created_from: str | None
    updated: str | None
    updated_from: str | None
    if note.created:
        created, created_from = note.created, "frontmatter"
    elif git_created is not None:
        created, created_from = iso_from_timestamp(git_created), "git"
    elif not own:
        created, created_from = iso_from_timestamp(mtime), "mtime"
    else:
        created = created_from = None
    edited = git_updated is None or (modified and mtime > git_updated)
    file_time = mtime if edited else git_updated
    if note.updated:
        updated, updated_from = note.updated, "frontmatter"
    elif not edited:
        updated, updated_from = iso_from_timestamp(git_updated), "git"
    elif not own or git_updated is not None:
        updated, updated_from = iso_from_timestamp(mtime), "mtime"
    else:
        updated = updated_from = None
    date = iso_to_timestamp(note.date) if own else file_time
    return NoteDates(date, created, updated, created_from, updated_from, git_created, git_updated)


@dataclass(frozen=True, slots=True)
class NewNote:
    """A note ``add_many`` writes: its frontmatter (with ``id`` and ``title``), body and folder (and file
    name, else the title's slug); with ``replace``, a note that already has its id takes the new body
    (None: keeps its own) and the frontmatter keys in ``updates`` instead of being skipped."""

    meta: dict[str, Any]
    body: str | None
    folder: str
    replace: bool = False
    name: str | None = None
    updates: dict[str, Any] | None = None


def default_id(path: str) -> str:
    """The identity of a note with no ``id`` key: its vault-relative path without ``.md``."""
    return path[:-3] if path.lower().endswith(".md") else path


def frontmatter_span(text: str) -> tuple[int, int, int] | None:
    """(start, end, body start) of the YAML between the fences, or None without frontmatter."""
    m = _FENCE.match(text)
    if not m:
        return None
    close = _CLOSE.search(text, m.end())
    if not close:
        return None
    body_start = close.end()
    if text.startswith("\r\n", body_start):
        body_start += 2
    elif text.startswith("\n", body_start):
        body_start += 1
    return m.end(), close.start(), body_start


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """(frontmatter YAML or None, body, offset of body in text)."""
    span = frontmatter_span(text)
    if span is None:
        return None, text, 0
    return text[span[0] : span[1]], text[span[2] :], span[2]


def _load_yaml(fm: str) -> Any:
    import frontmatter  # python-frontmatter's YAML handler (safe, C loader when available)

    return frontmatter.YAMLHandler().load(fm)


def parse_note(text: str, path: str) -> Note:
    """Parse a note's text. Never raises for bad content; problems are recorded on the note."""
    problems: list[Problem] = []
    fm, body, _ = split_frontmatter(text)
    meta: dict[str, Any] = {}
    if fm is None and text.lstrip("\ufeff").startswith("---"):
        problems.append(
            Problem(
                path,
                "frontmatter",
                "frontmatter has no closing '---' line",
                "add a line with '---' after the last frontmatter key",
            )
        )
    if fm is not None and fm.strip():
        if len(fm) > MAX_FRONTMATTER:
            problems.append(
                Problem(
                    path,
                    "frontmatter",
                    f"frontmatter is {len(fm)} bytes; over {MAX_FRONTMATTER} is not read",
                    "move data into the body",
                )
            )
        else:
            try:
                loaded = _load_yaml(fm)
            except Exception as exc:  # any YAML error: index the body anyway
                problems.append(
                    Problem(
                        path,
                        "frontmatter",
                        f"invalid YAML: {_yaml_error(exc)}",
                        "fix the YAML syntax (quote values containing ':' or '#')",
                    )
                )
                loaded = None
            if loaded is not None and _too_big(loaded, MAX_EXPANDED):
                problems.append(
                    Problem(
                        path,
                        "frontmatter",
                        "frontmatter expands to too much data through "
                        "YAML aliases (*name) or a self-reference; it is not read",
                        "write the values out instead of repeating '&anchor'/'*alias'",
                    )
                )
                loaded = None
            if isinstance(loaded, dict):
                meta = {str(k): v for k, v in loaded.items()}
            elif loaded is not None:
                problems.append(
                    Problem(
                        path,
                        "frontmatter",
                        "frontmatter is not a mapping of keys",
                        "write frontmatter as 'key: value' lines",
                    )
                )
    if _CONFLICT.search(text):
        problems.append(
            Problem(
                path,
                "body",
                "contains git merge-conflict markers",
                "resolve the conflict and remove the <<<<<<< ======= >>>>>>> lines",
            )
        )

    info = analyze_body(body)
    note = Note(
        path=path,
        id=default_id(path),
        title="",
        body=body,
        meta=meta,
        headings=info.headings,
        text=info.text,
        body_refs=info.refs,
    )
    _apply_meta(note, meta, problems)
    seen = {t.casefold() for t in note.tags}
    note.tags += [t for t in info.tags if t.casefold() not in seen]
    note.links = note.links + property_links(meta) + info.links
    if not note.title:
        h1 = next((h.text for h in info.headings if h.level == 1 and h.text), None)
        note.title = h1 or path.rsplit("/", 1)[-1].removesuffix(".md")
    note.problems = problems
    return note


def _too_big(value: Any, budget: int) -> bool:
    """Whether ``value`` expanded (each alias counted again, strings by length) exceeds ``budget``.

    Iterative and stops at the budget, so a self-referencing or alias-bombed value costs O(budget).
    """
    stack = [value]
    while stack:
        v = stack.pop()
        budget -= 1 + (len(v) if isinstance(v, (str, bytes)) else 0)
        if budget < 0:
            return True
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple, set)):
            stack.extend(v)
    return False


def _yaml_error(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        # +2: the frontmatter starts after the opening '---' line; lines are 1-based.
        return f"{problem} (line {mark.line + 2}, column {mark.column + 1})"
    return str(problem)


def _apply_meta(note: Note, meta: dict[str, Any], problems: list[Problem]) -> None:
    path = note.path

    def bad(key: str, message: str, fix: str) -> None:
        problems.append(Problem(path, key, message, fix))

    if "id" in meta:
        v = meta["id"]
        if isinstance(v, (str, int)) and str(v).strip() and "\n" not in str(v):
            note.id, note.has_id = str(v).strip(), True
        else:
            bad("id", f"id must be a one-line string, got {v!r}", "set 'id:' to a short string or remove it")
    if "title" in meta:
        v = meta["title"]
        if isinstance(v, (str, int, float)) and str(v).strip():
            note.title = str(v).strip()
        elif v is not None:
            bad("title", f"title must be text, got {type(v).__name__}", "write the title as a string")
    if "type" in meta:
        v = meta["type"]
        if isinstance(v, str) and v.strip():
            t = v.strip().lower()
            note.type = t if t in TYPES else "note"
            if t not in TYPES:
                bad("type", f"unknown type {v!r} (treated as 'note')", "use one of: " + ", ".join(sorted(TYPES)))
        elif v is not None:
            bad("type", f"type must be a word, got {v!r}", "e.g. 'type: decision'")
    for key, default in (("salience", 0.5), ("confidence", 1.0)):
        if key in meta and meta[key] is not None:
            v = meta[key]
            num = v if isinstance(v, (int, float)) and not isinstance(v, bool) else _to_float(v)
            if num is None or not (0.0 <= num <= 1.0):
                bad(
                    key,
                    f"{key} must be a number from 0 to 1, got {v!r} (using {default})",
                    f"set '{key}:' to a value between 0 and 1",
                )
            else:
                setattr(note, key, float(num))
    if "pinned" in meta and meta["pinned"] is not None:
        v = meta["pinned"]
        b = _to_bool(v)
        if b is None:
            bad("pinned", f"pinned must be true or false, got {v!r}", "write 'pinned: true' or 'pinned: false'")
        else:
            note.pinned = b
    if "status" in meta and meta["status"] is not None:
        v = str(meta["status"]).strip().lower()
        if v in STATUSES:
            note.status = v
        else:
            bad("status", f"unknown status {meta['status']!r} (treated as active)", "use active, archived or forgotten")
    if "scope" in meta and meta["scope"] is not None:
        v = str(meta["scope"]).strip()
        if _SCOPE.match(v):
            note.scope = v
        else:
            bad(
                "scope",
                f"scope must be global, project:NAME or topic:NAME, got {meta['scope']!r}",
                "e.g. 'scope: project:acme'",
            )
    for key in ("tags", "aliases", "entities", "refs", "identities"):
        if key in meta and meta[key] is not None:
            # one reference or identity is one item ("Alice Smith"); several are a list or comma-separated
            items = _str_list(key, meta[key], bad, r"\s*,\s*" if key in ("refs", "identities") else r"[,\s]+")
            if key == "tags":
                items = [t.lstrip("#") for t in items if t.lstrip("#")]
            setattr(note, key, items)
    if note.identities and note.type != "person":
        bad(
            "identities",
            "identities are read on person notes only; they are ignored here",
            "add 'type: person' (this note is about someone), or move the names to 'aliases'",
        )
    for key in DATE_KEYS:
        if key in meta and meta[key] is not None:
            iso = to_iso(meta[key])
            if iso is None:
                bad(key, f"{key} is not a date: {meta[key]!r}", f"write '{key}: YYYY-MM-DD' (or an ISO datetime)")
            else:
                setattr(note, key, iso)
    if "supersedes" in meta and meta["supersedes"] is not None:
        v = meta["supersedes"]
        if isinstance(v, (str, int)) and str(v).strip():
            note.supersedes = split_wikilink(str(v).strip().strip("[]")).target
            note.links.append(Link(target=note.supersedes, type="supersedes"))
        else:
            bad("supersedes", f"supersedes must be a note reference, got {v!r}", "write 'supersedes: <note id>'")
    if "links" in meta and meta["links"] is not None:
        v = meta["links"]
        if not isinstance(v, list):
            bad(
                "links",
                f"links must be a list; YAML read it as {yaml_value(v)}",
                "write 'links:' as a list of {to: ..., type: ...} entries",
            )
        else:
            for i, item in enumerate(v):
                link = to_link(item)
                if link is None:
                    bad(
                        f"links[{i}]",
                        f"link entry not understood: {item!r}",
                        "write '- {to: \"[[Other note]]\", type: depends_on}'",
                    )
                else:
                    note.links.append(link)


def _to_float(v: Any) -> float | None:
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def _to_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return v.strip().lower() in ("true", "yes", "on", "1")
    return None


def _str_list(key: str, v: Any, bad: Callable[[str, str, str], None], sep: str = r"[,\s]+") -> list[str]:
    """A list field's strings (tags, aliases, entities, refs, identities); each item YAML did not read
    as text is reported by its place and value, with how to write it, and the rest are kept."""
    if isinstance(v, str):
        # Obsidian accepts "tags: a, b" and "tags: a b"; so do we.
        return [p for p in re.split(sep, v.strip()) if p]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return [str(v)]
    if isinstance(v, (dt.date, dt.datetime)):
        return [v.isoformat()]
    if not isinstance(v, list):
        bad(
            key,
            f"{key} must be a list of strings; YAML read it as {yaml_value(v)}",
            f"write '{key}: [a, b]'"
            + (f', or quote it: {key}: "{_as_written(v)}"' if isinstance(v, (bool, dict)) else ""),
        )
        return []
    out = []
    for i, item in enumerate(v):
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            if str(item).strip():
                out.append(str(item).strip())
        elif isinstance(item, (dt.date, dt.datetime)):
            out.append(item.isoformat())  # a date reads back as the text that was written
        elif item is not None:
            bad(f"{key}[{i}]", f"{key} item {i + 1} is not text: YAML read it as {yaml_value(item)}", _quote_fix(item))
    return out


def yaml_value(v: Any) -> str:
    """What YAML made of a value, in words a person can match to what they wrote."""
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()} (YAML reads yes/no, on/off and true/false, in any case, as booleans)"
    if isinstance(v, dict):
        return f"a mapping {_as_written(v)!r} (YAML reads 'key: value' as a mapping)"
    if isinstance(v, list):
        return f"a list {v!r}"
    if isinstance(v, str):
        return f"the text {v!r}"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    return f"{type(v).__name__} {v!r}"


def _as_written(v: Any) -> str:
    """A boolean or a one-entry mapping as its author probably wrote it."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {val}" if val is not None else f"{k}:" for k, val in v.items())
    return str(v)


def _quote_fix(item: Any) -> str:
    if isinstance(item, bool):
        return f'quote the word as you wrote it, e.g. - "{_as_written(item).capitalize()}"'
    if isinstance(item, dict):
        return f'quote it: - "{_as_written(item)}"'
    return "write each item as one quoted string"


def to_link(item: Any) -> Link | None:
    if isinstance(item, str) and item.strip():
        return Link(target=split_wikilink(item.strip().strip("[]")).target, type="related")
    if isinstance(item, list) and len(item) == 1 and isinstance(item[0], list):
        # YAML reads an unquoted [[Note]] as a nested list.
        return to_link(item[0][0] if item[0] else None)
    if isinstance(item, dict):
        to = item.get("to") or item.get("target")
        if isinstance(to, list) and to and isinstance(to[0], list) and to[0]:
            to = to[0][0]
        if not isinstance(to, (str, int)) or not str(to).strip():
            return None
        wl = split_wikilink(str(to).strip().strip("[]"))
        typ = item.get("type") or "related"
        reason = item.get("reason")
        return Link(
            target=wl.target,
            type=str(typ).strip(),
            heading=wl.heading,
            reason=str(reason) if reason is not None else None,
        )
    return None


def to_iso(v: Any) -> str | None:
    """A date/datetime/string as an ISO string (dates stay dates), or None if not a date."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.UTC)
        return v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, str):
        s = v.strip()
        try:
            if len(s) == 10:
                return dt.date.fromisoformat(s).isoformat()
            return to_iso(dt.datetime.fromisoformat(s.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def iso_from_timestamp(ts: float | None) -> str | None:
    """A timestamp as mdmem writes times: ISO 8601 in UTC to the second (``2026-11-30T14:02:31Z``)."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    """The current time as mdmem writes it into notes and the index (``iso_from_timestamp``)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id() -> str:
    """A short sortable note id: ``m-`` + 9 chars of millisecond time + 3 random chars (base32)."""
    import secrets
    import time

    n = (int(time.time() * 1000) << 15) | secrets.randbits(15)
    chars = []
    for _ in range(12):
        chars.append(_CROCKFORD[n & 31])
        n >>= 5
    return "m-" + "".join(reversed(chars))


def key_id(key: str) -> str:
    """A stable note id for what a note was made from (an import's entry, a book's part): same shape as ``new_id``."""
    import hashlib

    n = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")
    return "m-" + "".join("0123456789abcdefghjkmnpqrstvwxyz"[(n >> (5 * i)) & 31] for i in range(12))


def iso_to_timestamp(iso: str | None) -> float | None:
    """Seconds since the epoch (UTC) for an ISO date or datetime from ``to_iso``."""
    if not iso:
        return None
    if len(iso) == 10:
        d = dt.date.fromisoformat(iso)
        return dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC).timestamp()
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------------------------------
# Writing


_ISO_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def yaml_scalar(v: Any, key: str = "") -> str:
    """One value as YAML for a ``key: value`` line (flow style; ISO dates bare in date keys)."""
    import yaml

    if key in DATE_KEYS and isinstance(v, str) and _ISO_LIKE.match(v):
        return v  # YAML reads it back as a date; to_iso normalises it on parse
    dumped = yaml.safe_dump(v, default_flow_style=True, allow_unicode=True, width=10_000, sort_keys=False)
    return dumped.removesuffix("\n...\n").rstrip("\n")


def render_note(meta: dict[str, Any], body: str) -> str:
    """Text of a new note: frontmatter (keys in the given order, None values left out) and body."""
    lines = [f"{k}: {yaml_scalar(v, k)}" for k, v in meta.items() if v is not None and v != []]
    head = "---\n" + "".join(line + "\n" for line in lines) + "---\n" if lines else ""
    return head + body.strip("\n") + "\n"


def set_fields(text: str, updates: dict[str, Any]) -> str:
    """Set (or, with value None, remove) top-level frontmatter keys, editing only their lines.

    Everything else — other keys, their order, comments, blank lines, the body — is kept
    byte for byte. A note without frontmatter gets a new block at the top.
    """
    span = frontmatter_span(text)
    if span is None:
        new = {k: v for k, v in updates.items() if v is not None}
        if not new:
            return text
        lines = [f"{k}: {yaml_scalar(v, k)}" for k, v in new.items()]
        return "---\n" + "\n".join(lines) + "\n---\n" + text
    fm = text[span[0] : span[1]]
    nl = "\r\n" if "\r\n" in fm else "\n"
    lines = fm.split(nl)
    if lines and lines[-1] == "":
        lines.pop()
    for key, value in updates.items():
        start = _find_key(lines, key)
        if start is None:
            if value is not None:
                lines.append(f"{key}: {yaml_scalar(value, key)}")
            continue
        end = start + 1  # a value may continue on indented or '- ' lines
        while end < len(lines) and lines[end][:1] in (" ", "\t", "-"):
            end += 1
        if value is None:
            del lines[start:end]
        else:
            comment = _trailing_comment(lines[start]) if end == start + 1 else ""
            lines[start:end] = [f"{key}: {yaml_scalar(value, key)}{comment}"]
    new_fm = nl.join(lines) + (nl if lines else "")
    return text[: span[0]] + new_fm + text[span[1] :]


def _find_key(lines: list[str], key: str) -> int | None:
    pat = re.compile(rf"^(['\"]?){re.escape(key)}\1\s*:(\s|$)")
    for i, line in enumerate(lines):
        if pat.match(line):
            return i
    return None


def _trailing_comment(line: str) -> str:
    m = re.search(r"\s+#[^'\"]*$", line)
    return m.group() if m else ""
