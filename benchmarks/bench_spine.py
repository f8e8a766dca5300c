"""Benchmark of the spine: full index, one-note reindex (hook and real commit), cold CLI search,
warm in-process search and index size, for synthetic vaults of several sizes.

    python benchmarks/bench_spine.py [--sizes 1000,10000,50000] [--runs 3]

Every measured command runs under a tiny wrapper process, so its wall time excludes our own
overhead and its peak RSS (``RUSAGE_CHILDREN``, a max over waited-for descendants) is its own.
Results: a markdown table on stdout and in ``benchmarks/out/spine.md``, raw numbers in
``benchmarks/out/spine.json``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import make_corpus, make_queries  # noqa: E402
from setup_env import compile_package  # noqa: E402

OUT = HERE / "out"
GIT_ID = ["-c", "user.name=b", "-c", "user.email=b@x", "-c", "commit.gpgsign=false"]

# Runs argv[1:], then prints one JSON line: wall seconds of the child, its CPU seconds (user + system,
# with its own children: the parse worker, git), its peak RSS in KiB, rc, stderr.
_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": use.ru_utime + use.ru_stime, "rss_kib": use.ru_maxrss, "rc": p.returncode,
                  "stderr": p.stderr.decode(errors="replace")[-2000:]}))
"""


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured process."""

    wall: float  # seconds, spawn to exit
    rss_mb: float  # peak resident set size, MiB
    cpu: float = 0.0  # CPU seconds (user + system), its children included


@dataclass(slots=True)
class SizeResult:
    """Every figure for one corpus size (medians over runs; raw samples kept for the JSON)."""

    notes: int
    corpus_mb: float = 0.0
    full_s: float = 0.0
    full_cpu_s: float = 0.0
    full_rss_mb: float = 0.0
    hook_reindex_ms: float = 0.0
    hook_reindex_cpu_ms: float = 0.0
    hook_reindex_rss_mb: float = 0.0
    commit_plain_ms: float = 0.0
    commit_hooked_ms: float = 0.0
    commit_overhead_ms: float = 0.0
    cold_search_ms: float = 0.0
    cold_search_cpu_ms: float = 0.0
    cold_search_rss_mb: float = 0.0
    warm_median_ms: float = 0.0
    warm_p95_ms: float = 0.0
    index_mb: float = 0.0
    index_mb_after_updates: float = 0.0
    hook_updated_index: bool = False
    hook_rebuilds: int = 0  # hook runs that rebuilt the whole index instead of one note
    raw: dict[str, list[float]] = field(default_factory=dict)


# -- processes ----------------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    """Our environment without anything that would redirect mdmem or git, and without the automatic
    embedding after writes: each benchmark measures what it names (``mdmem embed``, a hook's
    reindex, a checkout) with no model loading beside it. ``bench_keepup.py`` measures it turned on."""
    drop = ("MDMEM_", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, "MDMEM_AUTO_EMBED": "0"}


def measure(cmd: list[str], cwd: Path) -> Sample:
    """Run ``cmd`` under the wrapper; its wall time and peak RSS. Raises if it fails."""
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd], cwd=cwd, env=child_env(), capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    if data["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {data['rc']}:\n{data['stderr']}")
    return Sample(wall=data["wall"], rss_mb=data["rss_kib"] / 1024, cpu=data["cpu"])


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *GIT_ID, *args], cwd=root, env=child_env(), check=True, capture_output=True, text=True
    ).stdout


def mdmem_cmd() -> list[str]:
    """The installed ``mdmem`` console script next to this interpreter, else ``python -m mdmem``."""
    script = Path(sys.executable).parent / "mdmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mdmem"]


def du_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return total / 2**20


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)] if s else math.nan


# -- one size -----------------------------------------------------------------------------------


def generation(vault: Path) -> str | None:
    """The index generation the manifest points at (changes when the index is rebuilt)."""
    try:
        return str(json.loads((vault / ".mdmem" / "manifest.json").read_text()).get("generation"))
    except (OSError, ValueError):
        return None


def source_fingerprint() -> str:
    """A hash of mdmem's source files, to notice when they change during a run."""
    import mdmem

    h = hashlib.blake2b(digest_size=8)
    for f in sorted(Path(mdmem.__file__).resolve().parent.rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


def edit_note(root: Path, rel: str, token: str) -> None:
    """Append a line with a unique word to one note (what an agent or a person does)."""
    with open(root / rel, "a", encoding="utf-8") as fh:
        fh.write(f"\nUpdate: checked again, see {token}.\n")


def bench_size(n: int, runs: int, seed: int, workdir: Path, log: Any) -> SizeResult:
    """Generate a vault of ``n`` notes in ``workdir`` and measure everything on it."""
    res = SizeResult(notes=n)
    raw = res.raw
    vault = workdir / "vault"
    t = time.perf_counter()
    paths = make_corpus(vault, n, seed=seed)
    (vault / ".gitignore").write_text(".mdmem/\n")
    res.corpus_mb = du_mb(vault / "notes")
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", f"corpus of {n} notes")
    log(f"  corpus: {n} notes, {res.corpus_mb:.1f} MB, generated and committed in {time.perf_counter() - t:.1f}s")

    mdmem = [*mdmem_cmd(), "--vault", str(vault)]

    # (a) full index
    full = [measure([*mdmem, "reindex", "--full", "-q"], vault) for _ in range(runs)]
    raw["full_s"] = [s.wall for s in full]
    raw["full_rss_mb"] = [s.rss_mb for s in full]
    raw["full_cpu_s"] = [s.cpu for s in full]
    res.full_s, res.full_rss_mb = median(raw["full_s"]), median(raw["full_rss_mb"])
    res.full_cpu_s = median(raw["full_cpu_s"])
    res.index_mb = du_mb(vault / ".mdmem")
    log(
        f"  full index: {res.full_s:.2f}s ({res.full_cpu_s:.2f}s CPU), peak RSS {res.full_rss_mb:.0f} MB, "
        f"index {res.index_mb:.1f} MB"
    )

    # (b1) what the post-commit hook runs after a commit of one changed note (committed with the hooks
    # off, then the hook alone, timed)
    no_hooks = workdir / "no-hooks"
    no_hooks.mkdir()
    hook = [sys.executable, "-m", "mdmem", "--vault", ".", "reindex", "--git-hook", "post-commit"]
    step = max(1, n // (4 * runs + 1))
    targets = iter(paths[step::step])
    samples = []
    for r in range(runs):
        rel = next(targets)
        edit_note(vault, rel, f"hookedit{r}x")
        git(vault, "-c", f"core.hooksPath={no_hooks}", "commit", "-q", "-m", f"hook {r}", "--", rel)
        before = generation(vault)
        samples.append(measure(hook, vault))
        res.hook_rebuilds += generation(vault) != before
    raw["hook_reindex_ms"] = [s.wall * 1000 for s in samples]
    raw["hook_reindex_cpu_ms"] = [s.cpu * 1000 for s in samples]
    res.hook_reindex_ms = median(raw["hook_reindex_ms"])
    res.hook_reindex_cpu_ms = median(raw["hook_reindex_cpu_ms"])
    res.hook_reindex_rss_mb = median([s.rss_mb for s in samples])
    log(f"  hook reindex: {res.hook_reindex_ms:.0f} ms ({res.hook_reindex_cpu_ms:.0f} ms CPU)")

    # (b2) a real commit of one changed note, without and with the hooks (interleaved)
    subprocess.run([*mdmem, "hooks", "install"], env=child_env(), check=True, capture_output=True)
    plain, hooked = [], []
    for r in range(runs):
        rel = next(targets)
        edit_note(vault, rel, f"plainedit{r}x")
        git(vault, "add", "--", rel)
        plain.append(
            measure(
                ["git", *GIT_ID, "-c", f"core.hooksPath={no_hooks}", "commit", "-q", "-m", f"plain {r}"], vault
            ).wall
            * 1000
        )
        measure(hook, vault)  # catch the index up, untimed, so both commits index one note
        rel = next(targets)
        edit_note(vault, rel, f"commitedit{r}x")
        git(vault, "add", "--", rel)
        before = generation(vault)
        hooked.append(measure(["git", *GIT_ID, "commit", "-q", "-m", f"hooked {r}"], vault).wall * 1000)
        res.hook_rebuilds += generation(vault) != before
    raw["commit_plain_ms"], raw["commit_hooked_ms"] = plain, hooked
    res.commit_plain_ms, res.commit_hooked_ms = median(plain), median(hooked)
    res.commit_overhead_ms = res.commit_hooked_ms - res.commit_plain_ms
    log(f"  commit: {res.commit_plain_ms:.0f} ms without hooks, {res.commit_hooked_ms:.0f} ms with")

    # (c) cold CLI search: process start to exit, a different query each time
    queries = make_queries(max(5, runs) + 210, seed=seed)
    cold = [measure([*mdmem, "search", *q.split()], vault) for q in queries[: max(5, runs)]]
    raw["cold_search_ms"] = [s.wall * 1000 for s in cold]
    raw["cold_search_cpu_ms"] = [s.cpu * 1000 for s in cold]
    res.cold_search_ms = median(raw["cold_search_ms"])
    res.cold_search_cpu_ms = median(raw["cold_search_cpu_ms"])
    res.cold_search_rss_mb = median([s.rss_mb for s in cold])
    log(
        f"  cold search: {res.cold_search_ms:.0f} ms ({res.cold_search_cpu_ms:.0f} ms CPU), "
        f"peak RSS {res.cold_search_rss_mb:.0f} MB"
    )

    # (d) warm in-process search; (e) index size after the updates above
    from mdmem import Vault

    with Vault.open(vault) as v:
        res.hook_updated_index = bool(v.search(f"commitedit{runs - 1}x", limit=1))
        for q in queries[-210:-200]:
            v.search(q)
        warm = []
        for q in queries[-200:]:
            t = time.perf_counter()
            v.search(q)
            warm.append((time.perf_counter() - t) * 1000)
    raw["warm_ms"] = warm
    res.warm_median_ms, res.warm_p95_ms = median(warm), p95(warm)
    res.index_mb_after_updates = du_mb(vault / ".mdmem")
    log(f"  warm search: median {res.warm_median_ms:.1f} ms, p95 {res.warm_p95_ms:.1f} ms")
    return res


# -- report -------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import whoosh

    import mdmem

    src = Path(mdmem.__file__).resolve().parent
    rev = (
        subprocess.run(
            ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "?"
    )
    dirty = subprocess.run(
        ["git", "-C", str(src), "status", "--porcelain", "--", "."], capture_output=True, text=True
    ).stdout.strip()
    return {
        "mdmem_rev": rev + (" + uncommitted changes" if dirty else ""),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "mdmem": mdmem.__version__,
        "whoosh": whoosh.versionstring(),
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        "loadavg": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


COLUMNS = (
    ("notes", "notes", "{:,}"),
    ("corpus_mb", "corpus MB", "{:.1f}"),
    ("full_s", "full index s", "{:.2f}"),
    ("full_cpu_s", "full index CPU s", "{:.2f}"),
    ("full_rss_mb", "full index peak RSS MB", "{:.0f}"),
    ("hook_reindex_ms", "hook reindex ms", "{:.0f}"),
    ("commit_plain_ms", "commit w/o hooks ms", "{:.0f}"),
    ("commit_hooked_ms", "commit with hooks ms", "{:.0f}"),
    ("commit_overhead_ms", "hook cost in commit ms", "{:.0f}"),
    ("cold_search_ms", "cold CLI search ms", "{:.0f}"),
    ("cold_search_rss_mb", "cold search peak RSS MB", "{:.0f}"),
    ("warm_median_ms", "warm search median ms", "{:.1f}"),
    ("warm_p95_ms", "warm search p95 ms", "{:.1f}"),
    ("index_mb", "index MB", "{:.1f}"),
)

TARGETS = (  # (field, limit, label); targets hold for 2k–10k notes on a 2-core machine
    ("cold_search_ms", 200.0, "cold CLI search < 200 ms"),
    ("hook_reindex_ms", 300.0, "one-note reindex through the hook < 300 ms"),
    ("full_s", 15.0, "full index of 10k notes < 15 s"),
    ("full_rss_mb", 300.0, "full index peak RSS < 300 MB"),
)


GOALS_50K = (  # a team vault of 50k notes
    ("hook_reindex_ms", 1000.0, "one-note hook < 1 s"),
    ("cold_search_ms", 500.0, "cold CLI search < 500 ms"),
    ("full_rss_mb", 1024.0, "full index peak RSS < 1 GB"),
)


def render(info: dict[str, Any], results: list[SizeResult], runs: int) -> str:
    """The machine, the table and the target checks as markdown."""
    lines = [
        f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}, {info['platform']}",
        f"mdmem {info['mdmem']} ({info['mdmem_rev']}), whoosh {info['whoosh']}, {info['git']}; "
        f"load average at start {', '.join(f'{x:.2f}' for x in info['loadavg'])}"
        + (f", at the end {', '.join(f'{x:.2f}' for x in info['loadavg_end'])}" if "loadavg_end" in info else "")
        + f"; {info['date']}",
        f"medians of {runs} run(s); warm search over 200 queries; bytecode compiled",
        "",
        "| " + " | ".join(label for _, label, _ in COLUMNS) + " |",
        "|" + "|".join("---:" for _ in COLUMNS) + "|",
    ]
    for r in results:
        lines.append("| " + " | ".join(fmt.format(getattr(r, key)) for key, _, fmt in COLUMNS) + " |")
    lines.append("")
    for r in results:
        if not 2000 <= r.notes <= 10000 and (r.notes != results[-1].notes or r.notes >= 50000):
            continue  # the 2k–10k targets; 50k has its own goals below
        checks = []
        for key, limit, label in TARGETS:
            value = getattr(r, key)
            checks.append(f"{'PASS' if value < limit else 'FAIL'} {label} ({value:.4g})")
        scope = "" if 2000 <= r.notes <= 10000 else " (outside the 2k–10k target range)"
        lines.append(f"targets at {r.notes:,} notes{scope}: " + "; ".join(checks))
    for r in results:
        if r.notes >= 50000:
            checks = [
                f"{'PASS' if getattr(r, key) < limit else 'FAIL'} {label} ({getattr(r, key):.4g})"
                for key, limit, label in GOALS_50K
            ]
            lines.append(f"the 50k goals at {r.notes:,} notes: " + "; ".join(checks))
    for r in results:
        if not r.hook_updated_index:
            lines.append(f"WARNING: at {r.notes:,} notes the post-commit hook did not update the index")
        if r.hook_rebuilds:
            lines.append(
                f"WARNING: at {r.notes:,} notes {r.hook_rebuilds} hook run(s) rebuilt the whole "
                "index instead of updating one note"
            )
    if info.get("source_changed"):
        lines.append("WARNING: mdmem's source files changed during the run; the sizes may have measured different code")
    return "\n".join(lines) + "\n"


def add_common_args(ap: argparse.ArgumentParser, out: str) -> None:
    """The options every benchmark here shares (besides --sizes and --runs)."""
    ap.add_argument("--seed", type=int, default=0, help="corpus seed [0]")
    ap.add_argument("--tmp", type=Path, default=None, help="where to build the vaults [system temp]")
    ap.add_argument("--keep", action="store_true", help="keep the generated vaults")
    ap.add_argument("--out", default=out, help=f"name of the result files in benchmarks/out/ [{out}]")


def write_results(name: str, md: str, data: dict[str, Any]) -> None:
    """benchmarks/out/NAME.md (the table) and NAME.json (everything measured)."""
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.md").write_text(md)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")


def parse_sizes(text: str) -> list[int]:
    """'1000,10k' → [1000, 10000]; exits when git (needed to build the vaults) is missing."""
    if shutil.which("git") is None:
        sys.exit("git is required")
    return [int(s.replace("_", "").replace("k", "000")) for s in text.split(",") if s.strip()]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes",
        default="1000,10000",
        help="comma-separated corpus sizes (50000 works but takes minutes) [1000,10000]",
    )
    ap.add_argument("--runs", type=int, default=3, help="repetitions per figure; medians are reported [3]")
    add_common_args(ap, "spine")
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes)

    compile_package()  # cold starts measure the code, not the compiling of what changed since
    info = machine()
    fingerprint = source_fingerprint()
    results = []
    for n in sizes:
        log(f"== {n:,} notes")
        work = Path(tempfile.mkdtemp(prefix=f"mdmem-bench-{n}-", dir=args.tmp))
        try:
            results.append(bench_size(n, max(1, args.runs), args.seed, work, log))
        finally:
            if args.keep:
                log(f"  kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
    info["source_changed"] = source_fingerprint() != fingerprint
    info["loadavg_end"] = os.getloadavg()
    md = render(info, results, args.runs)
    print(md)
    write_results(
        args.out, md, {"machine": info, "runs": args.runs, "seed": args.seed, "results": [asdict(r) for r in results]}
    )


if __name__ == "__main__":
    main()
