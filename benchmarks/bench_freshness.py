"""What it costs a read to answer from the files as they are now.

    python benchmarks/bench_freshness.py                      # the check at 10k and 50k notes, the waits at 10k
    python benchmarks/bench_freshness.py --sizes 10000 --changed 200,600,6000 --runs 5

Part 1, the edit check (``Indexer.edited``: which notes differ from the stat the catalogue recorded) on a
``corpus.py`` vault of N notes, committed and indexed, each figure the median of ``--runs`` x 5 samples in
this process, wall and CPU (git's own CPU included):

- ``git diff-index`` is what a cold CLI read runs (git compares every note's stat with its index in C,
  threads included; then the listed and the untracked notes are compared with the catalogue);
- ``stat loop`` is the fallback without git (a Python ``os.stat`` of every indexed note);
- ``watch`` is what ``serve`` and ``mdmem mcp`` do (``FolderWatch``: the kernel's events, drained);
- ``git diff-files`` and ``git ls-files -m`` are the other git commands measured for the choice.

Every sample is checked: after an in-place save of one note (its folder's mtime put back) each method
must name that note. The watch's CPU while idle is measured over 10 s.

Part 2, the wait of a read right after a big checkout: on a vault of ``--wait-notes`` notes with mdmem's
hooks, ``git checkout`` of a branch where K notes differ (three quarters edited, the rest new), then at
once a cold CLI ``mdmem search`` for a word only that branch has: spawn to exit, which includes waiting
for the background catch-up job (the read waits for it). Then back, and the job waited for.

Results: a markdown table on stdout and in ``benchmarks/out/freshness.md``; raw samples in ``.json``.
"""

from __future__ import annotations

import argparse
import os
import resource
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

from bench_spine import GIT_ID, add_common_args, child_env, git, log, machine, mdmem_cmd, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Any, n: int) -> tuple[float, float, list[Any]]:
    """(median wall ms, median CPU ms, results) of ``n`` calls."""
    walls, cpus, out = [], [], []
    for _ in range(n):
        c0, t0 = cpu(), time.perf_counter()
        out.append(fn())
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((cpu() - c0) * 1000)
    return statistics.median(walls), statistics.median(cpus), out


def save_in_place(path: Path, token: str) -> None:
    folder = os.stat(path.parent)
    text = path.read_text()
    with open(path, "r+", encoding="utf-8") as fh:
        fh.seek(0)
        fh.write(text + f"\n{token}\n")
        fh.truncate()
    os.utime(path.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))


def git_list(root: Path, *args: str) -> list[str]:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def bench_check(n: int, runs: int, seed: int, work: Path) -> dict[str, Any]:
    from mdmem import Vault
    from mdmem.adapters.git import head_cheap, worktree_changes

    vault = work / "vault"
    vault.mkdir()
    paths = make_corpus(vault, n, seed)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "notes")
    t0 = time.perf_counter()
    subprocess.run([*mdmem_cmd(), "--vault", str(vault), "reindex", "-q"], env=child_env(), check=True)
    log(f"  indexed {n:,} notes in {time.perf_counter() - t0:.1f} s")
    target = vault / paths[len(paths) // 2]
    rel = paths[len(paths) // 2]
    save_in_place(target, "freshnessmarker")
    os.environ.update({k: v for k, v in child_env().items() if k == "MDMEM_AUTO_EMBED"})
    res: dict[str, Any] = {"notes": n, "load_before": os.getloadavg()[0]}
    k = runs * 5
    with Vault.open(vault) as v:
        store = v.store
        store.repair(notice=False)
        head = head_cheap(vault)

        def by_git() -> list[str] | None:
            return store.indexer.edited(worktree_changes(vault))

        def by_stat() -> list[str] | None:
            return store.indexer.edited(None)

        for name, fn in (
            ("git diff-index", by_git),
            ("stat loop", by_stat),
            ("git diff-files", lambda: git_list(vault, "diff-files", "--name-only", "-z")),
            ("git ls-files -m", lambda: git_list(vault, "ls-files", "-m", "-z")),
        ):
            wall, cpu_ms, out = timed(fn, k)
            assert all(o is not None and rel in o for o in out), (name, out[:1])
            res[name] = {"wall_ms": round(wall, 2), "cpu_ms": round(cpu_ms, 2)}
            log(f"  {name}: {wall:.1f} ms wall, {cpu_ms:.1f} ms CPU")
        assert head is not None
    with Vault.open(vault) as v:
        v.store.repair(notice=False)
        assert v.watch_files()
        v.store.reindex(only=[rel])  # the note as saved: the watch starts from a clean index
        marks = []

        def by_watch() -> list[str] | None:
            save_in_place(target, f"mark{len(marks)}")
            marks.append(1)
            c0, t0 = cpu(), time.perf_counter()
            got = v.store.indexer.edited()
            by_watch.last = ((time.perf_counter() - t0) * 1000, (cpu() - c0) * 1000)  # type: ignore[attr-defined]
            v.store.reindex(only=got or [])
            return got

        samples = []
        for _ in range(k):
            got = by_watch()
            assert got == [rel], got
            samples.append(by_watch.last)  # type: ignore[attr-defined]
        res["watch"] = {
            "wall_ms": round(statistics.median(s[0] for s in samples), 3),
            "cpu_ms": round(statistics.median(s[1] for s in samples), 3),
        }
        log(f"  watch: {res['watch']['wall_ms']:.3f} ms wall")
        c0 = cpu()
        time.sleep(10)
        res["watch_idle_cpu_ms_per_10s"] = round((cpu() - c0) * 1000, 2)
    res["load_after"] = os.getloadavg()[0]
    return res


def bench_wait(n: int, changed: list[int], runs: int, seed: int, work: Path) -> list[dict[str, Any]]:
    vault = work / "wait"
    vault.mkdir()
    paths = make_corpus(vault, n, seed)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "notes")
    env = {k: v for k, v in child_env().items()}
    subprocess.run([*mdmem_cmd(), "--vault", str(vault), "reindex", "-q"], env=env, check=True)
    subprocess.run([*mdmem_cmd(), "--vault", str(vault), "hooks", "install"], env=env, check=True, capture_output=True)
    skip = {**env, "MDMEM_SKIP_HOOK": "1"}
    for k in changed:
        git(vault, "checkout", "-q", "-b", f"b{k}")
        step = max(1, len(paths) // k)
        edit = k * 3 // 4
        for i, rel in enumerate(paths[::step][:edit]):
            with open(vault / rel, "a", encoding="utf-8") as fh:
                fh.write(f"\nA closing paragraph about the branchword{k} of note {i}.\n")
        for i in range(k - edit):
            (vault / "notes" / f"new-{k}-{i}.md").write_text(f"# New {i}\n\nThe branchword{k} note {i}.\n")
        subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=vault, env=skip, check=True)
        subprocess.run(["git", *GIT_ID, "commit", "-qm", f"{k} notes"], cwd=vault, env=skip, check=True)
        subprocess.run(["git", "checkout", "-q", "main"], cwd=vault, env=skip, check=True)
    out = []
    for k in changed:
        for run in range(runs):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            subprocess.run(["git", "checkout", "-q", f"b{k}"], cwd=vault, env=env, check=True, capture_output=True)
            t1 = time.perf_counter()
            proc = subprocess.run(
                [*mdmem_cmd(), "--vault", str(vault), "search", f"branchword{k}", "--json", "-n", "3"],
                cwd=vault,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            t2 = time.perf_counter()
            ok = (
                '"results": [' in proc.stdout
                and f"branchword{k}" not in proc.stderr
                and '"catching_up"' not in proc.stdout
                and '"path"' in proc.stdout
            )
            out.append(
                {
                    "changed": k,
                    "run": run,
                    "checkout_s": round(t1 - t0, 3),
                    "read_s": round(t2 - t1, 3),
                    "fresh": ok,
                    "load": load,
                }
            )
            log(
                f"  {k} notes changed: checkout {t1 - t0:.2f} s, then the read {t2 - t1:.2f} s "
                f"({'fresh' if ok else 'STALE'}), load {load:.1f}"
            )
            subprocess.run(["git", "checkout", "-q", "main"], cwd=vault, env=env, check=True, capture_output=True)
            subprocess.run(
                [*mdmem_cmd(), "--vault", str(vault), "search", "x", "-n", "1"], cwd=vault, env=env, capture_output=True
            )  # waits for the job back to main
    return out


def render(info: dict[str, Any], checks: list[dict[str, Any]], waits: list[dict[str, Any]]) -> str:
    lines = [
        f"# Freshness — {info.get('cpu', '?')}, mdmem {info.get('mdmem_rev')}, load at start {info['loadavg'][0]:.1f}",
        "",
    ]
    if checks:
        methods = ["git diff-index", "watch", "stat loop", "git diff-files", "git ls-files -m"]
        lines += [
            "| notes | " + " | ".join(f"{m} ms (CPU)" for m in methods) + " | watch idle CPU ms / 10 s | load |",
            "|---:|" + "---:|" * (len(methods) + 2),
        ]
        for c in checks:
            cells = [f"{c[m]['wall_ms']} ({c[m]['cpu_ms']})" for m in methods]
            lines.append(
                f"| {c['notes']:,} | "
                + " | ".join(cells)
                + f" | {c['watch_idle_cpu_ms_per_10s']} | {c['load_before']:.1f}–{c['load_after']:.1f} |"
            )
        lines.append("")
    if waits:
        lines += [
            "| notes changed | checkout s (median) | read right after s (median) | fresh answers | load |",
            "|---:|---:|---:|---:|---:|",
        ]
        for k in sorted({w["changed"] for w in waits}):
            ws = [w for w in waits if w["changed"] == k]
            lines.append(
                f"| {k:,} | {statistics.median(w['checkout_s'] for w in ws):.2f} | "
                f"{statistics.median(w['read_s'] for w in ws):.2f} | "
                f"{sum(w['fresh'] for w in ws)}/{len(ws)} | "
                f"{min(w['load'] for w in ws):.1f}–{max(w['load'] for w in ws):.1f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,50000", help="vault sizes for the edit check ('' skips it)")
    ap.add_argument("--changed", default="200,600,6000", help="notes a checkout changes, for the wait ('' skips)")
    ap.add_argument("--wait-notes", type=int, default=10000, help="the vault size for the wait [10000]")
    ap.add_argument("--runs", type=int, default=3, help="repetitions; medians are reported [3]")
    add_common_args(ap, "freshness")
    args = ap.parse_args(argv)
    info = machine()
    checks, waits = [], []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        log(f"== edit check, {n:,} notes")
        work = Path(tempfile.mkdtemp(prefix=f"mdmem-fresh-{n}-", dir=args.tmp))
        try:
            checks.append(bench_check(n, args.runs, args.seed, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    changed = [int(s) for s in args.changed.split(",") if s]
    if changed:
        log(f"== a read right after a checkout, {args.wait_notes:,} notes")
        work = Path(tempfile.mkdtemp(prefix="mdmem-wait-", dir=args.tmp))
        try:
            waits = bench_wait(args.wait_notes, changed, args.runs, args.seed, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    md = render(info, checks, waits)
    print(md)
    write_results(args.out, md, {"machine": info, "checks": checks, "waits": waits})


if __name__ == "__main__":
    main()
