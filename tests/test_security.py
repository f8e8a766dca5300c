"""Security: no YAML or pickle runs code, a cloned vault's settings and index cannot run
code or write outside it, and secrets are redacted on every agent write path."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mdmem.core.note import parse_note

from .conftest import mdmem_in_process, snapshot

MDMEM_SRC = Path(__file__).resolve().parent.parent / "mdmem"
SECRET = "ghp_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"


def cli(
    vault: Path, *args: str, env: Mapping[str, str | None] | None = None, input: str | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The CLI in this process (what is tested is what it reads and writes, not how it starts)."""
    return mdmem_in_process("--vault", str(vault), *args, env=env, input=input, timeout=timeout, check=False)


def cli_process(
    vault: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The CLI as a real process: one per user, where two users' keys must not meet in one process."""
    return subprocess.run(
        [sys.executable, "-m", "mdmem", "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def plain_vault(tmp_path: Path, toml: str = "", name: str = "vault") -> Path:
    root = tmp_path / name
    (root / "notes").mkdir(parents=True)
    (root / "mdmem.toml").write_text(toml)
    (root / "notes" / "kafka.md").write_text("---\nid: kafka\n---\n# Kafka lag\n\nconsumer lag on the orders topic\n")
    (root / "notes" / "coffee.md").write_text("# Coffee\n\nthe coffee machine is broken\n")
    return root


# -- YAML and source ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system",
        "!!python/object/new:os.system",
        "!!python/name:os.system",
        "!!python/module:os",
    ],
)
def test_python_yaml_tags_run_nothing(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "PWNED_yaml"
    text = f'---\ntitle: {tag} ["touch {marker}"]\nx: {tag} ["touch {marker}"]\n---\n# Body\n\nstill here\n'
    note = parse_note(text, "evil.md")
    assert [p for p in note.problems if p.field == "frontmatter" and "invalid YAML" in p.message]
    assert "still here" in note.text
    root = plain_vault(tmp_path)
    (root / "notes" / "evil.md").write_text(text)
    r = cli(root, "reindex", env={"MDMEM_EMBED_MODEL": "hash"})
    assert r.returncode == 0 and "problem" in r.stderr
    assert json.loads(cli(root, "search", "still", "here", "--json").stdout)["count"] == 1
    assert not marker.exists()


UNSAFE = [
    r"yaml\.load\((?![^)]*Loader=yaml\.(C?Safe)Loader)",
    r"unsafe_load",
    r"full_load",
    r"yaml\.Loader\b",
    r"yaml\.UnsafeLoader",
    r"(?<![\w.])eval\(",
    r"(?<![\w.])exec\(",
    r"pickle\.loads?\(",
    r"shell=True",
    r"os\.system",
    r"os\.popen",
    r"torch\.load",
    r"trust_remote_code=True",
    r"allow_pickle=True",
    r"marshal\.loads?",
    r"__import__\(",
]


def test_source_has_no_code_running_loaders() -> None:
    found = []
    for f in sorted(MDMEM_SRC.rglob("*.py")):
        for n, line in enumerate(f.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            found += [f"{f.name}:{n}: {line.strip()}" for pat in UNSAFE if re.search(pat, code)]
    assert found == []


# -- a cloned vault: its index ----------------------------------------------------------------------------


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_a_cloned_index_is_never_opened(tmp_path: Path) -> None:
    """A .mdmem/ that arrives with the vault: Whoosh's table of contents is a pickle that runs a command.

    Real processes: one process remembers every key it has read (mdmem.index.state._KEYS, so tests may change
    $MDMEM_HOME), so in one process the victim would trust the attacker's seal."""
    from whoosh import index as windex
    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage

    marker = tmp_path / "PWNED_index"
    root = plain_vault(tmp_path)
    attacker = {"MDMEM_HOME": str(tmp_path / "attacker-home"), "MDMEM_EMBED_MODEL": "hash"}

    class Evil(Schema):
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    def plant() -> str:
        assert cli_process(root, "reindex", "--full", env=attacker).returncode == 0
        gen = json.loads((root / ".mdmem" / "manifest.json").read_text())["generation"]
        lex = root / ".mdmem" / gen / "lexical"
        ix = windex.open_dir(str(lex), indexname="notes")
        toc = ix._read_toc()
        ix.close()
        evil = Evil()
        evil.__dict__.update(toc.schema.__dict__)
        for f in lex.glob("*.toc"):
            f.unlink()
        windex.TOC(evil, toc.segments, toc.generation).write(FileStorage(str(lex)), "notes")
        return gen

    plant()
    # The attacker's own mdmem would run it (the seal is this user's; it cannot help there):
    cli_process(root, "search", "coffee", env=attacker)
    assert marker.exists()
    marker.unlink()
    gen = plant()

    victim = {"MDMEM_HOME": str(tmp_path / "victim-home"), "MDMEM_EMBED_MODEL": "hash"}
    for cmd in (
        ["search", "coffee"],
        ["status"],
        ["get", "kafka"],
        ["links", "kafka"],
        ["reindex"],
        ["query", "coffee", "--no-vectors"],
        ["doctor"],
    ):
        r = cli_process(root, *cmd, env=victim)
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (cmd, r.stderr)
        assert not marker.exists(), cmd
    assert "notes/coffee.md" in cli_process(root, "search", "coffee", env=victim).stdout
    assert not (root / ".mdmem" / gen).exists()  # the foreign generation was removed unopened


def test_links_in_the_state_folder_never_write_outside(tmp_path: Path) -> None:
    root = plain_vault(tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    state = root / ".mdmem"
    state.mkdir()
    (state / "lock").symlink_to(outside)
    (state / "stale").symlink_to(tmp_path / "created-stale")
    (state / ".gitignore").symlink_to(tmp_path / "created-gitignore")
    (state / "embeddings.sqlite").symlink_to(tmp_path / "created-cache.sqlite")
    env = {"MDMEM_EMBED_MODEL": "hash"}
    for cmd in (
        ["reindex"],
        ["embed"],
        ["search", "coffee"],
        ["query", "coffee"],
        ["add", "--title", "New", "--body", "b"],
    ):
        r = cli(root, *cmd, env=env)
        assert r.returncode == 0, (cmd, r.stderr)
    assert outside.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "precious.txt", "vault"] or sorted(
        p.name for p in tmp_path.iterdir()
    ) == ["precious.txt", "vault"]


def test_a_linked_state_folder_is_refused(tmp_path: Path) -> None:
    root = plain_vault(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (root / ".mdmem").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    r = cli(root, "reindex", env={"MDMEM_EMBED_MODEL": "hash"})
    assert r.returncode == 1 and "symbolic link" in r.stderr and "Traceback" not in r.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_note_link_into_a_hidden_folder_is_not_read(tmp_path: Path) -> None:
    root = plain_vault(tmp_path)
    (root / ".secret").mkdir()
    (root / ".secret" / "token.md").write_text("# Token\n\nHIDDEN-TOKEN-42\n")
    (root / "notes" / "peek.md").symlink_to(root / ".secret" / "token.md")
    env = {"MDMEM_EMBED_MODEL": "hash"}
    assert cli(root, "reindex", env=env).returncode == 0
    assert "HIDDEN-TOKEN-42" not in cli(root, "search", "HIDDEN-TOKEN-42", env=env).stdout
    r = cli(root, "get", "notes/peek.md", env=env)
    assert r.returncode == 1 and "hidden folder" in r.stderr and "HIDDEN-TOKEN-42" not in r.stdout


# -- a cloned vault: its settings ---------------------------------------------------------------------------


def hostile_models(tmp_path: Path, marker: Path) -> dict[str, Path]:
    """Model folders outside the vault: pickled weights that run a command, and custom code."""
    pickled = tmp_path / "evil-pickle"
    pickled.mkdir()
    (pickled / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bert",
                "hidden_size": 16,
                "num_hidden_layers": 1,
                "num_attention_heads": 2,
                "intermediate_size": 32,
                "vocab_size": 8,
            }
        )
    )
    (pickled / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncoffee\nkafka\nlag\n")
    with open(pickled / "pytorch_model.bin", "wb") as fh:
        pickle.dump(_Payload(marker), fh)
    remote = tmp_path / "evil-remote"
    remote.mkdir()
    (remote / "config.json").write_text(
        json.dumps(
            {
                "model_type": "evil",
                "hidden_size": 16,
                "auto_map": {
                    "AutoModel": "modeling_evil.EvilModel",
                    "AutoModelForSequenceClassification": "modeling_evil.EvilModel",
                },
                "trust_remote_code": True,
            }
        )
    )
    (remote / "modeling_evil.py").write_text(f"import os\nos.system('touch {marker}')\n")
    (remote / "model.safetensors").write_bytes(b"not really")
    (remote / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["tok_evil.T", None]}}))
    (remote / "tok_evil.py").write_text(f"import os\nos.system('touch {marker}')\n")
    return {"pickle": pickled, "remote": remote}


@pytest.mark.parametrize("kind", ["pickle", "remote"])
def test_a_cloned_vaults_settings_run_no_code_and_write_nothing_outside(tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "PWNED_model"
    models = hostile_models(tmp_path, marker)
    toml = f"""
[vault]
notes_dir = "notes"
exclude = ["../../*", "/etc/*"]
[git]
commit = true
[embed]
model = "{models[kind]}"
threads = 64
batch_size = 512  # the largest allowed (test_resource_settings_of_a_cloned_vault_are_bounded)
[rerank]
model = "{models[kind]}"
[query]
candidates = 5
"""
    root = plain_vault(tmp_path, toml)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    env: dict[str, str | None] = {"MDMEM_EMBED_MODEL": None}
    outside_before = sorted(p.name for p in tmp_path.iterdir() if p.name != "home")  # home: the user's key
    before = snapshot(root)
    results = {}
    for cmd in (
        ["reindex"],
        ["search", "coffee"],
        ["query", "coffee"],
        ["vsearch", "coffee"],
        ["recall", "coffee"],
        ["embed"],
        ["doctor"],
        ["status"],
        ["hooks", "install"],
    ):
        r = cli(root, *cmd, env=env)
        results[cmd[0]] = r
        assert "Traceback" not in r.stderr, (cmd, r.stderr)
        assert not marker.exists(), cmd
    for name in ("query", "vsearch", "embed"):
        assert results[name].returncode == 1, results[name].stdout
        msg = results[name].stderr
        assert "safetensors" in msg if kind == "pickle" else "custom model code" in msg, msg
    assert results["search"].returncode == 0 and "notes/coffee.md" in results["search"].stdout
    assert results["recall"].returncode in (0, 1)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == outside_before
    assert snapshot(root) == before
    assert not marker.exists()


@pytest.mark.parametrize(
    "toml, message",
    [
        ('[vault]\nnotes_dir = "../../tmp"\n', "notes_dir must be a folder inside the vault"),
        ("[vault]\nlock_timeout = nan\n", "lock_timeout"),
        ("[vault]\nlock_timeout = inf\n", "lock_timeout"),
        ('[git]\ncommit = "no"\n', "[git] commit must be true or false"),
    ],
)
def test_hostile_vault_settings_are_refused_with_a_message(tmp_path: Path, toml: str, message: str) -> None:
    root = plain_vault(tmp_path, toml)
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    for cmd in (["search", "coffee"], ["add", "--title", "Escape", "--body", "x"], ["reindex"]):
        r = cli(root, *cmd, env={"MDMEM_EMBED_MODEL": "hash"})
        assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, (cmd, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before
    assert not Path("/tmp/escape.md").exists()


# -- redaction on every write path --------------------------------------------------------------------------


def test_cli_add_and_correct_redact_unless_told_not_to(tmp_path: Path) -> None:
    root = plain_vault(tmp_path)
    env = {"MDMEM_EMBED_MODEL": "hash", "MDMEM_GIT_COMMIT": "0"}
    r = cli(
        root,
        "add",
        "--title",
        f"Deploy token {SECRET}",
        "--body",
        f"use password=hunter2hunter and {SECRET}",
        "--json",
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert "redacted 3 secret(s)" in r.stderr and "--no-redact" in r.stderr
    written = (root / json.loads(r.stdout)["path"]).read_text()
    assert SECRET not in written and "hunter2hunter" not in written and "[REDACTED:github-token]" in written
    r = cli(root, "correct", "kafka", "--body", f"Authorization: Bearer {SECRET}", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert SECRET not in (root / json.loads(r.stdout)["new"]["path"]).read_text() and "redacted 1" in r.stderr
    r = cli(
        root, "add", "--title", "Kept on purpose", "--body", f"fixture token {SECRET}", "--no-redact", "--json", env=env
    )
    assert r.returncode == 0 and "redacted" not in r.stderr
    assert SECRET in (root / json.loads(r.stdout)["path"]).read_text()
    r = cli(root, "add", "--title", "Plain", "--body", "nothing secret here", env=env)
    assert r.returncode == 0 and "redacted" not in r.stderr


def test_mcp_correct_redacts_the_new_body_and_title(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio

    from .edges.test_mcp import stdio_session, text

    root = plain_vault(tmp_path)
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")

    async def main() -> None:
        async with stdio_session(root, tmp_path / "err.log") as s:
            await s.initialize()
            r = await s.call_tool(
                "correct",
                {"note": "kafka", "title": f"Lag {SECRET}", "body": f"the key is sk-ant-{'a1B2' * 8} and {SECRET}"},
            )
            assert not r.is_error, text(r)
            assert r.structured_content["redacted"] == 3  # two in the body, one in the title
            new = (root / r.structured_content["new"]["path"]).read_text()
            assert SECRET not in new and "sk-ant-" not in new and "[REDACTED:api-key]" in new

    anyio.run(main)


@pytest.mark.parametrize(
    "toml, message",
    [
        ('[embed]\nmodel = "hash"\nbatch_size = 100000000\n', "[embed] batch_size must be from 1 to 512"),
        ('[embed]\nmodel = "hash"\nmax_length = 0\n', "[embed] max_length must be from 8 to 8192"),
        ('[embed]\nmodel = "hash"\nthreads = 100000\n', "[embed] threads must be from 0 to 256"),
        ("[query]\ncandidates = 100000000\n", "[query] candidates must be from 1 to 10000"),
        ("[query]\nspread_hops = 50\n", "[query] spread_hops must be from 0 to 4"),
        ("[query]\nvector_weight = nan\n", "[query] vector_weight must be a finite number"),
        ('[query]\ncandidates = "many"\n', "[query] candidates = 'many' must be a whole number"),
    ],
)
def test_resource_settings_of_a_cloned_vault_are_bounded(tmp_path: Path, toml: str, message: str) -> None:
    """Huge batch, candidate or hop counts would make every command take all memory or time."""
    root = plain_vault(tmp_path, toml)
    r = cli(root, "query", "coffee")
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert cli(root, "search", "coffee").returncode == 0  # BM25 reads none of these settings


# -- no secret, nor the start of one, reaches a file or the history --------------------------------------


def token(tag: str) -> str:
    """A GitHub token whose first characters (``ghp_`` + tag) name the path it was fed through."""
    return f"ghp_{tag}" + "Zq9Wx8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98"[: 36 - len(tag)]


def straddle(prefix_chars: int, secret: str) -> str:
    """Text with ``secret`` starting 13 characters before ``prefix_chars``: a cut there keeps its start."""
    return ("The deploy of the staging cluster uses " * 9)[: prefix_chars - 14] + " " + secret + " for now"


HOOK_TAGS = ("Title1", "Body01", "Decide", "Open01", "Learn1", "Path01")


def transcript_with_secrets(path: Path, cwd: Path, hook: str) -> Path:
    """A session whose title (cut at 60), prompt, decided / open / learned items and an edited file's path
    each hold a token tagged ``hook`` + one of ``HOOK_TAGS``."""
    t = {tag: token(hook + tag) for tag in HOOK_TAGS}
    entries = [
        {
            "type": "user",
            "sessionId": f"sec-{hook}",
            "cwd": str(cwd),
            "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": "user", "content": straddle(60, t["Title1"]) + ". Use " + t["Body01"]},
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": f"We decided to rotate {t['Decide']} tomorrow; still need to revoke "
                        f"{t['Open01']}. It turns out {t['Learn1']} leaked.",
                    },
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Edit",
                        "input": {"file_path": f"{cwd}/cfg/{t['Path01']}.env", "old_string": "a", "new_string": "b"},
                    },
                ],
            },
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def test_no_write_path_keeps_a_secret_or_its_start(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every way text gets into the vault — CLI add/correct/link, MCP add/correct/link, the stop and
    pre-compact hooks, import (MEMORY.md, JSONL, day files and their re-import) — redacts before it cuts anything."""
    import threading

    from mdmem.api.vault import Vault
    from mdmem.edges.agent_hooks import run_hook
    from mdmem.edges.commands import BY_NAME
    from mdmem.edges.mcp_tools import Served, Tools

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    root, fed = git_vault, []

    def feed(tag: str) -> str:
        fed.append(token(tag))
        return token(tag)

    def run(*args: str) -> dict[str, Any]:
        return json.loads(mdmem_in_process("--vault", str(root), *args, "--json").stdout)

    # CLI add (a title cut for the file name or a listing must not keep a start), correct, link reasons
    added = run("add", "--title", straddle(50, feed("cliTitl")), "--body", f"key {feed('cliBody')}")
    run("correct", added["path"], "--title", f"Rotated {feed('cliCorT')}", "--body", f"now {feed('cliCorB')}")
    named = run(
        "add", "--title", "Named things", "--entity", f"Svc {feed('cliEnti')}", "--alias", f"aka {feed('cliAlia')}"
    )
    assert named["path"], named
    refused = mdmem_in_process("--vault", str(root), "add", "--title", "Tagged", "--tag", token("cliTagX"), check=False)
    assert refused.returncode != 0 and "looks like a secret" in refused.stderr
    run(
        "link",
        "Release train schedule",
        "Conflicted note",
        "--type",
        "depends_on",
        "--reason",
        f"shares {feed('cliReas')}",
    )
    # MCP add, correct, link (the tools as the server runs them, in this process)
    vault = Vault.open(root)
    try:
        tools = Tools(Served(vault), threading.Lock())
        r = tools.add(title=straddle(50, feed("mcpTitl")), body=f"key {feed('mcpBody')}", type="fact")
        assert not r.is_error, r.content
        new = r.structured_content["path"]
        assert not tools.correct(new, body=f"now {feed('mcpCorB')}", title=f"Again {feed('mcpCorT')}").is_error
        link = tools.table_tool(BY_NAME["link"])
        reason = f"same {feed('mcpReas')}"
        assert not link(source="Wikilinks in code", target="Release train schedule", reason=reason).is_error
    finally:
        vault.close()
    # the stop and pre-compact hooks' handoffs: title (cut at 60), body, items, file paths
    for event, hook in (("stop", "hk"), ("pre-compact", "pc")):
        transcript = transcript_with_secrets(tmp_path / f"{hook}.jsonl", tmp_path / "shop", hook)
        fed += [token(hook + tag) for tag in HOOK_TAGS]
        assert (
            run_hook(
                event,
                str(root),
                json.dumps(
                    {"session_id": f"sec-{hook}", "transcript_path": str(transcript), "cwd": str(tmp_path / "shop")}
                ),
                out=print,
            )
            == 0
        )
    assert len(list((root / "notes" / "handoffs").glob("*.md"))) == 2
    # import: MEMORY.md (titles cut at 80), JSONL (given titles cut at 200), day files, a day file re-imported
    src = tmp_path / "src"
    (src / "memory").mkdir(parents=True)
    (src / "MEMORY.md").write_text(f"# Memory\n\n## Decisions\n\n- {straddle(80, feed('impMdTi'))} and more.\n")
    (src / "mem.jsonl").write_text(
        json.dumps({"title": straddle(200, feed("impJsTi")), "content": f"jsonl {feed('impJsBo')}"}) + "\n"
    )
    day = src / "memory" / "2026-11-29.md"
    day.write_text(f"# {straddle(80, feed('impDayT'))}\n\nbody {feed('impDayB')}\n")
    for source in ("MEMORY.md", "mem.jsonl", "memory"):
        assert run("import", str(src / source))["written"], source
    day.write_text(day.read_text() + f"\nlater {feed('impDay2')}\n")
    assert run("import", str(src / "memory"))["updated"]

    files = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts]
    text = "\n".join(p.read_text(errors="replace") for p in files)
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=root, capture_output=True, text=True, check=True).stdout
    assert text.count("[REDACTED:github-token]") >= len(fed) - 3  # the paths wrote what they were fed
    for secret in fed:
        for where, haystack in (("files", text), ("git history", history)):
            assert secret[:10] not in haystack, f"{secret[:10]}… in the {where}"  # nor the start a cut keeps
