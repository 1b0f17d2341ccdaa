"""Benchmark: ingestion speed, search latency, cold start, memory and recall. Prints a Markdown table.

    .venv/bin/python benchmarks/ingest_search.py            # fresh index of PubMedQA (1,000) + seeds (95)
    .venv/bin/python benchmarks/ingest_search.py --data-dir data-bench --skip-ingest

Ingestion and the cold search run as `rag` subprocesses, so their wall time and peak memory are what a user sees.
The one-time ONNX export of the embedding model is done first and reported on its own line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBMED = ROOT / "eval" / "datasets" / "pubmedqa"
SEEDS_QA = ROOT / "eval" / "datasets" / "seeds_qa.jsonl"
MODES = ("dense", "keyword", "hybrid")


def environment(data: Path, models: Path | None, **extra: str) -> dict[str, str]:
    """This process's environment without the caller's RAG_/CHROMA_/OPENAI_ settings, for an index in `data` (and
    the model cache `models`; None: the user's, as a new user has it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CHROMA_", "OPENAI_"))}
    cache = {"RAG_MODEL_CACHE": str(models)} if models else {}
    return {**env, "RAG_DATA_DIR": str(data), **cache, **extra}


def run(args: list[str], env: dict[str, str], module: str = "rag.frontends.cli") -> tuple[float, int, str]:
    """Wall seconds, peak RSS (MiB) of this one child process, and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", module, *args], env=env, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage, unlike RUSAGE_CHILDREN
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{module} {' '.join(args)} failed: {err.read().decode().strip()}")
        return elapsed, usage.ru_maxrss // 1024, out.read().decode()


def questions(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [q for q in rows if q.get("answerable", True) and q.get("gold")]


def recall(retriever, qs: list[dict], mode: str) -> dict[str, float]:
    from rag.records import Query

    totals = {1: 0.0, 5: 0.0, 10: 0.0}
    for q in qs:
        ranked = [r.doc_id for r in retriever.search(Query(q["question"], 10, mode=mode))]
        for k in totals:
            totals[k] += len(set(ranked[:k]) & set(q["gold"])) / len(q["gold"])
    return {f"recall@{k}": v / len(qs) for k, v in totals.items()}


def percentile(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, help="index to use (default: a fresh temporary one)")
    parser.add_argument("--skip-ingest", action="store_true", help="use the index in --data-dir as it is")
    parser.add_argument("--queries", type=int, default=200, help="warm searches to time")
    args = parser.parse_args()

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="rag-bench-"))
    env = {**os.environ, "RAG_DATA_DIR": str(data_dir)}
    rows: list[tuple[str, str]] = []

    if not args.skip_ingest:
        seconds, _, _ = run([], env, module="rag.index.embedder")  # the one-time ONNX export, in its own process
        rows.append(("embedding model preparation (once per data dir)", f"{seconds:.1f} s"))
        n_docs = sum(1 for _ in (PUBMED / "corpus.jsonl").open()) + 95
        seconds, peak, out = run(["ingest", str(PUBMED / "corpus.jsonl"), str(ROOT / "seeds")], env)
        rows.append(("ingest PubMedQA 1,000 + seeds 95", f"{seconds:.1f} s, {n_docs / seconds:.1f} abstracts/s"))
        rows.append(("ingest result", out.strip()))
        rows.append(("ingest peak memory (RSS)", f"{peak} MiB"))
        seconds, _, out = run(["ingest", str(PUBMED / "corpus.jsonl"), str(ROOT / "seeds")], env)
        rows.append(("re-ingest of the same corpus", f"{seconds:.1f} s ({out.strip()})"))

    cold = [run(["search", "Is laparoscopic surgery safe for elderly patients?"], env) for _ in range(3)]
    rows.append(("cold `rag search` wall time (median of 3)", f"{statistics.median(c[0] for c in cold):.2f} s"))
    rows.append(("cold `rag search` peak memory (RSS)", f"{max(c[1] for c in cold)} MiB"))

    from rag.index.retriever import Retriever
    from rag.settings import Settings

    retriever = Retriever(Settings(data_dir=data_dir))
    pubmed_qs, seeds_qs = questions(PUBMED / "dev_questions.jsonl"), questions(SEEDS_QA)
    retriever.search("warm-up question")
    timings = []
    for q in (pubmed_qs * 2)[: args.queries]:
        start = time.perf_counter()
        retriever.search(q["question"])
        timings.append((time.perf_counter() - start) * 1000)
    rows.append(
        (f"warm hybrid search latency ({len(timings)} queries)",
         f"p50 {percentile(timings, 50):.1f} ms, p95 {percentile(timings, 95):.1f} ms")
    )  # fmt: skip
    rows.append(
        ("benchmark process peak memory (RSS)", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")
    )

    print(f"\n## Ingest and search ({os.cpu_count()} cores, index in {data_dir})\n")
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    print("\n## Recall of gold abstracts\n")
    print("| question set | retriever | recall@1 | recall@5 | recall@10 |\n|---|---|---|---|---|")
    for name, qs in ((f"PubMedQA dev ({len(pubmed_qs)})", pubmed_qs), (f"seeds_qa ({len(seeds_qs)})", seeds_qs)):
        for mode in MODES:
            r = recall(retriever, qs, mode)
            print(f"| {name} | {mode} | {r['recall@1']:.3f} | {r['recall@5']:.3f} | {r['recall@10']:.3f} |")


if __name__ == "__main__":
    main()
