"""Benchmark: how much of the exact nearest chunks Chroma's HNSW search finds, and whether it finds the same in
every process, at several search widths (`ef_search`; the project's is rag/index/store.py EF_SEARCH). Prints one
Markdown table.

    .venv/bin/rag ingest ../shared/datasets/scifact/corpus.jsonl eval/datasets/pubmedqa/corpus.jsonl --data-dir IDX
    .venv/bin/python benchmarks/dense_recall.py --data-dir IDX          # about a minute at 20,000 chunks

The questions are the first 150 PubMedQA dev questions and the lay-worded tuning questions; each is searched for
its first 50 chunks (the retriever's pool) in three separate processes per width. Exact = every stored vector
scored in numpy. An embedded index only (a Chroma server keeps the width it loaded). The benchmark holds the
index's writer lock and sets its own width back when it ends.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POOL = 50
PROCESSES = 3


def settings_for(data_dir: Path):  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return Settings(_env_file=None, data_dir=data_dir, chroma_host=None)


def collection(data_dir: Path):  # type: ignore[no-untyped-def]
    from rag.index import store

    return store.open_collection(settings_for(data_dir), create=False)


def question_vectors(data_dir: Path) -> list[list[float]]:
    from rag.index.models import embedder_for
    from rag.index.store import index_precision

    datasets = ROOT / "eval" / "datasets"
    rows = (datasets / "pubmedqa" / "dev_questions.jsonl").read_text().splitlines()[:150]
    rows += (datasets / "lay_questions" / "tune.jsonl").read_text().splitlines()
    embedder = embedder_for(settings_for(data_dir), index_precision(collection(data_dir)))
    return embedder.embed([json.loads(r)["question"] for r in rows]).tolist()


def worker(data_dir: Path, vectors_file: Path) -> None:
    """In its own process: each question's first POOL chunk ids by HNSW, and the search times (ms), as JSON."""
    found = collection(data_dir)
    ids, times = [], []
    for vector in json.loads(vectors_file.read_text()):
        start = time.perf_counter()
        ids.append(found.query(query_embeddings=[vector], n_results=POOL, include=[])["ids"][0])
        times.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"ids": ids, "ms": times}))


def exact(data_dir: Path, vectors: list[list[float]]) -> list[list[str]]:
    import numpy as np

    found = collection(data_dir)
    ids, parts, offset = [], [], 0
    while page := found.get(include=["embeddings"], limit=5000, offset=offset):
        if not page["ids"]:
            break
        ids += page["ids"]
        parts.append(np.asarray(page["embeddings"], dtype=np.float32))
        offset += len(page["ids"])
    stored = np.concatenate(parts)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    return [[ids[i] for i in np.argsort(-(stored @ np.asarray(v, dtype=np.float32)))[:POOL]] for v in vectors]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="an index to search (its width is restored)")
    parser.add_argument("--widths", default="100,800", help="search widths to compare (default: 100,800)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.data_dir, args.worker)

    from rag.index.ingest import one_writer

    with one_writer(settings_for(args.data_dir)), tempfile.TemporaryDirectory() as work:
        compare(args.data_dir, [int(w) for w in args.widths.split(",")], Path(work) / "questions.json")


def compare(data_dir: Path, widths: list[int], vectors_file: Path) -> None:
    vectors = question_vectors(data_dir)
    vectors_file.write_text(json.dumps(vectors))
    truth = exact(data_dir, vectors)
    found = collection(data_dir)
    own = found.configuration_json["hnsw"]["ef_search"]
    print(f"\n## HNSW against exact search: {found.count():,} chunks, {len(vectors)} questions, first {POOL}\n")
    print("| ef_search | recall@10 | recall@50 | questions whose first 50 differ between 3 processes | search p50 |")
    print("|---|---|---|---|---|")
    try:
        for width in widths:
            found.modify(configuration={"hnsw": {"ef_search": width}})
            runs = [json.loads(subprocess.run(
                [sys.executable, __file__, "--data-dir", str(data_dir), "--worker", str(vectors_file)],
                check=True, capture_output=True, text=True).stdout) for _ in range(PROCESSES)]  # fmt: skip
            first = runs[0]["ids"]
            at10 = statistics.fmean(len(set(f[:10]) & set(t[:10])) / 10 for f, t in zip(first, truth, strict=True))
            at50 = statistics.fmean(len(set(f) & set(t)) / POOL for f, t in zip(first, truth, strict=True))
            differ = sum(len({tuple(run["ids"][i]) for run in runs}) > 1 for i in range(len(vectors)))
            p50 = statistics.median(ms for run in runs for ms in run["ms"])
            print(f"| {width} | {at10:.4f} | {at50:.4f} | {differ} of {len(vectors)} | {p50:.1f} ms |", flush=True)
    finally:
        found.modify(configuration={"hnsw": {"ef_search": own}})


if __name__ == "__main__":
    main()
