"""Benchmark: faults a user meets, tried for real. Prints one Markdown table: cases tried, handled cleanly, data lost.

    .venv/bin/python benchmarks/robustness.py [--kills 3] [--sessions 20 50] [--seed 7]

Cases (each on fresh data directories, real processes, the bundled models):
- kill -9 at a random moment (seeded) while `rag ingest` stores the 1,000 PubMedQA abstracts, then the same ingest
  again: handled when it finishes and `rag doctor` finds nothing wrong; lost = expected chunk ids not stored.
- two `rag ingest` processes at once (500 + 500 abstracts) on one embedded index: handled when both finish and
  `rag doctor` is clean; lost = chunks missing or without a vector.
- the Chroma server stopped and restarted during a `rag chat` session: handled when the question asked during the
  outage gets a one-line message, the next one is answered, and the session ends normally.
- the OpenAI-compatible LLM server (llama-cpp-python's, bundled model) killed while it streams an answer: handled
  when `rag ask` still answers (extractive fallback, with a note) or fails in one line, never with a traceback.
- N web sessions at once against `rag ui` (its /ask API, extractive backend): handled when every session gets its
  own question's answer (no queue-full error, no cross-talk).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' helpers that start real servers

from conftest import start_chroma, start_llama_server, wait_until_ready  # noqa: E402
from ingest_search import environment  # noqa: E402
from ui_latency import free_port  # noqa: E402

PUBMED = ROOT / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"
SEEDS_QA = ROOT / "eval" / "datasets" / "seeds_qa.jsonl"
ROWS: list[tuple[str, int, int, int, str]] = []


def rag(*args: str, env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "-m", "rag", *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          **kwargs)  # fmt: skip


def expected_ids(paths: list[Path]) -> set[str]:
    from rag.corpus.chunker import chunk_paper
    from rag.corpus.loaders import load_corpus
    from rag.settings import Settings

    settings = Settings(_env_file=None)
    return {c.chunk_id for p in load_corpus(paths).papers for c in chunk_paper(p, settings.chunk_size, 1)}


def lost_chunks(data: Path, models: Path, wanted: set[str]) -> int:
    """Expected chunks that are not stored, plus stored chunks without a vector."""
    from rag.index import store
    from rag.index.doctor import chunks_without_vectors
    from rag.settings import Settings

    collection = store.open_collection(Settings(_env_file=None, data_dir=data, model_cache=models), create=False)
    stored = set(collection.get(include=[])["ids"]) if collection else set()
    return len(wanted - stored) + (len(chunks_without_vectors(collection)) if collection else 0)


def kill_during_ingest(work: Path, models: Path, kills: int, rng: random.Random) -> None:
    wanted = expected_ids([PUBMED])
    handled = lost = 0
    moments = []
    for k in range(kills):
        data = work / f"kill{k}"
        env = environment(data, models)
        proc = subprocess.Popen([sys.executable, "-m", "rag", "ingest", str(PUBMED)], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        moment = rng.uniform(3, 40)
        time.sleep(moment)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        moments.append(f"{moment:.0f}")
        again = rag("ingest", str(PUBMED), env=env)
        doctor = rag("doctor", env=env)
        handled += again.returncode == 0 and doctor.returncode == 0
        lost += lost_chunks(data, models, wanted)
    ROWS.append(("kill -9 during ingest of 1,000 abstracts, then ingest again", kills, handled, lost,
                 f"killed after {', '.join(moments)} s"))  # fmt: skip


def two_ingests(work: Path, models: Path) -> None:
    lines = PUBMED.read_text().splitlines()
    halves = [work / "first.jsonl", work / "second.jsonl"]
    halves[0].write_text("\n".join(lines[:500]) + "\n")
    halves[1].write_text("\n".join(lines[500:]) + "\n")
    env = environment(work / "two", models)
    command = [sys.executable, "-m", "rag", "ingest"]
    procs = [subprocess.Popen([*command, str(h)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for h in halves]  # fmt: skip
    codes = [p.wait() for p in procs]
    clean = all(c == 0 for c in codes) and rag("doctor", env=env).returncode == 0
    waited = any("waiting" in (p.stderr.read() if p.stderr else "") for p in procs)
    lost = lost_chunks(work / "two", models, expected_ids(halves))
    ROWS.append(("two ingests at once on one embedded index (500 + 500)", 1, int(clean), lost,
                 "the second waited for the first" if waited else ""))  # fmt: skip


def chroma_restart(work: Path, models: Path) -> None:
    port, path = free_port(), work / "chroma-server"
    log = (work / "chroma.log").open("w")
    server = start_chroma(path, port, log)
    env = environment(work / "chat", models, CHROMA_HOST="127.0.0.1", CHROMA_PORT=str(port))
    rag("ingest", str(ROOT / "seeds"), env=env)
    before = json.loads(rag("stats", "--json", env=env).stdout)["chunks"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    chat = subprocess.Popen([sys.executable, "-m", "rag", "chat", "--llm", "extractive"], env=env, cwd=ROOT,
                            text=True, **pipes)  # fmt: skip
    question = "How can protein language models work at the atom scale?\n"
    assert chat.stdin
    chat.stdin.write(question)
    chat.stdin.flush()
    time.sleep(15)
    server.terminate()
    server.wait()
    chat.stdin.write(question)
    chat.stdin.flush()
    time.sleep(10)
    server = start_chroma(path, port, log)
    out, err = chat.communicate(question + "/quit\n", timeout=120)
    server.terminate()
    server.wait()
    after = before
    try:
        server = start_chroma(path, port, log)
        after = json.loads(rag("stats", "--json", env=env).stdout)["chunks"]
    finally:
        server.terminate()
    handled = chat.returncode == 0 and "not answered" in err and out.count("ESM-AA") >= 2 and "Traceback" not in err
    ROWS.append(("Chroma server stopped and restarted during `rag chat`", 1, int(handled), before - after,
                 "outage question told in one line, next one answered"))  # fmt: skip


def llm_killed(work: Path, models: Path, data: Path) -> None:
    handled, notes = 0, []
    delays = (0.5, 1.5, 3.0)
    for delay in delays:
        server, base_url = start_llama_server(work / f"llama-{delay}.log")
        env = environment(data, models, OPENAI_BASE_URL=base_url, RAG_LLM_PICK_SENTENCES="false")
        proc = subprocess.Popen([sys.executable, "-m", "rag", "ask", "--llm", "openai-compatible", "--json",
                                 "How can protein language models work at the atom scale?"], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(delay + 1.0)  # the CLI's own start, then into the generation
        server.kill()
        server.wait()
        out, err = proc.communicate(timeout=300)
        one_line = proc.returncode == 1 and len(err.strip().splitlines()) == 1
        answered = proc.returncode == 0 and bool(json.loads(out)["answer"])
        handled += (answered or one_line) and "Traceback" not in err
        notes.append("answered" if answered else f"exit {proc.returncode}")
    ROWS.append(("LLM server killed while streaming (`rag ask`)", len(delays), handled, 0, ", ".join(notes)))


def web_sessions(work: Path, models: Path, data: Path, counts: list[int]) -> None:
    import httpx

    records = [json.loads(line) for line in SEEDS_QA.read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in records if r.get("answerable", True)]
    port = free_port()
    env = environment(data, models, RAG_LLM_BACKEND="extractive")
    log_path = work / "ui.log"
    proc = subprocess.Popen([sys.executable, "-m", "rag", "ui", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=log_path.open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_until_ready(base + "/", proc, log_path, 180)

    def ask(question: str) -> str | None:
        """The answer's JSON text as the app's /ask API streams it (None when it failed)."""
        with httpx.Client(base_url=base, timeout=600) as client:
            event = client.post("/gradio_api/call/ask", json={"data": [question, "extractive"]}).json()["event_id"]
            text = client.get(f"/gradio_api/call/ask/{event}").text
        lines = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
        try:
            answer = json.loads(lines[-1])[0]
        except (IndexError, ValueError, TypeError, KeyError):
            return None
        return json.dumps({k: answer[k] for k in ("answer", "citations")}, sort_keys=True)

    alone = {q: ask(q) for q in questions[:20]}  # each question asked on its own first

    def session(i: int) -> tuple[bool, float]:
        question = questions[i % 20]
        start = time.perf_counter()
        answer = ask(question)
        return answer is not None and answer == alone[question], time.perf_counter() - start

    try:
        for count in counts:
            barrier = threading.Barrier(count)

            def together(i: int, barrier: threading.Barrier = barrier) -> tuple[bool, float]:
                barrier.wait()
                return session(i)

            with ThreadPoolExecutor(count) as pool:
                results = list(pool.map(together, range(count)))
            times = sorted(t for _, t in results)
            p95 = statistics.quantiles(times, n=20)[18] if len(times) > 1 else times[0]
            note = f"p50 {statistics.median(times):.1f} s, p95 {p95:.1f} s"
            case = f"{count} web sessions asking at once (`rag ui`, extractive)"
            ROWS.append((case, count, sum(ok for ok, _ in results), 0, note))
    finally:
        proc.terminate()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=3, help="kill -9 moments to try during ingest")
    parser.add_argument("--sessions", type=int, nargs="+", default=[20, 50], help="concurrent web sessions")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="robustness-"))
    models = work / "models"
    seeds = work / "seeds-index"
    rag("ingest", str(ROOT / "seeds"), env=environment(seeds, models))  # also prepares the embedding model once
    kill_during_ingest(work, models, args.kills, random.Random(args.seed))
    two_ingests(work, models)
    chroma_restart(work, models)
    llm_killed(work, models, seeds)
    web_sessions(work, models, seeds, args.sessions)
    print("| case | tried | handled cleanly | data lost | notes |")
    print("|---|---|---|---|---|")
    for case, tried, handled, lost, note in ROWS:
        print(f"| {case} | {tried} | {handled} | {lost} | {note} |")


if __name__ == "__main__":
    main()
