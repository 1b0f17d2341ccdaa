"""Benchmark: the first commands a new user runs, once `make setup` has prepared the model (issue 35). One table:

    .venv/bin/python benchmarks/first_command.py            # 1,000 and 5,000 abstracts side by side, cold starts
    .venv/bin/python benchmarks/first_command.py --sizes 1000

- ingest into a fresh data directory, side by side in one run: `rag ingest` against a plain sentence-transformers +
  chromadb loop (the one in benchmarks/scale.py), 1,000 PubMedQA abstracts and 5,000 SciFact abstracts;
- the first ingest of one abstract into a fresh data directory;
- `rag ui --seed seeds/` (what `make run` starts) from an empty index to HTTP 200;
- cold `rag search` and `rag ask --llm extractive` on the seeds (median of 5).
The model cache is the user's, as `make setup` leaves it (`python -m rag.index.models` is run first, untimed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, free_port
from ingest_search import environment as shared_environment
from ingest_search import run
from scale import PLAIN_LOOP, PUBMED, SCIFACT, row, write_jsonl

SEEDS = ROOT / "seeds"
QUESTION = "What causes oversmoothing in graph neural networks?"


def environment(data: Path) -> dict[str, str]:
    """The defaults a new user has: no RAG_/CHROMA_/OPENAI_ settings, the user's model cache."""
    return shared_environment(data, None)


def side_by_side(work: Path, n: int) -> None:
    source = PUBMED if n <= 1000 else SCIFACT / "corpus.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines()[:n]]
    corpus = write_jsonl(work / f"corpus-{n}.jsonl", records)
    ours = run(["ingest", str(corpus)], environment(work / f"ours-{n}"))[0]
    script = work / "plain_loop.py"
    script.write_text(PLAIN_LOOP)
    start = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, str(script), str(corpus), str(work / f"plain-{n}")], env=env, check=True,
                   capture_output=True)  # fmt: skip
    plain = time.perf_counter() - start
    row(f"ingest {n:,} {source.parent.name} abstracts into a fresh data directory: `rag ingest` / plain loop",
        f"{ours:.1f} s ({n / ours:.1f}/s) / {plain:.1f} s ({n / plain:.1f}/s): {plain / ours:.2f}x")  # fmt: skip


def first_ingest(work: Path) -> None:
    one = write_jsonl(work / "one.jsonl", [json.loads(PUBMED.read_text().splitlines()[0])])
    times = [run(["ingest", str(one)], environment(work / f"first-{i}"))[0] for i in range(3)]
    row("first ingest of one abstract into a fresh data directory (median of 3)", f"{statistics.median(times):.2f} s")


def ui_from_empty(work: Path) -> float:
    port = free_port()
    start = time.perf_counter()
    command = [sys.executable, "-m", "rag", "ui", "--port", str(port), "--seed", str(SEEDS)]
    proc = subprocess.Popen(command, cwd=ROOT, env=environment(work / "ui"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        import httpx

        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    return time.perf_counter() - start
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                sys.exit("rag ui stopped before it served the page")
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000], help="abstracts ingested side by side")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="first-command-"))
    subprocess.run([sys.executable, "-m", "rag.index.models"], cwd=ROOT, env=environment(work / "setup"), check=True)
    print(f"work folder {work}\n\n| measure | value |\n|---|---|", flush=True)
    for n in args.sizes:
        side_by_side(work, n)
    first_ingest(work)
    row("`rag ui --seed seeds/` (make run) from an empty index to HTTP 200", f"{ui_from_empty(work):.1f} s")
    env = environment(work / "ui")  # the seeds' index the web app made
    for name, command in (("rag search", ["search", "graph neural networks"]),
                          ("rag ask --llm extractive", ["ask", QUESTION, "--llm", "extractive"])):  # fmt: skip
        times = [run(command, env)[0] for _ in range(5)]
        row(f"cold `{name}` on the seeds (median of 5)", f"{statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
