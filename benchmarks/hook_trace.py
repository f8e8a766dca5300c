"""What a one-note post-commit hook runs: the mdmem source files whose code ran and the calls of a few
functions, counted with a profiler (``sys.setprofile``): the files where a function or a class body ran,
and those only imported besides (a package's ``__init__``, a module whose top level alone ran).

    python benchmarks/hook_trace.py [--notes 20] [--count IndexStore.rebuild_reason] [--list]

It makes a small git vault (``corpus.make_corpus``), indexes it, commits one edited note with the hooks
off, then runs ``python -m mdmem --vault V reindex --git-hook post-commit`` under the profiler, in the
environment ``bench_spine`` uses (no automatic embedding). Prints a table; ``--list`` names the files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_spine import child_env, edit_note, git  # noqa: E402
from corpus import make_corpus  # noqa: E402

COUNTED = ("IndexStore.rebuild_reason", "Indexer.rebuild_reason", "IndexState.rebuild_reason")

# Runs in the hook's own process: profiles the whole of ``python -m mdmem ...`` and writes what ran.
_TRACER = r"""
import json, os, runpy, sys
package = os.path.dirname(__import__("importlib.util").util.find_spec("mdmem").origin)
files, running, calls = set(), set(), {}
def profile(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    if code.co_filename.startswith(package):
        files.add(os.path.relpath(code.co_filename, os.path.dirname(package)))
        name = code.co_qualname
        calls[name] = calls.get(name, 0) + 1
        if name != "<module>":
            running.add(os.path.relpath(code.co_filename, os.path.dirname(package)))
out, sys.argv = sys.argv[1], ["mdmem", *sys.argv[2:]]
sys.setprofile(profile)
try:
    runpy.run_module("mdmem", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    with open(out, "w") as fh:
        json.dump({"files": sorted(files), "running": sorted(running), "calls": calls}, fh)
"""


def trace_hook(notes: int) -> dict[str, object]:
    """Make the vault, commit one note, run the hook under the profiler; what ran."""
    with tempfile.TemporaryDirectory(prefix="hook-trace-") as tmp:
        work = Path(tmp)
        vault, home, no_hooks = work / "vault", work / "home", work / "no-hooks"
        no_hooks.mkdir()
        paths = make_corpus(vault, notes)
        (vault / ".gitignore").write_text(".mdmem/\n")
        git(vault, "init", "-q")
        git(vault, "add", "-A")
        git(vault, "commit", "-q", "-m", "corpus")
        env = {**child_env(), "MDMEM_HOME": str(home)}
        mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
        subprocess.run([*mdmem, "reindex", "-q"], env=env, check=True, capture_output=True)
        edit_note(vault, paths[len(paths) // 2], "tracedword")
        git(vault, "-c", f"core.hooksPath={no_hooks}", "commit", "-q", "-am", "one note")
        out = work / "trace.json"
        hook = ["--vault", str(vault), "reindex", "--git-hook", "post-commit"]
        run = subprocess.run(
            [sys.executable, "-c", _TRACER, str(out), *hook], cwd=vault, env=env, capture_output=True, text=True
        )
        if run.returncode != 0:
            sys.exit(f"the hook failed: {run.stderr}")
        found = subprocess.run(
            [*mdmem, "search", "tracedword", "--json"], env=env, capture_output=True, text=True, check=True
        )
        data: dict[str, object] = json.loads(out.read_text())
        data["indexed"] = paths[len(paths) // 2].removesuffix(".md") in found.stdout
        data["stderr"] = run.stderr.strip()
        return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=20, help="notes in the vault (default 20)")
    ap.add_argument("--count", action="append", default=[], help="also count calls of this qualified name")
    ap.add_argument("--list", action="store_true", help="name every file that ran")
    args = ap.parse_args()
    data = trace_hook(args.notes)
    files: list[str] = data["files"]  # type: ignore[assignment]
    running: list[str] = data["running"]  # type: ignore[assignment]
    calls: dict[str, int] = data["calls"]  # type: ignore[assignment]
    print("| what | value |\n|---|---|")
    print(f"| mdmem files whose functions or class bodies ran | {len(running)} |")
    print(f"| mdmem files imported (their top level ran) | {len(files)} |")
    for name in (*COUNTED, *args.count):
        print(f"| calls of {name} | {calls.get(name, 0)} |")
    print(f"| the committed note searchable afterwards | {'yes' if data['indexed'] else 'NO'} |")
    imported = hook_imports()
    heavy = [m for m in ("numpy", "usearch", "onnxruntime") if m in imported]
    print(f"| heavy libraries the hook imports | {', '.join(heavy) or 'none'} |")
    if data["stderr"]:
        print(f"\nhook stderr: {data['stderr']}")
    if args.list:
        print("\n" + "\n".join(f"{f}{'' if f in running else '  (imported only)'}" for f in files))


def hook_imports() -> set[str]:
    """The top-level packages the same hook imports (a vault of its own, under ``-X importtime``)."""
    with tempfile.TemporaryDirectory(prefix="hook-imports-") as tmp:
        work = Path(tmp)
        vault, no_hooks = work / "vault", work / "no-hooks"
        no_hooks.mkdir()
        paths = make_corpus(vault, 20)
        (vault / ".gitignore").write_text(".mdmem/\n")
        git(vault, "init", "-q")
        git(vault, "add", "-A")
        git(vault, "commit", "-q", "-m", "corpus")
        env = {**child_env(), "MDMEM_HOME": str(work / "home")}
        mdmem = [sys.executable, "-m", "mdmem", "--vault", str(vault)]
        subprocess.run([*mdmem, "reindex", "-q"], env=env, check=True, capture_output=True)
        edit_note(vault, paths[3], "importword")
        git(vault, "-c", f"core.hooksPath={no_hooks}", "commit", "-q", "-am", "one note")
        hook = ["-X", "importtime", "-m", "mdmem", "--vault", str(vault), "reindex", "--git-hook", "post-commit"]
        run = subprocess.run([sys.executable, *hook], env=env, capture_output=True, text=True)
        return {line.split("|")[-1].strip().split(".")[0] for line in run.stderr.splitlines() if "|" in line}


if __name__ == "__main__":
    os.environ.pop("MDMEM_VAULT", None)
    main()
