"""Shared fixtures: every test runs against the real embedded Chroma and the real bundled embedding model.

The ONNX export of the embedding model is cached for the whole session, and the seeds are ingested once into a
session index that read-only tests share; tests that write get their own data directory.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest

from rag.index.ingest import ingest
from rag.index.retriever import Retriever
from rag.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SEEDS_QA = ROOT / "eval" / "datasets" / "seeds_qa.jsonl"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`make test` and `make check` run two workers) each worker, and everything it starts, keeps
    to cores of its own (one each on 2 cores) and runs the local LLM on that many threads: llama.cpp's and ONNX
    Runtime's threads wait for each other by spinning, so two processes sharing both cores slow each other many
    times over (a local-LLM eval took over 5 minutes instead of 30 s). The product reads the cores it may use
    (`os.sched_getaffinity`)."""
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if worker and workers > 1:  # gw0, gw1, ...: each takes every n-th core (on fewer cores than workers, they share)
        cores = sorted(os.sched_getaffinity(0))
        index = int(worker.removeprefix("gw"))
        share = cores[index::workers] or [cores[index % len(cores)]]
        os.sched_setaffinity(0, share)
        os.environ["RAG_LLM_THREADS"] = str(len(share))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that starts `rag` as a subprocess (it takes cli_env) is slow, as the marker says: `make check` leaves
    it to `make test`, which runs everything."""
    for item in items:
        if "cli_env" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the embedding model's ONNX export goes: fresh for every session, or RAG_TEST_MODEL_CACHE (make check
    keeps it between runs)."""
    kept = os.environ.get("RAG_TEST_MODEL_CACHE")
    return Path(kept) if kept else tmp_path_factory.mktemp("models")


@pytest.fixture
def make_settings(tmp_path: Path, model_cache: Path):
    """Settings for a fresh data directory (environment variables do not leak in)."""

    def make(**overrides) -> Settings:
        values = {"data_dir": tmp_path / "data", "model_cache": model_cache, "chroma_host": None, **overrides}
        return Settings(_env_file=None, **values)

    return make


@pytest.fixture(scope="session")
def seeds_settings(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Settings:
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("seeds-index"),
        model_cache=model_cache,
        chroma_host=None,
    )
    ingest([SEEDS], settings)
    return settings


@pytest.fixture(scope="session")
def seeds_retriever(seeds_settings: Settings) -> Retriever:
    return Retriever(seeds_settings)


@pytest.fixture
def cli_env(tmp_path: Path, model_cache: Path) -> dict[str, str]:
    """Environment for `rag` subprocesses: a fresh data directory and the session's model cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CHROMA_", "OPENAI_"))}
    env.update({"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_MODEL_CACHE": str(model_cache)})
    return env


def run_rag(*args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "rag", *args],
        env=env,
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_chroma(path: Path, port: int, log: TextIO) -> subprocess.Popen:
    """A real `chroma run` server over path, once it answers its heartbeat."""
    import chromadb

    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    assert chroma, "the chroma command comes with the chromadb package"
    proc = subprocess.Popen(
        [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    answering(lambda: chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat(), proc, f"chroma run; see {log.name}")
    return proc


def start_milvus(index: Path, port: int, log: Path) -> subprocess.Popen:
    """`rag milvus-server` (milvus-lite's server) over an index file, once it answers."""
    from pymilvus import MilvusClient

    proc = subprocess.Popen([sys.executable, "-m", "rag", "milvus-server", str(index), "--port", str(port)],
                            stdout=log.open("a"), stderr=subprocess.STDOUT)  # fmt: skip
    answering(lambda: MilvusClient(uri=f"http://127.0.0.1:{port}", timeout=2).list_collections(), proc,
              f"rag milvus-server; see {log}")  # fmt: skip
    return proc


def answering(call: Callable[[], object], proc: subprocess.Popen, what: str, seconds: float = 60) -> None:
    """Retry `call` until it stops raising; kill the server and fail, naming `what`, if it exits or takes too long."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            call()
            return
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the server did not start: {what}") from None
            time.sleep(0.3)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory):
    """A real `chroma run` server on a free loopback port, stopped after the session."""
    port = free_port()
    log = (tmp_path_factory.mktemp("chroma-server") / "server.log").open("w")
    proc = start_chroma(tmp_path_factory.mktemp("chroma-server-data"), port, log)
    yield ("127.0.0.1", port)
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


LLAMA_SERVER_CONTEXT = 2048  # the test server's window (n_ctx); its clients are told it (RAG_OPENAI_CONTEXT_SIZE)


def start_llama_server(log_path: Path, *options: str) -> tuple[subprocess.Popen, str]:
    """llama-cpp-python's OpenAI-compatible server with the bundled GGUF, on a free loopback port (`options`: more
    server flags, e.g. "--embedding", "true")."""

    from rag.answer.llm import find_gguf

    port = free_port()
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(find_gguf(Settings(_env_file=None))),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(LLAMA_SERVER_CONTEXT),
         "--n_threads", os.environ.get("RAG_LLM_THREADS", "2"),
         "--model_alias", "smollm2", *options],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    wait_until_ready(f"{base_url}/models", proc, log_path, 120)
    return proc, base_url


def wait_until_ready(url: str, proc: subprocess.Popen, log_path: Path, seconds: float) -> None:
    """Poll url until it answers 200; kill the server and fail (naming its log) if it exits or takes too long."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the server did not start; see {log_path}")
        time.sleep(0.5)


def start_rag(command: str, data_dir: Path, model_cache: Path, log: Path, ready: str = "/healthz",
              args: tuple[str, ...] = (), **env: str) -> tuple[subprocess.Popen, str]:  # fmt: skip
    """`rag serve` or `rag ui` (with `args`) on a free port over a data directory (this environment's RAG_, CHROMA_
    and OPENAI_ variables left out, `env` added), once it answers 200 at `ready`: the process and its base url."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CHROMA_", "OPENAI_"))}
    environ.update({"RAG_DATA_DIR": str(data_dir), "RAG_MODEL_CACHE": str(model_cache), **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag", command, "--port", str(port), *args],
        env=environ, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_until_ready(f"{base}{ready}", proc, log, 180)  # /healthz: 503 while the models load, 200 once loaded
    return proc, base


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory):
    proc, base_url = start_llama_server(tmp_path_factory.mktemp("llama-server") / "server.log")
    yield base_url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="session")
def engine(seeds_settings: Settings):
    """One shared engine over the seed index (as the UI and CLI use it: models loaded once)."""
    from rag.engine import Engine

    return Engine(seeds_settings)


def write_jsonl(path: Path, records: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def load_questions(path: Path = SEEDS_QA) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
