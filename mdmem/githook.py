"""What a git hook runs: a quick, quiet reindex that never fails the git command.

Kept free of click (``python -m mdmem`` reaches it directly) so a commit pays for as little
start-up as possible.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .vault import Vault


def run_git_hook(vault_path: str | None, hook: str) -> int:
    """Reindex after ``hook``; always returns 0. Problems go to stderr as one line."""
    if os.environ.get("MDMEM_SKIP_HOOK"):
        return 0
    from .git import clean_env
    from .vault import Vault

    clean_env()
    vault = None
    try:
        vault = Vault.open(vault_path) if vault_path else Vault.discover()
        reason = vault.rebuild_reason()
        if reason is not None:
            # A full rebuild (new vault, new mdmem version) can take minutes: never make git wait.
            rebuild_in_background(vault)
            print(f"mdmem ({hook}): rebuilding the index in the background ({reason}).", file=sys.stderr)
            return 0
        timeout = float(os.environ.get("MDMEM_HOOK_LOCK_TIMEOUT", "2"))
        # Only what the commits since the last index touched; a file checkout (post-checkout
        # flag 0) means a full scan. Uncommitted edits are for "mdmem reindex".
        vault.catch_up(timeout=timeout, whole_tree=hook == "post-checkout:0")
    except Exception as exc:  # a hook must never break git; leave a mark for the next command
        try:
            if vault is not None:
                vault.mark_stale()
        except Exception:
            pass
        print(f"mdmem ({hook}): index not updated: {exc} — it will be refreshed by the next "
              "mdmem command, or run \"mdmem reindex\".", file=sys.stderr)
    return 0


def rebuild_in_background(vault: Vault) -> None:
    """Start ``mdmem reindex`` in its own session (output to ``.mdmem/reindex.log``) and return at once."""
    from .index.state import STATE_DIR

    state = vault.root / STATE_DIR
    state.mkdir(exist_ok=True)
    with open(state / "reindex.log", "ab") as log:
        subprocess.Popen([sys.executable, "-m", "mdmem", "--vault", str(vault.root), "reindex", "-q"],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
