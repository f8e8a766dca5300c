"""Benchmark of ``mdmem import`` for books: a 300-page text PDF and a 20-chapter EPUB, each
into a fresh git vault; then whether a question one chapter answers finds that chapter's note.

    python benchmarks/bench_books.py [--pages 300] [--chapters 20] [--questions 200] [--runs 1]

The books are made of real conversation text: the LoCoMo dialogues (``../shared/data/locomo10.json``,
727k characters, research use only: read at run time, never stored), one session after another, as
"Speaker: words" paragraphs. The PDF is a 6×9-inch book page (34 lines of ≤ 70 characters, ~2,400
characters a page, which LoCoMo fills to ~300 pages), in chapters of about equal length that start on a
new page with "Chapter N" and carry an outline (chapters, and sessions as their sections). The EPUB
has ``--chapters`` chapters of the same text, one XHTML file each, a nav document, sessions as ``h2``.

Measured for each book, every command a fresh process (spawn to exit, under the same wrapper as
``bench_spine``): ``mdmem import BOOK`` with the automatic embedding off (reading the book, writing the
notes and the attachment, BM25 and the catalogue, the commit), then ``mdmem embed`` (every chunk of the
imported notes through the default model). "import + vectors" is their sum: what it takes until
``query`` has both legs. Import with ``[embed] auto`` on (the default) returns after the same work and
hands the embedding to the background job, so its wall time is the first figure.

Retrieval: LoCoMo questions (categories 1–4) whose evidence lies in one session, asked with
``Vault.query`` in one warm process (default model); a hit when a note holding that session is in the
top 3. "chapter" notes hold several sessions, so the question picks one chapter out of ~20 (PDF) or 20.
Results in ``benchmarks/out/books.md`` and ``.json``. The machine is shared: see the load figures.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from html import escape
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_spine import GIT_ID, child_env, log, machine, measure, write_results  # noqa: E402
from setup_env import compile_package  # noqa: E402

from tests.book_files import Mark, epub, pdf  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "locomo10.json"
TARGET_S = 60.0  # each book imports in under a minute on 2 cores
LINES_PER_PAGE, LINE_CHARS = 34, 70


def sessions(data: list[dict[str, Any]]) -> list[tuple[str, list[str], str]]:
    """(session id "c<conv>-s<n>", paragraphs, heading) for every LoCoMo session in order."""
    out = []
    for ci, conv in enumerate(data):
        c = conv["conversation"]
        n = 1
        while f"session_{n}" in c:
            turns = [f"{t['speaker']}: {t['text']}" for t in c[f"session_{n}"]]
            heading = f"{c['speaker_a']} and {c['speaker_b']}, {c.get(f'session_{n}_date_time', '')}".strip(", ")
            out.append((f"c{ci}-s{n}", turns, heading))
            n += 1
    return out


def groups(items: list[Any], k: int, size: Any) -> list[list[Any]]:
    """``items`` in order, cut into ``k`` runs of about equal total ``size``."""
    total = sum(size(x) for x in items)
    out: list[list[Any]] = [[]]
    acc = 0.0
    for x in items:
        if out[-1] and acc >= total * len(out) / k and len(out) < k:
            out.append([])
        out[-1].append(x)
        acc += size(x)
    return out


def session_lines(turns: list[str], heading: str) -> list[str]:
    """A session as the PDF's lines: its heading, then each turn wrapped, a blank line after each."""
    lines = [heading, ""]
    for turn in turns:
        lines += textwrap.wrap(turn, LINE_CHARS) + [""]
    return lines


def fit(sess: list[tuple[str, list[str], str]], pages: int) -> list[tuple[str, list[str], str]]:
    """The first sessions that fill about ``pages`` PDF pages."""
    out, lines = [], 0
    for s in sess:
        if lines >= pages * LINES_PER_PAGE:
            break
        out.append(s)
        lines += len(session_lines(s[1], s[2]))
    return out


def make_pdf(
    path: Path, sess: list[tuple[str, list[str], str]], chapters: int
) -> tuple[Path, dict[str, tuple[int, int]], int]:
    """The PDF; (path, session → its pages (1-based, first and last), pages)."""
    pages: list[list[str]] = []
    outline: list[Mark] = []
    where: dict[str, tuple[int, int]] = {}
    for ch, group in enumerate(groups(sess, chapters, lambda s: sum(map(len, s[1]))), 1):
        lines = [f"Chapter {ch}", f"Conversations, part {ch}", ""]
        first = len(pages)
        mark = Mark(f"Chapter {ch}. Conversations, part {ch}", first)
        for sid, turns, heading in group:
            at = len(lines)
            lines += session_lines(turns, heading)
            where[sid] = (first + at // LINES_PER_PAGE + 1, first + (len(lines) - 1) // LINES_PER_PAGE + 1)
            mark.children.append(Mark(heading, first + at // LINES_PER_PAGE))
        for i in range(0, len(lines), LINES_PER_PAGE):
            pages.append(lines[i : i + LINES_PER_PAGE])
        outline.append(mark)
    pdf(path, pages, outline=outline, title="Conversations", author="LoCoMo")
    return path, where, len(pages)


def make_epub(path: Path, sess: list[tuple[str, list[str], str]], chapters: int) -> tuple[Path, dict[str, int]]:
    docs = []
    where: dict[str, int] = {}
    for ch, group in enumerate(groups(sess, chapters, lambda s: sum(map(len, s[1]))), 1):
        body = f"<section><h1>Chapter {ch}</h1>"
        for sid, turns, heading in group:
            where[sid] = ch
            body += f"<h2>{escape(heading)}</h2>" + "".join(f"<p>{escape(t)}</p>" for t in turns)
        docs.append((f"Chapter {ch}", body + "</section>"))
    epub(path, docs, title="Conversations", author="LoCoMo")
    return path, where


def questions(data: list[dict[str, Any]], limit: int) -> list[tuple[str, str]]:
    """(question, session id) for questions of categories 1–4 whose evidence is in one session."""
    out = []
    for ci, conv in enumerate(data):
        for qa in conv["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            ids = re.findall(r"D:?(\d+):\d+", " ".join(map(str, qa.get("evidence") or [])))
            if ids and len(set(ids)) == 1:
                out.append((qa["question"], f"c{ci}-s{int(ids[0])}"))
    step = max(1, len(out) // limit)
    return out[::step][:limit]


def new_vault(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "mdmem", "init", str(root)], env=child_env(), check=True, capture_output=True)
    subprocess.run(["git", *GIT_ID, "-C", str(root), "log", "-1"], check=True, capture_output=True)
    return root


def bench_book(book: Path, where: dict[str, Any], qs: list[tuple[str, str]], work: Path) -> dict[str, Any]:
    vault = new_vault(work / f"vault-{book.suffix[1:]}")
    mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
    log(f"importing {book.name} ({book.stat().st_size / 1e6:.1f} MB)")
    imp = measure([*mdmem, "import", str(book)], cwd=work)
    log(f"  import {imp.wall:.1f} s; embedding")
    emb = measure([*mdmem, "embed"], cwd=work)
    log(f"  embed {emb.wall:.1f} s; {len(qs)} questions")
    from mdmem import Vault

    v = Vault.open(vault)
    # each part's note → what it holds: its pages (PDF: "— pp. a–b" in the index note) or its chapter (EPUB)
    held: dict[str, tuple[int, int] | int] = {}
    for line in v.get("Conversations").body.splitlines():
        m = re.match(r"^\d+\. \[\[([^|\]]+)\|([^\]]*)\]\](?: — pp\. (\d+)–(\d+))?", line)
        if m and m.group(3):
            held[m.group(1) + ".md"] = (int(m.group(3)), int(m.group(4)))
        elif m and (c := re.match(r"Chapter (\d+)", m.group(2))):
            held[m.group(1) + ".md"] = int(c.group(1))

    def holds(path: str, sid: str) -> bool:
        h, w = held.get(path), where[sid]
        if isinstance(h, tuple) and isinstance(w, tuple):
            return h[0] <= w[1] and w[0] <= h[1]  # the note's pages and the session's overlap
        return h == w

    hits, ranks = 0, []
    for q, sid in qs:
        top = [h.path for h in v.query(q, limit=10)]
        rank = next((i for i, p in enumerate(top, 1) if holds(p, sid)), None)
        ranks.append(rank)
        hits += rank is not None and rank <= 3
    v.close()
    return {
        "book": book.name,
        "mb": round(book.stat().st_size / 1e6, 2),
        "parts": len(held),
        "import_s": round(imp.wall, 2),
        "import_rss_mb": round(imp.rss_mb),
        "embed_s": round(emb.wall, 2),
        "embed_rss_mb": round(emb.rss_mb),
        "total_s": round(imp.wall + emb.wall, 2),
        "questions": len(qs),
        "hit_at_3": round(hits / max(1, len(qs)), 3),
        "mrr_at_10": round(sum(1 / r for r in ranks if r) / max(1, len(qs)), 3),
    }


def render(info: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    out = [
        f"# Books import\n\n{info['date']} · mdmem {info['mdmem_rev']} · {info['nproc']} cores "
        f"({info['cpu']}) · load {', '.join(f'{x:.2f}' for x in info['loadavg'])}\n",
        "| book | MB | parts | import s | embed s | import + vectors s | peak RSS import / embed MB | "
        "questions | hit@3 | MRR@10 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['book']} | {r['mb']} | {r['parts']} | {r['import_s']:.1f} | {r['embed_s']:.1f} | "
            f"{r['total_s']:.1f} | {r['import_rss_mb']} / {r['embed_rss_mb']} | {r['questions']} | "
            f"{r['hit_at_3']:.3f} | {r['mrr_at_10']:.3f} |"
        )
    out.append("")
    for r in rows:
        ok = r["import_s"] < TARGET_S
        out.append(
            f"- {r['book']}: import {'<' if ok else '≥'} {TARGET_S:.0f} s "
            f"({'met' if ok else 'MISSED'}); with every chunk embedded {r['total_s']:.1f} s."
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=300, help="pages of the PDF (LoCoMo sessions that fill them) [300]")
    ap.add_argument("--chapters", type=int, default=20, help="chapters of each book [20]")
    ap.add_argument("--questions", type=int, default=200, help="LoCoMo questions asked of each book [200]")
    ap.add_argument("--tmp", type=Path, default=None, help="where to build the books and vaults [system temp]")
    ap.add_argument("--keep", action="store_true", help="keep the books and vaults")
    ap.add_argument("--out", default="books", help="name of the result files in benchmarks/out/ [books]")
    args = ap.parse_args(argv)
    if not DATA.is_file():
        sys.exit(f"{DATA} is missing (the LoCoMo conversations)")
    compile_package()
    data = json.loads(DATA.read_text())
    sess = fit(sessions(data), args.pages)
    kept = {s[0] for s in sess}
    qs = [q for q in questions(data, 10_000) if q[1] in kept]
    qs = qs[:: max(1, len(qs) // args.questions)][: args.questions]
    work = Path(tempfile.mkdtemp(prefix="mdmem-books-", dir=args.tmp))
    try:
        book, where, pages = make_pdf(work / "conversations.pdf", sess, args.chapters)
        log(f"{book.name}: {pages} pages")
        rows = [{**bench_book(book, where, qs, work), "pages": pages}]
        book, where = make_epub(work / "conversations.epub", sess, args.chapters)
        rows.append(bench_book(book, where, qs, work))
        info = machine()
        md = render(info, rows)
        print(md)
        write_results(args.out, md, {"machine": info, "rows": rows})
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
