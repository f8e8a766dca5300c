"""The command table's rows that keep notes and the vault: pin, unpin, forget, restore, link, unlink,
history, diff, sweep, status (of each vault of a set) and doctor."""

from __future__ import annotations

from typing import Any

from .table import COMMIT, NOTE, Command, Param, flag, limit, vaults_params


def _pin(v: Any, note: str, pinned: bool = True, commit: bool | None = None) -> Any:
    return v.pin(note, pinned, commit=commit)


def _unpin(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.pin(note, False, commit=commit)


def _forget(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.forget(note, commit=commit)


def _restore(v: Any, note: str, commit: bool | None = None) -> Any:
    return v.restore(note, commit=commit)


def _link(v: Any, source: str, target: str, type: str, reason: str | None, commit: bool | None = None) -> Any:
    return v.link(source, target, type, reason, commit=commit)


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


SOURCE = Param("source", "The note the link goes from (id, path, title).", kind="note", metavar="A")
TARGET = Param("target", "The note it points to.", kind="note", metavar="B")

ROWS: tuple[Command, ...] = (
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
    """,
        about="""Record how two memories relate: adds {to, type, reason} to the source note's links (committed).
        Use causal types (caused_by, depends_on, led_to) when one explains the other: why follows them.""",
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
            COMMIT,
        ),
        hints="idempotent",
        tool_view=lambda args: {"link_type": args["type"]},
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
    them with --all or --json): broken frontmatter (file, field, fix), dangling links, missing
    attachments, vault setup. Exits 1 if there is any.""",
        about="""Every problem with the vault: broken frontmatter (file, field, how to fix it), dangling
        links, missing attachments, the vault's setup (git hooks, .gitignore). Use when status counts
        problems, or before tidying a vault.""",
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
)
