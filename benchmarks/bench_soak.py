"""Soak benchmark: a few clients run mixed reads and writes against one vault for a fixed
time, through ``mdmem serve``, an MCP server over stdio and the CLI; then the vault is checked.

    python benchmarks/bench_soak.py [--seconds 120] [--notes 300] [--clients 3] [--model hash]

Loopback only: ``serve`` binds 127.0.0.1 and MCP runs over stdio. Client 0 talks MCP (recall,
search, add, correct, pin); the other clients read through ``serve`` (search, query, recall) and
write with CLI processes (add, correct, pin), as a user's shell and an agent would at once.

At the end it checks that nothing was lost (every added note on disk with its text, committed,
findable by its unique word) and that the incremental index equals a ``reindex --full``: the same
catalogue rows and the same search results. Results: a table (ops by kind, throughput, p50/p95
latency, errors) on stdout and in ``benchmarks/out/soak.md``, everything in ``soak.json``. Exit
status 1 when a check failed. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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

from bench_spine import GIT_ID, add_common_args, child_env, git, log, machine, median, p95, write_results  # noqa: E402
from corpus import make_corpus, make_queries  # noqa: E402

INCLUDE = ["forgotten", "archived", "snoozed", "expired"]


@dataclass(slots=True)
class Op:
    """One request: what, through which channel, how long, and the error if it failed."""

    kind: str
    channel: str
    ms: float
    error: str = ""


@dataclass(slots=True)
class Written:
    """What the clients wrote, to check afterwards."""

    added: dict[str, str] = field(default_factory=dict)  # path → the unique word its body holds
    corrected: dict[str, str] = field(default_factory=dict)  # old path → new path
    lock: threading.Lock = field(default_factory=threading.Lock)


# -- the vault ------------------------------------------------------------------------------------


def env_for(model: str) -> dict[str, str]:
    env = child_env()
    env["MDMEM_EMBED_MODEL"] = model
    env.setdefault("GIT_AUTHOR_NAME", "soak")
    env.setdefault("GIT_AUTHOR_EMAIL", "soak@localhost")
    env.setdefault("GIT_COMMITTER_NAME", "soak")
    env.setdefault("GIT_COMMITTER_EMAIL", "soak@localhost")
    return env


def mdmem(vault: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args], env=env, text=True, capture_output=True
    )


def build_vault(root: Path, notes: int, seed: int, env: dict[str, str]) -> None:
    make_corpus(root, notes, seed)
    git(root, "init", "-q", "-b", "main")
    for args in (["init", str(root)], ["reindex", "-q"], ["embed"]):
        p = subprocess.run(
            [sys.executable, "-m", "mdmem", *args]
            if args[0] == "init"
            else [sys.executable, "-m", "mdmem", "--vault", str(root), *args],
            env=env,
            text=True,
            capture_output=True,
        )
        if p.returncode:
            raise SystemExit(f"mdmem {' '.join(args)} failed: {p.stderr}")
    git(root, "add", "-A")
    subprocess.run(["git", *GIT_ID, "commit", "-qm", "corpus"], cwd=root, check=True, env=env)


def note_body(token: str, rng: random.Random, words: list[str]) -> str:
    return f"Soak memory {token}: " + " ".join(rng.sample(words, 12)) + "."


# -- clients --------------------------------------------------------------------------------------


class Clients:
    """The shared state of all clients: the clock, the results and what was written."""

    def __init__(self, vault: Path, seconds: float, env: dict[str, str], seed: int) -> None:
        self.vault, self.env, self.seed = vault, env, seed
        self.deadline = time.monotonic() + seconds
        self.ops: list[Op] = []
        self.written = Written()
        self.queries = make_queries(200, seed)
        self.words = sorted({w for q in self.queries for w in q.split() if w.isalpha() and len(w) > 3})
        self.lock = threading.Lock()
        self.counter = 0

    def token(self, client: int) -> str:
        with self.lock:
            self.counter += 1
            return f"zqsoak{client}x{self.counter}"

    def record(self, kind: str, channel: str, started: float, error: str = "") -> None:
        with self.lock:
            self.ops.append(Op(kind, channel, (time.perf_counter() - started) * 1000, error))

    def pick_correctable(self, rng: random.Random) -> str | None:
        with self.written.lock:
            live = [p for p in self.written.added if p not in self.written.corrected]
        return rng.choice(live) if live else None

    # A CLI + serve client: reads through the warm server, writes with CLI processes.
    def cli_client(self, client: int) -> None:
        from mdmem.edges.serve import call_server

        rng = random.Random(f"{self.seed}-{client}")
        while time.monotonic() < self.deadline:
            r = rng.random()
            started = time.perf_counter()
            if r < 0.75:
                kind = ("search", "query", "recall")[int(r / 0.25)]
                try:
                    answer = call_server(
                        self.vault, "ask", {"mode": kind, "text": rng.choice(self.queries), "limit": 10}
                    )
                    err = "" if answer is not None and "results" in answer else "no answer from serve"
                    for h in (answer or {}).get("results", []):
                        if not (self.vault / h["path"]).is_file():
                            err = f"hit {h['path']} is not a file"
                except Exception as exc:  # noqa: BLE001 (count it, keep going)
                    err = f"{type(exc).__name__}: {exc}"
                self.record(kind, "serve", started, err)
            elif r < 0.90:
                token = self.token(client)
                p = mdmem(
                    self.vault,
                    "add",
                    "--title",
                    f"Soak note {token}",
                    "--body",
                    note_body(token, rng, self.words),
                    "--json",
                    env=self.env,
                )
                self.record("add", "cli", started, self._cli_error(p, "add"))
                if not p.returncode and json.loads(p.stdout).get("written"):
                    with self.written.lock:
                        self.written.added[json.loads(p.stdout)["path"]] = token
            elif r < 0.95:
                old = self.pick_correctable(rng)
                if old is None:
                    continue
                with self.written.lock:
                    self.written.corrected[old] = ""  # claimed: no other client corrects it
                token = self.written.added[old]
                body = f"Corrected {token}: " + note_body(token, rng, self.words)
                p = mdmem(self.vault, "correct", old, "--body", body, "--json", env=self.env)
                self.record("correct", "cli", started, self._cli_error(p, "correct"))
                with self.written.lock:
                    self.written.corrected[old] = json.loads(p.stdout)["new"]["path"] if not p.returncode else ""
            else:
                rel = f"notes/{rng.choice(list((self.vault / 'notes').iterdir())).name}"
                target = next((self.vault / rel).glob("*.md"), None) if (self.vault / rel).is_dir() else None
                if target is None:
                    continue
                p = mdmem(self.vault, rng.choice(["pin", "unpin"]), str(target.relative_to(self.vault)), env=self.env)
                self.record("pin", "cli", started, self._cli_error(p, "pin"))

    @staticmethod
    def _cli_error(p: subprocess.CompletedProcess[str], what: str) -> str:
        if "Traceback" in p.stderr:
            return f"{what}: traceback: {p.stderr.strip().splitlines()[-1]}"
        if p.returncode:
            return f"{what}: exit {p.returncode}: {p.stderr.strip()[:200]}"
        if p.stderr.strip():
            return f"{what}: stderr: {p.stderr.strip()[:200]}"
        return ""

    # The MCP client: one stdio session, the SDK's own client.
    def mcp_client(self, client: int, errlog: Path) -> None:
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        rng = random.Random(f"{self.seed}-{client}")

        async def main() -> None:
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "mdmem", "--vault", str(self.vault), "mcp"], env=self.env
            )
            with open(errlog, "w") as err:
                async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
                    await s.initialize()
                    while time.monotonic() < self.deadline:
                        await self._mcp_op(s, client, rng)

        anyio.run(main)

    async def _mcp_op(self, s: Any, client: int, rng: random.Random) -> None:
        r = rng.random()
        started = time.perf_counter()
        kind, args = "recall", {"query": rng.choice(self.queries), "limit": 8}
        token = ""
        if 0.5 <= r < 0.7:
            kind, args = "search", {"query": rng.choice(self.queries), "limit": 8}
        elif 0.7 <= r < 0.85:
            token = self.token(client)
            kind, args = "add", {"title": f"Soak note {token}", "body": note_body(token, rng, self.words)}
        elif 0.85 <= r < 0.92:
            old = self.pick_correctable(rng)
            if old is None:
                return
            with self.written.lock:
                self.written.corrected[old] = ""
            token = self.written.added[old]
            kind, args = "correct", {"note": old, "body": f"Corrected {token}: " + note_body(token, rng, self.words)}
        elif r >= 0.92:
            with self.written.lock:
                mine = sorted(self.written.added)
            if not mine:
                return
            kind, args = "pin", {"note": rng.choice(mine), "pinned": rng.random() < 0.5}
        try:
            res = await s.call_tool(kind, args)
            text = " ".join(getattr(c, "text", "") for c in res.content)
            err = f"{kind}: {text[:200]}" if res.is_error else ""
            data = res.structured_content or {}
            if not err and data.get("warnings"):
                err = f"{kind}: warning: {data['warnings'][0][:200]}"
        except Exception as exc:  # noqa: BLE001
            err, data = f"{kind}: {type(exc).__name__}: {exc}", {}
        self.record(kind, "mcp", started, err)
        if kind == "add" and not err and data.get("written"):
            with self.written.lock:
                self.written.added[data["path"]] = token
        if kind == "correct":
            with self.written.lock:
                self.written.corrected[args["note"]] = "" if err else data["new"]["path"]


# -- checks ---------------------------------------------------------------------------------------


def index_state(vault: Path, queries: list[str]) -> tuple[dict[str, Any], list[list[str]], list[list[str]]]:
    """Every catalogue row; for each query every matching note (sorted) and the top 10 in rank order."""
    from mdmem import Vault

    with Vault.open(vault) as v:
        cat = v.store.catalog
        rows = cat.rows(sorted(cat.stamps()))
        found = [[h.path for h in v.search(q, 1000, include=INCLUDE)] for q in queries]
    return rows, [sorted(f) for f in found], [f[:10] for f in found]


def compare_with_full(vault: Path, queries: list[str]) -> tuple[list[str], list[str]]:
    """(differences, drift) between the index as the clients left it and a ``reindex --full``.

    Differences: a note missing, extra or stale in the catalogue, or a search that matches other
    notes. Drift: searches whose top 10 are in another order. BM25 scores depend on the index's
    history: Whoosh counts replaced and deleted notes in its statistics until it merges their
    segment (see docs/reliability.md). That is reported, not failed.
    """
    from mdmem import Vault

    rows, found, top = index_state(vault, queries)
    with Vault.open(vault) as v:
        v.reindex(full=True)
    full_rows, full_found, full_top = index_state(vault, queries)
    diffs = [f"only in the incremental index: {p}" for p in sorted(rows.keys() - full_rows.keys())]
    diffs += [f"missing from the incremental index: {p}" for p in sorted(full_rows.keys() - rows.keys())]
    for p in sorted(rows.keys() & full_rows.keys()):
        changed = sorted(k for k in rows[p] if rows[p][k] != full_rows[p].get(k))
        if changed:
            diffs.append(f"{p}: catalogue row differs in {', '.join(changed)}")
    for q, a, b in zip(queries, found, full_found):
        if a != b:
            diffs.append(
                f"search {q!r} matches {sorted(set(a) - set(b))} only incrementally, "
                f"{sorted(set(b) - set(a))} only after --full"
            )
    drift = [f"search {q!r}: top 10 {a} vs {b}" for q, a, b in zip(queries, top, full_top) if a != b]
    return diffs, drift


def check_written(vault: Path, written: Written) -> list[str]:
    """Every added note is on disk with its word, committed, and found by a search for that word."""
    from mdmem import Vault

    problems = []
    tracked = set(git(vault, "ls-files").split())
    dirty = git(vault, "status", "--porcelain", "--", "notes").strip()
    if dirty:
        problems.append(f"uncommitted after the soak: {dirty.splitlines()[:5]}")
    with Vault.open(vault) as v:
        for path, token in sorted(written.added.items()):
            f = vault / path
            if not f.is_file() or token not in f.read_text():
                problems.append(f"lost: {path} ({token})")
                continue
            if path not in tracked:
                problems.append(f"not committed: {path}")
            found = [h.path for h in v.search(token, 5, include=INCLUDE)]
            if path not in found:
                problems.append(f"not found by {token!r}: {path} (got {found})")
        for old, new in sorted(written.corrected.items()):
            if new and "status: archived" not in (vault / old).read_text():
                problems.append(f"corrected but not archived: {old}")
    return problems


# -- report ---------------------------------------------------------------------------------------


def table(ops: list[Op], seconds: float) -> tuple[str, list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[Op]] = defaultdict(list)
    for op in ops:
        groups[(op.kind, op.channel)].append(op)
    rows = []
    for (kind, channel), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ok = [o.ms for o in g if not o.error]
        rows.append(
            {
                "kind": kind,
                "channel": channel,
                "ops": len(g),
                "per_s": len(g) / seconds,
                "p50_ms": median(ok),
                "p95_ms": p95(ok),
                "errors": len(g) - len(ok),
            }
        )
    lines = ["| op | via | ops | ops/s | p50 ms | p95 ms | errors |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['channel']} | {r['ops']} | {r['per_s']:.2f} | {r['p50_ms']:.0f} | "
            f"{r['p95_ms']:.0f} | {r['errors']} |"
        )
    total = len(ops)
    lines.append(f"| **all** | | {total} | {total / seconds:.2f} | | | {sum(r['errors'] for r in rows)} |")
    return "\n".join(lines), rows


def run(args: argparse.Namespace) -> tuple[bool, dict[str, Any], str]:
    info = machine()  # the load average before the soak
    env = env_for(args.model)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("MDMEM_", "GIT_"))})
    os.environ.pop("MDMEM_NO_SERVE", None)
    work = Path(tempfile.mkdtemp(prefix="mdmem-soak-", dir=args.tmp))
    vault = work / "vault"
    vault.mkdir()
    log(f"building a vault of {args.notes} notes in {vault}")
    build_vault(vault, args.notes, args.seed, env)
    serve_log = work / "serve.log"
    with open(serve_log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "mdmem", "--vault", str(vault), "serve", "--idle-timeout", str(args.seconds + 300)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    from mdmem.edges.serve import read_info

    for _ in range(400):
        if read_info(vault):
            break
        time.sleep(0.05)
    if not read_info(vault):
        raise SystemExit(f"serve did not start: {serve_log.read_text()}")
    clients = Clients(vault, args.seconds, env, args.seed)
    log(f"soaking for {args.seconds:.0f} s with {args.clients} clients (1 MCP, {args.clients - 1} serve+CLI)")
    threads = [threading.Thread(target=clients.mcp_client, args=(0, work / "mcp.log"))]
    threads += [threading.Thread(target=clients.cli_client, args=(c,)) for c in range(1, args.clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    server.terminate()
    server.wait(timeout=60)
    logs = serve_log.read_text() + (work / "mcp.log").read_text()

    md_table, rows = table(clients.ops, elapsed)
    lost = check_written(vault, clients.written)
    queries = clients.queries[:100] + list(clients.written.added.values())
    diffs, drift = compare_with_full(vault, queries)
    errors = [o.error for o in clients.ops if o.error]
    tracebacks = logs.count("Traceback")
    ok = not lost and not diffs and not errors and not tracebacks
    load_after = os.getloadavg()
    md = (
        "\n".join(
            [
                f"# Soak: {args.seconds:.0f} s, {args.notes} notes, {args.clients} clients, model {args.model}",
                "",
                f"mdmem {info['mdmem_rev']}; {info['nproc']} cores ({info['cpu']}); load average (1/5/15 min) "
                f"before: {' '.join(f'{x:.2f}' for x in info['loadavg'])}, "
                f"after: {' '.join(f'{x:.2f}' for x in load_after)}",
                "",
                md_table,
                "",
                f"notes added: {len(clients.written.added)}, "
                f"corrected: {sum(1 for v in clients.written.corrected.values() if v)}",
                f"lost or not findable: {len(lost)}" + "".join(f"\n  - {p}" for p in lost[:10]),
                f"incremental index == reindex --full: {'yes' if not diffs else 'NO'} (catalogue rows of "
                f"{len(index_state(vault, [])[0])} notes; the notes each of {len(queries)} searches matches)"
                + "".join(f"\n  - {d}" for d in diffs[:10]),
                f"searches whose top 10 are ranked differently (BM25 statistics still count replaced notes "
                f"until Whoosh merges their segment): {len(drift)} of {len(queries)}",
                f"errors: {len(errors)}" + "".join(f"\n  - {e}" for e in sorted(set(errors))[:10]),
                f"tracebacks in serve/MCP logs: {tracebacks}",
                f"result: {'PASS' if ok else 'FAIL'}",
            ]
        )
        + "\n"
    )
    data = {
        "machine": info,
        "loadavg_after": load_after,
        "args": {k: str(v) for k, v in vars(args).items()},
        "elapsed_s": elapsed,
        "rows": rows,
        "added": len(clients.written.added),
        "lost": lost,
        "diffs": diffs,
        "drift": drift,
        "errors": errors,
        "tracebacks": tracebacks,
        "ok": ok,
    }
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"kept {work}")
    return ok, data, md


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=120.0, help="how long the clients run [120]")
    ap.add_argument("--notes", type=int, default=300, help="notes in the generated vault [300]")
    ap.add_argument("--clients", type=int, default=3, help="concurrent clients, one of them MCP (>= 2) [3]")
    ap.add_argument("--model", default="hash", help="embedding model: hash (fast, no model) or a real one [hash]")
    add_common_args(ap, "soak")
    args = ap.parse_args(argv)
    if args.clients < 2:
        ap.error("--clients must be at least 2")
    ok, data, md = run(args)
    if args.out != "-":  # "-": print only (the test suite's short run)
        write_results(args.out, md, data)
    print(md)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
