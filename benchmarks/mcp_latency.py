"""Benchmark: tool calls over MCP (`rag mcp` over stdio, the official SDK's client) beside the same calls made
in-process on the engine. Prints a table.

    .venv/bin/python benchmarks/mcp_latency.py             # the seeds' index, built into --work on first use
    .venv/bin/python benchmarks/mcp_latency.py --runs 50

Each call is made --runs times after two warm-up calls; p50 and p95 in milliseconds. The protocol's overhead is the
MCP p50 minus the in-process p50. Target (issue 33): under 20 ms for search.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from common import ROOT, seeds_index

QUERIES = [
    "sharpness-aware minimization",
    "diffusion models as policies",
    "protein language models at the atom scale",
    "in-context learning",
    "graph neural networks",
]


def timed(call: Callable[[int], object], runs: int) -> list[float]:
    for i in range(2):
        call(i)
    times = []
    for i in range(runs):
        begun = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - begun) * 1000)
    return times


async def timed_async(call: Callable[[int], Awaitable[object]], runs: int) -> list[float]:
    for i in range(2):
        await call(i)
    times = []
    for i in range(runs):
        begun = time.perf_counter()
        await call(i)
        times.append((time.perf_counter() - begun) * 1000)
    return times


def p95(times: list[float]) -> float:
    return sorted(times)[max(0, round(0.95 * len(times)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--work", type=Path, default=Path("/tmp/mcp-bench"))
    args = parser.parse_args()
    data = seeds_index(args.work)

    from mcp import Client, StdioServerParameters

    from rag.engine import Engine
    from rag.records import Query
    from rag.settings import Settings

    engine = Engine(Settings(data_dir=data))
    question = "Can sharpness-aware minimization improve adversarial robustness?"
    local = {
        "search": timed(lambda i: engine.library.search(Query(QUERIES[i % len(QUERIES)], 5)), args.runs),
        "ask (extractive)": timed(lambda i: engine.ask(question, "extractive"), args.runs),
    }
    env = {**os.environ, "RAG_DATA_DIR": str(data)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "rag", "mcp"], env=env, cwd=str(ROOT))

    async def over_mcp() -> dict[str, list[float]]:
        async with Client(params) as client:
            return {
                "search": await timed_async(
                    lambda i: client.call_tool("search", {"query": QUERIES[i % len(QUERIES)], "k": 5}), args.runs
                ),
                "ask (extractive)": await timed_async(
                    lambda i: client.call_tool("ask", {"question": question, "backend": "extractive"}), args.runs
                ),
            }

    remote = asyncio.run(over_mcp())
    print(f"\n## Tool calls over MCP (stdio) beside in-process ({args.runs} runs each, {os.cpu_count()} cores)\n")
    print("| call | in-process p50 ms | p95 | over MCP p50 ms | p95 | protocol overhead (p50) ms |")
    print("|---|---|---|---|---|---|")
    for name in local:
        a, b = local[name], remote[name]
        print(f"| {name} | {statistics.median(a):.1f} | {p95(a):.1f} | {statistics.median(b):.1f} | {p95(b):.1f} | "
              f"{statistics.median(b) - statistics.median(a):.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
