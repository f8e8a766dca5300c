"""graph export: the note graph as a whole, as a file or a page (the graph's other commands are rows of
the command table, ``edges.commands``)."""

from __future__ import annotations

from typing import Any

import click

from ..core.errors import MdmemError
from .options import State, output, pass_state, show

type_option = click.option(
    "--type",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Follow only edges of this type (repeatable), e.g. caused_by, mentions, about.",
)


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
