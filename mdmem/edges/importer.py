"""``mdmem import PATH``: bring existing agent memories into the vault.

- ``MEMORY.md`` (or any markdown file of memories): one note per entry — a top-level list item or a
  paragraph. The ``##`` heading above an entry hints its type ("Decisions" → decision) and becomes a
  tag; a date at the start of an entry (``2026-03-14:``) or a dated heading is kept as ``created``.
- a ``memory/`` folder of ``*.md`` files (one per day, ``2026-03-14.md``): one note per file, dated
  by its name (else by its modification time). A folder holding ``MEMORY.md`` and ``memory/`` (an agent
  workspace) imports both.
- a JSONL file of memories, one JSON object a line: ``content`` (or ``text``/``memory``), ``type``,
  ``salience``, ``tags``, ``created``, and optionally ``title``, ``scope``, ``entities``, ``pinned``, ``id``,
  ``confidence``, ``status`` (or ``is_active``), ``valid_from``/``valid_until``, ``snoozed_until``,
  ``supersedes`` and ``links``; any other key is named in the report's ``dropped``.
- a ClawMem store (a SQLite file, told by its header and tables: ``import_clawmem``) and a Qmemory
  database as ``surreal export`` writes it (told by its content: ``import_qmemory``).
- an Obsidian vault (a folder with ``.obsidian/``): adopted in place as a vault, no file rewritten.

Re-running an import creates no duplicates: each imported note's id is derived from what it came
from (the entry's text, the day file's name, the JSONL ``id``, the other system's record), and an id
already in the vault is skipped — or, for a day file whose text changed, its note is updated. Secrets
are redacted. The source files are never changed. A bad JSONL line is reported with its number; the
others are imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import MdmemError
from ..results.reports import ImportReport
from .import_entries import HEADING, TYPE_ALIASES, Dropped, Entry, entry_id, norm, title_of

if TYPE_CHECKING:
    from ..api.vault import Vault
    from ..core.books import Book

_DATE = r"(\d{4}-\d{2}-\d{2})"
# A Qmemory export is read whole: beyond this, its tables one at a time.
MAX_EXPORT_BYTES = 256 * 1024 * 1024
_LEAD_DATE = re.compile(rf"^\**\[?{_DATE}(?:[T ][\d:]+Z?)?\]?\**\s*(?:[:\-–—)|]\s*)?")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A heading's words → the type of the entries under it.
_HEADING_TYPES: tuple[tuple[str, str], ...] = (
    (r"decision|decided|architecture|adr", "decision"),
    (r"preference|prefer|style|convention|likes?|dislikes?", "preference"),
    (r"lesson|gotcha|pitfall|antipattern|anti-pattern|don'?t|avoid|mistake", "antipattern"),
    (r"problem|issue|bug|incident|error", "problem"),
    (r"idea|someday|maybe", "idea"),
    (r"feedback|review", "feedback"),
    (r"fact|about|profile|people|contact|environment|setup|stack|tools?", "fact"),
    (r"glossary|domain|terms?", "domain"),
    (r"todo|progress|status|doing|done", "progress"),
    (r"project", "project"),
    (r"context|background|notes?", "context"),
)


# -- pure parsing ------------------------------------------------------------------------------------


def _heading_type(heading: str) -> str | None:
    h = heading.casefold()
    for pattern, typ in _HEADING_TYPES:
        if re.search(rf"\b({pattern})", h):
            return typ
    return None


def _tag(heading: str) -> str | None:
    from ..core.text import slugify

    s = slugify(heading)
    return s if s and s != "note" and not re.fullmatch(r"[\d-]+", s) else None


def parse_memory_markdown(text: str, source: str, *, default_type: str = "note") -> list[Entry]:
    """Entries of a MEMORY.md-style file: top-level list items and paragraphs, under their headings."""
    from ..core.note import split_frontmatter

    body = split_frontmatter(text)[1]
    entries: list[Entry] = []
    heading, heading_date = "", None
    block: list[str] = []
    in_fence = False

    def flush() -> None:
        raw = "\n".join(block).strip()
        block.clear()
        if not raw:
            return
        text = _ITEM.sub("", raw, count=1)
        created = heading_date
        m = _LEAD_DATE.match(text)
        if m:
            created, text = m.group(1), text[m.end() :]
        text = "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in text.splitlines()).strip()
        if not text:
            return
        typ = _heading_type(heading) or default_type
        tag = _tag(heading) if heading else None
        entries.append(
            Entry(
                key=f"entry:{norm(text)}",
                title=title_of(text),
                body=text,
                type=typ,
                created=created,
                tags=[tag] if tag else [],
                source=source,
            )
        )

    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            block.append(line)
            continue
        if in_fence:
            block.append(line)
            continue
        hm = HEADING.match(line)
        if hm:
            flush()
            if len(hm.group(1)) > 1:  # the file's own "# Memory" title is not a section
                heading = hm.group(2)
                dm = re.search(_DATE, heading)
                heading_date = dm.group(1) if dm else None
            continue
        if not line.strip():
            flush()
            continue
        if _ITEM.match(line) and block:  # a new top-level item ends the previous one
            flush()
        block.append(line)
    flush()
    return entries


def parse_day_file(text: str, name: str, mtime: float, source: str) -> Entry | None:
    """One note for a whole (daily) memory file, dated by its name or else its modification time.
    ``source`` (the file as seen from the imported folder, e.g. ``workspace/memory/2026-03-14.md``)
    identifies it on re-import."""
    from ..core.note import iso_from_timestamp, split_frontmatter

    body = split_frontmatter(text)[1].strip()
    if not body:
        return None
    m = re.search(_DATE, name)
    day = m.group(1) if m else str(iso_from_timestamp(mtime))[:10]
    first = HEADING.match(body.splitlines()[0])
    title = first.group(2).strip() if first else f"Memory {day}"
    if m and day not in title:
        title = f"{title} ({day})" if first else title
    return Entry(
        key=f"file:{source}", title=title, body=body, type="context", created=day, source=source, replaceable=True
    )


# The keys a JSONL memory is read from; any other key is named in the report as not kept.
JSONL_KEYS = frozenset(
    """content text memory type category salience importance created created_at timestamp updated
    updated_at tags entities aliases scope pinned id title confidence status is_active valid_from
    valid_until snoozed_until supersedes links relates edges""".split()
)


def _jsonl_date(obj: dict[str, Any], *keys: str) -> str | None:
    from ..core.note import iso_from_timestamp, to_iso

    key = next((k for k in keys if obj.get(k) not in (None, "")), None)
    if key is None:
        return None
    value = obj[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return iso_from_timestamp(value / (1000 if value > 1e11 else 1))
    iso = to_iso(str(value).strip())
    if iso is None:
        raise ValueError(f"{keys[0]} must be a date like 2026-03-14, got {value!r}")
    return iso


def _jsonl_links(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """``links`` (or ``relates``/``edges``): ``{to, type, reason}`` objects (``target``/``out`` and
    ``relation`` read too) or bare references; ``to`` names another line's ``id`` or a note."""
    from .import_entries import link

    raw: Any = next((obj[k] for k in ("links", "relates", "edges") if obj.get(k) not in (None, [])), [])
    if not isinstance(raw, list):
        raise ValueError(f"links must be a list of {{to, type, reason}} objects, got {raw!r}")
    out = []
    for item in raw:
        if isinstance(item, (str, int)) and str(item).strip():
            out.append(link(str(item).strip(), "related"))
            continue
        to = next((item[k] for k in ("to", "target", "out") if isinstance(item, dict) and item.get(k)), None)
        if not isinstance(to, (str, int)):
            raise ValueError(f'a link needs a "to" (another memory\'s id or a note), got {item!r}')
        out.append(link(str(to).strip(), item.get("type") or item.get("relation") or "related", item.get("reason")))
    return out


def parse_jsonl_line(line: str, number: int, source: str) -> Entry:
    """One memory from a JSONL line; raises ValueError with the reason for a bad one."""
    from ..core.schema import STATUSES, TYPES
    from .import_entries import unit

    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    content = next((obj[k] for k in ("content", "text", "memory") if isinstance(obj.get(k), str)), "").strip()
    if not content:
        raise ValueError('no "content" text')
    raw_type = str(obj.get("type") or obj.get("category") or "note").strip().lower()
    typ = TYPE_ALIASES.get(raw_type, raw_type)
    extra: dict[str, Any] = {}
    if typ not in TYPES:
        extra["original_type"] = raw_type
        typ = "note"
    salience = obj.get("salience", obj.get("importance"))
    if salience is not None:
        if unit(salience) is None:
            raise ValueError(f"salience must be a number from 0 to 1, got {salience!r}")
        salience = float(salience)
    if obj.get("confidence") is not None:
        if unit(obj["confidence"]) is None:
            raise ValueError(f"confidence must be a number from 0 to 1, got {obj['confidence']!r}")
        extra["confidence"] = float(obj["confidence"])
    created = _jsonl_date(obj, "created", "created_at", "timestamp")
    for key, keys in (
        ("updated", ("updated", "updated_at")),
        ("valid_from", ("valid_from",)),
        ("valid_until", ("valid_until",)),
        ("snoozed_until", ("snoozed_until",)),
    ):
        extra[key] = _jsonl_date(obj, *keys)
    status = obj.get("status")
    if status is not None:
        if str(status).strip().lower() not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
        extra["status"] = str(status).strip().lower()
    elif obj.get("is_active") is False:  # a soft-deleted memory stays out of retrieval
        extra["status"] = "forgotten"
    if obj.get("supersedes") not in (None, ""):
        extra["supersedes"] = str(obj["supersedes"]).strip()
    extra["links"] = _jsonl_links(obj) or None
    tags = obj.get("tags") or []
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    if not isinstance(tags, list):
        raise ValueError(f"tags must be a list of strings, got {tags!r}")
    entities = obj.get("entities") or []
    aliases = obj.get("aliases") or []
    if isinstance(aliases, list) and aliases:
        extra["aliases"] = [str(a) for a in aliases]
    scope = obj.get("scope")
    if scope is not None and not re.match(r"^(global|(project|topic):[\w.\-/]+)$", str(scope)):
        raise ValueError(f"scope must be global, project:NAME or topic:NAME, got {scope!r}")
    key = f"jsonl-id:{obj['id']}" if obj.get("id") not in (None, "") else f"entry:{norm(content)}"
    title = str(obj.get("title") or "").strip() or title_of(content)
    return Entry(
        key=key,
        title=title,
        title_chars=200,
        body=content,
        type=typ,
        created=created,
        tags=[str(t).lstrip("#") for t in tags],
        salience=salience,
        scope=str(scope) if scope else None,
        entities=[str(e) for e in entities] if isinstance(entities, list) else [],
        pinned=bool(obj.get("pinned")),
        source=source,
        extra={k: v for k, v in extra.items() if v is not None},
        dropped=sorted(k for k in obj if k not in JSONL_KEYS),
    )


def resolve_jsonl_links(entries: list[Entry]) -> None:
    """Point each link and ``supersedes`` that names another line's ``id`` at that memory's note."""
    ids = {e.key.removeprefix("jsonl-id:"): entry_id(e.key) for e in entries if e.key.startswith("jsonl-id:")}
    for e in entries:
        if e.extra.get("supersedes") in ids:
            e.extra["supersedes"] = ids[e.extra["supersedes"]]
        for item in e.extra.get("links") or []:
            item["to"] = ids.get(item["to"], item["to"])


# -- reading the source -------------------------------------------------------------------------------


def detect(path: Path) -> str:
    """What PATH is: obsidian, jsonl, markdown (a memories file), folder (MEMORY.md and/or day files),
    pdf or epub (a book: ``book_import``), clawmem (a ClawMem SQLite store, by its header) or qmemory
    (a ``surreal export`` of a Qmemory database, by its content)."""
    from ..adapters.clawmem import is_sqlite
    from ..core.surql import looks_like_export
    from .book_import import BOOK_KINDS

    if not path.exists():
        raise MdmemError(f"{path} does not exist.")
    if path.is_file():
        if is_sqlite(path):
            return "clawmem"
        if path.suffix.lower() == ".surql" or (
            path.suffix.lower() not in (".jsonl", ".ndjson", ".md", ".markdown", *BOOK_KINDS)
            and looks_like_export(_head(path))
        ):
            return "qmemory"
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            return "jsonl"
        if path.suffix.lower() in (".md", ".markdown"):
            return "markdown"
        if path.suffix.lower() in BOOK_KINDS:
            return BOOK_KINDS[path.suffix.lower()]
        raise MdmemError(
            f"{path}: import reads MEMORY.md-style markdown, a memory/ folder, a .jsonl file of "
            "memories, a PDF or EPUB book, a ClawMem store (SQLite), a Qmemory export (surreal export, "
            ".surql) or an Obsidian vault folder."
        )
    if (path / ".obsidian").is_dir():
        return "obsidian"
    if (path / "MEMORY.md").is_file() or (path / "memory").is_dir() or any(path.glob("*.md")):
        return "folder"
    raise MdmemError(f"{path} holds no MEMORY.md, memory/ folder, *.md files or .obsidian/: nothing to import.")


def read_entries(path: Path, kind: str, *, default_type: str = "note") -> tuple[list[Entry], list[str], list[str]]:
    """The entries of a source, the problems found reading it (bad JSONL lines) and what it holds that
    no note keeps (the report's ``dropped``)."""
    errors: list[str] = []
    if kind in ("clawmem", "qmemory"):
        return _read_foreign(path, kind)
    if kind == "jsonl":
        entries = []
        dropped = Dropped()
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    entries.append(parse_jsonl_line(line, i, path.name))
                except ValueError as exc:
                    errors.append(f"{path.name} line {i}: {exc}")
                    continue
                for key in entries[-1].dropped:
                    dropped.add(f"field {key!r}")
        resolve_jsonl_links(entries)
        return entries, errors, dropped.lines()
    if kind == "markdown":
        return parse_memory_markdown(_read(path), path.name, default_type=default_type), errors, []
    entries = []
    if (path / "MEMORY.md").is_file():
        entries += parse_memory_markdown(_read(path / "MEMORY.md"), "MEMORY.md", default_type=default_type)
    days = path / "memory" if (path / "memory").is_dir() else path
    for f in sorted(p for p in days.glob("*.md") if p.name != "MEMORY.md"):
        e = parse_day_file(_read(f), f.name, f.stat().st_mtime, f.relative_to(path.parent).as_posix())
        if e is not None:
            entries.append(e)
    return entries, errors, []


def _read_foreign(path: Path, kind: str) -> tuple[list[Entry], list[str], list[str]]:
    if kind == "clawmem":
        from ..adapters.clawmem import read_store
        from .import_clawmem import clawmem_entries

        entries, dropped = clawmem_entries(read_store(path), path.name)
        return entries, [], dropped
    from ..core.surql import SurqlError, parse_export
    from .import_qmemory import qmemory_entries

    size = path.stat().st_size
    if size > MAX_EXPORT_BYTES:
        raise MdmemError(
            f"{path.name} is {size / 2**20:.0f} MB, more than {MAX_EXPORT_BYTES // 2**20} MB: export the memory, "
            "entity and relates tables alone."
        )
    try:
        records = parse_export(_read(path))
    except SurqlError as exc:
        raise MdmemError(f"{path.name} {exc}; nothing imported (is it a surreal export?)") from None
    return qmemory_entries(records, path.name)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(64 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return ""


# -- writing ----------------------------------------------------------------------------------------


def import_path(
    vault: Vault | None,
    path: Path,
    *,
    dry_run: bool = False,
    commit: bool | None = None,
    use_git: bool | None = None,
    default_type: str = "note",
    progress: Callable[[int, int], None] | None = None,
    book: Book | None = None,
) -> ImportReport:
    """Import PATH into ``vault`` (or, for an Obsidian vault, adopt PATH itself as a vault); ``progress``
    (done, total) follows the pages or documents of a book as they are read; ``book``: a book PATH holds,
    read already (``book_import.read_book``)."""
    path = path.expanduser().resolve()
    kind = detect(path)
    if kind == "obsidian":
        from ..adapters.git import find_git_dir
        from .scaffold import init_vault

        adopted = None
        if not dry_run:
            adopted = init_vault(
                path, use_git=find_git_dir(path) is not None if use_git is None else use_git, commit=commit is not False
            )
        return ImportReport(kind=kind, source=str(path), dry_run=dry_run, adopted=adopted)
    if vault is None:
        raise MdmemError("No vault to import into; pass --vault PATH (or run inside a vault).")
    if path == vault.root or vault.root in path.parents:
        raise MdmemError(
            f"{path} is inside the vault {vault.root}: its files are notes already. Import from outside the vault."
        )
    if kind in ("pdf", "epub"):
        from .book_import import import_book

        return import_book(vault, path, dry_run=dry_run, commit=commit, progress=progress, book=book)
    entries, errors, dropped = read_entries(path, kind, default_type=default_type)
    return _write(
        vault,
        entries,
        ImportReport(kind=kind, source=str(path), errors=errors, dry_run=dry_run, dropped=dropped),
        source=path.name,
        commit=commit,
    )


def _write(
    vault: Vault, entries: list[Entry], report: ImportReport, *, source: str, commit: bool | None
) -> ImportReport:
    from ..core.note import NewNote, now_iso
    from ..core.redact import redact
    from ..core.text import shorten, slugify

    seen: set[str] = set()
    notes: list[NewNote] = []
    skipped = redacted = 0
    folder = f"{vault.config.notes_dir}/imported/{slugify(Path(source).stem)}".lstrip("/")
    for e in entries:
        nid = entry_id(e.key)
        if nid in seen:
            skipped += 1  # the same memory twice in one source
            continue
        seen.add(nid)
        body, title = redact(e.body), redact(e.title)  # before the title is cut: a cut hides no secret
        redacted += body.count + (0 if e.title in e.body else title.count)
        meta: dict[str, Any] = {
            "id": nid,
            "title": shorten(title.text, e.title_chars),
            "type": e.type,
            "salience": e.salience,
            "pinned": True if e.pinned else None,
            "scope": e.scope,
            "tags": e.tags or None,
            "entities": e.entities or None,
            "created": e.created or now_iso(),
            "source": f"import:{e.source}",
            "imported": now_iso(),
            **e.extra,
        }
        notes.append(NewNote(meta, body.text, folder, replace=e.replaceable))
    done = vault.add_many(
        notes,
        dry_run=report.dry_run,
        commit=commit,
        message=lambda n, u: f"mdmem: import {n} new, {u} updated note(s) from {source}",
    )
    return replace(
        report,
        written=done.new,
        updated=done.updated,
        skipped=skipped + done.skipped,
        redacted=redacted,
        commit=done.commit,
        warnings=done.warnings,
    )
