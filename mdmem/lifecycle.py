"""Lifecycle commands: pin, snooze, forget/restore, correct, history, sweep, duplicate checks.

Every change edits only the frontmatter keys it sets (comments, order and unknown keys stay),
writes the file atomically, reindexes that file and, in a git vault, commits it. Nothing is
ever deleted: forgetting and archiving are statuses.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MdmemError
from .note import set_fields

if TYPE_CHECKING:
    from .note import Note
    from .vault import Vault


@dataclass(slots=True)
class Change:
    """What a lifecycle command did to one note."""

    action: str
    id: str
    path: str
    title: str
    fields: dict[str, Any] = field(default_factory=dict)
    commit: str | None = None
    changed: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def update_note(vault: Vault, ref: str, updates: dict[str, Any], action: str, *,
                commit: bool | None = None, message: str | None = None) -> Change:
    """Set frontmatter keys of one note (None removes a key), atomically, then index and commit."""
    wanted = {k: v for k, v in updates.items() if k != "updated"}

    def edit(text: str, rel: str, note: Note) -> tuple[str, dict[str, Any]]:
        current = {k: note.meta.get(k) for k in updates}
        if all(_same(current.get(k), v) for k, v in wanted.items()):
            return text, {}
        return set_fields(text, {**updates, "updated": now_iso()}), wanted

    return edit_note(vault, ref, edit, action, commit=commit,
                     message=lambda rel, title, fields: message or f"mdmem: {action} \"{title}\"")


def edit_note(vault: Vault, ref: str, edit: Callable[[str, str, Note], tuple[str, dict[str, Any]]], action: str, *,
              commit: bool | None, message: Callable[[str, str, dict[str, Any]], str]) -> Change:
    """The one way mdmem rewrites a note: under the writer lock, refuse what it cannot read
    (non-UTF-8, broken frontmatter), ``edit(text, path, note)`` → (new text, changed fields),
    atomic write, reindex the note; then commit (``commit`` None: as mdmem.toml says)."""
    with vault.writer_lock():
        rel = vault.resolve(ref)
        raw = vault.safe_path(rel).read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MdmemError(f"{rel} is not valid UTF-8; fix its encoding before mdmem edits it.") from None
        note = vault.read_note(rel)[0]
        if any(p.field == "frontmatter" for p in note.problems):
            raise MdmemError(f"{rel} has broken frontmatter; run \"mdmem doctor\" and fix it first, "
                             "so mdmem does not write over what it cannot read.")
        new_text, fields = edit(text, rel, note)
        if new_text == text:
            return Change(action, note.id, rel, note.title, fields, None, changed=False)
        vault.write_file(rel, new_text)
        vault._update(False, None, [rel])
    sha = None
    if vault.config.git_commit if commit is None else commit:
        sha = vault.commit([rel], message(rel, note.title, fields))
    return Change(action, note.id, rel, note.title, fields, sha)


def replace_body(vault: Vault, ref: str, body: str, action: str, *, updates: dict[str, Any] | None = None,
                 commit: bool | None = None, message: str | None = None) -> Change:
    """Replace a note's body, keeping its frontmatter line for line (plus ``updates`` and ``updated``).
    For notes mdmem owns and rewrites as their source grows: session handoffs, imported day files."""
    from .note import split_frontmatter

    updates = updates or {}
    new_body = body.strip("\n") + "\n"

    def edit(text: str, rel: str, note: Note) -> tuple[str, dict[str, Any]]:
        if split_frontmatter(text)[1] == new_body and all(_same(note.meta.get(k), v) for k, v in updates.items()):
            return text, {}
        head = set_fields(text, {**updates, "updated": now_iso()})
        return head[: split_frontmatter(head)[2]] + new_body, {"body": "replaced", **updates}

    return edit_note(vault, ref, edit, action, commit=commit,
                     message=lambda rel, title, fields: message or f"mdmem: {action} \"{title}\"")


def _same(a: Any, b: Any) -> bool:
    from .note import to_iso

    if a is None or b is None:
        return a is b
    if isinstance(a, (dt.date, dt.datetime)):
        return to_iso(a) == to_iso(b)
    return bool(a == b)


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_until(until: str | None, duration: str | None, today: dt.date | None = None) -> str:
    """A snooze end from ``--until DATE`` or ``--for 30d|2w|6m|1y``."""
    from .note import to_iso

    if bool(until) == bool(duration):
        raise MdmemError("Give exactly one of --until DATE or --for DURATION (e.g. 30d, 2w, 6m).")
    if until:
        iso = to_iso(until.strip())
        if iso is None:
            raise MdmemError(f"--until must be a date like 2026-12-31, got {until!r}.")
        return iso
    m = re.fullmatch(r"\s*(\d+)\s*([dwmy])\s*", duration or "")
    if not m:
        raise MdmemError(f"--for takes a number and d, w, m or y (e.g. 30d), got {duration!r}.")
    n, unit = int(m.group(1)), m.group(2)
    days = n * {"d": 1, "w": 7, "m": 30, "y": 365}[unit]
    return ((today or dt.date.today()) + dt.timedelta(days=days)).isoformat()


# -- correct / history ---------------------------------------------------------------------------


def correct(vault: Vault, ref: str, body: str, *, title: str | None = None, commit: bool | None = None,
            **extra: Any) -> tuple[Any, Change]:
    """A successor note that ``supersedes`` the old one; the old one keeps its text, is archived
    and points to its successor."""
    old = vault.get(ref)
    if any(p.field == "frontmatter" for p in old.problems):
        raise MdmemError(f"{old.path} has broken frontmatter; fix it first (\"mdmem doctor\").")
    keep = {k: getattr(old, k) for k in ("tags", "entities", "aliases") if getattr(old, k)}
    fields: dict[str, Any] = {"tags": keep.get("tags"), "entities": keep.get("entities"),
                              "scope": old.scope if old.scope != "global" else None,
                              "salience": old.salience if "salience" in old.meta else None, **extra}
    added = vault.add(title or old.title, body, type=old.type, commit=False,
                      extra={"supersedes": old.id},
                      **{k: v for k, v in fields.items() if v is not None})
    change = update_note(vault, old.path, {"status": "archived", "superseded_by": added.id}, "correct",
                         commit=False)
    sha = None
    if vault.config.git_commit if commit is None else commit:
        sha = vault.commit([added.path, old.path], f"mdmem: correct \"{old.title}\" ({old.id} → {added.id})")
    change.commit = sha
    return added, change


def history(vault: Vault, ref: str) -> dict[str, Any]:
    """The version chain through ``ref`` (oldest first) and each file's git log."""
    from .git import file_log, find_git_dir

    start = vault.resolve(ref)
    chain = [start]
    seen = {start}
    # Walk back through "supersedes", then forward through successors.
    cur = start
    while True:
        note = vault.read_note(cur)[0]
        if not note.supersedes:
            break
        try:
            prev = vault.resolve(note.supersedes)
        except MdmemError:
            break
        if prev in seen:
            break
        chain.insert(0, prev)
        seen.add(prev)
        cur = prev
    cur = start
    while True:
        nxt = vault.catalog.superseded_by([cur]).get(cur)
        if nxt is None or nxt in seen:
            break
        chain.append(nxt)
        seen.add(nxt)
        cur = nxt
    in_git = find_git_dir(vault.root) is not None
    versions = []
    for rel in chain:
        n = vault.read_note(rel)[0]
        versions.append({
            "id": n.id, "path": rel, "title": n.title, "status": n.status, "created": n.created,
            "updated": n.updated, "supersedes": n.supersedes, "current": rel == chain[-1],
            "git_log": file_log(vault.root, vault.safe_path(rel)) if in_git else [],
        })
    return {"note": start, "versions": versions}


# -- sweep -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweepRule:
    """Archive active, unpinned notes older than ``min_age_days`` whose salience is below
    ``max_salience`` and whose type decays (decisions and preferences are never swept)."""

    min_age_days: float = 180.0
    max_salience: float = 0.3
    types: tuple[str, ...] = ("handoff", "progress", "conversation", "context", "note", "idea")


def sweep(vault: Vault, rule: SweepRule, *, apply: bool = False, commit: bool | None = None,
          now: float | None = None) -> dict[str, Any]:
    """Notes the rule would archive; with ``apply`` archive them (status only, nothing deleted)."""
    import time

    now = now if now is not None else time.time()
    cat = vault.catalog
    rows = cat.db.execute(
        "SELECT path, id, title, type, salience, date FROM notes WHERE status='active' AND pinned=0")
    picked = []
    for path, nid, title, typ, sal, date in rows:
        age = (now - date) / 86400 if date else 0.0
        if typ in rule.types and (sal if sal is not None else 0.5) < rule.max_salience and age >= rule.min_age_days:
            picked.append({"id": nid, "path": path, "title": title, "type": typ, "salience": sal,
                           "age_days": round(age)})
    picked.sort(key=lambda r: r["path"])
    done = []
    if apply and picked:
        for r in picked:
            done.append(update_note(vault, r["path"], {"status": "archived"}, "sweep", commit=False).path)
        if vault.config.git_commit if commit is None else commit:
            vault.commit(done, f"mdmem: sweep archived {len(done)} stale note(s)")
    return {"rule": asdict(rule), "applied": apply, "notes": picked, "archived": done}


# -- duplicates --------------------------------------------------------------------------------------


def duplicates(vault: Vault, title: str, body: str, *, use_vectors: bool = True) -> dict[str, Any]:
    """How a new note relates to what is there: ADD (new), UPDATE (a near duplicate exists: suggest
    correcting it) or NOOP (the same text is already there). Never merges anything itself."""
    import hashlib

    from .text import terms

    text = f"{title}\n{body}".strip()
    norm = " ".join(text.split()).casefold()
    digest = hashlib.blake2b(norm.encode(), digest_size=16).hexdigest()
    cands: list[dict[str, Any]] = []
    hits = vault.search(f"{title} {body[:500]}", limit=5)
    qset = set(terms(text))
    for h in hits:
        note = vault.read_note(h.path)[0]
        other = f"{note.title}\n{note.body}".strip()
        if hashlib.blake2b(" ".join(other.split()).casefold().encode(), digest_size=16).hexdigest() == digest:
            return {"decision": "NOOP", "reason": "the same text is already in the vault",
                    "matches": [{"id": h.id, "path": h.path, "title": h.title, "similarity": 1.0}]}
        oset = set(terms(other))
        jac = len(qset & oset) / len(qset | oset) if qset | oset else 0.0
        cands.append({"id": h.id, "path": h.path, "title": h.title, "lexical": round(jac, 3)})
    if use_vectors and cands:
        try:
            sem = vault.semantic
            emb = sem.embedder
            qv = emb.embed([text])[0]
            # Each candidate's first chunk: its cached vector when there is one, else embed it.
            firsts = {c["path"]: ch[0] for c in cands if (ch := vault.catalog.chunks_first(c["path"]))}
            cached = sem.cache.get_many(emb.fingerprint, [h for h, _ in firsts.values()], emb.dim)
            for c in cands:
                if c["path"] not in firsts:
                    continue
                h, first = firsts[c["path"]]
                vec = cached[h] if h in cached else emb.embed([first])[0]
                c["cosine"] = round(float(qv @ vec), 3)
        except MdmemError:
            pass
    near = [c for c in cands if c["lexical"] >= 0.6 or c.get("cosine", 0.0) >= 0.92]
    if near:
        best = max(near, key=lambda c: (c.get("cosine", 0.0), c["lexical"]))
        return {"decision": "UPDATE", "reason": "a near duplicate exists; consider "
                f"\"mdmem correct {best['id']}\" instead of a new note", "matches": near}
    return {"decision": "ADD", "reason": "no similar note", "matches": cands[:3]}


def add_checked(vault: Vault, title: str, body: str, *, force: bool = False, dedupe: bool = True,
                **kwargs: Any) -> tuple[dict[str, Any], Any]:
    """``add`` after the duplicate check: (check, AddResult), or (check, None) when nothing was written.

    The full check (vectors too) runs first, unlocked. The exact-text check runs again under the
    writer lock, right before the write: the same memory saved by several agents at once is
    written once (issue 7; before, each process checked, then all of them wrote).
    """
    check: dict[str, Any] = {"decision": "ADD", "reason": "not checked", "matches": []}
    if dedupe:
        done, _ = vault.catalog.coverage()
        check = duplicates(vault, title, body, use_vectors=done > 0)
        if check["decision"] == "NOOP" or (check["decision"] == "UPDATE" and not force):
            return check, None
    with vault.writer_lock():
        if dedupe:
            again = duplicates(vault, title, body, use_vectors=False)
            if again["decision"] == "NOOP":
                return again, None
        return check, vault.add(title, body, **kwargs)
