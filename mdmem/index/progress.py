"""The embedding's progress in ``.mdmem/embed-progress.json``, for ``status`` in another process: the
whole job's (every chunk it has to embed, its rate and the time left), not one round's."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

PROGRESS_FILE = "embed-progress.json"
PROGRESS_EVERY = 1.0  # seconds between writes of the progress file


class EmbedProgress:
    """The running embed's progress in ``.mdmem/embed-progress.json``, for ``status`` in another process:
    chunks done and to do in the whole run (the background job's every round: ``whole_job``).

    Written at most every PROGRESS_EVERY seconds (no fsync: it is a hint) and removed at the end; a
    killed embed leaves it behind, so readers trust it only while its pid lives (``embed_progress``)."""

    def __init__(self, state_dir: Path, total: int, *, whole_job: bool = False) -> None:
        import os

        self.path = state_dir / PROGRESS_FILE
        self.started = time.time()
        self.pid = os.getpid()
        self.total = total
        self.done = 0
        self.job = whole_job
        self.last = 0.0
        self.update(0)

    def advance(self, chunks: int) -> None:
        """``chunks`` more were embedded."""
        self.update(self.done + chunks)

    def expect(self, left: int) -> None:
        """``left`` chunks are still without a vector (the job's total follows what writes add meanwhile)."""
        self.total = self.done + max(0, left)
        self.last = 0.0
        self.update(self.done)

    def update(self, done: int) -> None:
        import json
        import os

        self.done = done
        now = time.time()
        if done < self.total and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        data = {
            "pid": self.pid,
            "done": done,
            "total": self.total,
            "started": self.started,
            "updated": now,
            "job": self.job,
        }
        tmp = self.path.with_name(f".{self.path.name}.{self.pid}.tmp")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a hint only: never fail an embed over it

    def close(self) -> None:
        import json

        try:
            if json.loads(self.path.read_text()).get("pid") == self.pid:
                self.path.unlink()
        except (OSError, ValueError, AttributeError):
            pass


def embed_progress(state_dir: Path) -> dict[str, Any] | None:
    """A running embed's progress (done, total, pid, started, updated; ``job``: the background job's whole
    run), or None (none, or it died)."""
    import json
    import os

    path = state_dir / PROGRESS_FILE
    try:
        data = json.loads(path.read_text())
        os.kill(int(data["pid"]), 0)
        if not isinstance(data, dict) or time.time() - float(data["updated"]) > 3600:
            return None  # a pid reused long after the embed died
        return {**{k: data[k] for k in ("pid", "done", "total", "started", "updated")}, "job": bool(data.get("job"))}
    except PermissionError:  # alive, another user's
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
