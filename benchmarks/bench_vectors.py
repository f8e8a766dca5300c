"""Benchmark of the vector side: embedding a vault with the real model (time, throughput, peak RSS,
cache reuse after a full rebuild), warm in-process ``query``/``vsearch`` latency, and ``mdmem serve``
(resident memory, cold CLI ``query`` with and without it), for synthetic vaults of several sizes.

    python benchmarks/bench_vectors.py [--sizes 2000,10000] [--runs 3] [--vault DIR]

Every measured command runs under a tiny wrapper process (as in ``bench_spine.py``), so its wall
time excludes our own overhead and its peak RSS is its own. The warm latencies are measured in a
separate Python process too, so this process never loads the model. Results: a markdown table on
stdout and in ``benchmarks/out/vectors.md``, raw numbers in ``benchmarks/out/vectors.json``.
See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import (  # noqa: E402
    add_common_args,
    child_env,
    du_mb,
    git,
    log,
    machine,
    mdmem_cmd,
    median,
    p95,
    parse_sizes,
    source_fingerprint,
    write_results,
)
from corpus import make_corpus, make_queries  # noqa: E402

WARM_QUERIES = 200

# Runs argv[1:], then prints one JSON line: wall seconds of the child, its peak RSS in KiB, rc,
# the tail of its stdout and stderr.
_WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "rss_kib": rss, "rc": p.returncode,
                  "stdout": p.stdout.decode(errors="replace")[-20000:],
                  "stderr": p.stderr.decode(errors="replace")[-2000:]}))
"""

# Warm latency in one process: open the vault, one warm-up query (loads the model), then
# WARM_QUERIES of each of query / vsearch, plus the pieces (BM25 search, query embedding) for
# reference. argv: vault, seed, n_queries. Prints one JSON line.
_WARM = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[4])
from corpus import make_queries
from mdmem import Vault

vault, seed, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
qs = make_queries(k + 1, seed=seed)  # the serve section uses the queries after these
out = {"ms": {}, "stages": {}}
with Vault.open(vault) as v:
    t = time.perf_counter()
    first = v.query(qs[0])
    out["first_query_s"] = time.perf_counter() - t
    out["first_info"] = {key: first.info.get(key) for key in ("coverage", "stages")}
    emb = v.semantic.embedder
    for name, fn in (("query", v.query), ("vsearch", v.vsearch), ("search", v.search),
                     ("embed_query", lambda q: emb.embed([q], query=True))):
        times = []
        for q in qs[1:]:
            t = time.perf_counter()
            answer = fn(q)
            times.append((time.perf_counter() - t) * 1000)
            if name == "query":
                for s in answer.info.get("stages", []):
                    key = s.split(":")[0] + (":skipped" if "skipped" in s else "")
                    out["stages"][key] = out["stages"].get(key, 0) + 1
        out["ms"][name] = times
out["rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(out))
"""


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured process."""

    wall: float  # seconds, spawn to exit
    rss_mb: float  # peak resident set size, MiB
    stdout: str


@dataclass(slots=True)
class SizeResult:
    """Every figure for one corpus size (medians over runs; raw samples kept for the JSON)."""

    notes: int
    chunks: int = 0
    corpus_mb: float = 0.0
    reindex_s: float = 0.0
    embed_s: float = 0.0
    embedded: int = 0
    embed_rate: float = 0.0  # chunks per second, whole process (model load included)
    embed_rss_mb: float = 0.0
    reembed_s: float = 0.0  # embed after reindex --full: everything from the cache
    reembedded: int = -1  # chunks the second embed ran through the model (must be 0)
    reused: int = 0
    first_query_s: float = 0.0  # in-process: open + first query (model load)
    warm_query_median_ms: float = 0.0
    warm_query_p95_ms: float = 0.0
    warm_vsearch_median_ms: float = 0.0
    warm_vsearch_p95_ms: float = 0.0
    warm_search_median_ms: float = 0.0  # BM25 only, for reference
    warm_embed_query_median_ms: float = 0.0  # embedding the query alone, for reference
    warm_process_rss_mb: float = 0.0
    serve_start_s: float = 0.0  # ``serve --detach`` returned
    serve_ready_s: float = 0.0  # from spawn to the first served answer (model loaded)
    serve_rss_mb: float = 0.0  # VmRSS of the idle server after it answered
    serve_hwm_mb: float = 0.0  # VmHWM (peak) of the server
    cold_query_served_ms: float = 0.0
    cold_query_served_rss_mb: float = 0.0
    served: bool = False  # the CLI query really was answered by the server
    cold_query_local_ms: float = 0.0
    cold_query_local_rss_mb: float = 0.0
    vectors_mb: float = 0.0  # the usearch file
    cache_mb: float = 0.0  # embeddings.sqlite (+ WAL)
    load: dict[str, float] = field(default_factory=dict)  # 1-minute load average at each phase
    query_stages: dict[str, int] = field(default_factory=dict)
    raw: dict[str, list[float]] = field(default_factory=dict)

    @property
    def load_text(self) -> str:
        return " / ".join(f"{self.load[k]:.1f}" for k in ("embed", "warm", "serve", "end") if k in self.load)


# -- processes ----------------------------------------------------------------------------------


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Sample:
    """Run ``cmd`` under the wrapper; its wall time, peak RSS and stdout. Raises if it fails."""
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *cmd],
        cwd=cwd,
        env={**child_env(), **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    if data["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {data['rc']}:\n{data['stderr']}")
    return Sample(wall=data["wall"], rss_mb=data["rss_kib"] / 1024, stdout=data["stdout"])


def proc_status(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a live process, MiB."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(val.split()[0]) / 1024
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our grandchild, reaped by init eventually) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


# -- one size -----------------------------------------------------------------------------------


def state_files(vault: Path) -> tuple[float, float]:
    """Sizes in MB of the usearch file(s) and of the embedding cache."""
    st = vault / ".mdmem"
    vec = sum(f.stat().st_size for f in st.rglob("vectors-*.usearch")) / 2**20
    cache = sum(f.stat().st_size for f in st.glob("embeddings.sqlite*")) / 2**20
    return vec, cache


def drop_cache(vault: Path) -> None:
    for f in (vault / ".mdmem").glob("embeddings.sqlite*"):
        f.unlink()


def bench_embed(res: SizeResult, mdmem: list[str], vault: Path, runs: int, log: Any) -> None:
    """(1) ``embed`` from scratch, ``runs`` times (cache dropped and index rebuilt in between),
    then once more after ``reindex --full`` with the cache kept."""
    raw = res.raw
    samples = []
    for r in range(runs):
        if r:
            drop_cache(vault)
            measure([*mdmem, "reindex", "--full", "-q"], vault)
        s = measure([*mdmem, "embed", "--json"], vault)
        rep = json.loads(s.stdout)
        samples.append((s, rep))
        log(
            f"  embed run {r + 1}: {rep['embedded']} chunks in {s.wall:.1f}s "
            f"({rep['embedded'] / s.wall:.1f}/s), peak RSS {s.rss_mb:.0f} MB"
        )
    raw["embed_s"] = [s.wall for s, _ in samples]
    raw["embed_rss_mb"] = [s.rss_mb for s, _ in samples]
    raw["embedded"] = [rep["embedded"] for _, rep in samples]
    raw["embed_report_s"] = [rep["seconds"] for _, rep in samples]
    res.embed_s, res.embed_rss_mb = median(raw["embed_s"]), median(raw["embed_rss_mb"])
    res.embedded = samples[-1][1]["embedded"]
    res.chunks = samples[-1][1]["total"]
    res.embed_rate = median([e / w for e, w in zip(raw["embedded"], raw["embed_s"])])
    res.vectors_mb, res.cache_mb = state_files(vault)

    measure([*mdmem, "reindex", "--full", "-q"], vault)
    s = measure([*mdmem, "embed", "--json"], vault)
    rep = json.loads(s.stdout)
    res.reembed_s, res.reembedded, res.reused = s.wall, rep["embedded"], rep["reused"]
    raw["reembed_rss_mb"] = [s.rss_mb]
    log(f"  embed after reindex --full: {s.wall:.1f}s, embedded {rep['embedded']}, reused {rep['reused']}")


def bench_warm(res: SizeResult, vault: Path, seed: int, log: Any) -> None:
    """(2) warm in-process latency of query and vsearch (in a child process of its own)."""
    out = subprocess.run(
        [sys.executable, "-c", _WARM, str(vault), str(seed), str(WARM_QUERIES), str(HERE)],
        env=child_env(),
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(f"warm latency run failed:\n{out.stderr[-3000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    ms = data["ms"]
    res.raw.update({f"warm_{k}_ms": v for k, v in ms.items()})
    res.first_query_s = data["first_query_s"]
    res.warm_query_median_ms, res.warm_query_p95_ms = median(ms["query"]), p95(ms["query"])
    res.warm_vsearch_median_ms, res.warm_vsearch_p95_ms = median(ms["vsearch"]), p95(ms["vsearch"])
    res.warm_search_median_ms = median(ms["search"])
    res.warm_embed_query_median_ms = median(ms["embed_query"])
    res.warm_process_rss_mb = data["rss_kib"] / 1024
    res.query_stages = data["stages"]
    cov = (data.get("first_info") or {}).get("coverage") or {}
    if cov and not cov.get("complete"):
        log(f"  WARNING: vectors incomplete during the warm run: {cov}")
    log(
        f"  warm: query median {res.warm_query_median_ms:.1f} ms (p95 {res.warm_query_p95_ms:.1f}), "
        f"vsearch median {res.warm_vsearch_median_ms:.1f} ms (p95 {res.warm_vsearch_p95_ms:.1f}), "
        f"first query {res.first_query_s:.1f}s"
    )


def bench_serve(res: SizeResult, mdmem: list[str], vault: Path, runs: int, seed: int, log: Any) -> None:
    """(3) ``mdmem serve``: readiness, idle RSS, cold CLI query with it; then cold CLI query without."""
    from mdmem.edges.serve import call_server, read_info

    raw = res.raw
    queries = make_queries(WARM_QUERIES + 41, seed=seed)[WARM_QUERIES + 1 :]  # unseen by the warm run
    n_served, n_local = max(9, runs), max(3, runs)
    t0 = time.perf_counter()
    res.serve_start_s = measure([*mdmem, "serve", "--detach", "--idle-timeout", "120"], vault).wall
    info = read_info(vault)
    if info is None:
        raise RuntimeError("mdmem serve --detach returned but no server is running")
    pid = int(info["pid"])
    try:
        answer = None
        while answer is None and time.perf_counter() - t0 < 300:
            answer = call_server(vault, "ask", {"mode": "query", "text": queries[0], "limit": 10}, timeout=300)
            if answer is None:
                time.sleep(0.1)
        if answer is None:
            raise RuntimeError("the server did not answer within 300 s")
        res.serve_ready_s = time.perf_counter() - t0
        time.sleep(2.0)  # let it settle (the fill thread found nothing to embed)
        st = proc_status(pid)
        res.serve_rss_mb, res.serve_hwm_mb = st["VmRSS"], st["VmHWM"]
        log(
            f"  serve: ready {res.serve_ready_s:.1f}s after spawn, idle RSS {res.serve_rss_mb:.0f} MB "
            f"(peak {res.serve_hwm_mb:.0f} MB)"
        )

        check = measure([*mdmem, "query", "--json", *queries[1].split()], vault)
        res.served = bool(json.loads(check.stdout).get("info", {}).get("served"))
        if not res.served:
            log("  WARNING: the CLI query was not answered by the server")
        cold = [measure([*mdmem, "query", *q.split()], vault) for q in queries[2 : 2 + n_served]]
        raw["cold_query_served_ms"] = [s.wall * 1000 for s in cold]
        res.cold_query_served_ms = median(raw["cold_query_served_ms"])
        res.cold_query_served_rss_mb = median([s.rss_mb for s in cold])
        raw["serve_rss_after_queries_mb"] = [proc_status(pid)["VmRSS"]]
        log(f"  cold CLI query with serve: {res.cold_query_served_ms:.0f} ms")
    finally:
        subprocess.run([*mdmem, "serve", "--stop"], env=child_env(), capture_output=True)
        deadline = time.monotonic() + 15
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if alive(pid):
            log(f"  server {pid} ignored --stop; killing it")
            os.kill(pid, 9)

    no_serve = {"MDMEM_NO_SERVE": "1"}
    start = 2 + n_served
    cold = [measure([*mdmem, "query", *q.split()], vault, no_serve) for q in queries[start : start + n_local]]
    raw["cold_query_local_ms"] = [s.wall * 1000 for s in cold]
    res.cold_query_local_ms = median(raw["cold_query_local_ms"])
    res.cold_query_local_rss_mb = median([s.rss_mb for s in cold])
    log(
        f"  cold CLI query without serve: {res.cold_query_local_ms:.0f} ms, "
        f"peak RSS {res.cold_query_local_rss_mb:.0f} MB"
    )


def bench_size(n: int, runs: int, seed: int, workdir: Path, log: Any) -> SizeResult:
    """Generate a vault of ``n`` notes in ``workdir`` and measure everything on it."""
    res = SizeResult(notes=n)
    vault = workdir / "vault"
    t = time.perf_counter()
    make_corpus(vault, n, seed=seed)
    (vault / ".gitignore").write_text(".mdmem/\n")
    res.corpus_mb = du_mb(vault / "notes")
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", f"corpus of {n} notes")
    log(f"  corpus: {n} notes, {res.corpus_mb:.1f} MB, generated and committed in {time.perf_counter() - t:.1f}s")

    mdmem = [*mdmem_cmd(), "--vault", str(vault)]
    res.reindex_s = measure([*mdmem, "reindex", "-q"], vault).wall
    log(f"  reindex: {res.reindex_s:.1f}s")
    for phase, bench in (
        ("embed", lambda: bench_embed(res, mdmem, vault, runs, log)),
        ("warm", lambda: bench_warm(res, vault, seed, log)),
        ("serve", lambda: bench_serve(res, mdmem, vault, runs, seed, log)),
    ):
        res.load[phase] = os.getloadavg()[0]
        bench()
    res.load["end"] = os.getloadavg()[0]
    return res


def bench_existing(vault: Path, runs: int, seed: int, log: Any) -> SizeResult:
    """``--vault``: the query side of an existing vault whose vectors are all in its cache (e.g. one
    kept with ``--keep``): reindex, embed (from the cache), warm latency, serve. Nothing is embedded
    from scratch, so the embedding columns stay empty."""
    nan = math.nan
    notes = [f for f in vault.rglob("*.md") if not f.relative_to(vault).parts[0].startswith(".")]
    res = SizeResult(notes=len(notes), embed_s=nan, embed_rate=nan, embed_rss_mb=nan, embedded=-1)
    res.corpus_mb = sum(f.stat().st_size for f in notes) / 2**20
    mdmem = [*mdmem_cmd(), "--vault", str(vault)]
    res.reindex_s = measure([*mdmem, "reindex", "-q"], vault).wall
    log(f"  {res.notes:,} notes; reindex: {res.reindex_s:.1f}s")
    res.load["embed"] = os.getloadavg()[0]
    s = measure([*mdmem, "embed", "--json"], vault)
    rep = json.loads(s.stdout)
    res.reembed_s, res.reembedded, res.reused, res.chunks = s.wall, rep["embedded"], rep["reused"], rep["total"]
    res.raw["reembed_rss_mb"] = [s.rss_mb]
    res.vectors_mb, res.cache_mb = state_files(vault)
    log(f"  embed (cached): {s.wall:.1f}s, embedded {rep['embedded']}, reused {rep['reused']}")
    res.load["warm"] = os.getloadavg()[0]
    bench_warm(res, vault, seed, log)
    res.load["serve"] = os.getloadavg()[0]
    bench_serve(res, mdmem, vault, runs, seed, log)
    res.load["end"] = os.getloadavg()[0]
    return res


# -- report -------------------------------------------------------------------------------------


COLUMNS = (
    ("notes", "notes", "{:,}"),
    ("chunks", "chunks", "{:,}"),
    ("embed_s", "embed s", "{:.1f}"),
    ("embed_rate", "embed chunks/s", "{:.1f}"),
    ("embed_rss_mb", "embed peak RSS MB", "{:.0f}"),
    ("reembed_s", "re-embed (cached) s", "{:.1f}"),
    ("reembedded", "re-embedded", "{:d}"),
    ("warm_query_median_ms", "warm query median ms", "{:.1f}"),
    ("warm_query_p95_ms", "warm query p95 ms", "{:.1f}"),
    ("warm_vsearch_median_ms", "warm vsearch median ms", "{:.1f}"),
    ("warm_vsearch_p95_ms", "warm vsearch p95 ms", "{:.1f}"),
    ("serve_rss_mb", "serve idle RSS MB", "{:.0f}"),
    ("cold_query_served_ms", "cold CLI query with serve ms", "{:.0f}"),
    ("cold_query_local_ms", "cold CLI query w/o serve ms", "{:.0f}"),
)

DETAIL_COLUMNS = (
    ("notes", "notes", "{:,}"),
    ("reindex_s", "reindex s", "{:.1f}"),
    ("first_query_s", "first in-process query s", "{:.1f}"),
    ("warm_search_median_ms", "warm BM25 search median ms", "{:.1f}"),
    ("warm_embed_query_median_ms", "query embedding median ms", "{:.1f}"),
    ("warm_process_rss_mb", "warm process peak RSS MB", "{:.0f}"),
    ("serve_ready_s", "serve ready s", "{:.1f}"),
    ("serve_hwm_mb", "serve peak RSS MB", "{:.0f}"),
    ("cold_query_local_rss_mb", "cold CLI query w/o serve RSS MB", "{:.0f}"),
    ("vectors_mb", "usearch MB", "{:.1f}"),
    ("cache_mb", "embedding cache MB", "{:.1f}"),
    ("load_text", "load (1 min) at embed / warm / serve / end", "{}"),
)

# (key, limit, label): value < limit passes. Checked at 10,000 notes; other sizes for information.
TARGETS = (
    ("embed_rss_mb", 800.0, "peak RSS while embedding < 800 MB"),
    ("warm_query_median_ms", 50.0, "warm query median < 50 ms (no reranker)"),
)
TARGET_SIZE = 10_000


def _table(results: list[SizeResult], columns: tuple[tuple[str, str, str], ...]) -> list[str]:
    lines = ["| " + " | ".join(label for _, label, _ in columns) + " |", "|" + "|".join("---:" for _ in columns) + "|"]
    for r in results:
        lines.append("| " + " | ".join(_cell(getattr(r, key), fmt) for key, _, fmt in columns) + " |")
    return lines


def _cell(value: Any, fmt: str) -> str:
    """A table cell; "–" for what was not measured (NaN, or -1 counts)."""
    if (isinstance(value, float) and math.isnan(value)) or (isinstance(value, int) and value < 0):
        return "–"
    return fmt.format(value)


def render(info: dict[str, Any], results: list[SizeResult], runs: int) -> str:
    """The machine, the tables and the target checks as markdown."""
    lines = [
        f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}, {info['platform']}",
        f"mdmem {info['mdmem']} ({info['mdmem_rev']}), model {info['model']}, torch {info['torch']} "
        f"({info['threads']} thread(s)), usearch {info['usearch']}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg'])}, at end "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg_end'])}; {info['date']}",
        (
            f"embedding: median of {runs} run(s)"
            if any(not math.isnan(r.embed_s) for r in results)
            else "embedding not measured (--vault)"
        )
        + f"; warm latency over {WARM_QUERIES} queries; cold CLI query: "
        f"median of {max(9, runs)} queries with serve, {max(3, runs)} without",
        "",
        *_table(results, COLUMNS),
        "",
        *_table(results, DETAIL_COLUMNS),
        "",
    ]
    for r in results:
        checks = []
        for key, limit, label in TARGETS:
            value = getattr(r, key)
            if math.isnan(value):
                checks.append(f"not measured: {label}")
                continue
            checks.append(f"{'PASS' if value < limit else 'FAIL'} {label} ({value:.4g})")
        scope = "" if r.notes == TARGET_SIZE else f" (targets are for {TARGET_SIZE:,}; for information)"
        lines.append(f"targets at {r.notes:,} notes{scope}: " + "; ".join(checks))
    for r in results:
        if r.reembedded > 0:
            lines.append(
                f"WARNING: at {r.notes:,} notes the embed after reindex --full ran "
                f"{r.reembedded} chunk(s) through the model instead of reusing the cache"
            )
        if not r.served:
            lines.append(f"WARNING: at {r.notes:,} notes the CLI query was not answered by mdmem serve")
    if info.get("source_changed"):
        lines.append("WARNING: mdmem's source files changed during the run; the sizes may have measured different code")
    return "\n".join(lines) + "\n"


def vector_machine() -> dict[str, Any]:
    """bench_spine's machine description plus the vector stack."""
    info = machine()
    try:
        from importlib.metadata import version

        info["torch"] = version("torch")
        info["transformers"] = version("transformers")
        info["usearch"] = version("usearch")
    except Exception:  # noqa: BLE001 (informational only)
        info.setdefault("torch", "?")
        info.setdefault("usearch", "?")
    from mdmem.adapters.embed import DEFAULT_MODEL, EmbedSettings

    info["model"] = DEFAULT_MODEL
    info["threads"] = EmbedSettings().threads
    return info


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes",
        default="2000",
        help="comma-separated corpus sizes (10000 takes most of an hour to embed on 2 cores) [2000]",
    )
    ap.add_argument(
        "--runs",
        type=int,
        default=1,
        help="repetitions of the embedding from scratch (and minimum cold-query samples); "
        "medians are reported [1: the embedding dominates]",
    )
    add_common_args(ap, "vectors")
    ap.add_argument(
        "--vault",
        type=Path,
        action="append",
        default=[],
        help="instead of --sizes: measure the query side (cached embed, warm latency, serve) of an "
        "existing vault whose vectors are cached, e.g. one kept with --keep (repeatable)",
    )
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes)

    info = vector_machine()
    fingerprint = source_fingerprint()
    results = []
    for vault in args.vault:
        log(f"== {vault}")
        results.append(bench_existing(vault.resolve(), max(1, args.runs), args.seed, log))
        write(info, results, args, fingerprint)
    for n in sizes if not args.vault else []:
        log(f"== {n:,} notes")
        work = Path(tempfile.mkdtemp(prefix=f"mdmem-vbench-{n}-", dir=args.tmp))
        try:
            results.append(bench_size(n, max(1, args.runs), args.seed, work, log))
        finally:
            if args.keep:
                log(f"  kept {work}")
            else:
                shutil.rmtree(work, ignore_errors=True)
        write(info, results, args, fingerprint)  # after each size: a long run keeps what it measured
    print(write(info, results, args, fingerprint))


def write(info: dict[str, Any], results: list[SizeResult], args: argparse.Namespace, fingerprint: str) -> str:
    """Write the markdown and JSON results so far; returns the markdown."""
    info["source_changed"] = source_fingerprint() != fingerprint
    info["loadavg_end"] = os.getloadavg()
    md = render(info, results, max(1, args.runs))
    write_results(
        args.out, md, {"machine": info, "runs": args.runs, "seed": args.seed, "results": [asdict(r) for r in results]}
    )
    return md


if __name__ == "__main__":
    main()
