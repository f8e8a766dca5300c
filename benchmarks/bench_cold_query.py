"""A cold CLI ``query``/``vsearch``/``recall`` (no ``mdmem serve``) at N notes, torch against ONNX.

    python benchmarks/bench_cold_query.py [--notes 10000] [--runs 3]

Embedding 10k notes for real takes long, and a cold query's cost does not depend on what the vectors
say: so every chunk gets a random unit vector in the embedding cache under the real model's
fingerprint, and ``mdmem embed`` builds the usearch index from the cache without running the model.
Each measured command is then exactly what a user runs: a fresh process that opens the index, loads
the model (torch, or the ONNX export prepared beforehand in a temporary $MDMEM_HOME), embeds the
query and fuses. Also reported: the same command with ``--no-vectors`` (the index part alone) and
the model's own cold start (imports + load + one query vector) in a bare process.
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

from corpus import make_corpus, make_queries  # noqa: E402

_FILL = r"""
import sys, numpy as np
from mdmem import Vault
from mdmem.adapters.vector_code import settle
v = Vault.open(sys.argv[1])
sem = v.semantic
fp, dim = sem.embedder.fingerprint, sem.embedder.dim
hashes = sorted({h for _, h, _ in v.store.catalog.all_chunks()})
rng = np.random.default_rng(0)
vecs = rng.standard_normal((len(hashes), dim)).astype(np.float32)
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
sem.cache.put_many(fp, list(zip(hashes, settle(vecs))))  # as stored: 4 bits a dimension
r = v.embed()
print(r.done, r.total, r.embedded)
"""


def vault_with_vectors(vault: Path, notes: int, seed: int, env: dict[str, str]) -> str:
    """A ``corpus.py`` vault of ``notes`` notes at ``vault``, indexed and committed as ``mdmem init`` leaves
    a vault (before its first commit every read asked git for HEAD: ~2.5 ms a check, which a watching
    process makes before every read), every chunk with a random vector (``_FILL``: the embedding is not
    what is measured), and the model prepared for the cold reads. Returns how many chunks have vectors."""
    py = sys.executable
    make_corpus(vault, notes, seed=seed)
    subprocess.run([py, "-m", "mdmem", "init", str(vault)], check=True, env=env, capture_output=True)
    out = subprocess.run([py, "-c", _FILL, str(vault)], check=True, env=env, capture_output=True, text=True)
    subprocess.run(
        [
            py,
            "-c",
            "from mdmem.adapters.embed import EmbedSettings, make_embedder; "
            "assert make_embedder(EmbedSettings()).prepare()",
        ],
        check=True,
        env=env,
    )
    return out.stdout.split()[1]


_MODEL = r"""
import json, sys, time
t = time.perf_counter()
from mdmem.adapters.embed import EmbedSettings, make_embedder
e = make_embedder(EmbedSettings(runtime=sys.argv[1]))
e.embed(["how do we push code live to customers"], query=True)
print(json.dumps({"s": time.perf_counter() - t, "torch": "torch" in sys.modules}))
"""


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3, help="queries per command and runtime (different ones)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        # no embedding job beside the timed reads: the vectors are the fill's (as in bench_query_latency)
        env = {**os.environ, "MDMEM_HOME": str(Path(tmp) / "home"), "PYTHONWARNINGS": "ignore", "MDMEM_AUTO_EMBED": "0"}
        vault = Path(tmp) / "vault"
        t = time.perf_counter()
        chunks = vault_with_vectors(vault, args.notes, args.seed, env)
        print(
            f"vault of {args.notes} notes, {chunks} chunks with vectors, built in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
        queries = make_queries(args.runs * 3, seed=args.seed + 1)
        rows: dict[str, list[float]] = {}
        for i in range(args.runs):
            for runtime in ("torch", "auto"):
                renv = {**env, "MDMEM_EMBED_RUNTIME": runtime}
                for j, command in enumerate(("query", "vsearch", "recall")):
                    q = queries[i * 3 + j]
                    s = timed([py, "-m", "mdmem", "--vault", str(vault), command, q], renv)
                    rows.setdefault(f"{command} ({runtime})", []).append(s)
                out = subprocess.run(
                    [py, "-c", _MODEL, runtime], check=True, env=env, capture_output=True, text=True
                ).stdout
                rows.setdefault(f"model cold start ({runtime})", []).append(json.loads(out)["s"])
            s = timed([py, "-m", "mdmem", "--vault", str(vault), "query", "--no-vectors", queries[i]], env)
            rows.setdefault("query --no-vectors (index part)", []).append(s)
            print(f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in rows.items()), file=sys.stderr)
    print(
        f"{args.notes} notes; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; medians of {args.runs}; "
        '"auto" = ONNX (prepared)\n'
    )
    print("| cold command | median s | runs |")
    print("|---|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {statistics.median(v):.2f} | {', '.join(f'{x:.2f}' for x in v)} |")


if __name__ == "__main__":
    main()
