"""search, vsearch and query on paraphrased and misspelled questions over the Obsidian help vault.

    git clone https://github.com/obsidianmd/obsidian-help && mkdir /tmp/hv && cp -r obsidian-help/en /tmp/hv/
    python benchmarks/help_questions/run.py /tmp/hv

Indexes and embeds the folder (a few minutes the first time), then prints per kind and mode how many
questions found their note in the top 10, the MRR, and how many said nothing matches well.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from mdmem.api.vault import Vault


def main(root: Path) -> None:
    questions = yaml.safe_load((Path(__file__).parent / "questions.yaml").read_text(encoding="utf-8"))
    with Vault.open(root) as v:
        v.reindex()
        v.embed()
        for kind, items in questions.items():
            for mode in ("search", "vsearch", "query"):
                found, rr, silenced, ranks = 0, 0.0, 0, []
                for text, want in items:
                    hits = getattr(v, mode)(text, limit=10)
                    paths = [h.path.removeprefix("en/") for h in hits]
                    rank = paths.index(want) + 1 if want in paths else None
                    ranks.append(rank or "-")
                    found += rank is not None
                    rr += 1 / rank if rank else 0.0
                    silenced += hits.info.get("relevant") is False
                print(
                    f"{kind:10} {mode:8} top10 {found}/{len(items)}  MRR {rr / len(items):.3f}  "
                    f"silenced {silenced}  ranks {ranks}"
                )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
