"""Benchmark: the HTTP service (`rag serve`) under real HTTP. Prints Markdown tables.

    .venv/bin/python benchmarks/service_load.py --data-dir DIR      # an index of seeds/ (default ./data)

1. Latency per request: 20 seeds questions, one at a time, streamed with the openai client, per backend
   (extractive and local): time to the first content chunk (the first verified sentence) and to the end.
2. Load: 20 concurrent clients asking seeds questions with the extractive backend for 60 s, each sending its next
   request as soon as the last one ends: requests served, errors (429s counted apart), p95 latency, and the
   server process's peak resident memory (VmHWM).
The service is started on a free port with RAG_API_QUEUE large enough for every client.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from ui_latency import free_port, peak_rss_mib  # the web app's benchmark, beside this one

ROOT = Path(__file__).resolve().parents[1]


def start(data_dir: Path, clients: int) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    env = {**os.environ, "RAG_DATA_DIR": str(data_dir), "RAG_API_QUEUE": str(clients)}
    proc = subprocess.Popen([sys.executable, "-m", "rag", "serve", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            sys.exit("rag serve did not start")
        time.sleep(0.5)


def pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] if len(values) > 1 else values[0]


def latency(base: str, questions: list[str], backend: str) -> tuple[list[float], list[float]]:
    from openai import OpenAI

    client = OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=300)
    first, total = [], []
    for question in questions:
        began = time.perf_counter()
        seen = None
        stream = client.chat.completions.create(
            model=f"abstracts-rag:{backend}", messages=[{"role": "user", "content": question}], stream=True
        )
        for chunk in stream:
            if seen is None and chunk.choices and chunk.choices[0].delta.content:
                seen = time.perf_counter() - began
        total.append(time.perf_counter() - began)
        first.append(seen if seen is not None else total[-1])
    return first, total


def load(base: str, questions: list[str], clients: int, seconds: float) -> dict[str, float]:
    import httpx

    stop = time.monotonic() + seconds
    times: list[float] = []
    errors: list[int] = []
    lock = threading.Lock()

    def client(index: int) -> None:
        i = index
        with httpx.Client(timeout=300) as http:
            while time.monotonic() < stop:
                body = {"model": "abstracts-rag:extractive",
                        "messages": [{"role": "user", "content": questions[i % len(questions)]}]}  # fmt: skip
                began = time.perf_counter()
                try:
                    status = http.post(f"{base}/v1/chat/completions", json=body).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    (times.append(time.perf_counter() - began) if status == 200 else errors.append(status))
                i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    p50, p95 = (pct(times, 50), pct(times, 95)) if times else (float("nan"), float("nan"))
    other = len([e for e in errors if e != 429])
    return {"served": len(times), "errors": other, "429": errors.count(429), "p50": p50, "p95": p95}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    rows = [json.loads(line) for line in (ROOT / "eval" / "datasets" / "seeds_qa.jsonl").read_text().splitlines()]
    questions = [r["question"] for r in rows if r.get("answerable", True)][:20]
    proc, base = start(args.data_dir, args.clients)
    try:
        print("\n## One request at a time (20 questions, streamed)\n")
        print("| backend | first content p50 / p95 | total p50 / p95 |")
        print("|---|---|---|")
        for backend in ("extractive", "local"):
            first, total = latency(base, questions, backend)
            print(f"| {backend} | {pct(first, 50):.2f} s / {pct(first, 95):.2f} s | "
                  f"{pct(total, 50):.2f} s / {pct(total, 95):.2f} s |")  # fmt: skip
        result = load(base, questions, args.clients, args.seconds)
        print(f"\n## {args.clients} concurrent clients for {args.seconds:.0f} s (extractive)\n")
        print("| served | errors | 429 | p50 | p95 | server peak memory |")
        print("|---|---|---|---|---|---|")
        print(f"| {result['served']} | {result['errors']} | {result['429']} | {result['p50']:.2f} s | "
              f"{result['p95']:.2f} s | {peak_rss_mib(proc.pid):.0f} MB |")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
