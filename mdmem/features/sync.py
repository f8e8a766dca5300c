"""Team memory through git: ``sync`` commits hand edits, fetches, merges the upstream branch
and pushes, then indexes what changed; ``resolve`` settles a conflict it kept.

No text is ever lost. A note both sides changed is merged by ``merge.merge_note`` (frontmatter key by
key, the body by lines); when that cannot be done, this machine's version stays at the path and the
other's is saved beside it as a conflict copy (``notes/a.conflict-1a2b3c4.md``, frontmatter
``conflict_of``/``conflict_from``), and the merge commit is finished and pushed, so both machines see
the same two notes and neither is ever left mid-merge. An edit against a delete keeps the edit. The
copies are notes like any other: indexed and found by search (their text is real memory a teammate
wrote; hiding it until someone resolves would make it unfindable), flagged by their title and path,
and listed by ``status`` and ``doctor`` until ``mdmem resolve``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..adapters.files import Files, is_hidden
from ..core.errors import MdmemError
from ..core.merge import (
    both_texts,
    conflict_copy,
    copy_commit,
    copy_name,
    copy_of,
    copy_original,
    is_copy_name,
    merge_note,
    strip_copy,
)
from ..core.note import Problem
from ..results.sync import Resolution, SyncConflict, SyncReport

if TYPE_CHECKING:
    from ..adapters.gitsync import Upstream
    from ..index.store import IndexStore

PUSH_TRIES = 4  # a push the remote rejects because it moved meanwhile: fetch, merge and push again
SIDES = ("ours", "theirs", "both")


def sync(store: IndexStore, *, say: Callable[[str], None] | None = None, progress: bool = False) -> SyncReport:
    """Commit the vault's hand edits, fetch, merge the upstream, push; then index what changed.
    ``say``: a line per step (the CLI prints them on a terminal); ``progress``: git's own progress."""
    from ..adapters import gitsync as g
    from ..adapters.git import find_git_dir, is_ancestor, repo_prefix

    tell = say or (lambda line: None)
    top = find_git_dir(store.root)
    if top is None:
        raise g.SyncRefused(
            f"{store.root} is not a git repository; sync shares a vault through git: "
            'run "git init", add a remote and push once, then rerun mdmem sync.'
        )
    prefix = repo_prefix(store.root) or ""
    with store.writer_lock():  # a concurrent add, pin or sync waits: nothing interleaves with the commit
        # Under the lock: another sync's merge in progress is waited for, never mistaken for one git left.
        busy = g.in_progress(top)
        if busy is not None:
            raise g.SyncRefused(_unfinished(top, busy))
        up = g.upstream(top)
        start = g.rev(top, "HEAD")
        pending = g.pending_notes(top, prefix)
        elsewhere = sorted(set(g.staged(top)) - set(pending))
        if pending:
            tell(f"committing {len(pending)} edited note(s)")
            g.commit(top, _edits_message(pending, prefix), pending)
        if elsewhere:  # the user's own staged work (code beside a memory/ folder): never committed here
            tell(f"left staged, not committed: {_few(elsewhere)} (not the vault's notes)")
    fetched = pushed = retries = 0
    merged: str | None = None
    conflicts: list[SyncConflict] = []
    merged_notes: list[str] = []
    try:
        for _ in range(PUSH_TRIES):
            tell(f"fetching {up.remote}")
            g.fetch(top, up, progress)
            theirs = g.rev(top, up.tracking)
            with store.writer_lock():
                head = g.rev(top, "HEAD")
                gone = g.dropped(top, up, head, theirs) if theirs is not None and head is not None else None
                if gone is not None:
                    raise g.SyncRefused(_rewritten(top, up, gone, theirs or ""))
                if theirs is not None and head is not None and not is_ancestor(top, theirs, head):
                    fetched += g.count(top, head, theirs)
                    tell(f"merging {up.name}")
                    c, m = _integrate(store, top, prefix, up, theirs)
                    conflicts += c
                    merged_notes += m
                    merged = g.rev(top, "HEAD")
            ahead = g.count(top, theirs, "HEAD") if g.rev(top, "HEAD") else 0
            if not ahead:
                break
            tell(f"pushing {ahead} commit(s) to {up.name}")
            done = g.push(top, up, progress)
            if done.ok:
                pushed = ahead
                break
            if not done.rejected:
                raise MdmemError(
                    f"could not push to {up.name}: {done.error}; your commits are safe here: "
                    "fix the remote (access, protection rules), then rerun mdmem sync."
                )
            retries += 1
            tell(f"{up.name} moved meanwhile; fetching again")
        else:
            raise MdmemError(
                f"{up.name} kept moving: {PUSH_TRIES} pushes were rejected; everything is merged "
                "and committed here, so rerun mdmem sync."
            )
    except BaseException:
        try:  # what was merged before the failure is committed: index it too
            _reindex(store, top, prefix, start)
        except Exception:
            store.state.mark_stale()  # the next command catches up
        raise
    changed, index = _reindex(store, top, prefix, start)
    vectors = store.semantic.share(up.remote)
    return SyncReport(
        vault=str(store.root),
        branch=up.branch,
        upstream=up.name,
        committed=[p[len(prefix) :] for p in pending],
        fetched=fetched,
        merged=merged,
        pushed=pushed,
        notes_changed=changed,
        merged_notes=merged_notes,
        conflicts=conflicts,
        retries=retries,
        index=index,
        staged_elsewhere=elsewhere,
        vectors=vectors,
    )


def _unfinished(top: Path, what: str) -> str:
    if what == "a merge":
        return (
            f'a git merge is unfinished in {top}; finish it (settle the files, then "git commit") or '
            'drop it ("git merge --abort"), then rerun mdmem sync.'
        )
    return (
        f"{what} is in progress in {top}; finish it (or abort it: git {what.split()[-1]} --abort), "
        "then rerun mdmem sync."
    )


def _few(paths: list[str], n: int = 5) -> str:
    return ", ".join(paths[:n]) + (f" and {len(paths) - n} more" if len(paths) > n else "")


def _rewritten(top: Path, up: Upstream, gone: str, theirs: str) -> str:
    """The refusal for an upstream that was force-pushed without history this clone holds."""
    from ..adapters import gitsync as g

    lost = g.count(top, theirs, gone)
    return (
        f"{up.name} was force-pushed: {lost} commit(s) it had, up to {gone[:12]}, are no longer in it but are "
        f"still here; nothing was merged or pushed, so they are not put back. To follow it (keep only "
        f"your own later commits): git rebase --onto {up.name} {gone[:12]}, then rerun mdmem sync; to put "
        f"them back on purpose: git merge {up.name} && git push, then rerun mdmem sync."
    )


def _edits_message(paths: list[str], prefix: str) -> str:
    names = [p[len(prefix) :] for p in paths]
    head = f"mdmem sync: commit {len(names)} note change(s) not committed yet (hand edits)"
    return head + "\n\n" + "\n".join(names[:50]) + ("\n…" if len(names) > 50 else "")


def _reindex(store: IndexStore, top: Path, prefix: str, start: str | None) -> tuple[list[str], str]:
    """Index what the sync changed (as a git hook would: only those notes, or the background job for
    a big change); returns the notes changed and a line saying what the index did."""
    from ..adapters import gitsync as g

    head = g.rev(top, "HEAD")
    if head is None or head == start:
        return [], "nothing changed"
    notes = sorted(
        p[len(prefix) :] for p in g.changed(top, start, head) if p.startswith(prefix) and p.lower().endswith(".md")
    )
    done = store.indexer.after_git("post-merge", timeout=store.config.lock_timeout)
    return notes, done if isinstance(done, str) else f"{done.changed} note(s) reindexed"


# -- a conflicted merge ----------------------------------------------------------------------------


def _integrate(
    store: IndexStore, top: Path, prefix: str, up: Upstream, theirs: str
) -> tuple[list[SyncConflict], list[str]]:
    """Merge ``theirs``; settle every conflicted path so no text is lost, and finish the merge commit."""
    from ..adapters import gitsync as g

    message = f"mdmem sync: merge {up.name}"
    if g.merge(top, up.tracking, message):
        return [], []
    unmerged = g.unmerged(top)
    outside = sorted(p for p in unmerged if not p.startswith(prefix))
    if outside:
        g.abort_merge(top)
        raise MdmemError(
            f"git could not merge {outside[0]}, which is outside the vault {store.root}; "
            "nothing was merged: merge it with git (git pull), then rerun mdmem sync."
        )
    try:
        conflicts, merged = _settle(store, top, prefix, unmerged, theirs)
        kept = [c for c in conflicts if c.copy]
        body = "".join(f"\n{c.kind}: {c.note}" + (f" (other version: {c.copy})" if c.copy else "") for c in conflicts)
        summary = f" ({len(kept)} conflict(s) kept as copies: mdmem resolve)" if kept else ""
        g.commit(top, message + summary + ("\n" + body if body else ""))
    except BaseException:
        g.abort_merge(top)  # never leave the repository mid-merge; the notes are as they were
        raise
    return conflicts, merged


def _settle(
    store: IndexStore, top: Path, prefix: str, unmerged: dict[str, dict[int, str]], theirs_commit: str
) -> tuple[list[SyncConflict], list[str]]:
    """Decide every conflicted path (repository-relative) and stage the result. Interrupted, it
    removes the files it made (the caller then aborts the merge, which restores the rest)."""
    from ..adapters import gitsync as g

    settle = _Settle(store, top, prefix, unmerged, theirs_commit)
    try:
        for path, stages in sorted(unmerged.items()):
            settle.path(path, stages)
        settle.renamed_both()
        g.stage(top, settle.add, settle.remove)
    except BaseException:
        for made in settle.created:
            made.unlink(missing_ok=True)
        raise
    return settle.conflicts, settle.merged


class _Settle:
    """The settling of one conflicted merge: what it wrote, staged and found."""

    def __init__(
        self, store: IndexStore, top: Path, prefix: str, unmerged: dict[str, dict[int, str]], commit: str
    ) -> None:
        self.files, self.top, self.prefix, self.unmerged, self.commit = store.files, top, prefix, unmerged, commit
        self.conflicts: list[SyncConflict] = []
        self.merged: list[str] = []
        self.add: list[str] = []
        self.remove: list[str] = []
        self.created: list[Path] = []
        self.only_ours: dict[str, bytes] = {}
        self.only_theirs: dict[str, bytes] = {}
        self.bases: list[bytes] = []

    def write(self, rel: str, data: bytes) -> None:
        path = self.files.safe_path(rel)
        if not path.exists():
            self.created.append(path)
        self.files.write(rel, data)
        self.add.append(self.prefix + rel)

    def found(self, rel: str, kind: str, detail: str, copy: str | None = None) -> None:
        self.conflicts.append(SyncConflict(rel, kind, detail, copy, self.commit))

    def path(self, path: str, stages: dict[int, str]) -> None:
        """One conflicted path, by the stages git left: 1 the base, 2 ours, 3 theirs."""
        from ..adapters import gitsync as g

        rel = path[len(self.prefix) :]
        text = {s: g.blob(self.top, sha) for s, sha in stages.items()}
        # Each side's own version: with a rename git may stage a text it merged itself, markers and all.
        if 2 in text:
            text[2] = g.show(self.top, "HEAD", path) or text[2]
        if 3 in text:
            text[3] = g.show(self.top, "MERGE_HEAD", path) or text[3]
        if 2 in text and 3 in text:
            self.keep_both(
                rel,
                "edit/edit" if 1 in text else "add/add",
                text.get(1),
                text[2],
                text[3],
                "changed on both sides" if 1 in text else "added on both sides",
            )
        elif 2 in text and 1 in text:
            self.edit_kept(rel, text[2], "edit/delete", "edited here, deleted (or renamed) on the other side")
        elif 3 in text and 1 in text:
            self.edit_kept(rel, text[3], "delete/edit", "deleted (or renamed) here, edited on the other side")
        elif 2 in text:
            self.write(rel, text[2])
            self.only_ours[rel] = text[2]
        elif 3 in text:
            self.write(rel, text[3])
            self.only_theirs[rel] = text[3]
        else:  # the base alone: both sides moved it away (renamed on both sides); its text lives on there
            self.remove.append(path)
            self.bases.append(text[1])

    def edit_kept(self, rel: str, edited: bytes, kind: str, how: str) -> None:
        """An edit against a delete keeps the edited text. When the delete was a rename git did not see
        (the note changed too much), the note is at its new path with the same id: the edit then becomes
        that note's conflict copy, so one id names one note."""
        from ..adapters import gitsync as g

        note_id = _note_id(edited) if rel.lower().endswith(".md") else None
        moved = (
            [p[len(self.prefix) :] for p in g.grep(self.top, note_id, f"{self.prefix}*.md") if p != self.prefix + rel]
            if note_id
            else []
        )
        moved = [m for m in moved if _note_id(self.files.safe_path(m).read_bytes()) == note_id]
        if len(moved) != 1:
            self.write(rel, edited)
            self.found(rel, kind, how + ": the edited text is kept")
            return
        copy = copy_name(moved[0], self.commit, lambda r: (self.files.root / r).exists())
        self.write(copy, conflict_copy(edited.decode(), moved[0], self.commit).encode())
        self.files.safe_path(rel).unlink(missing_ok=True)
        self.remove.append(self.prefix + rel)
        self.found(moved[0], "rename/edit", f"{how}: renamed to {moved[0]}, and the edit of {rel} kept beside it", copy)

    def keep_both(self, rel: str, kind: str, base: bytes | None, ours: bytes, other: bytes, how: str) -> None:
        """Merge two versions into ``rel``; failing that, ours at ``rel`` and theirs as its conflict copy."""
        from ..adapters import gitsync as g

        note = rel.lower().endswith(".md")
        result = None
        if note and _utf8(ours) and _utf8(other) and _utf8(base or b""):
            result = merge_note(
                base.decode() if base is not None else None, ours.decode(), other.decode(), g.merge_lines
            )
        if result is not None and result.text is not None:
            self.write(rel, result.text.encode())
            self.merged.append(rel)
            if kind == "rename/rename":
                self.found(rel, kind, how + "; kept here with both sides' changes")
            return
        copy = copy_name(rel, self.commit, lambda r: (self.files.root / r).exists() or self.prefix + r in self.unmerged)
        self.write(rel, ours)
        self.write(copy, conflict_copy(other.decode(), rel, self.commit).encode() if note and _utf8(other) else other)
        what = ", ".join(result.conflicts) if result is not None else "the file"
        self.found(
            rel,
            kind,
            f"{how}; both sides changed {what}: this machine's text is kept at the path, the other beside it",
            copy,
        )

    def renamed_both(self) -> None:
        """A note renamed differently on the two sides is at both new paths: make it one note, at ours' name."""
        for t, other in self.only_theirs.items():
            partner = _partner(t, other, self.only_ours)
            if partner is None or not t.lower().endswith(".md"):
                continue  # not a pair we can tell: both files stay, every text kept
            self.files.safe_path(t).unlink()
            self.add.remove(self.prefix + t)
            self.remove.append(self.prefix + t)
            base = max(self.bases, key=lambda b: _alike(b, other), default=None)
            self.keep_both(
                partner,
                "rename/rename",
                base,
                self.only_ours[partner],
                other,
                f"renamed to {partner} here and to {t} on the other side",
            )


def _partner(theirs: str, text: bytes, ours: dict[str, bytes]) -> str | None:
    """The path ours renamed the same note to: the one with its id, else the most alike (at least
    half the same)."""
    key = _note_id(text)
    same = [o for o, t in ours.items() if key is not None and _note_id(t) == key]
    if same:
        return same[0]
    best = max(((_alike(text, t), o) for o, t in ours.items()), default=(0.0, None))
    return best[1] if best[0] >= 0.5 else None


def _alike(a: bytes, b: bytes) -> float:
    import difflib

    return difflib.SequenceMatcher(None, a, b).quick_ratio()


def _note_id(text: bytes) -> str | None:
    from ..core.note import parse_note

    try:
        note_id = parse_note(text.decode("utf-8"), "note.md").meta.get("id")
    except UnicodeDecodeError:
        return None
    return note_id if isinstance(note_id, str) else None


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- conflicts kept, and settling them -------------------------------------------------------------


def conflicts(store: IndexStore, paths: Iterable[str] | None = None) -> list[SyncConflict]:
    """The conflict copies in the vault (``paths``: its notes, when the caller has scanned them), each
    with the note it belongs to. A copy arrives through git like any note, so it is checked, not
    believed (``verified_copy``): one whose frontmatter names another file is no conflict."""
    found = []
    for rel in sorted(p for p in (store.files.scan() if paths is None else paths) if is_copy_name(p)):
        try:
            note, commit = verified_copy(store.files, rel)
        except (MdmemError, OSError):
            continue
        found.append(SyncConflict(note, "conflict", f"another version of {note} from a sync", rel, commit or None))
    return found


def verified_copy(files: Files, rel: str) -> tuple[str, str]:
    """(the note, the commit) a conflict copy belongs to, or ``MdmemError`` saying why it is none.

    The note is the one the copy's name was made from (``a.conflict-1a2b3c4.md`` beside ``a.md``), so a
    pushed copy can only ever settle the note beside it: both are plain files (no link) outside hidden
    folders, and the frontmatter must agree (``conflict_of``; a copy whose YAML is broken, as the other
    side's note was, goes by its name alone)."""
    from ..core.note import parse_note

    note = copy_original(rel)
    if note is None or not is_copy_name(rel):
        raise MdmemError(f"{rel} is not named as a conflict copy (NOTE.conflict-COMMIT.md); nothing was changed.")
    plain_file(files, rel, "conflict copy")
    plain_file(files, note, "note", missing_ok=True)
    text = files.safe_path(rel).read_text(encoding="utf-8", errors="replace")
    parsed = parse_note(text, rel)
    of = copy_of(text, rel)
    broken = any(p.field == "frontmatter" for p in parsed.problems)
    if of is None and broken:
        return note, copy_commit(rel) or ""
    if of is None or of[0] != note:
        says = f"its frontmatter says conflict_of: {of[0]!r}" if of else "its frontmatter has no conflict_of"
        raise MdmemError(
            f"{rel} is not a conflict copy mdmem sync made: its name makes it a copy of {note}, but "
            f"{says}; nothing was changed (edit or delete the file by hand)."
        )
    return note, of[1]


def plain_file(files: Files, rel: str, what: str, *, missing_ok: bool = False) -> None:
    """Refuse a path resolve must not read or write: one in ``.git/`` or ``.mdmem/`` (or, for a note, any
    hidden folder), a folder, a link (a pushed link could read ``.git/config`` into a note sync pushes,
    or write a teammate's text through it), a path that leaves the vault."""
    parts = [p.casefold() for p in rel.split("/")]
    if {".git", ".mdmem"} & set(parts) or (what != "file" and is_hidden(rel)) or rel in ("", "."):
        raise MdmemError(
            f"{rel} is in a hidden or git folder; mdmem resolve settles only notes and attachments "
            "of the vault, so nothing was changed."
        )
    path = files.root / rel
    if path.is_symlink() or (path.exists() and files.rel(files.safe_path(rel)) != rel):
        raise MdmemError(
            f"{rel} is (or lies behind) a symbolic link; mdmem resolve reads and writes only plain "
            "files of the vault, so nothing was changed (settle it by hand with git)."
        )
    if path.exists() and not path.is_file():
        raise MdmemError(f"{rel} is a folder, not a {what}; nothing was changed.")
    if not path.exists() and not missing_ok:
        raise MdmemError(
            f'There is no {what} {rel} (resolved already?); nothing to do: "mdmem status" lists the conflicts left.'
        )


def conflict_problems(store: IndexStore) -> list[Problem]:
    """``doctor``'s lines for the conflicts a sync kept and git work left unfinished."""
    from ..adapters.git import find_git_dir
    from ..adapters.gitsync import in_progress

    with store.reading() as idx:  # doctor's read, when doctor asks
        copies = idx.paths_containing(".conflict-")
    out = [
        Problem(
            c.copy or c.note,
            "conflict",
            f"another version of {c.note} kept by mdmem sync (commit {(c.commit or '?')[:10]})",
            f"keep one or both: mdmem resolve {c.note} --ours|--theirs|--both",
        )
        for c in conflicts(store, copies)
    ]
    top = find_git_dir(store.root)
    busy = in_progress(top) if top is not None else None
    if top is not None and busy is not None:
        out.append(Problem(".git", "git", f"{busy} is unfinished in the repository", _unfinished(top, busy)))
    return out


def check_side(name: str, exists: bool, copies: list[str], side: str) -> None:
    """Refuse a side that would lose the only text (``ours`` of a deleted note or file) or that does not
    say which of several copies to take (``theirs``); one line with the command that works."""
    if side == "ours" and not exists:
        raise MdmemError(
            f"{name} no longer exists, so --ours would leave nothing; keep the other version "
            f"with: mdmem resolve {copies[0]} --theirs."
        )
    if side == "theirs" and len(copies) > 1:
        raise MdmemError(
            f"{name} has {len(copies)} conflict copies ({', '.join(copies)}); name the one to "
            "keep: mdmem resolve COPY --theirs."
        )


def resolve(store: IndexStore, ref: str, side: str, *, commit: bool | None = None) -> Resolution:
    """Settle a conflict a sync kept: ``ours`` keeps the note's text, ``theirs`` takes the other
    version's, ``both`` keeps both texts in the one note; the copies go, the note is reindexed and it
    is committed. ``ref`` names the note or one of its copies."""
    if side not in SIDES:
        raise MdmemError(f"resolve takes --ours, --theirs or --both, not {side!r}.")
    if not ref.lower().endswith(".md") and (copy_original(ref) is not None or store.files.safe_path(ref).is_file()):
        return resolve_file(store, ref, side, commit=commit)
    files = store.files
    with store.writer_lock():
        named = ref if ref.lower().endswith(".md") else f"{ref}.md"
        if is_copy_name(named) and not (files.root / named).is_file():
            note = copy_original(named) or named
            raise MdmemError(
                f'There is no conflict copy {named} (resolved already?); nothing to do: "mdmem '
                f'status" lists the conflicts left, of {note} too.'
            )
        rel = store.resolve(ref)
        if is_copy_name(rel):
            note, copies = verified_copy(files, rel)[0], [rel]
        else:
            note, copies = rel, [c.copy for c in conflicts(store) if c.note == rel and c.copy]
        if not copies:
            return Resolution(note, side, False)
        plain_file(files, note, "note", missing_ok=True)
        path = files.safe_path(note)
        check_side(note, path.exists(), copies, side)
        others = []
        for c in copies:
            text = files.safe_path(c).read_text(encoding="utf-8", errors="replace")
            commit_of = verified_copy(files, c)[1][:7]
            others.append((f"synced from commit {commit_of}" if commit_of else f"from {c}", strip_copy(text, c)))
        if side == "theirs":
            store.write_note(note, others[0][1])
        elif side == "both" and path.exists():
            store.write_note(note, both_texts(path.read_text(encoding="utf-8", errors="replace"), others))
        elif side == "both":
            store.write_note(note, others[0][1])
        for c in copies:
            files.safe_path(c).unlink()
        store.update([note, *copies])
    sha = None
    if store.config.git_commit if commit is None else commit:
        sha = store.commit([note, *copies], f"mdmem: resolve conflict in {note} ({side})")
    return Resolution(note, side, True, copies, sha)


def file_conflicts(paths: Iterable[str]) -> dict[str, str]:
    """Copy → original for the conflict copies among ``paths`` (files that are not notes)."""
    return {p: o for p in paths if ".conflict-" in p.lower() and (o := copy_original(p)) is not None}


def file_copies(store: IndexStore, rel: str) -> list[str]:
    """The conflict copies a sync saved beside ``rel``, a file that is not a note (an attachment,
    ``.obsidian/`` settings): named ``a.conflict-<commit>.png``, found by their name."""
    folder = store.files.safe_path(rel).parent
    prefix = rel.rpartition("/")[0]
    if not folder.is_dir():
        return []
    names = sorted(p.name for p in folder.iterdir() if ".conflict-" in p.name.lower() and p.is_file())
    return [r for r in (f"{prefix}/{n}" if prefix else n for n in names) if copy_original(r) == rel]


def resolve_file(store: IndexStore, ref: str, side: str, *, commit: bool | None = None) -> Resolution:
    """``resolve`` for a file that is not a note: ``ours`` keeps the file, ``theirs`` puts the copy in its
    place (atomically); the copies go and the change is committed. Two versions of an image or a
    settings file cannot be kept in one, so ``both`` is refused (git's history keeps the one dropped).
    Settings in hidden folders (``.obsidian/``) are files git shares like any other; ``.git/`` and
    ``.mdmem/`` are never touched, nor anything through a link."""
    files = store.files
    with store.writer_lock():
        original = copy_original(ref) or ref
        plain_file(files, original, "file", missing_ok=True)
        if original != ref and not (files.root / ref).exists() and not (files.root / ref).is_symlink():
            raise MdmemError(
                f'There is no conflict copy {ref} (resolved already?); nothing to do: "mdmem '
                f'status" lists the conflicts left, of {original} too.'
            )
        copies = [ref] if original != ref else file_copies(store, original)
        if not copies:
            return Resolution(original, side, False)
        for c in copies:
            plain_file(files, c, "file")
        if side == "both":
            raise MdmemError(
                f"{original} is not a note, so its two versions cannot be kept in one file; keep "
                f"one: mdmem resolve {original} --ours|--theirs (git's history keeps the other)."
            )
        check_side(original, files.safe_path(original).exists(), copies, side)
        if side == "theirs":
            files.write(original, files.safe_path(copies[0]).read_bytes())
        for c in copies:
            files.safe_path(c).unlink()
    sha = None
    if store.config.git_commit if commit is None else commit:
        sha = store.commit([original, *copies], f"mdmem: resolve conflict in {original} ({side})")
    return Resolution(original, side, True, copies, sha)
