"""Errors the library raises; the CLI turns each into a one-line message (exit 1)."""

from __future__ import annotations


class MdmemError(Exception):
    """Base class: a problem the user can fix; the message says what to do next."""


class VaultNotFound(MdmemError):
    """No vault at or above the given path."""


class NoteNotFound(MdmemError):
    """A note reference matched nothing; carries suggestions."""

    def __init__(self, ref: str, suggestions: list[str] | None = None) -> None:
        self.ref = ref
        self.suggestions = suggestions or []
        msg = f"No note matches {ref!r}."
        if self.suggestions:
            msg += " Did you mean: " + ", ".join(self.suggestions) + "?"
        else:
            import shlex

            msg += f' Try "mdmem search {shlex.quote(ref)}" to find it.'
        super().__init__(msg)


class AmbiguousNote(MdmemError):
    """A note reference matched several notes."""

    def __init__(self, ref: str, candidates: list[str]) -> None:
        self.ref = ref
        self.candidates = candidates
        super().__init__(
            f"{ref!r} matches {len(candidates)} notes: "
            + ", ".join(candidates)
            + ". Use the id or the path to pick one."
        )


class LockHeld(MdmemError):
    """Another process is writing the index."""


class CommitFailed(MdmemError):
    """Git refused a commit of files mdmem had written and indexed (they stay on disk)."""


class ConfigError(MdmemError):
    """mdmem.toml or an MDMEM_* variable is invalid."""


class IndexError_(MdmemError):
    """The index could not be read or written."""


class IndexMissing(IndexError_):
    """The index was read before it was built (a read must call ``repair`` first)."""


class IndexNotWritten(IndexError_):
    """The disk refused a write (full, read-only, I/O error); notes already on disk are untouched."""

    full = False  # the disk (or the quota) is full: what is there can still be read


# errno / SQLite error name → (what went wrong, what to do about it)
_DISK_ERRORS = {
    "ENOSPC": ("disk full", "free some space"),
    "EDQUOT": ("disk quota exceeded", "free some space"),
    "EFBIG": ("file too large for this disk", "free some space or raise the file size limit"),
    "EIO": ("I/O error", "check the disk"),
    "EROFS": ("read-only file system", "make it writable"),
    "SQLITE_FULL": ("disk full", "free some space"),
    "SQLITE_IOERR": ("I/O error", "check the disk"),
    "SQLITE_READONLY": ("read-only file system", "make it writable"),
}


def _no_space(where: object) -> bool:
    import os

    path = str(where)
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    try:
        st = os.statvfs(path or "/")
    except OSError:
        return False
    # a write that failed with less than this left met a full disk (root may write ext4's reserve)
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize < (1 << 20)


def write_failure(exc: BaseException, where: object) -> IndexNotWritten | None:
    """The one-line error for a write the disk refused, or None if ``exc`` is something else.

    ``where`` names the place written when the exception does not (SQLite and usearch do not).
    """
    import errno

    key = ""
    target = where
    if isinstance(exc, OSError) and exc.errno is not None:
        key = errno.errorcode.get(exc.errno, "")
        target = exc.filename or where
    elif type(exc).__module__ == "sqlite3":
        name = str(getattr(exc, "sqlite_errorname", ""))  # SQLITE_FULL, SQLITE_IOERR_WRITE, …
        key = "_".join(name.split("_")[:2])
    elif isinstance(exc, RuntimeError) and "No space left on device" in str(exc):
        key = "ENOSPC"  # usearch reports a failed save as a RuntimeError with strerror's text
    elif isinstance(exc, RuntimeError) and "serialize" in str(exc) and _no_space(target):
        key = "ENOSPC"  # or as "Failed to serialize into stream", with no reason
    if key not in _DISK_ERRORS:
        return None
    if key in ("EIO", "SQLITE_IOERR", "SQLITE_READONLY") and _no_space(target):
        key = "ENOSPC"  # SQLite says "disk I/O error" when it cannot grow its -shm file on a full disk
    what, fix = _DISK_ERRORS[key]
    if key in ("ENOSPC", "EDQUOT", "SQLITE_FULL"):  # a write with no estimate of its own: a small one
        fix = f"{fix} (at least {-(-(_need(exc) or 1 << 20) // (1 << 20))} MB)"
    err = IndexNotWritten(
        f"Could not write {target}: {what}. Notes on disk are untouched; {fix} and run the command again."
    )
    err.full = key in ("ENOSPC", "EDQUOT", "SQLITE_FULL")
    return err


def _need(exc: BaseException | None) -> int | None:
    """The bytes the refused write needed, when its writer estimated them (``adapters.disk.no_room``)."""
    for _ in range(8):  # (a chain, never a cycle, but bounded all the same)
        if exc is None:
            break
        need = getattr(exc, "need", None)
        if isinstance(need, int) and need > 0:
            return need
        exc = exc.__cause__ or exc.__context__
    return None


class BadValue(MdmemError):
    """A value ``set`` cannot write: the message names the key and the values it takes."""


class NotAGitVault(MdmemError):
    """Note history (history, diff, show) needs the vault in a git repository."""


class UnknownRevision(MdmemError):
    """A revision git cannot resolve to a commit."""


class NotInRevision(MdmemError):
    """The note did not exist in the revision asked for."""


class BookUnreadable(MdmemError):
    """A PDF or EPUB that cannot be imported (no text layer, a password, DRM, a broken file); nothing was written."""
