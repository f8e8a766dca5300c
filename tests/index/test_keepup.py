"""Vectors keep up with the files: after every reindex, git hook, add, import and lifecycle write
the changed chunks get their vectors, inline when the model is cheap here, else from one background job.

Real git repositories with mdmem's hooks as git runs them. The hash embedder is cheap (inline);
``MDMEM_EMBED_INLINE=0`` makes every model "expensive", as a cold torch MiniLM is, so the job does the
work; one test runs the real model end to end. Jobs are waited for by polling their locks and marks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import git, mdmem_in_process

DOG = "# Our dog Biscuit\n\nWe adopted a golden retriever puppy last spring; the kids walk him every morning.\n"


@pytest.fixture(autouse=True)
def _auto_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_AUTO_EMBED", "1")
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_NO_SERVE", "1")


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Path]:
    """``mdmem init`` in a new git repository (its hooks installed), nothing committed yet."""
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(root))
    yield root
    wait_for_jobs(root)  # nothing a test started outlives it


def commit(
    root: Path, files: dict[str, str], message: str = "notes", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Write the files and commit them as a user does (git runs mdmem's hooks)."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    proc = subprocess.run(
        ["git", "commit", "-qm", message], cwd=root, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def wait_for_jobs(root: Path, limit: float = 180) -> None:
    """Poll until no catch-up or embedding job is queued, running or requested (the limit only keeps
    a broken build from hanging the suite; it is no timing assertion)."""
    from mdmem.index.state import EMBED_HOOK, JOB_HOOK, IndexState

    state = IndexState(root, 1.0)
    deadline = time.monotonic() + limit
    for kind in (JOB_HOOK, EMBED_HOOK, JOB_HOOK):
        while state.job_request(kind) is not None or state.job_active(kind):
            logs = [p.read_text() for p in (root / ".mdmem").glob("*.log")]
            assert time.monotonic() < deadline, logs
            time.sleep(0.05)


def vectors(root: Path) -> dict:
    return json.loads(mdmem_in_process("--vault", str(root), "status", "--json").stdout)["vectors"]


def job_pids(root: Path, kind: str = "embed") -> list[int]:
    """Processes running this vault's ``reindex --git-hook KIND`` job."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if kind.encode() in cmd and b"--git-hook" in cmd and str(root).encode() in cmd:
            pids.append(int(pid))
    return pids


def count_embeddings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the texts the hash embedder embeds in this process (one entry per call)."""
    from mdmem.adapters.embed import HashEmbedder

    calls: list[int] = []
    real = HashEmbedder.embed

    def counting(self: HashEmbedder, texts: list[str], *, query: bool = False) -> object:
        if not query:
            calls.append(len(texts))
        return real(self, texts, query=query)

    monkeypatch.setattr(HashEmbedder, "embed", counting)
    return calls


# -- the first commit ---------------------------------------------------------------------------------


def test_a_fresh_vault_is_hybrid_from_its_first_commit_with_the_real_model(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled MiniLM is not prepared on this machine yet (~1.5 s), so the hook hands the embedding to the job;
    once it is done every chunk has a vector and a paraphrase finds its note through the vector leg."""
    monkeypatch.delenv("MDMEM_EMBED_MODEL")
    proc = commit(
        fresh,
        {
            "notes/biscuit.md": DOG,
            "notes/kafka.md": "# Kafka lag\n\nThe payments consumer fell behind; we added partitions.\n",
        },
    )
    assert proc.stderr == ""  # the hook says nothing and leaves the model to the job
    wait_for_jobs(fresh)
    vec = vectors(fresh)
    assert vec["model"] == "all-MiniLM-L6-v2" and vec["complete"] and vec["chunks"] > 0
    out = json.loads(
        mdmem_in_process(
            "--vault", str(fresh), "query", "which animal lives with the family", "--json", "--explain"
        ).stdout
    )
    top = out["results"][0]
    assert top["path"] == "notes/biscuit.md"
    assert "vec_rank" in top["explain"] and "bm25_rank" not in top["explain"]  # no word in common
    assert out["info"]["coverage"]["complete"]


def test_a_cheap_model_embeds_a_commit_inline_and_starts_no_job(fresh: Path) -> None:
    commit(fresh, {"notes/biscuit.md": DOG})
    # No waiting: the hook embedded its chunks before git returned.
    assert vectors(fresh)["complete"]
    assert not (fresh / ".mdmem" / "embed").exists() and not (fresh / ".mdmem" / "embed.log").exists()
    assert mdmem_in_process("--vault", str(fresh), "vsearch", "golden retriever puppy", "--json").stdout.count(
        "notes/biscuit.md"
    )


def test_an_expensive_model_leaves_the_commit_to_one_background_job(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from mdmem.index import semantic

    monkeypatch.setenv("MDMEM_EMBED_INLINE", "0")  # every model costs more than a hook may spend
    commit(fresh, {"notes/a.md": "# A\n\nalpha words\n"})
    wait_for_jobs(fresh)
    assert vectors(fresh)["complete"]
    # Hold the job's running lock: the first job then waits to start, as behind a long embedding.
    fd = os.open(fresh / ".mdmem" / "embed.running", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        for i in range(4):  # four commits: one job waits, the later hooks start none
            commit(fresh, {f"notes/b{i}.md": f"# B{i}\n\nbeta{i} words\n"})
        assert len(job_pids(fresh)) == 1
        status = json.loads(mdmem_in_process("--vault", str(fresh), "status", "--json").stdout)
        assert not status["vectors"]["complete"] and status["vectors"]["embedding"] == "in the background"
        assert status["fresh"] and not status["catching_up"]  # BM25 is current; only vectors are due
        out = json.loads(mdmem_in_process("--vault", str(fresh), "search", "beta3 words", "--json").stdout)
        assert out["results"][0]["path"] == "notes/b3.md"  # the commit is searchable at once
        text = mdmem_in_process("--vault", str(fresh), "status").stdout
        assert "embedded in the background" in text
        from mdmem import Vault, render

        with Vault.open(fresh) as v:
            assert "embedding in the background" in render.mcp(v.status())[0]  # the MCP status tool's text
        monkeypatch.setattr(semantic, "AUTO_EMBED_MAX", 0)  # a vector read embeds none itself here
        out = json.loads(mdmem_in_process("--vault", str(fresh), "query", "beta3 words", "--json").stdout)
        assert out["info"]["coverage"]["complete"] is False
        assert out["info"]["coverage"]["embedding"] == "in the background"
    finally:
        os.close(fd)
    wait_for_jobs(fresh)
    vec = vectors(fresh)
    assert vec["complete"] and "embedding" not in vec
    assert not (fresh / ".mdmem" / "embed").exists()
    out = json.loads(mdmem_in_process("--vault", str(fresh), "query", "beta3 words", "--json").stdout)
    assert out["info"]["coverage"] == {"chunks_with_vectors": vec["chunks"], "chunks": vec["chunks"], "complete": True}


def test_a_killed_job_is_finished_by_the_next_write(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    monkeypatch.setenv("MDMEM_EMBED_INLINE", "0")
    fd = os.open(fresh / ".mdmem" / "embed.running", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the job waits to start
    try:
        commit(fresh, {"notes/a.md": "# A\n\nalpha words\n"})
        [pid] = job_pids(fresh)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while job_pids(fresh):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.close(fd)
    from mdmem.index.state import _reap

    _reap()  # the killed child of this process
    assert (fresh / ".mdmem" / "embed").exists()
    vec = vectors(fresh)
    assert vec["embedding"] == "interrupted" and not vec["complete"]
    assert "background embedding stopped" in mdmem_in_process("--vault", str(fresh), "status").stdout
    # Vectors completed otherwise (a foreground embed): nothing is interrupted any more, whatever the mark.
    mdmem_in_process("--vault", str(fresh), "embed")
    vec = vectors(fresh)
    assert vec["complete"] and "embedding" not in vec
    commit(fresh, {"notes/b.md": "# B\n\nbeta words\n"})  # the next write asks for a job again
    wait_for_jobs(fresh)
    assert vectors(fresh)["complete"]


# -- writes and rebuilds ----------------------------------------------------------------------------


def test_reindex_full_reuses_the_cache_and_keeps_coverage_complete(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(fresh, {"notes/biscuit.md": DOG, "notes/b.md": "# B\n\nbeta words\n\n## More\n\nmore beta\n"})
    before = vectors(fresh)
    assert before["complete"] and before["chunks"] > 3
    calls = count_embeddings(monkeypatch)
    mdmem_in_process("--vault", str(fresh), "reindex", "--full")
    assert vectors(fresh) == before  # not 0 of N: every vector came back from the cache
    assert sum(calls) == 0  # and not one chunk went through the model
    (fresh / "notes" / "b.md").write_text("# B\n\nbeta words\n\n## More\n\nchanged text\n")
    mdmem_in_process("--vault", str(fresh), "reindex", "--full")
    assert sum(calls) == 1 and vectors(fresh)["complete"]  # only the changed chunk


def test_lifecycle_writes_and_imports_keep_vectors_current(
    fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(*args: str) -> str:
        out = mdmem_in_process("--vault", str(fresh), *args).stdout
        vec = vectors(fresh)
        assert vec["complete"], (args, vec)
        return out

    calls = count_embeddings(monkeypatch)
    run("add", "-t", "Zebra crossing rule", "-b", "Pedestrians first at the striped crossing.")
    added = sum(calls)
    assert added > 0
    run("pin", "zebra-crossing-rule")
    run("snooze", "zebra-crossing-rule", "--until", "2030-01-01")
    run("correct", "zebra-crossing-rule", "-b", "Cyclists dismount at the striped crossing.")
    hits = json.loads(
        mdmem_in_process("--vault", str(fresh), "vsearch", "cyclists dismount", "--json", "--include", "snoozed").stdout
    )["results"]
    assert "zebra" in hits[0]["path"] and "Cyclists" in hits[0]["snippet"]
    run("add", "-t", "Other note", "-b", "unrelated text about kettles")
    run("link", "zebra-crossing-rule", "other-note")
    run("forget", "other-note")
    memory = tmp_path / "MEMORY.md"
    memory.write_text("# Memory\n\n## Facts\n\n- The office kettle is descaled on Fridays.\n")
    run("import", str(memory))
    assert sum(calls) > added


def test_auto_off_embeds_nothing_but_the_cache_still_serves_rebuilds(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MDMEM_AUTO_EMBED")
    (fresh / "mdmem.toml").write_text((fresh / "mdmem.toml").read_text() + "\n[embed]\nauto = false\n")
    calls = count_embeddings(monkeypatch)
    before = vectors(fresh)  # init's own notes were embedded while auto was on
    commit(fresh, {"notes/a.md": "# A\n\nalpha words\n"})
    mdmem_in_process("--vault", str(fresh), "add", "-t", "Beta", "-b", "beta words", "--no-dedupe")
    vec = vectors(fresh)
    assert vec["chunks_with_vectors"] == before["chunks_with_vectors"] and not vec["complete"]
    assert sum(calls) == 0
    assert not (fresh / ".mdmem" / "embed").exists()
    text = mdmem_in_process("--vault", str(fresh), "status").stdout
    assert "mdmem embed" in text  # the way to finish, since nothing will do it by itself
    mdmem_in_process("--vault", str(fresh), "embed")
    embedded = sum(calls)
    mdmem_in_process("--vault", str(fresh), "reindex", "--full")
    assert vectors(fresh)["complete"] and sum(calls) == embedded  # the cache, not the model


def test_skip_hook_and_a_bad_setting_never_fail_a_write(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit(fresh, {"notes/a.md": "# A\n\nalpha words\n"}, env={"MDMEM_SKIP_HOOK": "1"})
    assert not (fresh / ".mdmem" / "embed").exists()
    monkeypatch.delenv("MDMEM_AUTO_EMBED")
    (fresh / "mdmem.toml").write_text((fresh / "mdmem.toml").read_text() + '\n[embed]\nauto = "no"\n')
    proc = mdmem_in_process("--vault", str(fresh), "add", "-t", "Gamma", "-b", "gamma words", check=False)
    assert "Traceback" not in proc.stderr
    assert "gamma" in mdmem_in_process("--vault", str(fresh), "search", "gamma").stdout.lower()


def test_inline_or_background_follows_what_the_model_costs_here(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that states a fast load (the ONNX one: ~0.3 s, ~20 ms a chunk) embeds a commit's few chunks
    inline; many chunks, or the torch model's cold load, go to the job; a model loaded here is free to start."""
    from mdmem import Vault
    from mdmem.adapters.embed import HashEmbedder

    class Stated(HashEmbedder):
        name = "stated"
        load_seconds = 0.3
        chunk_seconds = 0.02
        loaded = False

    with Vault.open(fresh) as v:
        sem = v.semantic
        assert sem.inline_ok(5000)  # the hash embedder: no load, next to no time per chunk
        sem.__dict__["embedder"] = Stated()
        assert sem.inline_ok(3) and sem.inline_ok(10) and not sem.inline_ok(30)
        Stated.loaded = True
        assert sem.inline_ok(20)
        monkeypatch.delenv("MDMEM_EMBED_MODEL")
        del sem.__dict__["embedder"], sem.__dict__["settings"]
        assert sem.embedder.name == "all-MiniLM-L6-v2" and not sem.inline_ok(1)  # not prepared yet: ~1.5 s
        sem.__dict__["embedder"] = HashEmbedder()
        monkeypatch.setenv("MDMEM_EMBED_INLINE", "0")  # no time for the model in a write: all to the job
        assert not sem.inline_ok(1)


def test_a_bm25_read_that_catches_up_embeds_nothing_itself(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note written without a commit is indexed by the next read; a BM25 read leaves its vectors to
    the background job, even with a model cheap enough to embed inline after a write."""
    from mdmem.api.vault import Vault

    commit(fresh, {"notes/biscuit.md": DOG})
    embedded = count_embeddings(monkeypatch)
    (fresh / "notes" / "cat.md").write_text("# Our cat Pixel\n\nA grey tabby who sleeps on the radiator.\n")
    with Vault.open(fresh) as v:
        assert [h.path for h in v.search("grey tabby radiator")] == ["notes/cat.md"]
        assert embedded == []  # no model ran in the read (inline after a write, it would have)
    wait_for_jobs(fresh)
    assert vectors(fresh)["complete"]  # the job embedded it
