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
from typing import TYPE_CHECKING, Literal

from rag.chunker import sentence_spans
from rag.records import DroppedSentence, VerifierReport
from rag.text import content_coverage, split_markers

if TYPE_CHECKING:
    import numpy as np

    from rag.embedder import Embedder

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
PREAMBLE = re.compile(r"^(the answer( to (the|your) question)? is|in summary|in conclusion|to answer)\s*[:,]\s*", re.I)
MIN_CLAIM_WORDS = 3

Status = Literal["kept", "reattributed", "dropped"]


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
    passage: str = ""  # the best-matching chunk, as retrieved
    key_passage: str = ""  # what the prompt shows of it: its key sentences for the question (see focus)
    sentences: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None


@dataclass
class Verdict:
    text: str  # the claim without its markers
    sources: list[int]  # supporting source numbers (empty when dropped)
    quotes: dict[int, str]  # source number -> verbatim supporting sentence
    status: Status
    reason: str = ""


def record(report: VerifierReport, verdict: Verdict) -> None:
    """Count a verdict in the report (a dropped sentence with its reason)."""
    if verdict.status == "kept":
        report.kept += 1
    elif verdict.status == "reattributed":
        report.reattributed += 1
    else:
        report.dropped += 1
        report.dropped_sentences.append(DroppedSentence(verdict.text, verdict.reason))


def lexical_gaps(claim: str, abstract: str) -> list[str]:
    """Numbers and named terms of the claim that the abstract does not contain."""
    haystack = abstract.lower()
    numbers = {n for n in NUMBER.findall(claim) if n not in NUMBER_WORDS}
    names = {t for t in NAMED.findall(claim) if not t.isdigit()}
    return sorted(t for t in numbers | names if t.lower() not in haystack)


class Verifier:
    """Checks answer sentences against the sources a request may cite. Stateless between requests: what it learns
    about a source (its sentences and their vectors) is kept on the Source."""

    def __init__(self, embedder: Embedder, threshold: float, coverage: float) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.coverage = coverage

    def prepare(self, sources: list[Source]) -> None:
        """Split each source into sentences and embed them (once per source)."""
        for source in sources:
            if source.vectors is None:
                spans = sentence_spans(source.abstract)
                source.sentences = [source.abstract[a:b] for a, b in spans] or [source.abstract]
                source.vectors = self.embedder.embed(source.sentences)

    def support(self, claim_vector: np.ndarray, claim: str, source: Source) -> tuple[float, str, list[str]]:
        """(best similarity, best abstract sentence, lexical gaps) of a claim against one source."""
        self.prepare([source])
        assert source.vectors is not None
        scores = source.vectors @ claim_vector
        best = int(scores.argmax())
        return float(scores[best]), source.sentences[best], lexical_gaps(claim, " ".join(source.sentences))

    def check(self, sentence: str, sources: list[Source]) -> Verdict:
        """Keep the sentence when a source it cites supports it, re-attribute it to the best supporting source
        when it cites none that does, drop it otherwise."""
        claim, cited = split_markers(sentence)
        claim = PREAMBLE.sub("", claim)
        claim = claim[:1].upper() + claim[1:]
        if len(claim.split()) < MIN_CLAIM_WORDS:
            return Verdict(claim, [], {}, "dropped", "too short to be a claim")
        if INSTRUCTION.search(claim):
            return Verdict(claim, [], {}, "dropped", "an instruction, not a claim")
        vector = self.embedder.embed([claim])[0]
        supported: dict[int, tuple[float, str]] = {}
        for source in sources:
            score, quote, gaps = self.support(vector, claim, source)
            covered = content_coverage(claim, " ".join(source.sentences)) >= self.coverage
            if score >= self.threshold and not gaps and covered:
                supported[source.n] = (score, quote)
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
