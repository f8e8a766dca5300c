"""Git access through GitPython: one small module, and every Repo it opens is closed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import CommitFailed, MdmemError

HOOK_NAMES = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
HOOK_MARKER = "# mdmem-git-hook v1"  # the hooks body may change; this line marks them as ours
_GIT_ENV = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY")


def clean_env() -> None:
    """Drop the variables git sets inside hooks, so git calls here act on the vault's repo."""
    for key in _GIT_ENV:
        os.environ.pop(key, None)


def find_git_dir(root: Path) -> Path | None:
    """The nearest folder at or above ``root`` that holds a ``.git`` (cheap; no git call)."""
    for p in (root, *root.parents):
        if (p / ".git").exists():
            return p
    return None


@contextmanager
def open_repo(root: Path) -> Iterator[Any]:
    """A GitPython Repo for the repository containing ``root``; always closed on exit."""
    import git

    clean_env()
    try:
        repo = git.Repo(str(root), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise MdmemError(f'{root} is not in a git repository. Run "git init" there first.') from exc
    try:
        yield repo
    finally:
        repo.close()


def init_repo(root: Path) -> bool:
    """``git init`` unless ``root`` is already inside a repository. True if one was made."""
    import git

    if find_git_dir(root) is not None:
        return False
    clean_env()
    git.Repo.init(str(root)).close()
    return True


def has_changes(root: Path, rel: str) -> bool:
    """True when git sees uncommitted changes to ``rel`` (modified, staged or untracked)."""
    env = git_env()
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", rel],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    return proc.returncode != 0 or bool(proc.stdout.strip())


def head_commit(root: Path) -> str | None:
    """The commit HEAD points at, or None (no repository, or no commit yet).

    The one git read on the hook's hot path: a plain ``git rev-parse`` instead of GitPython, whose
    import alone would take most of the hook's time (docs/benchmarks.md, Git hooks).
    """
    if find_git_dir(root) is None:
        return None
    env = git_env()
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, env=env, capture_output=True, text=True
    )
    sha = proc.stdout.strip()
    return sha if proc.returncode == 0 and len(sha) >= 40 else None


def head_cheap(root: Path) -> str | None:
    """HEAD's commit read from the files in ``.git`` (far cheaper than git: every read checks it), or None when
    that is not simple (no repository, no commit yet, an odd ref): then ask ``head_commit``."""
    top = find_git_dir(root)
    if top is None:
        return None
    try:
        gitdir = top / ".git"
        if gitdir.is_file():  # a linked worktree or a submodule: "gitdir: PATH"
            gitdir = top / gitdir.read_text().strip().removeprefix("gitdir:").strip()
        head = (gitdir / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head if _is_sha(head) else None
        ref = head[5:].strip()
        common = gitdir
        if (gitdir / "commondir").is_file():
            common = gitdir / (gitdir / "commondir").read_text().strip()
        for base in (gitdir, common):
            try:
                sha = (base / ref).read_text().strip()
                return sha if _is_sha(sha) else None
            except FileNotFoundError:
                continue
        with open(common / "packed-refs", encoding="utf-8") as fh:
            for line in fh:
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref:
                    return sha if _is_sha(sha) else None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def changed_since(root: Path, commit: str, head: str) -> list[str] | None:
    """Vault-relative paths (notes and attachments) that differ between two commits (added, changed,
    deleted, both sides of a rename), or None if git cannot tell. Plain git, like ``head_commit``: this
    runs in every hook, where GitPython's import would cost more than the whole diff."""
    env = git_env()
    proc = subprocess.run(
        ["git", "diff", "--name-only", "--no-renames", "-z", "--relative", commit, head],
        cwd=root,
        env=env,
        capture_output=True,
    )
    if proc.returncode != 0:
        return None
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


# -- dates from history ------------------------------------------------------------------------------

NOTES_PATHSPEC = ":(icase)*.md"  # what ``Files.scan`` takes for a note


@dataclass(frozen=True, slots=True)
class FileHistory:
    """What a run of commits did to one file, named by its path at the newest commit."""

    first: float  # author time of the oldest commit in the run that touched it
    last: float  # author time of the newest one
    origin: str | None  # its path before the run; None when the run added it


@dataclass(frozen=True, slots=True)
class History:
    """Per file, the commits that touched it; ``complete``: since the first commit, not a range."""

    files: dict[str, FileHistory]
    complete: bool


Change = tuple[str, str, str | None]  # status, path, old path (of a rename)
Commit = tuple[float, list[Change]]  # author time, its changes


def parse_log(out: bytes) -> list[tuple[float, list[str], list[Change]]]:
    """``git log -z --name-status --format='%x01%at %P'`` output as (author time, parents,
    changes), in the order git gave them."""
    commits: list[tuple[float, list[str], list[Change]]] = []
    for chunk in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, _, rest = chunk.partition("\0")
        tokens = [t for t in rest.lstrip("\n").split("\0") if t]
        changes: list[Change] = []
        i = 0
        while i + 1 < len(tokens):
            status = tokens[i][:1]
            if status in ("R", "C"):  # R100, old path, new path
                if i + 2 < len(tokens):
                    changes.append((status, tokens[i + 2], tokens[i + 1]))
                i += 3
            else:
                changes.append((status, tokens[i + 1], None))
                i += 2
        when, *parents = head.split()
        commits.append((float(when), parents, changes))
    return commits


def walk_history(commits: list[Commit]) -> dict[str, FileHistory]:
    """Each file's first and last commit among ``commits`` (children before parents, as
    ``--topo-order`` gives them), following renames back: a file is named by its newest path.

    Walking back, a rename maps the old path's older commits to the new name, and an add (or a
    delete) ends a path: older commits under that name touched another file."""
    alias: dict[str, str | None] = {}  # a path in older commits → the file it is now (None: none)
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    origin: dict[str, str | None] = {}
    for when, changes in commits:
        for status, path, old in changes:
            if status == "D":
                alias[path] = None
                continue
            key = alias[path] if path in alias else path
            if key is not None:
                first[key] = min(when, first.get(key, when))
                last[key] = max(when, last.get(key, when))
                origin[key] = None if status == "A" else (old if status == "R" else path)
            if status in ("A", "R"):
                alias[path] = None
            if status == "R" and old is not None:
                alias[old] = key
    return {k: FileHistory(first[k], last[k], origin[k]) for k in first}


def git_env() -> dict[str, str]:
    """Our environment without the variables that would point git at another repository (a hook's)."""
    return {k: v for k, v in os.environ.items() if k not in _GIT_ENV}


def _git(root: Path, *args: str) -> subprocess.Popen[bytes]:
    env = git_env()
    return subprocess.Popen(
        ["git", "-c", "core.quotepath=false", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


class PendingHistory:
    """The history pass, started in the background (a full index parses notes meanwhile)."""

    def __init__(self, root: Path, since: str | None, head: str) -> None:
        self.root, self.head = root, head
        self.since = since if since and since != head else None
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        rng = [f"^{self.since}", self.head] if self.since else [self.head]
        # Author dates: when the text was written, which a rebase or cherry-pick keeps. Merges show
        # no changes here, so a file is dated by the commits that changed it on either side.
        return _git(
            self.root,
            "log",
            "--topo-order",
            "--root",
            "-M",
            "--name-status",
            "-z",
            "--relative",
            "--format=%x01%at %P",
            *rng,
            "--",
            NOTES_PATHSPEC,
        )

    def result(self) -> History | None:
        """The files the commits touched (None when git failed)."""
        out, _ = self.proc.communicate()
        commits = parse_log(out) if self.proc.returncode == 0 else None
        if self.since is not None and (commits is None or not self._descends(commits)):
            # HEAD does not descend from ``since`` (a checkout back, a rebase, a reset) or git no
            # longer has it: walk the whole history.
            self.since = None
            self.proc = self._start()
            return self.result()
        if commits is None:
            return None
        return History(walk_history([(when, changes) for when, _, changes in commits]), complete=self.since is None)

    def _descends(self, commits: list[tuple[float, list[str], list[Change]]]) -> bool:
        """Whether HEAD descends from ``since``: a commit of the range names it as a parent (the
        usual case, no more git), else git says so."""
        assert self.since is not None
        return any(self.since in parents for _, parents, _ in commits) or is_ancestor(self.root, self.since, self.head)


def is_ancestor(root: Path, old: str, new: str) -> bool:
    """Whether commit ``old`` is an ancestor of (or is) ``new``."""
    proc = _git(root, "merge-base", "--is-ancestor", old, new)
    proc.communicate()
    return proc.returncode == 0


def tracked_files(root: Path, paths: list[str]) -> list[str]:
    """Those of ``paths`` that HEAD holds."""
    found = []
    for i in range(0, len(paths), 1000):  # well below the kernel's limit on a command line
        proc = _git(
            root, "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths[i : i + 1000]
        )
        out, _ = proc.communicate()
        if proc.returncode == 0:
            found += [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    return found


def modified_files(root: Path) -> set[str] | None:
    """Notes whose text differs from HEAD's (staged or not; untracked files are not listed), or
    None when git cannot tell."""
    proc = _git(root, "diff", "--name-only", "--no-renames", "-z", "--relative", "HEAD", "--", NOTES_PATHSPEC)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def worktree_changes(root: Path, *extra: str) -> subprocess.Popen[bytes]:
    """Start git listing the notes (and ``extra`` paths) whose file may differ from HEAD: edited in place or
    not, staged or not, deleted. Git compares each file's stat with its index in C, with threads (in half
    a Python stat loop's wall time on 2 cores); a file whose stat git has not
    refreshed is listed even when its text is the same. Untracked files are not listed. Read it with
    ``listed``: the caller can do other work while git runs."""
    return _git(
        root, "diff-index", "--name-only", "--no-renames", "-z", "--relative", "HEAD", "--", NOTES_PATHSPEC, *extra
    )


def listed(proc: subprocess.Popen[bytes]) -> list[str] | None:
    """The paths a started ``worktree_changes`` printed, or None when git failed."""
    out, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def untracked(root: Path, notes: list[str]) -> list[str] | None:
    """Those of ``notes`` (vault-relative) that git's index does not hold, or None when git cannot tell."""
    proc = _git(root, "ls-files", "-z", "--", NOTES_PATHSPEC)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    tracked = set(out.decode("utf-8", "surrogateescape").split("\0"))  # relative to the vault (git's cwd)
    return [p for p in notes if p not in tracked]


GIT_LOCK_WAIT = 3.0  # seconds a git write waits for another git process's lock (MDMEM_GIT_LOCK_WAIT)


def lock_retries() -> Iterator[None]:
    """The tries of a git write that another git process's lock may refuse (``lock_contention``): one
    at once, then one every 0.1 s for up to ``$MDMEM_GIT_LOCK_WAIT`` (``GIT_LOCK_WAIT``) seconds. The
    caller breaks out on success or on any other refusal; git holds its locks for milliseconds, and a
    stale one stays, so the last refusal is the one to report."""
    import time

    try:
        wait = float(os.environ.get("MDMEM_GIT_LOCK_WAIT", GIT_LOCK_WAIT))
    except ValueError:
        wait = GIT_LOCK_WAIT
    deadline = time.monotonic() + wait
    yield
    while time.monotonic() < deadline:
        time.sleep(0.1)
        yield


def commit_paths(root: Path, paths: list[Path], message: str) -> tuple[str, str | None] | None:
    """Commit exactly ``paths`` (nothing else the user staged).

    Returns (new commit, its parent or None), or None when there was nothing to commit. Waits a
    little while another git process holds a lock (``index.lock``, a ref lock); raises
    ``CommitFailed`` with git's reason when git still refuses.
    """
    import git

    if find_git_dir(root) is None:
        return None
    err = ""
    for _ in lock_retries():
        try:
            with open_repo(root) as repo:
                return _commit_once(repo, paths, message)
        except git.GitCommandError as exc:
            err = str(exc.stderr or "")
            if not lock_contention(err):
                raise CommitFailed(_git_reason(err, False)) from exc
    raise CommitFailed(_git_reason(err, True))


def lock_contention(stderr: str) -> bool:
    """Whether git refused only because another git process was at work: .git/index.lock or a ref's
    lock existed ("File exists"), or another commit moved the ref between git reading and updating it
    ("cannot lock ref 'HEAD': is at X but expected Y"). Worth a retry a moment later."""
    return "cannot lock" in stderr or (".lock" in stderr and "File exists" in stderr)


def _git_reason(stderr: str, locked: bool) -> str:
    """One line saying why git refused, from its stderr."""
    if locked and "index.lock" in stderr:
        return (
            "another git process holds .git/index.lock (if no git command is running, a crashed "
            "one left it behind: remove that file)"
        )
    if locked:
        return "another git process holds a ref lock in .git"
    lines = [ln.strip().removeprefix("stderr:").strip().strip("'") for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln]
    picked = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), lines[0] if lines else "")
    return f"git said: {picked}" if picked else "git commit failed"


def _commit_once(repo: Any, paths: list[Path], message: str) -> tuple[str, str | None] | None:
    rel = [os.path.relpath(p, repo.working_tree_dir) for p in paths]
    repo.git.add("--", *rel)
    if not repo.git.status("--porcelain", "--", *rel).strip():
        return None
    env = {"MDMEM_SKIP_HOOK": "1"}  # the caller has just indexed these files itself
    args = ["-m", message, "--only", "--", *rel]
    if not _has_identity(repo):
        args = ["-c", "user.name=mdmem", "-c", "user.email=mdmem@localhost", "commit", *args]
        repo.git.execute(["git", *args], env={**os.environ, **env})
    else:
        with repo.git.custom_environment(**env):
            repo.git.commit(*args)
    head = repo.head.commit
    return str(head.hexsha), (str(head.parents[0].hexsha) if head.parents else None)


def file_log(root: Path, path: Path, limit: int | None = 20) -> list[dict[str, str]]:
    """A file's commits, newest first, following renames: sha, date, author, subject (``limit``
    None: all of them)."""
    return [
        {k: c[k] for k in ("commit", "date", "author", "subject")}
        for c in file_revisions(root, os.path.relpath(path, root), limit)
    ]


def file_commit_count(root: Path, path: Path) -> int:
    """How many commits touched a file, following renames (0 when git cannot tell)."""
    with open_repo(root) as repo:
        rel = os.path.relpath(path, repo.working_tree_dir)
        try:
            return len(repo.git.log("--follow", "--format=%h", "--", rel).split())
        except Exception:
            return 0


def _has_identity(repo: Any) -> bool:
    try:
        return bool(repo.git.config("user.email")) and bool(repo.git.config("user.name"))
    except Exception:
        return False


def hooks_dir(repo: Any) -> Path:
    """Where git looks for hooks; refuses when ``core.hooksPath`` sends them elsewhere."""
    try:
        custom = repo.git.config("--get", "core.hooksPath")
    except Exception:
        custom = ""
    if custom:
        raise MdmemError(
            f"core.hooksPath is set to {custom!r}, so git ignores .git/hooks.\n"
            'hint: add "mdmem reindex --git-hook NAME" to the hooks in that folder, '
            'or unset core.hooksPath and rerun "mdmem hooks install".'
        )
    path = Path(repo.git.rev_parse("--git-path", "hooks"))
    if not path.is_absolute():
        path = Path(repo.working_tree_dir) / path
    return path


def _hook_script(name: str, vault_rel: str) -> str:
    # Runs in the top of the work tree. Chains to the previous hook first and exits with its
    # status (post-checkout's status becomes checkout's); our part can never fail the command.
    import shlex  # here: every read imports this module for head_cheap

    py, vault = shlex.quote(sys.executable), shlex.quote(vault_rel)
    # post-checkout's third argument says whether branches (1) or files (0) were checked out.
    arg = f'"{name}:$3"' if name == "post-checkout" else name
    return f"""#!/bin/sh
{HOOK_MARKER}
# Keeps the mdmem index of this vault fresh. Remove with: mdmem hooks uninstall
status=0
legacy="$(dirname "$0")/{name}.legacy"
if [ -x "$legacy" ]; then
  "$legacy" "$@"
  status=$?
fi
if [ -z "$MDMEM_SKIP_HOOK" ]; then
  (
    unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE GIT_PREFIX
    {py} -m mdmem --vault {vault} reindex --git-hook {arg} </dev/null >/dev/null
  ) || true
fi
exit $status
"""


def install_hooks(root: Path) -> list[str]:
    """Install mdmem's git hooks, keeping any existing hook as ``NAME.legacy``."""
    messages = []
    with open_repo(root) as repo:
        directory = hooks_dir(repo)
        directory.mkdir(parents=True, exist_ok=True)
        vault_rel = os.path.relpath(root.resolve(), Path(repo.working_tree_dir).resolve())
        for name in HOOK_NAMES:
            path = directory / name
            if path.exists() and HOOK_MARKER not in path.read_text(errors="replace"):
                legacy = directory / f"{name}.legacy"
                if legacy.exists():
                    raise MdmemError(f"{path} and {legacy} both exist; merge them by hand, then retry.")
                path.rename(legacy)
                messages.append(f"kept existing {name} hook as {legacy.name} (it still runs first)")
            _write_executable(path, _hook_script(name, vault_rel))
        messages.append(f"installed {', '.join(HOOK_NAMES)} in {directory}")
    return messages


def uninstall_hooks(root: Path) -> list[str]:
    """Remove mdmem's hooks and put back any hook they had replaced."""
    messages = []
    with open_repo(root) as repo:
        directory = hooks_dir(repo)
        for name in HOOK_NAMES:
            path = directory / name
            legacy = directory / f"{name}.legacy"
            if path.exists() and HOOK_MARKER in path.read_text(errors="replace"):
                path.unlink()
                if legacy.exists():
                    legacy.rename(path)
                    messages.append(f"restored the previous {name} hook")
                else:
                    messages.append(f"removed {name}")
    return messages or ["no mdmem hooks were installed"]


def hooks_installed(root: Path) -> list[str]:
    """Names of the mdmem hooks present (empty when not a git repo)."""
    if find_git_dir(root) is None:
        return []
    try:
        with open_repo(root) as repo:
            directory = hooks_dir(repo)
    except MdmemError:
        return []
    return [
        n for n in HOOK_NAMES if (directory / n).exists() and HOOK_MARKER in (directory / n).read_text(errors="replace")
    ]


def _write_executable(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.mdmem-tmp")
    tmp.write_text(text)
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, path)


# -- a note's past versions (history --diff, diff, show) ---------------------------------------------


def repo_prefix(root: Path) -> str | None:
    """The vault's folder inside its repository ("" at the top, "notes-vault/" below it), or None
    when the vault is not in a git repository."""
    top = find_git_dir(root)
    if top is None:
        return None
    rel = root.resolve().relative_to(top.resolve()).as_posix()
    return "" if rel == "." else rel + "/"


def file_revisions(root: Path, rel: str, limit: int | None = None) -> list[dict[str, str]]:
    """The commits that touched a file, newest first, following renames (the newest ``limit``; None:
    all): commit, date, author, subject and ``path``, the file's repository-relative path in that commit."""
    with open_repo(root) as repo:
        repo_rel = os.path.relpath(root / rel, repo.working_tree_dir)
        count = [f"-n{limit}"] if limit is not None else []
        try:
            out = repo.git.log(
                "--follow",
                *count,
                "-z",
                "--name-only",
                "--format=%x01%H%x09%aI%x09%an%x09%s",
                "--",
                repo_rel,
                strip_newline_in_stdout=False,
            )
        except Exception:
            return []
    rows = []
    for chunk in out.split("\x01")[1:]:
        head, _, names = chunk.partition("\0")
        sha, date, author, subject = (head.split("\t", 3) + ["", "", "", ""])[:4]
        path = next((n for n in names.strip("\n").split("\0") if n.strip("\n")), "").strip("\n")
        rows.append({"commit": sha, "date": date, "author": author, "subject": subject, "path": path})
    return rows


def resolve_commit(root: Path, rev: str) -> str | None:
    """The full sha of the commit ``rev`` names (a sha, a branch, a tag, HEAD~2, …), or None."""
    if not rev or rev.startswith("-"):
        return None
    with open_repo(root) as repo:
        try:
            return str(repo.git.rev_parse("--verify", "-q", f"{rev}^{{commit}}")).strip() or None
        except Exception:
            return None


def ancestry(root: Path, commit: str) -> set[str]:
    """``commit`` and every commit before it."""
    with open_repo(root) as repo:
        return set(repo.git.rev_list(commit).split())


def file_at(root: Path, commit: str, repo_path: str) -> str | None:
    """The text of a file (its repository-relative path) in a commit, or None if it is not there."""
    with open_repo(root) as repo:
        try:
            return str(repo.git.show(f"{commit}:{repo_path}", strip_newline_in_stdout=False))
        except Exception:
            return None


def sparse_clone(source: Path, dest: Path, commit: str, patterns: list[str]) -> None:
    """``dest`` as a clone of the repository at ``source`` (sharing its objects) with ``commit``
    checked out and only the files the sparse-checkout ``patterns`` name (``*.md``: the notes).
    A clone already at ``dest`` is moved to ``commit``, so its untracked ``.mdmem/`` index stays."""
    env = git_env()

    def git(*args: str, cwd: Path | None = None) -> None:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode:
            why = (done.stderr.strip().splitlines() or ["git failed"])[-1]
            raise MdmemError(
                f"Cannot check out {commit[:12]} of {source} into {dest}: {why}. "
                "Pass --corpus a clone of the repository that has that commit."
            )

    if not (dest / ".git").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "--quiet", "--no-checkout", "--shared", str(source.resolve()), str(dest))
    git("sparse-checkout", "set", "--no-cone", *patterns, cwd=dest)
    git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit, cwd=dest)
