"""The mdmem command line: parse arguments → one Vault call → render text or JSON.

The group and its global options live here. Most commands are rows of the command table
(``edges.commands``), which the MCP server reads too; the others (``edges.commands.NOT_ROWS`` says
why each) are written by hand, a module per family (``notes``, ``vectors``, ``graph``, ``admin``,
``agents``, ``eval``, ``vaults``, ``sync``), named in ``COMMANDS`` below and imported only when their
command runs (or ``--help`` lists them all), so a cold command loads one family at most.
"""

from __future__ import annotations

import importlib

import click

from ..core.version import __version__
from ..edges.commands import BY_NAME as TABLE
from .options import State, table_command

# command name → "module:attribute" inside mdmem.cli; the one list of what the CLI offers
COMMANDS: dict[str, str] = {
    **{name: f"notes:{name}" for name in ("init", "add", "correct")},
    "embed": "vectors:embed",
    "graph": "graph:graph",
    **{name: f"admin:{name}" for name in ("reindex", "hooks", "serve")},
    "vaults": "vaults:vaults",
    "sync": "sync:sync",
    "resolve": "sync:resolve",
    "eval": "eval:eval_command",
    **{name: f"agents:{name}" for name in ("hook", "mcp", "setup")},
    "import": "agents:import_",
}


class LazyGroup(click.Group):
    """A group whose commands are made on first use: those of the command table (``edges.commands``,
    shared with the MCP server) built from their rows, the others imported from ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *TABLE, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in TABLE:
            self.add_command(table_command(TABLE[cmd_name]))
        elif cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            assert command.name == cmd_name, f"COMMANDS says {cmd_name!r}, the command says {command.name!r}"
            self.add_command(command)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--vault",
    "vault_path",
    envvar="MDMEM_VAULT",
    metavar="NAME|PATH",
    help='The vault to use: a folder, else a name from "mdmem vaults" [env MDMEM_VAULT; default: '
    "found by walking up from the current folder, else the default vault].",
)
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


def main() -> None:
    cli(prog_name="mdmem")
