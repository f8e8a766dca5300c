"""Graph commands: links, backlinks, neighbors, path, why, timeline, entity, link, unlink and
graph export."""

from __future__ import annotations

import sys
from typing import Any

import click

from .options import (State, commit_option, emit_json, filter_options, filters_from, handle_errors, json_option,
                      pass_state, served_or_local, visibility_options)
from ..errors import MdmemError

type_option = click.option("--type", "types", multiple=True, metavar="TYPE",
                           help="Follow only edges of this type (repeatable), e.g. caused_by, mentions, about.")


def _name(n: dict[str, Any] | None) -> str:
    """'Title [type] id' for a node dict, with its status when it is not active."""
    if n is None:
        return "?"
    if n.get("kind") == "entity":
        return f"entity {n['title']}"
    status = f" ({n['status']})" if n.get("status") not in (None, "active") else ""
    return f"{n['title']}  [{n['type']}]  {n['id']}{status}"


def _short(n: dict[str, Any] | None) -> str:
    if n is None:
        return "?"
    return f"entity {n['title']}" if n.get("kind") == "entity" else n["title"]


def _reason(d: dict[str, Any]) -> str:
    return f"  — {d['reason']}" if d.get("reason") else ""


def _edge_text(d: dict[str, Any]) -> str:
    """'A -type-> B' in the edge's own direction."""
    return f"{_short(d['from'])} -{d['type']}-> {_short(d['to']) if d['to'] else repr(d['written'])}"


# -- links / backlinks / neighbors / path --------------------------------------------------------


@click.command()
@click.argument("note")
@json_option
@pass_state
@handle_errors
def links(state: State, note: str, as_json: bool) -> None:
    """Edges out of NOTE: typed frontmatter links (with reasons), [[wikilinks]] and markdown links
    in the body (mentions), supersedes, and the entities it is about. Dangling links are marked."""
    doc = state.vault.links(note)
    if as_json:
        emit_json(doc)
        return
    click.echo(_name(doc["note"]))
    if not doc["links"]:
        click.echo(f"  no links. Add one: mdmem link {doc['note']['id']} OTHER --type TYPE")
    for ln in doc["links"]:
        target = _name(ln["to"]) if ln["to"] else f"{ln['written']!r}  DANGLING: no note matches"
        extra = f"  (ambiguous: {', '.join(ln['ambiguous'])})" if ln.get("ambiguous") else ""
        click.echo(f"  {ln['type']:<12} → {target}{_reason(ln)}{extra}")


@click.command()
@click.argument("note")
@json_option
@pass_state
@handle_errors
def backlinks(state: State, note: str, as_json: bool) -> None:
    """Edges into NOTE (or an entity) from other notes, with their types and reasons."""
    doc = state.vault.backlinks(note)
    if as_json:
        emit_json(doc)
        return
    click.echo(_name(doc["note"]))
    if not doc["backlinks"]:
        click.echo("  no backlinks.")
    for ln in doc["backlinks"]:
        click.echo(f"  {ln['type']:<12} ← {_name(ln['from'])}{_reason(ln)}")


@click.command()
@click.argument("note")
@click.option("-d", "--depth", default=1, show_default=True, type=click.IntRange(1, 10), help="Hops to go out.")
@type_option
@click.option("--direction", default="both", show_default=True, type=click.Choice(["both", "out", "in"]),
              help="Follow edges out of each note, into it, or both.")
@click.option("-n", "--limit", default=200, show_default=True, type=click.IntRange(1, 100_000),
              help="Most neighbours to list.")
@json_option
@pass_state
@handle_errors
def neighbors(state: State, note: str, depth: int, types: tuple[str, ...], direction: str, limit: int,
              as_json: bool) -> None:
    """Notes and entities within --depth hops of NOTE, nearest first, with the edge that reached each."""
    doc = state.vault.neighbors(note, depth, types=list(types), direction=direction, limit=limit)
    if as_json:
        emit_json(doc)
        return
    click.echo(f"{_name(doc['note'])}: {doc['count']} neighbour(s) within {depth} hop(s)")
    for n in doc["neighbors"]:
        click.echo(f"  {n['distance']}  {_name(n)}")
        click.echo(f"       via {_edge_text(n['via'])}{_reason(n['via'])}")


@click.command()
@click.argument("a")
@click.argument("b")
@type_option
@click.option("--max-depth", type=click.IntRange(1), help="Give up beyond this many hops.")
@json_option
@pass_state
@handle_errors
def path(state: State, a: str, b: str, types: tuple[str, ...], max_depth: int | None, as_json: bool) -> None:
    """The shortest chain of edges between notes A and B (edges followed either way; each step
    shows its own direction, type and reason)."""
    doc = state.vault.shortest_path(a, b, types=list(types), max_depth=max_depth)
    if as_json:
        emit_json(doc)
        return
    if not doc["found"]:
        click.echo(doc["message"])
        return
    click.echo(f"{doc['length']} hop(s):")
    click.echo(f"  {_name(doc['from'])}")
    for s in doc["steps"]:
        if s["direction"] == "out":
            click.echo(f"    -{s['type']}->  {_name(s['to'])}{_reason(s)}")
        else:
            click.echo(f"    <-{s['type']}-  {_name(s['from'])}{_reason(s)}")


# -- why / timeline / entity -----------------------------------------------------------------------


@click.command()
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("-d", "--depth", default=3, show_default=True, type=click.IntRange(1, 10),
              help="Causal hops to follow from each match, each way.")
@click.option("--vectors/--no-vectors", default=None,
              help="Find the matches with hybrid search (loads the model) / BM25 only. "
                   "[default: BM25, hybrid only when BM25 finds nothing and the vault has vectors]")
@json_option
@pass_state
@handle_errors
def why(state: State, query: tuple[str, ...], limit: int, depth: int, vectors: bool | None, as_json: bool,
        **kw: Any) -> None:
    """Why something is so: the notes that best match QUERY, then their causes and effects along
    causal edges (caused_by, depends_on, because, led_to, supersedes, …) in both directions.

    \b
    Each result says whether it is a match, a cause or an effect, and the chain of edges (with
    their reasons) from the match to it. Causes rank with the match they explain.
    """
    from ..connect import WHY_SEEDS

    text = " ".join(query)
    filters = filters_from(kw)
    vault = state.vault
    seeds = None  # Vault.why finds them
    if vectors:  # a running "mdmem serve" has the model loaded already
        seeds, _ = served_or_local(state, "query", text, WHY_SEEDS, False, filters)
    doc = vault.why(text, limit, depth=depth, vectors=vectors, seeds=seeds, **filters)
    if as_json:
        emit_json(doc)
        return
    if not doc["results"]:
        click.echo(f"No notes match {text!r}. Try other words, or \"mdmem search WORDS\".", err=True)
        return
    for i, r in enumerate(doc["results"], 1):
        click.echo(f"{i:>2}. {_name(r)}  — {r['role']}")
        for c in r["chain"]:
            click.echo(f"      {_edge_text(c)}{_reason(c)}")


@click.command()
@click.argument("note", nargs=-1, required=True)
@click.option("-w", "--window", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="Notes to show before and after.")
@click.option("--all", "all_notes", is_flag=True,
              help="Place it among all notes, not only related ones (graph neighbours, same subject).")
@click.option("--no-vectors", is_flag=True, help="Find a note for a query with BM25 only (no model).")
@visibility_options
@json_option
@pass_state
@handle_errors
def timeline(state: State, note: tuple[str, ...], window: int, all_notes: bool, no_vectors: bool,
             include: tuple[str, ...], as_of: str | None, as_json: bool) -> None:
    """What came before and after NOTE in time (a note reference, or a query whose best match is used).

    Related notes are its graph neighbours within two hops (links, mentions, versions, shared
    entities) and notes on the same subject; dates are authored, else created.
    """
    ref = " ".join(note)
    doc = state.vault.timeline(ref, window, all_notes=all_notes, vectors=False if no_vectors else None,
                               include=list(include), as_of=as_of)
    if as_json:
        emit_json(doc)
        return

    def line(mark: str, n: dict[str, Any]) -> str:
        return f"{mark} {(n.get('date') or '?')[:10]}  {_name(n)}"

    if doc["from_query"]:
        click.echo(f"best match for {ref!r}:")
    for n in doc["before"]:
        click.echo(line(" ", n))
    click.echo(click.style(line("▶", doc["anchor"]), bold=sys.stdout.isatty()))
    for n in doc["after"]:
        click.echo(line(" ", n))
    if not doc["before"] and not doc["after"]:
        click.echo("  (no related notes; try --all)")


@click.command()
@click.argument("name", nargs=-1, required=True)
@visibility_options
@json_option
@pass_state
@handle_errors
def entity(state: State, name: tuple[str, ...], include: tuple[str, ...], as_of: str | None, as_json: bool) -> None:
    """Everything about an entity (a person, system, project) under any of its names: its own note,
    notes that list it in `entities`, notes linking to it, and notes that mention it."""
    doc = state.vault.entity(" ".join(name), include=list(include), as_of=as_of)
    if as_json:
        emit_json(doc)
        return
    others = [n for n in doc["names"] if n.casefold() != doc["name"].casefold()]
    click.echo(doc["name"] + (f"  (also: {', '.join(others)})" if others else ""))
    for label, key in (("note", "notes"), ("about", "about"), ("linked", "linked"), ("mentions", "mentions")):
        for n in doc[key]:
            via = f"  via {n['via']}" if key == "linked" else ""
            click.echo(f"  {label:<9} {_name(n)}{via}{_reason(n)}")


# -- link / unlink ---------------------------------------------------------------------------------


def _render_link_change(change: Any, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(change.to_dict())
        return
    f = change.fields
    to = f.get("to") or {}
    if not change.changed:
        if verb == "link":
            click.echo(f"{change.path} already links to {to.get('title', '?')}; nothing to do.")
        else:
            click.echo(f"{change.path} has no frontmatter link to that note; nothing to do "
                       f"(see \"mdmem links {change.id}\").")
        return
    commit = f"  commit {change.commit[:8]}" if change.commit else ""
    if verb == "link":
        entry = f["links"]
        click.echo(f"linked {change.path} -{entry['type']}-> {to.get('title')} ({entry['to']}){commit}")
    else:
        click.echo(f"unlinked {change.path} from {to.get('title')} ({f['removed']} entr"
                   f"{'y' if f['removed'] == 1 else 'ies'} removed){commit}")
        if f.get("body_mentions_left"):
            click.echo("note: the body still mentions it; edit the text to remove that link too.")


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--type", "link_type", default="related", show_default=True, metavar="TYPE",
              help="The relation, any word: caused_by, depends_on, led_to, supersedes, related, …")
@click.option("--reason", help="Why they are connected (shown by links, path and why).")
@commit_option
@json_option
@pass_state
@handle_errors
def link(state: State, a: str, b: str, link_type: str, reason: str | None, commit: bool | None,
         as_json: bool) -> None:
    """Link note A to note B: adds {to: B, type: TYPE, reason: …} to A's frontmatter `links`.

    B is written by its id when it has one, so renaming or moving it keeps the link. Only the
    `links` key changes; the note is written atomically, reindexed and committed.
    """
    _render_link_change(state.vault.link(a, b, link_type, reason, commit=commit), as_json, "link")


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--type", "link_type", metavar="TYPE", help="Only remove links of this type (default: all).")
@commit_option
@json_option
@pass_state
@handle_errors
def unlink(state: State, a: str, b: str, link_type: str | None, commit: bool | None, as_json: bool) -> None:
    """Remove the frontmatter links from note A to B (B may also be a dangling target as written).

    Links in A's body are text and stay; the command says when one is left.
    """
    _render_link_change(state.vault.unlink(a, b, link_type, commit=commit), as_json, "unlink")


# -- graph export ---------------------------------------------------------------------------------


@click.group()
def graph() -> None:
    """The note graph as a whole."""


@graph.command("export")
@click.option("-f", "--format", "fmt", default="json", show_default=True, type=click.Choice(["json", "dot", "html"]),
              help="json (nodes and edges), dot (Graphviz) or html (a self-contained page that draws it, offline).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to this file (default: stdout).")
@type_option
@click.option("--no-entities", is_flag=True, help="Leave out entity nodes and their `about` edges.")
@click.option("--visible", is_flag=True, help="Only notes default retrieval shows (no forgotten, archived, …).")
@json_option
@pass_state
@handle_errors
def graph_export(state: State, fmt: str, output: str | None, types: tuple[str, ...], no_entities: bool,
                 visible: bool, as_json: bool) -> None:
    """Export the graph: every note, entity and edge (dangling targets as "missing" nodes).

    \b
    mdmem graph export -f html -o graph.html    # open it in a browser; works offline
    mdmem graph export -f dot | dot -Tsvg > graph.svg
    """
    if as_json and output is None:
        fmt = "json"
    filters: dict[str, Any] = {"include": []} if visible else {}
    text = state.vault.export_graph(fmt, types=list(types), entities=not no_entities, **filters)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise MdmemError(f"Cannot write {output}: {exc.strerror}. Choose another --output path.") from None
    if as_json:
        emit_json({"output": output, "format": fmt, "bytes": len(text.encode())})
    else:
        click.echo(f"wrote {output} ({fmt})", err=True)
