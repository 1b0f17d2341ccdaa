"""Benchmark: the tool at 100,000 abstracts. Prints one Markdown table.

    .venv/bin/python benchmarks/scale.py                 # 100,000 abstracts (about 1.5 hours on 2 cores)
    .venv/bin/python benchmarks/scale.py --n 10000       # the same at 10,000, a quick check

The corpus is deterministic (--seed): the real abstracts of the shared PubMedQA (1,000) and SciFact (5,183) corpora,
then synthetic abstracts recombined from their sentences (each as many sentences as a randomly drawn real abstract,
so lengths follow the real distribution), with venue and year metadata. Measured, each by running the `rag` command
a user would run: ingest rate, total time and peak memory; index size on disk; warm hybrid search p50/p95 (in one
process, 200 SciFact claims); cold `rag search` and `rag stats` wall time (median of 3); adding 100 more abstracts;
the web app's memory with the index loaded; SciFact retrieval quality (nDCG@10 and recall@10 of the shared train
claims against the abstracts they cite) inside the big index and, unless --skip-alone, in an index of SciFact alone.
Then, on the same 1,000 PubMedQA abstracts in one run: this tool's ingest (default and fp32 embeddings) against a
plain sentence-transformers + chromadb loop, as ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest_search import environment as shared_environment
from ingest_search import percentile, run
from ui_latency import free_port

from rag.corpus import read_jsonl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' helpers that start real servers
from conftest import wait_until_ready  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
PUBMED = ROOT / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"
SCIFACT = SHARED / "scifact"
VENUES = ["NeurIPS", "ICML", "ICLR", "Nature", "Science", "Cell", "Lancet", "NEJM", "JAMA", "PLOS ONE", "BMJ", "eLife"]


def row(measure: str, value: str) -> None:
    """One line of the table, printed as soon as it is measured (a long run interrupted keeps what it measured)."""
    print(f"| {measure} | {value} |", flush=True)


def real_abstracts() -> list[dict]:
    from rag.sentences import sentence_spans

    records = []
    for d in read_jsonl(PUBMED):
        sentences = [d["abstract"][a:b] for a, b in sentence_spans(d["abstract"])]
        records.append({"doc_id": d["doc_id"], "abstract": d["abstract"], "venue": "PubMed", "year": d.get("year"),
                        "sentences": sentences})  # fmt: skip
    for d in read_jsonl(SCIFACT / "corpus.jsonl"):
        records.append({"doc_id": d["doc_id"], "abstract": d["abstract"], "title": d.get("title"),
                        "venue": "SciFact", "sentences": d["sentences"]})  # fmt: skip
    return records


def build_corpus(n: int, seed: int, extra: int) -> tuple[list[dict], list[dict]]:
    """n abstracts (real first, then synthetic), and `extra` further synthetic ones to add afterwards."""
    rng = random.Random(seed)
    real = real_abstracts()
    pool = [s for r in real for s in r["sentences"] if 5 <= len(s.split()) <= 80]
    lengths = [len(r["sentences"]) for r in real if r["sentences"]]

    def synthetic(i: int) -> dict:
        sentences = rng.sample(pool, max(3, rng.choice(lengths)))
        title = " ".join(sentences[0].split()[:10]).rstrip(".,;:")
        return {"doc_id": f"synthetic:{i}", "title": title, "abstract": " ".join(sentences),
                "venue": rng.choice(VENUES), "year": rng.randint(1995, 2025)}  # fmt: skip

    corpus = [{k: v for k, v in r.items() if k != "sentences"} for r in real[:n]]
    corpus += [synthetic(i) for i in range(max(0, n - len(real)))]
    return corpus, [synthetic(n + i) for i in range(extra)]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def environment(data: Path, models: Path, **extra: str) -> dict[str, str]:
    """Ingests here run at normal priority: the benchmark measures the tool alone on the machine."""
    return shared_environment(data, models, RAG_INGEST_NICE="0", **extra)


def disk_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def claims() -> list[dict]:
    return [c for c in read_jsonl(SCIFACT / "train_claims.jsonl") if c.get("gold")]


def quality(data: Path, models: Path, **settings: str) -> tuple[float, float, list[float]]:
    """SciFact nDCG@10 and recall@10 of the train claims, and each search's latency (ms), hybrid, k=10 (`settings`:
    more settings, e.g. store="milvus")."""
    from rag.index.retriever import Retriever
    from rag.records import Query
    from rag.settings import Settings

    retriever = Retriever(Settings(_env_file=None, data_dir=data, model_cache=models, **settings))
    ndcg, recall, times = [], [], []
    for claim in claims():
        start = time.perf_counter()
        ranked = [r.doc_id for r in retriever.search(Query(claim["question"], 10, mode="hybrid"))]
        times.append((time.perf_counter() - start) * 1000)
        gold = set(claim["gold"])
        dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked) if d in gold)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
        ndcg.append(dcg / ideal)
        recall.append(len(gold & set(ranked)) / len(gold))
    return statistics.fmean(ndcg), statistics.fmean(recall), times


def median_wall(args: list[str], env: dict[str, str], times: int = 3) -> float:
    return statistics.median(run(args, env)[0] for _ in range(times))


def ui_memory(env: dict[str, str]) -> float:
    """Resident memory (MiB) of `rag ui` once it serves the page with its models loaded."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rag", "ui", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until_ready(f"http://127.0.0.1:{port}/", proc, Path(os.devnull), 600)
        status = Path(f"/proc/{proc.pid}/status").read_text().splitlines()
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024
    finally:
        proc.terminate()
        proc.wait()


PLAIN_LOOP = """
import json, sys, chromadb
from sentence_transformers import SentenceTransformer
from rag.onnx import bundled_model_dir
records = [json.loads(line) for line in open(sys.argv[1])]
model = SentenceTransformer(str(bundled_model_dir()), device="cpu")
collection = chromadb.PersistentClient(path=sys.argv[2]).get_or_create_collection("plain")
for start in range(0, len(records), 32):
    batch = records[start : start + 32]
    vectors = model.encode([r["abstract"] for r in batch], batch_size=32)
    texts = [r["abstract"] for r in batch]
    collection.add(ids=[r["doc_id"] for r in batch], embeddings=vectors.tolist(), documents=texts)
"""


def side_by_side(work: Path, models: Path) -> None:
    """The same 1,000 abstracts: this tool (default and fp32 embeddings) and a plain loop a user would write."""
    thousand = write_jsonl(work / "thousand.jsonl", read_jsonl(PUBMED)[:1000])
    seconds = {}
    before = {"RAG_EMBEDDING_PRECISION": "fp32", "RAG_EMBED_BATCH_SIZE": "32", "RAG_EMBED_WORKERS": "1"}  # as found
    for name, extra in (("default", {}), ("fp32", before)):
        seconds[name] = run(["ingest", str(thousand)], environment(work / f"side-{name}", models, **extra))[0]
    script = work / "plain_loop.py"
    script.write_text(PLAIN_LOOP)
    start = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, str(script), str(thousand), str(work / "side-plain")], env=env, check=True,
                   capture_output=True)  # fmt: skip
    seconds["plain"] = time.perf_counter() - start
    rate = {k: 1000 / v for k, v in seconds.items()}
    row("ingest 1,000 PubMedQA abstracts: this tool (default)", f"{seconds['default']:.0f} s, "
                 f"{rate['default']:.1f} abstracts/s")  # fmt: skip
    row(
        "... fp32 embeddings, 32 texts per run (the path before int8 and single-text runs)",
        f"{seconds['fp32']:.0f} s; default is {rate['default'] / rate['fp32']:.2f}x",
    )
    row("... plain sentence-transformers + chromadb loop (whole abstracts, no chunks, no keyword index)",
                 f"{seconds['plain']:.0f} s; default is {rate['default'] / rate['plain']:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="abstracts in the big index")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--work", type=Path, help="working folder (default: a new temporary one)")
    parser.add_argument("--skip-alone", action="store_true", help="skip the SciFact-only index")
    parser.add_argument("--skip-side-by-side", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="scale-"))
    work.mkdir(parents=True, exist_ok=True)
    models = work / "models"
    print(f"{len(claims())} SciFact train claims with cited abstracts; corpus seed {args.seed}; work folder {work}\n")
    print("| measure | value |\n|---|---|", flush=True)
    corpus, extra = build_corpus(args.n, args.seed, 100)
    big = write_jsonl(work / "corpus.jsonl", corpus)
    run(["ingest", str(ROOT / "seeds")], environment(work / "warm", models))  # the ONNX export, once, not timed
    env = environment(work / "big", models)
    seconds, peak, _ = run(["ingest", str(big)], env)
    row(f"ingest {args.n:,} abstracts", f"{seconds / 60:.1f} min, {args.n / seconds:.1f} abstracts/s")
    row("ingest peak memory", f"{peak:,} MiB")
    stats = json.loads(run(["stats", "--json"], env)[2])
    row("index size on disk", f"{disk_mib(work / 'big'):,.0f} MiB ({stats['chunks']:,} chunks)")
    ndcg, recall, times = quality(work / "big", models)
    warm = times[10:210]
    row("warm hybrid search (200 SciFact claims)", f"p50 {statistics.median(warm):.1f} ms, "
                 f"p95 {percentile(warm, 95):.1f} ms")  # fmt: skip
    cold = median_wall(["search", "gene expression"], env)
    row("cold `rag search` wall time (median of 3)", f"{cold:.2f} s")
    row("`rag stats` wall time (median of 3)", f"{median_wall(['stats'], env):.2f} s")
    seconds = run(["ingest", str(write_jsonl(work / "extra.jsonl", extra))], env)[0]
    row("add 100 abstracts (`rag ingest`)", f"{seconds:.1f} s")
    row("web app memory with the index loaded", f"{ui_memory(env):,.0f} MiB")
    row(f"SciFact nDCG@10 / recall@10 inside the {args.n:,}", f"{ndcg:.3f} / {recall:.3f}")
    if not args.skip_alone:
        alone = environment(work / "alone", models)
        run(["ingest", str(SCIFACT / "corpus.jsonl")], alone)
        ndcg, recall, _ = quality(work / "alone", models)
        row("SciFact nDCG@10 / recall@10, SciFact alone (5,183)", f"{ndcg:.3f} / {recall:.3f}")
    if not args.skip_side_by_side:
        side_by_side(work, models)


if __name__ == "__main__":
    main()
