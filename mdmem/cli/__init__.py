"""The mdmem command line: parse arguments → one Vault call → render text or JSON.

The group and its global options live here; each command family is a module of its own
(``notes``, ``search``, ``graph``, ``admin``, ``agents``, ``eval``) and is registered below by name.
"""

from __future__ import annotations

import click

from ..version import __version__
from . import admin, agents, graph, notes, search
from .eval import eval_command
from .options import State


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--vault", "vault_path", envvar="MDMEM_VAULT", metavar="PATH",
              help="The vault to use [env MDMEM_VAULT; default: found by walking up from the current folder].")
@click.version_option(__version__, prog_name="mdmem")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None) -> None:
    """mdmem — long-term memory as markdown notes in git, with a rebuildable search index.

    \b
    Start:     mdmem init ~/notes
    Write:     mdmem add --title "Use Hotwire" --type decision < body.md
    Find:      mdmem search "why hotwire"      (add --json for machines)
    Keep it:   git commit — the hooks reindex; "mdmem reindex" catches uncommitted edits.
    """
    state = State(vault_path)
    ctx.obj = state
    ctx.call_on_close(state.close)  # index handles close with the command (in-process callers too)


COMMANDS: tuple[click.Command, ...] = (
    notes.init, notes.add, notes.get, notes.pin, notes.unpin, notes.snooze, notes.forget, notes.restore,
    notes.correct, notes.history, notes.sweep,
    search.search, search.vsearch, search.query, search.recall, search.context, search.embed,
    graph.links, graph.backlinks, graph.neighbors, graph.path, graph.why, graph.timeline, graph.entity,
    graph.link, graph.unlink, graph.graph,
    admin.reindex, admin.status, admin.doctor, admin.hooks, admin.serve, eval_command,
    agents.hook, agents.mcp, agents.setup, agents.import_,
)
for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="mdmem")
