"""How mdmem keeps a chunk's vector: 4 bits a dimension and one scale a vector (``q4``).

A vector is stored as ``settle(v)``: its float16 values, divided by a scale (the largest magnitude over
``STEPS``, rounded up to 7 significant bits) and rounded to the nearest of the integers -7 … 7. Every
place that keeps a vector keeps this one: the embedding cache, the usearch file and the vector pack, so a
vector another machine sends through the pack is the very vector this machine would store, bit for bit.

Why these choices (the figures: docs/retrieval.md, "Stored vectors"):
- The pack must travel at a fraction of the notes' size: a float16 MiniLM vector (768 bytes) is larger
  than the text of a typical chunk, 4 bits a dimension and a scale are 194 bytes.
- Zero stays zero (the steps are symmetric), so a sparse vector keeps its zeros.
- ``settle`` is idempotent: a settled vector's largest magnitude is 7 scales exactly, and the scale has so
  few significant bits that every step times it is exact in float16. So a settled vector encodes to the
  same codes, and a decoded one is the float16 vector it was.
- Queries are never settled: their full vector meets the stored ones (asymmetric), which keeps more of
  the ranking than settling both.

Vectors are unit length (every embedder normalises), so a scale is far from float16's smallest normal
number (``MIN_SCALE``, a floor for any other input); the zero vector settles to itself, a value float16
cannot hold to zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

FORMAT = "q4"  # part of a stored vector's identity (fingerprint, pack shards): another format never mixes
STEPS = 7  # codes -STEPS … STEPS, stored as 0 … 2 * STEPS in 4 bits
SCALE_BITS = 7  # significant bits of a scale: a code (3 bits and a sign) times a scale is exact in float16
MIN_SCALE = 2.0**-14  # float16's smallest normal number: below it a step times the scale would lose bits


def width(dim: int) -> int:
    """Bytes of one encoded vector of ``dim`` dimensions: a float16 scale, then two codes a byte."""
    return 2 + (dim + 1) // 2


def _codes(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes -STEPS … STEPS as int8, scales as float32) of float16-rounded ``vectors`` (n, dim)."""
    import numpy as np

    with np.errstate(over="ignore"):
        half = np.asarray(vectors, dtype=np.float16)
    x = np.nan_to_num(half.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0).reshape(len(vectors), -1)
    top = np.abs(x).max(axis=1) if x.shape[1] else np.zeros(len(x), dtype=np.float32)
    frac, exp = np.frexp(top / np.float32(STEPS))
    unit = np.float32(1 << SCALE_BITS)
    scale = np.ldexp(np.ceil(frac * unit) / unit, exp).astype(np.float32)  # rounded up: |x| / scale <= STEPS
    scale = np.where(top > 0, np.maximum(scale, np.float32(MIN_SCALE)), np.float32(0))
    safe = np.where(scale > 0, scale, np.float32(1))
    codes = np.clip(np.rint(x / safe[:, None]), -STEPS, STEPS).astype(np.int8)
    return codes, np.where(codes.any(axis=1), scale, np.float32(0))  # all zero: one encoding of it


def _values(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    import numpy as np

    return (codes.astype(np.float32) * scale.astype(np.float32)[:, None]).astype(np.float32)


def settle(vectors: np.ndarray) -> np.ndarray:
    """The vectors as mdmem stores them (float32 values, each exact in float16); see the module."""
    codes, scale = _codes(vectors)
    return _values(codes, scale)


def encode(vectors: np.ndarray) -> list[bytes]:
    """Each vector's bytes (``width(dim)``): its scale (float16), then its codes, two a byte."""
    import numpy as np

    codes, scale = _codes(vectors)
    nibbles = (codes + STEPS).astype(np.uint8)
    if nibbles.shape[1] % 2:
        nibbles = np.pad(nibbles, ((0, 0), (0, 1)), constant_values=STEPS)
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    scales = scale.astype(np.float16)
    return [scales[i].tobytes() + packed[i].tobytes() for i in range(len(packed))]


def decode(raw: bytes, dim: int) -> np.ndarray | None:
    """One encoded vector's values (float32), or None when ``raw`` is not a vector of ``dim`` dimensions
    (a code outside -STEPS … STEPS, a scale that is not a finite non-negative number, another length)."""
    import numpy as np

    if len(raw) != width(dim):
        return None
    scale = np.frombuffer(raw[:2], dtype=np.float16).astype(np.float32)
    packed = np.frombuffer(raw[2:], dtype=np.uint8)
    nibbles = np.empty(2 * len(packed), dtype=np.uint8)
    nibbles[0::2], nibbles[1::2] = packed >> 4, packed & 0x0F
    if not np.isfinite(scale[0]) or scale[0] < 0 or int(nibbles.max(initial=0)) > 2 * STEPS:
        return None
    codes = nibbles[:dim].astype(np.int8) - STEPS
    return _values(codes[None, :], scale)[0]
