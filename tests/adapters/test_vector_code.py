"""The stored vector (``vector_code``): 4 bits a dimension and a scale, the same bits wherever it is kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mdmem.adapters import vector_code


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@settings(max_examples=300, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 40)), elements=st.floats(-1, 1, width=32)))
def test_settling_twice_changes_nothing_and_the_bytes_give_back_the_very_vector(x: np.ndarray) -> None:
    once = vector_code.settle(x)
    assert np.array_equal(vector_code.settle(once), once)
    assert np.array_equal(once.astype(np.float16).astype(np.float32), once)  # what the cache keeps: these bits
    encoded = vector_code.encode(once)
    assert encoded == vector_code.encode(x)  # the same codes from the vector or its settled form
    for raw, row in zip(encoded, once):
        assert len(raw) == vector_code.width(x.shape[1])
        decoded = vector_code.decode(raw, x.shape[1])
        assert decoded is not None and np.array_equal(decoded, row)


def test_a_settled_vector_keeps_its_direction_and_its_zeros() -> None:
    x = unit(np.random.default_rng(3), 500, 384)
    y = vector_code.settle(x)
    cos = np.sum(x * y, axis=1) / np.linalg.norm(y, axis=1)
    assert cos.min() > 0.97 and cos.mean() > 0.99  # MiniLM's own vectors: 0.991 on average (docs/retrieval.md)
    sparse = np.zeros((1, 64), dtype=np.float32)
    sparse[0, [3, 40]] = [0.6, -0.8]
    settled = vector_code.settle(sparse)
    assert np.count_nonzero(settled) == 2 and np.allclose(settled, sparse, atol=0.8 / 7 / 2)  # zeros stay zero
    assert not vector_code.settle(np.zeros((1, 8), dtype=np.float32)).any()
    assert vector_code.width(384) == 194


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"\x00\x7c" + bytes(192), "an infinite scale"),
        (b"\x00\xbc" + bytes([0x77] * 192), "a negative scale"),
        (b"\x00\x3c" + bytes([0xF7] * 192), "a code past the steps"),
        (b"\x00\x3c" + bytes(191), "a vector one byte short"),
    ],
)
def test_bytes_that_are_no_stored_vector_are_refused(raw: bytes, why: str) -> None:
    assert vector_code.decode(raw, 384) is None, why
