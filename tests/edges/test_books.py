"""`mdmem import BOOK.pdf|BOOK.epub`: parts from the outline, headings, pages, nav, NCX or spine;
one note per part with its source, an index note, the original kept as an attachment; re-import adds
nothing, a new version updates in place; unreadable books write nothing. PDFs and EPUBs are built here."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from mdmem import Vault
from mdmem.adapters.epub import read_epub, to_markdown
from mdmem.adapters.pdf import read_pdf
from mdmem.core.books import TocEntry, chapter_heading, plan_parts, reflow, strip_furniture
from mdmem.core.chunk import chunk_note
from mdmem.core.errors import BookUnreadable

from ..book_files import TOPICS, Mark, chapter_html, epub, pdf, prose
from ..conftest import git, mdmem_in_process, snapshot

CHAPTERS = ["sourdough", "lighthouse", "beekeeping", "glacier", "chess", "violin"]


def pages_of(topics: list[str], per: int = 3, words: int = 260) -> list[str]:
    """``per`` pages per topic, the first opening with "Chapter N"."""
    out = []
    for i, t in enumerate(topics):
        for k in range(per):
            head = f"Chapter {i + 1}\n\n" if k == 0 else ""
            out.append(head + prose(t, words, seed=100 * i + k))
    return out


def outline_for(topics: list[str], per: int = 3) -> list[Mark]:
    return [Mark(t.title(), i * per, [Mark(f"{t.title()} in practice", i * per + 1)]) for i, t in enumerate(topics)]


def import_(vault: Path, src: Path, *args: str, check: bool = True):  # type: ignore[no-untyped-def]
    return mdmem_in_process("--vault", str(vault), "import", str(src), *args, check=check)


def jimport(vault: Path, src: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(import_(vault, src, "--json").stdout)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A new vault from the template, in git with mdmem's hooks."""
    root = tmp_path / "v"
    mdmem_in_process("init", str(root))
    return root


# -- pure: parts from a table of contents ---------------------------------------------------------------


def test_parts_come_from_the_top_level_through_a_lone_wrapper() -> None:
    units = ["a" * 100] * 6
    toc = [TocEntry("Book", 0, [TocEntry("One", 0), TocEntry("Two", 2), TocEntry("Three", 4)])]
    parts = plan_parts(units, toc, join="\n\n".join)
    assert [(p.title, p.first, p.last) for p in parts] == [("One", 0, 1), ("Two", 2, 3), ("Three", 4, 5)]


def test_a_long_part_is_cut_at_its_children_else_into_pieces_and_front_matter_kept() -> None:
    units = ["intro " * 100] + ["x" * 900] * 8
    toc = [TocEntry("Part I", 1, [TocEntry("Ch 1", 2), TocEntry("Ch 2", 4)]), TocEntry("Part II", 6)]
    parts = plan_parts(units, toc, join="\n\n".join, max_chars=2000)
    assert [(p.title, p.first, p.last) for p in parts] == [
        ("Front matter", 0, 0),
        ("Part I", 1, 1),
        ("Ch 1", 2, 3),
        ("Ch 2", 4, 5),
        ("Part II (1/2)", 6, 7),
        ("Part II (2/2)", 8, 8),
    ]
    assert len({p.key for p in parts}) == len(parts)


def test_same_titles_get_distinct_stable_keys() -> None:
    parts = plan_parts(["t"] * 3, [TocEntry("Notes", 0), TocEntry("Notes", 1), TocEntry("notes ", 2)], join="".join)
    assert [p.key for p in parts] == ["notes", "notes#2", "notes#3"]


@pytest.mark.parametrize(
    ("lines", "title"),
    [
        (["Chapter 3", "Loomings", "Call me Ishmael."], "Chapter 3 — Loomings"),
        (["CHAPTER XII", "It was a dark night, and the wind blew."], "CHAPTER XII"),
        (["Prologue", "Before the storm."], "Prologue — Before the storm."[:0] + "Prologue"),
        (["Chapters of my life were long."], None),
        (["The chapter ends here."], None),
    ],
)
def test_chapter_heading_on_a_page(lines: list[str], title: str | None) -> None:
    assert chapter_heading(lines) == title


def test_running_heads_and_page_numbers_go_chapter_headings_stay() -> None:
    pages = [["Moby-Dick", f"Body text of page {i} is here and long enough.", str(i + 1)] for i in range(8)]
    pages[0].insert(0, "Chapter 1")
    out = strip_furniture(pages)
    assert out[3] == ["Body text of page 3 is here and long enough."]
    assert out[0][0] == "Chapter 1"


def test_reflow_joins_lines_and_hyphens_and_keeps_markdown_out() -> None:
    lines = [
        "The whale swam far away across the deep and dark sea while the sail-",
        "ors watched it from the deck.",
        "# 1 not a heading but a line of the book that happens to start so",
        "Short.",
        "[[not a link]] either, just brackets in a sentence of the book here.",
    ]
    text = reflow(lines)
    assert "sailors watched" in text and "\n\n\\# 1 not a heading" in text and "Short." in text
    assert "[[" not in text


def test_xhtml_to_markdown_keeps_headings_lists_quotes_and_skips_scripts() -> None:
    md, first = to_markdown(
        "<html><head><title>T</title><style>p{}</style></head><body><h1>One</h1>"
        "<p>Para <em>one</em>&nbsp;here.</p><h2 id='s2'>Sub</h2><ul><li>a</li><li>b</li></ul>"
        "<blockquote><p>quoted</p></blockquote><pre>x = 1\n  y</pre><script>bad()</script>"
        "<table><tr><td>c1</td><td>c2</td></tr></table></body></html>",
        {"s2"},
    )
    assert first == "One"
    assert md.split("\n\n") == [
        "# One",
        "Para one here.",
        "\x02s2\x02",
        "## Sub",
        "- a",
        "- b",
        "> quoted",
        "```\nx = 1\n  y\n```",
        "c1 | c2",
    ]


# -- reading PDFs ---------------------------------------------------------------------------------------


def test_pdf_parts_from_the_outline_with_sections_as_headings(tmp_path: Path) -> None:
    book = read_pdf(
        pdf(
            tmp_path / "b.pdf",
            pages_of(CHAPTERS[:3]),
            outline=outline_for(CHAPTERS[:3]),
            title="Crafts of the Coast",
            author="Ann Smith; Bo Lee",
        )
    )
    assert (book.title, book.authors, book.split, book.units) == (
        "Crafts of the Coast",
        ("Ann Smith", "Bo Lee"),
        "outline",
        9,
    )
    assert [(p.title, p.first, p.last) for p in book.parts] == [
        ("Sourdough", 0, 2),
        ("Lighthouse", 3, 5),
        ("Beekeeping", 6, 8),
    ]
    first = book.parts[0].body
    assert "## Sourdough in practice" in first and TOPICS["sourdough"][:40] in first
    assert "lighthouse" not in first.lower()
    assert first.startswith("# Sourdough\n\n")
    chunks = chunk_note("Sourdough", first)
    assert any(c.heading == "Sourdough › Sourdough in practice" for c in chunks)


def test_a_pdf_chapter_that_starts_mid_page_starts_at_its_heading(tmp_path: Path) -> None:
    from ..book_files import wrap

    alpha, beta = wrap(prose("orchard", 400, 1)), wrap(prose("railway", 150, 2))
    assert len(alpha) > 26
    pages = [["Orchards"] + alpha[:20], alpha[20:] + ["Railways"] + beta]
    book = read_pdf(pdf(tmp_path / "b.pdf", pages, outline=[Mark("Orchards", 0), Mark("Railways", 1)]))
    assert [(p.title, p.first, p.last) for p in book.parts] == [("Orchards", 0, 1), ("Railways", 1, 1)]
    assert book.parts[0].body.startswith("# Orchards\n\n") and "railway" not in book.parts[0].body.lower()
    assert book.parts[1].body.startswith("# Railways\n\n") and "orchard" not in book.parts[1].body.lower()
    assert book.parts[1].body.count("Railways") == 1  # the page's own heading line is not repeated


def test_pdf_without_outline_splits_at_chapter_headings(tmp_path: Path) -> None:
    book = read_pdf(pdf(tmp_path / "b.pdf", pages_of(CHAPTERS[:3])))
    assert book.split == "headings" and book.title == "b"
    assert [(p.title, p.first, p.last) for p in book.parts] == [
        ("Chapter 1", 0, 2),
        ("Chapter 2", 3, 5),
        ("Chapter 3", 6, 8),
    ]


def test_pdf_without_outline_or_headings_splits_by_pages(tmp_path: Path) -> None:
    pages = [prose("tides", 200, seed=i) for i in range(23)]
    book = read_pdf(pdf(tmp_path / "b.pdf", pages))
    assert book.split == "pages"
    assert [(p.title, p.first, p.last) for p in book.parts] == [
        ("Pages 1–10", 0, 9),
        ("Pages 11–20", 10, 19),
        ("Pages 21–23", 20, 22),
    ]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: pdf(p, pages_of(CHAPTERS[:1]), images_only=True), "a scan without a text layer"),
        (lambda p: pdf(p, pages_of(CHAPTERS[:1]), encrypt="s3cret"), "encrypted with a password"),
        (lambda p: p.write_bytes(pdf(p, pages_of(CHAPTERS[:2])).read_bytes()[:1500]) and p, "broken or truncated"),
        (lambda p: p.write_bytes(b"<html>not a pdf</html>") and p, "not a PDF"),
    ],
)
def test_unreadable_pdfs_say_why_in_one_line(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.pdf"
    make(path)
    with pytest.raises(BookUnreadable, match=why) as info:
        read_pdf(path)
    assert str(info.value).startswith("bad.pdf: ") and "\n" not in str(info.value)


# -- reading EPUBs --------------------------------------------------------------------------------------


def epub_chapters(topics: list[str]) -> list[tuple[str, str]]:
    return [
        (
            t.title(),
            chapter_html(
                t.title(), prose(t, 300, seed=i), sections=[(f"{t.title()} in practice", prose(t, 200, seed=50 + i))]
            ),
        )
        for i, t in enumerate(topics)
    ]


@pytest.mark.parametrize(("version", "split"), [(3, "nav"), (2, "ncx")])
def test_epub_parts_from_nav_or_ncx_with_headings_kept(tmp_path: Path, version: int, split: str) -> None:
    book = read_epub(
        epub(
            tmp_path / "b.epub",
            epub_chapters(CHAPTERS[:3]),
            version=version,
            title="Crafts",
            author="Ann Smith",
            front="<p>Cover</p>",
            nav_in_spine=version == 3,
        )
    )
    assert (book.title, book.authors, book.split) == ("Crafts", ("Ann Smith",), split)
    assert book.units == 4  # the cover and three chapters; the nav document, even in the spine, is no page
    assert [p.title for p in book.parts] == ["Sourdough", "Lighthouse", "Beekeeping"]  # a bare cover is no part
    body = book.parts[1].body
    assert body.startswith("# Lighthouse\n\n") and "\n\n## Lighthouse in practice\n\n" in body
    assert TOPICS["lighthouse"] in body and "sourdough" not in body.lower()


def test_epub_entries_into_one_document_cut_it_at_their_anchors(tmp_path: Path) -> None:
    both = chapter_html("Chess", prose("chess", 200, 1), anchor="chess") + chapter_html(
        "Violin", prose("violin", 200, 2), anchor="violin"
    )
    nav = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
        '<nav epub:type="toc"><ol><li><a href="text/ch01.xhtml#chess">Chess</a></li>'
        '<li><a href="text/ch01.xhtml#violin">Violin</a><ol><li><a href="text/ch01.xhtml#violin">Strings</a>'
        "</li></ol></li></ol></nav></body></html>"
    )
    book = read_epub(epub(tmp_path / "b.epub", [("Both", both)], nav=nav))
    assert [p.title for p in book.parts] == ["Chess", "Violin"]
    assert "violin" not in book.parts[0].body.lower() and TOPICS["violin"] in book.parts[1].body


def test_epub_without_a_usable_table_of_contents_uses_the_spine(tmp_path: Path) -> None:
    nav = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
        '<nav epub:type="toc"><ol></ol></nav></body></html>'
    )
    book = read_epub(epub(tmp_path / "b.epub", epub_chapters(CHAPTERS[:2]), nav=nav))
    assert book.split == "spine" and [p.title for p in book.parts] == ["Sourdough", "Lighthouse"]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: epub(p, epub_chapters(CHAPTERS[:1]), encrypted=True), "encrypted \\(DRM\\)"),
        (lambda p: epub(p, epub_chapters(CHAPTERS[:1]), files={"META-INF/rights.xml": "<rights/>"}), "DRM"),
        (lambda p: p.write_bytes(epub(p, epub_chapters(CHAPTERS[:2])).read_bytes()[:900]) and p, "not a readable EPUB"),
        (
            lambda p: epub(p, epub_chapters(CHAPTERS[:1]), files={"OEBPS/content.opf": "<package><spine>"}),
            "not well-formed XML",
        ),
        (lambda p: zipfile.ZipFile(p, "w").close() or p, "no META-INF/container.xml"),
        (
            lambda p: epub(
                p, epub_chapters(CHAPTERS[:1]), files={"OEBPS/text/ch01.xhtml": "<html><body></body></html>"}
            ),
            "no text found",
        ),
    ],
)
def test_unreadable_epubs_say_why_in_one_line(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.epub"
    make(path)
    with pytest.raises(BookUnreadable, match=why) as info:
        read_epub(path)
    assert str(info.value).startswith("bad.epub: ") and "\n" not in str(info.value)


def test_font_obfuscation_is_not_drm(tmp_path: Path) -> None:
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod '
        'Algorithm="http://www.idpf.org/2008/embedding"/></enc:EncryptedData></encryption>'
    )
    book = read_epub(epub(tmp_path / "b.epub", epub_chapters(CHAPTERS[:1]), files={"META-INF/encryption.xml": enc}))
    assert [p.title for p in book.parts] == ["Sourdough"]


# -- importing into a vault -----------------------------------------------------------------------------


def test_import_pdf_writes_parts_index_and_attachment_in_one_commit(vault: Path, tmp_path: Path) -> None:
    src = pdf(
        tmp_path / "Coastal Crafts.pdf",
        pages_of(CHAPTERS[:3]),
        outline=outline_for(CHAPTERS[:3]),
        title="Crafts of the Coast",
        author="Ann Smith",
    )
    head, before = git(vault, "rev-parse", "HEAD").strip(), snapshot(vault)
    dry = json.loads(import_(vault, src, "--dry-run", "--json").stdout)
    assert sorted(dry["written"]) == [
        "(new) Beekeeping",
        "(new) Crafts of the Coast",
        "(new) Lighthouse",
        "(new) Sourdough",
    ]
    assert snapshot(vault) == before and git(vault, "rev-parse", "HEAD").strip() == head
    r = jimport(vault, src)
    assert r["kind"] == "pdf" and r["attachment"] == "attachments/books/coastal-crafts.pdf" and r["split"] == "outline"
    assert sorted(r["written"]) == [
        "notes/books/coastal-crafts/01-sourdough.md",
        "notes/books/coastal-crafts/02-lighthouse.md",
        "notes/books/coastal-crafts/03-beekeeping.md",
        "notes/books/coastal-crafts/coastal-crafts.md",
    ]
    assert (vault / r["attachment"]).read_bytes() == src.read_bytes()
    assert git(vault, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(vault, "status", "--porcelain").strip() == ""
    v = Vault.open(vault)
    ch2 = v.get("notes/books/coastal-crafts/02-lighthouse")
    assert (ch2.type, ch2.meta["source"], ch2.meta["pages"], ch2.meta["part"]) == (
        "reference",
        "attachments/books/coastal-crafts.pdf",
        "4-6",
        2,
    )
    assert ch2.entities == ["Crafts of the Coast", "Ann Smith"] and ch2.tags == ["book"]
    assert "[[attachments/books/coastal-crafts.pdf#page=4|Coastal Crafts.pdf]]" in ch2.body
    index = v.get("Crafts of the Coast")
    assert index.type == "hub" and index.meta["source_hash"].startswith("sha256:")
    assert index.body.index("01-sourdough") < index.body.index("02-lighthouse") < index.body.index("03-beekeeping")
    # every link resolves, the attachment included (as mdmem and Obsidian resolve it), and the parts follow each other
    links = json.loads(mdmem_in_process("--vault", str(vault), "links", ch2.id, "--json").stdout)
    assert not any(e["dangling"] for e in links["links"])
    targets = {(e["type"], e["to"]["path"]) for e in links["links"]}
    assert ("mentions", "attachments/books/coastal-crafts.pdf") in targets
    assert ("mentions", index.path) in targets and ("follows", "notes/books/coastal-crafts/01-sourdough.md") in targets
    doctor = mdmem_in_process("--vault", str(vault), "doctor", "--json", check=False)
    assert "dangling" not in doctor.stdout and "missing attachment" not in doctor.stdout, doctor.stdout


def test_reimport_adds_nothing_and_a_new_version_updates_in_place(vault: Path, tmp_path: Path) -> None:
    src = tmp_path / "crafts.epub"
    epub(src, epub_chapters(CHAPTERS[:4]), title="Crafts", author="Ann Smith")
    first = jimport(vault, src)
    assert len(first["written"]) == 5
    before, head = snapshot(vault), git(vault, "rev-parse", "HEAD").strip()
    again = jimport(vault, src)
    assert again["written"] == again["updated"] == [] and again["skipped"] == 5 and again["commit"] is None
    assert snapshot(vault) == before and git(vault, "rev-parse", "HEAD").strip() == head

    v = Vault.open(vault)
    ids = {n: v.get(f"notes/books/crafts/0{i}-{n}").id for i, n in enumerate(CHAPTERS[:4], 1)}
    edited = vault / "notes/books/crafts/01-sourdough.md"
    edited.write_text(edited.read_text() + "\nMy own note: try 70% hydration.\n")
    git(vault, "commit", "-qam", "my note")
    # version 2: lighthouse rewritten, glacier gone, chess and violin new; sourdough changed but edited by hand
    chapters = epub_chapters(CHAPTERS[:4])
    chapters[0] = ("Sourdough", chapter_html("Sourdough", "Entirely new text about rye."))
    chapters[1] = ("Lighthouse", chapter_html("Lighthouse", prose("lighthouse", 150, seed=9) + " The foghorn sounds."))
    chapters = chapters[:3] + epub_chapters(["chess", "violin"])
    epub(src, chapters, title="Crafts", author="Ann Smith")
    r = jimport(vault, src)
    # a new part's file is numbered by its place in the version that brought it
    assert sorted(r["written"]) == ["notes/books/crafts/04-chess.md", "notes/books/crafts/05-violin.md"]
    assert sorted(r["updated"]) == ["notes/books/crafts/02-lighthouse.md", "notes/books/crafts/crafts.md"]
    assert r["forgotten"] == ["notes/books/crafts/04-glacier.md"] and r["kept"] == [
        "notes/books/crafts/01-sourdough.md"
    ]
    assert git(vault, "log", "-1", "--format=%s").startswith('mdmem: import the book "Crafts"')
    v = Vault.open(vault)
    light = v.get(ids["lighthouse"])
    assert light.path == "notes/books/crafts/02-lighthouse.md" and "The foghorn sounds." in light.body
    assert "My own note: try 70% hydration." in edited.read_text() and "Entirely new" not in edited.read_text()
    glacier = v.get(ids["glacier"])
    assert glacier.status == "forgotten" and TOPICS["glacier"] in glacier.body  # nothing deleted
    assert glacier.meta["removed_from_source"]
    chess = v.get("notes/books/crafts/04-chess")
    assert chess.meta["part"] == 4 and {"to": ids["beekeeping"], "type": "follows"} in chess.meta["links"]
    index = v.get("Crafts")
    assert "04-glacier" not in index.body and "04-chess" in index.body
    # the glacier chapter returns in version 3: its note is active again
    epub(src, epub_chapters(CHAPTERS[:4]), title="Crafts", author="Ann Smith")
    r = jimport(vault, src)
    assert "notes/books/crafts/04-glacier.md" in r["updated"] and r["forgotten"] == [
        "notes/books/crafts/04-chess.md",
        "notes/books/crafts/05-violin.md",
    ]
    assert Vault.open(vault).get(ids["glacier"]).status == "active"


@pytest.mark.parametrize(
    ("name", "make", "why"),
    [
        ("scan.pdf", lambda p: pdf(p, pages_of(CHAPTERS[:1]), images_only=True), "no text layer|a scan"),
        ("locked.pdf", lambda p: pdf(p, pages_of(CHAPTERS[:1]), encrypt="pw"), "encrypted"),
        ("cut.pdf", lambda p: p.write_bytes(pdf(p, pages_of(CHAPTERS[:2])).read_bytes()[:2000]), "truncated"),
        ("drm.epub", lambda p: epub(p, epub_chapters(CHAPTERS[:1]), encrypted=True), "DRM"),
        (
            "cut.epub",
            lambda p: p.write_bytes(epub(p, epub_chapters(CHAPTERS[:2])).read_bytes()[:700]),
            "not a readable",
        ),
    ],
)
def test_an_unreadable_book_writes_nothing_and_exits_1(
    vault: Path,
    tmp_path: Path,
    name: str,
    make,  # type: ignore[no-untyped-def]
    why: str,
) -> None:
    src = tmp_path / name
    make(src)
    before, head = snapshot(vault), git(vault, "rev-parse", "HEAD").strip()
    r = import_(vault, src, check=False)
    assert r.returncode == 1 and r.stdout == ""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and name in lines[0] and "Traceback" not in r.stderr, r.stderr
    import re

    assert re.search(why, lines[0]), lines[0]
    assert snapshot(vault) == before and git(vault, "rev-parse", "HEAD").strip() == head


def test_a_question_one_chapter_answers_finds_its_note_in_the_top_3(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    topics = list(TOPICS)
    src = pdf(
        tmp_path / "almanac.pdf",
        pages_of(topics, per=2, words=300),
        outline=outline_for(topics, per=2),
        title="The Almanac",
    )
    jimport(vault, src)
    v = Vault.open(vault)
    v.embed()
    questions = {
        "sourdough": "how long does the dough prove before the loaves are baked",
        "tides": "when do spring tides happen and why are boats aground",
        "printing": "how was the type inked and pressed onto the sheet",
    }
    for topic, q in questions.items():
        top = [h.path for h in v.query(q, limit=3)]
        assert any(p.endswith(f"-{topic}.md") for p in top), (q, top)


def test_the_real_model_finds_the_chapter_a_paraphrase_asks_about(vault: Path, tmp_path: Path) -> None:
    topics = list(TOPICS)[:6]
    src = tmp_path / "almanac.epub"
    epub(src, epub_chapters(topics), title="The Almanac")
    jimport(vault, src)
    v = Vault.open(vault)
    v.embed()
    top = [h.path for h in v.query("who keeps the light burning for sailors at night", limit=3)]
    assert any(p.endswith("-lighthouse.md") for p in top), top


def test_import_help_names_books() -> None:
    assert "PDF, EPUB" in mdmem_in_process("import", "--help").stdout


def test_mcp_import_memories_takes_a_book_by_absolute_path(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .test_mcp import run, stdio_session, text

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    src = epub(tmp_path / "crafts.epub", epub_chapters(CHAPTERS[:2]), title="Crafts")
    bad = pdf(tmp_path / "scan.pdf", pages_of(CHAPTERS[:1]), images_only=True)

    async def main() -> None:
        async with stdio_session(vault, tmp_path / "err.log") as s:
            await s.initialize()
            r = await s.call_tool("import_memories", {"path": str(src)})
            assert not r.is_error and len(r.structured_content["written"]) == 3, text(r)
            assert r.structured_content["attachment"] == "attachments/books/crafts.epub"
            again = await s.call_tool("import_memories", {"path": str(src)})
            assert again.structured_content["written"] == [] and again.structured_content["skipped"] == 3
            for path, why in ((str(bad), "scan.pdf: "), ("crafts.epub", "absolute path")):
                r = await s.call_tool("import_memories", {"path": path})
                assert r.is_error and why in text(r), text(r)

    run(main)
    assert (vault / "attachments/books/crafts.epub").read_bytes() == src.read_bytes()
    assert not (vault / "attachments/books/scan.pdf").exists()


def test_reading_reports_progress_and_opens_a_pdf_restricted_by_an_owner_password_only(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    from pypdf import PdfReader

    src = pdf(tmp_path / "b.pdf", pages_of(CHAPTERS[:4], per=3), encrypt="")  # no user password: readers open it
    assert PdfReader(src).is_encrypted
    book = read_pdf(src, progress=lambda done, total: seen.append((done, total)))
    assert [p.title for p in book.parts] == ["Chapter 1", "Chapter 2", "Chapter 3", "Chapter 4"]
    assert seen == [(10, 12), (12, 12)]
    seen.clear()
    read_epub(epub(tmp_path / "b.epub", epub_chapters(CHAPTERS[:3])), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
