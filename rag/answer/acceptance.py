"""The bundled judge's acceptor: whether a claim the exact checks let through is supported by an abstract.

The shipped cross-encoder is small: its support probability does not tell a capable model's faithful sentences
from unsupported ones (on the written tuning claims it confirmed 79 of 184 unsupported ones and left 90 of 368
faithful ones unconfirmed), and given what follows it adds nothing measurable (cross-validated on the tuning
claims: faithful kept 0.712 with its probabilities among the features, 0.719 without, at the same share of
unsupported kept). The acceptor decides from how close the claim's embedding is to the abstract's sentences, how
much of its wording the abstract holds, and its numbers and length. It is a small gradient-boosted tree ensemble
trained by `rag train-acceptor` (rag/training/acceptor.py) on tuning claims only, stored as JSON
(rag/models/verifier/acceptor.json, checksum in acceptor.sha256) and evaluated here in plain Python. Its features
are the bundled embedding model's: with another embedding model, or a verifier model of your own
(RAG_VERIFIER_MODEL), the judge decides by the cross-encoder's probabilities instead.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.answer.checks import EVIDENCE_SENTENCES, as_written, checked_numbers, restates_numbers
from rag.terms import FUNCTION_WORDS, content_coverage, content_words, stemmed_words

if TYPE_CHECKING:
    import numpy as np

    from rag.answer.sources import Source

ACCEPTOR_DIR = Path(__file__).resolve().parents[1] / "models" / "verifier"
FEATURES = (
    "similarity",  # cosine of the claim to the closest sentence, the second closest, the two together, the abstract
    "second_similarity",
    "pair_similarity",
    "abstract_similarity",
    "coverage",  # share of the claim's content words in the abstract; beyond function words; in the 3 closest
    "coverage_beyond_function_words",
    "evidence_coverage",
    "new_words",  # content words of the claim the abstract never uses, and how many content words it has
    "content_words",
    "restates_numbers",  # 1 / 0, -1 with fewer than two numbers (rag/answer/checks.py)
    "numbers",
    "words",
)
# The acceptor decides claims of this many words or more. It learned from answer-style sentences (the written
# tuning claims: 15-30 words for 9 in 10); shorter ones, such as SciFact's expert claims, it rejects almost always
# (trained without them: 0-3 % of the supported SciFact dev claims kept), so they go to the cross-encoder and the
# restatement rule as before. Chosen by cross-validation on the tuning claims among 0, 10, 12, 14 and 15 words.
MIN_WORDS = 12


def decides(claim: str) -> bool:
    """Whether the acceptor, rather than the cross-encoder, judges this claim."""
    return len(claim.split()) >= MIN_WORDS


def acceptance_features(claim: str, claim_vector: np.ndarray, source: Source) -> list[float]:
    """FEATURES of a claim against a prepared source (its sentences embedded by the bundled model)."""
    import numpy as np

    assert source.vectors is not None
    similarities = source.vectors @ claim_vector
    order = similarities.argsort()[::-1]
    pair = source.vectors[order[:2]].sum(axis=0)
    whole = source.vectors.mean(axis=0)
    text = source.checkable
    evidence = " ".join(source.sentences[i] for i in sorted(order[:EVIDENCE_SENTENCES]))
    words = content_words(claim)
    restated = restates_numbers(claim, text)

    def cosine(vector: np.ndarray) -> float:
        return float(vector @ claim_vector / (np.linalg.norm(vector) or 1.0))

    return [
        float(similarities[order[0]]),
        float(similarities[order[1]]) if len(order) > 1 else 0.0,
        cosine(pair),
        cosine(whole),
        content_coverage(claim, text),
        content_coverage(claim, text, FUNCTION_WORDS),
        content_coverage(claim, evidence),
        float(len(words - stemmed_words(text))),
        float(len(words)),
        -1.0 if restated is None else float(restated),
        float(len(checked_numbers(as_written(claim)))),
        float(len(claim.split())),
    ]


@dataclass(frozen=True)
class Acceptor:
    """Trees of (feature, threshold, left, right, value, missing goes left) nodes (feature -1: a leaf holding value),
    read as scikit-learn reads them (left when the feature is at most the threshold; a NaN by the last field); the
    probability of support is the logistic of the baseline plus each tree's leaf; `threshold`: the operating
    point."""

    trees: list[list[list[float]]]
    baseline: float
    threshold: float

    def probability(self, features: list[float]) -> float:
        raw = self.baseline
        for nodes in self.trees:
            node = nodes[0]
            while node[0] >= 0:
                value = features[int(node[0])]
                left = value <= node[1] if value == value else node[5]  # value != value: NaN
                node = nodes[int(node[2] if left else node[3])]
            raw += node[4]
        return 1.0 / (1.0 + math.exp(-raw))


def load_acceptor(folder: Path = ACCEPTOR_DIR, threshold: float | None = None) -> Acceptor:
    """The shipped acceptor, checked against its recorded checksum; `threshold` overrides its operating point."""
    path = folder / "acceptor.json"
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != (folder / "acceptor.sha256").read_text().split()[0]:
        raise RuntimeError(f"{path} does not match its recorded checksum: rebuild it with `rag train-acceptor`")
    record = json.loads(data)
    if tuple(record["features"]) != FEATURES or record["min_words"] != MIN_WORDS:
        raise RuntimeError(f"{path} was trained on other features or claims: rebuild it with `rag train-acceptor`")
    return Acceptor(record["trees"], record["baseline"], record["threshold"] if threshold is None else threshold)
