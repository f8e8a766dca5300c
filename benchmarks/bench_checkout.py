"""Benchmark of git's big operations with mdmem's hooks: ``git checkout old && git checkout main``
where the two commits differ in ~1,200 notes, on an indexed vault with vectors, with and without
mdmem's hooks.

    python benchmarks/bench_checkout.py [--notes 6000] [--changed 1200] [--runs 5] [--model hash]

The vault: ``corpus.py`` notes committed as ``old``; then ``main`` changes ``--changed`` notes (three
quarters get a new closing paragraph, one eighth are deleted, one eighth are new). It is indexed and
every chunk embedded before measuring. Each run times the two checkouts as a user runs them (spawn of
the first ``git`` to exit of the second); with hooks it then waits for mdmem's background job (if this
mdmem has one) and records when it finished, how many chunks were left without a vector (read from the
catalogue straight after the job, before any mdmem read could repair them) and how many vectors the
embedding cache gained (a chunk embedded again). The hooks use the interpreter and the ``mdmem`` that
this script imports (``PYTHONPATH``), so the same script measures another checkout of mdmem too.

``--model hash`` (default) is mdmem's tiny deterministic embedder (64 dimensions): the real model
(``--model all-MiniLM-L6-v2``, 384 dimensions) needs ~15 minutes to embed 6,000 notes on 2 cores. No
vector is computed during the checkouts (the cache restores them), so the model only changes the
vector size the usearch file copies.

Results: a markdown table on stdout and in ``benchmarks/out/checkout.md``, raw samples in
``benchmarks/out/checkout.json``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import GIT_ID, add_common_args, child_env, log, machine, median, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402
from setup_env import compile_package  # noqa: E402


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True)


def build(vault: Path, notes: int, changed: int, seed: int, env: dict[str, str]) -> int:
    """The two commits; returns how many notes differ between them."""
    paths = make_corpus(vault, notes, seed)
    git = ["git", *GIT_ID]
    run([*git, "init", "-q", "-b", "main"], vault, env)
    run([*git, "add", "-A"], vault, env)
    run([*git, "commit", "-qm", "old"], vault, env)
    run([*git, "tag", "old"], vault, env)
    edit, gone, new = changed * 3 // 4, changed // 8, changed - changed * 3 // 4 - changed // 8
    step = max(1, len(paths) // changed)
    picked = paths[::step][: edit + gone]
    for rel in picked[:edit]:
        with open(vault / rel, "a", encoding="utf-8") as fh:
            fh.write("\n## Later\n\nA closing paragraph written a year after the note.\n")
    for rel in picked[edit:]:
        (vault / rel).unlink()
    (vault / "notes" / "later").mkdir(exist_ok=True)
    for i in range(new):
        src = (vault / paths[-1 - i]).read_text(encoding="utf-8")
        (vault / "notes" / "later" / f"later-{i}.md").write_text(src.replace("# ", f"# Later {i} ", 1))
    run([*git, "add", "-A"], vault, env)
    run([*git, "commit", "-qm", "a year later"], vault, env)
    diff = run(["git", "diff", "--name-only", "old", "main", "--", "*.md"], vault, env).stdout
    return len(diff.split())


def vector_state(vault: Path) -> tuple[int, int, int]:
    """(chunks without a vector, chunks, vectors in the embedding cache), read straight from the files."""
    state = vault / ".mdmem"
    gen = json.loads((state / "manifest.json").read_text())["generation"]
    with sqlite3.connect(state / gen / "catalog.sqlite") as db:
        done, total = db.execute("SELECT coalesce(sum(vec), 0), count(*) FROM chunks").fetchone()
    with sqlite3.connect(state / "embeddings.sqlite") as db:
        cached = db.execute("SELECT count(*) FROM vec").fetchone()[0]
    return total - done, total, cached


def last_commit(vault: Path) -> str | None:
    state = vault / ".mdmem"
    gen = json.loads((state / "manifest.json").read_text())["generation"]
    with sqlite3.connect(state / gen / "catalog.sqlite") as db:
        row = db.execute("SELECT value FROM meta WHERE key='last_commit'").fetchone()
    return row[0] if row else None


def job_busy(vault: Path) -> bool:
    """Whether mdmem's background job is pending (its request mark) or still running."""
    if (vault / ".mdmem" / "catchup").exists():
        return True
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"catch-up" in cmd and str(vault).encode() in cmd:
                return True
    return False


def round_trip(vault: Path, env: dict[str, str], hooks: bool) -> dict[str, Any]:
    """``git checkout old && git checkout main``; with hooks, then wait for the background job."""
    git = ["git", *GIT_ID] + ([] if hooks else ["-c", f"core.hooksPath={vault / '.no-hooks'}"])
    t0 = time.perf_counter()
    a = subprocess.run([*git, "checkout", "-q", "old"], cwd=vault, env=env, capture_output=True, text=True)
    t1 = time.perf_counter()
    b = subprocess.run([*git, "checkout", "-q", "main"], cwd=vault, env=env, capture_output=True, text=True)
    t2 = time.perf_counter()
    if a.returncode or b.returncode:
        raise RuntimeError(f"git checkout failed: {a.stderr} {b.stderr}")
    out: dict[str, Any] = {
        "s": t2 - t0,
        "old_s": t1 - t0,
        "main_s": t2 - t1,
        "stderr": (a.stderr + b.stderr).strip()[-400:],
    }
    if hooks:
        deadline = time.perf_counter() + 600
        while job_busy(vault) and time.perf_counter() < deadline:
            time.sleep(0.02)
        out["job_done_s"] = time.perf_counter() - t2
        out["missing_vectors"], out["chunks"], out["cached"] = vector_state(vault)
        out["indexed_head"] = last_commit(vault) == run(["git", "rev-parse", "HEAD"], vault, env).stdout.strip()
    return out


def bench(args: argparse.Namespace, vault: Path) -> dict[str, Any]:
    env = {**child_env(), "MDMEM_EMBED_MODEL": args.model}
    compile_package()
    log(f"== {args.notes:,} notes, {args.changed:,} changed, in {vault}")
    differ = build(vault, args.notes, args.changed, args.seed, env)
    log(f"  old and main differ in {differ:,} notes")
    mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
    (vault / ".no-hooks").mkdir()
    t = time.perf_counter()
    run([*mdmem, "reindex"], vault, env)
    log(f"  indexed in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    run([*mdmem, "embed"], vault, env)
    embed_s = time.perf_counter() - t
    missing, chunks, cached = vector_state(vault)
    log(f"  embedded {chunks:,} chunks in {embed_s:.1f} s ({missing} without a vector)")
    run([*mdmem, "hooks", "install"], vault, env)
    result: dict[str, Any] = {
        "notes": args.notes,
        "differ": differ,
        "chunks": chunks,
        "cached_before": cached,
        "model": args.model,
        "embed_s": round(embed_s, 1),
        "runs": args.runs,
    }
    for hooks in (False, True):
        label = "with hooks" if hooks else "git alone"
        samples = []
        for i in range(args.runs):
            samples.append(round_trip(vault, env, hooks))
            extra = (
                (
                    f", job done {samples[-1]['job_done_s']:.2f} s later, "
                    f"{samples[-1]['missing_vectors']} chunks without vector"
                )
                if hooks
                else ""
            )
            log(f"  {label} #{i + 1}: {samples[-1]['s']:.2f} s{extra}")
        result["with_hooks" if hooks else "git_alone"] = samples
    return result


def render(info: dict[str, Any], r: dict[str, Any]) -> str:
    alone = [s["s"] for s in r["git_alone"]]
    hooked = r["with_hooks"]
    with_s = [s["s"] for s in hooked]
    job = [s["job_done_s"] for s in hooked]
    lines = [
        f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}; mdmem {info['mdmem_rev']}; "
        f"{info['date']}",
        f"load average at start: {', '.join(f'{x:.2f}' for x in info['loadavg'])} (the machine is shared)",
        f"{r['notes']:,} notes (benchmarks/corpus.py); old and main differ in {r['differ']:,} notes; "
        f"{r['chunks']:,} chunks, all embedded with model {r['model']!r} before measuring; "
        f"medians of {r['runs']} round trips",
        "",
        "| git checkout old && git checkout main | median s | min s | max s |",
        "|---|---|---|---|",
        f"| git alone (hooks off) | {median(alone):.2f} | {min(alone):.2f} | {max(alone):.2f} |",
        f"| with mdmem's hooks | {median(with_s):.2f} | {min(with_s):.2f} | {max(with_s):.2f} |",
        f"| mdmem's cost to git | {median(with_s) - median(alone):.2f} | | |",
        f"| background job done, after git returned | {median(job):.2f} | {min(job):.2f} | {max(job):.2f} |",
        "",
        f"After each round trip (job done, before any read): chunks without a vector "
        f"{sorted({s['missing_vectors'] for s in hooked})}; vectors the cache gained "
        f"{hooked[-1]['cached'] - r['cached_before']}; index at HEAD: {all(s['indexed_head'] for s in hooked)}.",
        f"Target: with hooks within ~1 s of git alone: {'PASS' if median(with_s) - median(alone) <= 1.0 else 'FAIL'}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=6000, help="notes in the vault [6000]")
    ap.add_argument("--changed", type=int, default=1200, help="notes main changes against old [1200]")
    ap.add_argument("--runs", type=int, default=5, help="round trips per row; medians are reported [5]")
    ap.add_argument("--model", default="hash", help="embedding model: hash (default) or all-MiniLM-L6-v2")
    add_common_args(ap, "checkout")
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        sys.exit("git is required")
    workdir = Path(tempfile.mkdtemp(prefix="mdmem-checkout-", dir=args.tmp))
    try:
        info = machine()
        result = bench(args, workdir / "vault")
        md = render(info, result)
        print(md)
        write_results(args.out, md, {"machine": info, **result})
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
