"""Free space on the disk under a path: the cheap check before a big write, and what a refused write needed."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

MB = 1 << 20
MARGIN = MB  # room kept beyond a write's estimate: the filesystem's own blocks, SQLite's journal, a TOC


def free_bytes(path: Path | str) -> int | None:
    """Bytes this user may still write on the filesystem holding ``path`` (its nearest existing
    parent), or None when that cannot be told."""
    p = str(path)
    while p and not os.path.exists(p):
        p = os.path.dirname(p)
    try:
        st = os.statvfs(p or "/")
    except OSError:
        return None
    # root may write the blocks ext4 keeps in reserve, which f_bavail leaves out
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


def no_room(path: Path | str, need: int) -> OSError:
    """The ENOSPC error of a write of about ``need`` bytes at ``path``; it carries ``need`` for the message."""
    exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    exc.need = need  # type: ignore[attr-defined]  # read by errors.write_failure to say how much to free
    return exc


def check_room(path: Path | str, need: int) -> None:
    """Refuse, before anything is written, a write of about ``need`` bytes (plus ``MARGIN``) the disk
    under ``path`` has no room for: failing here leaves nothing half-written to fill the disk further."""
    free = free_bytes(path)
    if free is not None and free < need + MARGIN:
        raise no_room(path, need + MARGIN)


def size_of(paths: Iterable[Path]) -> int:
    """Bytes the files (and the files inside the folders) ``paths`` take; what vanished counts 0."""
    total = 0
    for path in paths:
        try:
            if path.is_dir():
                total += sum(size_of([p]) for p in path.iterdir())
            else:
                total += path.stat().st_size
        except OSError:
            continue
    return total
