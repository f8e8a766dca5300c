"""``mdmem import BOOK.pdf|BOOK.epub``: a book as notes (issue 17).

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import MdmemError, NoteNotFound
from .results import ImportReport

if TYPE_CHECKING:
    from .books import Book
    from .note import NewNote, Note
    from .vault import Vault

BOOK_KINDS = {".pdf": "pdf", ".epub": "epub"}
ATTACHMENTS = "attachments/books"


def read_book(path: Path, progress: Callable[[int, int], None] | None = None) -> Book:
    """The book in a PDF or EPUB file (``BookUnreadable`` when it cannot be read)."""
    if BOOK_KINDS.get(path.suffix.lower()) == "pdf":
        from .pdf import read_pdf

        return read_pdf(path, progress)
    from .epub import read_epub

    return read_epub(path, progress)


def body_hash(body: str) -> str:
    """What ``import_hash`` holds: the note's text as the import wrote it, to tell a later edit."""
    return hashlib.blake2b(body.strip().encode(), digest_size=12).hexdigest()


def _get(vault: Vault, note_id: str) -> Note | None:
    try:
        return vault.get(note_id)
    except NoteNotFound:
        return None


def import_book(vault: Vault, path: Path, *, dry_run: bool = False, commit: bool | None = None,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import a PDF or EPUB at ``path`` (absolute) into ``vault``; see the module's docstring."""
    from .books import PAGES_PER_PART
    from .note import NewNote, key_id, now_iso
    from .text import slugify

    kind = BOOK_KINDS[path.suffix.lower()]
    data = path.read_bytes()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    slug = slugify(path.stem)
    attachment = f"{ATTACHMENTS}/{slug}{path.suffix.lower()}"
    folder = "/".join(p for p in (vault.config.notes_dir, "books", slug) if p)
    book_key = f"book:{slug}{path.suffix.lower()}"
    index_id = key_id(book_key)
    index = _get(vault, index_id)
    kept_file = vault.root / attachment
    same_file = kept_file.is_file() and kept_file.read_bytes() == data
    report = ImportReport(kind=kind, source=str(path), dry_run=dry_run, attachment=attachment)
    if index is not None and index.meta.get("source_hash") == digest and same_file:
        parts = index.meta.get("parts")
        return ImportReport(kind=kind, source=str(path), dry_run=dry_run, attachment=attachment,
                            skipped=1 + (len(parts) if isinstance(parts, list) else 0))
    if kept_file.exists() and not same_file and index is None:
        raise MdmemError(f"{attachment} exists and is not an earlier version of {path.name}; "
                         "rename the book's file (or that attachment) and import again.")

    book = read_book(path, progress)  # everything is read before anything is written
    title = book.title or path.stem
    entities = list(dict.fromkeys([title, *book.authors]))
    now = now_iso()
    ids = [key_id(f"{book_key}:{p.key}") for p in book.parts]
    previous = index.meta.get("parts") if index is not None else None
    previous = [str(x) for x in previous] if isinstance(previous, list) else []
    book_ids = set(ids) | set(previous)
    olds = [_get(vault, i) for i in ids]
    width = max(2, len(str(len(book.parts))))
    paths: list[str] = []
    taken: set[str] = set()
    for k, (part, old) in enumerate(zip(book.parts, olds), 1):
        rel = old.path if old else _free(vault, f"{folder}/{k:0{width}d}-{slugify(part.title)[:80]}", taken)
        taken.add(rel)
        paths.append(rel)
    index_rel = index.path if index else _free(vault, f"{folder}/{slug}", taken)

    def link(rel: str, label: str) -> str:
        return f"[[{rel.removesuffix('.md')}|{label.replace('|', '-').replace(']', ')')}]]"

    notes: list[NewNote] = []
    kept: list[str] = []
    for k, (part, old, nid) in enumerate(zip(book.parts, olds, ids), 1):
        pages = f"{part.first + 1}-{part.last + 1}" if kind == "pdf" else None
        where = (f"pages {part.first + 1}–{part.last + 1}" if part.last > part.first else f"page {part.first + 1}") \
            if kind == "pdf" else f"part {k}"
        original = f"{attachment}#page={part.first + 1}" if kind == "pdf" else attachment
        body = (f"From {link(index_rel, title)}, {where} · [[{original}|{path.name}]]\n\n{part.body}\n")
        follows = [{"to": ids[k - 2], "type": "follows"}] if k > 1 else []
        fields: dict[str, Any] = {"title": part.title, "source": attachment, "pages": pages, "part": k,
                                  "import_hash": body_hash(body)}
        if old is None:
            meta = {"id": nid, "title": part.title, "type": "reference", "tags": ["book"], "entities": entities,
                    "source": attachment, "pages": pages, "part": k, "links": follows or None,
                    "import_hash": fields["import_hash"], "created": now, "imported": now}
            notes.append(NewNote(meta, body, folder, name=paths[k - 1].rpartition("/")[2].removesuffix(".md")))
            continue
        old_links = old.meta.get("links")
        own = [x for x in old_links if not _our_follows(x, book_ids)] if isinstance(old_links, list) else []
        fields["links"] = (own + follows) or None  # the user's own links stay
        if old.meta.get("removed_from_source"):
            fields.update({"status": None, "removed_from_source": None})
        if body_hash(old.body) != old.meta.get("import_hash"):
            kept.append(old.path)  # edited since the import: its text stays; its place in the book follows
            notes.append(NewNote({"id": nid, "title": old.title}, None, folder, replace=True,
                                 updates={k2: v for k2, v in fields.items() if k2 not in ("title", "import_hash")}))
            continue
        notes.append(NewNote({"id": nid, "title": part.title}, body, folder, replace=True, updates=fields))

    forgotten: list[str] = []
    for old_id in previous:
        gone = _get(vault, old_id) if old_id not in ids else None
        if gone is not None and gone.status != "forgotten":
            forgotten.append(gone.path)
            notes.append(NewNote({"id": gone.id, "title": gone.title}, None, folder, replace=True,
                                 updates={"status": "forgotten", "removed_from_source": now[:10]}))

    split = {"outline": "its outline", "headings": "chapter headings on its pages",
             "pages": f"runs of {PAGES_PER_PART} pages", "nav": "its table of contents (nav)",
             "ncx": "its table of contents (NCX)", "spine": "its documents (no table of contents)"}[book.split]
    lines = [f"# {title}", ""]
    if book.authors:
        lines += [f"by {', '.join(book.authors)}", ""]
    unit = "pages" if kind == "pdf" else "documents"
    lines += [f"The original: [[{attachment}|{path.name}]] ({book.units} {unit}; "
              f"{len(book.parts)} parts from {split}).", "", "## Contents", ""]
    for k, (part, rel) in enumerate(zip(book.parts, paths), 1):
        pages = f" — pp. {part.first + 1}–{part.last + 1}" if kind == "pdf" else ""
        lines.append(f"{k}. {link(rel, part.title)}{pages}")
    index_body = "\n".join(lines) + "\n"
    index_fields: dict[str, Any] = {"title": title, "source": attachment, "source_hash": digest, "parts": ids,
                                    "import_hash": body_hash(index_body)}
    if index is None:
        notes.insert(0, NewNote({"id": index_id, "title": title, "type": "hub", "tags": ["book"],
                                 "entities": entities, **index_fields, "created": now, "imported": now},
                                index_body, folder, name=index_rel.rpartition("/")[2].removesuffix(".md")))
    elif body_hash(index.body) != index.meta.get("import_hash"):
        kept.append(index.path)
        notes.insert(0, NewNote({"id": index_id, "title": index.title}, None, folder, replace=True,
                                updates={k: v for k, v in index_fields.items() if k not in ("title", "import_hash")}))
    else:
        notes.insert(0, NewNote({"id": index_id, "title": title}, index_body, folder, replace=True,
                                updates=index_fields))

    new, updated, skipped, sha = vault.add_many(
        notes, dry_run=dry_run, commit=commit, files=None if same_file else {attachment: data},
        message=lambda n, u: f"mdmem: import the book \"{title}\" from {path.name} ({n} new, {u} updated note(s))")
    return ImportReport(kind=kind, source=report.source, dry_run=dry_run, attachment=attachment, written=new,
                        updated=[p for p in updated if p not in forgotten], skipped=skipped, commit=sha,
                        forgotten=forgotten if not dry_run else [], kept=kept, split=book.split)


def _our_follows(link: Any, book_ids: set[str]) -> bool:
    """A ``follows`` link between the book's parts: the import writes it from the new version's order."""
    return isinstance(link, dict) and link.get("type") == "follows" and str(link.get("to", "")) in book_ids


def _free(vault: Vault, stem: str, taken: set[str]) -> str:
    """``stem.md``, or ``stem-2.md``… if a file (or another new note) has that path."""
    rel, k = f"{stem}.md", 2
    while rel in taken or (vault.root / rel).exists():
        rel, k = f"{stem}-{k}.md", k + 1
    return rel
