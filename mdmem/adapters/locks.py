"""OS file locks (fcntl's flock): take one within a time limit, polling, as every mdmem writer waits."""

from __future__ import annotations

import fcntl
import time


def flock_within(fd: int, seconds: float, poll: float = 0.05) -> bool:
    """Take the exclusive lock on ``fd``, trying every ``poll`` seconds for up to ``seconds``; False if
    another process still holds it then. Closing ``fd`` releases it, also when the process dies."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll)
