"""Lifecycle: add, pin, snooze, forget/restore, set, correct, sweep, duplicate checks.

Every change edits only the frontmatter keys it sets (comments, order and unknown keys stay),
writes the file atomically, reindexes that file and, in a git vault, commits it. Nothing is
ever deleted: forgetting and archiving are statuses.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.errors import IndexNotWritten, MdmemError, write_failure
from ..core.note import TYPES, NewNote, now_iso, render_note, set_fields
from ..results.changes import AddResult, Change, DuplicateCheck, DuplicateMatch, SweepCandidate, SweepReport, SweepRule
from . import hybrid

if TYPE_CHECKING:
    from ..core.note import Note
    from ..index.reading import IndexRead
    from ..index.semantic import Semantic
    from ..index.store import IndexStore

SCOPE = re.compile(r"^(global|(project|topic):[\w.\-/]+)$")
NEAR_WORDS = 0.6  # a near duplicate shares this much of its words (either way)


def add(
    store: IndexStore,
    title: str,
    body: str = "",
    *,
    type: str = "note",
    tags: list[str] | None = None,
    scope: str | None = None,
    salience: float | None = None,
    confidence: float | None = None,
    pinned: bool = False,
    entities: list[str] | None = None,
    aliases: list[str] | None = None,
    refs: list[str] | None = None,
    path: str | None = None,
    commit: bool | None = None,
    extra: dict[str, Any] | None = None,
) -> AddResult:
    """Write a new note atomically (with a new id), index it and, as configured, commit it."""
    title = title.strip()
    if not title:
        raise MdmemError("A note needs a title; pass --title TEXT.")
    if type not in TYPES:
        raise MdmemError(f"Unknown type {type!r}; use one of: {', '.join(sorted(TYPES))}.")
    for name, v in (("salience", salience), ("confidence", confidence)):
        if v is not None and not 0.0 <= v <= 1.0:
            raise MdmemError(f"{name} must be between 0 and 1, got {v}.")
    if scope is not None and not SCOPE.match(scope):
        raise MdmemError(f"scope must be global, project:NAME or topic:NAME, got {scope!r}.")
    from ..core.redact import redact

    if redact(" ".join([*(tags or []), scope or ""])).count:
        raise MdmemError(
            "A tag or the scope looks like a secret (a key or token); they are not the place for "
            "it. Nothing was written."
        )
    # Names are free text: a token pasted as an entity or alias is redacted like the body.
    entities = [redact(e).text for e in entities or []]
    aliases = [redact(a).text for a in aliases or []]
    refs = [redact(x).text for x in refs or []]  # a URL may carry a token (?key=…)
    now = now_iso()
    note_id = store.new_id()
    meta: dict[str, Any] = {
        "id": note_id,
        "title": title,
        "type": type,
        "salience": salience,
        "confidence": confidence,
        "pinned": True if pinned else None,
        "scope": scope,
        "tags": tags or None,
        "aliases": aliases or None,
        "entities": entities or None,
        "refs": refs or None,
        "created": now,
        "updated": now,
    }
    meta.update(extra or {})
    text = render_note(meta, body)
    with store.writer_lock():
        rel = store.place(path, title)
        store.write_note(rel, text, exclusive=True)
        with _undone_on_full_disk(store, rel, None):
            store.update([rel])
    msg = f'mdmem: add {type} "{title}"'
    sha = store.commit([rel], msg) if (store.config.git_commit if commit is None else commit) else None
    return AddResult(id=note_id, path=rel, title=title, commit=sha)


def add_many(
    store: IndexStore,
    notes: list[NewNote],
    *,
    dry_run: bool = False,
    commit: bool | None = None,
    message: Callable[[int, int], str],
    files: dict[str, bytes] | None = None,
) -> tuple[list[str], list[str], int, str | None]:
    """Write many notes under one lock, index them together and commit them in one commit
    (``message(new, updated)``), with ``files`` (vault path → bytes: attachments, written first).
    Returns (new paths, updated paths, skipped, commit); a dry run lists "(new) TITLE" for what it
    would write and writes nothing."""
    from ..core.text import slugify

    new: list[str] = []
    updated: list[str] = []
    skipped = 0
    batch: dict[str, str] = {}  # folded title → body of the notes this call writes
    written = [] if dry_run else list(files or {})
    with store.writer_lock(), store.reading() as idx:
        for rel in written:
            store.write_note(rel, (files or {})[rel])
        for n in notes:
            title = str(n.meta["title"])
            existing = idx.lookup(str(n.meta["id"]))
            if existing:
                rel = existing[0][0]
                if n.replace and not dry_run:
                    if n.body is None:
                        change = update_note(store, rel, n.updates or {}, "import", commit=False, touch=True)
                    else:
                        change = replace_body(store, rel, n.body, "import", updates=n.updates, commit=False)
                    if change.changed:
                        updated.append(rel)
                        continue
                skipped += 1
                continue
            if n.body is None:
                skipped += 1  # only an update of a note that is not there (any more)
                continue
            twin = _twin(store, idx, title, n.body, batch)
            if twin is not None:  # the same memory under the same title: two notes would make the title ambiguous
                if twin.endswith(".md") and not dry_run:
                    change = merge_into(store, twin, n.body, {"commit": False})
                    if change.changed:
                        updated.append(twin)
                        continue
                skipped += 1
                continue
            batch[" ".join(title.casefold().split())] = n.body
            if dry_run:
                new.append(f"(new) {title}")
                continue
            stem = n.name or slugify(title)
            rel, k = f"{n.folder}/{stem}.md", 2
            while store.files.safe_path(rel).exists():
                rel, k = f"{n.folder}/{stem}-{k}.md", k + 1
            store.write_note(rel, render_note(n.meta, n.body), exclusive=True)
            new.append(rel)
        if (new or written) and not dry_run:
            store.update(new + written)
    sha = None
    changed = [] if dry_run else written + new + updated
    if changed and (store.config.git_commit if commit is None else commit):
        sha = store.commit(changed, message(len(new), len(updated)))
    return new, updated, skipped, sha


def _twin(store: IndexStore, idx: IndexRead, title: str, body: str, batch: dict[str, str]) -> str | None:
    """The note a new one repeats: one with the same title and nearly its text, or one whose text holds
    all of its text; an active note's path, or the title when it is one written earlier in the same
    batch; None when there is none."""
    from ..core.text import terms

    def near(other: str) -> bool:
        a, b = set(terms(body)), set(terms(other))
        return holds(other) or (bool(a | b) and len(a & b) / len(a | b) >= NEAR_WORDS)

    words = " ".join(re.findall(r"\w+", body.casefold()))

    def holds(other: str) -> bool:  # the other note says all this one says, and not much more
        theirs = " ".join(re.findall(r"\w+", other.casefold()))
        return len(words.split()) >= 5 and words in theirs and len(words) * 2 >= len(theirs)

    folded = " ".join(title.casefold().split())
    if folded in batch:
        return title if near(batch[folded]) else None
    if any(holds(b) for b in batch.values()):
        return title
    for path, kind in idx.lookup(title):
        row = idx.row(path)
        if kind == "title" and row and row["status"] == "active" and near(store.files.read_note(path)[0].body):
            return path
    for hit in idx.search(f"{title} {body[:300]}", 3, store.filters()):  # the same text under another title
        if holds(store.files.read_note(hit.path)[0].body):
            return hit.path
    return None


def update_note(
    store: IndexStore,
    ref: str,
    updates: dict[str, Any],
    action: str,
    *,
    commit: bool | None = None,
    message: str | Callable[[str], str] | None = None,
    touch: bool = False,
) -> Change:
    """Set frontmatter keys of one note (None removes a key), atomically, then index and commit
    (``message``: the commit's, or a function of the note's title that makes it). ``updated:`` stays
    as it is unless ``touch``: a metadata edit (a pin, a snooze, an archive) is not a change of what
    the note says, and git records when it was made."""
    wanted = {k: v for k, v in updates.items() if k != "updated"}

    def edit(text: str, rel: str, note: Note) -> tuple[str, dict[str, Any]]:
        current = {k: note.meta.get(k) for k in updates}
        if all(_same(current.get(k), v) for k, v in wanted.items()):
            return text, {}
        return set_fields(text, {**updates, "updated": now_iso()} if touch else updates), wanted

    def commit_message(rel: str, title: str, fields: dict[str, Any]) -> str:
        if callable(message):
            return message(title)
        return message or f'mdmem: {action} "{title}"'

    return edit_note(store, ref, edit, action, commit=commit, message=commit_message)


def edit_note(
    store: IndexStore,
    ref: str,
    edit: Callable[[str, str, Note], tuple[str, dict[str, Any]]],
    action: str,
    *,
    commit: bool | None,
    message: Callable[[str, str, dict[str, Any]], str],
) -> Change:
    """The one way mdmem rewrites a note: under the writer lock, refuse what it cannot read
    (non-UTF-8, broken frontmatter), ``edit(text, path, note)`` → (new text, changed fields),
    atomic write, reindex the note; then commit (``commit`` None: as mdmem.toml says)."""
    with store.writer_lock():
        rel = store.resolve(ref)
        raw = store.files.safe_path(rel).read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MdmemError(f"{rel} is not valid UTF-8; fix its encoding before mdmem edits it.") from None
        note = store.files.read_note(rel)[0]
        if any(p.field == "frontmatter" for p in note.problems):
            raise MdmemError(
                f'{rel} has broken frontmatter; run "mdmem doctor" and fix it first, '
                "so mdmem does not write over what it cannot read."
            )
        new_text, fields = edit(text, rel, note)
        if new_text == text:
            return Change(action, note.id, rel, note.title, fields, None, changed=False)
        store.write_note(rel, new_text)
        with _undone_on_full_disk(store, rel, raw):
            store.update([rel])
    sha = None
    if store.config.git_commit if commit is None else commit:
        sha = store.commit([rel], message(rel, note.title, fields))
    return Change(action, note.id, rel, note.title, fields, sha)


@contextmanager
def _undone_on_full_disk(store: IndexStore, rel: str, before: bytes | None) -> Iterator[None]:
    """Around the indexing of a note just written: when the disk refuses the index's write, the note is put
    back as it was (``before``; None: a new note, removed), so a failed command leaves the files as they
    were and its message ("Notes on disk are untouched") is true. A note that cannot be put back is named."""
    try:
        yield
    except Exception as exc:
        err = exc if isinstance(exc, IndexNotWritten) else write_failure(exc, store.root)
        if err is None:
            raise
        try:
            if before is None:
                store.files.safe_path(rel).unlink(missing_ok=True)
            else:
                store.files.write(rel, before)
        except OSError:
            raise IndexNotWritten(
                f"{store.files.safe_path(rel)} is written but not indexed or committed: the disk refused the "
                'index\'s write. Free some space and run "mdmem reindex" (then commit it).'
            ) from exc
        if err is exc:
            raise
        raise err from exc


def replace_body(
    store: IndexStore,
    ref: str,
    body: str,
    action: str,
    *,
    updates: dict[str, Any] | None = None,
    commit: bool | None = None,
    message: str | None = None,
) -> Change:
    """Replace a note's body, keeping its frontmatter line for line (plus ``updates`` and ``updated``).
    For notes mdmem owns and rewrites as their source grows: session handoffs, imported day files."""
    from ..core.note import split_frontmatter

    updates = updates or {}
    new_body = body.strip("\n") + "\n"

    def edit(text: str, rel: str, note: Note) -> tuple[str, dict[str, Any]]:
        if split_frontmatter(text)[1] == new_body and all(_same(note.meta.get(k), v) for k, v in updates.items()):
            return text, {}
        head = set_fields(text, {**updates, "updated": now_iso()})
        return head[: split_frontmatter(head)[2]] + new_body, {"body": "replaced", **updates}

    return edit_note(
        store,
        ref,
        edit,
        action,
        commit=commit,
        message=lambda rel, title, fields: message or f'mdmem: {action} "{title}"',
    )


def _same(a: Any, b: Any) -> bool:
    from ..core.note import to_iso

    if a is None or b is None:
        return a is b
    if isinstance(a, (dt.date, dt.datetime)):
        return to_iso(a) == to_iso(b)
    return bool(a == b)


# -- set ---------------------------------------------------------------------------------------------

ALLOWED = {  # what each settable key takes, as the one-line error says it
    "salience": "a number from 0 to 1 (0.8+ critical, 0.5 ordinary, 0.3 minor)",
    "confidence": "a number from 0 to 1",
    "pinned": "true or false",
    "type": "one of " + ", ".join(sorted(TYPES)),
    "tags": "tags separated by commas (letters, digits, _ - /), e.g. tags=payments,infra",
    "scope": "global, project:NAME or topic:NAME",
    "valid_from": "a date, YYYY-MM-DD (or an ISO datetime)",
    "valid_until": "a date, YYYY-MM-DD (or an ISO datetime)",
}
TAG = re.compile(r"^[\w/\-]+$")


def check_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The frontmatter updates ``set`` writes for ``values`` (key → value; None or "" removes the key),
    each checked and made the type the note format reads. A bad key or value raises ``BadValue``
    naming the key and what it takes, before anything is written."""
    from ..core.errors import BadValue
    from ..core.note import to_iso
    from ..core.redact import redact
    from ..core.schema import SETTABLE

    if not values:
        raise BadValue("Name what to set as KEY=VALUE, e.g. salience=0.8; keys: " + ", ".join(SETTABLE) + ".")
    out: dict[str, Any] = {}
    for key, raw in values.items():
        if key not in SETTABLE:
            raise BadValue(
                f"{key!r} is not a key mdmem set edits; it edits {', '.join(SETTABLE)} "
                "(other keys: edit the file). Nothing was changed."
            )

        def bad(key: str = key, raw: Any = raw) -> BadValue:
            return BadValue(f"{key} takes {ALLOWED[key]}; got {raw!r}. Nothing was changed.")

        value = raw.strip() if isinstance(raw, str) else raw
        if value is None or value == "" or value == []:
            if key == "type":
                raise BadValue(
                    "type cannot be removed (a note without one is a plain note); set type=note. Nothing was changed."
                )
            out[key] = None
        elif key in ("salience", "confidence"):
            try:
                num = float(value) if not isinstance(value, bool) else None
            except (TypeError, ValueError):
                num = None
            if num is None or not 0.0 <= num <= 1.0:
                raise bad()
            out[key] = num
        elif key == "pinned":
            flag = (
                {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(str(value).lower())
                if not isinstance(value, bool)
                else value
            )
            if flag is None:
                raise bad()
            out[key] = True if flag else None  # as unpin does: an unpinned note has no pinned key
        elif key == "type":
            if str(value).lower() not in TYPES:
                raise bad()
            out[key] = str(value).lower()
        elif key == "tags":
            tags = [str(t).strip().lstrip("#") for t in (value.split(",") if isinstance(value, str) else value)]
            tags = [t for t in tags if t]
            if not tags or not all(TAG.match(t) for t in tags):
                raise bad()
            if redact(" ".join(tags)).count:
                raise BadValue(
                    "tags: a tag looks like a secret (a key or token); tags are not the place for "
                    "it. Nothing was changed."
                )
            out[key] = list(dict.fromkeys(tags))
        elif key == "scope":
            if not SCOPE.match(str(value)):
                raise bad()
            out[key] = str(value)
        else:  # valid_from, valid_until
            iso = to_iso(value)
            if iso is None:
                raise bad()
            out[key] = iso
    start, end = out.get("valid_from"), out.get("valid_until")
    if start and end and start[:10] > end[:10]:
        raise BadValue(f"valid_from ({start}) is after valid_until ({end}); swap them. Nothing was changed.")
    return out


def set_keys(store: IndexStore, ref: str, values: dict[str, Any], *, commit: bool | None = None) -> Change:
    """Set (or remove) the frontmatter keys ``values`` names (``check_settings``), only those, in one
    atomic write, reindex and commit; ``updated:`` stays as it was (git records when)."""
    updates = check_settings(values)
    keys = ", ".join(updates)
    return update_note(
        store, ref, updates, "set", commit=commit, message=lambda title: f'mdmem: set {keys} of "{title}"'
    )


# -- correct ---------------------------------------------------------------------------------


def correct(
    store: IndexStore, ref: str, body: str, *, title: str | None = None, commit: bool | None = None, **extra: Any
) -> tuple[AddResult, Change]:
    """A successor note that ``supersedes`` the old one; the old one keeps its text, is archived
    and points to its successor."""
    old = store.get(ref)
    if any(p.field == "frontmatter" for p in old.problems):
        raise MdmemError(f'{old.path} has broken frontmatter; fix it first ("mdmem doctor").')
    keep = {k: getattr(old, k) for k in ("tags", "entities", "aliases") if getattr(old, k)}
    fields: dict[str, Any] = {
        "tags": keep.get("tags"),
        "entities": keep.get("entities"),
        "scope": old.scope if old.scope != "global" else None,
        "salience": old.salience if "salience" in old.meta else None,
        **extra,
    }
    added = add(
        store,
        title or old.title,
        body,
        type=old.type,
        commit=False,
        extra={"supersedes": old.id},
        **{k: v for k, v in fields.items() if v is not None},
    )
    change = update_note(store, old.path, {"status": "archived", "superseded_by": added.id}, "correct", commit=False)
    sha = None
    if store.config.git_commit if commit is None else commit:
        sha = store.commit([added.path, old.path], f'mdmem: correct "{old.title}" ({old.id} → {added.id})')
    return added, replace(change, commit=sha)


# -- sweep -----------------------------------------------------------------------------------------


def sweep(
    store: IndexStore, rule: SweepRule, *, apply: bool = False, commit: bool | None = None, now: float | None = None
) -> SweepReport:
    """Notes the rule would archive; with ``apply`` archive them (status only, nothing deleted)."""
    import time

    now = now if now is not None else time.time()
    with store.reading() as idx:
        active = idx.unpinned_active()
    picked = []
    for path, nid, title, typ, sal, date in active:
        age = (now - date) / 86400 if date else 0.0
        if typ in rule.types and (sal if sal is not None else 0.5) < rule.max_salience and age >= rule.min_age_days:
            picked.append(SweepCandidate(nid, path, title, typ, sal, round(age)))
    picked.sort(key=lambda r: r.path)
    done = []
    if apply and picked:
        for r in picked:
            done.append(update_note(store, r.path, {"status": "archived"}, "sweep", commit=False).path)
        if store.config.git_commit if commit is None else commit:
            store.commit(done, f"mdmem: sweep archived {len(done)} stale note(s)")
    return SweepReport(rule, apply, picked, done)


# -- duplicates --------------------------------------------------------------------------------------


def duplicates(
    store: IndexStore,
    sem: Semantic,
    title: str,
    body: str,
    *,
    use_vectors: bool = True,
    type: str | None = None,
    entities: list[str] | None = None,
) -> DuplicateCheck:
    """How a new note relates to what is there: ADD (new), UPDATE (a near duplicate exists: its text
    is merged into it) or NOOP (the same text is already there). With ``type``, an active note of that
    type on the same subject that says otherwise is reported in ``contradicts`` (``core.disagree``),
    and is not merged into. Never writes anything itself."""
    import hashlib

    from ..core.disagree import disagreement, subject
    from ..core.text import terms

    with store.reading() as idx:
        text = f"{title}\n{body}".strip()
        norm = " ".join(text.split()).casefold()
        digest = hashlib.blake2b(norm.encode(), digest_size=16).hexdigest()
        cands: list[dict[str, Any]] = []
        hits = hybrid.search(store, f"{title} {body[:500]}", 5, store.filters())
        qset = set(terms(text))
        notes: dict[str, Note] = {}
        for h in hits:
            note = notes[h.path] = store.files.read_note(h.path)[0]
            other = f"{note.title}\n{note.body}".strip()
            if hashlib.blake2b(" ".join(other.split()).casefold().encode(), digest_size=16).hexdigest() == digest:
                return DuplicateCheck(
                    "NOOP",
                    "the same text is already in the vault",
                    [DuplicateMatch(h.id, h.path, h.title, similarity=1.0)],
                )
            oset = set(terms(other))
            jac = len(qset & oset) / len(qset | oset) if qset | oset else 0.0
            cands.append({"id": h.id, "path": h.path, "title": h.title, "lexical": round(jac, 3)})
        if use_vectors and cands:
            try:
                emb = sem.embedder
                qv = emb.embed([text])[0]
                # Each candidate's first chunk: its cached vector when there is one, else embed it.
                firsts = {c["path"]: ch[0] for c in cands if (ch := idx.chunks_first(c["path"]))}
                cached = sem.cache.get_many(emb.fingerprint, [digest for digest, _ in firsts.values()], emb.dim)
                for c in cands:
                    if c["path"] not in firsts:
                        continue
                    digest, first = firsts[c["path"]]
                    vec = cached[digest] if digest in cached else emb.embed([first])[0]
                    c["cosine"] = round(float(qv @ vec), 3)
            except MdmemError:
                pass
        against: list[DuplicateMatch] = []
        for c in cands if type else ():
            n = notes[c["path"]]
            if n.type != type or n.status != "active":
                continue
            mine, theirs = (title, entities or [], text), (n.title, n.entities, f"{n.title}\n{n.body}")
            about = subject(mine, theirs, c.get("cosine"))
            differ = disagreement(f"{title}. {body}", f"{n.title}. {n.body}") if about else []
            if differ:
                against.append(DuplicateMatch(**c, evidence=[*about, *differ]))
        contra = {m.path for m in against}
        near = [
            c for c in cands if c["path"] not in contra and (c["lexical"] >= NEAR_WORDS or c.get("cosine", 0.0) >= 0.92)
        ]
        if near:
            best = max(near, key=lambda c: (c.get("cosine", 0.0), c["lexical"]))
            return DuplicateCheck(
                "UPDATE",
                f"a near duplicate exists: {best['title']} (id {best['id']})",
                [DuplicateMatch(**c) for c in near],
                against,
            )
        reason = "it may contradict an active note" if against else "no similar note"
        return DuplicateCheck("ADD", reason, [DuplicateMatch(**c) for c in cands[:3]], against)


def add_checked(
    store: IndexStore,
    sem: Semantic,
    title: str,
    body: str,
    *,
    force: bool = False,
    dedupe: bool = True,
    supersedes: str | None = None,
    **kwargs: Any,
) -> tuple[DuplicateCheck, AddResult | Change | None]:
    """``add`` after the duplicate check: (check, AddResult); (check, Change) when a near duplicate
    (UPDATE, unless ``force``) took the new text (``merge_into``); (check, None) when nothing was
    written. ``supersedes``: the note the new one replaces (archived, pointing to it; one commit).

    The full check (vectors too) runs first, unlocked. The exact-text check runs again under the
    writer lock, right before the write: the same memory saved by several agents at once is
    written once (before, each process checked, then all of them wrote).
    """
    check = DuplicateCheck("ADD", "not checked")
    old = store.get(supersedes) if supersedes else None  # a wrong name is refused before anything is written
    seen: tuple[str, str | None] | None = None  # the index the full check read (generation, rows)
    if dedupe:
        with store.reading() as idx:
            done, _ = idx.coverage()
            seen = (store.generation, idx.rows_token())
            check = duplicates(
                store,
                sem,
                title,
                body,
                use_vectors=done > 0,
                type=kwargs.get("type", "note"),
                entities=kwargs.get("entities"),
            )
        if old is not None:  # what it replaces is neither a contradiction nor a note to merge into
            check = replace(
                check,
                decision="ADD" if check.decision == "UPDATE" else check.decision,
                matches=[m for m in check.matches if m.path != old.path],
                contradicts=[m for m in check.contradicts if m.path != old.path],
            )
        if check.decision == "NOOP":
            return check, None
        if check.decision == "UPDATE" and not force:
            return check, merge_into(store, check.matches[0].path, body, kwargs)
    with store.writer_lock():
        if dedupe and not unchanged_since(store, seen):
            again = duplicates(store, sem, title, body, use_vectors=False)
            if again.decision == "NOOP":
                return again, None
        if old is None:
            return check, add(store, title, body, **kwargs)
        commit = kwargs.pop("commit", None)
        extra = {**(kwargs.pop("extra", None) or {}), "supersedes": old.id}
        added = add(store, title, body, commit=False, extra=extra, **kwargs)
        update_note(store, old.path, {"status": "archived", "superseded_by": added.id}, "supersede", commit=False)
    sha = None
    if store.config.git_commit if commit is None else commit:
        sha = store.commit([added.path, old.path], f'mdmem: add {added.title!r}, superseding "{old.title}"')
    return check, replace(added, commit=sha)


def unchanged_since(store: IndexStore, seen: tuple[str, str | None] | None) -> bool:
    """Whether no note was indexed since the full check read the index (``seen``): its exact-text
    check then holds under the writer lock too, and a second search would find the same notes."""
    if seen is None or seen[1] is None:
        return False
    with store.reading(notice=False) as idx:
        return (store.generation, idx.rows_token()) == seen


def merge_into(store: IndexStore, ref: str, body: str, fields: dict[str, Any]) -> Change:
    """A near duplicate's text goes into the note it repeats: the body grows by the new text (or becomes
    it, when the new text holds the old one whole), new tags and entities are added; one commit, the
    old text in git. Nothing changes when the note holds the new text already."""
    from ..core.note import split_frontmatter

    def norm(t: str) -> str:  # words only: "three days." is held by "three days, then …"
        return " ".join(re.findall(r"\w+", t.casefold()))

    def edit(text: str, rel: str, note: Note) -> tuple[str, dict[str, Any]]:
        old = split_frontmatter(text)[1].strip("\n")
        new = body.strip("\n")
        if not new or norm(new) in norm(old):
            merged = old
        elif norm(old) in norm(new):
            merged = new
        else:
            merged = f"{old}\n\n{new}"
        updates: dict[str, Any] = {}
        for key in ("tags", "entities"):
            have = [str(x) for x in note.meta.get(key) or []] if isinstance(note.meta.get(key), list) else []
            more = [x for x in fields.get(key) or [] if x not in have]
            if more:
                updates[key] = have + more
        if merged == old and not updates:
            return text, {}
        head = set_fields(text, {**updates, "updated": now_iso()})
        return head[: split_frontmatter(head)[2]] + merged + "\n", {"body": "merged", **updates}

    return edit_note(
        store,
        ref,
        edit,
        "update",
        commit=fields.get("commit"),
        message=lambda rel, title, changed: f'mdmem: update "{title}" with a near-duplicate note\'s text',
    )
