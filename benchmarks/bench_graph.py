"""Benchmark of the graph: ``neighbors --depth 2``, ``why``, ``path`` and the graph
build, warm through the Vault API and cold through the CLI, on synthetic vaults with ~5 edges a note.

    python benchmarks/bench_graph.py [--sizes 1000,10000] [--runs 3] [--samples 200]

The notes come from ``corpus.py`` (which already has some frontmatter links, wikilinks and
entities); each note then gets typed frontmatter links to earlier notes (caused_by, depends_on,
led_to, relates_to, refines; by id or by [[title]], most with a reason) until the vault averages
about five edges a note. Warm = one process, after a first call that builds and caches the graph;
every figure is the median (and p95) over all samples of all runs. why finds its matches with
BM25 (no model) unless --vectors, which embeds the vault with the hash embedder first.
Results: a markdown table on stdout and in ``benchmarks/out/graph.md`` (+ ``graph.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_spine import add_common_args, child_env, log, machine, mdmem_cmd, p95, parse_sizes, write_results  # noqa: E402
from corpus import make_corpus, make_queries  # noqa: E402

EXTRA_TYPES = ("caused_by", "depends_on", "led_to", "relates_to", "refines", "caused_by", "relates_to")
REASONS = (
    "the numbers showed it",
    "after the incident",
    "needs the budget",
    "same component",
    "a follow-up",
    "the earlier plan did not hold",
)


def add_links(root: Path, paths: list[str], seed: int, target_edges: float = 5.0) -> None:
    """Give notes typed frontmatter links to earlier notes until ~``target_edges`` edges a note."""
    import yaml

    rng = random.Random(f"graph-{seed}")
    refs: list[str] = []  # how later notes can name each note: its id, else [[title]]
    texts = []
    edges = 0
    for rel in paths:
        text = (root / rel).read_text(encoding="utf-8")
        fm = yaml.safe_load(text.split("---\n", 2)[1])
        edges += len(fm.get("links") or []) + len(fm.get("entities") or []) + text.count("[[") - text.count('"[[')
        texts.append((rel, text, fm))
    per_note = max(0.0, target_edges - edges / len(paths))
    for i, (rel, text, fm) in enumerate(texts):
        if i:
            k = int(per_note) + (rng.random() < per_note - int(per_note))
            items = []
            for _ in range(k):
                to = refs[rng.randrange(max(0, i - 2000), i)]  # mostly recent notes, as in real vaults
                typ = rng.choice(EXTRA_TYPES)
                reason = f', reason: "{rng.choice(REASONS)}"' if rng.random() < 0.7 else ""
                items.append(f"  - {{to: {to}, type: {typ}{reason}}}")
            if items:
                head, body = text.split("\n---\n", 1)
                if "\nlinks:\n" in head:
                    head = head.replace("\nlinks:\n", "\nlinks:\n" + "\n".join(items) + "\n", 1)
                else:
                    head += "\nlinks:\n" + "\n".join(items)
                text = head + "\n---\n" + body
                (root / rel).write_text(text, encoding="utf-8")
        refs.append(str(fm["id"]) if fm.get("id") else json.dumps(f"[[{fm['title']}]]", ensure_ascii=False))


def timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def cold_cli(vault: Path, args: list[str]) -> float:
    """Spawn-to-exit ms of one mdmem command (the graph is built in that process)."""
    t = time.perf_counter()
    env = {**child_env(), "MDMEM_EMBED_MODEL": os.environ.get("MDMEM_EMBED_MODEL", "hash")}
    subprocess.run(
        [*mdmem_cmd(), "--vault", str(vault), *args, "--json"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return (time.perf_counter() - t) * 1000


def bench_size(n: int, runs: int, samples: int, seed: int, vectors: bool, work: Path) -> dict[str, Any]:
    from mdmem import Vault

    vault_dir = work / "vault"
    t = time.perf_counter()
    paths = make_corpus(vault_dir, n, seed=seed)
    add_links(vault_dir, paths, seed)
    log(f"  corpus with links: {n} notes in {time.perf_counter() - t:.1f}s")
    t = time.perf_counter()
    subprocess.run([*mdmem_cmd(), "--vault", str(vault_dir), "reindex", "--full", "-q"], env=child_env(), check=True)
    log(f"  full index: {time.perf_counter() - t:.1f}s")
    if vectors:
        os.environ["MDMEM_EMBED_MODEL"] = "hash"
        with Vault.open(vault_dir) as v:
            v.embed()
    res: dict[str, Any] = {"notes": n, "raw": {}}
    raw = res["raw"]
    rng = random.Random(f"bench-graph-{seed}")
    queries = [f"why {q}" for q in make_queries(samples, seed=seed)]
    for r in range(runs):
        v = Vault.open(vault_dir)
        raw.setdefault("graph_build_ms", []).append(timed(v.graph))  # first call: read and build
        g = v.graph()
        if r == 0:
            stats = g.stats()
            res.update(stats)
            res["edges_per_note"] = round(stats["edges"] / stats["notes"], 2)
            log(f"  graph: {stats}")
        notes = [k for k, node in g.nodes.items() if node.kind == "note"]
        refs = [g.nodes[k].id for k in rng.sample(notes, min(samples, len(notes)))]
        sizes = []
        for ref in refs:
            ms = timed(lambda: sizes.append(v.neighbors(ref, 2)["count"]))
            raw.setdefault("neighbors2_ms", []).append(ms)
        raw.setdefault("neighbors2_count", []).extend(sizes)
        pairs = [(refs[i], refs[-1 - i]) for i in range(min(len(refs) // 2, samples // 2))]
        for a, b in pairs:
            raw.setdefault("path_ms", []).append(timed(lambda: v.shortest_path(a, b)))
        v.why(queries[0], vectors=vectors)  # warm the searcher (and the embedder)
        for q in queries[: max(20, samples // 4)]:
            raw.setdefault("why_ms", []).append(timed(lambda: v.why(q, vectors=vectors)))
        v.close()
        log(
            f"  run {r + 1}: neighbors2 {statistics.median(raw['neighbors2_ms']):.2f} ms, "
            f"why {statistics.median(raw['why_ms']):.1f} ms, path {statistics.median(raw['path_ms']):.2f} ms"
        )
    ref = refs[0]
    raw["cold_cli_neighbors_ms"] = [cold_cli(vault_dir, ["neighbors", ref, "--depth", "2"]) for _ in range(runs)]
    raw["cold_cli_why_ms"] = [
        cold_cli(vault_dir, ["why", queries[1], *([] if vectors else ["--no-vectors"])]) for _ in range(runs)
    ]
    for key, xs in list(raw.items()):
        if key.endswith("_ms"):
            res[key[:-3] + "_median_ms"] = statistics.median(xs)
            res[key[:-3] + "_p95_ms"] = p95(xs)
    res["neighbors2_median_nodes"] = statistics.median(raw["neighbors2_count"])
    return res


COLUMNS = (
    ("notes", "notes", "{:,}"),
    ("edges_per_note", "edges/note", "{:.1f}"),
    ("graph_build_median_ms", "graph build ms (first call)", "{:.0f}"),
    ("neighbors2_median_ms", "neighbors d=2 median ms", "{:.2f}"),
    ("neighbors2_p95_ms", "neighbors d=2 p95 ms", "{:.2f}"),
    ("neighbors2_median_nodes", "nodes reached (median)", "{:.0f}"),
    ("why_median_ms", "why median ms", "{:.1f}"),
    ("why_p95_ms", "why p95 ms", "{:.1f}"),
    ("path_median_ms", "path median ms", "{:.2f}"),
    ("path_p95_ms", "path p95 ms", "{:.2f}"),
    ("cold_cli_neighbors_median_ms", "cold CLI neighbors ms", "{:.0f}"),
    ("cold_cli_why_median_ms", "cold CLI why ms", "{:.0f}"),
)


def render(info: dict[str, Any], results: list[dict[str, Any]], runs: int, vectors: bool) -> str:
    lines = [
        f"mdmem graph benchmark — {info['date']}, mdmem {info['mdmem_rev']}",
        f"{info['nproc']} cores ({info['cpu']}), Python {info['python']}; load average before "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg'])}, after "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg_after'])}",
        f"warm = Vault API in one process after a first call; medians/p95 over all samples of {runs} run(s); "
        f"why matches: {'hybrid with hash vectors' if vectors else 'BM25 (no model)'}",
        "",
        "| " + " | ".join(c[1] for c in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for r in results:
        lines.append("| " + " | ".join(fmt.format(r[k]) for k, _, fmt in COLUMNS) + " |")
    lines.append("")
    for r in results:
        ok = r["neighbors2_median_ms"] < 100 and r["why_median_ms"] < 100
        lines.append(
            f"target (neighbors --depth 2 and why < 100 ms warm) at {r['notes']:,} notes: "
            f"{'met' if ok else 'NOT met'} (p95 {r['neighbors2_p95_ms']:.1f} / {r['why_p95_ms']:.1f} ms)"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes [1000,10000]")
    ap.add_argument("--runs", type=int, default=3, help="repetitions (fresh Vault each) [3]")
    ap.add_argument("--samples", type=int, default=200, help="neighbors/path calls per run; why gets a quarter [200]")
    ap.add_argument("--vectors", action="store_true", help="why matches with hash-embedder vectors (hybrid)")
    add_common_args(ap, "graph")
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes)
    os.environ.setdefault("MDMEM_EMBED_MODEL", "hash")
    info = machine()
    results = []
    for n in sizes:
        log(f"== {n:,} notes")
        work = Path(tempfile.mkdtemp(prefix=f"mdmem-graph-{n}-", dir=args.tmp))
        try:
            results.append(bench_size(n, max(1, args.runs), args.samples, args.seed, args.vectors, work))
        finally:
            if args.keep:
                log(f"  kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    info["loadavg_after"] = os.getloadavg()
    md = render(info, results, args.runs, args.vectors)
    print(md)
    write_results(args.out, md, {"machine": info, "results": results})


if __name__ == "__main__":
    main()
