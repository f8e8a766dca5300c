"""What a git hook runs: a quick, quiet reindex that never fails the git command and never makes
it wait for long; and the background job that catches up when a hook hands a big change over.

Kept free of click (``python -m mdmem`` reaches it directly) so a commit pays for as little
start-up as possible.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..api.vault import Vault

JOB = "catch-up"  # ``reindex --git-hook catch-up``: the background job (index.state.JOB_HOOK)
EMBED_JOB = "embed"  # ``reindex --git-hook embed``: the background embedding job (index.state.EMBED_HOOK)


def run_git_hook(vault_path: str | None, hook: str) -> int:
    """Reindex after ``hook``; always returns 0. Problems go to stderr as one line.

    A commit's few notes are indexed before the hook returns; a checkout, merge, pull or rebase that
    changes more, or a rebuild (``Indexer.after_git``), is left to one detached job, which is this
    function again with ``hook`` "catch-up" (its output goes to ``.mdmem/catchup.log``; after each pass
    it gives chunks whose text the embedding cache knows their vectors back). Reads say the index is
    catching up until it is done; a job that dies leaves a mark the next read or hook finishes.

    After the index is written, the changed chunks get their vectors (``Semantic.keep_up``): at once
    when the model is cheap here, else from the embedding job, this function with ``hook`` "embed"
    (output in ``.mdmem/embed.log``).
    """
    if os.environ.get("MDMEM_SKIP_HOOK") and hook not in (JOB, EMBED_JOB):
        return 0
    from ..adapters.git import clean_env
    from ..api.vault import Vault

    clean_env()
    vault = None
    started = time.monotonic()
    try:
        vault = Vault.open(vault_path) if vault_path else Vault.discover()
        timeout = float(os.environ.get("MDMEM_HOOK_LOCK_TIMEOUT", "2"))
        if hook == EMBED_JOB:
            done: object = vault.run_embedding_job()
        else:
            # Only what the commits since the last index touched; a file checkout (post-checkout
            # flag 0) means a full scan. Uncommitted edits are for "mdmem reindex" (or the next read).
            done = vault.after_git(hook, timeout=timeout, whole_tree=hook == "post-checkout:0")
        if hook in (JOB, EMBED_JOB):
            print(f"mdmem ({hook}): {done} in {time.monotonic() - started:.1f} s", file=sys.stderr)
        elif isinstance(done, str):  # a rebuild or a big change went to the background job
            print(f"mdmem ({hook}): {done}.", file=sys.stderr)
    except Exception as exc:  # a hook must never break git; leave a mark for the next command
        if hook == EMBED_JOB:  # the index is fine; its request mark stays for the next write or read
            print(f"mdmem ({hook}): vectors not updated: {exc}", file=sys.stderr)
            return 0
        try:
            if vault is not None:
                vault.mark_stale()
        except Exception:
            pass
        print(
            f"mdmem ({hook}): index not updated: {exc} — it will be refreshed by the next "
            'mdmem command, or run "mdmem reindex".',
            file=sys.stderr,
        )
    finally:
        if vault is not None:
            vault.close()
    return 0


def rebuild_in_background(vault: Vault) -> None:
    """No usable index: build it in the background job (output in ``.mdmem/catchup.log``); returns at once."""
    vault.after_git("rebuild", timeout=0.0)
