"""Making the exported model fast on onnxruntime: operator fusion that keeps its vectors, and
the opt-in int8 weights that change them.

Both run once per machine, right after torch's export (``embed_torch.export_with_torch``), with the tools
that ship inside the onnxruntime wheel and the ``onnx`` package; neither imports torch. The bundled
MiniLM needs neither: ``bert_onnx`` writes its graph already fused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from pathlib import Path
from typing import Any


def fuse_bert(src: Path, dst: Path, config: dict[str, Any]) -> bool:
    """Write ``src`` with BERT's operators fused (EmbedLayerNormalization, Attention, BiasGelu,
    SkipLayerNormalization) to ``dst``, fp32 throughout. Returns False, writing nothing, for a model
    that is not a BERT or whose attention did not fuse (the unfused export is then used as it is).

    The fused model gives the same vectors (max abs diff ~2e-7 on MiniLM), takes less memory while
    embedding and runs a little faster (docs/benchmarks.md, Embedding)."""
    if config.get("model_type") != "bert":
        return False
    from onnxruntime.transformers.optimizer import optimize_model

    with _quiet():
        model = optimize_model(
            str(src),
            model_type="bert",
            num_heads=int(config["num_attention_heads"]),
            hidden_size=int(config["hidden_size"]),
            opt_level=0,
        )
        stats = model.get_fused_operator_statistics()
        if not stats.get("Attention") or not stats.get("EmbedLayerNormalization"):
            return False
        model.save_model_to_file(str(dst))
    return True


def quantize_int8(src: Path, dst: Path) -> None:
    """int8 weights for the model's matrix products (dynamic quantization, one scale per output
    channel); the token embeddings stay fp32. Per-tensor int8 of everything moved MiniLM's vectors
    (cosine to fp32 0.93 on average, 0.71 at worst) and cost paraphrase recall; per channel keeps
    0.992 (worst 0.98) and still halves the CPU time per chunk."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        with _quiet():
            quantize_dynamic(
                str(src),
                str(tmp),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul", "Attention"],
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        os.replace(tmp, dst)  # whole or absent: a killed quantization leaves only a temp file
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def _quiet() -> Any:
    """onnxruntime's tools log every unfused pattern and warn about shape inference: not the user's business."""
    loggers = [logging.getLogger(n) for n in ("onnxruntime", "onnxruntime.transformers", "fusion", "")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


class OnnxRunner:
    """A prepared model on onnxruntime, tokenised from the tokenizer.json saved beside it (the one
    transformers itself reads): the same ids, the same pooling, so the same vectors as torch."""

    def __init__(self, folder: Path, model_file: str, threads: int, max_length: int) -> None:
        import json

        import onnxruntime as ort

        meta = json.loads((folder / "meta.json").read_text())
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning: on a busy 2-core machine 2 spinning threads embedded
        # 26.5 chunks per CPU-second, sleeping ones 35 (1 thread: 40); the hooks' jobs share the machine.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / model_file), opts, providers=["CPUExecutionProvider"])
        self.padding = {"pad_id": int(meta["pad_id"]), "pad_token": str(meta["pad_token"])}
        self.tokenizer: Any
        try:  # the Rust tokenizer where it is installed (faster); else mdmem's own, with the same ids
            from tokenizers import Tokenizer
        except ImportError:
            from .wordpiece import WordPiece

            self.tokenizer = WordPiece.from_file(folder / "tokenizer.json", max_length)
            self.tokenizer.pad_id = self.padding["pad_id"]
        else:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self.tokenizer.enable_truncation(max_length)
            self.tokenizer.enable_padding(**self.padding)
        self.inputs = list(meta["inputs"])

    def __call__(self, batch: list[str]) -> Any:
        import numpy as np

        enc = self.tokenizer.encode_batch(batch)
        arrays = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        hidden = self.session.run(None, {name: arrays[name] for name in self.inputs})[0]
        mask = arrays["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens each text gives the model (after truncation, before padding)."""
        if not hasattr(self.tokenizer, "no_padding"):
            return [len(self.tokenizer.ids(t)) for t in texts]
        self.tokenizer.no_padding()
        try:
            return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]
        finally:
            self.tokenizer.enable_padding(**self.padding)
