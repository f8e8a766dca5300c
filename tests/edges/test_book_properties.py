"""Property-based: generated hostile EPUB and PDF structures through the readers, each within a CPU-time
and an output budget. An EPUB's chapter is nested elements (lists, quotes, tables, pre) thousands deep,
with constructs that never close ("<!--", "<![CDATA[", a quote in a tag), entities and control
characters; a PDF's page is a content stream of text, state and form operators in long runs. A reader
either returns a book whose text is at most proportional to its input, or refuses it with
``BookUnreadable``; nothing else, and never slowly. The reading thread's CPU time, so neither a busy
machine nor another thread of the worker counts. No shrinking: a failing book is printed as generated
(shrinking a slow PDF page took over five minutes and ended on a case that did not fail again)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mdmem.adapters.epub import read_epub
from mdmem.adapters.pdf import read_pdf
from mdmem.core.errors import BookUnreadable

from ..book_files import epub, pdf_stream

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
CPU_PER_BOOK = 6.0  # seconds; these books read in well under one
TAGS = [
    "p",
    "div",
    "ul",
    "ol",
    "li",
    "blockquote",
    "pre",
    "table",
    "tr",
    "td",
    "h1",
    "h2",
    "em",
    "a",
    "span",
    "nav",
    "section",
    "svg",
    "script",
    "br",
]
OPEN_ENDED = [
    "<!--",
    "<![CDATA[",
    "<a title='",
    "<?x",
    "<!x",
    "</",
    "<",
    '<a"<',
    "&#",
    "&amp",
    "\x02",
    "\x01",
    "]]>",
    "-->",
    ">",
]

leaves = st.one_of(
    st.text(max_size=30),
    st.sampled_from(OPEN_ENDED),
    st.builds(lambda t: f'<p id="{t}">', st.text(alphabet="ab-", max_size=5)),
)
trees = st.recursive(
    leaves,
    lambda kids: st.builds(
        lambda tag, inner, close: f"<{tag}>{''.join(inner)}" + (f"</{tag}>" if close else ""),
        st.sampled_from(TAGS),
        st.lists(kids, max_size=4),
        st.booleans(),
    ),
    max_leaves=40,
)
deep = st.builds(
    lambda tag, n, text, close: f"<{tag}>{text} " * n + (f"</{tag}>" * n if close else ""),
    st.sampled_from(["ul", "ol", "li", "blockquote", "div", "td"]),
    st.integers(500, 6000),
    st.text(min_size=1, max_size=8),
    st.booleans(),
)
repeated = st.builds(
    lambda unit, n: unit * n, st.sampled_from(OPEN_ENDED + ["<p>a</p>", "<li>x", "<a b=c>"]), st.integers(1000, 60_000)
)
chapters = st.lists(st.one_of(trees, deep, repeated), min_size=1, max_size=3).map("".join)


def bounded(read: object, size: int) -> None:
    start = time.thread_time()
    try:
        book = read()  # type: ignore[operator]
    except BookUnreadable as exc:
        assert "\n" not in str(exc)
        book = None
    spent = time.thread_time() - start
    assert spent < CPU_PER_BOOK, f"{spent:.1f} s of CPU"
    if book is not None:
        text = sum(len(p.body) for p in book.parts)
        assert text <= 4 * size + 10_000, f"{text} characters of text from {size}"


@settings(
    max_examples=25,
    deadline=None,
    phases=NO_SHRINK,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(bodies=st.lists(chapters, min_size=1, max_size=3))
def test_any_epub_is_read_or_refused_in_bounded_time_and_size(tmp_path: Path, bodies: list[str]) -> None:
    # Each document as generated, not closed by a wrapper: html.parser was quadratic only when no ">"
    # followed ("<a b='" 20,000 times: 20 s).
    raw = {f"OEBPS/text/ch{i:02d}.xhtml": "<html><body>" + b for i, b in enumerate(bodies, 1)}
    book = epub(tmp_path / "g.epub", [(f"Chapter {i}", "<p>x</p>") for i in range(len(bodies))], files=raw)
    bounded(lambda: read_epub(book), sum(map(len, bodies)))


OPS = [
    b"BT",
    b"ET",
    b"q",
    b"Q",
    b"(a) Tj",
    b"[(a) 5 (b)] TJ",
    b"1 0 0 1 5 5 cm",
    b"0 -14 Td",
    b"T*",
    b"/F1 11 Tf",
    b"/F0 Do",
    b"(unclosed",
    b"<<",
    b"[",
    b"]",
    b"1 1 m 2 2 l S",
    b"(x) '",
    b"BI /W 1 /H 1 ID x EI",
    b"%",
    b"\\",
]
op_runs = st.builds(
    lambda ops, n: b" ".join(ops) * n, st.lists(st.sampled_from(OPS), min_size=1, max_size=4), st.integers(1, 40_000)
)
streams = st.lists(op_runs, min_size=1, max_size=3).map(b" ".join)


@pytest.mark.filterwarnings("ignore")  # pypdf warns about the damage it repairs
@settings(
    max_examples=15,
    deadline=None,
    phases=NO_SHRINK,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stream=streams, form=st.none() | streams, draws=st.integers(0, 2000))
def test_any_pdf_page_is_read_or_refused_in_bounded_time_and_size(
    tmp_path: Path, stream: bytes, form: bytes | None, draws: int
) -> None:
    book = pdf_stream(tmp_path / "g.pdf", stream, form=form, draws=draws if form is not None else 0)
    bounded(lambda: read_pdf(book), len(stream) + len(form or b"") * max(1, draws) + 100)
