"""The entailment judge: does an abstract support a claim, contradict it, or say nothing about it?

The model is a small cross-encoder the project builds itself from the bundled all-MiniLM-L6-v2
(`rag train-verifier`, see rag/training/verifier.py); it ships as rag/models/verifier/model.onnx with its checksum in
model.json and runs on ONNX Runtime with the bundled model's tokenizer, like the embedder.

Judging a claim against an abstract reads only the abstract's few sentences closest to the claim (by the
embeddings the verifier already has) and, for each, the window of it and its next sentence, since evidence can span
two sentences. The best-supporting window is the quote.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

    from rag.settings import Settings

LABELS = ("supported", "contradicted", "not_enough_info")
Label = Literal["supported", "contradicted", "not_enough_info"]
MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / "verifier"
MAX_LENGTH = 128  # word pieces of premise + claim; the longer of the two is truncated first
# Sentences read per claim, the closest by embedding, and how many of them also with their next sentence. 3 and 1
# (from 5 and 2) keep the same claims on the tuning sets but one SciFact dev claim of 32, and a 5-sentence answer
# is verified in about 260 ms instead of 370 (benchmarks/verifier_quality.py --latency); the exact checks read the
# same 3 sentences (rag/answer/checks.py).
CANDIDATES = 3
PAIRED = 1
FIRST_READ = 2  # windows read before the others (the closest sentence, alone and with the next)
# The probability of contradiction at which the shipped model may call a claim contradicted: the lowest threshold
# whose precision ("contradicted" is right) is at least 0.9 on the SciFact dev claims and on the held-out ones
# (`benchmarks/verifier_quality.py --operating-point`). None: no threshold reaches it on held-out claims (dev: 0.95
# is right 6 times in 6; held out: 8 in 14 at 0.95, 4 in 5 at 0.97, no call above), so the model never calls a claim
# contradicted by itself; what it cannot confirm is "not enough information", never an accusation.
CONTRADICTION_OPERATING_POINT: float | None = None


@dataclass(frozen=True)
class Judgement:
    label: Label
    score: float  # the probability of the label (for not_enough_info: 1 - the best support or contradiction)
    quote: str  # the deciding abstract sentence(s), verbatim
    sentences: tuple[int, ...]  # their indices in the abstract
    reason: str = ""  # why it is not supported, when an exact check decided (rag/answer/checks.py)


class EntailmentModel:
    """The ONNX cross-encoder: (premise, claim) pairs -> probabilities of LABELS. One pair per run by default: on a
    CPU that is the fastest (no padding, the working memory stays in cache: 98-118 pairs/s against 60 at 32 per
    run) and keeps ONNX Runtime's memory small (~330 MiB less than at 32)."""

    def __init__(
        self,
        path: Path | None = None,
        batch_size: int = 1,
        model_dir: Path | None = None,
        columns: tuple[str, ...] = LABELS,
    ) -> None:
        """`path`: the ONNX file (the shipped one by default); `model_dir`: the folder of its tokenizer (the bundled
        MiniLM's by default); `columns`: the verifier's label of each of its outputs (RAG_VERIFIER_MODEL). The model
        is loaded on first use: a command that judges nothing (a refusal, a quoted answer) does not wait for it."""
        self.path = path
        self.model_dir = model_dir
        self.batch_size = batch_size
        self.to_labels = label_matrix(columns)
        self._lock = threading.Lock()  # threads answering at once load it once
        self._runtime: tuple[InferenceSession, list[str], Tokenizer] | None = None

    @property
    def loaded(self) -> bool:
        return self._runtime is not None

    def load(self) -> tuple[InferenceSession, list[str], Tokenizer]:
        """The ONNX session, its input names and the tokenizer, made on first use (a long-running app calls this
        at start, so that its first answer does not wait). A damaged shipped model is reported here."""
        with self._lock:
            if self._runtime is None:
                from rag.onnx import bundled_model_dir, cpu_session, load_tokenizer

                session = cpu_session(self.path or model_path(), len(os.sched_getaffinity(0)))
                tokenizer = load_tokenizer(self.model_dir or bundled_model_dir(), MAX_LENGTH)
                tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
                self._runtime = (session, [i.name for i in session.get_inputs()], tokenizer)
            return self._runtime

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import numpy as np

        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        out = []
        for start in range(0, len(pairs), self.batch_size):
            out.append(self._batch(pairs[start : start + self.batch_size]))
        return np.concatenate(out)

    def _batch(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import numpy as np

        from rag.onnx import encoder_feeds

        session, input_names, tokenizer = self.load()
        feeds = encoder_feeds(tokenizer, pairs)
        logits = session.run(None, {name: feeds[name] for name in input_names})[0]
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (exp / exp.sum(axis=1, keepdims=True)) @ self.to_labels  # LABELS order


def label_matrix(columns: tuple[str, ...]) -> np.ndarray:
    """Outputs' probabilities (one column per output, labelled `columns`) times this: probabilities in LABELS order,
    each output's added to its label's column; a label no output has (a two-label model's "contradicted") stays 0."""
    import numpy as np

    return np.array([[float(c == label) for label in LABELS] for c in columns], dtype=np.float32)


def entailment_model(settings: Settings) -> EntailmentModel:
    """The judge's cross-encoder: the shipped one, or the NLI model of the folder RAG_VERIFIER_MODEL names (made
    ready once and recorded beside the index; BadInput when the folder is not such a model)."""
    if settings.verifier_model is None:
        return EntailmentModel()
    from rag.answer.nli import AGREEMENT_PAIRS, inspect, prepared, record_use

    judge = inspect(settings.verifier_model)
    tokenizer = judge.tokenizer_dir(settings.model_cache_dir)

    def agreement(fp32: Path, int8: Path) -> float:
        pairs = list(AGREEMENT_PAIRS)
        decide = [EntailmentModel(m, model_dir=tokenizer, columns=judge.columns).probabilities(pairs).argmax(axis=1)
                  for m in (fp32, int8)]  # fmt: skip
        return float((decide[0] == decide[1]).mean())

    path, precision = prepared(judge, settings.model_cache_dir, agreement)
    record_use(judge, precision, settings.data_dir)
    return EntailmentModel(path, model_dir=tokenizer, columns=judge.columns)


def model_path(folder: Path = MODEL_DIR) -> Path:
    """The shipped model file, checked against the checksum recorded when it was built."""
    import hashlib

    record = json.loads((folder / "model.json").read_text())
    path = folder / record["file"]
    if hashlib.sha256(path.read_bytes()).hexdigest() != record["sha256"]:
        raise RuntimeError(f"{path} does not match its recorded checksum: rebuild it with `rag train-verifier`")
    return path


def windows(candidates: list[int], count: int) -> list[tuple[int, ...]]:
    """Each candidate sentence alone; for the closest few, with its next sentence (evidence that spans two); and the
    two closest together when they are apart (a sentence that draws on two places of the abstract)."""
    seen: dict[tuple[int, ...], None] = {}
    for rank, i in enumerate(candidates):
        seen.setdefault((i,), None)
        if rank < PAIRED and i + 1 < count:
            seen.setdefault((i, i + 1), None)
    if len(candidates) > 1 and abs(candidates[0] - candidates[1]) > 1:
        seen.setdefault(tuple(sorted(candidates[:2])), None)
    return list(seen)


@dataclass(frozen=True)
class Evidence:
    """The windows of an abstract read for a claim, and the model's probabilities for each."""

    windows: list[tuple[int, ...]]  # sentence indices
    texts: list[str]  # each window's text, verbatim from the abstract (two sentences apart: joined by a space)
    probabilities: np.ndarray  # (windows, LABELS)


def contiguous(window: tuple[int, ...]) -> bool:
    return window[-1] - window[0] == len(window) - 1


def window_text(abstract: str, spans: list[tuple[int, int]], window: tuple[int, ...]) -> str:
    if contiguous(window):
        return abstract[spans[window[0]][0] : spans[window[-1]][1]].strip()
    return " ".join(abstract[spans[i][0] : spans[i][1]].strip() for i in window)


def read_evidence(
    model: EntailmentModel,
    claim: str,
    abstract: str,
    spans: list[tuple[int, int]],
    similarities: np.ndarray,
    enough: float = 1.0,
) -> Evidence:
    """Score the windows around the abstract's sentences closest to the claim (`similarities`: per sentence). The
    closest sentences are read first; when one of them already supports the claim with probability `enough` (and
    none contradicts it more), the rest are not read."""
    import numpy as np

    order = [int(i) for i in similarities.argsort()[::-1][:CANDIDATES]]
    read = windows(order, len(spans))
    texts = [window_text(abstract, spans, w) for w in read]
    first = model.probabilities([(text, claim) for text in texts[:FIRST_READ]])
    if first[:, 0].max() >= max(enough, first[:, 1].max()) or len(texts) <= FIRST_READ:
        return Evidence(read[:FIRST_READ], texts[:FIRST_READ], first)
    rest = model.probabilities([(text, claim) for text in texts[FIRST_READ:]])
    return Evidence(read, texts, np.concatenate([first, rest]))


def decide(evidence: Evidence, support_threshold: float, contradict_threshold: float | None) -> Judgement:
    """Supported when a window supports the claim at least as strongly as any contradicts it (the quote: the best
    window, or one of its two sentences when that alone suffices); contradicted when a window contradicts it with
    at least `contradict_threshold` (None: never); otherwise not enough information."""
    probs = evidence.probabilities
    support, contra = float(probs[:, 0].max()), float(probs[:, 1].max())
    if support >= support_threshold and support >= contra:
        best = int(probs[:, 0].argmax())
        inside = [i for i, w in enumerate(evidence.windows) if len(w) == 1 and w[0] in evidence.windows[best]]
        alone = [i for i in inside if probs[i, 0] >= support_threshold]
        best = max(alone, key=lambda i: probs[i, 0]) if alone else best  # one sentence, when it suffices
        return Judgement("supported", float(probs[best, 0]), quote(evidence, best), evidence.windows[best])
    if contradict_threshold is not None and contra >= contradict_threshold:
        best = int(probs[:, 1].argmax())
        return Judgement("contradicted", contra, quote(evidence, best), evidence.windows[best])
    best = int(probs[:, 0].argmax() if support >= contra else probs[:, 1].argmax())
    return Judgement("not_enough_info", 1 - max(support, contra), quote(evidence, best), evidence.windows[best])


def quote(evidence: Evidence, best: int) -> str:
    """The window's text, verbatim; for two sentences apart, the one of them that supports the claim more (both
    were read alone), so that a quote is always one stretch of the abstract."""
    window = evidence.windows[best]
    if contiguous(window):
        return evidence.texts[best]
    alone = [i for i, w in enumerate(evidence.windows) if len(w) == 1 and w[0] in window]
    return evidence.texts[max(alone, key=lambda i: evidence.probabilities[i, 0])]
