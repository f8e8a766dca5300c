"""Stale answers from warm processes: a note saved in place again and again, asked for at once.

    python benchmarks/bench_stale.py [--seconds 120] [--notes 200] [--model hash] [--cold]

A real git vault with mdmem's hooks; three warm processes of it: ``mdmem mcp`` over stdio (the MCP
SDK's client), ``mdmem mcp --http`` on loopback (the SDK's streamable-HTTP client) and ``mdmem serve``.
For ``--seconds`` a writer saves one note in place (the file truncated and written again, its size
unchanged) every 0.5-2 s with a fresh word no other note has, and right after each save asks every
process for that word (``search``, all at once). Meanwhile commits land (the saved note, or a new
note) through git's hooks, and every change asks the background embedding job for vectors
(``MDMEM_EMBED_INLINE=0``), so the job and the hooks hold the writer lock while the reads come.

An answer without the note is stale (counted with and without a warning in it); a save is never found
when no answer of that process had it before the next save (each stale process is asked again every
0.2 s meanwhile). ``--cold`` also asks a fresh ``MDMEM_NO_SERVE=1 mdmem search`` each time, as a control.
Results: a table on stdout and in ``benchmarks/out/stale.md``, raw figures in ``stale.json``.
Exit status 1 when any answer was stale.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import GIT_ID, add_common_args, child_env, git, log, machine, median, p95, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402

TARGET = "notes/stale-target.md"
WORD_LEN = 14  # every save's word has this length, so the file's size never changes


def env_for(model: str) -> dict[str, str]:
    env = child_env()
    env.update(
        {
            "MDMEM_EMBED_MODEL": model,
            "MDMEM_AUTO_EMBED": "1",  # vectors follow every change ...
            "MDMEM_EMBED_INLINE": "0",  # ... by the background embedding job
            "GIT_AUTHOR_NAME": "stale",
            "GIT_AUTHOR_EMAIL": "stale@localhost",
            "GIT_COMMITTER_NAME": "stale",
            "GIT_COMMITTER_EMAIL": "stale@localhost",
        }
    )
    env.pop("MDMEM_NO_SERVE", None)
    return env


def mdmem(vault: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args], env=env, text=True, capture_output=True
    )


def target_text(word: str) -> str:
    return f"---\ntitle: Stale target\ntype: fact\n---\n# Stale target\n\nThe word of the moment is {word}.\n"


def new_word(rng: random.Random, n: int) -> str:
    head = f"zq{n}x"
    return head + "".join(rng.choice(string.ascii_lowercase) for _ in range(WORD_LEN - len(head)))


def save_in_place(path: Path, text: str) -> None:
    """As many editors save: the same file truncated and written again."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def build_vault(root: Path, notes: int, seed: int, env: dict[str, str]) -> None:
    make_corpus(root, notes, seed)
    (root / TARGET).write_text(target_text("zq0x" + "a" * (WORD_LEN - 4)))
    git(root, "init", "-q", "-b", "main")
    p = subprocess.run([sys.executable, "-m", "mdmem", "init", str(root)], env=env, text=True, capture_output=True)
    if p.returncode:
        raise SystemExit(f"mdmem init failed: {p.stderr}")
    for args in (["reindex", "-q"], ["embed"]):
        p = mdmem(root, *args, env=env)
        if p.returncode:
            raise SystemExit(f"mdmem {' '.join(args)} failed: {p.stderr}")
    git(root, "add", "-A")
    subprocess.run(["git", *GIT_ID, "commit", "-qm", "corpus"], cwd=root, check=True, env=env, capture_output=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Tally:
    """Per transport: answers, stale answers (with a warning or not), saves never found, latencies."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.asks: dict[str, int] = defaultdict(int)
        self.stale: dict[str, int] = defaultdict(int)
        self.warned: dict[str, int] = defaultdict(int)
        self.never: dict[str, int] = defaultdict(int)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.job_seen = 0  # saves during which the embedding job was alive

    def answer(self, who: str, ms: float, found: bool, warnings: list[str], error: str = "") -> None:
        with self.lock:
            self.asks[who] += 1
            self.ms[who].append(ms)
            if error:
                self.errors[who].append(error)
            if not found:
                self.stale[who] += 1
                if warnings:
                    self.warned[who] += 1


class Committer(threading.Thread):
    """Commits land every 2-5 s: the saved note as it is now, or a new note of a few paragraphs."""

    def __init__(self, vault: Path, env: dict[str, str], stop: threading.Event, seed: int) -> None:
        super().__init__(daemon=True)
        self.vault, self.env, self.stop, self.rng = vault, env, stop, random.Random(seed)
        self.commits = 0
        self.errors: list[str] = []

    def run(self) -> None:
        n = 0
        while not self.stop.wait(self.rng.uniform(2.0, 5.0)):
            n += 1
            if n % 2:
                paths = [TARGET]
            else:
                rel = f"notes/stale-new-{n}.md"
                body = "\n\n".join(
                    " ".join(self.rng.choice(["ledger", "payment", "retry", "cache", "queue"]) for _ in range(60))
                    for _ in range(4)
                )
                (self.vault / rel).write_text(f"# New note {n}\n\n{body}\n")
                paths = [rel]
            p = subprocess.run(
                ["git", *GIT_ID, "commit", "-qm", f"stale bench {n}", "--", *paths]
                if paths == [TARGET]
                else ["sh", "-c", f"git add {paths[0]} && git {' '.join(GIT_ID)} commit -qm 'stale bench {n}'"],
                cwd=self.vault,
                env=self.env,
                capture_output=True,
                text=True,
            )
            if p.returncode == 0:
                self.commits += 1
            elif "nothing" not in p.stdout + p.stderr:
                self.errors.append(p.stderr.strip()[:200])


def paths_of(data: dict[str, Any]) -> list[str]:
    return [str(h.get("path")) for h in data.get("results", [])]


def run(args: argparse.Namespace) -> tuple[bool, dict[str, Any], str]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    from mdmem.edges.serve import call_server, read_info
    from mdmem.index.state import EMBED_HOOK, IndexState

    info = machine()
    env = env_for(args.model)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("MDMEM_", "GIT_"))})
    work = Path(tempfile.mkdtemp(prefix="mdmem-stale-", dir=args.tmp))
    vault = work / "vault"
    vault.mkdir()
    log(f"building a vault of {args.notes} notes in {vault}")
    build_vault(vault, args.notes, args.seed, env)
    state = IndexState(vault, 1.0)
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs = {name: work / f"{name}.log" for name in ("serve", "http", "stdio")}
    servers = {"serve": ["serve", "--idle-timeout", "900"], "http": ["mcp", "--http", "--port", str(port)]}
    for name, extra in servers.items():
        with open(logs[name], "w") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "mdmem", "--vault", str(vault), *extra],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    for _ in range(600):
        with socket.socket() as s:
            if read_info(vault) and s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    else:
        raise SystemExit("serve or mcp --http did not start: " + logs["serve"].read_text() + logs["http"].read_text())

    tally = Tally()
    stop = threading.Event()
    committer = Committer(vault, env, stop, args.seed)
    rng = random.Random(args.seed)
    saves = 0

    def ask_serve(word: str) -> tuple[bool, list[str], str]:
        data = call_server(vault, "ask", {"mode": "search", "text": word, "limit": 5}, timeout=60.0)
        if data is None:
            return False, [], "no answer from serve"
        return TARGET in paths_of(data), list(data.get("warnings") or []), ""

    def ask_cold(word: str) -> tuple[bool, list[str], str]:
        p = subprocess.run(
            [sys.executable, "-m", "mdmem", "--vault", str(vault), "search", word, "--json", "-n", "5"],
            env={**env, "MDMEM_NO_SERVE": "1"},
            text=True,
            capture_output=True,
        )
        if p.returncode:
            return False, [], p.stderr.strip()[:200]
        data = json.loads(p.stdout)
        return TARGET in paths_of(data), list(data.get("warnings") or []), ""

    async def main() -> None:
        nonlocal saves
        stdio = StdioServerParameters(
            command=sys.executable, args=["-m", "mdmem", "--vault", str(vault), "mcp"], env=env
        )
        with open(logs["stdio"], "w") as errlog:
            async with (
                stdio_client(stdio, errlog=errlog) as (r1, w1),
                ClientSession(r1, w1) as s_stdio,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r2, w2),
                ClientSession(r2, w2) as s_http,
            ):
                await s_stdio.initialize()
                await s_http.initialize()
                sessions = {"stdio": s_stdio, "http": s_http}

                async def ask(who: str, word: str) -> bool:
                    started = time.perf_counter()
                    error, warnings, found = "", [], False
                    try:
                        if who in sessions:
                            res = await sessions[who].call_tool("search", {"query": word, "limit": 5})
                            data = res.structured_content or {}
                            if res.is_error:
                                error = " ".join(getattr(c, "text", "") for c in res.content)[:200]
                            found, warnings = TARGET in paths_of(data), list(data.get("warnings") or [])
                        else:
                            fn = ask_serve if who == "serve" else ask_cold
                            found, warnings, error = await anyio.to_thread.run_sync(fn, word)
                    except Exception as exc:  # noqa: BLE001 (count it, keep going)
                        error = f"{type(exc).__name__}: {exc}"
                    tally.answer(who, (time.perf_counter() - started) * 1000, found, warnings, error)
                    return found

                async def follow(who: str, word: str, until: float) -> None:
                    """Ask at once; while stale, again every 0.2 s until the next save."""
                    if await ask(who, word):
                        return
                    while time.monotonic() < until:
                        await anyio.sleep(0.2)
                        if await ask(who, word):
                            return
                    with tally.lock:
                        tally.never[who] += 1

                # the warm-ups are done once each process answers
                for who in ("stdio", "http", "serve"):
                    await ask(who, "warm")
                tally.reset()
                committer.start()
                whos = ["stdio", "http", "serve", *(["cold"] if args.cold else [])]
                deadline = time.monotonic() + args.seconds
                while time.monotonic() < deadline:
                    saves += 1
                    word = new_word(rng, saves)
                    save_in_place(vault / TARGET, target_text(word))
                    if state.job_active(EMBED_HOOK):
                        tally.job_seen += 1
                    until = time.monotonic() + rng.uniform(0.5, 2.0)
                    async with anyio.create_task_group() as tg:
                        for who in whos:
                            tg.start_soon(follow, who, word, until)
                    await anyio.sleep(max(0.0, until - time.monotonic()))

    log(f"saving {TARGET} every 0.5-2 s for {args.seconds:.0f} s; asking stdio MCP, HTTP MCP and serve")
    started = time.monotonic()
    try:
        anyio.run(main)
    finally:
        stop.set()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
    elapsed = time.monotonic() - started
    load_after = os.getloadavg()
    tracebacks = sum(p.read_text(errors="replace").count("Traceback") for p in logs.values())
    whos = [w for w in ("stdio", "http", "serve", "cold") if tally.asks.get(w)]
    rows = [
        {
            "transport": w,
            "saves": saves,
            "answers": tally.asks[w],
            "stale": tally.stale[w],
            "stale_warned": tally.warned[w],
            "never_found": tally.never[w],
            "errors": len(tally.errors[w]),
            "p50_ms": median(tally.ms[w]),
            "p95_ms": p95(tally.ms[w]),
        }
        for w in whos
    ]
    lines = [
        f"# Stale answers: {elapsed:.0f} s, {args.notes} notes, model {args.model}",
        "",
        f"mdmem {info['mdmem_rev']}; {info['nproc']} cores ({info['cpu']}); load average (1/5/15 min) "
        f"before: {' '.join(f'{x:.2f}' for x in info['loadavg'])}, after: {' '.join(f'{x:.2f}' for x in load_after)}",
        f"saves: {saves}; commits landed: {committer.commits}; saves with the embedding job alive: {tally.job_seen}",
        "",
        "| transport | saves | answers | stale answers | of them with a warning | saves never found | errors "
        "| p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['transport']} | {r['saves']} | {r['answers']} | {r['stale']} | {r['stale_warned']} | "
            f"{r['never_found']} | {r['errors']} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} |"
        )
    errors = [e for w in whos for e in tally.errors[w]] + committer.errors
    lines += [
        "",
        f"errors: {len(errors)}" + "".join(f"\n  - {e}" for e in sorted(set(errors))[:10]),
        f"tracebacks in the servers' logs: {tracebacks}",
    ]
    ok = not any(r["stale"] for r in rows if r["transport"] != "cold") and not errors and not tracebacks
    lines.append(f"result: {'PASS' if ok else 'FAIL'}")
    data = {
        "machine": info,
        "loadavg_after": load_after,
        "args": {k: str(v) for k, v in vars(args).items()},
        "elapsed_s": elapsed,
        "saves": saves,
        "commits": committer.commits,
        "job_seen": tally.job_seen,
        "rows": rows,
        "errors": errors,
        "tracebacks": tracebacks,
        "ok": ok,
    }
    if args.keep:
        log(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return ok, data, "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=120.0, help="how long the writer saves [120]")
    ap.add_argument("--notes", type=int, default=200, help="notes in the generated vault [200]")
    ap.add_argument("--model", default="hash", help="embedding model: hash (fast, no model) or a real one [hash]")
    ap.add_argument("--cold", action="store_true", help="also ask a fresh CLI process after each save")
    add_common_args(ap, "stale")
    args = ap.parse_args(argv)
    ok, data, md = run(args)
    if args.out != "-":
        write_results(args.out, md, data)
    print(md)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
