"""Local Hugging Face model folders on torch + transformers (``pip install 'mdmem[torch]'``): the
embedding runtime for models mdmem cannot prepare without torch, their ONNX export, and the optional
cross-encoder reranker. Also the check every model folder passes before anything loads it.

Nothing here imports torch or transformers until a function runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

ONNX_OPSET = 17


def check_model_folder(path: Path, setting: str) -> None:
    """Refuse a model folder whose loading could run code: mdmem.toml comes with the vault,
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
            raise ConfigError(
                f"{setting}: {path} asks to run its own code ({name} has auto_map); mdmem never "
                "loads custom model code. Use a model that runs with stock transformers."
            )
    if not any(path.glob("*.safetensors")):
        raise ConfigError(
            f"{setting}: {path} has no .safetensors weights; mdmem does not load pickled weights "
            "(pytorch_model.bin can run code when loaded). Use a model folder with model.safetensors."
        )


def torch_runner(path: Path, max_length: int, threads: int) -> Callable[[list[str]], np.ndarray]:
    """Mean-pooled, L2-normalised vectors from a local transformers model on torch."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    model = AutoModel.from_pretrained(str(path), local_files_only=True, trust_remote_code=False, use_safetensors=True)
    model.eval()

    def run(batch: list[str]) -> np.ndarray:
        import numpy as np

        enc = tokenizer(batch, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy().astype(np.float32)

    return run


def export_with_torch(source: Path, tmp: Path, max_length: int, check_texts: list[str]) -> dict[str, Any]:
    """Export ``source`` into the folder ``tmp`` through torch.onnx (opset 17) as model.onnx and
    tokenizer.json, fused where it is a BERT (``embed_onnx.fuse_bert``) and checked against torch on
    ``check_texts`` (max abs diff < 1e-4). Returns what the export's meta.json should say of it."""
    import json
    import warnings

    import numpy as np
    import onnxruntime
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from .embed_onnx import OnnxRunner, fuse_bert

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True, trust_remote_code=False)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"{source} has no fast tokenizer (tokenizer.json); it runs on torch only.")
    try:  # eager attention exports as plain MatMul/Softmax, which onnxruntime's optimizer can fuse
        model = AutoModel.from_pretrained(
            str(source),
            local_files_only=True,
            trust_remote_code=False,
            use_safetensors=True,
            attn_implementation="eager",
        )
    except (ValueError, TypeError):
        model = AutoModel.from_pretrained(
            str(source), local_files_only=True, trust_remote_code=False, use_safetensors=True
        )
    model.eval()
    inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tokenizer.model_input_names]

    class Wrapper(torch.nn.Module):  # transformers 5 models want keyword arguments
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> Any:
            return self.model(**dict(zip(inputs, args))).last_hidden_state

    sample = tokenizer(check_texts[:2], padding=True, return_tensors="pt")
    axes = {n: {0: "batch", 1: "tokens"} for n in [*inputs, "last_hidden_state"]}
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Wrapper(),
            tuple(sample[n] for n in inputs),
            str(tmp / "raw.onnx"),
            input_names=inputs,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
    meta: dict[str, Any] = {
        "inputs": inputs,
        "pad_id": tokenizer.pad_token_id,
        "pad_token": tokenizer.pad_token,
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
    }
    (tmp / "meta.json").write_text(json.dumps(meta))
    expected = torch_runner(source, max_length, 1)(check_texts)
    config = json.loads((source / "config.json").read_text())
    diff = float("inf")
    for name in ("fused.onnx", "raw.onnx"):  # the fused model if it fuses and keeps the vectors
        if name == "raw.onnx" or fuse_bert(tmp / "raw.onnx", tmp / name, config):
            diff = float(np.abs(OnnxRunner(tmp, name, 1, max_length)(check_texts) - expected).max())
            if diff < 1e-4:
                os.replace(tmp / name, tmp / "model.onnx")
                meta["fused"] = name == "fused.onnx"
                break
    if not diff < 1e-4:
        raise ValueError(f"the ONNX model's vectors differ from torch's by {diff:.1e}")
    for f in ("raw.onnx", "fused.onnx"):
        (tmp / f).unlink(missing_ok=True)
    return meta


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
        self._model: Any = None  # transformers' model and tokenizer, loaded on first use
        self._tokenizer: Any = None

    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(max(1, self.threads))
        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True, trust_remote_code=False)
        model = AutoModelForSequenceClassification.from_pretrained(
            str(self.path), local_files_only=True, trust_remote_code=False, use_safetensors=True
        )
        model.eval()
        self._model = model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        import torch

        if not passages:
            return []
        if self._model is None:
            self._load()
        assert self._model is not None and self._tokenizer is not None
        enc = self._tokenizer(
            [query] * len(passages),
            list(passages),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        with torch.inference_mode():
            logits = self._model(**enc).logits
        if logits.shape[-1] == 1:
            scores = torch.sigmoid(logits[:, 0])
        else:  # two-class heads: probability of "relevant"
            scores = torch.softmax(logits, dim=-1)[:, -1]
        return [float(s) for s in scores]
