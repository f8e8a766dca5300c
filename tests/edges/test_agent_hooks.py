"""Claude Code hooks, run as Claude Code runs them: a subprocess, JSON on stdin, JSON (or nothing) on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mdmem.core.handoff import build_handoff, parse_transcript
from mdmem.edges.agent_hooks import is_trivial

from ..conftest import cli_commands, git, mdmem, mdmem_in_process

SECRET = "sk-proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34Mn56Op78Qr90St"
BEARER = "abcDEF123456ghiJKL789mnoPQR"


def hook(
    vault: Path | None, event: str, payload: Any, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    args = (["--vault", str(vault)] if vault else []) + ["hook", event, *extra]
    return mdmem(*args, input=stdin, check=False, env=env)


def context_of(proc: subprocess.CompletedProcess[str], event: str) -> str:
    assert proc.returncode == 0, proc.stderr
    return context_of_text(proc.stdout, event)


def context_of_text(stdout: str | None, event: str) -> str:
    assert stdout is not None
    out = json.loads(stdout)  # exactly one JSON document, nothing else
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return str(out["hookSpecificOutput"]["additionalContext"])


def prompt_payload(prompt: str, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "s-1",
        "transcript_path": str(cwd / "none.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


# -- prompt ------------------------------------------------------------------------------------------


def test_prompt_hook_adds_relevant_memory_as_claude_code_json(git_vault: Path) -> None:
    ctx = context_of(
        hook(git_vault, "prompt", prompt_payload("when do we ship the release train?", git_vault)), "UserPromptSubmit"
    )
    assert "Release train schedule" in ctx and "(id: " in ctx
    # Found from the session's cwd when no --vault is given (the vault at or above it).
    ctx = context_of(
        hook(None, "prompt", prompt_payload("coffee machine descaling", git_vault / "notes")), "UserPromptSubmit"
    )
    assert "Coffee machine" in ctx


def test_the_hook_runs_the_vector_leg_itself_only_when_the_model_is_quick(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a server the prompt hook is hybrid when vectors exist and the model loads fast (the hash
    model here, the bundled one once its ONNX model is prepared), and BM25 alone until then (~1 s more)."""
    from mdmem.api.vault import Vault

    question = "when do we ship the release train?"
    with Vault.open(git_vault) as v:  # the tests' $HOME has no prepared ONNX model yet
        assert v.context(question, vectors=None).vectors is False  # and nothing was loaded to find that out
        assert not v.semantic.embedder.loaded
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    with Vault.open(git_vault) as v:
        assert v.context(question, vectors=None).vectors is False  # no vectors yet
        v.embed()
        quick = v.context(question, vectors=None)
        assert quick.vectors is True and quick.text == v.context(question).text
        assert v.context(question, vectors=False).vectors is False
    ctx = context_of(hook(git_vault, "prompt", prompt_payload(question, git_vault)), "UserPromptSubmit")
    assert "Release train schedule" in ctx


# The hook as Claude Code runs it, with one change beside the real path: the hash model's query embedding
# (the vector leg) takes 60 s, as a model load on a saturated machine would.
SLOW_VECTOR_LEG = """
import sys, time
from mdmem.adapters import embed
real = embed.HashEmbedder.embed
def slow(self, texts, *, query=False):
    if query:
        sys.stderr.write("vector leg started\\n")
        time.sleep(60)
    return real(self, texts, query=query)
embed.HashEmbedder.embed = slow
from mdmem.edges.agent_hooks import fast_main
sys.exit(fast_main(sys.argv[1:]))
"""


def test_a_late_vector_leg_leaves_the_bm25_answer(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 is ready first; when the hybrid answer is late the hook prints BM25's at its deadline (not
    nothing), and exits 0 without waiting for the vector leg."""
    from mdmem.api.vault import Vault

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    question = "when do we ship the release train?"
    with Vault.open(git_vault) as v:
        v.embed()
        lexical = v.context(question, vectors=False)
        assert v.semantic.quick() and v.context(question, vectors=None).vectors is True
    assert "Release train schedule" in lexical.text
    args = ["--vault", str(git_vault), "hook", "prompt", "--time-budget", "4000"]
    proc = subprocess.run(
        [sys.executable, "-c", SLOW_VECTOR_LEG, *args],
        input=json.dumps(prompt_payload(question, git_vault)),
        capture_output=True,
        text=True,
        timeout=50,  # the vector leg alone would take 60 s: the hook did not wait for it
    )
    assert "vector leg started" in proc.stderr and "the best one ready" in proc.stderr
    ctx = context_of(proc, "UserPromptSubmit")
    assert ctx.startswith(lexical.text) and "mdmem get ID" in ctx
    # A vector leg that fails (a model that cannot load or read) leaves the BM25 answer too.
    broken = SLOW_VECTOR_LEG.replace("time.sleep(60)", "raise RuntimeError('model broken')")
    proc = subprocess.run(
        [sys.executable, "-c", broken, *args],
        input=json.dumps(prompt_payload(question, git_vault)),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert "vector leg: RuntimeError: model broken; BM25 only" in proc.stderr
    assert context_of(proc, "UserPromptSubmit").startswith(lexical.text)
    # The budget counts from the process's start, which a new process can read.
    age = "import time\nfrom mdmem.edges.agent_hooks import process_started as p\nprint(time.monotonic() - p())"
    run = subprocess.run([sys.executable, "-c", age], capture_output=True, text=True, check=True)
    assert 0 < float(run.stdout) < 50


@pytest.mark.parametrize("prompt", ["ok", "thanks!", "/clear", "  ", "yes please", "go ahead"])
def test_prompt_hook_skips_trivial_prompts(git_vault: Path, prompt: str) -> None:
    proc = hook(git_vault, "prompt", prompt_payload(prompt, git_vault))
    assert proc.returncode == 0 and proc.stdout == ""


@pytest.mark.parametrize(
    ("prompt", "trivial"),
    [
        ("ok", True),
        ("Thanks.", True),
        ("/review", True),
        ("hmm", True),
        ("fix ERR_X_42", False),
        ("为什么超时", False),
        ("why is checkout slow", False),
    ],
)
def test_is_trivial(prompt: str, trivial: bool) -> None:
    assert is_trivial(prompt) is trivial


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", '{"prompt": 42}', ""])
def test_prompt_hook_fails_open_on_bad_input(git_vault: Path, stdin: str) -> None:
    proc = hook(git_vault, "prompt", stdin)
    assert proc.returncode == 0 and proc.stdout == ""


def test_prompt_hook_fails_open_without_a_vault(tmp_path: Path) -> None:
    proc = hook(None, "prompt", prompt_payload("why is checkout slow", tmp_path))
    assert proc.returncode == 0 and proc.stdout == "" and "no mdmem vault" in proc.stderr
    proc = hook(tmp_path / "missing", "prompt", prompt_payload("why is checkout slow", tmp_path))
    assert proc.returncode == 0 and proc.stdout == ""


def test_prompt_hook_gives_up_silently_past_its_time_budget(git_vault: Path) -> None:
    proc = hook(
        git_vault, "prompt", prompt_payload("when do we ship the release train?", git_vault), "--time-budget", "1"
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert "within 1 ms" in proc.stderr


def test_prompt_hook_never_builds_an_index_in_the_foreground(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / "notes").mkdir(parents=True)
    (root / "mdmem.toml").write_text("")
    (root / "notes" / "a.md").write_text("---\ntitle: Release train\n---\nWe ship every second Tuesday.\n")
    proc = hook(root, "prompt", prompt_payload("when do we ship the release train", root))
    assert proc.returncode == 0 and proc.stdout == "" and "background" in proc.stderr
    for _ in range(200):  # the background reindex makes the next prompt work
        if (root / ".mdmem" / "manifest.json").exists():
            break
        time.sleep(0.1)
    for _ in range(50):
        proc = hook(root, "prompt", prompt_payload("when do we ship the release train", root))
        if proc.stdout:
            break
        time.sleep(0.2)
    assert "Release train" in context_of(proc, "UserPromptSubmit")


def test_prompt_hook_fast_path_skips_click(git_vault: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mdmem", "--vault", str(git_vault), "hook", "prompt"],
        input=json.dumps(prompt_payload("release train", git_vault)),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and "Release train" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")}
    assert "click" not in imported and "mcp" not in imported


def test_prompt_and_session_start_stay_in_the_sessions_project(git_vault: Path, tmp_path: Path) -> None:
    from ..conftest import write_files

    write_files(
        git_vault,
        {
            "notes/shop-retries.md": "---\ntitle: Shop ledger retries\nscope: project:shop-api\npinned: true\n---\n"
            "The ledger sync retries three times with backoff.\n",
            "notes/crm-retries.md": "---\ntitle: CRM ledger retries\nscope: project:crm-app\npinned: true\n---\n"
            "The ledger sync retries forever in the CRM importer.\n",
            "notes/any-retries.md": "---\ntitle: Ledger retries in general\n---\nA ledger sync retries at most five times.\n",
            "notes/topic-retries.md": "---\ntitle: Ledger retry budgets\nscope: topic:ledgers\n---\n"
            "Each ledger sync retry budget is per tenant.\n",
        },
    )
    mdmem_in_process("--vault", str(git_vault), "reindex")
    project = tmp_path / "shop-api"
    payload = {**prompt_payload("how often does the ledger sync retry?", project), "session_id": "p-1"}
    ctx = context_of_text(in_process(git_vault, "prompt", payload, time_budget_ms=60_000), "UserPromptSubmit")
    assert "Shop ledger retries" in ctx and "Ledger retries in general" in ctx and "CRM ledger" not in ctx
    assert "Ledger retry budgets" in ctx  # a topic is no project: its notes stay eligible
    start = {"session_id": "p-2", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    ctx = context_of_text(in_process(git_vault, "session-start", start), "SessionStart")
    assert "Shop ledger retries" in ctx and "CRM ledger" not in ctx  # pinned, but another project's
    # Outside any project folder nothing is held back.
    ctx = context_of_text(
        in_process(git_vault, "prompt", {**payload, "cwd": "/"}, time_budget_ms=60_000), "UserPromptSubmit"
    )
    assert "CRM ledger retries" in ctx


class _FakeServe(BaseHTTPRequestHandler):
    calls: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.calls.append({"auth": self.headers.get("Authorization"), **body})
        data = json.dumps({"context": {"text": "SERVED MEMORY: use the warm model\n"}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_prompt_hook_asks_a_running_serve_first(git_vault: Path) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FakeServe)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    from mdmem.index.state import server_seal

    info = {"pid": os.getpid(), "port": httpd.server_address[1], "token": "tok", "vault": str(git_vault.resolve())}
    (git_vault / ".mdmem" / "serve.json").write_text(json.dumps({**info, "seal": server_seal(info)}))
    try:
        ctx = context_of(
            hook(git_vault, "prompt", prompt_payload("release train dates", git_vault)), "UserPromptSubmit"
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
        (git_vault / ".mdmem" / "serve.json").unlink()
    assert ctx.startswith("SERVED MEMORY")
    call = _FakeServe.calls[-1]
    assert call["method"] == "context" and call["auth"] == "Bearer tok"
    assert call["params"] == {"prompt": "release train dates", "budget": 600, "scope": ["project:vault", "topic:*"]}


def test_serve_answers_the_prompt_hook(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    mdmem("--vault", str(git_vault), "serve", "--detach", "--idle-timeout", "60")
    try:
        from mdmem.edges.serve import call_server

        answer = call_server(git_vault, "context", {"prompt": "release train", "budget": 300})
        assert answer is not None and "Release train schedule" in answer["context"]["text"]
        ctx = context_of(
            hook(git_vault, "prompt", prompt_payload("when is the release train", git_vault)), "UserPromptSubmit"
        )
        assert "Release train schedule" in ctx
    finally:
        mdmem("--vault", str(git_vault), "serve", "--stop")


def test_the_askers_now_travels_to_the_server(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started without $MDMEM_NOW answers a client that has one at the client's now: "last
    month" is the client's last month, for a CLI question and for the prompt hook's context."""
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    (git_vault / "notes" / "may-launch.md").write_text(
        "---\ntitle: Billing launch\ncreated: 2026-05-12\n---\nThe billing service went live.\n"
    )
    git(git_vault, "add", "-A")
    git(git_vault, "commit", "-qm", "may")
    monkeypatch.delenv("MDMEM_NOW", raising=False)
    mdmem("--vault", str(git_vault), "serve", "--detach", "--idle-timeout", "60")
    try:
        then = {"MDMEM_NOW": "2026-06-10"}
        out = json.loads(
            mdmem("--vault", str(git_vault), "recall", "what happened last month", "--json", env=then).stdout
        )
        assert out["info"]["served"] is True
        assert out["info"]["window"]["from"] == "2026-05-01" and out["info"]["window"]["to"] == "2026-05-31"
        assert out["results"][0]["path"] == "notes/may-launch.md"
        from mdmem.edges.serve import with_client_now

        monkeypatch.setenv("MDMEM_NOW", "2026-06-10")
        assert with_client_now("context", {"prompt": "p"}) == {"prompt": "p", "as_of": "2026-06-10"}
        assert with_client_now("context", {"prompt": "p", "as_of": "2025-01-01"})["as_of"] == "2025-01-01"
        assert with_client_now("ask", {"text": "t", "filters": {"type": "fact"}})["filters"] == {
            "type": "fact",
            "as_of": "2026-06-10",
        }
    finally:
        mdmem("--vault", str(git_vault), "serve", "--stop")


# -- stop: the handoff --------------------------------------------------------------------------------


def transcript_lines(cwd: Path) -> list[dict[str, Any]]:
    c = str(cwd)
    return [
        {"type": "summary", "summary": "Checkout timeouts", "leafUuid": "x"},
        {
            "type": "user",
            "sessionId": "5f1c2a9e-7b3d-4c1e-9a2b-0d8e7f6a5b4c",
            "cwd": c,
            "uuid": "u1",
            "timestamp": "2026-11-28T09:00:00.000Z",
            "message": {
                "role": "user",
                "content": f"Checkout times out with ERR_PAY_504; find why and fix it. "
                f"My OpenAI key is {SECRET} if you need it.",
            },
        },
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Let me look."},
                    {"type": "text", "text": "I'll look at the worker configuration first."},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": f"{c}/config/workers.yml"}},
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "pool: 4"}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "The root cause is a worker pool of 4 under peak load. "
                        "We decided to raise the pool to 12.\n\n```yaml\npool: 12\n```",
                    },
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Edit",
                        "input": {"file_path": f"{c}/config/workers.yml", "old_string": "4", "new_string": "12"},
                    },
                    {
                        "type": "tool_use",
                        "id": "t3",
                        "name": "Bash",
                        "input": {"command": f"curl -H 'Authorization: Bearer {BEARER}' https://pay.internal/health"},
                    },
                ],
            },
        },
        "this line is not JSON",
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": "Let's use exponential backoff for retries instead of fixed delays.",
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "Done: retries now back off exponentially. Alerting on provider latency is "
                        "not implemented yet. Should I add a Grafana alert for it?",
                    }
                ],
            },
        },
        {"type": "system", "subtype": "stop_hook_summary", "hookCount": 1},
    ]


def write_transcript(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def test_build_handoff_extracts_asked_decided_open_and_files(tmp_path: Path) -> None:
    lines = [json.dumps(x) if not isinstance(x, str) else x for x in transcript_lines(tmp_path)]
    h = build_handoff(parse_transcript(lines))
    assert h is not None
    assert h.title.startswith("Handoff 2026-11-28: Checkout times out with ERR_PAY_504")
    asked, rest = h.body.split("## Decided")
    decided, rest = rest.split("## Open")
    opened, files = rest.split("## Files touched")
    assert "Checkout times out" in asked and "exponential backoff" in asked and "/clear" not in asked
    assert "raise the pool to 12" in decided and "exponential backoff" in decided
    assert "pool: 12" not in decided  # code is not a decision
    assert "not implemented yet" in opened and "Should I add a Grafana alert for it?" in opened
    assert "`config/workers.yml` (edited)" in files and "(read)" not in files.split("## Last reply")[0]
    assert SECRET not in h.body and "[REDACTED:api-key]" in h.body and h.redacted >= 1


def test_build_handoff_needs_a_prompt() -> None:
    assert (
        build_handoff(
            parse_transcript(
                [
                    json.dumps(
                        {
                            "type": "assistant",
                            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                        }
                    )
                ]
            )
        )
        is None
    )


def test_stop_hook_writes_one_handoff_per_session_committed_and_redacted(git_vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop-api"
    project.mkdir()
    lines = transcript_lines(project)
    transcript = write_transcript(tmp_path / "session.jsonl", lines[:6])
    payload = {
        "session_id": "5f1c2a9e-7b3d-4c1e-9a2b-0d8e7f6a5b4c",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    proc = hook(git_vault, "stop", payload)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    notes = sorted((git_vault / "notes" / "handoffs").glob("*.md"))
    assert [n.name for n in notes] == ["2026-11-28-5f1c2a9e-7b3.md"]
    text = notes[0].read_text()
    assert "type: handoff" in text and "scope: project:shop-api" in text and "raise the pool to 12" in text
    assert "exponential backoff" not in text
    assert "mdmem: add handoff" in git(git_vault, "log", "-1", "--format=%s")

    write_transcript(transcript, lines)  # the session went on
    proc = hook(git_vault, "stop", payload)
    assert proc.returncode == 0 and proc.stdout == ""
    assert len(list((git_vault / "notes" / "handoffs").glob("*.md"))) == 1
    text = notes[0].read_text()
    assert "exponential backoff" in text and "Grafana alert" in text
    assert "(updated)" in git(git_vault, "log", "-1", "--format=%s")
    commits = git(git_vault, "log", "--format=%H").split()
    assert hook(git_vault, "stop", payload).returncode == 0  # nothing new: no commit
    assert git(git_vault, "log", "--format=%H").split() == commits

    history = git(git_vault, "log", "-p", "--all")
    for secret in (SECRET, BEARER):
        assert secret not in history
        assert not any(
            secret in p.read_text(errors="replace")
            for p in git_vault.rglob("*")
            if p.is_file() and ".git" not in p.parts
        )
    found = json.loads(
        mdmem_in_process("--vault", str(git_vault), "search", "worker pool", "--type", "handoff", "--json").stdout
    )
    assert found["results"][0]["path"] == "notes/handoffs/2026-11-28-5f1c2a9e-7b3.md"


def test_stop_hook_dry_run_prints_the_note(git_vault: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "s.jsonl", transcript_lines(tmp_path))
    proc = hook(git_vault, "stop", {"transcript_path": str(transcript), "cwd": str(tmp_path)}, "--dry-run")
    assert proc.returncode == 0 and proc.stdout.startswith("# Handoff 2026-11-28") and "## Open" in proc.stdout
    assert not (git_vault / "notes" / "handoffs").exists()


@pytest.mark.parametrize("payload", [{"session_id": "x"}, {"transcript_path": "/no/such/file.jsonl"}, "oops"])
def test_stop_hook_fails_open(git_vault: Path, payload: Any) -> None:
    proc = hook(git_vault, "stop", payload)
    assert proc.returncode == 0 and proc.stdout == ""


def in_process(vault: Path, event: str, payload: dict[str, Any], **options: Any) -> str | None:
    """A hook run as ``python -m mdmem hook EVENT`` runs it, in this process: its stdout, or None."""
    from mdmem.edges.agent_hooks import run_hook

    printed: list[str] = []
    assert run_hook(event, str(vault), json.dumps(payload), out=printed.append, **options) == 0
    return printed[0] if printed else None


def compaction(cwd: Path) -> list[dict[str, Any]]:
    """What Claude Code appends when it compacts, then the turns that follow (same file, same session)."""
    return [
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
        {
            "type": "user",
            "isCompactSummary": True,
            "message": {
                "role": "user",
                "content": "This session is being continued from a previous conversation. Summary: pool raised.",
            },
        },
        {"type": "user", "cwd": str(cwd), "message": {"role": "user", "content": "Now add the Grafana alert."}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "We'll use a p95 latency alert at 800 ms. It turns out Grafana needs the "
                        "provider label on every series.",
                    }
                ],
            },
        },
    ]


def test_pre_compact_keeps_the_session_in_its_one_handoff_note(git_vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop-api"
    project.mkdir()
    lines = transcript_lines(project)
    transcript = write_transcript(tmp_path / "session.jsonl", lines)
    payload = {
        "session_id": "5f1c2a9e-7b3d-4c1e-9a2b-0d8e7f6a5b4c",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": "",
    }
    assert in_process(git_vault, "pre-compact", payload) is None  # PreCompact takes no context back
    (note,) = (git_vault / "notes" / "handoffs").glob("*.md")
    text = note.read_text()
    assert "scope: project:shop-api" in text and "raise the pool to 12" in text and "Grafana alert" in text
    assert "## Learned" in text and SECRET not in text
    commits = git(git_vault, "log", "--format=%H").split()
    assert in_process(git_vault, "pre-compact", {**payload, "trigger": "manual"}) is None  # fired twice
    assert note.read_text() == text and git(git_vault, "log", "--format=%H").split() == commits
    assert text.count("## Decided") == 1

    # Another session of the project ends later (its note comes first); after the compaction this session
    # still gets its own.
    other = write_transcript(
        tmp_path / "other.jsonl",
        [
            {
                "type": "user",
                "timestamp": "2026-11-27T09:00:00Z",
                "cwd": str(project),
                "message": {"role": "user", "content": "Rename the payments queue to billing-events."},
            }
        ],
    )
    in_process(git_vault, "stop", {"session_id": "other-session", "transcript_path": str(other), "cwd": str(project)})
    start = {"session_id": payload["session_id"], "cwd": str(project), "hook_event_name": "SessionStart"}
    ctx = context_of_text(in_process(git_vault, "session-start", {**start, "source": "compact"}), "SessionStart")
    assert "This session before compaction: Handoff 2026-11-28" in ctx and "raise the pool to 12" in ctx
    ctx = context_of_text(in_process(git_vault, "session-start", {**start, "source": "startup"}), "SessionStart")
    assert "Last handoff: Handoff 2026-11-27: Rename the payments queue" in ctx

    write_transcript(transcript, lines + compaction(project))  # the session goes on after the compaction
    in_process(git_vault, "stop", {**payload, "hook_event_name": "Stop"})
    assert len(list((git_vault / "notes" / "handoffs").glob("*.md"))) == 2  # this session's and the other
    text = note.read_text()
    assert "raise the pool to 12" in text and "p95 latency alert at 800 ms" in text  # before and after
    assert "provider label on every series" in text.split("## Learned")[1].split("## Open")[0]
    assert "This session is being continued" not in text
    assert git(git_vault, "log", "-1", "--format=%s").strip().endswith("(updated)")


# -- session start -----------------------------------------------------------------------------------


def test_session_start_gives_pinned_notes_and_this_projects_last_handoff(git_vault: Path, tmp_path: Path) -> None:
    mdmem_in_process("--vault", str(git_vault), "pin", "Release train schedule")
    project = tmp_path / "shop-api"
    project.mkdir()
    transcript = write_transcript(tmp_path / "s.jsonl", transcript_lines(project))
    assert (
        hook(
            git_vault, "stop", {"session_id": "abc", "transcript_path": str(transcript), "cwd": str(project)}
        ).returncode
        == 0
    )
    payload = {"session_id": "new", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    ctx = context_of(hook(git_vault, "session-start", payload), "SessionStart")
    assert "Release train schedule" in ctx
    assert "Last handoff: Handoff 2026-11-28" in ctx and "raise the pool to 12" in ctx
    small = context_of(hook(git_vault, "session-start", payload, "--budget", "120"), "SessionStart")
    assert len(small) < len(ctx) and len(small) <= 120 * 4 + 200


def test_the_first_session_start_starts_one_warm_server(git_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session's start starts the vault's ``mdmem serve`` (one, however many sessions start at once);
    the session's prompts are then answered by it."""
    from mdmem.edges.serve import read_info

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    monkeypatch.setenv("MDMEM_AUTOSERVE", "1")
    payload = {"session_id": "s", "cwd": str(git_vault), "hook_event_name": "SessionStart", "source": "startup"}
    try:
        first = hook(git_vault, "session-start", payload)
        second = hook(git_vault, "session-start", payload)  # while the first one's server warms or runs
        assert first.returncode == 0 and "started mdmem serve" in first.stderr
        assert second.returncode == 0 and "started mdmem serve" not in second.stderr
        deadline = time.monotonic() + 120
        while (info := read_info(git_vault)) is None:
            assert time.monotonic() < deadline, (git_vault / ".mdmem" / "serve.log").read_text()
            time.sleep(0.2)
        assert "--idle-timeout" in " ".join(Path(f"/proc/{info['pid']}/cmdline").read_text().split("\0"))
        ctx = context_of(
            hook(git_vault, "prompt", prompt_payload("when is the release train", git_vault)), "UserPromptSubmit"
        )
        assert "Release train schedule" in ctx
        third = hook(git_vault, "session-start", payload)
        assert third.returncode == 0 and "started mdmem serve" not in third.stderr
    finally:
        mdmem("--vault", str(git_vault), "serve", "--stop", check=False)


# -- the commands ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", cli_commands("agents"), ids=" ".join)
def test_agent_commands_have_help(cmd: list[str]) -> None:
    from click.testing import CliRunner

    from mdmem.cli import cli

    r = CliRunner().invoke(cli, [*cmd, "--help"], catch_exceptions=False)
    assert r.exit_code == 0 and "Usage:" in r.output
    assert len(r.output.split("\n\n")[1].strip()) > 20


def test_help_does_not_import_the_mcp_sdk() -> None:
    code = (
        "import sys; from mdmem.cli import cli\ntry: cli(['mcp', '--help'])\nexcept SystemExit: pass\n"
        "print('LOADED', [m for m in ('mcp', 'uvicorn', 'pydantic') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("LOADED []")
