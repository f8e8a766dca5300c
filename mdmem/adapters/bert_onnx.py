"""A BERT encoder's ONNX model written from its safetensors weights, with numpy alone: no torch, no
transformers, not even the ``onnx`` package (the few protobuf messages a model needs are encoded here).

This is how the bundled MiniLM reaches onnxruntime on a default install (once per machine). The
graph is the one torch's export became after onnxruntime's BERT fusion, so the vectors are the ones
the torch export gave (identical on MiniLM; the tests compare with torch itself).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_FLOAT_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "bf16"}
_FLOAT, _INT32, _INT64 = 1, 6, 7  # onnx.TensorProto.DataType
_ATTR_FLOAT, _ATTR_INT = 1, 2  # onnx.AttributeProto.AttributeType
MS = "com.microsoft"


def read_safetensors(path: Path) -> dict[str, Any]:
    """The floating-point tensors of a ``.safetensors`` file as float32 numpy arrays. The format: an
    8-byte little-endian header length, a JSON header (name: dtype, shape, byte range), the raw data."""
    import numpy as np

    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        if not 2 <= size <= 100_000_000:
            raise ValueError(f"{path} is not a safetensors file")
        header = json.loads(fh.read(size))
        data = fh.read()
    tensors = {}
    for name, info in header.items():
        dtype = _FLOAT_DTYPES.get(info.get("dtype", "")) if isinstance(info, dict) else None
        if dtype is None:
            continue  # __metadata__, integer buffers (position ids): not weights
        start, end = info["data_offsets"]
        raw = data[start:end]
        if dtype == "bf16":  # bfloat16 is the top half of a float32
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=dtype).astype(np.float32)
        tensors[name] = arr.reshape(info["shape"])
    return tensors


def buildable(config: dict[str, Any]) -> bool:
    """Whether ``build`` can write this model: a BERT encoder with absolute positions and exact (erf)
    GELU, as all-MiniLM-L6-v2, bge-small and most sentence-transformers models are."""
    try:
        return (
            config.get("model_type") == "bert"
            and config.get("hidden_act", "gelu") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and int(config["hidden_size"]) % int(config["num_attention_heads"]) == 0
            and int(config["num_hidden_layers"]) > 0
        )
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False


def build(weights: Path, dst: Path, config: dict[str, Any]) -> None:
    """Write ``weights`` (a BERT's model.safetensors) as an ONNX model to ``dst``.

    EmbedLayerNormalization, then per layer Attention (Q, K and V in one matrix), the output matrix and
    SkipLayerNormalization, the feed-forward matrices around BiasGelu and SkipLayerNormalization:
    onnxruntime's fused operators. Inputs (int64 input_ids, attention_mask, token_type_ids) and output
    (last_hidden_state) are those of the torch export, so the same runner serves both."""
    import numpy as np

    found = read_safetensors(weights)
    prefix = next((p for p in ("", "bert.", "model.") if f"{p}embeddings.word_embeddings.weight" in found), None)
    if prefix is None:
        raise ValueError(f"{weights} holds no BERT embeddings (embeddings.word_embeddings.weight)")

    def w(name: str) -> Any:
        return found[prefix + name]

    heads = int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    inits: list[tuple[str, Any]] = []
    nodes: list[bytes] = []

    def init(name: str, value: Any) -> str:
        inits.append((name, np.ascontiguousarray(value, dtype=np.float32)))
        return name

    for name in ("input_ids", "attention_mask", "token_type_ids"):
        nodes.append(_node("Cast", [name], [f"{name}_int32"], ints={"to": _INT32}))
    e = "embeddings."
    nodes.append(
        _node(
            "EmbedLayerNormalization",
            [
                "input_ids_int32",
                "token_type_ids_int32",
                init("word", w(e + "word_embeddings.weight")),
                init("position", w(e + "position_embeddings.weight")),
                init("token_type", w(e + "token_type_embeddings.weight")),
                init("embed_ln_w", w(e + "LayerNorm.weight")),
                init("embed_ln_b", w(e + "LayerNorm.bias")),
                "attention_mask_int32",
            ],
            ["hidden_0", "mask_index"],
            domain=MS,
            floats={"epsilon": eps},
        )
    )
    hidden = "hidden_0"
    layers = int(config["num_hidden_layers"])
    for i in range(layers):
        p, n = f"encoder.layer.{i}.", f"l{i}_"
        qkv = np.concatenate([w(f"{p}attention.self.{x}.weight").T for x in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w(f"{p}attention.self.{x}.bias") for x in ("query", "key", "value")])
        nodes.append(
            _node(
                "Attention",
                [hidden, init(n + "qkv_w", qkv), init(n + "qkv_b", qkv_b), "mask_index"],
                [n + "attn"],
                domain=MS,
                ints={"num_heads": heads},
            )
        )
        nodes.append(
            _node("MatMul", [n + "attn", init(n + "ao_w", w(p + "attention.output.dense.weight").T)], [n + "ao"])
        )
        nodes.append(
            _node(
                "SkipLayerNormalization",
                [
                    n + "ao",
                    hidden,
                    init(n + "ao_ln_w", w(p + "attention.output.LayerNorm.weight")),
                    init(n + "ao_ln_b", w(p + "attention.output.LayerNorm.bias")),
                    init(n + "ao_b", w(p + "attention.output.dense.bias")),
                ],
                [n + "mid"],
                domain=MS,
                floats={"epsilon": eps},
            )
        )
        nodes.append(_node("MatMul", [n + "mid", init(n + "in_w", w(p + "intermediate.dense.weight").T)], [n + "in"]))
        nodes.append(
            _node("BiasGelu", [n + "in", init(n + "in_b", w(p + "intermediate.dense.bias"))], [n + "gelu"], domain=MS)
        )
        nodes.append(_node("MatMul", [n + "gelu", init(n + "out_w", w(p + "output.dense.weight").T)], [n + "out"]))
        out = "last_hidden_state" if i == layers - 1 else f"hidden_{i + 1}"
        nodes.append(
            _node(
                "SkipLayerNormalization",
                [
                    n + "out",
                    n + "mid",
                    init(n + "out_ln_w", w(p + "output.LayerNorm.weight")),
                    init(n + "out_ln_b", w(p + "output.LayerNorm.bias")),
                    init(n + "out_b", w(p + "output.dense.bias")),
                ],
                [out],
                domain=MS,
                floats={"epsilon": eps},
            )
        )
        hidden = out
    dims: list[int | str] = ["batch", "tokens"]
    inputs = [_value_info(name, _INT64, dims) for name in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [_value_info("last_hidden_state", _FLOAT, [*dims, int(config["hidden_size"])])]
    _write_model(dst, nodes, inits, inputs, outputs)


# -- protobuf, as much of onnx.proto as a model needs ----------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _node(
    op: str,
    inputs: Iterable[str],
    outputs: Iterable[str],
    domain: str = "",
    ints: dict[str, int] | None = None,
    floats: dict[str, float] | None = None,
) -> bytes:
    """A NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7."""
    attrs = [
        _bytes(5, _str(1, k) + _varint(2 << 3 | 5) + struct.pack("<f", v) + _int(20, _ATTR_FLOAT))
        for k, v in (floats or {}).items()
    ]
    attrs += [_bytes(5, _str(1, k) + _int(3, v) + _int(20, _ATTR_INT)) for k, v in (ints or {}).items()]
    outs = list(outputs)
    return (
        b"".join(_str(1, i) for i in inputs)
        + b"".join(_str(2, o) for o in outs)
        + _str(3, f"{op}_{outs[0]}")
        + _str(4, op)
        + b"".join(attrs)
        + (_str(7, domain) if domain else b"")
    )


def _value_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    """A ValueInfoProto: name 1, type 2 → TypeProto.tensor_type 1 → elem_type 1, shape 2 → dim 1 →
    dim_value 1 or dim_param 2."""
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
    return _str(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def _write_model(
    dst: Path, nodes: list[bytes], inits: list[tuple[str, Any]], inputs: list[bytes], outputs: list[bytes]
) -> None:
    """A ModelProto (ir_version 1, opset_import 8, producer_name 2, graph 7) written piece by piece: the
    weights are written as they are, never joined into one more copy of the model in memory."""
    tensors = []
    for name, arr in inits:  # TensorProto: dims 1 (packed), data_type 2, name 8, raw_data 9
        head = _bytes(1, b"".join(_varint(d) for d in arr.shape)) + _int(2, _FLOAT) + _str(8, name)
        raw_head = _varint(9 << 3 | 2) + _varint(arr.nbytes)
        size = len(head) + len(raw_head) + arr.nbytes
        tensors.append((_varint(5 << 3 | 2) + _varint(size) + head + raw_head, arr))
    rest = (
        b"".join(_bytes(1, n) for n in nodes)
        + _str(2, "bert")
        + b"".join(_bytes(11, i) for i in inputs)
        + b"".join(_bytes(12, o) for o in outputs)
    )
    graph_size = len(rest) + sum(len(h) + a.nbytes for h, a in tensors)
    opsets = _bytes(8, _int(2, 17)) + _bytes(8, _str(1, MS) + _int(2, 1))
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(_int(1, 8) + opsets + _str(2, "mdmem") + _varint(7 << 3 | 2) + _varint(graph_size) + rest)
        for head, arr in tensors:
            fh.write(head)
            fh.write(arr.tobytes())
    os.replace(tmp, dst)
