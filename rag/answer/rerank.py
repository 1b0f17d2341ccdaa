"""Bring your own reranker. A cross-encoder reads the question together with each retrieved passage and scores how
well the passage answers it; the pipeline reorders the fused top results by that score before the refusal gate,
and the gate then decides on the best score (RAG_RERANK_THRESHOLD) instead of its own.

- RAG_RERANK_MODEL: a local Hugging Face sequence-classification folder with one output (bge-reranker, the ms-marco
  cross-encoders, mxbai-rerank, the project's `rag train-reranker`) or two (the second read as "relevant"), made
  ready as a judge folder is (rag/answer/nli.py): exported to ONNX once, int8 where the CPU has int8 instructions and
  the int8 scores agree with fp32's.
- RAG_RERANK_BASE_URL: a server with the Cohere/Jina rerank API (`POST {base}/rerank`: Infinity, vLLM, llama.cpp's
  server), or Hugging Face TEI's form of it (`texts` for `documents`).
Scores are probabilities, as servers report them: the sigmoid of one logit, the softmax of two. A server that does not
answer leaves the results in search order, and the answer says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rag.errors import BadInput

if TYPE_CHECKING:
    import numpy as np

    from rag.records import SearchResult
    from rag.settings import Settings

MAX_LENGTH = 256  # word pieces of question + passage; the passage is truncated
SCORE_AGREEMENT = 0.05  # int8 is used when its scores stay this close to fp32's on every sample pair
RELEVANCE = "relevance"


class RerankerDown(Exception):
    """The rerank server did not answer, or not in a form we read."""


class Reranker(Protocol):
    name: str

    def scores(self, question: str, passages: list[str]) -> list[float]:
        """How well each passage answers the question, 0 to 1."""
        ...


def rerank_columns(id2label: dict[int, str], where: str) -> tuple[str, ...]:
    """A reranker has one output (its relevance logit) or two (not relevant, relevant)."""
    if len(id2label) == 1:
        return (RELEVANCE,)
    if len(id2label) == 2:
        return ("irrelevant", RELEVANCE)
    raise BadInput(f"{where} has {len(id2label)} outputs; a reranker has one (a relevance score) or two")


def relevance(logits: np.ndarray) -> np.ndarray:
    """Each row's probability of relevance: sigmoid of one logit, softmax's second of two."""
    import numpy as np

    if logits.shape[1] == 1:
        return 1.0 / (1.0 + np.exp(-logits[:, 0]))
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp[:, 1] / exp.sum(axis=1)


class OnnxReranker:
    """The cross-encoder of an ONNX file, one pair per run (the fastest on a CPU, as for the verifier)."""

    def __init__(self, path: Path, tokenizer_dir: Path, name: str) -> None:
        from rag.onnx import cpu_session, load_tokenizer

        self.session = cpu_session(path, len(os.sched_getaffinity(0)))
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.tokenizer = load_tokenizer(tokenizer_dir, MAX_LENGTH)
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
        self.name = name

    def scores(self, question: str, passages: list[str]) -> list[float]:
        import numpy as np

        from rag.onnx import encoder_feeds

        out = []
        for passage in passages:
            feeds = encoder_feeds(self.tokenizer, [(question, passage)])
            out.append(self.session.run(None, {name: feeds[name] for name in self.inputs})[0])
        return relevance(np.concatenate(out)).tolist() if out else []


def local_reranker(folder: Path, cache: Path) -> OnnxReranker:
    """The reranker of a local model folder, exported once into `cache` (BadInput when it is not one)."""
    from rag.answer.nli import AGREEMENT_PAIRS, inspect, prepared

    model = inspect(folder, "RAG_RERANK_MODEL", rerank_columns)
    tokenizer = model.tokenizer_dir(cache)

    def agreement(fp32: Path, int8: Path) -> float:
        pairs = [(claim, premise) for premise, claim in AGREEMENT_PAIRS]  # (question-like, passage)
        first, second = (OnnxReranker(m, tokenizer, "") for m in (fp32, int8))
        gaps = [abs(a - b) for q, p in pairs for a, b in zip(first.scores(q, [p]), second.scores(q, [p]), strict=True)]
        return sum(gap <= SCORE_AGREEMENT for gap in gaps) / len(gaps)

    path, _ = prepared(model, cache, agreement)
    return OnnxReranker(path, tokenizer, str(model.path))


class ServerReranker:
    """A rerank server: Cohere/Jina's API (Infinity, vLLM, llama.cpp), or TEI's."""

    def __init__(self, base_url: str, model: str = "", api_key: str | None = None, timeout: float = 10.0) -> None:
        self.url = base_url.rstrip("/") + "/rerank"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout
        self.name = self.url

    def scores(self, question: str, passages: list[str]) -> list[float]:
        import httpx

        if not passages:
            return []
        body: dict = {"query": question, "documents": passages, "return_documents": False}
        if self.model:
            body["model"] = self.model
        try:
            response = httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
            if response.status_code == 422:  # TEI names the passages "texts"
                tei = {"query": question, "texts": passages, "raw_scores": False}
                response = httpx.post(self.url, json=tei, headers=self.headers, timeout=self.timeout)
            response.raise_for_status()
            return read_scores(response.json(), len(passages))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise RerankerDown(f"{self.url}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc


def read_scores(reply: dict | list, count: int) -> list[float]:
    """The score of each passage from a rerank reply: `results` of {index, relevance_score} (Cohere, Jina,
    Infinity) or a list of {index, score} (TEI)."""
    rows = reply["results"] if isinstance(reply, dict) else reply
    scores = [0.0] * count
    for row in rows:
        scores[int(row["index"])] = float(row["relevance_score"] if "relevance_score" in row else row["score"])
    return scores


def make_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None (BadInput when both a folder and a server are set)."""
    if settings.rerank_model is not None and settings.rerank_base_url:
        raise BadInput("set RAG_RERANK_MODEL or RAG_RERANK_BASE_URL, not both")
    if settings.rerank_base_url:
        return ServerReranker(
            settings.rerank_base_url, settings.rerank_api_model, settings.rerank_api_key, settings.rerank_timeout_s
        )
    if settings.rerank_model is not None:
        return local_reranker(settings.rerank_model, settings.model_cache_dir)
    return None


@dataclass(frozen=True)
class Reranked:
    """The results reordered by the reranker (the first k), its best score (None: not reranked) and, when the
    reranker failed, a note for the reader."""

    results: list[SearchResult]
    best: float | None = None
    note: str | None = None


def rerank(reranker: Reranker, question: str, results: list[SearchResult], k: int) -> Reranked:
    """The results in the reranker's order, each scored by it, the first k; in their own order with a note when
    the reranker does not answer."""
    if not results:
        return Reranked([])
    try:
        scores = reranker.scores(question, [r.text for r in results])
    except RerankerDown as exc:
        return Reranked(results[:k], None, f"The reranker did not answer ({exc}); results are in search order.")
    order = sorted(range(len(results)), key=lambda i: -scores[i])[:k]
    ranked = [replace(results[i], rank=rank, score=scores[i]) for rank, i in enumerate(order, start=1)]
    return Reranked(ranked, scores[order[0]])
