"""The parsing worker of a big build, started from a process that already runs threads: the build returns."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mdmem.adapters.embed import EmbedSettings, make_embedder
from mdmem.index.parsing import PARALLEL_PARSE_MIN

from ..conftest import FIXTURE, FIXTURE_IGNORE

# One process, as a program that embeds mdmem runs it: the first vault indexed, embedded with the real
# model (onnxruntime's threads now run) and queried; then a second, big vault indexed with that model
# still loaded. With a forked parsing worker the child inherited a lock one of those threads held, and
# the second reindex never returned.
SCRIPT = r"""
import sys, threading
from mdmem import Vault
first = Vault.open(sys.argv[1])
first.reindex()
first.embed()
hits = first.query("when do releases ship", limit=3)
assert hits, "no hit"
assert first.semantic.embedder.runtime == "onnx", first.semantic.embedder.runtime
report = Vault.open(sys.argv[2]).reindex()
print(len(report.added), threading.active_count())
"""


def test_a_process_that_served_a_query_rebuilds_a_second_big_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "mdmem-home"))
    assert make_embedder(EmbedSettings()).prepare()  # the ONNX export, where the child looks for it
    first = tmp_path / "first"
    shutil.copytree(FIXTURE, first, ignore=FIXTURE_IGNORE)
    big = tmp_path / "big"
    (big / "notes").mkdir(parents=True)
    n = max(2000, PARALLEL_PARSE_MIN)
    for i in range(n):
        words = " ".join(f"topic{(i * 7 + k) % 97}" for k in range(40))
        (big / "notes" / f"note-{i}.md").write_text(f"---\ntitle: Note {i}\n---\n# Note {i}\n\n{words}\n")
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(first), str(big)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    added, _threads = run.stdout.split()
    assert int(added) == n
