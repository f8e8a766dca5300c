"""Benchmark of the HTTP MCP server under concurrent clients: ``mdmem mcp --http`` on a synthetic vault,
several real MCP SDK clients (streamable HTTP) calling a mix of read tools and a few writes for a
fixed time; then every note an ``add`` wrote is looked for.

    python benchmarks/bench_http.py [--notes 2000] [--clients 8] [--seconds 120] [--model hash]

Each client is one SDK session in its own thread (its own event loop), calling in a loop: search,
query, recall and get (a note a search of its own found), with an add every ``--write-every`` calls.
Every add writes a word no other note has; afterwards each written note must be on disk, committed
and found by a search for its word (a fresh process, no server): a note missing is a lost write.
Results: calls/s, p50/p95 per tool and errors, as a table on stdout and in ``benchmarks/out/http.md``,
raw numbers in ``benchmarks/out/http.json``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import add_common_args, child_env, git, log, machine, median, p95, write_results  # noqa: E402
from corpus import make_corpus, make_queries  # noqa: E402
from setup_env import compile_package  # noqa: E402

TARGETS = {"calls_per_s": 8.7, "read_p95_ms": 1000.0}  # 3x the 2.89 calls/s measured before, on 2 cores
READS = ("search", "query", "recall", "get")


@dataclass(slots=True)
class Tally:
    """What the clients did: each call's tool, milliseconds and error, and the words the adds wrote."""

    calls: list[tuple[str, float, str]] = field(default_factory=list)
    added: dict[str, str] = field(default_factory=dict)  # unique word → path the add reported
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, tool: str, ms: float, error: str = "") -> None:
        with self.lock:
            self.calls.append((tool, ms, error))


def env_for(model: str | None, read_lanes: int | None = None) -> dict[str, str]:
    env = child_env()
    if model:
        env["MDMEM_EMBED_MODEL"] = model
    if read_lanes is not None:
        env["MDMEM_READ_LANES"] = str(read_lanes)
    return env


def mdmem(vault: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client(
    url: str, n: int, seconds: float, queries: list[str], notes: list[str], write_every: int, tally: Tally
) -> None:
    """One SDK session calling tools in a loop until ``seconds`` have passed."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(n)

    async def call(s: ClientSession, tool: str, args: dict[str, Any]) -> Any:
        t = time.perf_counter()
        try:
            r = await s.call_tool(tool, args)
        except Exception as exc:  # a transport failure is an error of this call; the session goes on
            tally.record(tool, (time.perf_counter() - t) * 1000, f"{type(exc).__name__}: {exc}"[:200])
            return None
        error = "" if not r.is_error else " ".join(getattr(c, "text", "") for c in r.content)[:200] or "error"
        tally.record(tool, (time.perf_counter() - t) * 1000, error)
        return None if r.is_error else r

    async def main() -> None:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                end, i, seen = time.monotonic() + seconds, 0, [rng.choice(notes)]
                while time.monotonic() < end:
                    i += 1
                    q = rng.choice(queries)
                    if write_every and i % write_every == 0:
                        word = f"zqhttp{n}x{i}"
                        r = await call(
                            s,
                            "add",
                            {"title": f"Bench client {n} note {i} {q}", "body": f"{word} about {q}.", "type": "fact"},
                        )
                        if r is not None and (r.structured_content or {}).get("written"):
                            with tally.lock:
                                tally.added[word] = r.structured_content["path"]
                        continue
                    tool = rng.choice(READS)
                    if tool == "get":
                        await call(s, "get", {"note": rng.choice(seen)})
                        continue
                    r = await call(s, tool, {"query": q, "limit": 5})
                    hits = (r.structured_content or {}).get("results") if r is not None else None
                    if hits:
                        seen = [h["id"] for h in hits if h.get("id")] or seen

    anyio.run(main)


def start_server(vault: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str, float]:
    """``mdmem mcp --http`` on a free port; returns once a first call was answered (the warm-up done)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), "mcp", "--http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url, t = f"http://127.0.0.1:{port}/mcp", time.perf_counter()

    async def ask() -> None:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("query", {"query": "warm up", "limit": 1})

    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            anyio.run(ask)
            return proc, url, time.perf_counter() - t
        except Exception:
            if time.perf_counter() - t > 300:
                proc.kill()
                raise RuntimeError("the MCP HTTP server did not answer within 300 s") from None
            time.sleep(0.5)


def lost_writes(vault: Path, added: dict[str, str], env: dict[str, str]) -> list[str]:
    """The words of the adds whose note is not on disk, not committed, or not found by a fresh search."""
    committed = set(git(vault, "-c", "core.quotepath=off", "ls-files").splitlines())
    lost = []
    quiet = {**env, "MDMEM_NO_SERVE": "1"}
    for word, path in sorted(added.items()):
        found = False
        if (vault / path).is_file() and path in committed:
            hits = json.loads(mdmem(vault, "search", word, "--json", env=quiet).stdout).get("results") or []
            found = any(h.get("path") == path for h in hits)
        if not found:
            lost.append(f"{word} ({path})")
    return lost


def bench(args: argparse.Namespace, vault: Path, reuse: bool) -> dict[str, Any]:
    env = env_for(args.model, args.read_lanes)
    if not reuse:
        log(f"== {args.notes:,} notes in {vault}")
        make_corpus(vault, args.notes, args.seed)
        git(vault, "init", "-q")
        git(vault, "add", "-A")
        git(vault, "commit", "-qm", "corpus")
    compile_package()
    t = time.perf_counter()
    mdmem(vault, "reindex", env=env)
    mdmem(vault, "embed", env=env)
    log(f"  indexed and embedded in {time.perf_counter() - t:.1f} s")
    queries = make_queries(200, args.seed + 1)
    notes = sorted(str(p.relative_to(vault)) for p in (vault / "notes").rglob("*.md"))[:200]
    proc, url, warm_s = start_server(vault, env)
    log(f"  server answering after {warm_s:.1f} s; {args.clients} clients for {args.seconds:.0f} s")
    tally = Tally()
    load_start = os.getloadavg()
    try:
        threads = [
            threading.Thread(target=client, args=(url, n, args.seconds, queries, notes, args.write_every, tally))
            for n in range(args.clients)
        ]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t
        load_end = os.getloadavg()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    lost = lost_writes(vault, tally.added, env)
    by_tool: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, list[str]] = defaultdict(list)
    for tool, ms, error in tally.calls:
        by_tool[tool].append(ms)
        if error:
            errors[tool].append(error)
    reads = [ms for tool, ms, _ in tally.calls if tool in READS]
    return {
        "notes": args.notes,
        "clients": args.clients,
        "seconds": round(wall, 1),
        "model": args.model or "default",
        "read_lanes": args.read_lanes,
        "calls": len(tally.calls),
        "calls_per_s": round(len(tally.calls) / wall, 2),
        "read_p95_ms": round(p95(reads), 1),
        "tools": {
            tool: {"calls": len(ms), "p50_ms": round(median(ms), 1), "p95_ms": round(p95(ms), 1)}
            for tool, ms in sorted(by_tool.items())
        },
        "errors": {tool: e[:5] + ([f"... {len(e)} in all"] if len(e) > 5 else []) for tool, e in errors.items()},
        "error_count": sum(len(e) for e in errors.values()),
        "adds_written": len(tally.added),
        "lost_writes": lost,
        "load_start": load_start,
        "load_end": load_end,
    }


def render(info: dict[str, Any], r: dict[str, Any]) -> str:
    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    rows = [
        f"| {tool} | {t['calls']} | {t['p50_ms']:.0f} | {t['p95_ms']:.0f} | {len(r['errors'].get(tool, []))} |"
        for tool, t in r["tools"].items()
    ]
    return "\n".join(
        [
            f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}; mdmem {info['mdmem_rev']}; "
            f"{info['date']}",
            f"load average: {', '.join(f'{x:.2f}' for x in r['load_start'])} at the start, "
            f"{', '.join(f'{x:.2f}' for x in r['load_end'])} at the end (the machine is shared)",
            f"{r['notes']:,} notes (benchmarks/corpus.py), embedding model {r['model']}, every chunk embedded; "
            f"{r['clients']} MCP SDK clients over streamable HTTP for {r['seconds']} s",
            "",
            "| tool | calls | p50 ms | p95 ms | errors |",
            "|---|---:|---:|---:|---:|",
            *rows,
            "",
            f"- calls/s: {r['calls_per_s']:.2f} ({r['calls']} calls) — "
            f"{verdict(r['calls_per_s'] >= TARGETS['calls_per_s'])} (≥ {TARGETS['calls_per_s']})",
            f"- read p95: {r['read_p95_ms']:.0f} ms — {verdict(r['read_p95_ms'] < TARGETS['read_p95_ms'])}"
            f" (< {TARGETS['read_p95_ms']:.0f} ms)",
            f"- errors: {r['error_count']}",
            f"- lost writes: {len(r['lost_writes'])} of {r['adds_written']} adds — {verdict(not r['lost_writes'])}",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=2000, help="corpus size [2000]")
    ap.add_argument("--clients", type=int, default=8, help="concurrent MCP clients [8]")
    ap.add_argument("--seconds", type=float, default=120.0, help="how long the clients call [120]")
    ap.add_argument("--write-every", type=int, default=20, help="each client's every Nth call is an add; 0: none [20]")
    ap.add_argument("--model", default=None, help="embedding model (e.g. hash for a quick run) [the default model]")
    ap.add_argument("--read-lanes", type=int, default=None, help="the server's reading lanes [its default]")
    ap.add_argument(
        "--vault", type=Path, default=None, help="reuse a vault an earlier --keep run built (embedding then cached)"
    )
    add_common_args(ap, "http")
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        sys.exit("git is required")
    info = machine()
    if args.vault:
        result = bench(args, args.vault.resolve(), True)
    else:
        work = Path(tempfile.mkdtemp(prefix="mdmem-bench-http-", dir=args.tmp))
        try:
            result = bench(args, work / "vault", False)
        finally:
            if args.keep:
                log(f"  kept {work / 'vault'} (run again with --vault to reuse it)")
            else:
                shutil.rmtree(work, ignore_errors=True)
    md = render(info, result)
    print(md)
    write_results(args.out, md, {"machine": info, "result": result})
    if result["lost_writes"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
