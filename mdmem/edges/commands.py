"""The command table: every command a person or an agent can run, described once and built twice —
as a click command by the CLI (``cli.table_command``) and as an MCP tool by the server
(``mcp_tools.Tools.table_tool``). A row (``table.Command``) names the command, its parameters (what a
person reads in ``--help`` and, unless ``about`` says otherwise, what the model reads), whether it
takes the retrieval filters (``FilterArgs``: each field an option and a tool argument), what it asks
(one vault, or a reader: a vault or a set of vaults), the call and the tool's safety hints. The rows
are in ``rows_find`` (retrieval and the graph) and ``rows_keep`` (notes, their history, the vault's
health); the commands that are not rows, and why, are ``NOT_ROWS``.

Data and plain functions only: the CLI reads this table on every start.
"""

from __future__ import annotations

from .rows_find import ROWS as FIND
from .rows_keep import ROWS as KEEP
from .table import Command

COMMANDS: tuple[Command, ...] = (*FIND, *KEEP)
BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}

# Commands that are not rows, and why (the CLI writes them by hand in ``cli/``; an MCP tool written by
# hand in ``mcp_tools`` says so).
NOT_ROWS: dict[str, str] = {
    "init": "creates a vault in a folder: a step for the owner, before any server runs",
    "setup": "installs mdmem into an agent's configuration (a person's step)",
    "serve": "runs the warm server in the foreground or the background: a process, not an answer",
    "mcp": "runs the MCP server itself",
    "hook": "the agent's hooks: JSON from the agent on stdin, JSON back on stdout",
    "hooks": "installs the git hooks into the repository (a person's step)",
    "eval": "runs the retrieval evaluation on public data sets: minutes of work, for developers",
    "graph": "writes the whole graph as a file or an HTML page (a person opens it)",
    "vaults": "edits the user's own list of named vaults; agents get the list from the vaults tool",
    "sync": "commits, fetches, merges and pushes through the user's git remote and credentials",
    "resolve": "settles a sync conflict by a person's choice of text",
    "embed": "runs the embedding model in the foreground with a progress bar (reindex does it for agents)",
    "add": "written by hand: its body from stdin, redaction on both surfaces (tool add)",
    "correct": "written by hand: its body from stdin, redaction on both surfaces (tool correct)",
    "import": "written by hand: adopts an Obsidian folder on the command line only (tool import_memories)",
    "reindex": "written by hand: the git hooks' entry point and a progress bar (tool reindex)",
}
