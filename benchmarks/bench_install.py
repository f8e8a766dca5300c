"""README command (1) on a fresh machine, as near as one gets here: a clean clone, a new virtual
environment, `pip install .`, then the example vault's init, embed and query. Prints the venv's size,
the wall time and the machine's load, per run and the median.

    python benchmarks/bench_install.py [--runs 3] [--repo .] [--rev HEAD]

pip reads its usual configuration and cache, so the time is that of a warm local cache; the size does
not depend on it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def readme_command(repo: Path) -> str:
    """README command (1): the line after '# 1.' in the README's first code block."""
    lines = (repo / "README.md").read_text(encoding="utf-8").splitlines()
    return next(lines[i + 1] for i, line in enumerate(lines) if line.startswith("# 1."))


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def run(repo: Path, rev: str) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory(prefix="mdmem-install-") as tmp:
        src = Path(tmp) / "src"
        subprocess.run(["git", "clone", "-q", str(repo), str(src)], check=True)
        subprocess.run(["git", "-C", str(src), "checkout", "-q", rev], check=True)
        command = readme_command(src).replace("/tmp/mdmem-demo", f"{tmp}/demo")
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MDMEM_VAULT")}
        env["MDMEM_HOME"] = f"{tmp}/home"  # a machine that has prepared no model yet
        env["PATH"] = ":".join(p for p in env["PATH"].split(":") if "/.venv/" not in p)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.run(["bash", "-c", command], cwd=src, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0 or "Use Hotwire for new frontends" not in proc.stdout:
            raise SystemExit(f"README command (1) failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        size = du(src / ".venv")
        shutil.rmtree(src / ".venv", ignore_errors=True)
        return seconds, size, f"{load:.1f}→{os.getloadavg()[0]:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args()
    rows = [run(args.repo.resolve(), args.rev) for _ in range(args.runs)]
    print("| run | venv size | time | load (1 min) |")
    print("|---:|---:|---:|---:|")
    for i, (seconds, size, load) in enumerate(rows, 1):
        print(f"| {i} | {size / 1e6:.0f} MB | {seconds:.1f} s | {load} |")
    print(
        f"| median | {statistics.median(r[1] for r in rows) / 1e6:.0f} MB | "
        f"{statistics.median(r[0] for r in rows):.1f} s | |"
    )


if __name__ == "__main__":
    main()
