"""Benchmark: the web app as a person uses it, in headless Chromium. Prints a Markdown table.

    .venv/bin/python benchmarks/ui_latency.py --data-dir data [--screenshot docs/ui.png]

Starts `rag ui` (default backend) on a free port, asks 20 questions of eval/datasets/seeds_qa.jsonl in one
browser session, and reports the time from pressing Enter to the first streamed text and to the finished answer
(its sources shown), p50 over the first 10, and the UI process's peak memory after all 20.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from common import ROOT, free_port


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--screenshot", type=Path, help="save a screenshot of the first answer here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    questions = [
        json.loads(line)["question"]
        for line in (ROOT / "eval" / "datasets" / "seeds_qa.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line).get("answerable", True)
    ][:20]
    port = free_port()
    env = {**os.environ, "RAG_DATA_DIR": str(args.data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "rag", "ui", "--port", str(port)], env=env, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        first, done = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(viewport={"width": 1400, "height": 950})
            page.goto(url)
            page.wait_for_selector("#corpus-line")
            for turn, question in enumerate(questions, start=1):
                page.fill("#question textarea", question)
                start = time.perf_counter()
                page.press("#question textarea", "Enter")
                page.wait_for_function(
                    "(n) => { const bots = document.querySelectorAll('#chat [data-testid=bot]');"
                    " const text = bots.length >= n ? bots[n - 1].innerText.trim() : '';"
                    " return !['', '…', 'Loading content'].includes(text); }",
                    arg=turn,
                    timeout=120_000,
                    polling=20,
                )
                first.append(time.perf_counter() - start)
                page.wait_for_selector(
                    f"#sources details[id^='src-t{turn}-'], #sources .sources-empty", timeout=120_000
                )
                page.wait_for_function(
                    "(n) => !!document.querySelector(`#sources details[id^='src-t${n}-']`)"
                    " || document.querySelector('#chat').innerText.includes('do not answer')",
                    arg=turn,
                    timeout=120_000,
                    polling=20,
                )
                done.append(time.perf_counter() - start)
                if turn == 1 and args.screenshot:
                    page.locator("#sources details summary").first.click()
                    page.screenshot(path=str(args.screenshot))
            browser.close()
        peak = peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"\n## Web app, default backend, {len(done)} questions in one session\n")
    print("| measure | value |\n|---|---|")
    print(f"| first streamed text, p50 of the first 10 | {statistics.median(first[:10]):.2f} s |")
    print(f"| finished answer (sources shown), p50 of the first 10 | {statistics.median(done[:10]):.2f} s |")
    print(f"| finished answer, p50 / max over all {len(done)} | {statistics.median(done):.2f} s / {max(done):.2f} s |")
    print(f"| UI process peak memory (VmHWM) after {len(done)} questions | {peak:.0f} MiB |")


if __name__ == "__main__":
    main()
