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
from pathlib import Path


def read_plain(path: Path, limit: int) -> str | None:
    """A small file's text; None when it is missing, not a plain file (never followed: a link, a FIFO, a
    device) or larger than ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > limit:
                return None
        return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


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
