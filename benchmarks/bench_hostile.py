"""Benchmark of hostile input: notes and books built to make mdmem quadratic, unbounded or stuck, each
in a fresh vault, measured as a user meets them.

    python benchmarks/bench_hostile.py [--cases NAME,…] [--runs 3] [--timeout 120]

A note case writes the note into a new vault and measures ``mdmem reindex`` (indexing it),
``mdmem search`` (a word the note holds), then, after ``mdmem embed`` (the real model: vectors on),
``mdmem query`` and ``mdmem recall`` (the hybrid and recall paths: snippets, chunks, typos, expansion,
link hints and the people the hits name); a book case measures ``mdmem import BOOK`` (imported, or
refused in one line), then ``reindex`` and ``search``. Each figure is the median over ``--runs`` (each
run a new vault, or the note rewritten), wall time and peak RSS of the command's process; a command
over ``--timeout`` seconds is killed and shown as ">T". Goal: any note or book of at most 4 MB,
whatever its content: ``reindex``, ``search``, ``query`` and ``recall`` each under 2 s, peak RSS
under 500 MB (``query``/``recall`` also on the 5 MB cases).
Results: a table on stdout, ``benchmarks/out/hostile.md`` and ``.json``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_spine import child_env, log, machine, write_results  # noqa: E402
from setup_env import compile_package  # noqa: E402

from tests.book_files import epub, pdf_stream, prose  # noqa: E402

GOAL_S, GOAL_MB = 2.0, 500.0
WORD = "quetzal"  # in every hostile note and book, so search has a hit there

# Runs argv[2:] with a timeout of argv[1] seconds; prints wall and CPU seconds, peak RSS (KiB), rc as JSON.
_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
try:
    p = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=float(sys.argv[1]))
    rc, err = p.returncode, p.stderr.decode(errors="replace")
except subprocess.TimeoutExpired:
    rc, err = None, "timeout"
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": use.ru_utime + use.ru_stime, "rss_kib": use.ru_maxrss,
                  "rc": rc, "stderr": err.strip().splitlines()[-1][:160] if err.strip() else ""}))
"""


def run(cmd: list[str], cwd: Path, timeout: float) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(timeout), *cmd],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the cases ----------------------------------------------------------------------------------------


def note_brackets_line(_: Path) -> str:
    return f"# Brackets\n\n{WORD}\n\n" + "[[" * 50_000 + "\n"  # one 100 KB line


def note_wikilinks(size: int) -> Callable[[Path], str]:
    return lambda _: f"# Brackets\n\n{WORD}\n\n" + "[[" * (size // 2) + "\n"  # one line of [[


def note_opening(size: int) -> Callable[[Path], str]:
    return lambda _: f"# Brackets\n\n{WORD}\n\n" + "[" * size + "\n"


def note_words_200kb(_: Path) -> str:
    return "# Words\n\n" + f"{WORD} alpha word beta " * 8_000


def note_paragraphs(_: Path) -> str:
    return "# Paragraphs\n\n" + f"{WORD} alpha word\n\n" * 30_000


def note_brackets_4mb(_: Path) -> str:
    return f"# Brackets\n\n{WORD}\n\n" + ("[" * 99_999 + "\n") * 40


def note_emphasis_4mb(_: Path) -> str:
    return f"# Emphasis\n\n{WORD}\n\n" + "**a " * 1_000_000


def note_prose_4mb(_: Path) -> str:
    return "# Prose\n\n" + prose("lighthouse", 650_000, seed=1).replace("keeper", WORD, 1)


def book_nested(work: Path) -> Path:
    depth = 20_000
    body = f"<p>{WORD}</p>" + "".join(f"<ul><li>item {i} " for i in range(depth)) + "</li></ul>" * depth
    return epub(work / "nested.epub", [("Nested", body)])


def book_huge_chapter(work: Path, mb: int = 100) -> Path:
    """One chapter of ``mb`` MB of paragraphs in a small file (the issue's was 500 MB in 1.5 MB)."""
    import zipfile

    small = epub(work / "small.epub", [("Small", f"<p>{WORD}</p>"), ("Huge", "<p>HUGE</p>")])
    path = work / "huge.epub"
    chunk = ("<p>" + "lorem ipsum dolor " * 50 + "</p>\n").encode() * 1000
    with zipfile.ZipFile(small) as src, zipfile.ZipFile(path, "w") as z:
        for name in src.namelist():
            data = src.read(name)
            if not name.endswith("ch02.xhtml"):
                z.writestr(name, data, compress_type=zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
                continue
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            head, _, tail = data.partition(b"<p>HUGE</p>")
            with z.open(info, "w", force_zip64=True) as fh:
                fh.write(head)
                for _ in range(mb * (1 << 20) // len(chunk)):
                    fh.write(chunk)
                fh.write(tail)
    small.unlink()
    return path


def book_comments(work: Path) -> Path:
    """The chapter's document ends in the comments: html.parser was quadratic only when no ">" followed."""
    doc = f"<html><body><p>{WORD}</p>" + "<!--" * 80_000
    return epub(work / "comments.epub", [("Comments", "<p>x</p>")], files={"OEBPS/text/ch01.xhtml": doc})


def book_pdf_ops(work: Path) -> Path:
    stream = b"BT /F1 11 Tf 56 700 Td (" + WORD.encode() + b") Tj " + b"(a) Tj " * 200_000 + b"ET"
    return pdf_stream(work / "ops.pdf", stream)


def book_long_chapter(work: Path) -> Path:
    text = prose("glacier", 32_000, seed=4).replace("glaciologists", WORD, 1)
    return epub(work / "long.epub", [("The long chapter", "".join(f"<p>{p}</p>" for p in text.split("\n\n")))])


NOTES: dict[str, tuple[str, Callable[[Path], str]]] = {
    "brackets-line": ("note: one 100 KB line of [[", note_brackets_line),
    "paragraphs": ("note: 30,000 paragraphs holding the word", note_paragraphs),
    "brackets-4mb": ("note: 4 MB of [", note_brackets_4mb),
    "wikilinks-50kb": ("note: 50 KB of [[", note_wikilinks(50_000)),
    "wikilinks-200kb": ("note: 200 KB of [[", note_wikilinks(200_000)),
    "wikilinks-5mb": ("note: 5 MB of [[", note_wikilinks(5_000_000)),
    "opening-200kb": ("note: 200 KB of [", note_opening(200_000)),
    "opening-5mb": ("note: 5 MB of [", note_opening(5_000_000)),
    "words-200kb": ("note: 200 KB of plain words (control)", note_words_200kb),
    "emphasis-4mb": ("note: 4 MB of **a", note_emphasis_4mb),
    "prose-4mb": ("note: 4 MB of prose (control)", note_prose_4mb),
}
BOOKS: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "epub-nested": ("EPUB: lists nested 20,000 deep", book_nested),
    "epub-huge": ("EPUB: one chapter of 100 MB", book_huge_chapter),
    "epub-comments": ("EPUB: <!-- 80,000 times, never closed", book_comments),
    "pdf-ops": ("PDF: a page of 200,000 Tj", book_pdf_ops),
    "epub-long": ("EPUB: one 195 KB chapter (control)", book_long_chapter),
}


def new_vault(work: Path, name: str) -> Path:
    root = work / name
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "mdmem", "init", str(root)], env=child_env(), check=True, capture_output=True)
    return root


def summary(samples: list[dict[str, Any]], timeout: float) -> dict[str, Any]:
    done = [s for s in samples if s["rc"] is not None]
    whole = len(done) == len(samples)
    return {
        "s": round(statistics.median(s["wall"] for s in done), 2) if whole else None,
        "cpu_s": round(statistics.median(s["cpu"] for s in done), 2) if whole else None,
        "rss_mb": round(max(s["rss_kib"] for s in samples) / 1024),
        "timeout": timeout,
        "rc": [s["rc"] for s in samples],
        "said": samples[-1]["stderr"],
    }


def bench_note(key: str, work: Path, runs: int, timeout: float) -> dict[str, Any]:
    title, make = NOTES[key]
    text = make(work)
    vault = new_vault(work, key)
    mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
    reindex, search, query, recall = [], [], [], []
    for i in range(runs):
        (vault / "notes" / "hostile.md").write_text(text + f"\nrun {i}\n")  # changed each run: reindexed
        log(f"  {key}: reindex (run {i + 1})")
        reindex.append(run([*mdmem, "reindex"], vault, timeout))
        log(f"  {key}: search (run {i + 1})")
        search.append(run([*mdmem, "search", WORD], vault, timeout))
        subprocess.run([*mdmem, "embed"], env=child_env(), check=True, capture_output=True)  # vectors on
        log(f"  {key}: query (run {i + 1})")
        query.append(run([*mdmem, "query", WORD], vault, timeout))
        log(f"  {key}: recall (run {i + 1})")
        recall.append(run([*mdmem, "recall", f"what do we know about {WORD}"], vault, timeout))
    return {
        "case": key,
        "title": title,
        "mb": round(len(text.encode()) / 1e6, 2),
        "reindex": summary(reindex, timeout),
        "search": summary(search, timeout),
        "query": summary(query, timeout),
        "recall": summary(recall, timeout),
    }


def bench_book(key: str, work: Path, runs: int, timeout: float) -> dict[str, Any]:
    title, make = BOOKS[key]
    book = make(work)
    imports, reindex, search = [], [], []
    for i in range(runs):
        vault = new_vault(work, f"{key}-{i}")
        mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
        log(f"  {key}: import (run {i + 1})")
        imports.append(run([*mdmem, "import", str(book)], work, timeout))
        reindex.append(run([*mdmem, "reindex"], vault, timeout))
        search.append(run([*mdmem, "search", WORD], vault, timeout))
        shutil.rmtree(vault, ignore_errors=True)
    return {
        "case": key,
        "title": title,
        "mb": round(book.stat().st_size / 1e6, 3),
        "import": summary(imports, timeout),
        "reindex": summary(reindex, timeout),
        "search": summary(search, timeout),
    }


def cell(fig: dict[str, Any] | None) -> str:
    if fig is None:
        return "—"
    if fig["s"] is None:
        return f">{fig['timeout']:.0f} s / {fig['rss_mb']} MB"
    return f"{fig['s']:.2f} s ({fig['cpu_s']:.2f}) / {fig['rss_mb']} MB"


def render(info: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    out = [
        f"# Hostile input\n\n{info['date']} · mdmem {info['mdmem_rev']} · {info['nproc']} cores · load "
        f"{info['loadavg'][0]:.1f} · medians of {info['runs']} run(s): wall s (CPU s) / peak RSS\n",
        "| case | file MB | import (outcome) | reindex | search | query | recall | goal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        imp = r.get("import")
        outcome = ""
        if imp is not None:
            outcome = (
                "imported"
                if imp["rc"] and imp["rc"][-1] == 0
                else (f"refused: {imp['said'].removeprefix('Error: ')[:70]}" if imp["s"] is not None else "killed")
            )
        ok = all(
            f is not None and f["s"] is not None and f["s"] < GOAL_S and f["rss_mb"] < GOAL_MB
            for f in (r["reindex"], r["search"], r.get("query", {}), r.get("recall", {}))
            if f != {}
        ) and (imp is None or imp["rss_mb"] < GOAL_MB)
        out.append(
            f"| {r['title']} | {r['mb']} | {cell(imp)}{' (' + outcome + ')' if outcome else ''} | "
            f"{cell(r['reindex'])} | {cell(r['search'])} | {cell(r.get('query'))} | {cell(r.get('recall'))} | "
            f"{'ok' if ok else 'MISSED'} |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join([*NOTES, *BOOKS]), help="comma-separated case names [all]")
    ap.add_argument("--runs", type=int, default=3, help="repetitions per figure; medians are reported [3]")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a command is killed [120]")
    ap.add_argument("--tmp", type=Path, default=None, help="where to build the vaults [system temp]")
    ap.add_argument("--out", default="hostile", help="name of the result files in benchmarks/out/ [hostile]")
    args = ap.parse_args(argv)
    compile_package()
    info = {**machine(), "runs": args.runs}
    rows = []
    with tempfile.TemporaryDirectory(prefix="mdmem-hostile-", dir=args.tmp) as tmp:
        work = Path(tmp)
        for key in [c.strip() for c in args.cases.split(",") if c.strip()]:
            log(f"{key}")
            started = time.perf_counter()
            row = (bench_note if key in NOTES else bench_book)(key, work, args.runs, args.timeout)
            log(f"  done in {time.perf_counter() - started:.0f} s")
            rows.append(row)
    md = render(info, rows)
    print(md)
    write_results(args.out, md, {"info": info, "rows": rows})


if __name__ == "__main__":
    main()
