"""The vault's note files: safe paths, the scan, reading a note, atomic writes.

Everything here works on the folder alone; the index lives in ``index/``. A note is never
rewritten to index it, and every write is a temp file + fsync + rename, so a crash leaves either
the old file or the new one (and, at worst, a hidden temp file that ``doctor`` names).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import secrets
from pathlib import Path

from ..core.errors import MdmemError
from ..core.note import Note, Problem, parse_note, split_frontmatter

MAX_INDEXED_BYTES = 4 * 1024 * 1024  # text beyond this is not indexed (the file is untouched)
# Files.write's temp names: ".NAME.<8 hex>.tmp" beside the note (hidden, so the scan skips them)
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{8}\.tmp$")


def is_hidden(rel: str) -> bool:
    """Whether a vault-relative path lies in (or is) a hidden file or folder."""
    return any(part.startswith(".") and part not in (".", "..") for part in rel.split("/"))


def content_hash(raw: bytes) -> str:
    """The content hash the catalogue keeps for a file."""
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def atomic_write(path: Path, text: str, *, mode: int = 0o666) -> None:
    """Replace ``path`` with ``text`` (temp file + fsync + rename), for mdmem's own state files
    (``mode``: the new file's permissions before the umask; 0o600 for a secret).

    Some of these files are written without the index's writer lock (a read's notes to compare one
    by one, ``serve.json``), while the lock's holder tidies away the temp files a killed writer left
    (``remove_leftover``). The temp file is locked while it is written, so the tidy passes it by; one
    removed in the moment between its creation and its lock is written again under a new name.
    """
    import fcntl

    for attempt in range(3):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with open(fd, "w", encoding="utf-8") as fh:
                fcntl.flock(fd, fcntl.LOCK_EX)
                fh.write(text)
                fh.flush()
                os.fsync(fd)
                os.replace(tmp, path)  # before the lock goes with the file's closing
            return
        except FileNotFoundError:
            if attempt == 2 or not path.parent.is_dir():
                raise  # the folder itself is gone, or the temp vanished three times over
        finally:
            tmp.unlink(missing_ok=True)


def remove_leftover(tmp: Path) -> bool:
    """Remove a temp file unless a live ``atomic_write`` holds it (its writer was killed, or it is
    another writer's that never locks); whether it was removed."""
    import fcntl

    try:
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False  # gone already (renamed into place), or a link someone left: not ours to follow
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # being written now
    finally:
        os.close(fd)
    tmp.unlink(missing_ok=True)
    return True


class Files:
    """The note files under one vault root (``exclude``: vault-relative globs that are not notes,
    ``include``: globs that are notes even so)."""

    def __init__(self, root: Path, exclude: tuple[str, ...] = (), include: tuple[str, ...] = ()) -> None:
        self.root = root
        self.exclude = exclude
        self.include = include

    def rel(self, path: Path) -> str:
        """The vault-relative POSIX path of an absolute path inside the vault."""
        return path.relative_to(self.root).as_posix()

    def safe_path(self, rel: str) -> Path:
        """The absolute path of a vault-relative path; refuses anything that leaves the vault."""
        p = (self.root / rel).resolve()
        if p != self.root and self.root not in p.parents:
            raise MdmemError(f"{rel!r} is outside the vault {self.root}; use a path inside it.")
        return p

    def excluded(self, rel: str) -> bool:
        """Whether ``mdmem.toml``'s ``[vault] exclude`` globs (or the repository's files) leave this path
        out, and its ``include`` globs do not take it back."""
        return any(fnmatch.fnmatch(rel, pat) for pat in self.exclude) and not any(
            fnmatch.fnmatch(rel, pat) for pat in self.include
        )

    def scan(self, attachments: list[str] | None = None) -> dict[str, os.stat_result]:
        """Every note file: vault-relative path → stat. Hidden folders and excludes are skipped;
        symlinks are followed only when they stay inside the vault. ``attachments``, if given,
        receives the paths of every other file (images, PDFs, canvases, excluded markdown …: what links
        may name)."""
        found: dict[str, os.stat_result] = {}
        root = str(self.root)
        cut = len(root) + 1
        exclude = self.exclude
        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if entry.is_symlink():
                        target = Path(entry.path).resolve()
                        if self.root not in target.parents:
                            continue  # never follow a link out of the vault
                        if is_hidden(target.relative_to(self.root).as_posix()):
                            continue  # nor into .git/, .mdmem/ (tokens, remote URLs) or other hidden folders
                        if entry.is_dir():
                            continue  # linked folders could loop; their notes are found directly
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif name[-3:].lower() == ".md" and entry.is_file():
                        rel = entry.path[cut:].replace(os.sep, "/")
                        if not (exclude and self.excluded(rel)):
                            found[rel] = entry.stat()
                        elif attachments is not None:
                            attachments.append(rel)  # not a note (README.md …), but a file links may name
                    elif attachments is not None and entry.is_file():
                        rel = entry.path[cut:].replace(os.sep, "/")
                        if not (exclude and self.excluded(rel)):
                            attachments.append(rel)
                except OSError:
                    continue
        return found

    def folders(self) -> dict[str, int]:
        """Every folder ``scan`` walks: vault-relative path ("" for the root) → mtime in ns, each taken
        before the folder is listed (so a change during the walk shows as a later mtime)."""
        found: dict[str, int] = {}
        root = str(self.root)
        cut = len(root) + 1
        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                found[directory[cut:].replace(os.sep, "/")] = os.stat(directory).st_mtime_ns
                entries = list(os.scandir(directory))
            except OSError:
                continue
            stack += [e.path for e in entries if e.name[0] != "." and e.is_dir(follow_symlinks=False)]
        return found

    def read_note(self, rel: str) -> tuple[Note, str, bytes]:
        """Parse one file. Returns the note, its content hash and raw bytes. Never raises on content."""
        path = self.safe_path(rel)
        if is_hidden(self.rel(path)) and not is_hidden(rel):
            raise MdmemError(
                f"{rel!r} links into a hidden folder ({self.rel(path)}); mdmem does not read "
                "notes there. Link to a note outside hidden folders."
            )
        raw = path.read_bytes()
        digest = content_hash(raw)
        extra: list[Problem] = []
        if b"\x00" in raw[:8192]:
            extra.append(Problem(rel, "file", "looks like a binary file, not markdown", "move it out of the vault"))
            text = ""
        else:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                extra.append(
                    Problem(
                        rel,
                        "encoding",
                        f"not valid UTF-8 (byte {exc.start}); unreadable bytes were replaced",
                        "save the file as UTF-8",
                    )
                )
                text = raw.decode("utf-8", errors="replace")
        if len(raw) > MAX_INDEXED_BYTES:
            extra.append(
                Problem(
                    rel,
                    "file",
                    f"{len(raw)} bytes; only the first {MAX_INDEXED_BYTES // 1048576} MB are indexed",
                    "split the note",
                )
            )
            text = text.encode("utf-8")[:MAX_INDEXED_BYTES].decode("utf-8", errors="ignore")  # whole characters
        note = parse_note(text, rel)
        note.problems = extra + note.problems
        return note, digest, raw

    def try_read(self, rel: str) -> tuple[Note | None, str]:
        """(note, content hash), or (None, "") when the file vanished or cannot be read, or is a link
        out of the vault or into a hidden folder (one a pull brought: it is no note)."""
        try:
            note, digest, _ = self.read_note(rel)
            return note, digest
        except (OSError, MdmemError):
            return None, ""

    def body(self, rel: str) -> str:
        """A note's body as text (for snippets and key lines), without parsing its frontmatter."""
        raw = self.safe_path(rel).read_bytes()[:MAX_INDEXED_BYTES]
        return split_frontmatter(raw.decode("utf-8", errors="replace"))[1]

    def write(self, rel: str, text: str | bytes, *, exclusive: bool = False) -> Path:
        """Write a note (or, as bytes, an attachment) atomically (temp file + fsync + rename);
        ``exclusive`` refuses to overwrite. A link into a hidden folder (a pushed ``notes/x.md`` →
        ``.git/config``) is never written through, as ``read_note`` never reads through one."""
        path = self.safe_path(rel)
        if is_hidden(self.rel(path)) and not is_hidden(rel):
            raise MdmemError(
                f"{rel!r} links into a hidden folder ({self.rel(path)}); mdmem does not write "
                "there. Replace the link with a plain file."
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "xb") as fh:  # the text's own line endings, as UTF-8
                fh.write(text.encode("utf-8") if isinstance(text, str) else text)
                fh.flush()
                os.fsync(fh.fileno())
            if exclusive:
                os.link(tmp, path)  # fails if the path appeared meanwhile; never clobbers
                tmp.unlink()
            else:
                os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        return path

    def unfinished_writes(self) -> list[tuple[str, str]]:
        """(temp file, the note it was to become) for every note write a killed process left."""
        out = []
        for directory, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                m = TEMP_NAME.match(name)
                if m and m["name"].lower().endswith(".md"):
                    tmp = Path(directory) / name
                    out.append((self.rel(tmp), self.rel(tmp.with_name(m["name"]))))
        return sorted(out)

    def remove_placed_temps(self, rels: list[str]) -> None:
        """Remove a note's temp file when it is a second name of the note already in place (a
        writer killed between link and unlink). A temp file that never reached its place is kept."""
        import glob

        for rel in rels:
            try:
                path = self.safe_path(rel)
                for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
                    if TEMP_NAME.match(tmp.name) and path.exists() and os.path.samefile(tmp, path):
                        tmp.unlink()
            except (OSError, MdmemError):
                continue
