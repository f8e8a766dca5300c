"""Small files in places someone else may have written to: read and append without following a link
or blocking.

Nothing in ``.mdmem/`` is committed by mdmem, but a clone carries whatever a teammate force-added, and
git stores links as links: a state file may be a link to a file outside the vault (``catchup.log`` made
the catch-up job append to one), to ``/dev/zero`` (a read never ends) or a FIFO (a read never starts).
Standard library only, and light: the prompt hook reads ``serve.json`` through this module.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the served prompt hook loads no pathlib
    from pathlib import Path


def read_plain(path: str | os.PathLike[str], limit: int) -> str | None:
    """A small file's text; None when it is missing, not a plain file (never followed: a link, a FIFO, a
    device) or larger than ``limit`` bytes."""
    try:
        return read_small(path, limit)
    except OSError:
        return None


def read_small(path: str | os.PathLike[str], limit: int, *, follow: bool = False, errors: str = "replace") -> str:
    """A small file's text, read without blocking (a FIFO cannot hang the read) and, unless ``follow``
    (the user's own file: a dotfiles link), without following a link; ``OSError`` saying why not
    (missing, a FIFO, a device, a folder, more than ``limit`` bytes). ``errors``: as ``bytes.decode``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"it is {_kind(st.st_mode)}, not a plain file")
        if st.st_size > limit:
            raise OSError(f"it holds {st.st_size} bytes, more than {limit}")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > limit:
                raise OSError(f"it holds more than {limit} bytes")
        return b"".join(chunks).decode("utf-8", errors=errors)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a folder" if stat.S_ISDIR(mode) else "not a file"


def open_plain(path: Path, *, truncate: bool = False, log: bool = False) -> int:
    """A descriptor to append to (or, ``truncate``, rewrite) a file: a link, FIFO or device in its
    place is removed first, and links are never followed. Should one appear meanwhile, ``OSError``; a
    ``log`` goes to /dev/null instead (a job's output is worth less than the job)."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | (os.O_TRUNC if truncate else os.O_APPEND), 0o644)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{path} is not a plain file")
    except OSError:
        if not log:
            raise
        return os.open(os.devnull, os.O_WRONLY)
    return fd
