"""Vectors that travel with the vault: one clone embeds and syncs, another takes the vectors from the
pack git carried (``refs/mdmem/vectors``) instead of running the model; a doctored pack or one of another
model is never used. Real git (a bare remote in tmp_path), the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdmem.adapters import gitpack, vector_code
from mdmem.api.vault import Vault
from mdmem.index import vector_pack

from ..conftest import clone, git, mdmem_in_process

TOPICS = [
    ("Frontend framework", "We chose Hotwire over React for the frontend to keep the team small"),
    ("Q3 budget", "The Q3 budget was approved with a ten percent cut to travel"),
    ("Pull requests", "Prefer small pull requests that one person can review in ten minutes"),
    ("Payments webhook", "The payments webhook retries three times, then marks the invoice failed"),
    ("Database migrations", "Migrations run before deploys and must be reversible"),
    ("On-call rota", "The on-call rota rotates weekly on Mondays at noon"),
    ("Office plants", "The ferns by the window need water twice a week"),
    ("Release notes", "Release notes are written by whoever merges the last pull request"),
]
PARTS = ["Context", "Decision", "Consequences"]
QUESTIONS = ["which frontend framework did we choose", "budget approval", "small pull requests"]


def run(vault: Path, *args: str, check: bool = True) -> dict:
    return json.loads(mdmem_in_process("--vault", str(vault), *args, "--json", check=check).stdout)


def answers(vault: Path, mode: str = "vsearch") -> list[list[tuple[str, float]]]:
    return [
        [(h["path"], round(h["score"], 9)) for h in run(vault, mode, q, "--limit", "5")["results"]] for q in QUESTIONS
    ]


def cached(vault: Path) -> dict[str, bytes]:
    v = Vault.open(vault)
    try:
        sem = v.store.semantic
        hashes = [h for _, h in v.store.catalog.pending_hashes(every=True)]
        got = sem.cache.get_many(sem.embedder.fingerprint, hashes, sem.embedder.dim)
        return {h: x.tobytes() for h, x in got.items()}
    finally:
        v.close()


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and a clone ``a`` that embedded its notes and synced (its pack pushed)."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(bare), str(a))
    for i, (topic, detail) in enumerate(TOPICS):
        sections = "".join(
            f"\n## {part}\n\n" + " ".join(f"{detail} ({part.lower()}, point {k})." for k in range(8)) + "\n"
            for part in PARTS
        )
        (a / "notes").mkdir(exist_ok=True)
        (a / "notes" / f"note-{i:02}.md").write_text(f"# {topic}\n\n{detail}\n{sections}")
    mdmem_in_process("init", str(a))
    git(a, "push", "-q", "-u", "origin", "main")
    assert run(a, "embed")["embedded"] > vector_pack.SAMPLE
    report = run(a, "sync")
    assert report["vectors"] == "vector pack pushed to origin"
    return bare, a


def test_a_clone_takes_the_vectors_from_the_pack_and_answers_the_same(
    shared: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, a = shared
    assert gitpack.rev(bare, gitpack.LOCAL_REF) is not None  # the remote holds the pack, beside the notes
    assert "refs/mdmem/vectors" not in git(a, "log", "--all", "--format=%D", "main")  # not in the notes' history
    b = clone(bare, tmp_path / "b")
    assert "+refs/mdmem/*:refs/mdmem/remotes/origin/*" in git(b, "config", "--get-all", "remote.origin.fetch")
    report = run(b, "embed")
    assert report["embedded"] == 0 and report["from_pack"] == report["total"]  # (a sample of them checked)
    assert report["done"] == report["total"]
    assert cached(b) == cached(a)  # the very vectors, bit for bit
    assert answers(b) == answers(a)
    assert answers(b, "query") == answers(a, "query")  # BM25 too: the same notes, the same scores
    status = run(b, "status")["vectors"]
    assert status["from_pack"] == report["total"] and status["unchecked"] == report["total"] - vector_pack.SAMPLE
    # The background check embeds the rest here and finds them all as the pack said.
    v = Vault.open(b)
    assert v.store.semantic.check_pack() is False
    v.close()
    assert run(b, "status")["vectors"]["unchecked"] == 0
    assert not [p for p in run(b, "doctor", check=False)["problems"] if p["field"] == "vector pack"]


def test_an_update_rewrites_only_touched_shards_and_history_does_not_grow(shared: tuple[Path, Path]) -> None:
    bare, a = shared
    first = gitpack.tree(a, f"{gitpack.LOCAL_REF}^{{tree}}")
    (model,) = first
    before = gitpack.tree(a, first[model].sha)
    note = next((a / "notes").rglob("*.md"))
    note.write_text(note.read_text() + "\n\nA new paragraph about otters and their rafts.\n")
    git(a, "commit", "-qam", "otters")
    run(a, "embed")
    assert run(a, "sync")["vectors"] == "vector pack pushed to origin"
    after = gitpack.tree(a, gitpack.tree(a, f"{gitpack.LOCAL_REF}^{{tree}}")[model].sha)
    changed = {n for n in after if before.get(n) != after[n]}
    assert 1 <= len(changed) <= 3 < len(after)  # the note's new chunks, not the whole pack
    assert git(bare, "rev-list", "--count", gitpack.LOCAL_REF).strip() == "1"  # one commit, no parent


def test_an_altered_pack_is_refused_and_changes_no_ranking(
    shared: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, a = shared
    good = answers(a)
    # Someone with push access makes one note's chunks carry a question's vector.
    v = Vault.open(a)
    sem = v.store.semantic
    fp, dim = sem.embedder.fingerprint, sem.embedder.dim
    target = set(v.store.catalog.chunk_hashes("notes/note-06.md"))  # the office plants
    (qvec,) = vector_code.encode(sem.embedder.embed([QUESTIONS[0]], query=True))  # a well-formed vector
    all_hashes = [h for _, h in v.store.catalog.pending_hashes(every=True)]
    v.close()
    assert target
    pack = vector_pack.read(a, gitpack.LOCAL_REF, fp, dim, all_hashes)
    doctored = {h: (qvec if h in target else raw) for h, raw in pack.items()}
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Mallory")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "mallory@example.com")
    commit, _ = vector_pack.write(a, fp, dim, doctored)
    assert commit is not None
    git(a, "push", "-q", "--force", "origin", f"{gitpack.LOCAL_REF}:{gitpack.LOCAL_REF}")

    b = clone(bare, tmp_path / "b")
    run(b, "embed")
    v = Vault.open(b)
    v.store.semantic.check_pack()  # the background check, if the sample did not catch it first
    v.close()
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    problems = [p for p in run(b, "doctor", check=False)["problems"] if p["field"] == "vector pack"]
    assert len(problems) == 1 and "Mallory <mallory@example.com>" in problems[0]["message"]
    run(b, "embed")  # the job re-embeds what it dropped
    assert cached(b) == cached(a)
    assert answers(b) == good


def test_a_pack_of_another_model_is_never_used(shared: tuple[Path, Path], tmp_path: Path) -> None:
    bare, a = shared
    v = Vault.open(a)
    sem = v.store.semantic
    fp, dim = sem.embedder.fingerprint, sem.embedder.dim
    hashes = [h for _, h in v.store.catalog.pending_hashes(every=True)]
    v.close()
    raw = vector_pack.read(a, gitpack.LOCAL_REF, fp, dim, hashes)
    # Another model's vectors under this model's name: the header says so, and the shards are refused.
    shard = next(iter(gitpack.tree(a, gitpack.tree(a, f"{gitpack.LOCAL_REF}^{{tree}}")[fp].sha)))
    items = {h: r for h, r in raw.items() if h[:2] == shard}
    with pytest.raises(vector_pack.PackRefused, match="another model"):
        vector_pack.decode(vector_pack.encode("other-model-384", dim, items), fp, dim)
    b = clone(bare, tmp_path / "b")
    with_settings = b / "mdmem.toml"
    with_settings.write_text(with_settings.read_text() + '\n[embed]\nmodel = "hash"\n')
    report = run(b, "embed")
    assert report["from_pack"] == 0 and report["embedded"] == report["total"]


def test_check_pack_sample_trusts_a_pack_once_its_sample_agrees(shared: tuple[Path, Path], tmp_path: Path) -> None:
    bare, a = shared
    b = clone(bare, tmp_path / "b")
    settings = b / "mdmem.toml"
    settings.write_text(settings.read_text() + '\n[embed]\ncheck_pack = "sample"\n')
    report = run(b, "embed")
    assert report["embedded"] == 0 and report["from_pack"] == report["total"]
    # The sample was the whole check: nothing is left for the background job to embed.
    assert run(b, "status")["vectors"]["unchecked"] == 0
    assert cached(b) == cached(a) and answers(b) == answers(a)
    # A value it does not know is named, and the pack is not used rather than trusted.
    c = clone(bare, tmp_path / "c")
    (c / "mdmem.toml").write_text(settings.read_text().replace('"sample"', '"some"'))
    out = mdmem_in_process("--vault", str(c), "embed", "--json")
    assert 'check_pack must be "all" or "sample"' in out.stderr
    assert json.loads(out.stdout)["from_pack"] == 0


def chunk_hashes(vault: Path) -> set[str]:
    v = Vault.open(vault)
    try:
        return {h for _, h in v.store.catalog.pending_hashes(every=True)}
    finally:
        v.close()


def test_after_a_teammates_sync_the_other_clone_embeds_only_the_chunks_that_changed(
    shared: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, a = shared
    b = clone(bare, tmp_path / "b")
    assert run(b, "embed")["embedded"] == 0  # every vector from the pack
    notes = sorted((a / "notes").glob("*.md"))
    for few, sections in ((notes[:3], ["Consequences"]), (notes, PARTS)):
        before = chunk_hashes(a)
        for note in few:  # the teammate edits these sections; the other sections and notes stay as they were
            text = note.read_text()
            for part in sections:
                text = text.replace(f"({part.lower()}, point 7).", f"({part.lower()}, point 7, revised).")
            note.write_text(text)
        git(a, "commit", "-qam", "revised")
        run(a, "embed")
        assert run(a, "sync")["vectors"] == "vector pack pushed to origin"
        changed = chunk_hashes(a) - before
        assert len(few) <= len(changed) < len(before)
        taken = run(b, "status")["vectors"]["from_pack"]
        run(b, "sync")  # takes what the fetched pack holds for the new chunks
        report = run(b, "embed")
        assert report["done"] == report["total"]
        taken = run(b, "status")["vectors"]["from_pack"] - taken
        assert report["embedded"] + taken == len(changed)  # nothing else went to the model
        if len(changed) > vector_pack.SAMPLE:  # enough to be worth a sample: the pack gives them
            assert report["embedded"] == 0
        else:  # a sample would cost what embedding these few does
            assert report["embedded"] == len(changed)
        assert cached(b) == {h: x for h, x in cached(a).items() if h in chunk_hashes(b)}
