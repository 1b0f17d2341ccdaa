"""The `rag` command line: the --json contract, exit codes and one-line errors, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SEEDS, free_port, run_rag, start_chroma, write_jsonl


@pytest.fixture
def seeds_env(cli_env, seeds_settings) -> dict[str, str]:
    return {**cli_env, "RAG_DATA_DIR": str(seeds_settings.data_dir)}


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from rag.frontends.cli import main; rc = main(['--help']); "
        "heavy = [m for m in ('torch', 'chromadb', 'onnxruntime', 'llama_index', 'sentence_transformers', 'bm25s') "
        "if m in sys.modules]; print(rc, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "0 []"
    assert "ingest" in out.stdout and "search" in out.stdout and "stats" in out.stdout


def test_a_search_imports_only_what_it_needs(seeds_env) -> None:
    """A cold `rag search` must stay quick: it neither imports bm25s (with scipy, a fifth of a second; the keyword
    index is read with NumPy) nor anything of the LLM or training side."""
    code = (
        "import sys; from rag.frontends.cli import main; "
        "rc = main(['search', 'oversmoothing in deep GNNs', '-k', '1']); "
        "heavy = ('bm25s', 'scipy', 'torch', 'llama_index', 'llama_cpp', 'sklearn', 'sentence_transformers'); "
        "print(rc, [m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=seeds_env)
    assert out.stdout.strip().splitlines()[-1] == "0 []", out.stderr
    assert "oversmoothing" in out.stdout.lower()


def test_search_json_contract(seeds_env) -> None:
    out = run_rag("search", "protein language model with atom-level modeling", "--json", "-k", "3", env=seeds_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"query", "results"}
    assert data["query"] == "protein language model with atom-level modeling"
    assert len(data["results"]) == 3
    for rank, result in enumerate(data["results"], start=1):
        assert set(result) == {"rank", "doc_id", "score", "venue", "year", "title", "text"}
        assert result["rank"] == rank
        assert isinstance(result["score"], float) and isinstance(result["year"], int)
        assert result["venue"] in ("ICML", "ICLR") and result["title"] is None and result["text"]
    assert data["results"][0]["doc_id"] == "000_c1913070b188e76b#8"


def test_search_filters_from_the_command_line(seeds_env) -> None:
    out = run_rag("search", "robustness", "--venue", "ICLR", "--year", "2024", "--json", env=seeds_env)
    assert out.returncode == 0, out.stderr
    assert {r["venue"] for r in json.loads(out.stdout)["results"]} == {"ICLR"}


def test_a_refused_question_can_be_answered_anyway(seeds_env) -> None:
    question = "Is there a way to tell whether a text was written by ChatGPT?"  # refused by the bundled gate
    refused = run_rag("ask", question, "--llm", "extractive", env=seeds_env)
    assert refused.returncode == 0 and "--answer-anyway" in refused.stdout  # the terminal says how
    out = run_rag("ask", question, "--llm", "extractive", "--answer-anyway", "--json", env=seeds_env)
    data = json.loads(out.stdout)
    assert not data["refused"] and data["citations"] and data["note"].startswith("Answered as asked")


def test_a_chat_can_have_its_last_refusal_answered_anyway(seeds_env) -> None:
    chat = subprocess.run([sys.executable, "-m", "rag", "chat", "--llm", "extractive"], env=seeds_env, cwd=ROOT,
                          input="/anyway\nIs there a way to tell whether a text was written by ChatGPT?\n/anyway\n",
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert chat.returncode == 0 and "(nothing was refused)" in chat.stderr  # before any question
    refused, answered = chat.stdout.split("/anyway in `rag chat`")
    assert "do not answer this question" in refused and "Note: Answered as asked" in answered and "[1]" in answered


def test_stats(seeds_env) -> None:
    out = run_rag("stats", "--json", env=seeds_env)
    info = json.loads(out.stdout)
    assert (info["abstracts"], info["venues"], info["years"]) == (95, {"ICLR": 57, "ICML": 38}, {"2024": 95})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", ""], "the question is empty"),
        (["search", "q" * 2001], "the limit is 2000"),
        (["search", "robustness", "--venue", "NeurIPS"], "unknown venue 'NeurIPS'"),
        (["search", "robustness", "--mode", "fuzzy"], "unknown --mode"),
        (["search", "robustness", "-k", "0"], "-k"),
        (["search"], "Missing argument"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_search_input_exits_2_with_one_line(seeds_env, args: list[str], message: str) -> None:
    out = run_rag(*args, env=seeds_env)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_search_on_an_empty_index_says_what_to_do(cli_env) -> None:
    out = run_rag("search", "anything", env=cli_env)
    assert out.returncode == 2 and "rag ingest" in out.stderr


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.jsonl", None, "no such file"),
        ("empty.jsonl", b"", "empty"),
        ("binary.csv", b"\x00\x01\x02abstract", "binary"),
    ],
)
def test_unreadable_input_exits_2_and_writes_nothing(cli_env, tmp_path: Path, name, content, message) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    out = run_rag("ingest", str(SEEDS), str(path), env=cli_env)
    assert out.returncode == 2 and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (Path(cli_env["RAG_DATA_DIR"]) / "chroma").exists()


def test_malformed_records_are_reported_and_the_rest_ingested(cli_env, tmp_path: Path) -> None:
    corpus = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"doc_id": "ok", "abstract": "A valid abstract. It has two sentences."},
            "{oops",
            {"doc_id": "empty", "title": "No text"},
        ],
    )
    out = run_rag("ingest", str(corpus), env=cli_env)
    assert out.returncode == 2
    assert f"{corpus}:2: malformed JSON" in out.stderr and f"{corpus}:3: record has no abstract" in out.stderr
    assert "added 1, updated 0, unchanged 0, skipped 2" in out.stdout
    stats = json.loads(run_rag("stats", "--json", env=cli_env).stdout)
    assert stats["abstracts"] == 1


def test_ingest_is_idempotent_from_the_command_line(cli_env, tmp_path: Path) -> None:
    corpus = write_jsonl(
        tmp_path / "two.jsonl", [{"abstract": "First abstract. Short."}, {"abstract": "Second one. Also short."}]
    )
    first = run_rag("ingest", str(corpus), env=cli_env)
    assert first.returncode == 0 and "added 2, updated 0, unchanged 0, skipped 0" in first.stdout
    second = run_rag("ingest", str(corpus), env=cli_env)
    assert second.returncode == 0 and "added 0, updated 0, unchanged 2, skipped 0 (0 chunks written)" in second.stdout


def test_invalid_setting_exits_2(cli_env) -> None:
    out = run_rag("stats", env={**cli_env, "RAG_TOP_K": "many"})
    assert out.returncode == 2 and "RAG_TOP_K" in out.stderr


def test_text_that_could_drive_the_terminal_is_never_printed(cli_env, tmp_path) -> None:
    hostile = "Flat minima generalize better. \x1b]0;pwned\x07Sharpness matters.\x1b[2J"
    run_rag("ingest", str(write_jsonl(tmp_path / "h.jsonl", [{"doc_id": "h\x1b[31m", "abstract": hostile}])),
            env=cli_env)  # fmt: skip
    ask = ("ask", "Do flat minima generalize better?", "--llm", "extractive")
    for args in (("search", "flat minima sharpness"), ask):
        result = run_rag(*args, env=cli_env)
        assert result.returncode == 0 and "Flat minima generalize better" in result.stdout
        assert not {"\x1b", "\x07"} & set(result.stdout + result.stderr)


def test_a_question_that_is_not_valid_utf8_is_a_one_line_error(cli_env, tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "rag", "search", b"caf\xe9 \xff"], env=cli_env, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == "rag: the question is not valid text (it holds bytes that are not UTF-8)"
    run_rag("ingest", str(write_jsonl(tmp_path / "p.jsonl", [{"doc_id": "a", "abstract": "Flat minima."}])),
            env=cli_env)  # fmt: skip

    chat = subprocess.run([sys.executable, "-m", "rag", "chat", "--llm", "extractive"], env=cli_env, cwd=ROOT,
                          input=b"caf\xe9?\n", capture_output=True, timeout=120)  # fmt: skip
    assert chat.returncode == 0 and b"not valid text" in chat.stderr  # the loop goes on, then ends at EOF


class Lines:
    """A subprocess's output lines, read in the background, waited for by content."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        import queue
        import threading

        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(line) for line in stream], daemon=True).start()

    def wait_for(self, text: str, timeout: float = 120) -> str:
        import queue
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {timeout} s")


@pytest.mark.slow
def test_chat_survives_a_chroma_server_restart(cli_env, tmp_path: Path) -> None:
    port, path = free_port(), tmp_path / "chroma-data"
    log = (tmp_path / "chroma.log").open("w")
    server = start_chroma(path, port, log)
    env = {**cli_env, "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port)}
    papers = [{"doc_id": "sam", "abstract": "Sharpness-aware minimization finds flat minima and generalizes better."}]
    assert run_rag("ingest", str(write_jsonl(tmp_path / "p.jsonl", papers)), env=env).returncode == 0
    chat = subprocess.Popen(
        [sys.executable, "-m", "rag", "chat", "--llm", "extractive"], env=env, cwd=ROOT, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, errors = Lines(chat.stdout), Lines(chat.stderr)

    def ask(question: str) -> None:
        chat.stdin.write(question + "\n")
        chat.stdin.flush()

    try:
        ask("What does sharpness-aware minimization find?")
        out.wait_for("flat minima")
        server.terminate()
        server.wait(timeout=30)
        ask("Does sharpness-aware minimization generalize better?")
        assert "ask again once it is back" in errors.wait_for("not answered")
        server = start_chroma(path, port, log)
        ask("Does sharpness-aware minimization generalize better?")
        out.wait_for("generalizes better")
        ask("/quit")
        assert chat.wait(timeout=60) == 0
    finally:
        chat.kill()
        server.terminate()
        server.wait(timeout=30)


def test_the_terminal_marks_an_unverified_sentence(capsys) -> None:
    from rag.answer import Sentence
    from rag.frontends.terminal import UNVERIFIED_MARK, answer_to_terminal
    from rag.records import Answer

    answer = Answer("q", "Backed [1]. Not backed.", False, [], "local", {})
    answer_to_terminal(iter([Sentence("Backed [1]."), Sentence("Not backed.", False, "no abstract"), answer]))
    out = capsys.readouterr().out
    assert f"Not backed. {UNVERIFIED_MARK}" in out and f"Backed [1]. {UNVERIFIED_MARK}" not in out


def test_a_data_directory_that_is_a_file_or_cannot_be_made_gets_its_own_line(cli_env, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    for command in (["stats"], ["search", "anything"], ["ingest", str(SEEDS)]):
        result = run_rag(*command, "--data-dir", str(tmp_path / "a-file"), env=cli_env)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "is a file, not a folder" in result.stderr and "empty" not in result.stderr
    blocked = run_rag("ingest", str(SEEDS), "--data-dir", str(tmp_path / "a-file" / "data"), env=cli_env)
    assert blocked.returncode == 2 and "cannot create the data directory" in blocked.stderr, blocked.stderr


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_rag_ui_ingests_its_seed_files_into_an_empty_index_before_it_starts(
    cli_env: dict[str, str], model_cache: Path, tmp_path: Path
) -> None:
    """`make run` is one process: `rag ui --seed seeds/` ingests them when the index is empty, then serves."""
    from conftest import start_rag

    data = Path(cli_env["RAG_DATA_DIR"])
    refused = run_rag("ui", "--port", str(free_port()), env=cli_env)
    assert refused.returncode == 2 and "--seed seeds/" in refused.stderr and len(refused.stderr.splitlines()) == 1
    log = tmp_path / "ui.log"
    proc, _ = start_rag("ui", data, model_cache, log, "/", args=("--seed", str(SEEDS)))
    try:
        assert "the index is empty: ingesting" in log.read_text()
        seeds = len(list(SEEDS.glob("*.txt")))
        stats = json.loads(run_rag("stats", "--json", env=cli_env).stdout)
        assert stats["abstracts"] >= seeds and stats["chunks"] > stats["abstracts"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    again = tmp_path / "again.log"  # an index that holds papers is not ingested into again
    proc, _ = start_rag("ui", data, model_cache, again, "/", args=("--seed", str(SEEDS)))
    proc.terminate()
    proc.wait(timeout=30)
    assert "ingesting" not in again.read_text()


def test_a_read_only_command_ends_with_its_whole_output_and_exit_code(seeds_env, cli_env, tmp_path) -> None:
    """`rag search`, `ask` and `stats` end without the interpreter's teardown (rag.frontends.cli.run): what they
    print still arrives whole, through a pipe too, a reader that stops early gets no traceback, and the exit code is
    the command's."""
    out = run_rag("search", "graph neural networks", "--json", "-k", "5", env=seeds_env)
    assert out.returncode == 0 and len(json.loads(out.stdout)["results"]) == 5
    piped = subprocess.run(f"{sys.executable} -m rag search 'graph neural networks' -k 5 | head -c 20",
                           shell=True, capture_output=True, text=True, env=seeds_env, cwd=ROOT)  # fmt: skip
    assert len(piped.stdout) == 20 and "Traceback" not in piped.stderr
    empty = run_rag("stats", env={**cli_env, "RAG_DATA_DIR": str(tmp_path / "none")})
    assert empty.returncode in (0, 2) and "Traceback" not in empty.stderr
    refused = run_rag("ask", "", env=seeds_env)
    assert refused.returncode == 2 and refused.stderr.startswith("rag: ")
