"""The command reference (docs/reference.md), generated from the CLI itself: every command and
subcommand, its usage, its whole help text and each option as ``--help`` states it.

    python -m mdmem.cli.reference            # rewrite docs/reference.md
    python -m mdmem.cli.reference --check    # exit 1 when docs/reference.md is not what the CLI says

A test runs the check, so a command or option added without help, or a help text changed without
regenerating, fails the suite.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from . import cli

HEADER = """# Command reference

Generated from the CLI by `python -m mdmem.cli.reference`; do not edit by hand (a test compares this
page with what the CLI says). Every command also answers `--help`. Options that most commands share:
`--json` (the answer as one JSON document, the same shape as the Python API's `to_dict()` and the MCP
tools), `--vault NAME|PATH` (before the command: `mdmem --vault ~/notes search …`, or `$MDMEM_VAULT`).

"""


def commands(group: click.Group, ctx: click.Context) -> list[tuple[list[str], click.Command, click.Context]]:
    """Every command below ``group``, depth first, with its path of names and its context."""
    out = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        out.append(([*_names(ctx), name], command, sub))
        if isinstance(command, click.Group):
            out += commands(command, sub)
    return out


def _names(ctx: click.Context) -> list[str]:
    names = []
    at: click.Context | None = ctx
    while at is not None:
        names.append(at.info_name or "")
        at = at.parent
    return [n for n in reversed(names) if n][1:]


def options(command: click.Command, ctx: click.Context) -> list[tuple[str, str]]:
    """(names and metavar, help) of each option, as ``--help`` prints them."""
    rows = []
    for param in command.get_params(ctx):
        # arguments are in the usage line; --help is every command's (and click caches its names)
        if not isinstance(param, click.Option) or "--help" in param.opts:
            continue
        record = param.get_help_record(ctx)
        if record is not None:
            rows.append(record)
    return rows


def render() -> str:
    """The whole reference page."""
    root = click.Context(cli, info_name="mdmem")
    parts = [HEADER, "## mdmem\n\n", _usage(cli, root), _help(cli), _options(cli, root)]
    index = ["Commands: " + ", ".join(f"[{' '.join(p)}](#{_anchor(p)})" for p, _, _ in commands(cli, root)) + ".\n\n"]
    parts[1:1] = index
    for path, command, ctx in commands(cli, root):
        level = "###" if len(path) > 1 else "##"
        parts += [f"{level} mdmem {' '.join(path)}\n\n", _usage(command, ctx), _help(command), _options(command, ctx)]
    return "".join(parts).rstrip() + "\n"


def _anchor(path: list[str]) -> str:
    return "mdmem-" + "-".join(path)


def _usage(command: click.Command, ctx: click.Context) -> str:
    """The usage line, on one line whatever the terminal's width."""
    return f"```\nUsage: {ctx.command_path} {' '.join(command.collect_usage_pieces(ctx))}\n```\n\n"


def _help(command: click.Command) -> str:
    """The whole help text: paragraphs joined into lines, click's preformatted (\\b) blocks kept as code."""
    text = inspect.cleandoc(command.help or "")
    out = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":
            out.append("```\n" + "\n".join(line.rstrip() for line in lines[1:]) + "\n```")
        elif lines:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(out) + "\n\n" if out else ""


def _options(command: click.Command, ctx: click.Context) -> str:
    rows = options(command, ctx)
    if not rows:
        return ""
    return "".join(f"- `{names}`: {' '.join(text.split())}\n" for names, text in rows) + "\n"


PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is not what the CLI says: run python -m mdmem.cli.reference", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
