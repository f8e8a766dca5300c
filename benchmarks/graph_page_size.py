"""The graph page's size, and its time to settle in headless Chromium, on graphs shaped like a community
wiki (the Obsidian community hub: 6,570 notes citing 24,513 URLs, ~9 links a note), at 1k / 6.5k / 50k notes.

    python benchmarks/graph_page_size.py [--sizes 1000,6570,50000] [--no-browser]

"before" is the page as it was (the export's JSON as it is, every node drawn and laid out); "after" is
``graph_html.to_html`` (compact rows; the URLs, outnumbering the notes, hidden at first and out of the
layout). Settle times need Debian's chromium; each page is opened once (a 50k page takes a while).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from mdmem.render.graph_html import to_html  # noqa: E402

URLS_PER_NOTE = 24513 / 6570
LINKS_PER_NOTE = 9


def wiki(n: int, seed: int = 0) -> dict[str, Any]:
    """Export-shaped data: ``n`` notes in emoji-named folders, wikilinks to popular notes, and URLs
    (GitHub repositories, mostly cited once) in the proportion of the community hub."""
    rng = random.Random(seed)
    folders = ["🗂️ 01 - Community", "📁 02 - Community Expansions", "04 - Guides, Workflows, & Courses", "05 - Concepts"]
    nodes: list[dict[str, Any]] = []
    for i in range(n):
        path = f"{folders[int(len(folders) * rng.random() ** 2)]}/Sub {i % 40}/Note about plugin {i}.md"
        nodes.append(
            {
                "key": path,
                "id": path[:-3],
                "path": path,
                "title": f"Note about plugin {i}",
                "type": "note",
                "kind": "note",
                "status": "active",
                "tags": ["seedling"] if i % 3 == 0 else [],
            }
        )
    edges = []
    for i in range(n):
        for _ in range(rng.randrange(2 * LINKS_PER_NOTE - 6)):
            j = int(n * rng.random() ** 3)
            if j != i:
                edges.append(
                    {
                        "source": nodes[i]["key"],
                        "target": nodes[j]["key"],
                        "type": "mentions",
                        "reason": None,
                        "written": nodes[j]["title"],
                    }
                )
    urls: dict[str, dict[str, Any]] = {}
    for i in range(n):
        for _ in range(int(URLS_PER_NOTE) + (rng.random() < URLS_PER_NOTE % 1)):
            owner = f"{rng.choice(('obsidian', 'user', 'dev'))}{rng.randrange(4 * n)}"
            url = f"https://github.com/{owner}/obsidian-plugin-{rng.randrange(9)}"
            urls.setdefault(
                url,
                {
                    "key": f"ref:url:{url}",
                    "id": f"ref:url:{url}",
                    "path": None,
                    "title": url,
                    "type": "url",
                    "kind": "external",
                    "status": "active",
                },
            )
            edges.append(
                {"source": nodes[i]["key"], "target": f"ref:url:{url}", "type": "cites", "reason": None, "written": url}
            )
    return {"nodes": nodes + list(urls.values()), "edges": edges}


def old_page_bytes(data: dict[str, Any]) -> int:
    """The page before: the same shell carrying the export's JSON as it is."""
    shell = len(to_html({"nodes": [], "edges": []}).encode())
    return shell + len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def settle_ms(page: Path) -> tuple[int | None, int]:
    from tests.headless import Browser

    with Browser(1400, 900) as b:
        t = time.perf_counter()
        try:
            b.open(page.as_uri(), ready="document.body.dataset.settled", timeout=600)
        except Exception:  # noqa: BLE001 - a page that does not settle in time is a row, not a crash
            return None, round((time.perf_counter() - t) * 1000)
        return b.eval("mdmemGraph.settledMs"), len(b.eval("mdmemGraph.visibleKeys()"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,6570,50000")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            data = wiki(n)
            html = to_html(data)
            page = Path(tmp) / f"g{n}.html"
            page.write_text(html, encoding="utf-8")
            ext = sum(d["kind"] == "external" for d in data["nodes"])
            settled, shown = (None, 0) if args.no_browser else settle_ms(page)
            rows.append((n, ext, len(data["edges"]), old_page_bytes(data), len(html.encode()), settled, shown))
    print("| notes | URLs | edges | page before | page after | settled (after) | drawn at first |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, ext, edges, before, after, settled, shown in rows:
        print(
            f"| {n:,} | {ext:,} | {edges:,} | {before / 1e6:.1f} MB | {after / 1e6:.1f} MB | "
            f"{'-' if settled is None else f'{settled / 1000:.1f} s'} | {shown:,} |"
        )


if __name__ == "__main__":
    main()
