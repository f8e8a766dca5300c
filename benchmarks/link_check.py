"""How well mdmem's link resolution agrees with Obsidian's on a real vault: precision and recall of
every link's target against an independent reference written from Obsidian's rules.

    python benchmarks/link_check.py VAULT [--per-top-folder] [--show 20]

The reference resolves each link as Obsidian's ``getFirstLinkpathDest`` does (observed on Obsidian
1.x): a path relative to the note for ``./``/``../`` and markdown links to files, an exact vault path
(with or without .md), then every file whose path ends with the link's path; several → the one in the
linking note's own folder, else the shortest path, else the first by path. mdmem adds one rule on top:
of several files sharing a name, the one in the folder nearest the linking note wins, so
the two differ only where a nearer folder and a shorter path disagree; those rows are listed.

``--per-top-folder`` treats each top folder as its own vault (the Obsidian help repository is one vault
per language folder). The vault is indexed first if it has no index. Prints a table.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import sys
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mdmem.api.vault import Vault  # noqa: E402


def _norm(s: str) -> str:
    return unicodedata.normalize("NFC", s.casefold())


def _files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        out += [
            os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            for f in filenames
            if not f.startswith(".")
        ]
    return out


class Reference:
    """Obsidian's resolution over one set of files (a vault, or one top folder of it)."""

    def __init__(self, files: list[str]) -> None:
        self.exact = {_norm(f): f for f in files}
        self.files = files

    def resolve(self, src: str, target: str) -> str | None:
        t = target.strip()
        variants = [t] if t.lower().endswith(".md") else [t + ".md", t]
        last = t.rsplit("/", 1)[-1]
        if t.startswith(("./", "../")) or (("/" in t or t.lower().endswith(".md")) and "." in last):
            for v in variants:
                hit = self.exact.get(_norm(posixpath.normpath(posixpath.join(posixpath.dirname(src), v))))
                if hit:
                    return hit
            if t.startswith(("./", "../")):
                return None
        for v in variants:
            hit = self.exact.get(_norm(v.lstrip("/")))
            if hit:
                return hit
        for v in variants:
            want = _norm(v.lstrip("/"))
            cands = [f for f in self.files if _norm(f) == want or _norm(f).endswith("/" + want)]
            if cands:
                here = [c for c in cands if posixpath.dirname(c) == posixpath.dirname(src)]
                return here[0] if here else min(cands, key=lambda c: (len(c), c))
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault")
    ap.add_argument("--per-top-folder", action="store_true", help="each top folder is its own vault")
    ap.add_argument("--show", type=int, default=10, help="disagreements to list [10]")
    args = ap.parse_args()
    root = Path(args.vault).resolve()
    v = Vault.open(root)
    g = v.graph()
    files = _files(root)
    refs: dict[str, Reference] = {}
    if args.per_top_folder:
        tops: dict[str, list[str]] = {}
        for f in files:
            if "/" in f:
                top, rest = f.split("/", 1)
                tops.setdefault(top, []).append(rest)
        refs = {top: Reference(fs) for top, fs in tops.items()}
    whole = Reference(files)
    agree = both_none = wrong = missed = 0
    differ = []
    for src, edges in sorted(g.out.items()):
        for e in edges:
            if e.type == "about":
                continue
            if args.per_top_folder:
                if "/" not in src:
                    continue
                top, rest = src.split("/", 1)
                hit = refs[top].resolve(rest, e.target)
                want = f"{top}/{hit}" if hit else None
            else:
                want = whole.resolve(src, e.target)
            got = e.dst
            if want == got:
                agree += want is not None
                both_none += want is None
                continue
            wrong += got is not None
            missed += want is not None
            differ.append((src, e.target, got, want, e.how))
    kinds = Counter(g.nodes[e.dst].kind for es in g.out.values() for e in es if e.dst in g.nodes)
    print("| vault | links | agree | both dangling | mdmem differs | reference only | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {root.name}{' (per top folder)' if args.per_top_folder else ''} | {agree + both_none + len(differ)} "
        f"| {agree} | {both_none} | {wrong} | {missed} | {agree / max(1, agree + wrong):.4f} "
        f"| {agree / max(1, agree + missed):.4f} |"
    )
    print(f"\ntargets by kind: {dict(kinds)}")
    for src, target, got, want, how in differ[: args.show]:
        print(f"- {src}: [[{target}]] mdmem → {got} ({how or 'dangling'}); reference → {want}")
    v.close()


if __name__ == "__main__":
    main()
