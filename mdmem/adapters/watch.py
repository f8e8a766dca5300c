"""What changed in a vault's folders since the last look, for processes that stay up (serve, MCP).

Linux's inotify through ctypes (the only module that uses it): one watch per note folder on a
non-blocking descriptor, and no thread. The kernel queues the events; ``changes()`` drains them when a
read asks, so a process that is not asked anything costs nothing (watchfiles' thread, woken on a
timer, costs CPU all the time on a large vault, and it hands events over only after that step,
so a read right after a save could miss it). Events up to the moment of the read are all seen.
Elsewhere, or when the kernel refuses (no more watches, a full queue), ``changes()`` says it lost
track and the caller compares every file instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
from pathlib import Path

from .files import is_hidden

# inotify(7)
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR, IN_ONLYDIR = 0x4000, 0x8000, 0x40000000, 0x01000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then the name, NUL-padded)


class FolderWatch:
    """Changes under one vault root: files added, removed, renamed or rewritten (in place or not)."""

    def __init__(self, root: Path, folders: list[str]) -> None:
        """Watch ``folders`` (vault-relative, "" for the root); raises OSError when inotify cannot."""
        if not sys.platform.startswith("linux"):
            raise OSError("file watching needs Linux's inotify")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._libc = libc
        self.root = root
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd: int | None = fd
        self._dirs: dict[int, str] = {}
        try:
            for rel in folders:
                self._add(rel)
        except OSError:
            self.close()
            raise

    def _add(self, rel: str) -> None:
        path = os.fsencode(str(self.root / rel) if rel else str(self.root))
        wd = self._libc.inotify_add_watch(self.fd, path, MASK | IN_ONLYDIR)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (2, 20):  # ENOENT, ENOTDIR: gone meanwhile; its parent's event says so
                return
            raise OSError(err, f"inotify_add_watch failed for {rel or '.'}: {os.strerror(err)}")
        self._dirs[wd] = rel

    def changes(self) -> set[str] | None:
        """Vault-relative paths of everything that changed since the last call (folders and hidden
        files included: the caller picks), or None when the watch lost track (queue overflow, a
        folder it could not watch): then compare every file once; the watch goes on from there."""
        if self.fd is None:
            return None
        out: set[str] = set()
        lost = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return None
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, pos)
                raw = data[pos + _EVENT.size : pos + _EVENT.size + size].rstrip(b"\0")
                pos += _EVENT.size + size
                if mask & IN_Q_OVERFLOW:
                    lost = True
                    continue
                folder = self._dirs.get(wd)
                if folder is None:
                    continue
                if mask & IN_IGNORED:
                    self._dirs.pop(wd, None)
                    continue
                name = os.fsdecode(raw)
                rel = f"{folder}/{name}" if folder and name else (name or folder)
                out.add(rel)
                if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and not is_hidden(rel):
                    # Files written into it before its watch began are not reported: compare every file once.
                    self._watch_tree(rel)
                    lost = True
                elif (mask & IN_ISDIR and mask & IN_MOVED_FROM and not is_hidden(rel)) or mask & IN_MOVE_SELF:
                    # A folder moved away takes its notes without an event each (and a watched folder that
                    # moved reports under its old path): compare every file once.
                    lost = True
        return None if lost or self.fd is None else out

    def _watch_tree(self, rel: str) -> None:
        """Watch a folder that appeared, and the folders in it."""
        try:
            stack = [rel]
            while stack:
                here = stack.pop()
                self._add(here)
                for entry in os.scandir(self.root / here):
                    if entry.name[0] != "." and entry.is_dir(follow_symlinks=False):
                        stack.append(f"{here}/{entry.name}")
        except OSError:
            self.close()  # a folder it cannot watch (no watches left): the caller compares the files itself

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
