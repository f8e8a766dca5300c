"""The HTML graph page on synthetic Obsidian-style vaults: settle time in headless
Chromium and screenshots to look at.

    python benchmarks/graph_page.py [--sizes 800,5000] [--out /tmp/graphshots]

Each vault has top folders (four language folders at ≤1,000 notes, a dozen life/work folders
above), subfolders, note types, tags that lean to a folder, ~7 wikilinks a note (mostly within the
folder, to popular notes more often, so there are hubs), a few links to notes that do not exist,
and image embeds. The page is exported through the Vault API, opened in headless Chromium
(``tests/headless.py``) and photographed: the whole graph, zoomed in, a selected hub, a local view
of depth 2, coloured by type with a tag filter. Settle times go to stdout.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.headless import Browser  # noqa: E402

LANGS = ("en", "de", "ja", "zh")
AREAS = (
    "Projects",
    "Areas",
    "Resources",
    "People",
    "Daily",
    "Books",
    "Meetings",
    "Ideas",
    "Archive",
    "Inbox",
    "Work",
    "Health",
)
SUBS = ("", "", "", "guides", "reference", "notes")
TYPES = ("note", "note", "reference", "howto", "person", "project", "meeting", "idea")
WORDS = (
    "canvas",
    "sync",
    "graph",
    "plugin",
    "theme",
    "vault",
    "link",
    "embed",
    "search",
    "publish",
    "mobile",
    "hotkey",
    "template",
    "daily",
    "backlink",
    "outline",
    "tag",
    "alias",
    "property",
    "workspace",
    "file",
    "folder",
    "attachment",
    "format",
    "callout",
    "query",
    "table",
    "image",
    "audio",
    "pdf",
    "export",
    "import",
    "command",
    "palette",
    "editor",
    "preview",
    "mode",
    "core",
    "community",
    "settings",
)
TAGS = tuple(f"{a}/{b}" if b else a for a in ("topic", "status", "area", "source", "lang") for b in ("", "x", "y")) + (
    "howto",
    "faq",
    "todo",
    "idea",
    "draft",
    "review",
    "reference",
    "meta",
    "plugin",
    "design",
)


def make_vault(root: Path, n: int, seed: int = 0) -> None:
    """``n`` notes with folders, types, tags, wikilinks (some dangling) and image embeds."""
    rng = random.Random(f"graphpage-{seed}-{n}")
    tops = LANGS if n <= 1000 else AREAS
    weights = [1.0] * len(tops) if n <= 1000 else [1 / (i + 1) ** 0.7 for i in range(len(tops))]
    notes: list[tuple[str, str, str]] = []  # (folder, path, title)
    by_folder: dict[str, list[int]] = {t: [] for t in tops}
    for i in range(n):
        top = rng.choices(tops, weights)[0]
        sub = rng.choice(SUBS)
        title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {top.lower()}{i}"
        path = "/".join(p for p in (top, sub, title + ".md") if p)
        by_folder[top].append(i)
        notes.append((top, path, title))
    for i, (top, path, title) in enumerate(notes):
        own = by_folder[top]
        lines = []
        for _ in range(max(0, int(rng.gauss(7, 4)))):
            if rng.random() < 0.03:
                target = f"{rng.choice(WORDS).title()} that nobody wrote {rng.randrange(40)}"
            else:
                pool = own if rng.random() < 0.8 else range(n)
                # Popular notes are linked more: a Zipf-like pick over the pool's order.
                j = pool[min(len(pool) - 1, int(len(pool) * rng.random() ** 3))]
                if j == i:
                    continue
                target = notes[j][2]
            lines.append(f"See [[{target}]] about {rng.choice(WORDS)}.")
        if rng.random() < 0.08:
            img = f"{top}/img/{title.split()[0].lower()}-{i}.png"
            (root / img).parent.mkdir(parents=True, exist_ok=True)
            (root / img).write_bytes(b"\x89PNG\r\n\x1a\n")
            lines.append(f"![[{Path(img).name}]]")
        tags = sorted(set(rng.sample(TAGS[: 8 + len(top) % 7], 1) + rng.sample(TAGS, rng.randrange(0, 3))))
        typ = rng.choice(TYPES)
        text = (
            f"---\ntitle: {title}\ntype: {typ}\ntags: [{', '.join(tags)}]\n---\n# {title}\n\n" + "\n".join(lines) + "\n"
        )
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def export_page(n: int, work: Path) -> Path:
    from mdmem.api.vault import Vault

    vault = work / f"vault-{n}"
    page = work / f"graph-{n}.html"
    if not vault.exists():
        make_vault(vault, n)
    t = time.perf_counter()
    v = Vault.open(vault)
    page.write_text(v.export_graph("html"), encoding="utf-8")
    v.close()
    print(f"{n} notes: index + export {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return page


def shoot(page: Path, out: Path, tag: str) -> dict[str, object]:
    with Browser(1400, 900) as b:
        t = time.perf_counter()
        b.open(page.as_uri(), ready="document.body.dataset.settled", timeout=120)
        wall = time.perf_counter() - t
        stats = b.eval(
            "({nodes: mdmemGraph.nodes, steps: mdmemGraph.steps, done: mdmemGraph.stepsDone,"
            " settled: mdmemGraph.settledMs,"
            " labels: mdmemGraph.labelled().length,"
            " summary: document.getElementById('summary').textContent})"
        )
        stats["wall_s"] = round(wall, 2)
        b.screenshot(out / f"{tag}-overview.png")
        b.eval("mdmemGraph.zoom(3)")
        b.screenshot(out / f"{tag}-zoom3.png")
        hub = b.eval("mdmemGraph.top(1)[0]")
        b.eval("mdmemGraph.zoom(1/3)")
        b.eval(f"mdmemGraph.select({hub!r})")
        b.screenshot(out / f"{tag}-selected.png")
        mid = b.eval("mdmemGraph.top(40)[39]")
        b.eval("const d = document.getElementById('depth'); d.value = 2; d.dispatchEvent(new Event('input'))")
        b.eval("document.getElementById('local').click()")
        t = time.perf_counter()
        b.eval(f"mdmemGraph.select({mid!r})")
        stats["local_ms"] = round((time.perf_counter() - t) * 1000)
        stats["local_nodes"] = b.eval("mdmemGraph.visibleKeys().length")
        b.screenshot(out / f"{tag}-local2.png")
        b.eval("document.getElementById('local').click(); mdmemGraph.select(null)")
        b.eval(
            "const c = document.getElementById('color'); c.value = 'type'; c.dispatchEvent(new Event('change'));"
            "const t = document.getElementById('tag'); t.selectedIndex = 1; t.dispatchEvent(new Event('change'))"
        )
        b.screenshot(out / f"{tag}-type-tag.png")
        return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="800,5000")
    ap.add_argument("--out", default="/tmp/graphshots")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for n in (int(x) for x in args.sizes.split(",")):
        page = export_page(n, out)
        print(n, shoot(page, out, str(n)), flush=True)


if __name__ == "__main__":
    main()
