"""Benchmark of a full disk: a vault on a real, small ext4 filesystem filled to the last byte, every
common command run on it, then twice the space the failed write named freed, and the vault checked.

    sudo python benchmarks/bench_diskfull.py [--notes 20] [--words 6000] [--size-mb 20] [--runs 3] [--timeout 60]

Needs root (it loop-mounts a filesystem image under a temporary folder). Each run builds a git vault
of ``--notes`` generated notes on a fresh ``--size-mb`` MB ext4, indexes and embeds it (the hash
embedder: the vector file and its saves are real usearch), then, with the disk full: ``add`` (a note
with a new word), ``set``, ``search``, ``query``, ``status``, ``reindex``, ``embed``, and an MCP
``add``/``search`` over stdio (the real SDK client). Each is timed and classed: exit code, one line of
stderr or more, a traceback or none. Then it frees twice the largest "at least N MB" a failure named
(1 MB if none did), runs ``add`` again and ``search`` for its word, and checks that no note file of a
failed add, no temp file and no segment file the lexical index does not name is left. Last, as
reported: the disk filled again, ``--nearly-mb`` MB given back, six small ``add``s (whoosh's policy
merges the whole index into the fifth commit: the vault has few notes with many distinct words, so its
one segment is big) and a search for each. Goals: 0 tracebacks; every command answers within seconds
in one line; the freed space is enough to recover. Figures are medians over ``--runs``; the load
average is printed with them. Results: a table on stdout, ``benchmarks/out/diskfull.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
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
sys.path.insert(0, str(HERE.parent))

from bench_spine import child_env, log, machine, write_results  # noqa: E402

WORDS = [f"{a}{b}{c}" for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou") for c in range(200)]
GIT_ID = ["-c", "user.name=b", "-c", "user.email=b@x", "-c", "commit.gpgsign=false"]

MCP_CLIENT = r"""
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "mdmem", "--vault", sys.argv[1], "mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            a = await s.call_tool("add", {"title": "MCP on a full disk", "body": "quokkamcp " + sys.argv[2]})
            b = await s.call_tool("search", {"query": "descaling"})
            print(json.dumps({"add_error": a.is_error, "add": a.content[0].text[:200],
                              "search_error": b.is_error, "search": b.content[0].text[:200]}))

asyncio.run(main())
"""


def sh(*cmd: str, cwd: Path | None = None) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)


def mount(image: Path, mnt: Path, size_mb: int) -> None:
    with open(image, "wb") as fh:
        fh.truncate(size_mb << 20)
    sh("mkfs.ext4", "-q", "-F", str(image))
    mnt.mkdir(parents=True, exist_ok=True)
    sh("mount", "-o", "loop", str(image), str(mnt))


def fill(disk: Path) -> Path:
    """Fill the disk to the last byte with one file (root may fill ext4's reserved blocks too)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def make_vault(vault: Path, notes: int, words: int, seed: int) -> None:
    rnd = random.Random(seed)
    (vault / "notes").mkdir(parents=True)
    for i in range(notes):
        body = "\n\n".join(" ".join(rnd.choice(WORDS) for _ in range(words // 6)) for _ in range(6))
        (vault / "notes" / f"n{i:04d}.md").write_text(f"---\ntitle: Note {i}\n---\n# Note {i}\n\n{body}\n")
    (vault / "notes" / "descaling.md").write_text("# Descaling\n\ndescaling the kettle every month\n")
    sh("git", "init", "-q", cwd=vault)
    sh("git", "add", "-A", cwd=vault)
    sh("git", *GIT_ID, "commit", "-qm", "notes", cwd=vault)


def env() -> dict[str, str]:
    return {**child_env(), "MDMEM_EMBED_MODEL": "hash", "MDMEM_AUTOSERVE": "0", "PYTHONPATH": str(HERE.parent)}


def run(args: list[str], timeout: float, home: Path) -> dict[str, Any]:
    """One command: seconds, exit code, stderr's lines, whether a traceback showed."""
    started = time.perf_counter()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**env(), "HOME": str(home)})
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, str(exc.stdout or ""), "timeout"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return {
        "seconds": time.perf_counter() - started,
        "rc": rc,
        "lines": len(lines),
        "traceback": "Traceback" in err or "Traceback" in out,
        "last": (lines[-1] if lines else (out.strip().splitlines() or [""])[-1])[:150],
        "out": out,
        "err": err[-3000:],
    }


def stray_files(vault: Path) -> list[str]:
    """Temp files, half-written segments and index generations a failed write should not leave."""
    out = [p.relative_to(vault).as_posix() for p in vault.rglob("*.tmp")]
    state = vault / ".mdmem"
    gens = sorted(state.glob("gen-*"))
    if len(gens) != 1:
        out += [g.name for g in gens]
    from mdmem.index.lexical import LexicalIndex

    for lex in state.glob("gen-*/lexical"):
        index = LexicalIndex(lex)  # (an index this run built: its TOC is ours to read)
        try:
            named = {seg.segment_id() for seg in index.ix._read_toc().segments}
        finally:
            index.close()
        out += [p.name for p in lex.glob("notes_*.*") if p.name.split(".")[0] not in named and "LOCK" not in p.name]
    return sorted(out)


def one_run(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="mdmem-diskfull-"))
    mnt, home = tmp / "disk", tmp / "home"
    home.mkdir()
    mount(tmp / "disk.img", mnt, args.size_mb)
    try:
        vault = mnt / "vault"
        make_vault(vault, args.notes, args.words, seed)
        m = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
        for setup in (["init", str(vault)], ["--vault", str(vault), "embed"]):
            r = run([sys.executable, "-m", "mdmem", *setup], 600, home)
            if r["rc"] != 0:
                raise SystemExit(f"setup failed: {setup}: {r['last']}")
        before = {p.name for p in (vault / "notes").iterdir()}
        filler = fill(mnt)
        steps: dict[str, dict[str, Any]] = {}
        commands = {
            "add": ["add", "-t", "Full disk", "-b", "zanzibarfull no room"],
            "set": ["set", "notes/n0001", "tags=full"],
            "search": ["search", "descaling"],
            "query": ["query", "descaling kettle"],
            "status": ["status"],
            "reindex": ["reindex"],
            "embed": ["embed"],
        }
        for name, cmd in commands.items():
            steps[name] = run([*m, *cmd], args.timeout, home)
        steps["mcp"] = run([sys.executable, "-c", MCP_CLIENT, str(vault), str(seed)], args.timeout, home)
        left = sorted({p.name for p in (vault / "notes").iterdir()} - before)
        strays = stray_files(vault)
        named = [int(n) for s in steps.values() for n in re.findall(r"at least (\d+) MB", s["last"] + s["out"])]
        freed_mb = 2 * max(named, default=1)
        size = filler.stat().st_size
        os.truncate(filler, max(0, size - (freed_mb << 20)))
        after = {
            "add": run([*m, "add", "-t", "After the disk", "-b", "zanzibarafter room again"], args.timeout, home),
        }
        after["search"] = run([*m, "search", "zanzibarafter", "--json"], args.timeout, home)
        strays_after = stray_files(vault)
        # The report: a few MB back, then small writes, each a whoosh commit; the fifth merges the index.
        fill(mnt)
        os.truncate(filler, max(0, filler.stat().st_size - (args.nearly_mb << 20)))
        nearly = []
        for i in range(6):
            nearly.append(run([*m, "add", "-t", f"Small write {i}", "-b", f"smallword{i}x"], args.timeout, home))
        nearly_found = sum(
            '"path"' in run([*m, "search", f"smallword{i}x", "--json"], args.timeout, home)["out"] for i in range(6)
        )
        after["status"] = run([*m, "status", "--json"], args.timeout, home)
        found = after["search"]["rc"] == 0 and '"path"' in after["search"]["out"]
        try:
            fresh = json.loads(after["status"]["out"]).get("fresh")
        except ValueError:
            fresh = None
        return {
            "full": steps,
            "left_by_failed_writes": left,
            "stray_files": strays,
            "freed_mb": freed_mb,
            "after": after,
            "recovered": bool(found and after["add"]["rc"] == 0),
            "fresh_after": fresh,
            "strays_after": strays_after,
            "nearly": nearly,
            "nearly_found": nearly_found,
            "nearly_strays": stray_files(vault),
        }
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=20, help="notes in the vault [20]")
    ap.add_argument("--words", type=int, default=6000, help="words per note, from a vocabulary of 19,600 [6000]")
    ap.add_argument("--nearly-mb", type=int, default=3, help="MB given back before the six small writes [3]")
    ap.add_argument("--size-mb", type=int, default=20, help="size of the filesystem [20]")
    ap.add_argument("--runs", type=int, default=3, help="runs (a fresh filesystem each); medians [3]")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a command counts as hung [60]")
    args = ap.parse_args(argv)
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        sys.exit("needs root and mkfs.ext4 (it loop-mounts a small ext4 image)")
    runs = []
    for i in range(args.runs):
        log(f"run {i + 1}/{args.runs}")
        runs.append(one_run(args, seed=i))
    load = os.getloadavg()
    rows = ["| command on the full disk | median s | max s | exit codes | stderr lines | tracebacks | last line |"]
    rows.append("|---|---|---|---|---|---|---|")
    for name in runs[0]["full"]:
        got = [r["full"][name] for r in runs]
        secs = [g["seconds"] for g in got]
        codes = ",".join(str(g["rc"]) for g in got)
        last = got[-1]["last"].replace("|", "/")
        rows.append(
            f"| {name} | {statistics.median(secs):.2f} | {max(secs):.2f} | {codes} | "
            f"{max(g['lines'] for g in got)} | {sum(g['traceback'] for g in got)} | {last} |"
        )
    rows.append("")
    rows.append("| after freeing | runs |")
    rows.append("|---|---|")
    rows.append(f"| MB freed (2 × the most a failure named) | {', '.join(str(r['freed_mb']) for r in runs)} |")
    rows.append(f"| recovered (add works, its note found) | {sum(r['recovered'] for r in runs)}/{len(runs)} |")
    rows.append(f"| status fresh after | {sum(bool(r['fresh_after']) for r in runs)}/{len(runs)} |")
    rows.append(f"| note files left by failed writes | {sum(len(r['left_by_failed_writes']) for r in runs)} |")
    rows.append(
        f"| stray files on the full disk / after | {sum(len(r['stray_files']) for r in runs)} / "
        f"{sum(len(r['strays_after']) for r in runs)} |"
    )
    ok = [sum(a["rc"] == 0 for a in r["nearly"]) for r in runs]
    rows.append(f"| {args.nearly_mb} MB back, six small adds: exited 0 | {', '.join(f'{n}/6' for n in ok)} |")
    rows.append(f"| … their notes found by search | {', '.join(str(r['nearly_found']) + '/6' for r in runs)} |")
    rows.append(f"| … tracebacks | {sum(a['traceback'] for r in runs for a in r['nearly'])} |")
    rows.append(f"| … stray files after | {sum(len(r['nearly_strays']) for r in runs)} |")
    nearly_s = [a["seconds"] for r in runs for a in r["nearly"]]
    rows.append(f"| … median / max s | {statistics.median(nearly_s):.2f} / {max(nearly_s):.2f} |")
    secs_after = [r["after"][k]["seconds"] for r in runs for k in r["after"]]
    rows.append(f"| median s of the commands after | {statistics.median(secs_after):.2f} |")
    md = (
        f"Full disk: {args.notes} notes of {args.words} words on a {args.size_mb} MB ext4, {args.runs} runs; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n\n" + "\n".join(rows) + "\n"
    )
    print(md)
    write_results("diskfull", md, {"machine": machine(), "load": load, "args": vars(args), "runs": runs})


if __name__ == "__main__":
    main()
