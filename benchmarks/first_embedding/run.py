"""Ask while the first embedding runs: is hybrid ``query`` ever worse than BM25 ``search``?

    python benchmarks/first_embedding/run.py help /tmp/obsidian-help      # a clone of the corpus at its commit
    python benchmarks/first_embedding/run.py hub /tmp/obsidian-hub --every 20
    python benchmarks/first_embedding/run.py til /tmp/til

The corpora (``corpora.yaml``: repository, commit, folders, questions) are public vaults of different shapes;
clone one, check out its commit, and pass the clone. The script copies the vault's notes (its ``*.md``
files, in the folders named) into a new git repository under ``--work``, commits them and runs
``mdmem init`` on it, as a new user adopting the folder would: ``init`` indexes BM25 and leaves the vectors
to the background embedding job. From the moment ``init`` returns until that job is done, every ``--every``
seconds it samples, in this process (a warm ``Vault``, the query model loaded once): the chunks with a
vector, the notes whose first chunk has one, and R@10 / MRR of ``search`` and ``query`` over the corpus's
questions. Sampling takes CPU from the job, so the times to full coverage are upper bounds; with
``--no-questions`` only the coverage is sampled (the times the embedding alone takes).

Results: a table on stdout and ``benchmarks/out/first-embedding-NAME.md`` (raw samples in ``.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_spine import GIT_ID, log, machine, write_results  # noqa: E402


def make_vault(spec: dict[str, Any], source: Path, vault: Path) -> int:
    """Copy the corpus's notes into ``vault`` and commit them; returns how many."""
    count = 0
    for folder in spec["folders"]:
        base = source / folder
        for path in sorted(base.rglob("*.md")):
            rel = path.relative_to(source)
            if any(part.startswith(".") for part in rel.parts):
                continue
            dest = vault / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            count += 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "the corpus"]):
        subprocess.run(["git", *GIT_ID, *args], cwd=vault, env=env, check=True, capture_output=True)
    return count


def coverage(vault: Path) -> dict[str, int]:
    """Chunks with a vector, notes whose first chunk has one, and the totals, in the current generation."""
    gen = json.loads((vault / ".mdmem" / "manifest.json").read_text())["generation"]
    db = sqlite3.connect(f"file:{vault / '.mdmem' / gen / 'catalog.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        done, total = db.execute("SELECT coalesce(sum(vec), 0), count(*) FROM chunks").fetchone()
        first, notes = db.execute("SELECT coalesce(sum(vec), 0), count(*) FROM chunks WHERE ord = 0").fetchone()
    finally:
        db.close()
    return {"chunks_done": int(done), "chunks": int(total), "first_done": int(first), "notes": int(notes)}


def ask(v: Any, questions: list[tuple[str, str]], prefix: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for mode in ("search", "query"):
        found, rr = 0, 0.0
        for text, want in questions:
            paths = [h.path.removeprefix(prefix) for h in getattr(v, mode)(text, limit=10)]
            if want in paths:
                found += 1
                rr += 1 / (paths.index(want) + 1)
        out[f"{mode}_r10"] = round(found / len(questions), 3)
        out[f"{mode}_mrr"] = round(rr / len(questions), 3)
    return out


def embedding_running(vault: Path) -> bool:
    from mdmem.index.state import EMBED_HOOK, IndexState

    state = IndexState(vault, 1.0)
    return state.job_request(EMBED_HOOK) is not None or state.job_active(EMBED_HOOK)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a name in corpora.yaml")
    ap.add_argument("source", type=Path, help="a clone of the corpus's repository at its commit")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between samples [10]")
    ap.add_argument("--work", type=Path, default=None, help="where the vault is made (a new temporary folder)")
    ap.add_argument("--no-questions", action="store_true", help="sample the coverage only")
    ap.add_argument("--limit", type=float, default=3600.0, help="give up after this many seconds [3600]")
    args = ap.parse_args(argv)
    spec = yaml.safe_load((HERE / "corpora.yaml").read_text())[args.corpus]
    raw = yaml.safe_load((HERE / spec["questions"]).read_text())
    questions = [(q, p) for items in raw.values() for q, p in items]
    head = subprocess.run(
        ["git", "-C", str(args.source), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if head != spec["commit"]:
        log(f"warning: {args.source} is at {head or '?'}, the benchmark's questions were written for {spec['commit']}")
    import tempfile

    work = args.work or Path(tempfile.mkdtemp(prefix=f"mdmem-first-{args.corpus}-"))
    vault = work / "vault"
    vault.mkdir(parents=True)
    notes = make_vault(spec, args.source, vault)
    log(f"{args.corpus}: {notes} notes copied to {vault}")
    # MDMEM_HOME stays: the model's ONNX export (and the index seal) this process uses too
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MDMEM_", "GIT_")) or k == "MDMEM_HOME"}
    info = machine()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mdmem", "init", str(vault)], env=env, check=True, capture_output=True)
    init_s = time.perf_counter() - t0
    start = time.perf_counter()
    log(f"init returned after {init_s:.1f} s (load {os.getloadavg()[0]:.1f})")
    from mdmem import Vault

    samples: list[dict[str, Any]] = []
    first_all = all_done = None
    with Vault.open(vault) as v:
        if not args.no_questions:
            v.semantic.embedder.embed(["warm up"], query=True)  # the query model, loaded before the clock runs
        while True:
            at = time.perf_counter() - start
            running = embedding_running(vault)
            sample: dict[str, Any] = {"t": round(at, 1), "load": os.getloadavg()[0], **coverage(vault)}
            if first_all is None and sample["first_done"] >= sample["notes"]:
                first_all = at
            if all_done is None and sample["chunks_done"] >= sample["chunks"]:
                all_done = at
            if not args.no_questions:
                sample.update(ask(v, questions, spec.get("prefix", "")))
            samples.append(sample)
            log(" ".join(f"{k}={val}" for k, val in sample.items()))
            if (not running and all_done is not None) or at > args.limit:
                break
            time.sleep(max(0.0, args.every - (time.perf_counter() - start - at)))
    worse = [s for s in samples if "query_r10" in s and s["query_r10"] < s["search_r10"]]
    lines = [
        f"# First embedding: {args.corpus} ({notes} notes, {samples[-1]['chunks']} chunks, "
        f"{len(questions)} questions) — mdmem {info['mdmem_rev']}, {info['cpu']}",
        "",
        f"init {init_s:.1f} s; every note's first chunk embedded {first_all and round(first_all)} s after it; "
        f"all chunks {all_done and round(all_done)} s after it; query R@10 below search R@10 in "
        f"{len(worse)} of {len(samples)} samples",
        "",
        "| s after init | load | chunks with vectors | notes with a first-chunk vector | search R@10 / MRR "
        "| query R@10 / MRR |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for s in samples:
        ask_cells = (
            f"{s['search_r10']:.3f} / {s['search_mrr']:.3f} | {s['query_r10']:.3f} / {s['query_mrr']:.3f}"
            if "query_r10" in s
            else "– | –"
        )
        lines.append(
            f"| {s['t']:.0f} | {s['load']:.1f} | {s['chunks_done']}/{s['chunks']} | "
            f"{s['first_done']}/{s['notes']} | {ask_cells} |"
        )
    md = "\n".join(lines) + "\n"
    print(md)
    write_results(
        f"first-embedding-{args.corpus}",
        md,
        {
            "machine": info,
            "corpus": args.corpus,
            "commit": spec["commit"],
            "notes": notes,
            "init_s": init_s,
            "first_chunks_s": first_all,
            "all_chunks_s": all_done,
            "samples": samples,
        },
    )
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
