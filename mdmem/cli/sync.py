"""``mdmem sync`` and ``mdmem resolve``: a vault shared through git."""

from __future__ import annotations

import sys

import click

from .options import State, commit_option, output, pass_state, show


@click.command()
@click.argument("name", required=False, metavar="[NAME|PATH]")
@click.option("--quiet", "-q", is_flag=True, help="No step lines or git progress on stderr.")
@output
@pass_state
def sync(state: State, name: str | None, quiet: bool, as_json: bool) -> None:
    """Share the vault through git: commit hand-edited notes, fetch, merge the upstream branch,
    push, then index what changed (only that). Only the vault's notes are committed: anything else
    you staged stays staged. An upstream that was force-pushed is reported, not merged back.

    NAME is a vault from "mdmem vaults" or a folder (default: as --vault finds it). A note changed
    on both sides is merged (frontmatter key by key, the body by lines); when the edits overlap, this
    machine's text stays at the note's path and the other is saved beside it as
    NOTE.conflict-COMMIT.md: both are indexed and searchable until "mdmem resolve NOTE". The merge
    is committed and pushed, so every clone sees the same notes; no text is ever lost. A push the
    remote rejects because it moved meanwhile is fetched, merged and pushed again.

    The vectors travel too, in their own ref (refs/mdmem/vectors, never in the notes' history): the
    remote's vector pack is fetched, what it holds is checked on a sample against the local model and
    used, and this machine's pack is pushed (docs/sync.md, "Vectors travel too")."""
    if name:
        state.vault_path = name
    loud = not quiet and sys.stderr.isatty()

    def say(line: str) -> None:
        click.echo(f"mdmem sync: {line}", err=True)

    show(state.vault.sync(say=say if loud else None, progress=loud), as_json)


@click.command()
@click.argument("note")
@click.option("--ours", "side", flag_value="ours", help="Keep this note's text; drop the other version.")
@click.option("--theirs", "side", flag_value="theirs", help="Take the other version's text; drop the copy.")
@click.option(
    "--both",
    "side",
    flag_value="both",
    help='Keep both texts in the one note (the other under an "Other version" heading).',
)
@commit_option
@output
@pass_state
def resolve(state: State, note: str, side: str | None, commit: bool | None, as_json: bool) -> None:
    """Settle a conflict "mdmem sync" kept: NOTE is the note or its conflict copy. The copy is removed,
    the note reindexed and the change committed (push it with "mdmem sync"). NOTE may also be a file
    that is not a note (an image, .obsidian/ settings): --ours or --theirs, not --both."""
    if side is None:
        raise click.UsageError("say which text to keep: --ours, --theirs or --both.")
    show(state.vault.resolve_conflict(note, side, commit=commit), as_json)
