"""Benchmark of the Claude Code prompt hook: wall time of ``mdmem hook prompt`` per prompt, as Claude
Code runs it (a new process, the hook's JSON on stdin), on a synthetic vault, without and with a
running ``mdmem serve``; then again with both cores of the machine kept busy (one busy-loop process
per core, each bounded in time), counting how many prompts added context within the hook's 2 s budget.

    python benchmarks/bench_hooks.py [--notes 2000] [--runs 15] [--busy-runs 20] [--model hash]

The command is exactly what ``mdmem setup claude-code`` installs (``claude_setup.hook_command``:
``PYTHON -S …/mdmem/__main__.py --vault V hook prompt``; ``python -m mdmem`` where that is not there).
Every answer is checked: stdout must be empty or one JSON document in Claude Code's hook
format. Results: a markdown table on stdout and in ``benchmarks/out/hooks.md``, raw samples in
``benchmarks/out/hooks.json``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import add_common_args, child_env, git, log, machine, median, p95, write_results  # noqa: E402
from corpus import make_corpus, make_queries  # noqa: E402
from setup_env import compile_package  # noqa: E402

TARGETS = {"cold": 1000.0, "served": 300.0}  # ms
BUDGET_MS = 2000.0  # the prompt hook's time budget (agent_hooks.TIME_BUDGET_MS)
BUSY_TARGETS = {"answered": 0.95, "served_median": 150.0}  # ≥ 19 of 20 within the budget; served median ms
BUSY_LIMIT_S = 900  # a busy loop ends by itself after this, whatever happens to the benchmark


def env_for(model: str | None) -> dict[str, str]:
    env = child_env()
    if model:
        env["MDMEM_EMBED_MODEL"] = model
    return env


def mdmem(vault: Path, *args: str, env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        env=env,
        text=True,
        capture_output=True,
        check=True,
        **kw,
    )


def run_hook(vault: Path, prompt: str, env: dict[str, str]) -> dict[str, Any]:
    """One hook call, spawn to exit; checks what it printed."""
    payload = json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(vault),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )
    t = time.perf_counter()
    p = subprocess.run(
        hook_argv(vault),
        input=payload,
        env=env,
        text=True,
        capture_output=True,
    )
    wall = (time.perf_counter() - t) * 1000
    valid, answered = p.returncode == 0, False
    if p.stdout:
        try:
            out = json.loads(p.stdout)
            answered = bool(out["hookSpecificOutput"]["additionalContext"])
            valid = valid and out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        except (ValueError, KeyError, TypeError):
            valid = False
    return {"ms": round(wall, 1), "answered": answered, "valid": valid, "stderr": p.stderr.strip()[-300:]}


def hook_argv(vault: Path) -> list[str]:
    """The prompt hook's command as ``mdmem setup claude-code`` writes it for this checkout."""
    try:
        from mdmem.edges.claude_setup import hook_command
    except ImportError:
        return [sys.executable, "-m", "mdmem", "--vault", str(vault), "hook", "prompt"]
    import shlex

    return shlex.split(hook_command(sys.executable, vault, "prompt"))


def series(vault: Path, prompts: list[str], env: dict[str, str], label: str) -> list[dict[str, Any]]:
    run_hook(vault, prompts[0], env)  # one unmeasured call: page cache and .pyc files, as on a used machine
    out = []
    for p in prompts:
        out.append(run_hook(vault, p, env))
        log(
            f"  {label}: {out[-1]['ms']:.0f} ms"
            + ("" if out[-1]["answered"] else " (no answer)")
            + (f"  [{out[-1]['stderr']}]" if out[-1]["stderr"] else "")
        )
    return out


class Busy:
    """One busy-loop process per core (``os.cpu_count()``) while the block runs, each ending by itself
    after ``BUSY_LIMIT_S`` seconds at the latest; stopped when the block ends."""

    def __enter__(self) -> Busy:
        loop = f"import time\nend = time.monotonic() + {BUSY_LIMIT_S}\nwhile time.monotonic() < end:\n    pass\n"
        self.procs = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(os.cpu_count() or 2)]
        time.sleep(1.0)  # the load is there before the first prompt
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=30)


def in_process_ms(vault: Path, prompts: list[str], vectors: bool) -> list[float]:
    """The hook's work alone (Vault.context in a warm process), to show what process start-up costs."""
    from mdmem import Vault

    v = Vault.open(vault)
    v.context(prompts[0], vectors=vectors)
    times = []
    for p in prompts:
        t = time.perf_counter()
        v.context(p, vectors=vectors)
        times.append((time.perf_counter() - t) * 1000)
    v.close()
    return times


def bench(
    notes: int, runs: int, seed: int, model: str | None, vault: Path, reuse: bool, busy_runs: int = 20
) -> dict[str, Any]:
    env = env_for(model)
    if model:
        os.environ["MDMEM_EMBED_MODEL"] = model  # the in-process reference rows too
    log(f"== {notes:,} notes in {vault}")
    if not reuse:
        make_corpus(vault, notes, seed)
        git(vault, "init", "-q")
        git(vault, "add", "-A")
        git(vault, "commit", "-qm", "corpus")
    compile_package()
    t = time.perf_counter()
    mdmem(vault, "reindex", env=env)
    log(f"  indexed in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    mdmem(vault, "embed", env=env)
    embed_s = time.perf_counter() - t
    log(f"  embedded in {embed_s:.1f} s")
    prompts = [f"What do we know about {q}? I want to change it." for q in make_queries(runs, seed + 1, seed)]
    result: dict[str, Any] = {"notes": notes, "runs": runs, "model": model or "default", "embed_s": round(embed_s, 1)}

    busy_prompts = [f"What do we know about {q}? I want to change it." for q in make_queries(busy_runs, seed + 2, seed)]

    result["cold"] = series(vault, prompts, env, "cold, no serve")
    result["in_process_bm25_ms"] = [round(x, 1) for x in in_process_ms(vault, prompts, vectors=False)]
    if busy_runs:
        with Busy():
            result["busy_cold"] = series(vault, busy_prompts, env, "both cores busy, no serve")

    mdmem(vault, "serve", "--detach", "--idle-timeout", "900", env=env)
    try:
        from mdmem.edges.serve import call_server

        t = time.perf_counter()
        while call_server(vault, "context", {"prompt": "warm up", "budget": 100}, timeout=120) is None:
            if time.perf_counter() - t > 300:
                raise RuntimeError("mdmem serve did not answer within 300 s")
            time.sleep(0.5)
        log(f"  serve warm after {time.perf_counter() - t:.1f} s")
        result["served"] = series(vault, prompts, env, "with serve")
        if busy_runs:
            with Busy():
                result["busy_served"] = series(vault, busy_prompts, env, "both cores busy, with serve")
    finally:
        mdmem(vault, "serve", "--stop", env=env)
    result["in_process_hybrid_ms"] = [round(x, 1) for x in in_process_ms(vault, prompts, vectors=True)]
    return result


def render(info: dict[str, Any], r: dict[str, Any], load_end: tuple[float, ...]) -> str:
    def row(label: str, samples: list[dict[str, Any]], target: float | None) -> str:
        ms = [s["ms"] for s in samples]
        ok = "" if target is None else ("PASS" if p95(ms) < target else "FAIL") + f" (< {target:.0f} ms)"
        answered, valid = sum(s["answered"] for s in samples), sum(s["valid"] for s in samples)
        return (
            f"| {label} | {len(ms)} | {median(ms):.0f} | {p95(ms):.0f} | {max(ms):.0f} | "
            f"{answered}/{len(ms)} | {valid}/{len(ms)} | {ok} |"
        )

    def inproc(label: str, ms: list[float]) -> str:
        return f"| {label} | {len(ms)} | {median(ms):.0f} | {p95(ms):.0f} | {max(ms):.0f} | | | |"

    def busy(label: str, samples: list[dict[str, Any]] | None, median_target: float | None) -> str:
        if not samples:
            return f"| {label} | not run | | | |"
        ms = [s["ms"] for s in samples]
        added = sum(s["answered"] and s["ms"] <= BUDGET_MS for s in samples)
        ok = added >= BUSY_TARGETS["answered"] * len(ms) and (median_target is None or median(ms) < median_target)
        want = f"≥ {BUSY_TARGETS['answered']:.0%} within {BUDGET_MS:.0f} ms" + (
            f", median < {median_target:.0f} ms" if median_target is not None else ""
        )
        return (
            f"| {label} | {added}/{len(ms)} | {median(ms):.0f} | {max(ms):.0f} | {'PASS' if ok else 'FAIL'} ({want}) |"
        )

    return "\n".join(
        [
            f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}; mdmem {info['mdmem_rev']}; "
            f"{info['date']}",
            f"load average: {', '.join(f'{x:.2f}' for x in info['loadavg'])} at start, "
            f"{', '.join(f'{x:.2f}' for x in load_end)} at the end (the machine is shared)",
            f"{r['notes']:,} notes (benchmarks/corpus.py), embedding model {r['model']} (all chunks embedded in "
            f"{r['embed_s']} s before measuring); {r['runs']} different prompts per row; bytecode compiled",
            "",
            "| prompt hook | runs | median ms | p95 ms | max ms | answered | valid JSON | target (p95) |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
            row("cold process, no serve (hybrid once the model is in ONNX, else BM25)", r["cold"], TARGETS["cold"]),
            row("cold process, mdmem serve running (hybrid, warm model)", r["served"], TARGETS["served"]),
            inproc("for reference: Vault.context in a warm process, BM25", r["in_process_bm25_ms"]),
            inproc("for reference: Vault.context in a warm process, hybrid", r["in_process_hybrid_ms"]),
            "",
            f"Both cores busy (one busy-loop process per core), {len(r.get('busy_cold') or [])} other prompts:",
            "",
            "| prompt hook, machine saturated | context added within 2 s | median ms | max ms | target |",
            "|---|---:|---:|---:|---|",
            busy("cold process, no serve", r.get("busy_cold"), None),
            busy("cold process, mdmem serve running", r.get("busy_served"), BUSY_TARGETS["served_median"]),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=2000, help="corpus size [2000]")
    ap.add_argument("--runs", type=int, default=15, help="prompts per row [15]")
    ap.add_argument("--busy-runs", type=int, default=20, help="prompts per row with both cores busy; 0: none [20]")
    ap.add_argument("--model", default=None, help="embedding model (e.g. hash for a quick run) [the default model]")
    ap.add_argument(
        "--vault",
        type=Path,
        default=None,
        help="reuse a vault an earlier --keep run built (same --notes/--seed); embedding is then cached",
    )
    add_common_args(ap, "hooks")
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        sys.exit("git is required")
    info = machine()
    if args.vault:
        result = bench(
            args.notes, max(1, args.runs), args.seed, args.model, args.vault.resolve(), True, max(0, args.busy_runs)
        )
    else:
        work = Path(tempfile.mkdtemp(prefix="mdmem-bench-hooks-", dir=args.tmp))
        try:
            result = bench(
                args.notes, max(1, args.runs), args.seed, args.model, work / "vault", False, max(0, args.busy_runs)
            )
        finally:
            if args.keep:
                log(f"  kept {work / 'vault'} (run again with --vault to reuse it)")
            else:
                shutil.rmtree(work, ignore_errors=True)
    md = render(info, result, os.getloadavg())
    print(md)
    write_results(args.out, md, {"machine": info, "result": result})


if __name__ == "__main__":
    main()
