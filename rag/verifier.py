"""The citation verifier: every answer sentence that survives is supported by the abstract it cites.

A sentence is supported by an abstract when (1) some sentence of the abstract is semantically close to it
(cosine similarity of their embeddings at least `threshold`), (2) every number and every named term (an acronym,
a CamelCase or hyphenated name, anything with digits: SAM, ESM-AA, CIFAR-10, GPT-4) in it also appears in the
abstract, and (3) most of its content words (stemmed) occur in the abstract (`coverage`), which catches fluent
paraphrases that add claims of their own. A sentence whose citations do not support it is re-attributed to the
retrieved abstract that does, or dropped. The supporting abstract sentence is kept as the citation's verbatim quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from rag.chunker import sentence_spans

if TYPE_CHECKING:
    import numpy as np

    from rag.embedder import Embedder

MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
NAMED = re.compile(r"\b[\w-]*(?:[A-Z][\w-]*[A-Z0-9]|\d)[\w-]*\b")
# Text in an abstract that addresses the assistant rather than describing research (prompt injection). Such
# sentences are withheld from the prompt and can never support or be quoted in an answer.
INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your)\s+"
    r"(\w+\s+)?(instructions?|prompts?|rules)\b"
    r"|\byou are now\b|\bsystem prompt\b|\b(reply|respond|answer|output) only with\b",
    re.IGNORECASE,
)
NUMBER_WORDS = {"1", "2", "3"}  # small counts are often paraphrased ("two", "three"); not checked
QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "why",
        "when",
        "where",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
    ]
)
WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
PREAMBLE = re.compile(r"^(the answer( to (the|your) question)? is|in summary|in conclusion|to answer)\s*[:,]\s*", re.I)


@dataclass
class Source:
    """A retrieved abstract as the answerer numbers it (n counts from 1 in retrieval order)."""

    n: int
    doc_id: str
    abstract: str
    venue: str | None = None
    year: int | None = None
    title: str | None = None
    url: str | None = None
    passage: str = ""  # the best chunk, which the prompt shows
    sentences: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None


@dataclass
class Verdict:
    text: str  # the claim without its markers
    sources: list[int]  # supporting source numbers (empty when dropped)
    quotes: dict[int, str]  # source number -> verbatim supporting sentence
    status: str  # "kept", "reattributed" or "dropped"
    reason: str = ""


def split_markers(sentence: str) -> tuple[str, list[int]]:
    """The sentence without [n] markers, and the cited numbers in order."""
    cited: list[int] = []
    for group in MARKER.findall(sentence):
        cited.extend(int(x) for x in re.split(r"\s*[,;]\s*", group))
    text = MARKER.sub("", sentence)
    text = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
    return text, list(dict.fromkeys(cited))


def content_coverage(claim: str, abstract: str) -> float:
    """Share of the claim's content words (stemmed, stop words left out) that occur in the abstract."""
    from bm25s.stopwords import STOPWORDS_EN

    stem = _stemmer().stemWord
    skip = QUESTION_WORDS.union(STOPWORDS_EN)
    words = {stem(w.lower()) for w in WORD.findall(claim) if w.lower() not in skip}
    if not words:
        return 0.0
    vocabulary = {stem(w.lower()) for w in WORD.findall(abstract)}
    return len(words & vocabulary) / len(words)


@cache
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


def lexical_gaps(claim: str, abstract: str) -> list[str]:
    """Numbers and named terms of the claim that the abstract does not contain."""
    haystack = abstract.lower()
    numbers = {n for n in NUMBER.findall(claim) if n not in NUMBER_WORDS}
    names = {t for t in NAMED.findall(claim) if not t.isdigit()}
    return sorted(t for t in numbers | names if t.lower() not in haystack)


class Verifier:
    def __init__(self, embedder: Embedder, sources: list[Source], threshold: float, coverage: float) -> None:
        self.embedder = embedder
        self.sources = {s.n: s for s in sources}
        self.threshold = threshold
        self.coverage = coverage

    def prepare(self, source: Source) -> None:
        if source.vectors is None:
            source.sentences = [source.abstract[a:b] for a, b in sentence_spans(source.abstract)] or [source.abstract]
            source.vectors = self.embedder.embed(source.sentences)

    def support(self, claim_vector: np.ndarray, claim: str, source: Source) -> tuple[float, str, list[str]]:
        """(best similarity, best abstract sentence, lexical gaps) of a claim against one source."""
        self.prepare(source)
        assert source.vectors is not None
        scores = source.vectors @ claim_vector
        best = int(scores.argmax())
        return float(scores[best]), source.sentences[best], lexical_gaps(claim, " ".join(source.sentences))

    def check(self, sentence: str) -> Verdict:
        claim, cited = split_markers(sentence)
        claim = PREAMBLE.sub("", claim)
        claim = claim[:1].upper() + claim[1:]
        if len(claim.split()) < 3:
            return Verdict(claim, [], {}, "dropped", "too short to be a claim")
        if INSTRUCTION.search(claim):
            return Verdict(claim, [], {}, "dropped", "an instruction, not a claim")
        vector = self.embedder.embed([claim])[0]
        supported: dict[int, tuple[float, str]] = {}
        for n, source in self.sources.items():
            score, quote, gaps = self.support(vector, claim, source)
            covered = content_coverage(claim, " ".join(source.sentences)) >= self.coverage
            if score >= self.threshold and not gaps and covered:
                supported[n] = (score, quote)
        kept = [n for n in cited if n in supported]
        if kept:
            return Verdict(claim, kept, {n: supported[n][1] for n in kept}, "kept")
        if supported:
            best = max(supported, key=lambda n: supported[n][0])
            return Verdict(claim, [best], {best: supported[best][1]}, "reattributed", f"cited {cited or 'nothing'}")
        return Verdict(claim, [], {}, "dropped", "no retrieved abstract supports it")


def without_instructions(text: str) -> str:
    """The text with any sentence addressed to the assistant replaced by a marker (for prompts)."""
    spans = sentence_spans(text)
    if not any(INSTRUCTION.search(text[a:b]) for a, b in spans):
        return text
    return " ".join("[text withheld]" if INSTRUCTION.search(text[a:b]) else text[a:b] for a, b in spans)
