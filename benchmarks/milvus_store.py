"""Benchmark: RAG_STORE=milvus beside the default store (Chroma + the local bm25s index), side by side in one run on
one machine. Prints one Markdown table.

    .venv/bin/python benchmarks/milvus_store.py              # 100,000 abstracts in each store (about 1.5 hours)
    .venv/bin/python benchmarks/milvus_store.py --n 10000    # the same at 10,000

- Quality: SciFact alone (5,183 abstracts; the shared train claims that cite them): nDCG@10; PubMedQA (1,000) +
  seeds: recall@1 of the 500 PubMedQA dev questions; hybrid, in each store.
- Scale: `--n` abstracts (scale.py's deterministic corpus) ingested by `rag ingest` into each store: time, peak
  memory of the whole process tree (the `rag` process, its embedding workers, milvus-lite's server), disk; warm
  hybrid search p50/p95 (200 SciFact claims, one process); cold `rag search` (median of 3).
- A server: `rag milvus-server` (milvus-lite's) with PubMedQA + seeds; two `rag serve` replicas and an ingest
  worker: answers compared across replicas, seconds from the worker's end until its paper is found on both, and
  seconds for a killed replica to serve again.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ingest_search import percentile, questions, run
from scale import (
    PUBMED,
    ROOT,
    SCIFACT,
    build_corpus,
    claims,
    disk_mib,
    environment,
    median_wall,
    quality,
    row,
    write_jsonl,
)

sys.path.insert(0, str(ROOT / "tests"))  # the tests' helpers that start real servers
from conftest import free_port, start_milvus, start_rag

STORES = {"chroma": {}, "milvus": {"RAG_STORE": "milvus"}}


def pubmed_recall_at_1(data: Path, models: Path, **settings: str) -> float:
    from rag.index.retriever import Retriever
    from rag.records import Query
    from rag.settings import Settings

    retriever = Retriever(Settings(_env_file=None, data_dir=data, model_cache=models, **settings))
    asked = questions(PUBMED.parent / "dev_questions.jsonl")
    hits = sum(retriever.search(Query(q["question"], 1))[0].doc_id in q["gold"] for q in asked)
    return hits / len(asked)


def side_by_side_quality(work: Path, models: Path) -> None:
    for store, extra in STORES.items():
        setting = {"store": store}
        alone = environment(work / f"scifact-{store}", models, **extra)
        run(["ingest", str(SCIFACT / "corpus.jsonl")], alone)
        ndcg, _, _ = quality(work / f"scifact-{store}", models, **setting)
        small = environment(work / f"pubmed-{store}", models, **extra)
        run(["ingest", str(PUBMED), str(ROOT / "seeds")], small)
        r1 = pubmed_recall_at_1(work / f"pubmed-{store}", models, **setting)
        row(f"{store}: SciFact alone nDCG@10 / PubMedQA dev recall@1 (500)", f"{ndcg:.3f} / {r1:.3f}")


def tree_rss_mib(root: int) -> int:
    """The resident memory of a process and all its descendants (milvus-lite's server, embedding workers), MiB."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        grown = tree | {pid for pid, parent in parents.items() if parent in tree}
        grew, tree = grown != tree, grown
    total = 0
    for pid in tree:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total // 1024


def run_sampled(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds of a `rag` command and the peak memory of its process tree, sampled every half second."""
    import subprocess
    import threading

    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "rag.frontends.cli", *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mib(proc.pid))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"rag {' '.join(args)} failed: {err.decode().strip()}")
    return time.perf_counter() - start, peak[0]


def at_scale(work: Path, models: Path, n: int, seed: int, stores: list[str]) -> None:
    corpus, _ = build_corpus(n, seed, 0)
    big = write_jsonl(work / "corpus.jsonl", corpus)
    for store in stores:
        env = environment(work / f"big-{store}", models, **STORES[store])
        seconds, peak = run_sampled(["ingest", str(big)], env)
        row(f"{store}: ingest {n:,} abstracts (time, rate, peak memory of the process tree)",
            f"{seconds / 60:.1f} min, {n / seconds:.1f} abstracts/s, {peak:,} MiB")  # fmt: skip
        row(f"{store}: index on disk", f"{disk_mib(work / f'big-{store}'):,.0f} MiB")
        # before this process opens the index: the embedded Milvus serves one process at a time
        row(f"{store}: cold `rag search` (median of 3)", f"{median_wall(['search', 'gene expression'], env):.2f} s")
        _, _, times = quality(work / f"big-{store}", models, store=store)
        warm = times[10:210]
        row(f"{store}: warm hybrid search (200 SciFact claims)",
            f"p50 {statistics.median(warm):.1f} ms, p95 {percentile(warm, 95):.1f} ms")  # fmt: skip
        weights_rows(work / f"big-{store}", models, store)


WEIGHTS_BUDGET = 300.0  # seconds: a Milvus server (or milvus-lite before it kept counts) counts a word per query


def weights_rows(data: Path, models: Path, store: str) -> None:
    first, weights, asked = weights_ms(data, models, store)
    row(f"{store}: the gate's term weights, a process's first question (an index made without counts is counted)",
        f"{first / 1000:.1f} s")  # fmt: skip
    row(f"{store}: the gate's term weights (idf of a question's words), p50 of {asked}", f"{weights:.2f} ms")


def weights_ms(data: Path, models: Path, store: str) -> tuple[float, float, int]:
    """The time of the gate's term weights for a first SciFact claim, their median time for up to 20 more, and how
    many were timed: as many as WEIGHTS_BUDGET allows, at least 3."""
    from rag.index.library import Library
    from rag.settings import Settings

    library = Library(Settings(_env_file=None, data_dir=data, model_cache=models, store=store))
    first, *more = claims()[:21]
    began = time.perf_counter()
    library.term_weights(first["question"])
    took = (time.perf_counter() - began) * 1000
    times: list[float] = []
    began = time.perf_counter()
    for claim in more:
        if len(times) >= 3 and time.perf_counter() - began > WEIGHTS_BUDGET:
            break
        start = time.perf_counter()
        library.term_weights(claim["question"])
        times.append((time.perf_counter() - start) * 1000)
    return took, statistics.median(times), len(times)


def search(base: str, query: str) -> list[str]:
    import httpx

    found = httpx.post(f"{base}/v1/search", json={"query": query, "k": 5}, timeout=60).json()
    return [r["doc_id"] for r in found["results"]]


def replicas(work: Path, models: Path) -> None:
    port = free_port()
    server = start_milvus(work / "server.db", port, work / "server.log")
    shared = {"RAG_STORE": "milvus", "MILVUS_URI": f"http://127.0.0.1:{port}"}
    started: list = []
    try:
        run(["ingest", str(PUBMED), str(ROOT / "seeds")], environment(work / "worker", models, **shared))
        for name in ("one", "two"):
            started.append(start_rag("serve", work / name, models, work / f"{name}.log", **shared))
        bases = [base for _, base in started]
        asked = [q["question"] for q in questions(PUBMED.parent / "dev_questions.jsonl")[:50]]
        same = sum(search(bases[0], q) == search(bases[1], q) for q in asked)
        row("milvus server: replicas giving the same top 5 (50 PubMedQA questions)", f"{same} of {len(asked)}")
        paper = {"doc_id": "bench-axolotl", "title": "Axolotl limb regeneration",
                 "abstract": "Axolotls regrow limbs; blastema cells remember their positional identity."}  # fmt: skip
        run(["ingest", str(write_jsonl(work / "new.jsonl", [paper]))], environment(work / "worker", models, **shared))
        done, seen = time.monotonic(), {}
        while len(seen) < 2 and time.monotonic() - done < 60:
            for base in bases:
                if base not in seen and "bench-axolotl" in search(base, "axolotl limb blastema"):
                    seen[base] = time.monotonic() - done
        row("milvus server: an added paper searchable on both replicas after the ingest ends",
            ", ".join(f"{s:.2f} s" for s in seen.values()) or "not within 60 s")  # fmt: skip
        proc, _ = started.pop(0)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        restart = time.monotonic()
        started.insert(0, start_rag("serve", work / "one", models, work / "one-again.log", **shared))
        row("milvus server: a killed replica serving again (start to /healthz 200)",
            f"{time.monotonic() - restart:.1f} s")  # fmt: skip
    finally:
        for proc, _ in started:
            proc.terminate()
            proc.wait()
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="abstracts in each big index")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--work", type=Path, help="working folder (default: a new temporary one)")
    parser.add_argument("--skip-scale", action="store_true", help="only quality and the server")
    parser.add_argument("--only-scale", action="store_true", help="only the big indexes")
    parser.add_argument("--stores", default="chroma,milvus", help="the stores of the big indexes (chroma,milvus)")
    parser.add_argument("--weights-only", action="store_true",
                        help="only time the gate's term weights on the big indexes already in --work")  # fmt: skip
    args = parser.parse_args()
    if args.weights_only:
        if not args.work:
            parser.error("--weights-only needs --work, the folder of an earlier run")
        print("| measure | value |\n|---|---|", flush=True)
        for store in args.stores.split(","):
            weights_rows(args.work / f"big-{store}", args.work / "models", store)
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="milvus-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    models = work / "models"
    print(f"work folder {work}\n\n| measure | value |\n|---|---|", flush=True)
    run(["ingest", str(ROOT / "seeds")], environment(work / "warm", models))  # the ONNX export, once, not timed
    if not args.only_scale:
        side_by_side_quality(work, models)
        replicas(work, models)
    if not args.skip_scale:
        at_scale(work, models, args.n, args.seed, args.stores.split(","))


if __name__ == "__main__":
    main()
