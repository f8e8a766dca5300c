"""Vector coverage only grows (apart from deleted notes): a rebuild's new generation carries the cached
vectors before it becomes current, a checkout round trip takes away at most the changed chunks' vectors
for a moment, and the embedding job follows a generation switch made while it embeds."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from ..conftest import git, mdmem_in_process
from .test_catchup import checkout, wait_for_job


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


def coverage_now(vault: Path) -> int | None:
    """Chunks with a vector in the generation readers see now (None while it cannot be read)."""
    try:
        gen = json.loads((vault / ".mdmem" / "manifest.json").read_text())["generation"]
        db = sqlite3.connect(f"file:{vault / '.mdmem' / gen / 'catalog.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT coalesce(sum(vec), 0) FROM chunks").fetchone()[0])
        finally:
            db.close()
    except (OSError, ValueError, KeyError, sqlite3.Error):
        return None


class Sampler:
    """Reads the coverage readers would see, every few milliseconds, in a thread."""

    def __init__(self, vault: Path) -> None:
        self.vault, self.samples, self.stop = vault, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            got = coverage_now(self.vault)
            if got is not None:
                self.samples.append(got)
            time.sleep(0.003)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_coverage_never_drops_below_before_less_the_changed_chunks(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdmem import Vault

    monkeypatch.setenv("MDMEM_INLINE_MAX", "3")  # the checkouts go to the background job
    git(git_vault, "checkout", "-q", "-b", "away")
    changed = ["notes/with-id.md", "notes/bare-date.md"]
    for rel in changed:
        (git_vault / rel).write_text((git_vault / rel).read_text() + "\nA closing paragraph on the okapi.\n")
    for i in range(6):
        (git_vault / f"notes/new-{i}.md").write_text(f"# New {i}\n\nThe okapi{i} note.\n")
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "away", env={"MDMEM_SKIP_HOOK": "1"})
    git(git_vault, "checkout", "-q", "main", env={"MDMEM_SKIP_HOOK": "1"})
    with Vault.open(git_vault) as v:
        v.reindex()
        total = v.store.catalog.coverage()[1]
        v.semantic.embed(max_new=total - 3)  # part way through the first embedding
        before = v.store.catalog.coverage()[0]
        counts = v.store.catalog.chunk_counts(changed)
    assert 0 < before < total
    with Sampler(git_vault) as sampler:
        assert checkout(git_vault, "away").returncode == 0
        wait_for_job(git_vault)
        mdmem_in_process("--vault", str(git_vault), "reindex", "--full")  # a new generation
        assert checkout(git_vault, "main").returncode == 0
        wait_for_job(git_vault)
        time.sleep(0.05)
    assert len(sampler.samples) > 20
    assert min(sampler.samples) >= before - sum(counts.values())
    assert sampler.samples[-1] >= before


def test_the_embedding_job_follows_a_rebuild_made_while_it_embeds(vault_dir: Path) -> None:
    from mdmem import Vault

    v = Vault.open(vault_dir)
    v.reindex()
    real = v.semantic.embedder.embed
    rebuilt: list[str] = []

    def embed_then_rebuild(texts: list[str], *, query: bool = False) -> object:
        out = real(texts, query=query)
        if not rebuilt:  # another process rebuilds the index while this one embeds
            with Vault.open(vault_dir) as other:
                other.reindex(full=True)
                rebuilt.append(other.store.generation)
        return out

    v.semantic.embedder.embed = embed_then_rebuild  # type: ignore[method-assign]
    v.semantic.settings.__class__  # noqa: B018
    report = v.semantic.embed()
    v.close()
    assert rebuilt and report.done == report.total > 0
    with Vault.open(vault_dir) as fresh:
        assert fresh.store.generation == rebuilt[0]
        assert fresh.store.catalog.coverage() == (report.total, report.total)
        assert fresh.semantic.vector_path().is_file()


def test_query_is_not_worse_than_search_while_vectors_are_coming(tmp_path: Path) -> None:
    """The answer has no vector yet and the notes the vector leg can read are closer to the question's
    other words: the leg abstains on it instead of voting it down, and the answer says so."""
    root = tmp_path / "zoo"
    root.mkdir()
    for i in range(6):
        (root / f"budget-{i}.md").write_text(
            f"# Zoo budget {i}\n\nFeeding costs for the zoo animals rose in the "
            "morning; the morning feeding budget grows.\n"
        )
    (root / "times.md").write_text("# Feeding times\n\nMorning feeding of the zoo animals at dawn, every morning.\n")
    mdmem_in_process("--vault", str(root), "reindex")
    mdmem_in_process("--vault", str(root), "embed")
    for i in range(20):  # more chunks than a query embeds itself: they wait for the embedding job
        (root / f"filler-{i}.md").write_text(f"# Filler {i}\n\nNothing about animals here, note {i}.\n")
    (root / "tapir.md").write_text("# Tapir\n\nThe tapir eats leaves at the zoo.\n")
    mdmem_in_process("--vault", str(root), "reindex")
    question = "when does the tapir get its morning feeding"
    search = json.loads(mdmem_in_process("--vault", str(root), "search", question, "--json").stdout)
    assert search["results"][0]["path"] == "tapir.md"
    proc = mdmem_in_process("--vault", str(root), "query", question, "--json", "--explain")
    query = json.loads(proc.stdout)
    assert query["results"][0]["path"] == "tapir.md"
    assert query["results"][0]["explain"]["vec_abstained"] == 1
    cov = query["info"]["coverage"]
    assert cov["complete"] is False and cov["candidates_not_embedded"] == 1 and cov["candidates"] == 8
    text = mdmem_in_process("--vault", str(root), "query", question)
    assert "abstained on 1 of 8 BM25 matches" in text.stderr


def test_status_shows_the_whole_embedding_job(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job embeds in rounds; status shows the job's done/total, rate and time left, not a round's."""
    import mdmem.index.semantic as semantic
    from mdmem import Vault
    from mdmem.index.progress import embed_progress

    monkeypatch.setattr(semantic, "JOB_ROUND", 4)
    monkeypatch.setattr(semantic, "AUTO_EMBED_MAX", 0)
    monkeypatch.setattr("mdmem.index.progress.PROGRESS_EVERY", 0.0)
    v = Vault.open(vault_dir)
    v.reindex()
    total = v.store.catalog.coverage()[1]
    assert total > 8
    seen: list[tuple[int, int, bool]] = []
    lines: list[str] = []
    real = v.semantic.embedder.embed

    def watching(texts: list[str], *, query: bool = False) -> object:
        run = embed_progress(vault_dir / ".mdmem")
        if run is not None:
            seen.append((run["done"], run["total"], run["job"]))
            if len(seen) == 3:
                lines.append(mdmem_in_process("--vault", str(vault_dir), "status").stdout)
        return real(texts, query=query)

    v.semantic.embedder.embed = watching  # type: ignore[method-assign]
    v.semantic.run_job()  # the background job's work, run here
    v.close()
    assert len(seen) >= 3 and {t for _, t, _ in seen} == {total} and all(job for _, _, job in seen)
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen) and seen[-1][0] > 4
    line = next(ln for ln in lines[0].splitlines() if ln.startswith("vectors"))
    assert f"/{total} chunks (" in line and "chunks/s" in line and "left" in line
    assert embed_progress(vault_dir / ".mdmem") is None
