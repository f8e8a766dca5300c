"""How the parsing worker of a full build starts: a forkserver, spawn, a thread, or none (one process),
beside fork (what mdmem no longer does: a process that runs threads hands the child a held lock).

    python benchmarks/bench_parse.py [--notes 2000] [--runs 3]

Each run is a fresh process that builds the index of a synthetic vault (``corpus.make_corpus``) twice:
the first build pays for starting the worker (and a forkserver), the second is what a long-lived process
(serve, MCP, a program that embeds mdmem) pays for each later build. Prints a markdown table of medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import child_env  # noqa: E402
from corpus import make_corpus  # noqa: E402

METHODS = ("fork", "forkserver", "spawn", "thread", "serial")

_RUN = r"""
import json, multiprocessing, sys, time
from pathlib import Path
import mdmem.index.parsing as parsing
from mdmem.adapters.config import load_config
from mdmem.index.store import IndexStore
method, root = sys.argv[1], Path(sys.argv[2])
if method == "fork":
    parsing._context = lambda: multiprocessing.get_context("fork")
elif method == "serial":
    parsing.PARALLEL_PARSE_MIN = 10**9
else:
    parsing.START_METHOD = method
out = []
for _ in range(2):
    store = IndexStore(root, load_config(root))
    t = time.perf_counter()
    store.reindex(full=True)
    out.append(time.perf_counter() - t)
    store.close()
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--methods", default=",".join(METHODS))
    args = ap.parse_args()
    methods = args.methods.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-parse-") as tmp:
        vault = Path(tmp) / "vault"
        make_corpus(vault, args.notes)
        env = {**child_env(), "MDMEM_HOME": str(Path(tmp) / "home")}
        times: dict[str, list[list[float]]] = {m: [] for m in methods}
        for _ in range(args.runs):  # interleaved, so a busy moment of the machine hits every method alike
            for m in methods:
                run = subprocess.run(
                    [sys.executable, "-c", _RUN, m, str(vault)], env=env, capture_output=True, text=True, check=True
                )
                times[m].append(json.loads(run.stdout.splitlines()[-1]))
    print(f"full build of {args.notes:,} notes, median of {args.runs} runs (seconds)\n")
    print("| parsing worker | first build | second build in the same process |\n|---|---|---|")
    for m in methods:
        first = statistics.median(t[0] for t in times[m])
        second = statistics.median(t[1] for t in times[m])
        print(f"| {m} | {first:.2f} | {second:.2f} |")


if __name__ == "__main__":
    main()
