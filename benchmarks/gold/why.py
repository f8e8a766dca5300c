#!/usr/bin/env python3
"""Gold-set check for ``mdmem why``: is each why-question's cause (its grade-3 note) in the top 5?

    python benchmarks/gold/why.py [--vectors] [-k 5]

Copies ./vault to a temporary folder (the index is never written into the repository), judges
visibility at the gold set's ``as_of`` date, runs ``Vault.why`` for every ``kind: why`` query and
prints the rank of the cause, its role (match/cause/effect) and the chain that reached it.
Exit code 1 if any cause is missing from the top k. Without --vectors, matches come from BM25 only
(no model); with it, the vault is embedded first with the configured model ($MDMEM_EMBED_MODEL).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", action="store_true", help="embed the vault and use hybrid matches")
    parser.add_argument("-k", type=int, default=5, help="the cause must rank within the top k (default 5)")
    args = parser.parse_args()
    data = yaml.safe_load((HERE / "queries.yaml").read_text(encoding="utf-8"))
    os.environ["MDMEM_NOW"] = str(data["as_of"])
    queries = [q for q in data["queries"] if q["kind"] == "why"]

    from mdmem import Vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(HERE / "vault", root)
        vault = Vault.open(root)
        vault.reindex()
        if args.vectors:
            vault.embed()
        fails = 0
        ms = []
        print(f"{'query':<8} {'rank':>4}  {'role':<6} cause  chain  —  {'query text'}")
        for q in queries:
            causes = [nid for nid, grade in q["relevant"].items() if grade == 3]
            t = time.perf_counter()
            r = vault.why(q["query"], limit=10, vectors=True if args.vectors else False)
            ms.append((time.perf_counter() - t) * 1000)
            ids = [x["id"] for x in r["results"]]
            rank = next((i for i, nid in enumerate(ids, 1) if nid in causes), None)
            ok = rank is not None and rank <= args.k
            fails += not ok
            hit = r["results"][rank - 1] if rank else None
            chain = " ".join(f"{c['from']['id']} -{c['type']}-> {c['to']['id']}" for c in hit["chain"]) if hit else ""
            print(
                f"{q['id']:<8} {rank or '-':>4}  {hit['role'] if hit else '-':<6} {','.join(causes)}  "
                f"{chain or '(direct match)'}  —  {q['query']}" + ("" if ok else "   <-- MISSED")
            )
        mode = "hybrid (vectors)" if args.vectors else "BM25 matches"
        print(
            f"\n{len(queries) - fails}/{len(queries)} why-questions have their cause in the top {args.k} "
            f"({mode}); median {sorted(ms)[len(ms) // 2]:.1f} ms per why"
        )
        vault.close()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
