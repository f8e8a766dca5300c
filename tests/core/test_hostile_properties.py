"""Property-based: generated hostile markdown and YAML through every text pass, each example within a
CPU-time and a memory budget. Markdown is made of short runs of markup characters repeated thousands of
times (what made the passes quadratic), mixed with prose; YAML of anchors and aliases, deep flows, tags
and long scalars. The calling thread's CPU time, not wall time, so a busy machine or a thread another test left
running does not fail them."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdmem.core.chunk import chunk_note
from mdmem.core.links import display_text
from mdmem.core.note import parse_note
from mdmem.core.redact import redact
from mdmem.core.text import index_terms, snippet

MARKUP = "[]()!*_`<>#|-~=%^\\&:/@. a\n\t"
CPU_FLOOR = 1.0  # seconds: under this an example passes without a comparison
RATIO = 25  # a hostile example may cost this many times prose of its size; quadratic passes cost hundreds
YARDSTICK = 4_000  # characters of prose timed to learn what linear work costs on this machine now
BYTES_PER_CHAR = 400  # peak Python allocation per input character (tokens, chunks, copies) …
BYTES_FLOOR = 32 << 20  # … plus this
WORDS = "the team chose [[Postgres]] for *billing* after a `load test` on #infra, see notes".split()


def prose(size: int) -> str:
    """Ordinary markdown of ``size`` characters: the yardstick a hostile example is measured against."""
    text = " ".join(WORDS[i % len(WORDS)] for i in range(size // 4 + 1))
    return text[:size]


def measured(fn: Callable[[], Any]) -> tuple[Any, float, int]:
    """``fn``'s result, the calling thread's CPU seconds and its peak Python allocation."""
    tracemalloc.start()
    start = time.thread_time()
    try:
        out = fn()
        spent = time.thread_time() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, spent, peak


def within_budget(fn: Callable[[str], Any], text: str) -> Any:
    """Run ``fn`` on ``text``; fail if it took more memory than the budget allows, or more CPU than
    ``RATIO`` times what the same passes cost on prose of that size, at linear cost. CPU time on a shared
    runner varies several times over (a virtual machine's stolen time counts as the thread's), so a slow
    example is compared with prose timed at that moment, on that machine, and run again: a quadratic pass is
    slow both times. The prose is short and scaled by size, so a pass quadratic on any text fails too."""
    size = len(text)
    out, spent, peak = measured(lambda: fn(text))
    assert peak < BYTES_FLOOR + BYTES_PER_CHAR * size, f"{peak >> 20} MB for {size} characters"
    if spent < CPU_FLOOR:
        return out
    _, short, _ = measured(lambda: fn(prose(YARDSTICK)))
    yardstick = short * size / YARDSTICK
    _, again, _ = measured(lambda: fn(text))
    spent = min(spent, again)
    assert spent < CPU_FLOOR + RATIO * yardstick, f"{spent:.1f} s of CPU for {size} characters, prose {yardstick:.2f} s"
    return out


runs = st.builds(
    lambda unit, n: unit * n,
    st.text(alphabet=MARKUP, min_size=1, max_size=5),
    st.integers(min_value=500, max_value=6_000),
)
bodies = st.lists(st.one_of(runs, st.text(max_size=200)), min_size=1, max_size=4).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=bodies)
def test_any_markdown_passes_every_text_pass_in_bounded_time_and_memory(body: str) -> None:
    def passes(text: str) -> None:
        note = parse_note(text, "x.md")
        shown = display_text(text)
        snippet(shown, {"a", "word"})
        chunk_note(note.title, note.body)
        redact(text)
        index_terms(note.text)

    within_budget(passes, body)


scalars = st.one_of(
    st.text(alphabet="ab:#&*!-[]{}'\" ", max_size=40),
    st.integers(),
    st.just("~"),
    st.builds(lambda c, n: c * n, st.sampled_from("ab[{"), st.integers(1, 3000)),
)


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    """YAML with anchors, aliases that multiply, deep flows, merges, tags and long scalars."""
    lines = []
    for i in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["anchor", "alias", "flow", "merge", "tag", "scalar", "list"]))
        if kind == "anchor":
            lines.append(f"k{i}: &a{i} [{', '.join(['*a' + str(i - 1) if i else '1'] * draw(st.integers(1, 12)))}]")
        elif kind == "alias":
            lines.append(f"k{i}: *a{draw(st.integers(0, max(0, i - 1)))}")
        elif kind == "flow":
            depth = draw(st.integers(1, 5000))
            lines.append(f"k{i}: " + "[" * depth + "x" + "]" * draw(st.integers(0, depth)))
        elif kind == "merge":
            lines.append(f"k{i}:\n  <<: *a{draw(st.integers(0, max(0, i - 1)))}\n  b: 1")
        elif kind == "tag":
            tag = draw(st.sampled_from(["!!python/object/apply:os.system", "!!binary", "!!set", "!!omap", "!custom"]))
            lines.append(f"k{i}: {tag} {draw(scalars)}")
        elif kind == "list":
            lines.append(f"tags: [{', '.join(str(draw(scalars)) for _ in range(draw(st.integers(0, 20))))}]")
        else:
            lines.append(f"{draw(st.sampled_from(['title', 'links', 'entities', 'x']))}: {draw(scalars)}")
    return "---\n" + "\n".join(lines) + "\n---\n# Body\n\nstill here\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=frontmatters())
def test_any_frontmatter_is_parsed_in_bounded_time_and_memory(text: str) -> None:
    note = within_budget(lambda t: parse_note(t, "x.md"), text)
    assert "still here" in note.body  # the body survives whatever the YAML does
