"""Benchmark: the embedding model's speed per precision, with and without ONNX Runtime's slow fusions. Prints a table.

    .venv/bin/python benchmarks/embedding_speed.py            # 400 PubMedQA abstracts cut to a 700-character chunk

One session on one thread, one text per run, as each embedding worker of an ingest runs it. For each precision:
milliseconds per text with the sessions as the embedder makes them (without `SLOW_FUSIONS`) and with every ORT
fusion, the speed-up, and the vectors' agreement (mean and least cosine, against fp32 as the embedder runs it).
Both variants alternate over `--rounds`, so a busy machine slows them alike.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from rag.index.embedder import Embedder
from rag.index.models import load_embedder
from rag.onnx import SLOW_FUSIONS, bundled_model_dir, cpu_session

ROOT = Path(__file__).resolve().parents[1]
PUBMED = ROOT / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"


def timed_vectors(embedder: Embedder, session, texts: list[str]) -> tuple[float, np.ndarray]:  # type: ignore[no-untyped-def]
    """Seconds per text and the vectors, embedding one text per run on `session`."""
    start = time.perf_counter()
    vectors = np.concatenate([embedder._embed_batch(session, [text]) for text in texts])
    return (time.perf_counter() - start) / len(texts), vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model-cache", type=Path, help="where the ONNX exports are kept (default: a new folder)")
    args = parser.parse_args()
    lines = PUBMED.read_text().splitlines()[: args.texts]
    texts = [json.loads(line)["abstract"][:700] for line in lines]
    cache = args.model_cache or Path(tempfile.mkdtemp(prefix="rag-embedding-speed-"))
    print(f"{len(texts)} texts, one per run, one thread; model {bundled_model_dir().parent.name}; left out: "
          f"{', '.join(SLOW_FUSIONS)}\n")  # fmt: skip
    print("| precision | ms/text, as embedded | ms/text, every fusion | speed-up | cosine to fp32 (mean / least) |")
    print("|---|---|---|---|---|")
    reference = None
    for precision in ("fp32", "int8"):
        embedder = load_embedder("", cache, precision=precision, workers=1)
        embedder.threads = 1  # as in an ingest's embedding worker
        ours, fused = embedder.sessions[0], cpu_session(embedder.onnx_path, 1, left_out=())  # every fusion
        timed_vectors(embedder, ours, texts[:20]), timed_vectors(embedder, fused, texts[:20])  # warm up both
        times: dict[str, list[float]] = {"ours": [], "fused": []}
        for _ in range(args.rounds):
            seconds, vectors = timed_vectors(embedder, ours, texts)
            times["ours"].append(seconds)
            times["fused"].append(timed_vectors(embedder, fused, texts)[0])
        reference = vectors if reference is None else reference
        cosine = (vectors * reference).sum(axis=1)
        best_ours, best_fused = min(times["ours"]) * 1000, min(times["fused"]) * 1000
        print(f"| {embedder.precision} | {best_ours:.2f} | {best_fused:.2f} | {best_fused / best_ours:.2f}x | "
              f"{cosine.mean():.4f} / {cosine.min():.4f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
