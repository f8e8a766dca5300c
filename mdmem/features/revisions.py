"""A note's past: ``history`` (the version chain through ``supersedes`` and each file's git
log, optionally with each commit's diff), ``diff`` (what changed since a revision) and ``show`` (what
it said then). Git is the history; renames are followed (``git log --follow``)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ..core.errors import MdmemError, NotAGitVault, NotInRevision, UnknownRevision
from ..results.changes import History, LogEntry, NoteAt, NoteDiff, Revision, Version

if TYPE_CHECKING:
    from ..index.store import IndexStore

HISTORY_COMMITS = 10  # commits shown per version unless asked for more (the text said nothing past 5 before)


def history(store: IndexStore, ref: str, limit: int | None = HISTORY_COMMITS, *, diff: bool = False) -> History:
    """The version chain through ``ref`` (oldest first) and each file's git log: its newest ``limit``
    commits (None: all), with how many there are in all; ``diff``: each commit's diff of the note."""
    from ..adapters.git import file_commit_count, file_log, find_git_dir

    start = store.resolve(ref)
    chain = [start]
    seen = {start}
    # Walk back through "supersedes", then forward through successors.
    cur = start
    while True:
        note = store.files.read_note(cur)[0]
        if not note.supersedes:
            break
        try:
            prev = store.resolve(note.supersedes)
        except MdmemError:
            break
        if prev in seen:
            break
        chain.insert(0, prev)
        seen.add(prev)
        cur = prev
    cur = start
    with store.reading() as idx:
        while True:
            nxt = idx.superseded_by([cur]).get(cur)
            if nxt is None or nxt in seen:
                break
            chain.append(nxt)
            seen.add(nxt)
            cur = nxt
    in_git = find_git_dir(store.root) is not None
    versions = []
    for rel in chain:
        n = store.files.read_note(rel)[0]
        path = store.files.safe_path(rel)
        if diff and in_git:
            log, total = _diffed_log(store, rel, limit)
        else:
            # One commit more than shown tells whether there are more; only then are they counted.
            log = [
                LogEntry(**c)
                for c in (file_log(store.root, path, None if limit is None else limit + 1) if in_git else [])
            ]
            total = len(log)
            if limit is not None and total > limit:
                log, total = log[:limit], max(file_commit_count(store.root, path), total)
        versions.append(
            Version(n.id, rel, n.title, n.status, n.created, n.updated, n.supersedes, rel == chain[-1], log, total)
        )
    return History(start, versions, limit)


def _diffed_log(store: IndexStore, rel: str, limit: int | None) -> tuple[list[LogEntry], int]:
    """The newest ``limit`` commits of a note, each with what it changed, and how many there are."""
    from ..adapters.git import file_at, file_revisions

    revs = file_revisions(store.root, rel)
    shown = revs if limit is None else revs[:limit]
    texts: dict[int, str | None] = {}  # each commit's text read once: it is one diff's new side, the next's old

    def text_at(i: int) -> str | None:
        if i not in texts:
            texts[i] = file_at(store.root, revs[i]["commit"], revs[i]["path"]) if i < len(revs) else None
        return texts[i]

    out = []
    for i, c in enumerate(shown):
        before = revs[i + 1] if i + 1 < len(revs) else None
        text, _, _ = _unified(text_at(i + 1) or "", text_at(i) or "", before["path"] if before else None, c["path"])
        out.append(LogEntry(c["commit"], c["date"], c["author"], c["subject"], text))
    return out, len(revs)


def _unified(old: str, new: str, old_name: str | None, new_name: str | None) -> tuple[str, int, int]:
    """A unified diff (3 lines of context) and its added and removed line counts."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{old_name}" if old_name else "/dev/null",
            f"b/{new_name}" if new_name else "/dev/null",
        )
    )
    lines = [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines]
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return "".join(lines), added, removed


def _revisions(store: IndexStore, rel: str) -> tuple[str, list[dict[str, str]]]:
    """(the vault's folder in its repository, the note's commits newest first), or ``NotAGitVault``."""
    from ..adapters.git import file_revisions, repo_prefix

    prefix = repo_prefix(store.root)
    if prefix is None:
        raise NotAGitVault(
            f"{store.root} is not in a git repository, so its notes have no history; run "
            '"git init" there and commit the notes ("mdmem init" does both).'
        )
    revs = file_revisions(store.root, rel)
    if not revs:
        raise NotInRevision(
            f"{rel} has not been committed yet, so it has no earlier version; commit it "
            f"(git add {rel} && git commit) and diff shows the changes since."
        )
    return prefix, revs


def _at(store: IndexStore, rel: str, rev: str) -> tuple[Revision, str]:
    """The note as revision ``rev`` had it: that commit (with the note's path then) and its text."""
    from ..adapters.git import ancestry, file_at, resolve_commit

    prefix, revs = _revisions(store, rel)
    sha = resolve_commit(store.root, rev)
    if sha is None:
        raise UnknownRevision(
            f"git knows no revision {rev!r}; give a commit, a tag, a branch or HEAD~N "
            f'("mdmem history {rel}" lists this note\'s commits).'
        )
    before = ancestry(store.root, sha)
    last = next((c for c in revs if c["commit"] in before), None)  # its newest commit at or before rev
    text = file_at(store.root, sha, last["path"]) if last else None
    if last is None or text is None:
        first = revs[-1]
        raise NotInRevision(
            f"{rel} was not in the vault at {rev} ({sha[:8]}); its first commit is "
            f'{first["commit"][:8]} of {first["date"][:10]} ("mdmem history {rel}" lists them).'
        )
    return Revision(sha, last["date"], last["author"], last["subject"], _in_vault(prefix, last["path"])), text


def _in_vault(prefix: str, repo_path: str) -> str:
    return repo_path.removeprefix(prefix)


def show(store: IndexStore, ref: str, rev: str) -> NoteAt:
    """What a note said in revision ``rev``: its text then (found under the name it had then)."""
    rel = store.resolve(ref)
    note = store.files.read_note(rel)[0]
    revision, text = _at(store, rel, rev)
    return NoteAt(note.id, note.title, rev, revision, text)


def diff(store: IndexStore, ref: str, rev: str | None = None) -> NoteDiff:
    """What changed in a note since ``rev`` (to the file as it is now), or by default since its previous
    version: the newest commit whose text differs from the file now (``new``: the last commit when the
    file is as that left it; ``old`` None: there is no earlier text, the whole note is new)."""
    from ..adapters.git import file_at

    rel = store.resolve(ref)
    note = store.files.read_note(rel)[0]
    now = store.files.safe_path(rel).read_text(encoding="utf-8", errors="replace")
    new: Revision | None = None
    if rev is not None:
        old, old_text = _at(store, rel, rev)
    else:  # the newest commit whose note differs from the file now (a rename alone is no new version)
        prefix, revs = _revisions(store, rel)
        old, old_text = None, ""
        for c in revs:
            then = file_at(store.root, c["commit"], c["path"])
            if then is not None and then != now:
                old, old_text = (
                    Revision(c["commit"], c["date"], c["author"], c["subject"], _in_vault(prefix, c["path"])),
                    then,
                )
                break
        if old is None or old.commit != revs[0]["commit"]:  # the file is as its last commit left it
            c = revs[0]
            new = Revision(c["commit"], c["date"], c["author"], c["subject"], _in_vault(prefix, c["path"]))
    text, added, removed = _unified(old_text, now, old.path if old else None, rel)
    return NoteDiff(note.id, rel, note.title, old, new, text, added, removed)
