"""The text of refs, cites and person answers, line by line: the CLI prints these lines
and MCP answers with them (``cli_text`` and ``mcp_text`` register them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lines import dated_line, node_line

if TYPE_CHECKING:
    from ..results.refs import CitesAnswer, PersonAnswer, RefsAnswer


def refs_lines(a: RefsAnswer) -> list[str]:
    """'kind  value' per reference, with how it was written when that differs, where, and the person."""
    lines = [node_line(a.note)]
    if not a.refs:
        lines.append("  (no references: add 'refs: [URL, e-mail, PAY-1234, …]' to its frontmatter)")
    for r in a.refs:
        written = f"  (written {r.written})" if r.written != r.value else ""
        person = f"  → {node_line(r.person)}" if r.person is not None else ""
        lines.append(f"  {r.kind:<7} {r.value}{written}  [{r.origin}]{person}")
    return lines


def cites_lines(a: CitesAnswer) -> list[str]:
    """The citing notes, each with how it wrote the reference; what was meant when none cites it."""
    lines = [f"{a.kind} {a.value}: cited by {len(a.notes)} note(s)"]
    for c in a.notes:
        written = f"  as {c.written}" if c.written != a.value else ""
        lines.append(f"  {node_line(c.node)}  [{c.origin}]{written}")
    if not a.notes and a.similar:
        lines.append("  cited values like it: " + ", ".join(a.similar))
    return lines


def person_lines(a: PersonAnswer, *, local: bool = False) -> list[str]:
    """Who they are, then the notes about them (each with how it names them), then their timeline."""
    lines = [node_line(a.person)]
    if a.identities:
        lines.append("  identities: " + ", ".join(a.identities))
    if a.summary:
        lines.append("  " + a.summary)
    lines += [f"  clash: {c}" for c in a.clashes]
    lines.append(f"notes about them ({len(a.notes)}):" if a.notes else "no notes mention them yet")
    lines += [f"  {node_line(n.node)}  — {'; '.join(n.via)}" for n in a.notes]
    if a.timeline:
        lines.append("timeline:")
        lines += [dated_line(" ", t, local=local) for t in a.timeline]
    return lines
