"""The index against real Whoosh and SQLite: incremental updates, repair, filters, locking."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from mdmem import Vault
from mdmem.core.errors import AmbiguousNote, LockHeld, NoteNotFound

from ..conftest import snapshot


def paths(hits) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.path for h in hits]


def test_every_note_is_indexed_even_broken_ones(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    report = v.reindex()
    assert report.full and len(report.added) == 11
    assert paths(v.search("zebra migration"))[0] == "notes/broken-yaml.md"
    assert paths(v.search("descaling")) == ["notes/empty-frontmatter.md"]
    assert paths(v.search("ERR_X_42")) == ["notes/no-frontmatter.md"]
    assert paths(v.search("deploy window")) == ["notes/merge-conflict.md"]
    bad = {p.path for p in report.problems}
    assert bad == {"notes/broken-yaml.md", "notes/list-where-string.md", "notes/merge-conflict.md"}


def test_cjk_and_aliases_are_searchable(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    assert paths(v.search("数据库")) == ["notes/cjk.md"]
    assert paths(v.search("服务器")) == ["notes/cjk.md"]
    assert paths(v.search("日本語")) == ["notes/cjk.md"]
    assert paths(v.search("DB migration"))[0] == "notes/cjk.md"


def test_words_in_no_note_return_nothing(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    assert v.search("xylophone quasar") == []
    assert v.search("the of and") == []


def test_coverage_is_the_same_cold_and_warm(vault_dir: Path) -> None:
    """The first BM25 search of a process goes through whoosh, later ones through cached arrays:
    both give each hit the same coverage (the query's IDF mass it matched), which fusion weighs."""
    v = Vault.open(vault_dir)
    v.store.repair()
    lex = v.store.lexical
    runs = [
        {
            h.path: (round(h.score, 6), round(h.coverage, 6))
            for h in lex.search("release train schedule xylophone", 20, coverage=True)
        }
        for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]
    assert 0 < max(c for _, c in runs[0].values()) < 1  # "xylophone" is in no note


def test_a_misspelled_name_finds_its_note(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    assert paths(v.search("release trian schedule"))[0] == "notes/bare-date.md"  # title: Release train schedule
    fixes = v.store.lexical.corrections("relaese trian shcedule xylophone")
    assert fixes == {"relaes": "releas", "trian": "train", "shcedul": "schedul"}  # stems; xylophone is no name
    assert v.store.lexical.corrections("release train") == {}  # words the vault has are never changed


@pytest.mark.parametrize(
    ("query", "fixes", "first"),
    [
        ("Releasetrain", {"releasetrain": "releas train"}, "notes/bare-date.md"),  # two names joined
        ("Hot wire", {"hot wire": "hotwir"}, "notes/with-id.md"),  # a name split in two
        ("Coffe machine", {"coff": "coffe"}, "notes/empty-frontmatter.md"),  # a missing letter
        ("Hotwrie decision", {"hotwri": "hotwir"}, "notes/with-id.md"),  # swapped: as typed, not as stemmed
    ],
)
def test_a_name_joined_split_or_misspelled_finds_its_note(
    vault_dir: Path, query: str, fixes: dict[str, str], first: str
) -> None:
    v = Vault.open(vault_dir)
    v.store.repair()
    assert v.store.lexical.corrections(query) == fixes
    assert paths(v.search(query))[0] == first
    hits = v.query(query, explain=True)
    assert hits[0].path == first
    assert any(s.startswith("typos:") for s in hits.info["stages"])  # --explain shows the correction


def test_unknown_names_are_names_no_note_has(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.store.repair()
    lx = v.store.lexical
    assert lx.unknown_names("who is our account manager at Datadog and GDPR") == ["Datadog", "GDPR"]
    assert lx.unknown_names("Datadog account") == []  # the first word may be capitalised by habit …
    assert lx.unknown_names("Datadog account", first_word=True) == ["Datadog"]  # … unless a large vault says not
    assert lx.unknown_names("Whose account", first_word=True) == []  # a question word is no name
    assert lx.unknown_names("Zyx account", first_word=True) == []  # nor a short word
    assert lx.unknown_names("the Release Train schedule") == []  # names the vault has
    assert lx.unknown_names("the Release Trian", lx.corrections("the Release Trian")) == []  # a typo of one


def test_title_outranks_body(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    hits = v.search("release train schedule")
    assert hits[0].path == "notes/bare-date.md"
    assert hits[0].id == "notes/bare-date" and hits[0].title == "Release train schedule"
    assert hits[0].score > 0 and ("**" in hits[0].snippet or hits[0].snippet == "")


def test_filters(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    assert paths(v.search("duplicate title", type="idea", path="notes/people")) == ["notes/people/dup-b.md"]
    assert paths(v.search("hotwire", tag="frontend")) == ["notes/with-id.md"]
    assert v.search("hotwire", tag="backend") == []
    assert paths(v.search("release", since="2025-10-01", until="2025-10-31")) == ["notes/bare-date.md"]
    assert v.search("release", until="2025-01-01") == []
    assert paths(v.search("duplicate", path="notes/projects/*.md")) == ["notes/projects/dup-a.md"]


def test_incremental_sees_new_changed_moved_and_deleted_files(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    (vault_dir / "notes" / "new.md").write_text("A fresh note about pelicans.\n")
    (vault_dir / "notes" / "bare-date.md").write_text("---\ntitle: Release train\n---\nNow monthly ostriches.\n")
    (vault_dir / "notes" / "code-fence.md").rename(vault_dir / "notes" / "projects" / "moved.md")
    (vault_dir / "notes" / "cjk.md").unlink()
    r = v.reindex()
    assert not r.full
    assert sorted(r.added) == ["notes/new.md", "notes/projects/moved.md"]
    assert r.updated == ["notes/bare-date.md"]
    assert sorted(r.deleted) == ["notes/cjk.md", "notes/code-fence.md"]
    assert paths(v.search("pelicans")) == ["notes/new.md"]
    assert paths(v.search("ostriches")) == ["notes/bare-date.md"]
    assert v.search("Tuesday") == []
    assert v.search("数据库") == []
    assert paths(v.search("inside a fence")) == ["notes/projects/moved.md"]
    again = v.reindex()
    assert again.changed == 0 and again.unchanged == 11


def test_touch_without_change_is_not_reindexed(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    p = vault_dir / "notes" / "bare-date.md"
    os.utime(p, (1, 1))
    assert v.reindex().changed == 0


def test_reindex_never_changes_a_note(vault_dir: Path) -> None:
    before = snapshot(vault_dir)
    v = Vault.open(vault_dir)
    v.reindex()
    v.reindex(full=True)
    v.search("anything at all")
    v.doctor()
    after = snapshot(vault_dir)
    assert after == before


def test_full_rebuild_gives_the_same_results(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    (vault_dir / "notes" / "extra.md").write_text("kafka lag again\n")
    v.reindex()
    queries = ["kafka", "duplicate title", "hotwire", "数据库", "ERR_X_42", "release"]
    inc = [[(h.path, h.score) for h in v.search(q)] for q in queries]
    v.reindex(full=True)
    full = [[(h.path, h.score) for h in v.search(q)] for q in queries]
    assert [[p for p, _ in r] for r in inc] == [[p for p, _ in r] for r in full]
    gens = [p.name for p in (vault_dir / ".mdmem").glob("gen-*")]
    assert len(gens) == 1


def test_deleted_index_is_rebuilt_on_demand(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    v.close()
    shutil.rmtree(vault_dir / ".mdmem")
    assert paths(Vault.open(vault_dir).search("pelicans OR descaling")) == ["notes/empty-frontmatter.md"]


# Whoosh leaks a file handle when it meets a garbage TOC; that is its bug, not a lost note.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("damage", ["manifest", "catalog", "lexical"])
def test_garbage_index_is_rebuilt(vault_dir: Path, damage: str) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    gen = next((vault_dir / ".mdmem").glob("gen-*"))
    v.close()
    if damage == "manifest":
        (vault_dir / ".mdmem" / "manifest.json").write_text("{not json")
    elif damage == "catalog":
        (gen / "catalog.sqlite").write_bytes(b"garbage" * 100)
    else:
        for f in (gen / "lexical").iterdir():
            f.write_bytes(b"\x00garbage")
    v = Vault.open(vault_dir)
    assert paths(v.search("descaling")) == ["notes/empty-frontmatter.md"]  # repaired on the way
    v.close()
    if damage != "manifest":
        for f in (next((vault_dir / ".mdmem").glob("gen-*")) / "lexical").iterdir():
            f.write_bytes(b"\x00garbage")
        r = Vault.open(vault_dir).reindex()
        assert r.full and "unreadable" in r.reason
    with warnings.catch_warnings():  # collect whoosh's leaked handle here, not in a later test
        warnings.simplefilter("ignore")
        gc.collect()


def test_crash_between_index_writes_is_repaired(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the lexical commit but before the catalogue: the next run redoes the notes."""
    from mdmem.index import catalog

    v = Vault.open(vault_dir)
    v.reindex()
    (vault_dir / "notes" / "bare-date.md").write_text("---\ntitle: Release train\n---\nplatypus\n")
    (vault_dir / "notes" / "cjk.md").unlink()

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(catalog.Catalog, "apply", boom)
    with pytest.raises(KeyboardInterrupt):
        v.reindex()
    monkeypatch.undo()
    v.close()
    v = Vault.open(vault_dir)
    r = v.reindex()
    assert r.updated == ["notes/bare-date.md"] and r.deleted == ["notes/cjk.md"]
    assert paths(v.search("platypus")) == ["notes/bare-date.md"]
    assert v.search("数据库") == []


def test_killed_full_rebuild_leaves_the_old_index_readable(vault_dir: Path) -> None:
    """kill -9 in the middle of a --full rebuild: readers keep the previous generation."""
    v = Vault.open(vault_dir)
    v.reindex()
    v.close()
    script = textwrap.dedent(f"""
        import os, signal
        from mdmem import Vault
        from mdmem.index import lexical
        orig = lexical.LexicalIndex.write
        def write(self, *a, **k):
            orig(self, *a, **k)
            os.kill(os.getpid(), signal.SIGKILL)
        lexical.LexicalIndex.write = write
        Vault.open({str(vault_dir)!r}).reindex(full=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert proc.returncode == -9
    assert len(list((vault_dir / ".mdmem").glob("gen-*"))) == 2  # old + half-built
    v = Vault.open(vault_dir)
    assert paths(v.search("descaling")) == ["notes/empty-frontmatter.md"]
    v.reindex(full=True)
    assert len(list((vault_dir / ".mdmem").glob("gen-*"))) == 1


def test_second_writer_gets_a_clear_message(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    with v.writer_lock():
        other = Vault.open(vault_dir)
        with pytest.raises(LockHeld, match=r"Another mdmem process \(pid \d+\)"):
            other.reindex(timeout=0.2)
        # Readers are not blocked by a writer.
        assert paths(other.search("descaling")) == ["notes/empty-frontmatter.md"]
    assert v.reindex(timeout=0).changed == 0


def test_resolve_by_id_path_stem_title_alias(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    for ref in (
        "m-fixture01",
        "notes/with-id.md",
        "notes/with-id",
        "with-id.md",
        "Hotwire decision",
        "hotwire DECISION",
        "Frontend choice",
        "[[Hotwire decision]]",
    ):
        assert v.resolve(ref) == "notes/with-id.md", ref
    with pytest.raises(AmbiguousNote) as exc:
        v.resolve("Duplicate title")
    assert exc.value.candidates == ["notes/people/dup-b.md", "notes/projects/dup-a.md"]
    with pytest.raises(NoteNotFound, match="Did you mean"):
        v.resolve("Hotwire decisoin")


def test_get_reads_the_file_fresh(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    n = v.get("m-fixture01")
    assert n.meta["unknown_key"] == {"keep": "me"} and n.salience == 0.9


def test_add_writes_a_new_note_with_an_id(vault_dir: Path) -> None:
    v = Vault.open(vault_dir)
    r = v.add(
        "Use Postgres 16",
        "We upgrade to **Postgres 16** in May.",
        type="decision",
        tags=["db"],
        salience=0.7,
        commit=False,
    )
    assert r.path == "notes/use-postgres-16.md" and r.id.startswith("m-")
    n = v.get(r.id)
    assert (n.title, n.type, n.tags, n.salience, n.id) == ("Use Postgres 16", "decision", ["db"], 0.7, r.id)
    assert n.created and n.created == n.updated
    assert paths(v.search("postgres")) == ["notes/use-postgres-16.md"]
    r2 = v.add("Use Postgres 16", "again", commit=False)
    assert r2.path == "notes/use-postgres-16-2.md" and r2.id != r.id


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/etc/passwd", "notes/../../x"])
def test_add_refuses_paths_outside_the_vault(vault_dir: Path, bad: str) -> None:
    from mdmem.core.errors import MdmemError

    with pytest.raises(MdmemError, match="outside the vault"):
        Vault.open(vault_dir).add("x", path=bad, commit=False)


def test_symlinks_out_of_the_vault_are_not_followed(vault_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret armadillo\n")
    (vault_dir / "notes" / "link-dir").symlink_to(outside)
    (vault_dir / "notes" / "link.md").symlink_to(outside / "secret.md")
    v = Vault.open(vault_dir)
    assert v.search("armadillo") == []


def test_hidden_folders_and_excludes_are_skipped(vault_dir: Path) -> None:
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian" / "x.md").write_text("walrus\n")
    (vault_dir / "templates").mkdir()
    (vault_dir / "templates" / "t.md").write_text("walrus template\n")
    (vault_dir / "mdmem.toml").write_text('[vault]\nexclude = ["templates/*"]\n')
    v = Vault.open(vault_dir)
    assert v.search("walrus") == []


def test_non_utf8_and_binary_files_are_indexed_with_a_problem(vault_dir: Path) -> None:
    (vault_dir / "latin1.md").write_bytes("caf\xe9 m\xfcnchen gazelle\n".encode("latin-1"))
    (vault_dir / "binary.md").write_bytes(b"\x00\x01\x02 PNG")
    v = Vault.open(vault_dir)
    assert paths(v.search("gazelle")) == ["latin1.md"]
    fields = {(p.path, p.field) for p in v.doctor()}
    assert {("latin1.md", "encoding"), ("binary.md", "file")} <= fields


def test_catalog_row_cache_sees_another_connections_writes(tmp_path: Path) -> None:
    """Rows are cached in a warm process, but a commit by another process is never served stale."""
    from mdmem.core.note import note_dates, parse_note
    from mdmem.index.catalog import Catalog, FileState

    db = tmp_path / "catalog.sqlite"
    reader, writer = Catalog(db), Catalog(db)
    state = FileState(hash="h1", mtime_ns=1, size=10)
    note = parse_note("---\ntitle: First\n---\nbody\n", "a.md")
    writer.apply([(note, state, note_dates(note, 0.0))], [])
    first = reader.rows(["a.md"])
    assert first["a.md"]["title"] == "First"
    first["a.md"]["title"] = "mutated by a caller"
    assert reader.rows(iter(["a.md"]))["a.md"]["title"] == "First"  # callers get copies; generators work
    note = parse_note("---\ntitle: Second\n---\nbody\n", "a.md")
    writer.apply([(note, state, note_dates(note, 0.0))], [])
    assert reader.rows(["a.md"])["a.md"]["title"] == "Second"
    reader.apply([], ["a.md"])  # its own write too
    assert reader.rows(["a.md"]) == {}


def test_warm_array_scorer_ranks_exactly_like_whoosh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm path (numpy over cached postings) returns whoosh's hits, scores and order, with
    filters and hidden notes, including terms in titles, tags and entities."""
    import random

    monkeypatch.setenv("MDMEM_NOW", "2026-11-29")
    rng = random.Random(7)
    words = (
        "deploy kafka consumer lag billing invoice retry webhook postgres redis cache budget "
        "hiring alice bob tokyo incident rollback canary metrics latency"
    ).split()
    root = tmp_path / "v"
    (root / "notes").mkdir(parents=True)
    for i in range(120):
        title = " ".join(rng.sample(words, 2))
        body = " ".join(rng.choice(words) for _ in range(rng.randint(3, 60)))
        extra = rng.choice(
            [
                "",
                "status: forgotten\n",
                "snoozed_until: 2027-01-01\n",
                "type: decision\n",
                "tags: [ops]\n",
                "entities: [Alice]\n",
            ]
        )
        (root / "notes" / f"n{i:03d}.md").write_text(f"---\ntitle: {title}\n{extra}---\n{body}\n")
    v = Vault.open(root)
    v.reindex()
    lx = v.store.lexical
    queries = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(25)] + ["alice", "ops deploy"]
    for q in queries:
        for filters in (v.store.filters(), v.store.filters(type="decision"), v.store.filters(tag="ops"), None):
            lx._searches = 0  # the next call is a cold one: whoosh's own matchers
            cold = lx.search(q, 15, filters)
            warm = lx.search(q, 15, filters)  # second call on the same searcher: the array path
            assert lx._scorer is not None
            assert [h.path for h in warm] == [h.path for h in cold], q
            assert [h.score for h in warm] == pytest.approx([h.score for h in cold], rel=1e-9), q
            assert [(h.id, h.title, h.type, h.tags) for h in warm] == [(h.id, h.title, h.type, h.tags) for h in cold]


def test_bm25_counts_only_the_notes_that_are_there(tmp_path: Path) -> None:
    """Whoosh keeps a re-indexed note's old version as a deleted document until its segment merges,
    and counted it in IDF: an index that had indexed its notes again (as a first commit does, dating
    them by git) scored the same files apart from a fresh one — a clone answered TIL's questions in
    another order than the first machine (17 of 50 top 10s). Both paths, whoosh's matchers and the
    array scorer, and the coverage, score as a fresh index does. (The average field length still
    counts every version: exact here, where each note has as many; see index/lexical_live.py.)"""
    import random

    rng = random.Random(3)
    words = "kafka lag retry webhook postgres cache budget tokyo incident rollback canary latency".split()
    root, fresh = tmp_path / "v", tmp_path / "fresh"
    (root / "notes").mkdir(parents=True)
    texts = {}
    for i in range(40):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(3, 40)))
        texts[i] = f"---\ntitle: {' '.join(rng.sample(words, 2))}\n---\n{body}\n"
        (root / "notes" / f"n{i:02d}.md").write_text(texts[i])
    v = Vault.open(root)
    v.reindex()
    for text in (lambda t: t.replace("---\ntitle", "---\nsalience: 0.6\ntitle"), lambda t: t):
        for i in range(40):  # every note indexed again, its text unchanged: the old versions stay, deleted
            (root / "notes" / f"n{i:02d}.md").write_text(text(texts[i]))
        v.reindex()
    assert v.store.lexical._current_searcher().reader().has_deletions()
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".mdmem"))
    f = Vault.open(fresh)
    f.reindex()
    assert not f.store.lexical._current_searcher().reader().has_deletions()
    for q in ["kafka", "retry latency", "tokyo canary rollback", "budget kafka lag"]:
        got = {}
        for name, vault in (("edited", v), ("fresh", f)):
            lx = vault.store.lexical
            lx._searches = 0  # a cold call: whoosh's own matchers; then the array path
            got[name] = [
                [(h.path, round(h.score, 9), round(h.coverage, 9)) for h in lx.search(q, 20, coverage=True)]
                for _ in range(2)
            ]
        assert got["edited"] == got["fresh"], q


def test_a_warm_index_stays_on_the_array_scorer_when_a_writer_commits(tmp_path: Path) -> None:
    """A process that has searched before (serve, MCP) answers its first search after another
    process's write from the array scorer on the new segments, with whoosh's ranking."""
    root = tmp_path / "v"
    (root / "notes").mkdir(parents=True)
    for i in range(30):
        (root / "notes" / f"n{i:02d}.md").write_text(f"---\ntitle: Note {i}\n---\nkafka lag {'retry ' * (i % 4)}\n")
    warm, writer = Vault.open(root), Vault.open(root)
    warm.reindex()
    lx = warm.store.lexical
    lx.search("kafka retry", 10), lx.search("kafka retry", 10)
    (root / "notes" / "new.md").write_text("---\ntitle: New\n---\nkafka retry retry retry\n")
    writer.reindex()
    got = lx.search("kafka retry", 10)
    assert lx._scorer is not None and lx._scorer.searcher is lx._current_searcher()  # the new generation's
    cold = Vault.open(root)
    want = cold.store.lexical.search("kafka retry", 10)  # a fresh process's first search: whoosh's matchers
    assert [h.path for h in got] == [h.path for h in want] and "notes/new.md" in [h.path for h in got]
    assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-9)
    for v in (warm, writer, cold):
        v.close()


def test_a_new_mtime_redates_an_undated_note_as_a_full_rebuild_would(tmp_path: Path) -> None:
    """An undated note is dated by its file's mtime: touching it (same text) must move its date in
    the incremental index too, or the index differs from --full (seen when a reader indexed a note
    mid-write, tests/test_concurrency.py)."""
    from mdmem import Vault

    (tmp_path / "undated.md").write_text("# Undated\n\nno date of its own\n")
    (tmp_path / "dated.md").write_text("---\ncreated: 2024-05-01\n---\n# Dated\n\nits own date\n")
    v = Vault.open(tmp_path)
    v.reindex()
    for name in ("undated.md", "dated.md"):
        os.utime(tmp_path / name, (1_700_000_000, 1_700_000_000))
    report = v.reindex()
    assert report.updated == ["undated.md"]  # the dated note's mtime is only recorded
    rows = v.store.catalog.rows(["undated.md", "dated.md"])
    assert rows["undated.md"]["date"] == 1_700_000_000
    assert [h.path for h in v.search("date", 5, since="2023-11-14", until="2023-11-15")] == ["undated.md"]
    incremental = v.store.catalog.rows(["undated.md", "dated.md"])
    v.reindex(full=True)
    assert v.store.catalog.rows(["undated.md", "dated.md"]) == incremental


def test_text_fields_index_the_postings_the_analyzer_would() -> None:
    """TermsText skips whoosh's token objects; its postings must be exactly the analyzer's."""
    from whoosh.fields import TEXT

    from mdmem.index.lexical import make_schema

    schema = make_schema()
    text = (
        "The Quick brown-fox jumps over the lazy dog; user_id=42 snake_case CamelCase 東京大学 Übergröße "
        "naïve café. Fox fox FOX."
    )
    for name in ("title", "aliases", "entities", "tags", "headings", "body"):
        field = schema[name]
        assert sorted(field.index(text)) == sorted(TEXT.index(field, text)), name
    assert dict((w, f) for w, f, _, _ in schema["body"].index(text))[b"fox"] == 4


def test_engines_import_lean_and_leave_nothing_behind(tmp_path: Path) -> None:
    """whoosh and usearch are imported without modules they never use here; the stand-ins are gone
    afterwards, the real modules still import, and a call through a stand-in reaches the real thing."""
    code = """
import sys
from pathlib import Path
from mdmem.index import lexical
from mdmem.index.vectors import VectorIndex
VectorIndex.open(Path(sys.argv[1]) / "v.usearch", 8, writable=True)
skipped = [m for m in ("urllib.request", "tqdm", "whoosh.lang.morph_en", "cached_property") if m in sys.modules]
import usearch.index, whoosh.compat
through = list(usearch.index.tqdm(range(3), disable=True))  # the stand-in, called: the real tqdm runs
import urllib.request, tqdm
print(skipped, through, callable(urllib.request.urlopen), tqdm.tqdm.__module__)
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "[] [0, 1, 2] True tqdm.std", out.stderr
