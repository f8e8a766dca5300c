"""A hostile or odd book never expands without bound, stalls an import, runs an expression for minutes,
loses text or keeps a secret: each bound refuses in one line and writes nothing; text within them is
kept whole, redacted as notes are, and every part of it gets vectors. EPUBs and PDFs are built here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdmem.core.books import MAX_PART_CHARS
from mdmem.core.chunk import MAX_CHUNKS, chunk_note

from ..book_files import epub, pdf_stream, prose
from ..conftest import git, mdmem_in_process, snapshot

SECRET = "ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    mdmem_in_process("init", str(root))
    return root


def imported(vault: Path, book: Path, *, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    proc = mdmem_in_process("--vault", str(vault), "import", str(book), "--json", env=env)
    return json.loads(proc.stdout)


def refused(vault: Path, book: Path, *, env: dict[str, str | None] | None = None) -> str:
    """Import ``book``, which must be refused: one line, no traceback, nothing written or committed."""
    before, head = snapshot(vault), git(vault, "rev-parse", "HEAD")
    proc = mdmem_in_process("--vault", str(vault), "import", str(book), check=False, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert snapshot(vault) == before and git(vault, "rev-parse", "HEAD") == head
    return proc.stderr.strip()


def notes_of(vault: Path, report: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {p: (vault / p).read_text() for p in report["written"]}


def test_deeply_nested_lists_stay_small(vault: Path, tmp_path: Path) -> None:
    """Each level of a list indented its items by two more spaces: 20,000 levels in a 2 KB EPUB made a
    400 MB note. Indentation stops at a depth; every item's text is kept."""
    depth = 4000
    body = "".join(f"<ul><li>item{i} " for i in range(depth)) + "</li></ul>" * depth
    book = epub(tmp_path / "nest.epub", [("Nested", body)])
    report = imported(vault, book)
    texts = notes_of(vault, report)
    assert max(len(t) for t in texts.values()) < 2 * MAX_PART_CHARS
    joined = "".join(texts.values())
    assert all(f"item{i}" in joined for i in (0, 1, depth // 2, depth - 1))


def test_one_long_chapter_is_cut_so_that_every_part_gets_vectors(vault: Path, tmp_path: Path) -> None:
    """A 195 KB chapter was one note of ~200 chunks, of which only the first 64 are embedded."""
    text = prose("glacier", 32_000, seed=4)
    paras = text.split("\n\n")
    marked = "\n\n".join(f"{p} Marker{i:04d}." for i, p in enumerate(paras))
    book = epub(tmp_path / "long.epub", [("The long chapter", "".join(f"<p>{p}</p>" for p in marked.split("\n\n")))])
    report = imported(vault, book)
    parts = [t for t in notes_of(vault, report).values() if "type: reference" in t]
    assert len(parts) >= 4 and all(len(t) < MAX_PART_CHARS + 2000 for t in parts)
    embedded = "".join(c.text for t in parts for c in chunk_note("x", t.split("\n---\n", 1)[1]))
    assert all(len(chunk_note("x", t)) < MAX_CHUNKS for t in parts)
    assert all(f"Marker{i:04d}" in embedded for i in range(len(paras)))  # no paragraph without a vector


def test_a_chapter_that_unpacks_too_big_is_refused(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mdmem.adapters.epub as epub_reader

    monkeypatch.setattr(epub_reader, "MAX_DOCUMENT", 1 << 20)  # 1 MB here; 32 MB by default
    book = epub(tmp_path / "huge.epub", [("Huge", "<p>" + "a" * (2 << 20) + "</p>")])
    assert book.stat().st_size < 64 * 1024  # a small file
    assert "unpacks to 2 MB of XHTML" in refused(vault, book)


def test_a_book_whose_text_is_too_long_is_refused(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mdmem.core.books as books

    monkeypatch.setattr(books, "MAX_BOOK_CHARS", 100_000)
    book = epub(tmp_path / "long.epub", [(f"C{i}", f"<p>{prose('chess', 3000, seed=i)}</p>") for i in range(12)])
    assert "its text comes to more than 97 KB" in refused(vault, book)


def test_reading_beyond_the_time_budget_is_refused(vault: Path, tmp_path: Path) -> None:
    book = epub(tmp_path / "slow.epub", [(f"C{i}", f"<p>{prose('chess', 300, seed=i)}</p>") for i in range(3)])
    err = refused(vault, book, env={"MDMEM_IMPORT_SECONDS": "0.000001"})
    assert "took more than 1e-06 s" in err and "MDMEM_IMPORT_SECONDS" in err
    err = refused(vault, book, env={"MDMEM_IMPORT_SECONDS": "soon"})
    assert "MDMEM_IMPORT_SECONDS='soon' is not a number" in err


CVE_SCRIPT = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))  # a hang is a failure, not a stuck suite
from mdmem.adapters.epub import to_markdown
md, _ = to_markdown(sys.argv[1] + sys.argv[2] * int(sys.argv[3]))
print(len(md), md[:40])
"""


@pytest.mark.parametrize("unit", ["<!--", "<![CDATA[", "<!x", "<?x", "</a", "<a ", "<a b='", "<", '<a"<'])
def test_markup_that_never_closes_is_read_in_linear_time(unit: str) -> None:
    """html.parser rescans the rest of the text from every "<" that does not close (CVE-2025-6069:
    "<!--" 80,000 times took 27.7 s; these 300,000 times would take minutes). The text before is kept."""
    proc = subprocess.run(
        [sys.executable, "-c", CVE_SCRIPT, "<p>kept words</p>", unit, "300000"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.split(" ", 1)[1].startswith("kept words")


@pytest.mark.parametrize("opening", ["<a", "<a b", "</a"])
def test_a_tag_that_never_closes_after_a_long_name_is_read_in_linear_time(opening: str) -> None:
    """One unclosed tag whose name or attribute runs on: the tag pattern gave the name's letters back to
    the attributes on each try, O(N²) (16,000 letters: 3.2 s; these 300,000 would take about 20 minutes)."""
    proc = subprocess.run(
        [sys.executable, "-c", CVE_SCRIPT, "<p>kept words</p>" + opening, "b", "300000"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.split(" ", 1)[1].startswith("kept words")


def test_a_control_character_in_the_text_loses_nothing(vault: Path, tmp_path: Path) -> None:
    """ "\x02" marked anchors in the converted text: the words between two of them disappeared."""
    book = epub(tmp_path / "ctl.epub", [("Control", "<p>before \x02middle words\x02 after</p>")])
    joined = "".join(notes_of(vault, imported(vault, book)).values())
    assert "before" in joined and "middle words" in joined and "after" in joined


def test_book_text_is_redacted_as_notes_are(vault: Path, tmp_path: Path) -> None:
    book = epub(tmp_path / "leak.epub", [("Setup", f"<p>Use the token {SECRET} to deploy.</p>")])
    report = imported(vault, book)
    assert report["redacted"] == 1
    joined = "".join(notes_of(vault, report).values())
    assert SECRET not in joined and "[REDACTED:github-token]" in joined
    assert SECRET not in git(vault, "log", "-p", "--all")


def test_a_pdf_page_with_too_many_text_operations_is_refused(vault: Path, tmp_path: Path) -> None:
    """200,000 "Tj" on one page took 9.5 s to read; every page of a book that size is refused."""
    book = pdf_stream(tmp_path / "ops.pdf", b"BT /F1 11 Tf " + b"(a) Tj " * 200_000 + b"ET")
    assert "page 1 draws more than 20000 pieces of text" in refused(vault, book)
    small_form = b"BT /F1 11 Tf " + b"(a) Tj " * 500 + b"ET"  # a small form drawn 1,000 times is as many
    book = pdf_stream(tmp_path / "form.pdf", b"", form=small_form, draws=1000)
    assert "page 1 draws more than 20000 pieces of text" in refused(vault, book)
    book = pdf_stream(tmp_path / "quotes.pdf", b"BT /F1 11 Tf " + b"(a) ' " * 30_000 + b"ET")  # the ' operator
    assert "page 1 draws more than 20000 pieces of text" in refused(vault, book)
    no_text = b"q " + b"[ ET " * 40_000 + b"Q"  # 200 KB without text, drawn 100 times (a generated case: 79 s)
    book = pdf_stream(tmp_path / "heavy.pdf", b"", form=no_text, draws=100)
    assert "page 1 draws more than 2 MB of content" in refused(vault, book)


def test_mcp_import_of_a_missing_or_unsupported_path_says_why(git_vault: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import Client

    from mdmem.edges.mcp_server import create_server
    from mdmem.edges.mcp_tools import Served

    (tmp_path / "notes.txt").write_text("plain text")
    with __import__("mdmem").Vault.open(git_vault) as v:
        server = create_server(Served(v))

        async def main() -> list[str]:
            async with Client(server) as c:
                out = []
                for path in (tmp_path / "missing.epub", tmp_path / "notes.txt"):
                    r = await c.call_tool("import_memories", {"path": str(path)})
                    assert r.is_error
                    out.append(r.content[0].text)  # type: ignore[union-attr]
                return out

        missing, unsupported = anyio.run(main)
    assert "missing.epub does not exist" in missing
    assert "import reads MEMORY.md-style markdown" in unsupported


def test_an_mcp_import_does_not_hold_other_calls_while_it_reads(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One client's import of a book held every other client's call for its whole length (37.7 s).
    The book is read before the vault's lock is taken: another client's status answers meanwhile."""
    import threading

    import anyio
    from mcp import Client

    import mdmem.adapters.epub as epub_reader
    from mdmem.edges.mcp_server import create_server
    from mdmem.edges.mcp_tools import Served

    book = epub(tmp_path / "b.epub", [("Waiting", f"<p>{prose('tides', 300, seed=1)}</p>")])
    reading, release = threading.Event(), threading.Event()
    real = epub_reader.read_epub

    def slow_read(*args: object, **kw: object):  # type: ignore[no-untyped-def]
        reading.set()
        release.wait(60)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(epub_reader, "read_epub", slow_read)
    with __import__("mdmem").Vault.open(git_vault) as v:
        server = create_server(Served(v))

        async def main() -> None:
            async with Client(server) as a, Client(server) as b, anyio.create_task_group() as tg:
                done: dict[str, object] = {}

                async def run_import() -> None:
                    done["import"] = await a.call_tool("import_memories", {"path": str(book)})

                tg.start_soon(run_import)
                assert await anyio.to_thread.run_sync(reading.wait, 60)
                watchdog = threading.Timer(20, release.set)  # were status held by the import: let it go
                watchdog.start()
                try:
                    status = await b.call_tool("status", {})
                    answered_while_reading = not release.is_set()
                finally:
                    release.set()
                    watchdog.cancel()
                assert not status.is_error and answered_while_reading
            assert not done["import"].is_error  # type: ignore[attr-defined]

        anyio.run(main)
    assert any("waiting" in p.name for p in (git_vault / "notes" / "books").rglob("*.md"))


def test_walk_html_decodes_and_lowercases_as_html_parser_did() -> None:
    from mdmem.adapters.epub import walk_html

    seen: list[tuple[str, object]] = []

    class Rec:
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            seen.append(("start", (tag, attrs)))

        def handle_endtag(self, tag: str) -> None:
            seen.append(("end", tag))

        def handle_data(self, data: str) -> None:
            seen.append(("data", data))

    walk_html("<P ID='a' hidden>caf&eacute; &lt;b&gt;<BR/><script>if (a<b) {}</script>x &amp y</p>", Rec())
    assert seen == [
        ("start", ("p", [("id", "a"), ("hidden", None)])),
        ("data", "café <b>"),
        ("start", ("br", [])),
        ("end", "br"),
        ("start", ("script", [])),
        ("end", "script"),
        ("data", "x & y"),
        ("end", "p"),
    ]


def test_xml_entities_and_zip_bombs_are_refused(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Already refused before this work; kept here beside the other bounds of a book."""
    import mdmem.adapters.epub as epub_reader

    lol = (
        '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
        '<package xmlns="http://www.idpf.org/2007/opf"><metadata/><manifest/><spine/></package>'
    )
    book = epub(tmp_path / "lol.epub", [("A", "<p>a</p>")], files={"OEBPS/content.opf": lol})
    assert "declares XML entities" in refused(vault, book)
    monkeypatch.setattr(epub_reader, "MAX_UNPACKED", 1 << 20)
    book = epub(tmp_path / "bomb.epub", [("A", "<p>" + "a" * (2 << 20) + "</p>")])
    assert "unpacks to more than 1 MB" in refused(vault, book)
