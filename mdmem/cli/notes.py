"""Commands that write or show single notes, written by hand: init, add, correct (the others are
rows of the command table, ``edges.commands``)."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.errors import MdmemError
from .options import State, commit_option, output, pass_state, read_body, redact_args, redact_option, show


@click.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--git/--no-git",
    "use_git",
    default=True,
    show_default=True,
    help="Run git init (if the folder is not in a repository yet) and install the hooks.",
)
@click.option(
    "--commit/--no-commit",
    default=True,
    show_default=True,
    help="Commit the files init made (only those) in one commit.",
)
@output
def init(path: Path, use_git: bool, commit: bool, as_json: bool) -> None:
    """Create a vault at PATH, or adopt an existing folder of notes (no note is rewritten).

    \b
    Says what it created and what it appended to (.gitignore), and commits exactly those files
    in one commit (not a .gitignore that already had uncommitted changes of yours). In a clone,
    each remote's vector pack is fetched (and "git fetch" set to bring it), so the first embedding
    takes the vectors the pack holds instead of running the model.
    """
    from ..edges.scaffold import init_vault

    show(init_vault(path, use_git=use_git, commit=commit), as_json)


@click.command()
@click.option("-t", "--title", required=True, help="The note's title (also names the file).")
@click.option("-b", "--body", help="The body in markdown; '-' or omitted with piped input reads stdin.")
@click.option("--type", "note_type", default="note", show_default=True, help="decision, fact, preference, …")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--entity", "entities", multiple=True, help="An entity the note is about (repeatable).")
@click.option("--alias", "aliases", multiple=True, help="Another name for the note (repeatable).")
@click.option(
    "--ref",
    "refs",
    multiple=True,
    help="Something outside the vault it cites: a URL, e-mail address, ticket, DOI or path (repeatable).",
)
@click.option("--scope", help="global, project:NAME or topic:NAME (default global).")
@click.option("--salience", type=float, help="Importance from 0 to 1 (default 0.5).")
@click.option("--confidence", type=float, help="How sure, from 0 to 1 (default 1).")
@click.option("--pinned", is_flag=True, help="Pin the note (always considered first).")
@click.option("--path", "note_path", help="Vault-relative file to create (default notes/<title>.md).")
@click.option("--commit/--no-commit", default=None, help="Commit the new note [default: mdmem.toml, else yes].")
@click.option("--force", is_flag=True, help="Write even if a near duplicate exists (never when identical).")
@click.option("--no-dedupe", is_flag=True, help="Skip the duplicate check.")
@click.option(
    "--supersedes",
    metavar="OLD",
    help="The note this one replaces: OLD is archived and points to the new note (one commit).",
)
@redact_option
@output
@pass_state
def add(
    state: State,
    title: str,
    body: str | None,
    note_type: str,
    tags: tuple[str, ...],
    entities: tuple[str, ...],
    aliases: tuple[str, ...],
    refs: tuple[str, ...],
    scope: str | None,
    salience: float | None,
    confidence: float | None,
    pinned: bool,
    note_path: str | None,
    commit: bool | None,
    force: bool,
    no_dedupe: bool,
    supersedes: str | None,
    no_redact: bool,
    as_json: bool,
) -> None:
    """Write a new note (atomically, with an id), index it and commit it.

    \b
    First checks for duplicates: ADD (written), UPDATE (a near duplicate exists: its note takes
    the new text instead, one commit; --force writes a new note), NOOP (identical text exists:
    not written). An active note of the same type on the same subject that says otherwise is
    reported (written anyway): settle it with "mdmem supersede NEW OLD", or pass --supersedes OLD.
    Secrets (keys, tokens, passwords) in the title and body are redacted unless --no-redact.
    """
    body = read_body(body)
    if not no_redact:
        title, body = redact_args(title, body)
    show(
        state.vault.save(
            title,
            body or "",
            force=force,
            dedupe=not no_dedupe,
            supersedes=supersedes,
            type=note_type,
            tags=list(tags),
            scope=scope,
            salience=salience,
            confidence=confidence,
            pinned=pinned,
            entities=list(entities),
            aliases=list(aliases),
            refs=list(refs),
            path=note_path,
            commit=commit,
        ),
        as_json,
    )


@click.command()
@click.argument("note")
@click.option("-b", "--body", help="The corrected text; '-' or omitted with piped input reads stdin.")
@click.option("-t", "--title", help="A new title (default: the old one).")
@commit_option
@redact_option
@output
@pass_state
def correct(
    state: State, note: str, body: str | None, title: str | None, commit: bool | None, no_redact: bool, as_json: bool
) -> None:
    """Replace NOTE with a corrected successor; the old one keeps its text and is archived.

    Secrets in the new title and body are redacted unless --no-redact.
    """
    body = read_body(body)
    if not body or not body.strip():
        raise MdmemError("Give the corrected text with --body TEXT or on stdin.")
    if not no_redact:
        body, title = redact_args(body, title)
    show(state.vault.correct(note, body, title=title, commit=commit), as_json)
