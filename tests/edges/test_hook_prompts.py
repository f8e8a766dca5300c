"""The prompt hook on prompts as people write them, through a real ``mdmem serve`` and without one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ..conftest import git, mdmem, mdmem_in_process, write_files
from .test_agent_hooks import context_of, context_of_text, hook, prompt_payload

# Terse notes, as a team writes them: none says "know", "about" or "want". Forty of them, so that a
# word no note has weighs in the prompt as it does in a large vault (its IDF is the highest).
TERSE = {
    "notes/graphql-idempotency.md": "---\ntitle: GraphQL idempotency keys\ntype: decision\n---\n"
    "Mutations carry an idempotency key; the gateway drops a repeated key within 24 h.\n",
    **{
        f"notes/graphql-{i}.md": f"---\ntitle: GraphQL schema {i}\ntype: fact\n---\nSchema {i} changed; "
        "idempotency is kept.\n"
        for i in range(3)
    },
    **{
        f"notes/service-{i}.md": f"---\ntitle: Service {i} port\ntype: fact\n---\nService {i} listens on "
        f"port {8000 + i}; its ledger rounds half to even and deploys run Tuesday.\n"
        for i in range(36)
    },
}
PROMPT = "What do we know about graphql idempotency? I want to change it."


@pytest.fixture
def terse_vault(tmp_path: Path) -> Path:
    """Forty terse notes; the vault counts as large (``large_vault_words``), as 2,000 such notes would."""
    root = tmp_path / "terse"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    mdmem_in_process("init", str(root))
    for p in (root / "notes").glob("*.md"):
        p.unlink()
    write_files(root, TERSE)
    with (root / "mdmem.toml").open("a") as fh:
        fh.write("\n[query]\nlarge_vault_words = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "notes", env={"MDMEM_SKIP_HOOK": "1"})
    mdmem_in_process("--vault", str(root), "reindex", "--full")  # no trace of init's example notes
    return root


def test_words_of_asking_that_no_note_has_do_not_silence_the_answer(terse_vault: Path) -> None:
    """ "know", "about" and "want" are the prompt's, not the topic's: that no note says them is no sign
    that the vault holds no answer (they made up most of the prompt's weight, and every prompt of the
    hook benchmark came back empty)."""
    out = json.loads(mdmem_in_process("--vault", str(terse_vault), "context", PROMPT, "--json").stdout)
    assert "notes/graphql-idempotency.md" in [i["path"] for i in out["items"]]
    # a topic the vault never mentions is still no answer
    out = json.loads(
        mdmem_in_process(
            "--vault", str(terse_vault), "context", "What do we know about kubernetes autoscaling?", "--json"
        ).stdout
    )
    assert out["items"] == []


def test_the_served_prompt_hook_answers_a_chatty_prompt(terse_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt as Claude Code sends it, answered by a running server (and without one)."""
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    payload = prompt_payload(PROMPT, terse_vault)
    assert "GraphQL idempotency keys" in context_of(hook(terse_vault, "prompt", payload), "UserPromptSubmit")
    mdmem("--vault", str(terse_vault), "serve", "--detach", "--idle-timeout", "60")
    try:
        from mdmem.edges.serve import call_server

        answer = call_server(terse_vault, "context", {"prompt": PROMPT, "budget": 600})
        assert answer is not None and answer["context"]["items"], answer
        assert "GraphQL idempotency keys" in context_of(hook(terse_vault, "prompt", payload), "UserPromptSubmit")
    finally:
        mdmem("--vault", str(terse_vault), "serve", "--stop")


HEAVY = ("re", "json", "socket", "pathlib", "typing", "hashlib", "click", "yaml", "numpy", "mdmem.api", "site")


def test_the_installed_prompt_hook_asks_the_server_having_loaded_almost_nothing(
    terse_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command ``setup claude-code`` installs, answered by a running server: no re, json, socket,
    pathlib, typing, hashlib, click, yaml, numpy, mdmem.api or even site is imported (``-X importtime``
    lists every module); without the server the same command loads them and answers from BM25."""
    import shlex
    import subprocess

    from mdmem.edges.claude_setup import hook_command

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    cmd = shlex.split(hook_command(sys.executable, terse_vault, "prompt"))
    payload = json.dumps(prompt_payload(PROMPT, terse_vault))

    def run() -> tuple[str, set[str]]:
        proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], input=payload, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        loaded = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")}
        return context_of_text(proc.stdout, "UserPromptSubmit"), loaded

    text, loaded = run()
    assert "GraphQL idempotency keys" in text and {"re", "json", "site"} <= loaded
    mdmem("--vault", str(terse_vault), "serve", "--detach", "--idle-timeout", "60")
    try:
        text, loaded = run()
        assert "GraphQL idempotency keys" in text
        assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
        assert "mdmem.edges.agent_hooks" not in loaded
    finally:
        mdmem("--vault", str(terse_vault), "serve", "--stop")


def test_the_served_paths_seal_is_the_servers(tmp_path: Path) -> None:
    """The hook's own HMAC and ``serve.json`` reader agree with the server's (hmac, index.state)."""
    import hashlib
    import hmac
    import os

    from mdmem.index import served, state

    for key, msg in ((b"k", b""), (os.urandom(32), b"mdmem serve 1 2 t /v"), (os.urandom(100), os.urandom(300))):
        assert served.hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).hexdigest()
    (tmp_path / ".mdmem").mkdir()
    info = {"pid": os.getpid(), "port": 1, "token": "t", "vault": str(tmp_path.resolve())}
    for sealed in (state.server_seal(info), "forged"):
        (tmp_path / ".mdmem" / "serve.json").write_text(json.dumps({**info, "seal": sealed}))
        assert (served.server_info(tmp_path) is None) is (state.server_info(tmp_path) is None) is (sealed == "forged")
