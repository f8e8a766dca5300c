"""Benchmark of vectors keeping up with commits: after a one-note commit on an embedded vault,
how long git waits (the commit with mdmem's hooks) and how long until the note's vectors are complete.

    python benchmarks/bench_keepup.py [--notes 2000] [--runs 5] [--modes before,hash,default] [--before REF]

Modes: ``before`` runs mdmem as it was at the git commit ``--before`` (its package extracted with
``git archive`` and compiled, then put first on PYTHONPATH: the hook as it was, BM25 only, vectors never
come by themselves) with the bundled model; ``hash`` the
hashing embedder, cheap, so the hook embeds inline (a stand-in for a model that loads fast);
``default`` the bundled MiniLM on torch, whose load (3–8 s) makes the hook hand the embedding to the
background job. Each mode has its own vault: the corpus committed, indexed, and every
chunk given a vector of that mode's model. For MiniLM those vectors are random unit vectors put into the
embedding cache under the model's fingerprint (2,000 notes would take ~14 minutes to embed here, and the
values do not change what a one-note commit costs); ``mdmem embed`` then only adds them to the index.

Each run rewrites one note with new text and commits it; "vectors complete" is polled every 20 ms in
the catalogue (no chunk without a vector, no embedding job requested). Medians of ``--runs``. Results in
``benchmarks/out/keepup.md`` and ``.json``. The machine may be shared: see the load figures.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import add_common_args, child_env, git, log, machine, median, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402
from setup_env import compile_package  # noqa: E402

MODES = {"before": {}, "hash": {"MDMEM_EMBED_MODEL": "hash"}, "default": {}}
BEFORE: dict[str, str] = {}  # PYTHONPATH for the "before" mode (--before)
TARGET_S = 5.0  # vectors of a one-note commit complete within 5 s


def env_for(mode: str) -> dict[str, str]:
    return {**child_env(), "MDMEM_AUTO_EMBED": "1", **MODES[mode], **(BEFORE if mode == "before" else {})}


def mdmem(vault: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        env=env,
        text=True,
        capture_output=True,
        check=True,
    ).stdout


def build(vault: Path, notes: int, seed: int, mode: str) -> None:
    """The corpus in git with mdmem's hooks, indexed, every chunk with a vector of this mode's model."""
    env = env_for(mode)
    make_corpus(vault, notes, seed)
    git(vault, "init", "-q", "-b", "main")
    mdmem(vault, "init", str(vault), env={**env, "MDMEM_AUTO_EMBED": "0"})
    git(vault, "add", "-A")
    subprocess.run(
        ["git", "commit", "-qm", "corpus"],
        cwd=vault,
        check=True,
        capture_output=True,
        env={
            **env,
            "MDMEM_SKIP_HOOK": "1",
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@x",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@x",
        },
    )
    mdmem(vault, "reindex", env={**env, "MDMEM_AUTO_EMBED": "0"})
    if mode != "hash":
        prefill_cache(vault, env)
    mdmem(vault, "embed", env={**env, "MDMEM_AUTO_EMBED": "0"})


def prefill_cache(vault: Path, env: dict[str, str]) -> None:
    """Random unit vectors for every chunk, under the configured model's fingerprint (no model runs)."""
    code = """
import sys, numpy as np
from mdmem import Vault
v = Vault.open(sys.argv[1]); sem = v.semantic; v.store.repair()
chunks = v.store.catalog.all_chunks(); rng = np.random.default_rng(0)
vecs = rng.standard_normal((len(chunks), sem.embedder.dim)).astype(np.float32)
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
sem.cache.put_many(sem.embedder.fingerprint, [(h, vecs[i]) for i, (_, h, _) in enumerate(chunks)])
v.close()
"""
    subprocess.run([sys.executable, "-c", code, str(vault)], env=env, check=True)


def complete(vault: Path) -> bool:
    """No chunk without a vector and no embedding job requested (read straight from the catalogue)."""
    import json

    if (vault / ".mdmem" / "embed").exists() or (vault / ".mdmem" / "dirty").exists():
        return False
    gen = json.loads((vault / ".mdmem" / "manifest.json").read_text())["generation"]
    db = sqlite3.connect(f"file:{vault / '.mdmem' / gen / 'catalog.sqlite'}?mode=ro", uri=True, timeout=5)
    try:
        return db.execute("SELECT count(*) FROM chunks WHERE vec=0").fetchone()[0] == 0
    except sqlite3.OperationalError:
        return False
    finally:
        db.close()


def one_run(vault: Path, mode: str, i: int, limit: float = 120.0) -> dict[str, Any]:
    """Rewrite one note, commit it (git waits for the hook), then poll until its vectors are in."""
    env = {
        **env_for(mode),
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
    }
    note = vault / "notes" / f"keepup-{i % 3}.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(
        f"# Keep-up note {i}\n\nRun {i} of the keep-up benchmark ({mode}, {time.time()}): the "
        f"release train leaves on Thursday and the rollback plan sits in the runbook.\n"
    )
    git(vault, "add", "-A")
    t0 = time.perf_counter()
    subprocess.run(["git", "commit", "-qm", f"keep-up {i}"], cwd=vault, env=env, check=True, capture_output=True)
    commit_s = time.perf_counter() - t0
    done_s = None
    if mode != "before":
        while not complete(vault):
            if time.perf_counter() - t0 > limit:
                break
            time.sleep(0.02)
        else:
            done_s = time.perf_counter() - t0
        while (vault / ".mdmem" / "embed").exists() and time.perf_counter() - t0 < limit:
            time.sleep(0.05)  # let the job exit before the next run
    return {"commit_s": commit_s, "vectors_s": done_s, "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=2000, help="notes in each vault [2000]")
    ap.add_argument("--runs", type=int, default=5, help="one-note commits per mode; medians reported [5]")
    ap.add_argument("--modes", default="before,hash,default", help="which of before, hash, default [all]")
    ap.add_argument("--before", default=None, help="git commit of mdmem for the 'before' mode (skipped without)")
    add_common_args(ap, "keepup")
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not args.before:
        modes = [m for m in modes if m != "before"]
    work = Path(tempfile.mkdtemp(prefix="mdmem-keepup-", dir=args.tmp))
    compile_package()  # cold starts measure the code, not the compiling of what changed since
    if "before" in modes:
        old = work / "before-code"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent), "archive", args.before, "mdmem"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(old / "mdmem")], check=True)
        BEFORE["PYTHONPATH"] = str(old)
    results: dict[str, Any] = {}
    for mode in modes:
        vault = work / mode
        log(f"{mode}: building {args.notes} notes ...")
        t = time.perf_counter()
        build(vault, args.notes, args.seed, "default" if mode == "before" else mode)
        log(f"{mode}: built in {time.perf_counter() - t:.0f} s")
        runs = [one_run(vault, mode, i) for i in range(args.runs)]
        for r in runs:
            log(f"{mode}: commit {r['commit_s']:.2f} s, vectors {r['vectors_s']} s, load {r['load']:.1f}")
        results[mode] = runs
    info = machine()
    lines = [
        f"# Vectors after a one-note commit ({args.notes} notes, medians of {args.runs})",
        "",
        f"machine: {info.get('cpu', '?')}; load average during runs "
        f"{min(r['load'] for rs in results.values() for r in rs):.1f}–"
        f"{max(r['load'] for rs in results.values() for r in rs):.1f}",
        "",
        "| mode | git commit with hooks s | vectors complete after s (target < 5) | runs |",
        "|---|---|---|---|",
    ]
    for mode, runs in results.items():
        vec = [r["vectors_s"] for r in runs if r["vectors_s"] is not None]
        cell = "never (no auto embedding)" if mode == "before" else (f"{median(vec):.2f}" if vec else "timed out")
        lines.append(f"| {mode} | {median([r['commit_s'] for r in runs]):.2f} | {cell} | {len(runs)} |")
    md = "\n".join(lines) + "\n"
    print(md)
    write_results(args.out, md, {"machine": info, "notes": args.notes, "runs": results})
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
