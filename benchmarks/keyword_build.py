"""Building the keyword index of a large collection: time, peak memory and disk, the project's bounded-memory build
against bm25s building the same index in memory (what the project did before), each in its own process.

    .venv/bin/python benchmarks/keyword_build.py                  # the 1 GB arXiv-style snapshot, every chunk
    .venv/bin/python benchmarks/keyword_build.py --arxiv-mb 64    # a quick check

The snapshot is the one benchmarks/formats_speed.py generates (PubMedQA's sentences; reused when present). Its
papers are read and chunked as `rag ingest` does; the rows go to the builder in slices, as an ingest's batches do.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from common import ROOT
from formats_speed import GENERATOR, MB, generate, write_arxiv

sys.path.insert(0, str(ROOT))
SLICE = 10_000


def rows(path: Path) -> Iterator[tuple[str, str, dict]]:
    from rag.corpus.chunker import chunk_paper
    from rag.corpus.loaders import Corpus, LoadResult
    from rag.settings import Settings

    settings = Settings()
    for paper in Corpus.of([path]).records(LoadResult()):
        meta = {"doc_id": paper.doc_id, "venue": paper.venue, "year": paper.year, "authors": "; ".join(paper.authors)}
        for chunk in chunk_paper(paper, settings.chunk_size, settings.chunk_overlap):
            yield f"{paper.doc_id}::{chunk.index}", chunk.text, meta


def build_ours(path: Path, out: Path) -> None:
    from rag.index.keywords import KeywordIndex

    KeywordIndex.build(rows(path), out)


def build_bm25s(path: Path, out: Path) -> None:
    """The peer: every chunk's words in memory, then bm25s's own index (as the project built it before)."""
    from itertools import islice

    import bm25s
    from bm25s.tokenization import Tokenized

    from rag.terms import tokenize

    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    remaining = rows(path)
    while piece := list(islice(remaining, SLICE)):
        ids += [[vocab.setdefault(w, len(vocab)) for w in words] for words in tokenize([t for _, t, _ in piece])]
    bm25 = bm25s.BM25()
    bm25.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    bm25.save(str(out / "main"), show_progress=False)


def child(mode: str, path: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    (build_ours if mode == "ours" else build_bm25s)(path, out)
    seconds = time.perf_counter() - start
    facts = {"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if mode == "ours":
        facts |= searched(out)
    facts["disk_mb"] = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / MB
    print(json.dumps(facts))


def searched(out: Path) -> dict:
    from rag.index.keywords import Filters, KeywordIndex

    start = time.perf_counter()
    index = KeywordIndex.load(out)
    assert index is not None
    loaded = time.perf_counter() - start
    questions = ["effect of the intervention on mortality", "optical diagnosis of colonic polyps",
                 "mean energy intake in women", "metoclopramide for vascular headache"]  # fmt: skip
    times, filtered = [], []
    for question in questions * 5:
        start = time.perf_counter()
        index.search(question, 20)
        times.append(time.perf_counter() - start)
    for question in questions:
        start = time.perf_counter()
        index.search(question, 20, Filters(author="smith"))
        filtered.append(time.perf_counter() - start)
    return {"chunks": index.manifest["chunks"], "load_s": loaded, "search_ms": 1000 * sorted(times)[len(times) // 2],
            "author_search_ms": 1000 * sorted(filtered)[len(filtered) // 2]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arxiv-mb", type=int, default=1024, help="size of the arXiv-style snapshot, in MB")
    parser.add_argument("--work", type=Path, default=Path("/tmp/formats-bench"), help="where files are written")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    snapshot = args.work / "arxiv-metadata-oai-snapshot.json"
    generate(snapshot, {"generator": GENERATOR, "mb": args.arxiv_mb, "seed": args.seed},
             write_arxiv(args.arxiv_mb * MB, args.seed))  # fmt: skip
    results = {}
    for mode in ("ours", "bm25s"):
        print(f"building with {mode} ...", file=sys.stderr, flush=True)
        command = [sys.executable, __file__, "--child", mode, str(snapshot), str(args.work / f"keyword-{mode}")]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results[mode] = json.loads(done.stdout.splitlines()[-1])
    ours, peer = results["ours"], results["bm25s"]
    print(f"\n{ours['chunks']:,} chunks of {snapshot.name} ({args.arxiv_mb:,} MB)\n")
    print("| build | seconds | peak RSS MB | on disk MB |")
    print("|---|---|---|---|")
    for name, facts in (("project (spilled, block by block)", ours), ("bm25s in memory (before)", peer)):
        print(f"| {name} | {facts['seconds']:.1f} | {facts['peak_mb']:,.0f} | {facts['disk_mb']:,.0f} |")
    print(f"\nLoading the project's index: {ours['load_s']:.2f} s; search p50 {ours['search_ms']:.1f} ms, "
          f"with an author filter {ours['author_search_ms']:.1f} ms (top 20).")  # fmt: skip


if __name__ == "__main__":
    main()
