"""The bundled model on onnxruntime (no torch on a query's path), its one-off export, threads, and the
progress a running embed shows: in its own output when piped, and in ``status`` from another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mdmem import Vault
from mdmem.adapters.embed import EmbedSettings, default_threads, make_embedder, onnx_ready

from ..conftest import mdmem_in_process

TEXTS = [
    "We chose Hotwire for the frontend.",
    "The cat sat on the mat.",
    "数据库迁移",
    "deploy " * 300,
    "Payments fail when the provider times out; the webhook retries three times.",
]


@pytest.fixture(scope="module")
def models_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export of the bundled model for this module (~10 s), in its own $MDMEM_HOME."""
    home = tmp_path_factory.mktemp("mdmem-home")
    old = os.environ.get("MDMEM_HOME")
    os.environ["MDMEM_HOME"] = str(home)
    try:
        assert make_embedder(EmbedSettings()).prepare()
    finally:
        if old is None:
            del os.environ["MDMEM_HOME"]
        else:
            os.environ["MDMEM_HOME"] = old
    return home


def test_onnx_gives_the_torch_models_vectors_without_importing_torch(
    models_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDMEM_HOME", str(models_home))
    fast = make_embedder(EmbedSettings(batch_size=2))
    slow = make_embedder(EmbedSettings(runtime="torch", batch_size=2))
    a, b = fast.embed(TEXTS), slow.embed(TEXTS)
    assert (fast.runtime, slow.runtime) == ("onnx", "torch")
    assert fast.fingerprint == slow.fingerprint  # the same vectors, so existing vectors stay valid
    assert a.shape == (5, 384) and float(np.abs(a - b).max()) < 1e-4
    q = fast.embed(["which web framework did we pick"], query=True)
    assert float(np.abs(q - slow.embed(["which web framework did we pick"], query=True)).max()) < 1e-4
    code = (
        "import sys; from mdmem.adapters.embed import EmbedSettings, make_embedder; e = make_embedder(EmbedSettings()); "
        "e.embed(['x'], query=True); print(e.runtime, 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MDMEM_HOME": str(models_home)},
    ).stdout.split()
    assert out == ["onnx", "False"]


def test_a_damaged_or_outdated_export_is_not_used_and_is_made_again(
    models_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "home"))
    emb = make_embedder(EmbedSettings())
    folder = emb.onnx_dir()
    shutil.copytree(models_home / "models", folder.parent)
    assert onnx_ready(folder, emb.path)
    with open(folder / "model.onnx", "r+b") as fh:  # a truncated copy
        fh.truncate(1000)
    assert not onnx_ready(folder, emb.path)
    emb.embed(["x"])
    assert emb.runtime == "onnx" and onnx_ready(folder, emb.path)  # made again from the weights (~1 s, no torch)
    size = (folder / "model.onnx").stat().st_size
    with open(folder / "model.onnx", "r+b") as fh:  # now it looks complete but cannot load
        fh.seek(100)
        fh.write(b"\xff" * 1000)
    assert onnx_ready(folder, emb.path)
    broken = make_embedder(EmbedSettings())
    broken.embed(["x"])
    assert broken.runtime == "onnx" and onnx_ready(folder, emb.path)  # dropped and made again
    assert (folder / "model.onnx").stat().st_size == size
    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "other-home"))  # a machine that has prepared nothing
    torch_made = make_embedder(EmbedSettings(model=str(emb.path)))  # as a model torch must export (~10 s)
    monkeypatch.setattr(type(torch_made), "_builds_without_torch", property(lambda self: False))
    said: list[str] = []
    assert torch_made.prepare(said.append) and "ONNX" in said[0]
    assert torch_made.prepare(said.append) and len(said) == 1  # once per machine


def test_the_export_is_fused_and_batches_follow_token_counts(
    models_home: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BERT's attention, embedding and layer norms run as onnxruntime's fused operators (the same vectors,
    checked at export), and a vault's chunks go to the model shortest in tokens first, so a batch pads little."""
    monkeypatch.setenv("MDMEM_HOME", str(models_home))
    emb = make_embedder(EmbedSettings(max_length=64))
    meta = json.loads((emb.onnx_dir() / "meta.json").read_text())
    assert meta["fused"] is True and meta["format"] == 2
    assert emb.token_counts(["The cat sat.", "deploy " * 300, "数据库"]) == [6, 64, 5]

    import mdmem.adapters.embed as embed

    batches: list[list[str]] = []
    real = make_embedder(EmbedSettings())
    monkeypatch.setattr(embed, "make_embedder", lambda settings: real)
    monkeypatch.setattr(
        real,
        "embed",
        lambda texts, query=False: batches.append(list(texts)) or np.zeros((len(texts), 384), dtype=np.float32),
    )
    Vault.open(vault_dir).embed()
    order = [t for batch in batches for t in batch]
    counts = real.token_counts(order)
    assert len(order) > 3 and counts == sorted(counts)
    by_chars = real.token_counts(sorted(order, key=len))
    assert by_chars != sorted(by_chars)  # what the old order by characters gave on these notes


def test_int8_is_an_opt_in_with_its_own_vectors_and_fingerprint(
    models_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mdmem.core.errors import ConfigError

    monkeypatch.setenv("MDMEM_HOME", str(models_home))
    fp32 = make_embedder(EmbedSettings())
    int8 = make_embedder(EmbedSettings.from_config({"embed": {"precision": "int8"}}))
    assert int8.fingerprint != fp32.fingerprint  # never mixed with fp32 vectors in one index
    a, b = fp32.embed(TEXTS), int8.embed(TEXTS)
    assert int8.runtime == "onnx" and (int8.onnx_dir() / "model-int8.onnx").is_file()
    cos = (a * b).sum(1)
    assert float(np.abs(a - b).max()) > 1e-3 and float(cos.min()) > 0.95
    with pytest.raises(ConfigError, match="precision"):
        EmbedSettings(precision="int4")
    with pytest.raises(ConfigError, match="onnxruntime"):
        EmbedSettings(precision="int8", runtime="torch")


def test_threads_default_to_the_cores_and_stay_settable(vault_dir: Path) -> None:
    from mdmem.core.errors import ConfigError

    assert EmbedSettings().thread_count == default_threads() == max(1, min(len(os.sched_getaffinity(0)), 8))
    assert EmbedSettings.from_config({"embed": {"threads": 3}}).thread_count == 3
    with pytest.raises(ConfigError, match="runtime"):
        EmbedSettings.from_config({"embed": {"runtime": "gpu"}})


def test_piped_progress_is_a_line_every_tenth_and_none_for_quick_work(capsys: pytest.CaptureFixture[str]) -> None:
    from mdmem.cli.options import progress_lines

    update = progress_lines("Embedding chunks", after=0.0)
    for done in range(1, 201):
        update(done, 200)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10 and lines[0].startswith("Embedding chunks: 20/200 (10%), ")
    assert lines[-1].startswith("Embedding chunks: 200/200 (100%), ") and "left" in lines[0]
    quick = progress_lines("Embedding chunks")
    for done in range(1, 201):
        quick(done, 200)
    assert capsys.readouterr().err == ""


def test_status_shows_a_running_embed_and_ignores_a_dead_one(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdmem.index.progress import EmbedProgress, embed_progress

    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    total = Vault.open(vault_dir).embed().total

    state = vault_dir / ".mdmem"
    tracker = EmbedProgress(state, 40)
    tracker.update(10)
    time.sleep(0.01)
    tracker.last = 0.0
    tracker.update(12)
    status = json.loads(mdmem_in_process("--vault", str(vault_dir), "status", "--json").stdout)
    assert status["vectors"]["running"]["done"] == 12 and status["vectors"]["running"]["total"] == 40
    assert status["vectors"]["chunks"] == total
    text = mdmem_in_process("--vault", str(vault_dir), "status").stdout
    assert "embedding now: 12/40 new chunks (30%" in text
    tracker.close()
    assert (
        embed_progress(state) is None
        and "embedding"
        not in json.loads(mdmem_in_process("--vault", str(vault_dir), "status", "--json").stdout)["vectors"]
    )

    # A killed embed leaves its file behind; a dead pid is not a running embed.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (state / "embed-progress.json").write_text(
        json.dumps({"pid": dead.pid, "done": 1, "total": 9, "started": time.time(), "updated": time.time()})
    )
    assert embed_progress(state) is None
    (state / "embed-progress.json").write_text("{not json")
    assert embed_progress(state) is None


def test_a_big_embed_reports_its_runtime_and_leaves_no_progress_file(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MDMEM_EMBED_MODEL", "hash")
    v = Vault.open(vault_dir)
    report = v.embed()
    assert report.embedded > 0 and report.threads == default_threads()
    assert not (vault_dir / ".mdmem" / "embed-progress.json").exists()


def test_a_cold_cli_query_runs_the_onnx_model_beside_usearch(models_home: Path, vault_dir: Path) -> None:
    """usearch loaded before onnxruntime made onnxruntime's import segfault: a real vault, real processes."""
    env = {**os.environ, "MDMEM_HOME": str(models_home), "PYTHONWARNINGS": "ignore"}
    run = [sys.executable, "-m", "mdmem", "--vault", str(vault_dir)]
    embed = subprocess.run([*run, "embed"], env=env, capture_output=True, text=True)
    assert embed.returncode == 0 and ", onnx, " in embed.stdout, embed.stderr
    for command in ("vsearch", "query", "vsearch"):  # the second vsearch: the usearch file exists first
        proc = subprocess.run([*run, command, "--json", "kafka consumer lag"], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["results"]


def test_serve_detach_returns_once_the_model_is_warm(models_home: Path, vault_dir: Path) -> None:
    """The server publishes its address only after loading the model and answering one query, so the
    first CLI call that finds it never waits on a cold model; queries go to it from then on."""
    env = {**os.environ, "MDMEM_HOME": str(models_home), "PYTHONWARNINGS": "ignore"}
    env.pop("MDMEM_NO_SERVE", None)
    run = [sys.executable, "-m", "mdmem", "--vault", str(vault_dir)]
    started = subprocess.run(
        [*run, "serve", "--detach", "--idle-timeout", "60"], env=env, capture_output=True, text=True
    )
    try:
        assert started.returncode == 0, started.stderr
        assert "warm after" in started.stdout
        info = json.loads((vault_dir / ".mdmem" / "serve.json").read_text())
        assert info["warm"]["runtime"] == "onnx"  # loaded before the address was published
        proc = subprocess.run([*run, "query", "--json", "kafka consumer lag"], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["info"].get("served") is True
    finally:
        subprocess.run([*run, "serve", "--stop"], env=env, capture_output=True)


def test_a_failed_export_says_why_in_status_and_is_tried_again_after_a_while(
    models_home: Path, tmp_path: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import mdmem.adapters.embed as embed

    monkeypatch.setenv("MDMEM_HOME", str(tmp_path / "home"))
    emb = make_embedder(EmbedSettings())
    folder = emb.onnx_dir()
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the export's folder goes")  # the export cannot write there
    said: list[str] = []
    assert not emb.prepare(said.append)
    failed = folder.with_name(folder.name + ".failed")
    assert failed.is_file() and "tried again in 24 h" in said[-1]
    before = len(said)
    assert not make_embedder(EmbedSettings()).prepare(said.append) and len(said) == before  # not retried at once
    Vault.open(vault_dir).reindex()
    status = mdmem_in_process("--vault", str(vault_dir), "status")
    line = next(ln for ln in status.stdout.splitlines() if "ONNX export failed" in ln)
    assert "embedding with torch" in line and "tried again in" in line
    assert (
        "ONNX export failed"
        in json.loads(mdmem_in_process("--vault", str(vault_dir), "status", "--json").stdout)["vectors"]["note"]
    )

    folder.unlink()  # what made it fail is gone
    day_ago = time.time() - 25 * 3600
    os.utime(failed, (day_ago, day_ago))
    exported: list[Path] = []

    def export(source: Path, dest: Path, settings: object) -> None:  # the real export ran in models_home
        exported.append(dest)
        shutil.copytree(models_home / "models" / dest.name, dest)

    monkeypatch.setattr(embed, "export_onnx", export)
    assert make_embedder(EmbedSettings()).prepare(said.append) and exported == [folder]
    assert not failed.exists() and make_embedder(EmbedSettings()).export_failure() is None


# -- the default install: no torch, transformers, tokenizers or onnx -------------------------------

BLOCK = "import sys\nfor m in ('torch', 'transformers', 'tokenizers', 'onnx', 'sentence_transformers'): sys.modules[m] = None\n"


def test_the_default_model_runs_without_torch_transformers_tokenizers_or_onnx(tmp_path: Path) -> None:
    """What `pip install mdmem` has: the model is prepared from its weights and tokenised by mdmem's own
    WordPiece, and its vectors are torch's (< 1e-4), for English, CJK, accents and a truncated text."""
    from mdmem.adapters.embed import torch_runner

    texts = [*TEXTS, "Ça va? Überprüfung naïve café [SEP] ﬁne", "数据库迁移は来週 🙂"]
    code = BLOCK + (
        "import json; from mdmem.adapters.embed import EmbedSettings, make_embedder\n"
        "e = make_embedder(EmbedSettings(batch_size=3))\n"
        f"v = e.embed({texts!r})\n"
        "print(json.dumps({'runtime': e.runtime, 'v': v.tolist(), 'tokens': e.token_counts(['数据库', 'deploy ' * 300]),"
        " 'heavy': [m for m in ('torch', 'transformers', 'tokenizers', 'onnx') if sys.modules.get(m)]}))"
    )
    env = {**os.environ, "MDMEM_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["runtime"] == "onnx" and out["heavy"] == [] and out["tokens"] == [5, 256]
    meta = json.loads(next((tmp_path / "home" / "models").glob("*/meta.json")).read_text())
    assert meta["built"] == "bert_onnx"  # written from the weights, not exported by torch
    expected = torch_runner(make_embedder(EmbedSettings()).path, 256, 1)(texts)
    assert float(np.abs(np.array(out["v"], dtype=np.float32) - expected).max()) < 1e-4


def test_the_written_graph_is_valid_onnx_and_other_models_ask_for_torch(models_home: Path, tmp_path: Path) -> None:
    import onnx

    from mdmem.adapters import bert_onnx
    from mdmem.core.errors import ConfigError

    folder = next((models_home / "models").glob("*-onnx*"))
    onnx.checker.check_model(onnx.load(str(folder / "model.onnx")))
    assert bert_onnx.buildable(
        {"model_type": "bert", "hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6}
    )
    assert not bert_onnx.buildable(
        {"model_type": "xlm-roberta", "hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6}
    )
    assert not bert_onnx.buildable(
        {
            "model_type": "bert",
            "hidden_act": "gelu_new",
            "hidden_size": 384,
            "num_attention_heads": 12,
            "num_hidden_layers": 6,
        }
    )
    other = tmp_path / "roberta"  # a model folder that is not a BERT, on a machine without torch
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model_type": "roberta", "hidden_size": 8}))
    (other / "model.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    code = BLOCK + (
        "from mdmem.adapters.embed import EmbedSettings, make_embedder\n"
        f"make_embedder(EmbedSettings(model={str(other)!r})).embed(['x'])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "MDMEM_HOME": str(tmp_path / "home")},
    )
    assert proc.returncode == 1 and "pip install 'mdmem[torch]'" in proc.stderr.splitlines()[-1], proc.stderr
    assert ConfigError.__name__ in proc.stderr.splitlines()[-1]
