"""Embedding a long ingest in worker processes, one single-threaded copy of the model per core, so that embedding
goes on while the ingest writes to Chroma."""

from __future__ import annotations

from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

from rag.index.embedder import AnyEmbedder, Embedder, Precision, deal, gather

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    import numpy as np

POOL_MIN_PAPERS = 500  # an ingest of fewer papers embeds in this process: starting the workers would cost more


PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies


@contextmanager
def embedding_pipeline(embedder: AnyEmbedder, papers: int) -> Iterator[Callable[[list[str]], Callable[[], np.ndarray]]]:
    """A function that starts embedding texts and returns one that waits for their vectors. For a long ingest with
    the local model on several cores, the embedding runs in worker processes, one single-threaded copy of the
    model per core: it then goes on while this process writes to Chroma, whose writes hold the GIL (embedding
    threads here would wait for them). Otherwise the texts are embedded here, at once."""
    if not isinstance(embedder, Embedder) or embedder.workers < 2 or papers < POOL_MIN_PAPERS:

        def at_once(texts: list[str]) -> Callable[[], np.ndarray]:
            vectors = embedder.embed(texts)
            return lambda: vectors

        yield at_once
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    recipe = (embedder.model_dir, embedder.onnx_path, embedder.batch_size, embedder.precision)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(embedder.workers, mp_context=context, initializer=start_worker) as pool:

        def start(texts: list[str]) -> Callable[[], np.ndarray]:
            shares = deal(texts, embedder.workers)
            futures = [pool.submit(embed_in_worker, *recipe, [texts[i] for i in share]) for share in shares]
            return lambda: gather(shares, [future.result() for future in futures])

        try:
            yield start
        finally:
            pool.shutdown(cancel_futures=True)


def start_worker() -> None:
    """Workers leave Ctrl-C to the ingest, which stops them (rather than each printing a traceback), and end with
    it however it ends: killed (SIGKILL) it cannot stop them, so on Linux the kernel sends them SIGTERM when it dies
    (they went on spinning otherwise)."""
    import ctypes
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    libc = ctypes.CDLL(None)
    if hasattr(libc, "prctl"):
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() == 1:  # the ingest died before the request took effect
            os._exit(1)


@cache
def worker_embedder(model_dir: Path, onnx_path: Path, batch_size: int, precision: Precision) -> Embedder:
    """A worker process's one single-threaded copy of the model, loaded with its first texts."""
    return Embedder(model_dir, onnx_path, batch_size, precision, workers=1, threads=1)


def embed_in_worker(
    model_dir: Path, onnx_path: Path, batch_size: int, precision: Precision, texts: list[str]
) -> np.ndarray:
    return worker_embedder(model_dir, onnx_path, batch_size, precision).embed(texts)
