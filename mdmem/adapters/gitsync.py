"""Git for ``mdmem sync``: the branch and its upstream, fetch, merge, the stages of a
conflicted merge, push. Plain ``git`` subprocesses (no GitPython: its import costs more than these
calls), every one on the repository's top folder with paths relative to it. mdmem's own hooks are
skipped (``MDMEM_SKIP_HOOK``): sync indexes what it brought in itself."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import MdmemError
from .git import git_env, lock_contention, lock_retries

REFLOG_DEPTH = 50  # earlier states of the upstream checked for a force-push


class SyncRefused(MdmemError):
    """The repository is not in a state sync can work from (no remote, no upstream, detached, mid-merge)."""


@dataclass(frozen=True, slots=True)
class Upstream:
    """What the current branch syncs with: ``branch``, its ``remote``, the remote ``ref`` it merges
    (refs/heads/main) and the ``tracking`` ref fetch updates (refs/remotes/origin/main)."""

    branch: str
    remote: str
    ref: str
    tracking: str

    @property
    def name(self) -> str:
        return f"{self.remote}/{self.ref.removeprefix('refs/heads/')}"


def run(
    top: Path, *args: str, check: bool = True, stderr_to_tty: bool = False, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``top`` (mdmem hooks off); ``check``: a failure raises one line with git's reason.
    ``stderr_to_tty``: git's stderr (its progress) goes to ours instead of being captured."""
    env = {**git_env(), "MDMEM_SKIP_HOOK": "1", "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=false", *args],
        cwd=top,
        env=env,
        input=input,
        stdout=subprocess.PIPE,
        stderr=None if stderr_to_tty else subprocess.PIPE,
    )
    if check and proc.returncode != 0:
        raise MdmemError(f"git {args[0]} failed in {top}: {reason(proc)}")
    return proc


def out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def reason(proc: subprocess.CompletedProcess[bytes]) -> str:
    """git's one line on why it failed (its first fatal:/error: line)."""
    text = ((proc.stderr or b"") + b"\n" + (proc.stdout or b"")).decode("utf-8", "replace")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    picked = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), lines[0] if lines else "")
    return picked or f"exit status {proc.returncode} (see git's output above)"


_UNFINISHED = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def in_progress(top: Path) -> str | None:
    """What git has left unfinished in the repository: "a merge", "a rebase", … or None (one git call)."""
    args = [a for name, _ in _UNFINISHED for a in ("--git-path", name)]
    paths = out(run(top, "rev-parse", *args, check=False)).splitlines()
    for (_, what), path in zip(_UNFINISHED, paths, strict=False):
        p = Path(path)
        if (p if p.is_absolute() else top / p).exists():
            return what
    return None


def upstream(top: Path) -> Upstream:
    """The current branch and what it syncs with; ``SyncRefused`` saying what to do when there is none."""
    branch = out(run(top, "symbolic-ref", "-q", "--short", "HEAD", check=False))
    if not branch:
        raise SyncRefused(
            f"HEAD is detached in {top} (no branch to sync); check out your branch "
            "(git switch main), then rerun mdmem sync."
        )
    remotes = out(run(top, "remote")).split()
    if not remotes:
        raise SyncRefused(
            f"{top} has no git remote to sync with; add one (git remote add origin URL), "
            f"push once (git push -u origin {branch}), then rerun mdmem sync."
        )
    remote = out(run(top, "config", f"branch.{branch}.remote", check=False))
    ref = out(run(top, "config", f"branch.{branch}.merge", check=False))
    if not remote or not ref or remote == ".":
        raise SyncRefused(
            f"branch {branch} has no upstream branch to sync with; set it once "
            f"(git push -u {remotes[0]} {branch}), then rerun mdmem sync."
        )
    tracking = f"refs/remotes/{remote}/{ref.removeprefix('refs/heads/')}"
    return Upstream(branch, remote, ref, tracking)


def rev(top: Path, ref: str) -> str | None:
    """The commit ``ref`` names, or None."""
    sha = out(run(top, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False))
    return sha or None


def count(top: Path, since: str | None, until: str) -> int:
    """Commits in ``until`` that are not in ``since`` (all of them when ``since`` is None)."""
    rng = [until, f"^{since}"] if since else [until]
    return int(out(run(top, "rev-list", "--count", *rng)) or 0)


def pending_notes(top: Path, prefix: str) -> list[str]:
    """Notes under the vault folder ``prefix`` with changes git has not committed (edited, new, deleted),
    repository-relative; notes in hidden folders are not notes."""
    proc = run(
        top, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", f":(icase){prefix}*.md"
    )
    paths = []
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        path = entry[3:]
        if entry and not any(part.startswith(".") for part in path[len(prefix) :].split("/")):
            paths.append(path)
    return paths


def commit(top: Path, message: str, paths: list[str] | None = None) -> None:
    """Commit exactly ``paths`` (staged first; ``git commit --only``: whatever else the user staged stays
    staged and out of the commit), or what is staged (a merge: finishes it). Waits a little when another
    git process holds a lock (``git.lock_retries``)."""
    if paths:
        run(top, "add", "-A", "--", *paths)
    only = ["--only", "--", *paths] if paths else []
    ident = [] if _has_identity(top) else ["-c", "user.name=mdmem", "-c", "user.email=mdmem@localhost"]
    for _ in lock_retries():
        proc = run(top, *ident, "commit", "-q", "-m", message, *only, check=False)
        if proc.returncode == 0:
            return
        if not lock_contention(reason(proc)):
            break
    raise MdmemError(f"git commit failed in {top}: {reason(proc)}")


def staged(top: Path) -> list[str]:
    """Repository-relative paths whose changes are staged (in git's index, not yet committed)."""
    proc = run(top, "diff", "--cached", "--name-only", "-z", check=False)
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _has_identity(top: Path) -> bool:
    return all(out(run(top, "config", key, check=False)) for key in ("user.name", "user.email"))


def fetch(top: Path, up: Upstream, progress: bool) -> None:
    """Fetch the remote; git's progress on our stderr when ``progress``. Another git process updating a
    ref at the same moment ("cannot lock ref") is waited out, as commits wait for ``index.lock``; a lock
    that stays is named, not blamed on the remote."""
    args = ["fetch", "--progress" if progress else "--quiet", up.remote]
    for _ in lock_retries():
        proc = run(top, *args, check=False, stderr_to_tty=progress)
        if proc.returncode == 0:
            return
        why = reason(proc)
        if not lock_contention(why):
            raise MdmemError(
                f"could not fetch {up.remote} in {top}: {why}; check the remote "
                f"(git remote -v) and your access, then rerun mdmem sync."
            )
    raise MdmemError(
        f"could not fetch {up.remote} in {top}: another git process holds a lock in .git "
        f"({why}); wait for it, or if no git command is running, remove the .lock file "
        "git names, then rerun mdmem sync."
    )


def dropped(top: Path, up: Upstream, head: str, theirs: str) -> str | None:
    """The commit an earlier state of the upstream had, that HEAD still holds and the upstream no longer
    does (it was force-pushed without it), or None. From the remote-tracking ref's reflog: the newest
    earlier value that HEAD contains must be in the upstream now, or merging (or pushing) would put
    back history someone removed on purpose (a leaked note, say)."""
    proc = run(top, "reflog", "show", "--format=%H", "-n", str(REFLOG_DEPTH), up.tracking, "--", check=False)
    seen = {theirs}
    for sha in out(proc).split():
        if sha in seen:
            continue
        seen.add(sha)
        if _ancestor(top, sha, head):
            return None if _ancestor(top, sha, theirs) else sha
    return None


def _ancestor(top: Path, old: str, new: str) -> bool:
    return run(top, "merge-base", "--is-ancestor", old, new, check=False).returncode == 0


def merge(top: Path, ref: str, message: str) -> bool:
    """Merge ``ref`` into the branch. True when git merged it cleanly (committed); False when it
    stopped at conflicts (``unmerged`` lists them; the merge is in progress). Any other refusal
    raises git's reason and leaves nothing in progress."""
    ident = [] if _has_identity(top) else ["-c", "user.name=mdmem", "-c", "user.email=mdmem@localhost"]
    for _ in lock_retries():  # another git process may hold .git/index.lock for a moment
        proc = run(top, *ident, "merge", "--no-edit", "-m", message, ref, check=False)
        if proc.returncode == 0:
            return True
        if in_progress(top) is not None or not lock_contention(reason(proc)):
            break
    if in_progress(top) == "a merge" and unmerged(top):
        return False
    if in_progress(top) == "a merge":
        run(top, "merge", "--abort", check=False)
    name = ref.removeprefix("refs/remotes/")
    blocking = _overwritten(proc)
    if blocking:
        shown = ", ".join(blocking[:5]) + (f" and {len(blocking) - 5} more" if len(blocking) > 5 else "")
        staged_now = set(staged(top))
        mine = [p for p in blocking if p in staged_now]
        unstage = f"; or unstage them: git restore --staged {' '.join(mine[:5])}" if mine else ""
        raise MdmemError(
            f"git could not merge {name} in {top}: it would overwrite local changes to {shown}, so "
            f"nothing was merged; commit them, or set them aside (git stash, and git stash pop after "
            f"the sync){unstage}; then rerun mdmem sync."
        )
    raise MdmemError(f"git could not merge {name} in {top}: {reason(proc)}; nothing was merged.")


def _overwritten(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    """The files git names when it refuses a merge that would overwrite local changes (staged, unstaged
    or untracked): the indented lines after its "would be overwritten by merge:" line."""
    lines = (proc.stderr or b"").decode("utf-8", "replace").splitlines()
    found: list[str] = []
    listing = False
    for line in lines:
        if "would be overwritten by merge" in line:
            listing = True
        elif listing and line[:1] in (" ", "\t") and line.strip():
            found.append(line.strip())
        else:
            listing = False
    return found


def abort_merge(top: Path) -> None:
    run(top, "merge", "--abort", check=False)


def unmerged(top: Path) -> dict[str, dict[int, str]]:
    """The conflicted paths of a merge in progress: path → {stage: blob} (1 base, 2 ours, 3 theirs)."""
    found: dict[str, dict[int, str]] = {}
    for entry in run(top, "ls-files", "-u", "-z", "--full-name").stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        info, _, path = entry.partition("\t")
        _mode, blob, stage = info.split()
        found.setdefault(path, {})[int(stage)] = blob
    return found


def blob(top: Path, sha: str) -> bytes:
    """A blob's bytes."""
    return run(top, "cat-file", "blob", sha).stdout


def grep(top: Path, text: str, pathspec: str) -> list[str]:
    """Tracked files in the work tree that contain ``text`` (a fixed string), repository-relative."""
    proc = run(top, "grep", "-l", "-z", "-F", "--full-name", "-e", text, "--", pathspec, check=False)
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def show(top: Path, rev: str, path: str) -> bytes | None:
    """A file's bytes in a commit (its repository-relative path), or None when it is not there."""
    proc = run(top, "cat-file", "blob", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def stage(top: Path, add: list[str], remove: list[str]) -> None:
    """Mark settled paths: ``add`` as they are in the work tree, ``remove`` as deleted."""
    if add:
        run(top, "add", "-f", "--", *add)
    if remove:
        run(top, "rm", "-q", "--cached", "--ignore-unmatch", "--", *remove)


def merge_lines(base: str, ours: str, theirs: str) -> str | None:
    """A line-by-line three-way merge (git merge-file): the merged text, or None on a conflict."""
    with tempfile.TemporaryDirectory(prefix="mdmem-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            files.append(path)
        proc = subprocess.run(["git", "merge-file", "-p", *files], env=git_env(), capture_output=True)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class Pushed:
    """What a push did: ``ok``, or ``rejected`` (the remote moved: fetch and merge again), else ``error``."""

    ok: bool
    rejected: bool = False
    error: str = ""


def push(top: Path, up: Upstream, progress: bool) -> Pushed:
    """Push the branch to its upstream (never forced)."""
    proc = run(
        top,
        "push",
        "--porcelain",
        "--progress" if progress else "--quiet",
        up.remote,
        f"HEAD:{up.ref}",
        check=False,
        stderr_to_tty=progress,
    )
    if proc.returncode == 0:
        return Pushed(True)
    text = out(proc) + "\n" + (proc.stderr or b"").decode("utf-8", "replace")
    if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text:
        return Pushed(False, rejected=True)
    if "[remote rejected]" in text and "lock" in text:  # another push holds the remote's ref lock
        return Pushed(False, rejected=True)
    return Pushed(False, error=reason(proc))


def changed(top: Path, old: str | None, new: str) -> list[str]:
    """Repository-relative paths that differ between two commits (all of ``new``'s when ``old`` is None)."""
    if old is None:
        args = ["ls-tree", "-r", "-z", "--name-only", new]
    else:
        args = ["diff", "--name-only", "--no-renames", "-z", old, new]
    return [p for p in run(top, *args).stdout.decode("utf-8", "surrogateescape").split("\0") if p]
