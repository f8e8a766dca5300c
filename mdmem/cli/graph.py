"""Graph commands: neighbors, why, similar, timeline, link, unlink and graph export (links, backlinks,
path and entity are rows of the command table, ``edges.commands``)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..core.errors import MdmemError
from .options import (
    State,
    commit_option,
    filter_options,
    filters_from,
    output,
    pass_state,
    served_or_local,
    show,
    visibility_options,
)

type_option = click.option(
    "--type",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Follow only edges of this type (repeatable), e.g. caused_by, mentions, about.",
)


# -- neighbors ------------------------------------------------------------------------------------


@click.command()
@click.argument("note")
@click.option("-d", "--depth", default=1, show_default=True, type=click.IntRange(1, 10), help="Hops to go out.")
@type_option
@click.option(
    "--direction",
    default="both",
    show_default=True,
    type=click.Choice(["both", "out", "in"]),
    help="Follow edges out of each note, into it, or both.",
)
@click.option(
    "-n", "--limit", default=200, show_default=True, type=click.IntRange(1, 100_000), help="Most neighbours to list."
)
@output
@pass_state
def neighbors(
    state: State, note: str, depth: int, types: tuple[str, ...], direction: str, limit: int, as_json: bool
) -> None:
    """Notes and entities within --depth hops of NOTE, nearest first, with the edge that reached each."""
    show(state.vault.neighbors(note, depth, types=list(types), direction=direction, limit=limit), as_json)


# -- why / timeline -----------------------------------------------------------------------


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option(
    "-d",
    "--depth",
    default=3,
    show_default=True,
    type=click.IntRange(1, 10),
    help="Causal hops to follow from each match, each way.",
)
@click.option(
    "--vectors/--no-vectors",
    default=None,
    help="Find the matches with hybrid search (loads the model) / BM25 only. "
    "[default: BM25, hybrid only when BM25 finds nothing and the vault has vectors]",
)
@output
@pass_state
def why(
    state: State, query: tuple[str, ...], limit: int, depth: int, vectors: bool | None, as_json: bool, **kw: Any
) -> None:
    """Why something is so: the notes that best match QUERY, then their causes and effects along
    causal edges (caused_by, depends_on, because, led_to, supersedes, …) in both directions.

    \b
    Each result says whether it is a match, a cause or an effect, and the chain of edges (with
    their reasons) from the match to it. Causes rank with the match they explain.
    """
    from ..core.memory import WHY_MATCHES

    text = " ".join(query)
    filters = filters_from(kw)
    vault = state.vault
    seeds = None  # Vault.why finds them
    if vectors:  # a running "mdmem serve" has the model loaded already
        from ..api.reader import Ask

        seeds = served_or_local(state, Ask("query", text, WHY_MATCHES, filters=filters))
    show(vault.why(text, limit, depth=depth, vectors=vectors, seeds=seeds, **filters), as_json)


@click.command()
@click.argument("note")
@filter_options
@click.option("--no-vectors", is_flag=True, help="Words alone (leave the note's vectors out).")
@output
@pass_state
def similar(state: State, note: str, no_vectors: bool, limit: int, as_json: bool, **kw: Any) -> None:
    """The notes most like NOTE: by meaning (its vectors, when the index has them) and by its
    distinctive words, fused; NOTE itself left out.

    Notes it already links to or is linked from are marked (linked: out, in, both); the others
    are candidates for "mdmem link". No model runs: only vectors already in the index are used.
    """
    show(state.vault.similar(note, limit, vectors=not no_vectors, **filters_from(kw)), as_json)


@click.command()
@click.argument("note", nargs=-1, required=True)
@click.option(
    "-w", "--window", default=5, show_default=True, type=click.IntRange(1, 1000), help="Notes to show before and after."
)
@click.option(
    "--all",
    "all_notes",
    is_flag=True,
    help="Place it among all notes, not only related ones (graph neighbours, same subject).",
)
@click.option("--no-vectors", is_flag=True, help="Find a note for a query with BM25 only (no model).")
@visibility_options
@output
@pass_state
def timeline(
    state: State,
    note: tuple[str, ...],
    window: int,
    all_notes: bool,
    no_vectors: bool,
    include: tuple[str, ...],
    as_of: str | None,
    as_json: bool,
) -> None:
    """What came before and after NOTE in time (a note reference, or a query whose best match is used).

    Related notes are its graph neighbours within two hops (links, mentions, versions, shared
    entities) and notes on the same subject; dates are authored, else created (a note without dates of
    its own: its first commit, following renames; a file git does not know: its mtime).
    """
    ref = " ".join(note)
    doc = state.vault.timeline(
        ref, window, all_notes=all_notes, vectors=False if no_vectors else None, include=list(include), as_of=as_of
    )
    show(doc, as_json, ref=ref, color=sys.stdout.isatty())


# -- link / unlink ---------------------------------------------------------------------------------


@click.command()
@click.argument("a")
@click.argument("b")
@click.option(
    "--type",
    "link_type",
    default="related",
    show_default=True,
    metavar="TYPE",
    help="The relation, any word: caused_by, depends_on, led_to, supersedes, related, …",
)
@click.option("--reason", help="Why they are connected (shown by links, path and why).")
@commit_option
@output
@pass_state
def link(state: State, a: str, b: str, link_type: str, reason: str | None, commit: bool | None, as_json: bool) -> None:
    """Link note A to note B: adds {to: B, type: TYPE, reason: …} to A's frontmatter `links`.

    B is written by its id when it has one, so renaming or moving it keeps the link. Only the
    `links` key changes; the note is written atomically, reindexed and committed.
    """
    show(state.vault.link(a, b, link_type, reason, commit=commit), as_json)


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--type", "link_type", metavar="TYPE", help="Only remove links of this type (default: all).")
@commit_option
@output
@pass_state
def unlink(state: State, a: str, b: str, link_type: str | None, commit: bool | None, as_json: bool) -> None:
    """Remove the frontmatter links from note A to B (B may also be a dangling target as written).

    Links in A's body are text and stay; the command says when one is left.
    """
    show(state.vault.unlink(a, b, link_type, commit=commit), as_json)


# -- graph export ---------------------------------------------------------------------------------


@click.group()
def graph() -> None:
    """The note graph as a whole."""


@graph.command("export")
@click.option(
    "-f",
    "--format",
    "fmt",
    default="json",
    show_default=True,
    type=click.Choice(["json", "dot", "html"]),
    help="json (nodes and edges), dot (Graphviz) or html (a self-contained page that draws it, offline).",
)
@click.option(
    "-o",
    "--output",
    "output_path",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to this file (default: stdout).",
)
@type_option
@click.option("--no-entities", is_flag=True, help="Leave out entity nodes and their `about` edges.")
@click.option(
    "--no-external",
    is_flag=True,
    help="Leave out external nodes (URLs, e-mail addresses, tickets, … that notes cite) and their `cites` edges.",
)
@click.option("--visible", is_flag=True, help="Only notes default retrieval shows (no forgotten, archived, …).")
@output
@pass_state
def graph_export(
    state: State,
    fmt: str,
    output_path: str | None,
    types: tuple[str, ...],
    no_entities: bool,
    no_external: bool,
    visible: bool,
    as_json: bool,
) -> None:
    """Export the graph: every note, entity, external thing notes cite (kind "external": a URL,
    e-mail address, ticket, …) and edge (dangling targets as "missing" nodes).

    \b
    mdmem graph export -f html -o graph.html    # open it in a browser; works offline
    mdmem graph export -f dot | dot -Tsvg > graph.svg
    """
    from ..results.reports import ExportReport

    if as_json and output_path is None:
        fmt = "json"
    filters: dict[str, Any] = {"include": []} if visible else {}
    text = state.vault.export_graph(
        fmt, types=list(types), entities=not no_entities, external=not no_external, **filters
    )
    if output_path is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output_path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise MdmemError(f"Cannot write {output_path}: {exc.strerror}. Choose another --output path.") from None
    show(ExportReport(output_path, fmt, len(text.encode())), as_json)
