"""Benchmark of dates from git: a full BM25 index of a vault with a long history, the git-history
pass on its own, and the post-commit hook, on a fresh clone (every file's mtime is the clone's).

    python benchmarks/bench_gitdates.py [--notes 6000] [--commits 3000] [--runs 5]

The vault is ``corpus.py``'s notes without their ``created``/``updated`` lines (as most hand-written
vaults are), committed over three years of history with ``git fast-import``: a first import, then
commits that add notes, edit a few, rename some (``git mv``) and delete a few. See
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import child_env, git, machine, mdmem_cmd, measure, write_results  # noqa: E402
from corpus import make_corpus  # noqa: E402
from setup_env import compile_package  # noqa: E402

START = 1_600_000_000  # 2020-09-13
SPAN = 3 * 365 * 86400
_DATES = re.compile(r"^(created|updated): .*\n", re.M)


def history_stream(work: Path, n: int, commits: int, seed: int = 0) -> tuple[bytes, list[str]]:
    """A ``git fast-import`` stream of ``n`` undated notes over ``commits`` commits; the final paths."""
    rels = make_corpus(work / "corpus", n, seed=seed)
    notes = [(rel, _DATES.sub("", (work / "corpus" / rel).read_text(encoding="utf-8"))) for rel in rels]
    rng = random.Random(f"history-{seed}")
    # The first commit imports a third of the vault; the other notes arrive one or two per commit.
    first = n // 3
    per_commit: list[list[tuple[str, int]]] = [[] for _ in range(commits)]
    path_now: dict[int, str] = {}
    for i in range(n):
        c = 0 if i < first else 1 + (i - first) * (commits - 1) // max(1, n - first)
        per_commit[c].append(("add", i))
    for c in range(1, commits):  # edits, renames, deletions of notes that exist by then
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            per_commit[c].append(("edit", rng.randrange(first + (c - 1) * (n - first) // commits + 1)))
        if rng.random() < 0.08:
            per_commit[c].append(("rename", rng.randrange(first + (c - 1) * (n - first) // commits + 1)))
    out: list[bytes] = []
    finals: dict[int, int] = {}  # note → the last commit that edits it (it gets its final text there)
    for c, ops in enumerate(per_commit):
        for op in ops:
            if op[0] in ("add", "edit"):
                finals[op[1]] = c
    gone: set[int] = set()
    for c, ops in enumerate(per_commit):
        when = START + c * SPAN // commits + rng.randrange(3600)
        lines: list[bytes] = []
        for kind, i in ops:
            if i in gone:
                continue
            rel, text = notes[i]
            if kind == "add":
                path_now[i] = rel
            if i not in path_now:
                continue
            if kind == "rename":
                new = rel.replace(".md", "-moved.md") if path_now[i] == rel else rel
                if new != path_now[i]:
                    lines.append(f"R {path_now[i]} {new}\n".encode())
                    path_now[i] = new
                continue
            body = text if finals[i] == c else text[: max(40, len(text) * rng.randint(3, 9) // 10)]
            data = body.encode()
            lines.append(f"M 100644 inline {path_now[i]}\ndata {len(data)}\n".encode() + data + b"\n")
        msg = f"commit {c}".encode()
        out.append(
            b"commit refs/heads/main\n"
            + f"author A <a@x> {when} +0000\ncommitter A <a@x> {when} +0000\n".encode()
            + f"data {len(msg)}\n".encode()
            + msg
            + b"\n"
            + b"".join(lines)
            + b"\n"
        )
    return b"".join(out), [path_now[i] for i in sorted(path_now)]


def make_history_vault(work: Path, n: int, commits: int, seed: int = 0) -> tuple[Path, list[str]]:
    """A repository with the history, then a fresh clone of it (the vault); (vault, note paths)."""
    origin, vault = work / "origin", work / "vault"
    git(work, "init", "-q", "-b", "main", str(origin))
    stream, paths = history_stream(work, n, commits, seed)
    subprocess.run(["git", "fast-import", "--quiet"], input=stream, cwd=origin, env=child_env(), check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(vault)], env=child_env(), check=True)
    (vault / ".git" / "info" / "exclude").write_text(".mdmem/\n")
    return vault, paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=6000)
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tmp", type=Path, default=None)
    args = ap.parse_args(argv)
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="mdmem-gitdates-", dir=args.tmp))
    t = time.perf_counter()
    vault, paths = make_history_vault(work, args.notes, args.commits, args.seed)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    log(f"vault {vault}: {len(paths)} notes, {args.commits} commits, built in {time.perf_counter() - t:.1f}s")

    mdmem = [*mdmem_cmd(), "--vault", str(vault)]
    full = [measure([*mdmem, "reindex", "--full", "-q"], vault).wall for _ in range(args.runs)]
    log(f"full index: median {statistics.median(full):.2f}s of {[round(x, 2) for x in full]}")

    passes: list[float] = []
    try:
        from mdmem.adapters.git import history

        for _ in range(args.runs):
            t = time.perf_counter()
            history(vault, None, "HEAD")
            passes.append(time.perf_counter() - t)
        log(f"git-history pass: median {statistics.median(passes) * 1000:.0f} ms")
    except ImportError:
        log("git-history pass: not in this mdmem")

    hook = [sys.executable, "-m", "mdmem", "--vault", ".", "reindex", "--git-hook", "post-commit"]
    hook_ms = []
    for r in range(args.runs):
        rel = paths[(r + 1) * len(paths) // (args.runs + 2)]
        with open(vault / rel, "a", encoding="utf-8") as fh:
            fh.write(f"\nUpdate {r}.\n")
        git(vault, "add", "--", rel)
        git(vault, "-c", f"core.hooksPath={work / 'no-hooks'}", "commit", "-q", "-m", f"edit {r}")
        hook_ms.append(measure(hook, vault).wall * 1000)
    log(f"hook after one commit: median {statistics.median(hook_ms):.0f} ms")

    sample = random.Random(1).sample(paths, 15)
    got = subprocess.run([*mdmem, "get", "--json", *sample[:1]], env=child_env(), capture_output=True, text=True)
    from_git = 0
    for rel in sample:
        out = subprocess.run([*mdmem, "get", "--json", rel], env=child_env(), capture_output=True, text=True)
        from_git += json.loads(out.stdout).get("updated_from") == "git" if out.returncode == 0 else 0
    log(f"dates from git: {from_git} of {len(sample)} sampled notes")
    data = {
        "machine": machine(),
        "notes": len(paths),
        "commits": args.commits,
        "full_s": full,
        "history_pass_s": passes,
        "hook_ms": hook_ms,
        "dates_from_git": from_git,
        "sampled": len(sample),
        "example": got.stdout[:400],
    }
    md = (
        f"{len(paths)} notes, {args.commits} commits: full index median {statistics.median(full):.2f} s"
        + (f", git-history pass {statistics.median(passes) * 1000:.0f} ms" if passes else "")
        + f", hook {statistics.median(hook_ms):.0f} ms, dates from git {from_git}/{len(sample)}\n"
    )
    print(md)
    write_results("gitdates", md, data)


if __name__ == "__main__":
    main()
