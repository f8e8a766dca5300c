"""The command table's rows that keep notes and the vault: get, pin, unpin, snooze, forget, restore, set,
link, identity, unlink, history, diff, show, sweep, status (of each vault of a set), doctor, and the review
queue (review, dismiss, supersede)."""

from __future__ import annotations

from typing import Any

from .table import COMMIT, NOTE, Command, Param, flag, limit, vaults_params, words


def _pin(v: Any, note: str, pinned: bool = True, commit: bool | None = None) -> Any:
    return v.pin(note, pinned, commit=commit)


def _unpin(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.pin(note, False, commit=commit)


def _snooze(
    v: Any, note: str, until: str | None, duration: str | None, days: int | None = None, commit: bool | None = None
) -> Any:
    from ..core.memory import parse_until

    return v.snooze(note, parse_until(until, duration or (f"{days}d" if days else None)), commit=commit)


def _set(
    v: Any,
    note: str,
    assignments: tuple[str, ...] = (),
    commit: bool | None = None,
    remove: tuple[str, ...] = (),
    **keys: Any,
) -> Any:
    """``set``: the command line's KEY=VALUE words (KEY= removes), or the tool's typed keys and ``remove``."""
    from ..core.errors import BadValue

    values: dict[str, Any] = {k: list(x) if isinstance(x, tuple) else x for k, x in keys.items() if x not in (None, ())}
    for item in assignments:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise BadValue(f"{item!r} is not KEY=VALUE; write e.g. salience=0.8 (or salience= to remove it).")
        values[key.strip()] = value
    values.update({k: None for k in remove})
    return v.set(note, values, commit=commit)


def _show(v: Any, note_at: str | None = None, note: str | None = None, rev: str | None = None) -> Any:
    if note_at is not None:  # the command line's NOTE@REV
        from ..core.errors import MdmemError

        note, at, rev = note_at.rpartition("@")
        if not at or not note or not rev:
            raise MdmemError(
                f'Name a revision: mdmem show "{note_at}@HEAD~1" ("mdmem history {note_at}" lists the note\'s commits).'
            )
    assert note is not None and rev is not None
    return v.show(note, rev)


def _get(v: Any, note: str, max_chars: int | None = None) -> Any:
    return v.read(note, max_chars)


def _note_fields(whole: Any) -> Any:
    from dataclasses import replace

    return replace(whole.note, warnings=whole.warnings)


def _forget(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.forget(note, commit=commit)


def _restore(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.restore(note, commit=commit)


def _link(
    v: Any, source: str, target: str, type: str, reason: str | None, entity: bool = False, commit: bool | None = None
) -> Any:
    return v.link(source, target, type, reason, entity=entity, commit=commit)


def _identity(
    v: Any,
    person: str,
    email: tuple[str, ...] = (),
    handle: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
    remove: tuple[str, ...] = (),
    commit: bool | None = None,
) -> Any:
    from ..core.refs import identities_given

    return v.identity(person, identities_given(list(email), list(handle), list(names)), list(remove), commit=commit)


def _unlink(v: Any, source: str, target: str, type: str | None, commit: bool | None = None) -> Any:
    return v.unlink(source, target, type, commit=commit)


def _history(v: Any, note: str, limit: int, all: bool, diff: bool) -> Any:
    return v.history(note, None if all else limit, diff=diff)


def _diff(v: Any, note: str, rev: str | None) -> Any:
    return v.diff(note, rev)


def _sweep(v: Any, apply: bool, min_age: float, max_salience: float, commit: bool | None = None) -> Any:
    return v.sweep(min_age_days=min_age, max_salience=max_salience, apply=apply, commit=commit)


def _status(r: Any) -> Any:
    return r.status()


def _doctor(v: Any) -> Any:
    return v.doctor()


def _review(v: Any, limit: int, scan: int = 200) -> Any:
    return v.review(limit, scan=scan)


def _dismiss(v: Any, keys: tuple[str, ...] | list[str], commit: bool | None = None) -> Any:
    return v.dismiss(list(keys), commit=commit)


def _supersede(v: Any, new: str, old: tuple[str, ...] | list[str], commit: bool | None = None) -> Any:
    return v.supersede(new, list(old), commit=commit)


def tool_key(name: str, about: str, type: type = str, many: bool = False) -> Param:
    """A frontmatter key ``set`` writes, as the tool takes it (the command line writes KEY=VALUE)."""
    low, high = (0, 1) if type is float else (None, None)
    return Param(name, about, type=type, default=() if many else None, many=many, on="mcp", low=low, high=high)


SOURCE = Param("source", "The note the link goes from (id, path, title).", kind="note", metavar="A")
TARGET = Param("target", "The note it points to.", kind="note", metavar="B")

ROWS: tuple[Command, ...] = (
    Command(
        "get",
        _get,
        help="""Show NOTE, named by id, path, file name, title or alias; NAME:ID (an id from an answer across
    vaults) is the note ID of the registered vault NAME.""",
        about="""The whole note — frontmatter and body as in the file — by id, path, file name, title or alias.
        Use after recall/search when the key line is not enough.""",
        params=(
            NOTE,
            Param(
                "meta",
                "Show the parsed fields instead of the file (created/updated as the index "
                "dates the note, and where each came from: frontmatter, git or mtime).",
                type=bool,
                default=False,
                on="render",
            ),
            Param(
                "max_chars",
                "Cut the note after this many characters.",
                type=int,
                default=12_000,
                low=200,
                high=200_000,
                on="mcp",  # the command line shows the whole file
            ),
        ),
        cli_json=_note_fields,  # the fields; the text shows the file
    ),
    Command(
        "pin",
        _pin,
        help="Pin NOTE: it comes first in context and gets a prior boost.",
        about="""Pin a memory so it comes first in every session's context: standing constraints, key
        decisions, preferences the user asked you to remember. Pin sparingly; pinned=false unpins.""",
        params=(NOTE, Param("pinned", "false unpins.", type=bool, default=True, on="mcp"), COMMIT),
        hints="idempotent",
    ),
    Command(
        "unpin",
        _unpin,
        help="Unpin NOTE: it no longer comes first in context.",
        about="",
        params=(NOTE, COMMIT),
        hints="idempotent",
        tool="-",
        why_not="the pin tool with pinned=false",
    ),
    Command(
        "snooze",
        _snooze,
        help="Hide NOTE from retrieval until a date; it comes back by itself (or with restore).",
        about="""Hide a memory that keeps surfacing but does not matter now, until a date or for some days; it
        comes back by itself. Give until, duration or days.""",
        params=(
            NOTE,
            Param(
                "until",
                "Hide until this date (YYYY-MM-DD).",
                default=None,
                metavar="DATE",
                about="Hide until this day (YYYY-MM-DD).",
            ),
            Param(
                "duration",
                "Hide for a while: 30d, 2w, 6m, 1y.",
                default=None,
                flag="--for",
                metavar="DURATION",
            ),
            Param("days", "Or hide for this many days.", type=int, default=None, low=1, high=3650, on="mcp"),
            COMMIT,
        ),
        hints="idempotent",
    ),
    Command(
        "set",
        _set,
        help="""Set frontmatter keys of NOTE, only those, in one commit; KEY= (empty) removes a key.

    \b
    Keys: salience and confidence (0 to 1), pinned (true/false), type, tags (comma-separated),
    scope (global, project:NAME, topic:NAME), valid_from and valid_until (YYYY-MM-DD).
    Example: mdmem set "Use Hotwire" salience=0.9 tags=frontend,hotwire valid_until=
    A bad value is refused with what the key takes; nothing is written then.
    """,
        about="""Change a memory's metadata in place — importance, confidence, pin, type, tags, scope, validity
        dates — when the text is still right but how it should be weighed or where it applies changed.
        Only the keys given are written (one commit); a bad value is refused and nothing changes. To
        change what the memory says, use correct instead.""",
        params=(
            NOTE,
            Param("assignments", "KEY=VALUE words.", many=True, kind="argument", metavar="KEY=VALUE...", on="cli"),
            COMMIT,
            tool_key("salience", "Importance: 0.8+ critical, 0.5 ordinary, 0.3 minor.", float),
            tool_key("confidence", "How sure the memory is.", float),
            tool_key("pinned", "true pins, false unpins.", bool),
            tool_key("type", "decision, preference, fact, context, problem, handoff, note, …"),
            tool_key("tags", "The note's tags (replaces them).", many=True),
            tool_key("scope", "global, project:NAME or topic:NAME."),
            tool_key("valid_from", "True from this day (YYYY-MM-DD)."),
            tool_key("valid_until", "True until this day (YYYY-MM-DD); after it the note is hidden as expired."),
            tool_key("remove", 'Keys to remove, e.g. ["valid_until"].', many=True),
        ),
        hints="idempotent",
    ),
    Command(
        "forget",
        _forget,
        help="Mark NOTE forgotten: hidden from retrieval, kept on disk and in git (restore undoes it).",
        about="""Hide a memory that is wrong or obsolete for good (status forgotten; the file stays in git and
        restore undoes it). Prefer correct when there is a right version, snooze when it is only noise now.""",
        params=(NOTE, COMMIT),
        hints="idempotent",
    ),
    Command(
        "restore",
        _restore,
        help="Make NOTE active and visible again (undoes forget, archive and snooze).",
        about="Make a forgotten, archived or snoozed memory visible again.",
        params=(NOTE, COMMIT),
        hints="idempotent",
    ),
    Command(
        "link",
        _link,
        help="""Link note A to note B: adds {to: B, type: TYPE, reason: …} to A's frontmatter `links`.

    B is written by its id when it has one, so renaming or moving it keeps the link. Only the
    `links` key changes; the note is written atomically, reindexed and committed.

    B may be an entity instead of a note (a name no note has, or --entity): it joins A's
    `entities`, a node of the graph ("mdmem neighbors B" lists A); a --type other than related
    also writes a `links` entry to it. A person's e-mail address or @handle links to their note.
    """,
        about="""Record how two memories relate: adds {to, type, reason} to the source note's links (committed).
        Use causal types (caused_by, depends_on, led_to) when one explains the other: why follows them.
        The target may be an entity (a system, product, person: a name no note has, or entity=true): the
        note is then about it (its entities), and neighbors of the entity list the note.""",
        params=(
            SOURCE,
            TARGET,
            Param(
                "type",
                "The relation, any word: caused_by, depends_on, led_to, supersedes, related, …",
                default="related",
                metavar="TYPE",
                about="The relation, e.g. caused_by, depends_on, supports, contradicts, part_of, related.",
            ),
            Param(
                "reason",
                "Why they are connected (shown by links, path and why).",
                default=None,
                about="Why they are linked, in a few words.",
            ),
            flag(
                "entity",
                "B is an entity (a system, product, person), not a note: it joins A's `entities`.",
                "The target is an entity name (a system, product, person), not a note: it joins the note's entities.",
            ),
            COMMIT,
        ),
        hints="idempotent",
        tool_view=lambda args: {"link_type": args["type"]},
    ),
    Command(
        "identity",
        _identity,
        help="""Add identities to a person's note: e-mail addresses, handles (@dana, github:dana) and names
    they go by; --remove takes one away. PERSON is found by any identity they have (or is a note).

    
    Only the note's `identities` key changes (atomically, one commit); an identity another person
    note claims is refused. With no one known as PERSON, a person note of that title is written.
    Example: mdmem identity "Dana Okafor" --email dana@example.com --handle dana
    """,
        about="""Record how someone is named: add e-mail addresses, handles (@dana, github:dana) or names to
        their person note, or remove one (committed). Mentions of any identity in other notes then count as
        mentions of them (person, recall's who-questions). Creates the person note when none exists.""",
        params=(
            words("person", "The person: a name, e-mail address or handle they go by.", metavar="PERSON"),
            Param("email", "An e-mail address to add (repeatable).", many=True, default=(), metavar="ADDRESS"),
            Param("handle", "A handle to add: @dana, dana, github:dana (repeatable).", many=True, default=()),
            Param("names", "A name they go by (repeatable).", many=True, default=(), flag="--name", metavar="NAME"),
            Param("remove", "An identity to remove (repeatable).", many=True, default=(), metavar="IDENTITY"),
            COMMIT,
        ),
        hints="idempotent",
    ),
    Command(
        "unlink",
        _unlink,
        help="""Remove the frontmatter links from note A to B (B may also be a dangling target as written).

    Links in A's body are text and stay; the command says when one is left.
    """,
        about="""Remove a link recorded with link (from the source's frontmatter; committed). Use when a
        relation was wrong; body mentions stay and are reported.""",
        params=(
            SOURCE,
            TARGET,
            Param("type", "Only remove links of this type (default: all).", default=None, metavar="TYPE"),
            COMMIT,
        ),
        hints="idempotent",
    ),
    Command(
        "history",
        _history,
        help="""The version chain of NOTE (oldest first) and each version's git log.

    Each version shows its newest commits (--limit) and says when there are more; --json gives
    each version's "commits" (all of them) and "truncated" (and with --diff each commit's "diff").
    """,
        about="""A memory's past: its version chain (what it superseded and what superseded it) and each
        version's commits, newest first; diff=true adds what each commit changed. Use when asked how a
        decision or fact evolved, or before correcting a note others have edited.""",
        params=(
            NOTE,
            limit(10, 1_000_000, "The newest commits to show per version.", tool_high=200),
            flag("all", "Show every commit (overrides --limit).", "Every commit (overrides limit)."),
            flag(
                "diff",
                "With each commit, what it changed in the note.",
                "Include what each commit changed in the note.",
            ),
        ),
    ),
    Command(
        "diff",
        _diff,
        help="""What changed in NOTE since REV (a commit, tag, branch or HEAD~N), up to its file now.

    \b
    Without REV: since its previous version — its last commit if the file changed since, else
    the commit before that. Renames are followed. "mdmem history NOTE" lists its commits.
    """,
        about="""What changed in a memory since a revision, or since its previous version, as a unified diff
        up to the file now (renames followed). Use to see what someone changed in a note.""",
        params=(
            NOTE,
            Param(
                "rev",
                "Since this revision: a commit, tag, branch or HEAD~N (default: the note's previous version).",
                default=None,
                kind="argument",
            ),
        ),
    ),
    Command(
        "show",
        _show,
        help="""What NOTE said in revision REV (a commit, tag, branch or HEAD~N), e.g. "DB host@HEAD~2".

    The text goes to stdout as it was in the file; the commit it comes from to stderr.
    """,
        about="""What a memory said in an earlier revision (the whole file then). Use with history to read an
        old version, e.g. what a decision said before it was corrected.""",
        params=(
            Param("note_at", "The note and the revision, NOTE@REV.", metavar="NOTE@REV", on="cli"),
            Param("note", NOTE.help, kind="note", about=NOTE.about, on="mcp"),
            Param("rev", "The revision: a commit (from history), tag, branch or HEAD~N.", on="mcp"),
        ),
    ),
    Command(
        "sweep",
        _sweep,
        help="""Archive stale notes: active, unpinned, low salience, old, of a decaying type. Dry run by default.

    \b
    Decisions, preferences, facts and other durable types are never swept; nothing is deleted.
    """,
        about="""List the stale memories (active, unpinned, low salience, old, of a decaying type such as
        context or handoff), and with apply=true archive them (nothing is deleted; restore undoes it).
        Decisions, preferences, facts and other durable types are never swept.""",
        params=(
            flag("apply", "Archive the notes (default: only list them)."),
            Param("min_age", "Days since the note's date.", type=float, default=180.0),
            Param("max_salience", "Only notes less important than this.", type=float, default=0.3),
            COMMIT,
        ),
        hints="idempotent",
    ),
    Command(
        "status",
        _status,
        help="Note counts, index freshness (what the index lacks, or a background catch-up) and the last "
        "indexed commit.",
        about="""Vault health: notes by type, index freshness, vector coverage, git state, problems; on a
        server of several vaults, each vault's. Use when results look stale or empty.""",
        params=vaults_params(
            "Report on these vaults (names or folders, comma-separated), each in turn.",
            'Report on every vault "mdmem vaults" lists.',
        ),
        target="each",
    ),
    Command(
        "doctor",
        _doctor,
        help="""Every problem with the vault, grouped by kind with counts and a few examples each (all of
    them with --all or --json): broken frontmatter (file, field, fix), typed links: entries that name no
    note, missing attachments, vault setup. Exits 1 if there is any. Apart from them, the links to
    notes not written yet ([[Idea]] with no note Idea: Obsidian's way of planning one), no problem.""",
        about="""Every problem with the vault: broken frontmatter (file, field, how to fix it), typed
        links that name no note, missing attachments, the vault's setup (git hooks, .gitignore); and,
        apart, the links to notes not written yet. Use when status counts problems, or before tidying a vault.""",
        params=(
            Param(
                "show_all",
                "List every problem, not a few examples of each kind.",
                type=bool,
                default=False,
                flag="--all",
                on="render",  # the tool's answer lists them all
            ),
        ),
    ),
    Command(
        "review",
        _review,
        help="""What needs judgement, most pressing first, each item with its evidence and the commands
    that settle it: possible contradictions (notes of one type on one subject that disagree, the
    newer not superseding the older), duplicates, links to superseded notes or expired facts,
    closely related notes not linked, candidate memories the stop hook found in a session's
    transcript (with the "mdmem add" that saves each), stale handoffs. Nothing is changed;
    "mdmem dismiss KEY" keeps an item from coming back (in .mdmem-review.yaml, committed with the
    notes).""",
        about="""What in the memory needs judgement: possible contradictions, duplicates, links to
        superseded or expired notes, related notes not linked, decisions, preferences and facts said in a
        session but not saved (candidates), stale handoffs, each with its evidence and the commands that
        settle it (supersede, link, add, forget, dismiss). Nothing is changed by asking. Use
        at the start of a session when told there are memories to review, or before tidying the vault;
        settle an item only when the evidence convinces you (else dismiss it).""",
        params=(
            limit(20, 500, "The most items to show.", tool_high=50),
            Param(
                "scan",
                "How many of the newest notes to compare with their neighbours.",
                type=int,
                default=200,
                low=1,
                high=100_000,
            ),
        ),
    ),
    Command(
        "dismiss",
        _dismiss,
        help="""Keep review items (by KEY, as "mdmem review" prints it) from coming back.

    The keys are written to .mdmem-review.yaml at the vault's root and committed, so the choice
    survives a rebuild of the index and travels with the vault; delete a line to undo it.
    """,
        about="""Dismiss review items that need nothing done (a false contradiction, notes that are rightly
        apart): they do not come back in review. Kept in a committed file of the vault.""",
        params=(Param("keys", "The item keys from review.", many=True, kind="argument", metavar="KEY..."), COMMIT),
        hints="idempotent",
    ),
    Command(
        "supersede",
        _supersede,
        help="""NEW replaces OLD (one or more): each OLD is archived and points to NEW, which records that it
    supersedes it; the texts stay, so history and "mdmem restore" can undo it. One commit.""",
        about="""Settle a contradiction or a duplicate: the new note replaces the old ones (they are archived
        and point to it; nothing is deleted; one commit). Use when review or add reports that a newer note
        contradicts or repeats an older one and the newer one is right.""",
        params=(
            Param("new", "The note that stays (id, path, title).", kind="note", metavar="NEW"),
            Param("old", "The notes it replaces.", many=True, kind="argument", metavar="OLD..."),
            COMMIT,
        ),
        hints="idempotent",
    ),
)
