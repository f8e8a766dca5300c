"""Embedding speed and cold model start, runtime against runtime, on the same chunks.

    python benchmarks/bench_embed.py [--notes 200] [--runs 5] [--configs torch:1:16,onnx:0:16,onnx:0:16:int8]

Builds a synthetic vault (``corpus.py``), indexes it and takes its chunks exactly as ``mdmem embed``
would see them (fewest tokens first, in batches of ``batch``). Each configuration
``runtime:threads:batch[:precision]`` (precision ``fp32``, the default, or ``int8``; threads 0 = mdmem's
default, the machine's cores) runs in a fresh process, and the configurations alternate run by run, so a
busy shared machine slows all of them alike. Reported per configuration (medians over the runs): chunks
per wall second, chunks per CPU second (what a quiet machine would give one thread), the peak RSS of the
embedding process, the cold start (imports + model load + one query vector, in its own process) and
whether torch was imported. The ONNX export is made once beforehand in a temporary $MDMEM_HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import make_corpus  # noqa: E402

# argv: chunks.json, runtime, threads, batch, precision. Prints one JSON line. The chunks are ordered
# as Semantic.embed orders them (by the embedder's token counts), outside the timing.
_RUN = r"""
import json, os, resource, sys, time
texts = json.load(open(sys.argv[1]))
runtime, threads, batch = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
from mdmem.adapters.embed import EmbedSettings, make_embedder, release_memory
emb = make_embedder(EmbedSettings(threads=threads, batch_size=batch, precision=sys.argv[5],
                                  runtime="torch" if runtime == "torch" else "auto"))
emb.embed(["warm up"])
assert emb.runtime == runtime, emb.runtime
counts = emb.token_counts(texts)
texts = [t for _, _, t in sorted(zip(counts, map(len, texts), texts))]
t, c = time.perf_counter(), time.process_time()
for i in range(0, len(texts), batch):
    emb.embed(texts[i:i + batch])
    release_memory()
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "n": len(texts),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# argv: runtime, threads, precision. The cold start of a query: imports, model load, one query vector.
_COLD = r"""
import json, sys, time
t = time.perf_counter()
from mdmem.adapters.embed import EmbedSettings, make_embedder
emb = make_embedder(EmbedSettings(threads=int(sys.argv[2]), precision=sys.argv[3],
                                  runtime="torch" if sys.argv[1] == "torch" else "auto"))
emb.embed(["how do we push code live to customers"], query=True)
first = time.perf_counter() - t
t = time.perf_counter()
emb.embed(["which database did we pick"], query=True)
print(json.dumps({"cold": first, "next_query": time.perf_counter() - t, "runtime": emb.runtime,
                  "torch_imported": "torch" in sys.modules}))
"""


def chunks_of(vault: Path, env: dict[str, str]) -> list[str]:
    subprocess.run([sys.executable, "-m", "mdmem", "init", str(vault)], check=True, env=env, capture_output=True)
    code = (
        "import json, sys; from mdmem import Vault; v = Vault.open(sys.argv[1]); "
        "print(json.dumps([t for _, _, t in v.store.catalog.all_chunks()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(vault)], check=True, env=env, capture_output=True, text=True
    ).stdout
    return sorted(json.loads(out), key=len)  # as Semantic.embed orders them


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--configs",
        default="torch:1:16,onnx:0:16",
        help="runtime:threads:batch, comma-separated (threads 0: the default)",
    )
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    configs = [tuple((c + ":fp32").split(":")[:4]) for c in args.configs.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        env = {**os.environ, "MDMEM_HOME": str(Path(tmp) / "home"), "PYTHONWARNINGS": "ignore"}
        vault = Path(tmp) / "vault"
        make_corpus(vault, args.notes, seed=args.seed)
        texts = chunks_of(vault, env)
        path = Path(tmp) / "chunks.json"
        path.write_text(json.dumps(texts))
        for precision in sorted({c[3] for c in configs}):
            prep = (
                "from mdmem.adapters.embed import EmbedSettings, make_embedder; "
                f"assert make_embedder(EmbedSettings(precision={precision!r})).prepare(print)"
            )
            subprocess.run([sys.executable, "-c", prep], check=True, env=env)
        runs: dict[tuple[str, ...], list[dict[str, float]]] = {c: [] for c in configs}
        colds: dict[tuple[str, ...], list[dict[str, float]]] = {c: [] for c in configs}
        for i in range(args.runs):
            for c in configs:
                out = subprocess.run(
                    [sys.executable, "-c", _RUN, str(path), *c], check=True, env=env, capture_output=True, text=True
                ).stdout
                runs[c].append(json.loads(out.splitlines()[-1]))
                out = subprocess.run(
                    [sys.executable, "-c", _COLD, c[0], c[1], c[3]], check=True, env=env, capture_output=True, text=True
                ).stdout
                colds[c].append(json.loads(out.splitlines()[-1]))
                r = runs[c][-1]
                print(
                    f"run {i + 1} {':'.join(c)}: {r['n'] / r['wall']:.1f} chunks/s, "
                    f"{r['n'] / r['cpu']:.1f} per CPU-s, cold {colds[c][-1]['cold']:.2f} s",
                    file=sys.stderr,
                )
    print(
        f"{len(texts)} chunks from {args.notes} notes; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; "
        f"medians of {args.runs} alternating runs\n"
    )
    print(
        "| runtime:threads:batch:precision | chunks/s (wall) | chunks per CPU-s | peak RSS MB | cold start s "
        "| next query ms | torch |"
    )
    print("|---|---|---|---|---|---|---|")
    for c in configs:
        wall = statistics.median(r["n"] / r["wall"] for r in runs[c])
        cpu = statistics.median(r["n"] / r["cpu"] for r in runs[c])
        cold = statistics.median(r["cold"] for r in colds[c])
        nxt = statistics.median(r["next_query"] for r in colds[c]) * 1000
        rss = statistics.median(r["rss"] for r in runs[c])
        print(
            f"| {':'.join(c)} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {cold:.2f} | {nxt:.1f} | "
            f"{'yes' if colds[c][0]['torch_imported'] else 'no'} |"
        )


if __name__ == "__main__":
    main()
