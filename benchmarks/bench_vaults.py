"""Searching across vaults: the quality of the merge and its speed.

    python benchmarks/bench_vaults.py [--notes 2000] [--queries 20] [--runs 5] [--only quality|speed]

Quality: the gold vault (``benchmarks/gold``) split in two by alternating notes (sorted by path, the
same ``mdmem.toml`` in each); every gold query runs on the unsplit vault and across the two halves
(``VaultSet``: merged by evidence), and, to show what the merge is for, three naive merges of the
same two lists: concatenation (A then B), round-robin, and by each vault's own final score. R@10, MRR
and nDCG@10 over the answerable queries, at the gold set's ``as_of``.

Speed: two synthetic vaults of ``--notes`` notes each (``corpus.py``, seeds 0 and 1), indexed and
embedded with the configured model (the bundled MiniLM unless $MDMEM_EMBED_MODEL says otherwise);
then, in this process and warm, each of ``--queries`` queries ``--runs`` times on vault A alone and
across A and B, alternating, so machine load falls on both alike. Goal: the median across two vaults
under 2x the single vault's. Results: a markdown table on stdout and in ``benchmarks/out/vaults.md``,
raw numbers in ``benchmarks/out/vaults.json``. The vaults are kept under ``--tmp`` (default: the
user's cache) so a second run embeds nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_spine import log, machine, write_results  # noqa: E402
from corpus import make_corpus, make_queries  # noqa: E402

GOLD = HERE / "gold"
MODES = ("search", "query", "recall")
MERGES = ("across (evidence)", "concatenated", "round-robin", "by own score")


def split_gold(work: Path) -> tuple[Path, Path, Path]:
    """The gold vault whole, and in two halves by alternating notes (files written only when changed)."""
    from mdmem.edges.evaluate import read_tree, sync_tree

    files = read_tree(GOLD / "vault")
    notes = sorted(p for p in files if p.endswith(".md"))
    rest = {p: b for p, b in files.items() if not p.endswith(".md")}
    halves = [{**rest, **{p: files[p] for p in notes[i::2]}} for i in (0, 1)]
    whole, a, b = work / "gold-whole", work / "gold-a", work / "gold-b"
    sync_tree(whole, files)
    sync_tree(a, halves[0])
    sync_tree(b, halves[1])
    return whole, a, b


def ready(folder: Path) -> None:
    """Index and embed a vault (cached in its .mdmem/, so a second run does nothing)."""
    from mdmem.api.vault import Vault

    with Vault.open(folder) as v:
        v.reindex()
        v.embed()


def plain_id(hit_id: str) -> str:
    """A note's id in its own vault (an answer across vaults gives NAME:id)."""
    return hit_id.split(":", 1)[1]


def naive(a: list[Any], b: list[Any], how: str) -> list[str]:
    """Two vaults' hits merged without a common scale."""
    if how == "concatenated":
        merged = a + b
    elif how == "round-robin":
        merged = [h for pair in zip(a, b) for h in pair] + a[len(b) :] + b[len(a) :]
    else:  # by own score: each list's final score, as if they meant the same
        merged = sorted(a + b, key=lambda h: -h.score)
    return [h.id for h in merged][:10]


def bench_quality(work: Path) -> dict[str, Any]:
    from mdmem.api.vault import Vault
    from mdmem.api.vault_set import VaultSet
    from mdmem.core.eval_data import gold_as_of, load_gold
    from mdmem.edges.evaluate import ndcg_at, recall_at, reciprocal_rank

    whole, a, b = split_gold(work)
    for folder in (whole, a, b):
        log(f"  indexing {folder.name}")
        ready(folder)
    queries = [q for q in load_gold(GOLD) if q.relevant]
    os.environ["MDMEM_NOW"] = gold_as_of(GOLD) or ""
    rows: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    with Vault.open(whole) as single, VaultSet.open([str(a), str(b)]) as group:
        va, vb = (m.vault for m in group.members)
        for mode in MODES:
            scores: dict[str, list[tuple[float, float, float]]] = {"one vault": [], **{m: [] for m in MERGES}}
            for q in queries:
                runs = {
                    "one vault": [h.id for h in getattr(single, mode)(q.text, 10)],
                    "across (evidence)": [plain_id(h.id) for h in getattr(group, mode)(q.text, 10)],
                }
                ha, hb = getattr(va, mode)(q.text, 10), getattr(vb, mode)(q.text, 10)
                for how in MERGES[1:]:
                    runs[how] = naive(list(ha), list(hb), how)
                for name, ranked in runs.items():
                    scores[name].append(
                        (
                            recall_at(ranked, q.relevant, 10),
                            reciprocal_rank(ranked, q.relevant),
                            ndcg_at(ranked, q.relevant, 10),
                        )
                    )
            rows[mode] = scores
            log(f"  {mode}: done")
    return {
        "queries": len(queries),
        "notes": sum(1 for _ in (GOLD / "vault").rglob("*.md")),
        "table": {
            mode: {name: [statistics.fmean(x[i] for x in vals) for i in range(3)] for name, vals in sc.items()}
            for mode, sc in rows.items()
        },
    }


def bench_speed(work: Path, notes: int, n_queries: int, runs: int, seed: int) -> dict[str, Any]:
    from mdmem.api.vault import Vault
    from mdmem.api.vault_set import VaultSet

    folders = [work / f"speed-{notes}-{s}" for s in (seed, seed + 1)]
    for s, folder in zip((seed, seed + 1), folders):
        if not (folder / "notes").is_dir():
            log(f"  writing {notes} notes to {folder.name}")
            make_corpus(folder, notes, s)
        log(f"  indexing and embedding {folder.name} (cached after the first run)")
        t0 = time.perf_counter()
        ready(folder)
        log(f"    {time.perf_counter() - t0:.0f} s")
    queries = make_queries(n_queries, seed)
    ms: dict[str, list[float]] = {"query one": [], "query two": [], "search one": [], "search two": []}
    with Vault.open(folders[0]) as single, VaultSet.open([str(f) for f in folders]) as group:
        for q in queries[:3]:  # warm: the model, the indexes, the numpy BM25 scorer
            single.query(q, 10)
            group.query(q, 10)
            single.search(q, 10)
            group.search(q, 10)
        for _ in range(runs):
            for q in queries:
                for label, target in (("one", single), ("two", group)):
                    for method in ("query", "search"):
                        t0 = time.perf_counter()
                        getattr(target, method)(q, 10)
                        ms[f"{method} {label}"].append((time.perf_counter() - t0) * 1000)
                for m in group.members:  # the query memo is per question: a new one embeds again
                    m.vault.semantic.embedder.memo.clear()
    med = {k: statistics.median(v) for k, v in ms.items()}
    return {
        "notes_per_vault": notes,
        "queries": n_queries,
        "runs": runs,
        "median_ms": med,
        "p95_ms": {k: sorted(v)[int(0.95 * (len(v) - 1))] for k, v in ms.items()},
        "ratio_query": med["query two"] / med["query one"],
        "ratio_search": med["search two"] / med["search one"],
    }


def render(info: dict[str, Any], quality: dict[str, Any] | None, speed: dict[str, Any] | None) -> str:
    lines = [
        "# Search across vaults (bench_vaults.py)",
        "",
        f"machine: {info['cpu']}, {info['nproc']} cores, load {tuple(round(x, 2) for x in info['loadavg'])} at "
        f"start, {tuple(round(x, 2) for x in info['loadavg_end'])} at the end (other work was running); "
        f"mdmem {info['mdmem_rev']}; model {info['model']}; {info['date']}",
        "",
    ]
    if quality:
        lines += [
            f"## Quality: gold vault ({quality['notes']} notes) split in two by alternating notes, "
            f"{quality['queries']} answerable queries",
            "",
            "| mode | ranking | R@10 | MRR | nDCG@10 |",
            "|---|---|---|---|---|",
        ]
        for mode, table in quality["table"].items():
            for name, (r, mrr, ndcg) in table.items():
                lines.append(f"| {mode} | {name} | {r:.3f} | {mrr:.3f} | {ndcg:.3f} |")
        lines.append("")
    if speed:
        med, p95 = speed["median_ms"], speed["p95_ms"]
        lines += [
            f"## Speed: warm, {speed['notes_per_vault']:,} notes per vault, {speed['queries']} queries x "
            f"{speed['runs']} runs",
            "",
            "| command | one vault median ms | two vaults median ms | ratio | one p95 | two p95 |",
            "|---|---|---|---|---|---|",
        ]
        for method in ("query", "search"):
            lines.append(
                f"| {method} | {med[method + ' one']:.1f} | {med[method + ' two']:.1f} | "
                f"{speed['ratio_' + method]:.2f}x | {p95[method + ' one']:.1f} | {p95[method + ' two']:.1f} |"
            )
        goal = "met" if speed["ratio_query"] < 2 else "NOT met"
        lines += ["", f"Goal (query across two vaults under 2x one vault's, warm median): {goal}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=2000, help="notes in each speed vault [2000]")
    ap.add_argument("--queries", type=int, default=20, help="distinct speed queries [20]")
    ap.add_argument("--runs", type=int, default=5, help="times each speed query runs each way [5]")
    ap.add_argument("--seed", type=int, default=0, help="corpus seed [0]")
    ap.add_argument("--only", choices=("quality", "speed"), help="run one half")
    ap.add_argument(
        "--tmp",
        type=Path,
        default=Path(os.path.expanduser("~/.cache/mdmem/bench-vaults")),
        help="where the vaults are built and kept [~/.cache/mdmem/bench-vaults]",
    )
    ap.add_argument("--out", default="vaults", help="name of the result files in benchmarks/out/ [vaults]")
    args = ap.parse_args(argv)
    args.tmp.mkdir(parents=True, exist_ok=True)
    os.environ["MDMEM_CONFIG"] = str(args.tmp / "vaults.toml")  # no user's registry: vaults by folder
    os.environ["MDMEM_AUTO_EMBED"] = "0"
    info = machine()
    from mdmem.adapters.embed import DEFAULT_MODEL

    info["model"] = os.environ.get("MDMEM_EMBED_MODEL") or DEFAULT_MODEL
    quality = speed = None
    if args.only != "speed":
        log("== quality (gold split in two)")
        quality = bench_quality(args.tmp)
        os.environ.pop("MDMEM_NOW", None)
    if args.only != "quality":
        log(f"== speed ({args.notes} notes per vault)")
        speed = bench_speed(args.tmp, args.notes, args.queries, args.runs, args.seed)
    info["loadavg_end"] = os.getloadavg()
    md = render(info, quality, speed)
    write_results(args.out, md, {"machine": info, "quality": quality, "speed": speed})
    print(md)


if __name__ == "__main__":
    main()
