"""What the CLI's renderers share: the printed output, the printer they write to, and the table of
renderers, one per result type (``cli_text`` and ``cli_graph`` register theirs)."""

from __future__ import annotations

from dataclasses import dataclass

from .lines import Table


@dataclass(frozen=True, slots=True)
class Output:
    """What a CLI command prints: stdout, stderr and its exit code."""

    out: str = ""
    err: str = ""
    code: int = 0


class Printer:
    """Collects lines as ``click.echo`` prints them, for stdout or (``err``) stderr."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.err: list[str] = []

    def __call__(self, text: str = "", *, err: bool = False, nl: bool = True) -> None:
        (self.err if err else self.out).append(text + ("\n" if nl else ""))

    def done(self, code: int = 0) -> Output:
        return Output("".join(self.out), "".join(self.err), code)


CLI_TABLE = Table("The CLI")
