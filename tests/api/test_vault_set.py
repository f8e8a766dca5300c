"""Search across vaults: the merge on one scale, qualified ids, the set's errors, one model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mdmem.api.vault import Vault
from mdmem.api.vault_set import OneQuery, VaultSet, split_ref
from mdmem.core import rank
from mdmem.core.errors import NoteNotFound, VaultNotFound

from ..conftest import mdmem_in_process


@pytest.fixture(autouse=True)
def _hash_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_CONFIG", str(tmp_path / "config" / "vaults.toml"))


def write_vault(root: Path, notes: dict[str, str]) -> Path:
    """A vault of ``notes`` (file stem → body; the stem is the title), indexed and embedded."""
    (root / "notes").mkdir(parents=True)
    (root / "mdmem.toml").write_text("")
    for stem, body in notes.items():
        (root / "notes" / f"{stem}.md").write_text(f"---\ntitle: {stem.replace('-', ' ')}\n---\n{body}\n")
    with Vault.open(root) as v:
        v.reindex()
        v.embed()
    return root


# Vault A: many notes that share one word of the question and nothing else; vault B: the answer.
WEAK = {
    f"team-note-{i}": f"The team met on day {i} and talked about lunch, the weather and the offsite." for i in range(8)
}
ANSWER = {
    "kafka-consumer-lag": "The team raised the kafka consumer lag alert threshold to 5000 messages after "
    "the rebalance storm; consumer lag alerts now page only after ten minutes."
}
OTHER = {
    "holiday-rota": "Holiday rota for december: who is on call.",
    "coffee-machine": "The coffee machine on floor two is broken again.",
}
QUESTION = "team kafka consumer lag alert threshold"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return write_vault(tmp_path / "a", WEAK), write_vault(tmp_path / "b", {**ANSWER, **OTHER})


# -- the pure merge --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("explain", "vectors", "want"),
    [
        ({"coverage": 1.0}, True, 1.0),
        ({"coverage": 0.2}, True, 0.2),
        ({"coverage": 0.2, "cosine": 0.45}, True, 1.0 + 0.1 * 0.2),  # strong cosine: as good as every word
        ({"coverage": 0.2, "cosine": 0.35}, True, 0.5 + 0.1 * 0.2),  # halfway between floor and strong
        ({"coverage": 0.2, "cosine": 0.9}, False, 0.2),  # another model's cosine does not count
        ({"cosine": 0.1}, True, 0.0),  # below the noise floor
        ({}, True, 0.0),  # a note lent relevance by the graph: its list places it
    ],
)
def test_evidence(explain: dict[str, float], vectors: bool, want: float) -> None:
    assert rank.evidence(explain, 0.25, 0.45, vectors) == pytest.approx(want)


def test_envelope_and_merge_keep_each_list_in_order() -> None:
    assert rank.envelope([0.2, 0.9, 0.1, 0.5, 0.0]) == [0.9, 0.9, 0.5, 0.5, 0.0]
    # List 0 is weak throughout, list 1 has one strong hit then weak ones.
    merged = rank.merge_ranked([[0.3, 0.3, 0.2], [1.0, 0.1]], 10)
    assert [(li, pos) for li, pos, _ in merged] == [(1, 0), (0, 0), (0, 1), (0, 2), (1, 1)]
    # A list's hit that its pipeline put first (no evidence of its own) keeps its place: it gets the
    # evidence of the best hit below it.
    merged = rank.merge_ranked([[0.0, 0.8], [0.5]], 2)
    assert [(li, pos) for li, pos, _ in merged] == [(0, 0), (0, 1)]
    assert split_ref("work:notes/a.md", ["work"]) == ("work", "notes/a.md")
    assert split_ref("Decision: use X", ["Decision"]) is None  # a title, not a vault's note
    assert split_ref("other:x", ["work"]) is None


# -- across vaults -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["search", "query", "recall"])
def test_the_answer_in_one_vault_ranks_above_the_other_vaults_weak_hits(
    pair: tuple[Path, Path], tmp_path: Path, method: str
) -> None:
    a, b = pair
    with VaultSet.open([str(a), str(b)]) as group:
        hits = getattr(group, method)(QUESTION, 5)
        va, vb = (m.vault for m in group.members)
        own_a, own_b = getattr(va, method)(QUESTION, 5), getattr(vb, method)(QUESTION, 5)
    assert hits[0].vault == "b" and hits[0].path == "notes/kafka-consumer-lag.md"
    assert hits[0].id.startswith("b:") and all(h.id == f"{h.vault}:" + h.id.split(":", 1)[1] for h in hits)
    assert any(h.vault == "a" for h in hits)  # the weak hits are there, below
    if method != "search":
        # Why a scale: by each vault's own scores (normalised to its top hit) vault A's best weak note
        # ties with the answer, and A's rank 2 is close behind.
        assert own_a[0].score >= own_b[0].score * 0.99 and own_a[1].score > 0.9 * own_b[0].score
    # The same notes in one vault: the same answer first.
    both = write_vault(tmp_path / "one", {**WEAK, **ANSWER, **OTHER})
    with Vault.open(both) as v:
        assert getattr(v, method)(QUESTION, 5)[0].path == hits[0].path


def test_one_vault_in_the_set_answers_as_that_vault(pair: tuple[Path, Path]) -> None:
    a, _ = pair
    with VaultSet.open([str(a)]) as group, Vault.open(a) as v:
        assert [h.path for h in group.query("team lunch offsite", 10)] == [
            h.path for h in v.query("team lunch offsite", 10)
        ]


def test_one_model_one_query_embedding(pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.adapters.embed import HashEmbedder

    calls: list[list[str]] = []
    real = HashEmbedder.embed

    def counting(self: HashEmbedder, texts: list[str], query: bool = False) -> object:
        if query:
            calls.append(list(texts))
        return real(self, texts, query=query)

    monkeypatch.setattr(HashEmbedder, "embed", counting)
    with VaultSet.open([str(p) for p in pair]) as group:
        group.query(QUESTION, 5)
        embedders = {id(m.vault.semantic.embedder) for m in group.members}
        assert len(embedders) == 1 and isinstance(group.members[0].vault.semantic.embedder, OneQuery)
        assert group.comparable is True
    assert calls == [[QUESTION]]


def test_context_across_vaults(pair: tuple[Path, Path]) -> None:
    a, b = pair
    mdmem_in_process("--vault", str(a), "pin", "team-note-3")
    with VaultSet.open([str(a), str(b)]) as group:
        ctx = group.context(QUESTION, budget=300)
    assert ctx.items[0].why == "pinned" and ctx.items[0].id == "a:notes/team-note-3"
    relevant = [i for i in ctx.items if i.why == "relevant"]
    assert relevant[0].vault == "b" and relevant[0].path == "notes/kafka-consumer-lag.md"
    assert "(id: b:notes/kafka-consumer-lag)" in ctx.text and ctx.tokens <= 300
    assert ctx.vaults == ["a", "b"] and all(i.explain is None for i in ctx.items)


# -- the CLI ------------------------------------------------------------------------------------------------


def test_cli_vaults_json_get_and_errors(pair: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = pair
    mdmem_in_process("vaults", "add", "work", str(a))
    mdmem_in_process("vaults", "add", "team", str(b))
    mdmem_in_process("vaults", "add", "gone", str(tmp_path / "gone"))
    (tmp_path / "plain").mkdir()
    mdmem_in_process("vaults", "add", "plain", str(tmp_path / "plain"))

    out = json.loads(mdmem_in_process("query", "--vaults", "work,team", QUESTION, "--json").stdout)
    top = out["results"][0]
    assert top["vault"] == "team" and top["id"].startswith("team:") and out["info"]["merge"].startswith("evidence")
    text = mdmem_in_process("search", "--vaults", "work,team", "kafka", "lag").stdout
    assert "team:notes/kafka-consumer-lag.md" in text and "id: team:" in text
    vec = json.loads(mdmem_in_process("vsearch", "--vaults", "work,team", QUESTION, "--json").stdout)
    assert vec["results"][0]["id"] == "team:notes/kafka-consumer-lag" and [
        v["vault"] for v in vec["info"]["vaults"]
    ] == ["work", "team"]
    assert all(h["id"].startswith(h["vault"] + ":") for h in vec["results"])

    # The qualified id opens the right vault, from anywhere (here: inside the other vault).
    got = mdmem_in_process("get", top["id"], "--json", cwd=a)
    assert json.loads(got.stdout)["path"] == "notes/kafka-consumer-lag.md"

    r = mdmem_in_process("recall", "--vaults", "work,nosuch", "kafka", check=False)
    assert r.returncode == 1 and "no registered vault named 'nosuch'" in r.stderr and "mdmem vaults add" in r.stderr
    r = mdmem_in_process("search", "--all-vaults", "kafka", "--json")
    info = json.loads(r.stdout)["info"]
    assert {s["vault"] for s in info["skipped"]} == {"gone", "plain"}
    assert json.loads(r.stdout)["results"][0]["vault"] == "team"
    r = mdmem_in_process("search", "--all-vaults", "kafka")
    assert "vault 'gone' left out: no folder at" in r.stderr and "mdmem init" in r.stderr
    assert "team:notes/kafka-consumer-lag.md" in r.stdout
    r = mdmem_in_process("search", "--vaults", "work", "--all-vaults", "kafka", check=False)
    assert r.returncode == 2 and "not both" in r.stderr
    r = mdmem_in_process("context", "--vaults", "work,team", QUESTION, "--json")
    assert json.loads(r.stdout)["vaults"] == ["work", "team"]
    each = json.loads(mdmem_in_process("status", "--all-vaults", "--json").stdout)  # each vault's status
    assert list(each["vaults"]) == ["work", "team"] and {s["vault"] for s in each["skipped"]} == {"gone", "plain"}
    assert each["vaults"]["team"]["notes"] == len(list(b.glob("notes/*.md")))
    text = mdmem_in_process("status", "--vaults", "work,team").stdout
    assert "== work ==" in text and "== team ==" in text


def test_a_qualified_reference_is_never_confused_with_a_note(pair: tuple[Path, Path]) -> None:
    a, b = pair
    mdmem_in_process("vaults", "add", "team", str(b))
    (a / "notes" / "odd.md").write_text("---\ntitle: team:holiday-rota\n---\nA title that looks qualified.\n")
    r = mdmem_in_process("--vault", str(a), "get", "team:holiday-rota", check=False)
    assert r.returncode == 1 and "notes/odd.md" in r.stderr and "in vault 'team'" in r.stderr
    r = mdmem_in_process("--vault", str(a), "get", "team:coffee-machine")  # only vault team has it
    assert "coffee machine on floor two" in r.stdout
    with VaultSet.open([str(a), str(b)]) as group:
        with pytest.raises(NoteNotFound, match="No note matches 'nowhere'"):
            group.get("nowhere")
        assert group.get("team-note-2")[0].name == "a"  # a plain reference only one vault has
        assert group.get("team:coffee-machine")[1] == "notes/coffee-machine.md"
        with pytest.raises(VaultNotFound):
            group.member("c")


# -- the prompt hook: the project's vault and the personal one -----------------------------------------------


def hook_context(project: Path, prompt: str, cwd: Path | None = None) -> str:
    from mdmem.edges.agent_hooks import run_hook

    printed: list[str] = []
    payload = {"session_id": "s-1", "cwd": str(cwd or project), "prompt": prompt}
    assert run_hook("prompt", str(project), json.dumps(payload), out=printed.append, time_budget_ms=20_000) == 0
    return json.loads(printed[0])["hookSpecificOutput"]["additionalContext"] if printed else ""


def test_prompt_hook_adds_the_personal_vault(pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project, me = pair
    (me / "notes" / "other-project.md").write_text(
        "---\ntitle: kafka lag in acme\nscope: project:acme\n---\nThe kafka consumer lag alert threshold of acme.\n"
    )
    mdmem_in_process("--vault", str(me), "reindex")
    before = hook_context(project, QUESTION)
    assert "kafka-consumer-lag" not in before and "(id: notes/team-note-" in before  # the project alone, as before

    mdmem_in_process("vaults", "add", "me", str(me))
    mdmem_in_process("vaults", "personal", "me")
    assert json.loads(mdmem_in_process("vaults", "--json").stdout)["vaults"][0]["personal"] is True
    both = hook_context(project, QUESTION)
    lines = both.splitlines()
    assert lines[1].endswith("(id: me:notes/kafka-consumer-lag)")  # the personal vault's answer first
    assert "(id: a:notes/team-note-" in both  # the project's notes too, qualified
    assert "kafka lag in acme" not in both  # the project's scope holds in the personal vault too

    # In the personal vault itself, it is one vault.
    assert "(id: notes/kafka-consumer-lag)" in hook_context(me, QUESTION)

    # Anything wrong with the personal vault fails open: the project's memory stands.
    def broken(*args: object, **kw: object) -> None:
        raise RuntimeError("boom")

    with monkeypatch.context() as m:
        m.setattr("mdmem.api.vault_set.merge_contexts", broken)
        assert "(id: notes/team-note-" in hook_context(project, QUESTION)
    shutil.rmtree(me)  # gone: the project's vault alone, no error
    assert "(id: notes/team-note-" in hook_context(project, QUESTION)
    mdmem_in_process("vaults", "personal", "--unset")
    assert "personal" not in json.loads(mdmem_in_process("vaults", "--json").stdout)["vaults"][0]
    # Unsetting says what it did, and a second unset says there was nothing to do (and writes nothing).
    mdmem_in_process("vaults", "personal", "me")
    assert "No personal vault now ('me' stays registered)" in mdmem_in_process("vaults", "personal", "--unset").stdout
    assert "nothing changed" in mdmem_in_process("vaults", "personal", "--unset").stdout
    assert json.loads(mdmem_in_process("vaults", "personal", "--unset", "--json").stdout) == {
        "action": "unset",
        "vault": None,
    }


def test_all_vaults_takes_the_registered_folders_never_a_folder_named_alike(
    pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--all-vaults means the registered vaults: a folder in the current directory that happens to bear
    a vault's name must not stand in for it (--vaults NAME keeps the folder-first rule of --vault)."""
    from mdmem.api.vault_set import select

    a, b = pair
    mdmem_in_process("vaults", "add", "work", str(a))
    mdmem_in_process("vaults", "add", "team", str(b))
    (tmp_path / "team").mkdir()  # a plain folder named like the vault, where the command runs
    monkeypatch.chdir(tmp_path)
    chosen, skipped = select(all_vaults=True)
    assert [(n, p.resolve()) for n, p in chosen] == [("work", a.resolve()), ("team", b.resolve())] and skipped == []
