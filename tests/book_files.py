"""Small but real PDF and EPUB files for tests and benchmarks, built in a folder from text alone.

``pdf(path, pages, …)`` writes a PDF whose pages carry text content streams (Helvetica, one line per
``Tj``), an optional outline (bookmarks, nested) and metadata, through pypdf's writer; ``encrypt`` sets
a user password. ``epub(path, chapters, …)`` writes an EPUB 3 (nav document) or EPUB 2 (NCX) with zipfile.
No network, no sample files.
"""

from __future__ import annotations

import textwrap
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path


@dataclass
class Mark:
    """An outline entry: its title, the 0-based page it opens, and its children."""

    title: str
    page: int
    children: list[Mark] = field(default_factory=list)


def _escape_pdf(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def page_stream(lines: Sequence[str]) -> bytes:
    """A content stream that shows each line of text on its own line, top to bottom."""
    ops = ["BT", "/F1 11 Tf", "14 TL", "56 760 Td"]
    for line in lines:
        ops.append(f"({_escape_pdf(line)}) Tj T*")
    ops.append("ET")
    return "\n".join(ops).encode("latin-1", errors="replace")


def wrap(text: str, width: int = 90) -> list[str]:
    """Paragraphs (blank-line separated) as the lines a page shows, a blank line between paragraphs."""
    out: list[str] = []
    for para in text.split("\n\n"):
        out += textwrap.wrap(para, width) + [""]
    return out


def pdf(
    path: Path,
    pages: Sequence[Sequence[str] | str],
    *,
    outline: Sequence[Mark] = (),
    title: str | None = None,
    author: str | None = None,
    encrypt: str | None = None,
    images_only: bool = False,
) -> Path:
    """Write a PDF of ``pages`` (each a list of lines, or text that is wrapped); ``images_only``: pages
    that draw but hold no text (a scan's stand-in)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    for content in pages:
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        if images_only:
            stream.set_data(b"0.5 g 56 56 500 680 re f")  # a grey rectangle: ink, no text
        else:
            stream.set_data(page_stream(wrap(content) if isinstance(content, str) else content))
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        page.replace_contents(stream)

    def add(marks: Sequence[Mark], parent: object = None) -> None:
        for m in marks:
            item = writer.add_outline_item(title=m.title, page_number=m.page, parent=parent)
            add(m.children, item)

    add(outline)
    meta = {k: v for k, v in (("/Title", title), ("/Author", author)) if v}
    if meta:
        writer.add_metadata(meta)
    if encrypt is not None:  # "": an owner password only (readers open it without asking)
        writer.encrypt(user_password=encrypt, owner_password=encrypt + "-owner", algorithm="AES-128")
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def pdf_stream(path: Path, stream: bytes, *, form: bytes | None = None, draws: int = 0) -> Path:
    """A PDF whose first page shows the content stream ``stream`` as it is (and a second page an ordinary
    line of text); ``form``: a form XObject /F0 holding that content, drawn ``draws`` times by the page."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject, NumberObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for data in (stream, b"BT /F1 11 Tf 56 700 Td (An ordinary page of text about lighthouses.) Tj ET"):
        page = writer.add_blank_page(612, 792)
        res = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        if form is not None and data is stream:
            xo = DecodedStreamObject()
            xo.set_data(form)
            xo.update(
                {
                    NameObject("/Type"): NameObject("/XObject"),
                    NameObject("/Subtype"): NameObject("/Form"),
                    NameObject("/BBox"): ArrayObject([NumberObject(v) for v in (0, 0, 612, 792)]),
                    NameObject("/Resources"): DictionaryObject(
                        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
                    ),
                }
            )
            res[NameObject("/XObject")] = DictionaryObject({NameObject("/F0"): xo})
            data = data + b" /F0 Do" * draws
        page[NameObject("/Resources")] = res
        content = DecodedStreamObject()
        content.set_data(data)
        page.replace_contents(content)
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def xhtml(title: str, body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">\n'
        f"<head><title>{escape(title)}</title></head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def chapter_html(title: str, text: str, *, sections: Sequence[tuple[str, str]] = (), anchor: str | None = None) -> str:
    """A chapter's XHTML body: an h1, paragraphs, then h2 sections."""
    paras = "".join(f"<p>{escape(p)}</p>\n" for p in text.split("\n\n") if p.strip())
    head = f'<h1 id="{anchor}">{escape(title)}</h1>' if anchor else f"<h1>{escape(title)}</h1>"
    out = f"<section>{head}\n{paras}"
    for h, t in sections:
        out += f"<h2>{escape(h)}</h2>\n" + "".join(f"<p>{escape(p)}</p>\n" for p in t.split("\n\n") if p.strip())
    return out + "</section>"


def epub(
    path: Path,
    chapters: Sequence[tuple[str, str]],
    *,
    title: str = "A Book",
    author: str = "A. Writer",
    version: int = 3,
    files: dict[str, str] | None = None,
    nav: str | None = None,
    encrypted: bool = False,
    front: str | None = None,
    nav_in_spine: bool = False,
) -> Path:
    """Write an EPUB with one XHTML file per (title, XHTML body) chapter; EPUB 3 has a nav document,
    EPUB 2 an NCX (``nav_in_spine``: the nav document is also a page of the book). ``files`` replaces or adds entries (to break the book); ``front``: a cover page's
    body before the first chapter, not in the table of contents."""
    docs = [(f"text/ch{i:02d}.xhtml", t, b) for i, (t, b) in enumerate(chapters, 1)]
    items = [f'<item id="c{i}" href="{h}" media-type="application/xhtml+xml"/>' for i, (h, _, _) in enumerate(docs, 1)]
    spine = [f'<itemref idref="c{i}"/>' for i in range(1, len(docs) + 1)]
    entries: dict[str, str] = {}
    if front is not None:
        entries["OEBPS/text/cover.xhtml"] = xhtml("Cover", front)
        items.insert(0, '<item id="cover" href="text/cover.xhtml" media-type="application/xhtml+xml"/>')
        spine.insert(0, '<itemref idref="cover"/>')
    for h, t, b in docs:
        entries[f"OEBPS/{h}"] = xhtml(t, b)
    if version == 3:
        lis = "".join(f'<li><a href="{h}">{escape(t)}</a></li>' for h, t, _ in docs)
        entries["OEBPS/nav.xhtml"] = nav or xhtml(
            "Contents", f'<nav epub:type="toc"><h1>Contents</h1><ol>{lis}</ol></nav>'
        )
        items.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>')
        if nav_in_spine:  # a "Contents" page the reader pages through
            spine.insert(0, '<itemref idref="nav"/>')
        toc_attr = ""
    else:
        points = "".join(
            f'<navPoint id="p{i}" playOrder="{i}"><navLabel><text>{escape(t)}</text></navLabel>'
            f'<content src="{h}"/></navPoint>'
            for i, (h, t, _) in enumerate(docs, 1)
        )
        entries["OEBPS/toc.ncx"] = nav or (
            '<?xml version="1.0" encoding="utf-8"?>\n'
            '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
            f"<docTitle><text>{escape(title)}</text></docTitle><navMap>{points}</navMap></ncx>"
        )
        items.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
        toc_attr = ' toc="ncx"'
    entries["OEBPS/content.opf"] = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<package xmlns="http://www.idpf.org/2007/opf" version="{version}.0" unique-identifier="uid">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="uid">urn:test:{escape(title)}</dc:identifier><dc:title>{escape(title)}</dc:title>'
        f"<dc:creator>{escape(author)}</dc:creator><dc:language>en</dc:language></metadata>"
        f"<manifest>{''.join(items)}</manifest><spine{toc_attr}>{''.join(spine)}</spine></package>"
    )
    entries["META-INF/container.xml"] = (
        '<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    if encrypted:
        entries["META-INF/encryption.xml"] = (
            '<?xml version="1.0"?>\n<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
            '<enc:CipherData><enc:CipherReference URI="OEBPS/text/ch01.xhtml"/></enc:CipherData>'
            "</enc:EncryptedData></encryption>"
        )
    entries.update(files or {})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")  # first and stored, as the spec says
        for name, data in entries.items():
            z.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


# -- prose -------------------------------------------------------------------------------------------

TOPICS: dict[str, str] = {
    "sourdough": "The baker feeds the sourdough starter with rye flour each morning, and the dough proves "
    "overnight in a cool larder before the loaves go into the wood-fired oven.",
    "lighthouse": "The keeper climbs the lighthouse stairs at dusk to trim the lamp wick and polish the "
    "Fresnel lens so ships can round the reef in fog.",
    "beekeeping": "Each spring the beekeeper inspects the hives for the queen, adds a honey super and "
    "smokes the entrance so the colony stays calm while the frames are lifted.",
    "glacier": "The glaciologists drilled an ice core on the glacier and counted the annual layers of "
    "dust and ash to date the eruptions of the last ten thousand years.",
    "chess": "In the endgame the grandmaster pushed the passed pawn, sacrificed the rook and forced "
    "checkmate with knight and bishop before the clock ran out.",
    "violin": "The luthier carved the spruce top of the violin, fitted the sound post and varnished the "
    "maple back with amber resin before stringing it with gut.",
    "orchard": "The growers grafted apple scions onto dwarf rootstock, pruned the orchard in winter and "
    "thinned the fruit in June so the remaining apples would size up.",
    "railway": "The engineers surveyed the mountain pass, blasted two tunnels and laid the narrow gauge "
    "railway along the river gorge with a rack section for the steepest grade.",
    "tides": "The harbour master posts the tide tables: spring tides follow the full and new moon, and "
    "neap tides leave the fishing boats aground at the quay twice a day.",
    "printing": "The printer set the type by hand, locked the forme in the chase, inked it with a roller "
    "and pulled each sheet on the iron hand press.",
}
FILLER = (
    "the morning was quiet and the work went on as it always had while people talked about the weather "
    "the road the prices at the market and the news from the town across the valley"
).split()


def prose(topic: str, words: int, seed: int) -> str:
    """Paragraphs of plain filler with the topic's sentence worked in a few times: a chapter about it."""
    import random

    rnd = random.Random(seed)
    paras = []
    left = words
    while left > 0:
        n = min(left, rnd.randint(60, 120))
        text = " ".join(rnd.choice(FILLER) for _ in range(n))
        paras.append(text[0].upper() + text[1:] + ". " + TOPICS[topic])
        left -= n + 25
    return "\n\n".join(paras)
