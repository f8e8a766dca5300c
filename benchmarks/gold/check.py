#!/usr/bin/env python3
"""Validate the retrieval gold set: the vault in ./vault and the graded queries in ./queries.yaml.

Checks
  notes    every note has frontmatter with a unique `id`, a known `type`/`status`, parseable dates,
           0..1 salience/confidence; every `links[].to`, `supersedes` and body [[wikilink]] resolves;
           a superseded note is archived.
  queries  unique ids, known kinds, grades 1..3, every relevant/excluded id exists, no id is both
           relevant and excluded, `noanswer` has no relevant notes, `lifecycle` lists `excluded`;
           at the file's `as_of` date every excluded note is hidden by default (forgotten, archived,
           snoozed, expired, superseded) and every relevant note is visible.
Prints counts per kind, the notes whose visibility depends on the date, and (with -v) the content words
each paraphrase query shares with its grade-3 notes. Exit status 1 on any error.

Usage: python benchmarks/gold/check.py [-v] [--as-of YYYY-MM-DD] [--paths] [--vault DIR] [--queries FILE]
Needs only the standard library and PyYAML.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
VAULT = HERE / "vault"
QUERIES = HERE / "queries.yaml"

TYPES = {
    "decision",
    "preference",
    "fact",
    "context",
    "idea",
    "feedback",
    "domain",
    "problem",
    "milestone",
    "research",
    "project",
    "progress",
    "handoff",
    "conversation",
    "antipattern",
    "hub",
    "note",
}
STATUSES = {"active", "archived", "forgotten"}
KINDS = {
    "exact",
    "keyword",
    "paraphrase",
    "multilingual",
    "noanswer",
    "why",
    "entity",
    "recent",
    "lifecycle",
    "temporal",
    "typo",
    "multi",
}
MIN_PER_KIND = 8
DATE_KEYS = ("created", "updated", "authored", "valid_from", "valid_until", "snoozed_until")
EXCLUDED_FILES = {"README.md", "AGENTS.md"}
FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
MDLINK = re.compile(r"\]\(([^)\s]+\.md)\)")
STOPWORDS = set(
    """
a an and are as at be before being but by can did do does for from had has have how i if in into is it its
me my no not of on or our so than that the their them then there these they this to up was we were what
when where which while who whose why will with without you your
""".split()
)

errors: list[str] = []
warnings: list[str] = []


def err(msg: str) -> None:
    errors.append(msg)


def as_date(value) -> dt.date | None:
    """A YAML date/datetime/ISO string as a date; None if absent. Raises ValueError if unparseable."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip().replace("Z", "+00:00")
    try:
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        return dt.date.fromisoformat(text)


class Note:
    def __init__(self, path: Path, meta: dict, body: str):
        self.path = path
        self.rel = path.relative_to(VAULT).as_posix()
        self.meta = meta
        self.body = body
        self.id = str(meta.get("id", "")).strip()
        self.title = str(meta.get("title") or path.stem)
        self.status = meta.get("status", "active")
        self.dates: dict[str, dt.date | None] = {}
        for key in DATE_KEYS:
            try:
                self.dates[key] = as_date(meta.get(key))
            except (TypeError, ValueError):
                err(f"{self.rel}: field {key!r} is not a date: {meta.get(key)!r}")
                self.dates[key] = None

    def hidden_reason(self, today: dt.date, superseded: set[str]) -> str | None:
        """Why default retrieval hides this note on `today`, or None if it is visible."""
        if self.status in ("forgotten", "archived"):
            return self.status
        snooze = self.dates.get("snoozed_until")
        if snooze and snooze > today:
            return f"snoozed until {snooze}"
        until = self.dates.get("valid_until")
        if until and until < today:
            return f"expired {until}"
        start = self.dates.get("valid_from")
        if start and start > today:
            return f"not valid before {start}"
        if self.id in superseded:
            return "superseded"
        return None


def load_notes() -> list[Note]:
    notes = []
    for path in sorted(VAULT.rglob("*.md")):
        rel = path.relative_to(VAULT)
        if any(part.startswith(".") for part in rel.parts) or rel.as_posix() in EXCLUDED_FILES:
            continue
        text = path.read_text(encoding="utf-8")
        match = FRONTMATTER.match(text)
        if not match:
            err(f"{rel}: no YAML frontmatter (gold notes need an id)")
            continue
        try:
            meta = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError as exc:
            err(f"{rel}: frontmatter is not valid YAML: {exc}")
            continue
        if not isinstance(meta, dict):
            err(f"{rel}: frontmatter is not a mapping")
            continue
        notes.append(Note(path, meta, text[match.end() :]))
    return notes


def check_notes(notes: list[Note]) -> tuple[dict[str, Note], set[str]]:
    by_id: dict[str, Note] = {}
    for note in notes:
        if not note.id:
            err(f"{note.rel}: missing id")
        elif note.id in by_id:
            err(f"{note.rel}: duplicate id {note.id} (also {by_id[note.id].rel})")
        else:
            by_id[note.id] = note

    # every way a note can be referred to: id, path with/without .md, stem, title, alias
    names: dict[str, set[str]] = {}

    def add_name(name: str, note_id: str) -> None:
        names.setdefault(name.strip().lower(), set()).add(note_id)

    for note in by_id.values():
        add_name(note.id, note.id)
        add_name(note.rel, note.id)
        add_name(note.rel[:-3], note.id)
        add_name(note.path.stem, note.id)
        add_name(note.title, note.id)
        aliases = note.meta.get("aliases") or []
        for alias in aliases if isinstance(aliases, list) else [aliases]:
            add_name(str(alias), note.id)

    def resolve(ref: str, where: str) -> str | None:
        key = ref.strip()
        if key.startswith("[[") and key.endswith("]]"):
            key = key[2:-2].split("|")[0].split("#")[0]
        hits = names.get(key.strip().lower(), set())
        if not hits:
            err(f"{where}: link target {ref!r} does not resolve")
            return None
        if len(hits) > 1:
            err(f"{where}: link target {ref!r} is ambiguous: {sorted(hits)}")
            return None
        return next(iter(hits))

    superseded: set[str] = set()
    for note in by_id.values():
        meta, where = note.meta, note.rel
        ntype = meta.get("type", "note")
        if ntype not in TYPES:
            err(f"{where}: unknown type {ntype!r}")
        if note.status not in STATUSES:
            err(f"{where}: unknown status {note.status!r}")
        for key in ("salience", "confidence"):
            if key in meta and not (isinstance(meta[key], (int, float)) and 0 <= meta[key] <= 1):
                err(f"{where}: {key} must be a number in 0..1, got {meta[key]!r}")
        if "pinned" in meta and not isinstance(meta["pinned"], bool):
            err(f"{where}: pinned must be true/false")
        scope = str(meta.get("scope", "global"))
        if not (scope == "global" or re.fullmatch(r"(project|topic):[\w.-]+", scope)):
            err(f"{where}: bad scope {scope!r}")
        if not note.dates.get("created"):
            warnings.append(f"{where}: no created date")
        for key in ("tags", "aliases", "entities"):
            if key in meta and not isinstance(meta[key], list):
                err(f"{where}: {key} must be a list")
        links = meta.get("links") or []
        if not isinstance(links, list):
            err(f"{where}: links must be a list")
            links = []
        for link in links:
            if not isinstance(link, dict) or "to" not in link:
                err(f"{where}: link without `to`: {link!r}")
                continue
            resolve(str(link["to"]), where)
        if "supersedes" in meta:
            old = resolve(str(meta["supersedes"]), where)
            if old:
                superseded.add(old)
                if by_id[old].status != "archived":
                    err(f"{where}: supersedes {old}, which should be status: archived")
        for target in WIKILINK.findall(note.body):
            resolve(target, f"{where} (body)")
        for target in MDLINK.findall(note.body):
            if not (note.path.parent / target).resolve().is_file():
                err(f"{where}: markdown link {target!r} does not resolve")
    return by_id, superseded


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return {w for w in words if len(w) > 2 and w not in STOPWORDS}


def check_queries(by_id: dict[str, Note], superseded: set[str], as_of_arg: str | None, verbose: bool):
    data = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        err("queries.yaml: expected a mapping with a `queries` list")
        return Counter(), None
    as_of = as_date(as_of_arg or data.get("as_of") or dt.date.today().isoformat())
    kinds: Counter[str] = Counter()
    seen: set[str] = set()
    date_sensitive: dict[str, list[str]] = {}
    for i, q in enumerate(data["queries"]):
        qid = q.get("id") if isinstance(q, dict) else None
        where = f"queries.yaml: {qid or f'#{i}'}"
        if not qid:
            err(f"{where}: missing id")
            continue
        if qid in seen:
            err(f"{where}: duplicate query id")
        seen.add(qid)
        for key in ("query", "kind", "relevant", "notes"):
            if key not in q:
                err(f"{where}: missing {key!r}")
        if not str(q.get("query", "")).strip():
            err(f"{where}: empty query")
        kind = q.get("kind")
        if kind not in KINDS:
            err(f"{where}: unknown kind {kind!r}")
        kinds[kind] += 1
        relevant = q.get("relevant") or {}
        excluded = q.get("excluded") or []
        if not isinstance(relevant, dict):
            err(f"{where}: relevant must be a mapping note_id -> grade")
            relevant = {}
        if not isinstance(excluded, list):
            err(f"{where}: excluded must be a list")
            excluded = []
        for nid, grade in relevant.items():
            if nid not in by_id:
                err(f"{where}: relevant id {nid} is not in the vault")
                continue
            if grade not in (1, 2, 3):
                err(f"{where}: grade for {nid} must be 1, 2 or 3, got {grade!r}")
                continue
            hidden = by_id[nid].hidden_reason(as_of, superseded)
            if hidden:
                err(
                    f"{where}: {nid} is relevant but hidden by default on {as_of} ({hidden}); "
                    "list it in `excluded` instead"
                )
        for nid in excluded:
            if nid not in by_id:
                err(f"{where}: excluded id {nid} is not in the vault")
                continue
            if nid in relevant:
                err(f"{where}: {nid} is both relevant and excluded")
            if not by_id[nid].hidden_reason(as_of, superseded):
                err(f"{where}: excluded {nid} is visible by default on {as_of}")
        if kind == "noanswer" and relevant:
            err(f"{where}: a noanswer query must have relevant: {{}}")
        if kind != "noanswer" and not relevant and kind != "lifecycle":
            err(f"{where}: no relevant notes (use kind noanswer)")
        if kind == "lifecycle" and not excluded:
            err(f"{where}: a lifecycle query must list the hidden notes in `excluded`")
        if kind in ("recent", "why", "lifecycle") and relevant and 3 not in relevant.values():
            err(f"{where}: a {kind} query needs a grade-3 answer")
        for nid in list(relevant) + list(excluded):
            note = by_id.get(nid)
            if not note:
                continue
            for key in ("snoozed_until", "valid_until", "valid_from"):
                day = note.dates.get(key)
                if day and day >= as_of:
                    date_sensitive.setdefault(f"{nid} {key}={day}", []).append(qid)
        if verbose and kind == "paraphrase":
            qwords = content_words(str(q.get("query", "")))
            for nid, grade in relevant.items():
                if grade == 3 and nid in by_id:
                    note = by_id[nid]
                    shared = qwords & content_words(note.title + " " + note.body)
                    print(f"  paraphrase {qid} ~ {nid}: shared content words {sorted(shared) or '-'}")
    return kinds, (as_of, date_sensitive)


def main() -> int:
    global VAULT, QUERIES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="report paraphrase word overlap")
    parser.add_argument("--as-of", help="override the as_of date of queries.yaml (YYYY-MM-DD)")
    parser.add_argument("--vault", type=Path, default=VAULT, help="vault folder (default: ./vault)")
    parser.add_argument("--queries", type=Path, default=QUERIES, help="queries file (default: ./queries.yaml)")
    parser.add_argument("--paths", action="store_true", help="print `id<TAB>vault-relative path` and exit")
    args = parser.parse_args()
    VAULT, QUERIES = args.vault.resolve(), args.queries.resolve()

    notes = load_notes()
    by_id, superseded = check_notes(notes)
    if args.paths:
        for note_id, note in sorted(by_id.items()):
            print(f"{note_id}\t{note.rel}")
        return 1 if errors else 0
    kinds, extra = check_queries(by_id, superseded, args.as_of, args.verbose)

    print(f"notes: {len(by_id)}")
    statuses = Counter(n.status for n in by_id.values())
    print("  by status: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    scopes = Counter(str(n.meta.get("scope", "global")) for n in by_id.values())
    print("  by scope:  " + ", ".join(f"{k} {v}" for k, v in sorted(scopes.items())))
    langs = Counter(str(n.meta.get("lang", "en")) for n in by_id.values())
    print("  by lang:   " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))
    print(f"queries: {sum(kinds.values())}")
    for kind in sorted(KINDS):
        flag = "" if kinds[kind] >= MIN_PER_KIND else f"   (< {MIN_PER_KIND})"
        print(f"  {kind:<13} {kinds[kind]}{flag}")
        if kinds[kind] < MIN_PER_KIND:
            err(f"kind {kind} has only {kinds[kind]} queries (need {MIN_PER_KIND})")
    if extra:
        as_of, sensitive = extra
        print(f"as_of: {as_of}")
        if sensitive:
            print("date-sensitive (grades change once these dates pass):")
            for key, qids in sorted(sensitive.items()):
                print(f"  {key}: {', '.join(qids)}")
    for w in warnings:
        print(f"warning: {w}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    print("OK" if not errors else f"FAILED: {len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
