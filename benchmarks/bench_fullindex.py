"""mdmem's full BM25 index beside QMD's, on the same synthetic notes, for the index-speed goal.

    python benchmarks/bench_fullindex.py [--sizes 2000,10000] [--runs 5]
    python benchmarks/bench_fullindex.py --mdmem before=/work/main --mdmem after=.   # two checkouts

"Full index" means, for mdmem, ``mdmem reindex --full`` with vectors not embedded
(``MDMEM_AUTO_EMBED=0``): the catalogue, the whoosh index and the link graph, in a fresh process.
For QMD (``qmd``, or ``--qmd 'node /path/to/qmd.js'``) it is ``qmd collection add NOTES`` into an
empty index (its own ``HOME``/``XDG_CACHE_HOME`` in a temporary folder): QMD's SQLite FTS5 index of
the same files, no embeddings. The contestants run alternately, run by run, so a load that comes
and goes on a shared machine hits them alike; the table gives medians of wall time (spawn to exit),
CPU seconds (user + system of the process and its children) and peak RSS, with the load average
before and after. Results also go to ``benchmarks/out/fullindex.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import GIT_ID, add_common_args, child_env, machine, median, parse_sizes, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402

# Runs argv[1:] and prints one JSON line: wall, CPU seconds (user+sys of the waited-for tree), peak RSS.
_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kib": ru.ru_maxrss,
                  "rc": p.returncode, "stderr": p.stderr.decode(errors="replace")[-2000:]}))
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    if data["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {data['rc']}:\n{data['stderr']}")
    return {"wall": data["wall"], "cpu": data["cpu"], "rss_mb": data["rss_kib"] / 1024}


def mdmem_runner(src: str | None) -> Any:
    """A function (vault) → sample for mdmem from checkout ``src`` (None: the importable one)."""
    env = child_env()
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve())
    pkg = subprocess.run(
        [sys.executable, "-c", "import mdmem, os; print(os.path.dirname(mdmem.__file__))"],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # fresh bytecode, as an installed package has (PYTHONDONTWRITEBYTECODE would leave edits uncompiled)
    subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], env=env, check=True)

    def sample(vault: Path) -> dict[str, float]:
        return run([sys.executable, "-m", "mdmem", "--vault", str(vault), "reindex", "--full", "-q"], vault, env)

    return sample, pkg


def qmd_runner(cmd: list[str], work: Path) -> Any:
    def sample(vault: Path) -> dict[str, float]:
        home = work / "qmd-home"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        env = {
            **child_env(),
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_CONFIG_HOME": str(home / "config"),
        }
        return run([*cmd, "collection", "add", str(vault / "notes"), "--name", "bench"], vault, env)

    return sample


def make_vault(n: int, seed: int, work: Path) -> Path:
    vault = work / f"vault-{n}"
    make_corpus(vault, n, seed=seed)
    (vault / ".gitignore").write_text(".mdmem/\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", f"corpus of {n} notes"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=vault, env=child_env(), check=True, capture_output=True)
    return vault


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,10000", help="comma-separated note counts [2000,10000]")
    ap.add_argument("--runs", type=int, default=5, help="runs per contestant; medians are reported [5]")
    ap.add_argument(
        "--mdmem",
        action="append",
        default=[],
        metavar="NAME=CHECKOUT",
        help="an mdmem checkout to measure (PYTHONPATH), repeatable [the importable mdmem]",
    )
    ap.add_argument("--qmd", default=None, help="QMD's command [qmd if on PATH; 'none' to skip]")
    add_common_args(ap, "fullindex")
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    work = Path(tempfile.mkdtemp(prefix="mdmem-fullindex-", dir=args.tmp))
    contestants: dict[str, Any] = {}
    for spec in args.mdmem or ["mdmem="]:
        name, _, src = spec.partition("=")
        contestants[name or "mdmem"], pkg = mdmem_runner(src or None)
        log(f"{name or 'mdmem'}: {pkg}")
    qmd = args.qmd or ("qmd" if shutil.which("qmd") else "none")
    if qmd != "none":
        contestants["qmd"] = qmd_runner(shlex.split(qmd), work)
    info = machine()
    rows: list[dict[str, Any]] = []
    try:
        for n in sizes:
            vault = make_vault(n, args.seed, work)
            loads = [os.getloadavg()[0]]
            samples: dict[str, list[dict[str, float]]] = {c: [] for c in contestants}
            for i in range(args.runs):
                for c, fn in contestants.items():  # alternate, run by run
                    samples[c].append(s := fn(vault))
                    log(
                        f"  {n:,} run {i + 1} {c}: {s['wall']:.2f} s wall, {s['cpu']:.2f} s CPU, "
                        f"load {os.getloadavg()[0]:.2f}"
                    )
            loads.append(os.getloadavg()[0])
            for c, ss in samples.items():
                rows.append(
                    {
                        "notes": n,
                        "who": c,
                        "wall": median([s["wall"] for s in ss]),
                        "cpu": median([s["cpu"] for s in ss]),
                        "rss_mb": median([s["rss_mb"] for s in ss]),
                        "load": loads,
                        "samples": ss,
                    }
                )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    lines = [
        f"mdmem {info['mdmem_rev']}, {info['nproc']} cores, {info['cpu']}, Python {info['python']}, "
        f"{info['date']}; {args.runs} runs each, alternating; medians",
        "",
        "| notes | who | wall s | CPU s | peak RSS MB | load (1 min) before → after |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['notes']:,} | {r['who']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
        f"{r['load'][0]:.2f} → {r['load'][1]:.2f} |"
        for r in rows
    ]
    md = "\n".join(lines) + "\n"
    print(md)
    write_results(args.out, md, {"machine": info, "runs": args.runs, "seed": args.seed, "rows": rows})


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
