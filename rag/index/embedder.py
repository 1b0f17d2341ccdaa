"""Text -> unit vectors: a sentence-transformers model run on ONNX Runtime with the model's own tokenizer (the
`tokenizers` package), or an OpenAI-compatible embeddings server. ONNX Runtime starts in a fraction of a second,
where importing torch and sentence-transformers takes several, and is faster on a CPU. Pooling and normalisation
follow the model's sentence-transformers configuration, so vectors match sentence-transformers' own to about 1e-6
(a test checks this). The model is found, exported and quantised by rag/index/models.py; long ingests embed in
worker processes (rag/index/workers.py).
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rag.onnx import cpu_session, encoder_feeds, load_tokenizer

if TYPE_CHECKING:
    import numpy as np

Precision = Literal["fp32", "int8"]


class Embedder:
    """A sentence-transformers model run with ONNX Runtime; embeds `batch_size` texts per run (see
    RAG_EMBED_BATCH_SIZE: one at a time is the fastest on a CPU), on `workers` sessions at once (see
    RAG_EMBED_WORKERS: 0 is one per core this process may use), each on `threads` threads (default: the cores
    shared out among the sessions). The sessions are made on first use."""

    def __init__(
        self,
        model_dir: Path,
        onnx_path: Path,
        batch_size: int = 1,
        precision: Precision = "fp32",
        workers: int = 0,
        threads: int = 0,
    ) -> None:
        config = _st_config(model_dir)
        self.model_dir = model_dir
        self.onnx_path = onnx_path
        self.precision = precision
        self.batch_size = batch_size
        self.pooling = config["pooling"]
        self.normalize = config["normalize"]
        self.tokenizer = load_tokenizer(model_dir, config["max_length"])
        cores = len(os.sched_getaffinity(0))  # the cores this process may use, not the machine's
        self.workers = workers or cores
        self.threads = threads or max(1, cores // self.workers)

    @cached_property
    def sessions(self) -> list:
        return [cpu_session(self.onnx_path, self.threads) for _ in range(self.workers)]

    @cached_property
    def input_names(self) -> list[str]:
        return [i.name for i in self.sessions[0].get_inputs()]

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text, in order. The texts are shared out among the sessions, which run at once (ONNX
        Runtime lets go of the GIL): on small inputs, one single-threaded session per core does about 1.4x the work
        of one session spread over all cores."""
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        shares = deal(texts, len(self.sessions))
        if len(shares) == 1:
            return gather(shares, [self._embed_share(self.sessions[0], [texts[i] for i in shares[0]])])
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(shares)) as pool:
            parts = pool.map(self._embed_share, self.sessions, [[texts[i] for i in share] for share in shares])
            return gather(shares, list(parts))

    def _embed_share(self, session, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
        import numpy as np

        step = self.batch_size
        return np.concatenate([self._embed_batch(session, texts[i : i + step]) for i in range(0, len(texts), step)])

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()

    def _embed_batch(self, session, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
        import numpy as np

        feeds = encoder_feeds(self.tokenizer, texts)
        hidden = session.run(None, {name: feeds[name] for name in self.input_names})[0]
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = feeds["attention_mask"][..., None].astype(hidden.dtype)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        if self.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)


def deal(texts: list[str], ways: int) -> list[list[int]]:
    """The texts' indices shared out `ways` ways (fewer when there are fewer texts), each share sorted by length so
    that a run of several texts pads little, and the shares alike in length."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [share for share in (order[w::ways] for w in range(ways)) if share]


def gather(shares: list[list[int]], parts: list[np.ndarray]) -> np.ndarray:
    """The vectors of each share (as dealt by `deal`) put back in the texts' order."""
    import numpy as np

    result = np.empty((sum(map(len, shares)), parts[0].shape[1]), dtype=np.float32)
    for share, vectors in zip(shares, parts, strict=True):
        result[share] = vectors
    return result


class RemoteEmbedder:
    """Embeddings from an OpenAI-compatible /v1/embeddings server (RAG_EMBEDDING_BASE_URL), in batches, with the
    openai client's retries. Its vectors count as fp32: the server runs the model at full precision."""

    precision: Precision = "fp32"

    def __init__(self, base_url: str, model: str, key: str | None, batch_size: int, timeout: float) -> None:
        from openai import OpenAI

        self.base_url = base_url
        self.model = model
        self.batch_size = batch_size
        self.client = OpenAI(base_url=base_url, api_key=key or "none", timeout=timeout, max_retries=3)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np
        import openai

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                reply = self.client.embeddings.create(model=self.model, input=batch, encoding_format="float")
            except openai.OpenAIError as exc:
                raise RuntimeError(f"the embeddings server at {self.base_url} failed: {exc}") from None
            rows = [row.embedding for row in sorted(reply.data, key=lambda item: item.index)]
            if len(rows) != len(batch) or any(not row or isinstance(row[0], list) for row in rows):
                raise RuntimeError(f"the embeddings server at {self.base_url} did not return one vector per text "
                                   "(one per token: no pooling); serve a sentence-embedding model")  # fmt: skip
            out.append(np.array(rows, dtype=np.float32))
        vectors = np.concatenate(out)
        return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()


AnyEmbedder = Embedder | RemoteEmbedder  # what the library, retriever and verifier are given


def _st_config(model_dir: Path) -> dict:
    """Pooling, normalisation and maximum length from the sentence-transformers files in model_dir."""
    modules = _read_json(model_dir / "modules.json") or []
    pooling = _read_json(model_dir / "1_Pooling" / "config.json") or {}
    st = _read_json(model_dir / "sentence_bert_config.json") or {}
    return {
        "pooling": "cls" if pooling.get("pooling_mode_cls_token") else "mean",
        "normalize": any(m.get("type", "").endswith("Normalize") for m in modules),
        "max_length": int(st.get("max_seq_length", 256)),
    }


def _read_json(path: Path) -> dict | list | None:
    return json.loads(path.read_text()) if path.exists() else None
