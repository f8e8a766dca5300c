"""Warm and cold ``query`` at N notes: the latency goals of hybrid retrieval (warm p95 < 50 ms and a
cold CLI ``query`` < 1 s at 10k notes, model prepared).

    python benchmarks/bench_query_latency.py [--notes 10000] [--queries 200] [--cold 5]

The vault is ``corpus.py``'s, its chunks given random unit vectors in the embedding cache under the
real model's fingerprint (what a cold or warm query costs does not depend on what the vectors say,
and embedding 10k notes for real takes an hour here). Warm: one process, ``Vault.query`` over
``make_queries`` after 10 warm-up queries, plus the same queries with a letter swapped in their
longest word (the spelling path) and with a word no note has (the "nothing relevant" path), in a
process that watches the files as ``mdmem serve`` and ``mdmem mcp`` do; then the plain queries in a
process without a watch (a library user's: it compares the files with git at most every
``NOTICE_EVERY`` seconds before a read). Cold:
``mdmem --vault V query Q`` spawn to exit, the ONNX export prepared beforehand in a temporary
$MDMEM_HOME. Prints one table; medians and p95 in ms, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cold_query import vault_with_vectors  # noqa: E402
from corpus import make_queries  # noqa: E402

_WARM = r"""
import json, sys, time
from mdmem import Vault
queries = json.loads(sys.argv[2])
v = Vault.open(sys.argv[1])
if sys.argv[3] == "watch":
    v.watch_files()  # as mdmem serve and mdmem mcp do
for q in queries[:10]:
    v.query(q)
out = {}
kinds = (("plain", queries), ("typo", [swap(q) for q in queries]), ("unknown", [q + " zyqwarbl" for q in queries]))
kinds = kinds if sys.argv[3] == "watch" else kinds[:1]
for kind, qs in kinds:
    ms = []
    for q in qs:
        t = time.perf_counter()
        v.query(q)
        ms.append((time.perf_counter() - t) * 1000)
    out[kind] = ms
print(json.dumps(out))
"""
_SWAP = r"""
def swap(q):
    words = q.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    if len(w) >= 5 and w.isalpha():
        words[i] = w[:2] + w[3] + w[2] + w[4:]
    return " ".join(words)
"""


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=200, help="warm queries of each kind")
    ap.add_argument("--cold", type=int, default=5, help="cold CLI queries (different ones)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    py = sys.executable
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        # No embedding job: the vectors are the fill's, and a job started by init's commit hooks embedded
        # the 10k notes for real beside the timed queries (and still wrote in the vault as it was removed).
        env = {
            **os.environ,
            "MDMEM_HOME": str(Path(tmp) / "home"),
            "PYTHONWARNINGS": "ignore",
            "MDMEM_NO_SERVE": "1",
            "MDMEM_AUTO_EMBED": "0",
        }
        vault = Path(tmp) / "vault"
        t = time.perf_counter()
        chunks = vault_with_vectors(vault, args.notes, args.seed, env)
        print(
            f"vault of {args.notes} notes, {chunks} chunks with vectors, built in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
        queries = make_queries(args.queries, seed=args.seed + 1)
        load.append(os.getloadavg()[0])
        warm: dict[str, list[float]] = {}
        for how in ("watch", "no-watch"):
            got = json.loads(
                subprocess.run(
                    [py, "-c", _SWAP + _WARM, str(vault), json.dumps(queries), how],
                    check=True,
                    env=env,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            warm.update({(kind if how == "watch" else f"{kind}, no watch"): ms for kind, ms in got.items()})
        cold = []
        for q in make_queries(args.cold, seed=args.seed + 2):
            t = time.perf_counter()
            subprocess.run(
                [py, "-m", "mdmem", "--vault", str(vault), "query", q], check=True, env=env, capture_output=True
            )
            cold.append((time.perf_counter() - t) * 1000)
        load.append(os.getloadavg()[0])
    print(
        f"{args.notes} notes; {os.cpu_count()} cores; 1-minute load {', '.join(f'{x:.1f}' for x in load)} "
        f"(start, warm, end)\n"
    )
    print("| query | n | median ms | p95 ms | target |")
    print("|---|---:|---:|---:|---|")
    for kind, ms in warm.items():
        target = f"p95 < 50 ms: {'PASS' if p95(ms) < 50 else 'FAIL'}" if kind == "plain" else ""
        print(f"| warm, {kind} | {len(ms)} | {statistics.median(ms):.1f} | {p95(ms):.1f} | {target} |")
    print(
        f"| cold CLI | {len(cold)} | {statistics.median(cold):.0f} | {p95(cold):.0f} | "
        f"median < 1000 ms: {'PASS' if statistics.median(cold) < 1000 else 'FAIL'} |"
    )


if __name__ == "__main__":
    main()
