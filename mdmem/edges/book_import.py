"""``mdmem import BOOK.pdf|BOOK.epub``: a book as notes.

One note per part (a chapter or section: ``books.plan_parts``), type ``reference``, in
``NOTES/books/<slug>/``, numbered in reading order; an index note (type ``hub``) that lists them in
order; the original file kept in the vault as ``attachments/books/<slug>.<ext>``. Every part's note
opens with a line linking the index note and the original (the PDF at its first page:
``[[attachments/books/x.pdf#page=12|…]]``, which Obsidian opens there), follows the part before it
(``links: {to: ID, type: follows}``, a sequence edge ``query`` spreads along), and names the book's
title and authors as entities. Its frontmatter says where it came from: ``source`` (the attachment),
``pages`` (PDF) and ``part`` (its place in the book).

Identity: a book is its file's name; a part is its title (and rank among parts of that title). So:
- importing the same file again changes nothing (the index note's ``source_hash``, SHA-256 of the file);
- a new version of the file updates its notes in place (same ids, through ``lifecycle.add_many`` and
  its one rewrite path), adds notes for new parts, and marks notes of parts it no longer has
  ``forgotten`` (``removed_from_source``; a part that comes back is made active again) — nothing is deleted;
- a note whose text someone edited since the import (its ``import_hash`` no longer matches) is kept
  as it is and reported, never overwritten.

Reading happens before anything is written: a scanned, encrypted or broken file raises
``BookUnreadable`` with one line, and the vault is untouched. One commit per import.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import MdmemError, NoteNotFound
from ..results.reports import ImportReport

if TYPE_CHECKING:
    from ..api.vault import Vault
    from ..core.books import Book, Part
    from ..core.note import NewNote, Note

BOOK_KINDS = {".pdf": "pdf", ".epub": "epub"}
ATTACHMENTS = "attachments/books"


def import_seconds() -> float:
    """How long reading one book may take: ``$MDMEM_IMPORT_SECONDS``, else ``books.IMPORT_SECONDS``."""
    import math
    import os

    from ..core.books import IMPORT_SECONDS

    raw = os.environ.get("MDMEM_IMPORT_SECONDS", "").strip()
    try:
        value = float(raw) if raw else IMPORT_SECONDS
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise MdmemError(
            f"MDMEM_IMPORT_SECONDS={raw!r} is not a number of seconds above 0; set it to one "
            "(or unset it for the default)."
        )
    return value


def read_book(path: Path, progress: Callable[[int, int], None] | None = None) -> Book:
    """The book in a PDF or EPUB file, its text redacted as notes are (``BookUnreadable`` when it cannot
    be read, or is beyond the bounds: its size, its time, ``import_seconds()``)."""
    from dataclasses import replace

    from ..core.redact import redact

    seconds = import_seconds()
    if BOOK_KINDS.get(path.suffix.lower()) == "pdf":
        from ..adapters.pdf import read_pdf

        book = read_pdf(path, progress, seconds=seconds)
    else:
        from ..adapters.epub import read_epub

        book = read_epub(path, progress, seconds=seconds)
    found = 0
    parts = []
    for part in book.parts:  # a key or a password in a book is as secret as in a note
        body, title = redact(part.body), redact(part.title)
        found += body.count + title.count
        parts.append(replace(part, body=body.text, title=title.text))
    return replace(book, parts=tuple(parts), redacted=found)


def body_hash(body: str) -> str:
    """What ``import_hash`` holds: the note's text as the import wrote it, to tell a later edit."""
    return hashlib.blake2b(body.strip().encode(), digest_size=12).hexdigest()


def _get(vault: Vault, note_id: str) -> Note | None:
    try:
        return vault.get(note_id)
    except NoteNotFound:
        return None


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every note of one book import shares."""

    kind: str
    file: str  # the imported file's name
    attachment: str
    folder: str
    title: str
    entities: list[str]
    now: str
    ids: list[str]  # the parts' note ids, in order
    book_ids: set[str]  # and those of the parts an earlier version had
    index_rel: str

    def link(self, rel: str, label: str) -> str:
        """An Obsidian link to a note by its vault path (which both Obsidian and mdmem resolve)."""
        return f"[[{rel.removesuffix('.md')}|{label.replace('|', '-').replace(']', ')')}]]"


def import_book(
    vault: Vault,
    path: Path,
    *,
    dry_run: bool = False,
    commit: bool | None = None,
    progress: Callable[[int, int], None] | None = None,
    book: Book | None = None,
) -> ImportReport:
    """Import a PDF or EPUB at ``path`` (absolute) into ``vault``; see the module's docstring. ``book``:
    the file as ``read_book`` read it already (the MCP server reads it before it takes the vault's lock)."""
    from ..core.note import NewNote, key_id, now_iso
    from ..core.text import slugify

    kind = BOOK_KINDS[path.suffix.lower()]
    data = path.read_bytes()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    slug = slugify(path.stem)
    attachment = f"{ATTACHMENTS}/{slug}{path.suffix.lower()}"
    folder = "/".join(p for p in (vault.config.notes_dir, "books", slug) if p)
    book_key = f"book:{slug}{path.suffix.lower()}"
    index = _get(vault, key_id(book_key))
    kept_file = vault.root / attachment
    same_file = kept_file.is_file() and kept_file.read_bytes() == data
    previous = index.meta.get("parts") if index is not None else None
    previous = [str(x) for x in previous] if isinstance(previous, list) else []
    if index is not None and index.meta.get("source_hash") == digest and same_file:
        return ImportReport(
            kind=kind, source=str(path), dry_run=dry_run, attachment=attachment, skipped=1 + len(previous)
        )
    if kept_file.exists() and not same_file and index is None:
        raise MdmemError(
            f"{attachment} exists and is not an earlier version of {path.name}; "
            "rename the book's file (or that attachment) and import again."
        )

    book = book or read_book(path, progress)  # everything is read before anything is written
    ids = [key_id(f"{book_key}:{p.key}") for p in book.parts]
    olds = [_get(vault, i) for i in ids]
    width = max(2, len(str(len(book.parts))))
    paths: list[str] = []
    for k, (part, old) in enumerate(zip(book.parts, olds), 1):
        paths.append(old.path if old else _free(vault, f"{folder}/{k:0{width}d}-{slugify(part.title)[:80]}", paths))
    title = book.title or path.stem
    shared = _Shared(
        kind=kind,
        file=path.name,
        attachment=attachment,
        folder=folder,
        title=title,
        entities=list(dict.fromkeys([title, *book.authors])),
        now=now_iso(),
        ids=ids,
        book_ids=set(ids) | set(previous),
        index_rel=index.path if index else _free(vault, f"{folder}/{slug}", paths),
    )

    notes = [_index_note(shared, book, index, paths, digest, key_id(book_key))]
    notes += [
        _part_note(shared, k, part, old, rel) for k, (part, old, rel) in enumerate(zip(book.parts, olds, paths), 1)
    ]
    kept = [rel for n, rel in zip(notes, [shared.index_rel, *paths]) if n.replace and n.body is None]
    forgotten: list[str] = []
    for old_id in previous:
        gone = _get(vault, old_id) if old_id not in ids else None
        if gone is not None and gone.status != "forgotten":
            forgotten.append(gone.path)
            notes.append(
                NewNote(
                    {"id": gone.id, "title": gone.title},
                    None,
                    folder,
                    replace=True,
                    updates={"status": "forgotten", "removed_from_source": shared.now[:10]},
                )
            )

    done = vault.add_many(
        notes,
        dry_run=dry_run,
        commit=commit,
        files=None if same_file else {attachment: data},
        message=lambda n, u: f'mdmem: import the book "{title}" from {path.name} ({n} new, {u} updated note(s))',
    )
    return ImportReport(
        kind=kind,
        source=str(path),
        dry_run=dry_run,
        attachment=attachment,
        written=done.new,
        updated=[p for p in done.updated if p not in forgotten],
        skipped=done.skipped,
        commit=done.commit,
        forgotten=[] if dry_run else forgotten,
        kept=kept,
        split=book.split,
        warnings=done.warnings,
        redacted=book.redacted,
    )


def _renewed(note_id: str, old: Note, body: str, fields: dict[str, Any], folder: str) -> NewNote:
    """The update of a note an earlier import wrote: its new body and ``fields``; or, when someone edited
    it since (its text no longer matches ``import_hash``), only its place in the book (no body: kept)."""
    from ..core.note import NewNote

    if body_hash(old.body) != old.meta.get("import_hash"):
        return NewNote(
            {"id": note_id, "title": old.title},
            None,
            folder,
            replace=True,
            updates={k: v for k, v in fields.items() if k not in ("title", "import_hash")},
        )
    return NewNote({"id": note_id, "title": fields["title"]}, body, folder, replace=True, updates=fields)


def _part_note(b: _Shared, k: int, part: Part, old: Note | None, rel: str) -> NewNote:
    """The note of the ``k``-th part (new, or the update of ``old``)."""
    from ..core.note import NewNote

    pdf = b.kind == "pdf"
    pages = f"{part.first + 1}-{part.last + 1}" if pdf else None
    where = (
        (f"pages {part.first + 1}–{part.last + 1}" if part.last > part.first else f"page {part.first + 1}")
        if pdf
        else f"part {k}"
    )
    original = f"{b.attachment}#page={part.first + 1}" if pdf else b.attachment  # Obsidian opens a PDF at the page
    body = f"From {b.link(b.index_rel, b.title)}, {where} · [[{original}|{b.file}]]\n\n{part.body}\n"
    follows = [{"to": b.ids[k - 2], "type": "follows"}] if k > 1 else []
    fields: dict[str, Any] = {
        "title": part.title,
        "source": b.attachment,
        "pages": pages,
        "part": k,
        "import_hash": body_hash(body),
    }
    if old is None:
        meta = {
            "id": b.ids[k - 1],
            "title": part.title,
            "type": "reference",
            "tags": ["book"],
            "entities": b.entities,
            **fields,
            "links": follows or None,
            "created": b.now,
            "imported": b.now,
        }
        return NewNote(meta, body, b.folder, name=rel.rpartition("/")[2].removesuffix(".md"))
    old_links = old.meta.get("links")
    own = [x for x in old_links if not _our_follows(x, b.book_ids)] if isinstance(old_links, list) else []
    fields["links"] = (own + follows) or None  # the user's own links stay
    if old.meta.get("removed_from_source"):  # a part that came back: active again
        fields.update({"status": None, "removed_from_source": None})
    return _renewed(b.ids[k - 1], old, body, fields, b.folder)


def _index_note(b: _Shared, book: Book, index: Note | None, paths: list[str], digest: str, index_id: str) -> NewNote:
    """The book's index note: title, authors, the original, its parts in order."""
    from ..core.books import PAGES_PER_PART
    from ..core.note import NewNote

    split = {
        "outline": "its outline",
        "headings": "chapter headings on its pages",
        "pages": f"runs of {PAGES_PER_PART} pages",
        "nav": "its table of contents (nav)",
        "ncx": "its table of contents (NCX)",
        "spine": "its documents (no table of contents)",
    }[book.split]
    lines = [f"# {b.title}", ""] + ([f"by {', '.join(book.authors)}", ""] if book.authors else [])
    unit = "pages" if b.kind == "pdf" else "documents"
    lines += [
        f"The original: [[{b.attachment}|{b.file}]] ({book.units} {unit}; {len(book.parts)} parts from {split}).",
        "",
        "## Contents",
        "",
    ]
    for k, (part, rel) in enumerate(zip(book.parts, paths), 1):
        pages = f" — pp. {part.first + 1}–{part.last + 1}" if b.kind == "pdf" else ""
        lines.append(f"{k}. {b.link(rel, part.title)}{pages}")
    body = "\n".join(lines) + "\n"
    fields: dict[str, Any] = {
        "title": b.title,
        "source": b.attachment,
        "source_hash": digest,
        "parts": b.ids,
        "import_hash": body_hash(body),
    }
    if index is None:
        meta = {
            "id": index_id,
            "title": b.title,
            "type": "hub",
            "tags": ["book"],
            "entities": b.entities,
            **fields,
            "created": b.now,
            "imported": b.now,
        }
        return NewNote(meta, body, b.folder, name=b.index_rel.rpartition("/")[2].removesuffix(".md"))
    return _renewed(index_id, index, body, fields, b.folder)


def _our_follows(link: Any, book_ids: set[str]) -> bool:
    """A ``follows`` link between the book's parts: the import writes it from the new version's order."""
    return isinstance(link, dict) and link.get("type") == "follows" and str(link.get("to", "")) in book_ids


def _free(vault: Vault, stem: str, taken: list[str]) -> str:
    """``stem.md``, or ``stem-2.md``… if a file (or another new note) has that path."""
    rel, k = f"{stem}.md", 2
    while rel in taken or (vault.root / rel).exists():
        rel, k = f"{stem}-{k}.md", k + 1
    return rel
