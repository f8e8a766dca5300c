"""One result model: a frozen dataclass for every answer mdmem gives, a module per family.

Each ``to_dict()`` is the JSON of the CLI's ``--json``; the Python API, serve and MCP give the same
shapes (MCP picks fewer fields in ``render``, from ``to_dict()``), and ``render`` turns the same objects
into CLI and MCP text. A result that is a node plus fields of its own holds a ``GraphNode`` and writes
it out with ``flat()``. ``from_dict()`` rebuilds a result from its ``to_dict()`` (e.g. the hits of a
warm server). Pure: no I/O.

The code imports each type from its module (``results.search``, ``results.changes``, …), so a command
loads only the results it makes (all of them would slow a cold start). ``mdmem.results.NAME`` finds
a type in any of them, for the Python API and the shell.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

MODULES = ("base", "search", "notes", "changes", "graph", "refs", "reports", "indexing", "sync", "vaults", "review")


def __getattr__(name: str) -> Any:
    for module in MODULES:
        found = getattr(import_module(f".{module}", __name__), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module 'mdmem.results' has no attribute {name!r}")
