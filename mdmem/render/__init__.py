"""One renderer: results as CLI text, and as MCP text plus structured content.

``cli(result, **options)`` is what a command prints in text mode (``Output``: stdout, stderr, exit
code); ``to_json(result)`` is what it prints with ``--json``. ``mcp(result, **options)`` is a tool's
text and structured content, which is ``result.to_dict()`` or a field selection of it. Both build
their lines from the shared formats in ``lines``. Pure: no click, no I/O.
"""

from __future__ import annotations

from .cli_text import Output, cli, file_change_lines
from .lines import (
    BOLD,
    KEY_CHARS,
    RESET,
    YELLOW,
    arrow,
    bold,
    commit_suffix,
    dated_line,
    edge_line,
    fields_text,
    highlight,
    hints_line,
    node_line,
    node_short,
    reason_suffix,
    redaction_notice,
    shell_path,
    skipped_line,
    strip_marks,
    to_json,
    warning_lines,
)
from .mcp_text import compact_add, compact_hit, compact_status, mcp, pick

__all__ = [
    "BOLD",
    "KEY_CHARS",
    "RESET",
    "YELLOW",
    "Output",
    "arrow",
    "bold",
    "cli",
    "commit_suffix",
    "compact_add",
    "compact_hit",
    "compact_status",
    "dated_line",
    "edge_line",
    "fields_text",
    "file_change_lines",
    "highlight",
    "hints_line",
    "mcp",
    "node_line",
    "node_short",
    "pick",
    "reason_suffix",
    "redaction_notice",
    "shell_path",
    "skipped_line",
    "strip_marks",
    "to_json",
    "warning_lines",
]
