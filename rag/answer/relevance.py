"""Does a text address the question? One score for (question, sentence), used wherever sentences are chosen (the
extractive answer, the key sentences shown to the LLM, the final answer), and one for (question, retrieved
abstracts), used by the refusal gate.

Both add to the embedding similarity the question's term coverage: the share of the question's words, weighted by
how rare they are in the index (BM25's idf), that the text contains. Rare words name what the question is about
("sharpness-aware", "CIFAR-10", "lithotripsy"); a neighbouring abstract that is merely similar misses them, and a
question about something the index does not hold has words the index has never seen (the highest weight of all).
Which sentence of an abstract answers is then settled by the verifier's cross-encoder, which re-reads the best few
(`Question.reread`): the background and aim sentences that resemble a question most say nothing about it.
benchmarks/refusal_gate.py measures the gate on labelled answerable and unanswerable questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rag.terms import content_coverage, tokenize

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from rag.answer.entailment import EntailmentModel
    from rag.answer.sources import Source
    from rag.records import SearchResult

    Reader = Callable[[list[str]], np.ndarray]  # sentences -> how strongly each speaks to the question, 0 to 1

TERM_WEIGHT = 0.5  # weight of term coverage against the cosine similarity, in both scores
COVERAGE_WEIGHT = 0.5  # gate: weight of the plain (unweighted) content-word coverage
GATE_ABSTRACTS = 1  # the gate reads the term coverage of the best this many retrieved abstracts
# The gate: a question is answered when its score reaches the threshold, or when its closest abstract (the cosine
# similarity of the best chunk) reaches the dense floor: a question in plain words shares few words with the abstract
# that answers it, so its score stays low even when the embeddings find that abstract. RAG_REFUSAL_THRESHOLD and
# RAG_REFUSAL_DENSE_FLOOR (1: off) set others. Each precision of the embeddings has its pair, chosen together by
# benchmarks/refusal_gate.py on an index of that precision (the fewest mistakes on the tune part, a false refusal
# counting twice, the middle of a tied range; the tune part of eval/datasets/lay_questions among the sets, never the
# seeds): see the README's "Relevance and refusal".
REFUSAL_THRESHOLDS = {"fp32": 1.241, "int8": 1.206}
DENSE_FLOORS = {"fp32": 0.57, "int8": 0.57}
AnswerType = Literal["quantity", "name", "other"]
# What a question asks for, and the sentences that can give it: a quantity is stated with a number, a method or
# model ("Which sampler ...?") by its name, a term the question does not already contain.
QUANTITY_QUESTION = re.compile(
    r"\b(how (many|much|long|often|large|small|fast|sensitive|specific|accurate)|what (is|was|are|were) the "
    r"(number|percentage|proportion|rate|value|size|accuracy|score|median|mean|average|odds)|what (number|"
    r"percentage|proportion|share|fraction)|which value|what (fid|auc|accuracy|error|speed-?up))\b",
    re.IGNORECASE,
)
# The kind of number some quantity questions ask for, and how a sentence states it: a share in percent ("95% CI"
# states a confidence level, not a share), a duration in units of time. Other quantity questions take any number.
QUANTITY_KINDS = (
    (
        re.compile(
            r"\b(share|proportion|percent(age)?|fraction|rate|sensitiv(e|ity)|specificity|accura(te|cy)|prevalence|"
            r"how specific)\b",
            re.IGNORECASE,
        ),
        re.compile(r"\d\s?%(?!\s*(CI|confidence))|\bper ?cent\b", re.IGNORECASE),
    ),
    (
        re.compile(r"\bhow long\b|\b(duration|survival|follow-up)\b", re.IGNORECASE),
        re.compile(r"\d[\s-]*(seconds?|min(ute)?s?|hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE),
    ),
)
NAME_QUESTION = re.compile(r"^\s*(which|what)\s+(?!is\b|are\b|was\b|were\b|do\b|does\b|did\b)", re.IGNORECASE)
NUMBER = re.compile(r"\d")
NAMED = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*\b")  # SLIPS, ESM-AA, HarmoDT, CIFAR-10
QUANTITY_BONUS = 0.1
# Questions that ask for several papers ("Which papers ...") let further abstracts join the answer more easily: the
# margin below the best sentence's relevance within which another abstract's best sentence joins. Chosen on the
# seeds' multi-paper questions (the second gold abstract's best sentence scores 0.80-0.98 of the best, the best
# non-gold one at most 0.72).
SEVERAL = re.compile(r"\b(papers|studies|works|articles|abstracts|trials)\b", re.IGNORECASE)
SEVERAL_MARGIN = 0.75
# Sentences where an abstract states its own contribution answer "what/which/how" questions best.
CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work|study))\s+(\w+\s+)?(propose|introduce|present|develop|design|show|prove|find|"
    r"demonstrate|call|term|dub|give)\w*|\b(called|dubbed|termed|named)\b",
    re.IGNORECASE,
)
# A verified sentence an LLM wrote is left out of the answer when its relevance is below this share of the best
# relevance of any sentence of the abstracts it was shown: true but beside the point (background, a neighbouring
# paper's finding).
ANSWER_MARGIN = 0.5
# Which of an abstract's sentences answers: the verifier's cross-encoder re-reads the few most relevant ones with the
# question and adds READ_WEIGHT times its belief that the sentence says something about it (1 - P(not enough info)).
# Background and aim sentences resemble the question most but say nothing about it. Only for questions that ask
# for neither a quantity nor a name: those are chosen by what they ask for, and the model, trained on claims, read
# them worse. Chosen on SciFact train and dev claims (their rationale sentences), the seeds questions and the
# paraphrased PubMedQA tuning questions; benchmarks/sentence_choice.py measures it.
READ_CANDIDATES = 4
READ_WEIGHT = 0.5


@dataclass(frozen=True)
class QuestionTerms:
    """The question's words (stemmed, stop words left out) weighted by idf in the index, and what it asks for."""

    weights: dict[str, float]
    answer_type: AnswerType = "other"
    asks_several: bool = False  # for several papers
    names: frozenset[str] = frozenset()  # named terms the question contains
    unit: re.Pattern[str] | None = None  # how a sentence states the kind of number asked for (QUANTITY_KINDS)

    def coverage(self, tokens: set[str]) -> float:
        """Share of the question's weight that a text (its stemmed tokens) covers."""
        total = sum(self.weights.values())
        return sum(w for t, w in self.weights.items() if t in tokens) / total if total else 0.0

    def gives_answer_type(self, sentence: str) -> bool:
        """Whether the sentence gives what the question asks for: a number, or a name the question does not hold
        (nor abbreviate: "IRL" for "inverse reinforcement learning")."""
        if self.answer_type == "quantity":
            return bool(NUMBER.search(sentence))
        if self.answer_type == "name":
            return any(name not in self.names for name in NAMED.findall(sentence))
        return False

    def states_unit(self, sentence: str) -> bool:
        """Whether the sentence states a number of the kind the question asks for (a percentage for a share)."""
        return self.unit is not None and bool(self.unit.search(sentence))


def question_terms(question: str, weights: dict[str, float]) -> QuestionTerms:
    """What the question asks for, with its words' weights (from the keyword index)."""
    kind: AnswerType = "other"
    if QUANTITY_QUESTION.search(question):
        kind = "quantity"
    elif NAME_QUESTION.search(question) and not SEVERAL.search(question):
        kind = "name"
    names = frozenset(NAMED.findall(question)) | abbreviations(question)
    unit = None
    if kind == "quantity":
        unit = next((states for asks, states in QUANTITY_KINDS if asks.search(question)), None)
    return QuestionTerms(weights, kind, bool(SEVERAL.search(question)), names, unit)


def abbreviations(text: str) -> frozenset[str]:
    """The initials of each run of two to five words: what an abstract would abbreviate them to."""
    initials = "".join(w[0].upper() for w in re.findall(r"[A-Za-z]+", text))
    return frozenset(initials[i : i + n] for n in range(2, 6) for i in range(len(initials) - n + 1))


def tokens(texts: list[str]) -> list[set[str]]:
    """Each text's stemmed words, as the keyword index tokenizes them."""
    return [set(words) for words in tokenize(texts)]


def sentence_relevance(terms: QuestionTerms, sentences: list[str], similarities: np.ndarray) -> np.ndarray:
    """How well each sentence addresses the question: its cosine similarity to the question, plus its term
    coverage, plus a bonus for a number when the question asks for a quantity. (A name is rewarded where the
    extractive answer picks its second sentence: names also abound in sentences that do not answer.)"""
    import numpy as np

    covered = np.array([terms.coverage(t) for t in tokens(sentences)])
    quantity = np.array([terms.answer_type == "quantity" and terms.gives_answer_type(s) for s in sentences])
    return similarities + TERM_WEIGHT * covered + QUANTITY_BONUS * quantity


def gate_score(question: str, terms: QuestionTerms, results: list[SearchResult], abstracts: dict[str, str]) -> float:
    """How well the best retrieved abstracts address the question: the best dense score, plus the best term
    coverage and content-word coverage among the first GATE_ABSTRACTS abstracts (0 when nothing was retrieved)."""
    best = results[:GATE_ABSTRACTS]
    texts = [abstracts.get(r.doc_id, r.text) for r in best]
    dense = closest_similarity(results)
    weighted = max((terms.coverage(t) for t in tokens(texts)), default=0.0)
    plain = max((content_coverage(question, text) for text in texts), default=0.0)
    return dense + TERM_WEIGHT * weighted + COVERAGE_WEIGHT * plain


def gate_threshold(setting: float | None, precision: str) -> float:
    """The gate's threshold: RAG_REFUSAL_THRESHOLD when set, else the one calibrated for the embeddings' precision
    (fp32's for vectors from an embedding server, which count as fp32)."""
    return setting if setting is not None else REFUSAL_THRESHOLDS.get(precision, REFUSAL_THRESHOLDS["fp32"])


def dense_floor(setting: float | None, precision: str) -> float:
    """The similarity at which the closest abstract alone lets a question through: RAG_REFUSAL_DENSE_FLOOR when set,
    else the one calibrated for the embeddings' precision."""
    return setting if setting is not None else DENSE_FLOORS.get(precision, DENSE_FLOORS["fp32"])


def closest_similarity(results: list[SearchResult]) -> float:
    """The cosine similarity of the question to the closest retrieved chunk (0 when dense search did not run)."""
    return max((r.dense_score or 0.0 for r in results), default=0.0)


def entailment_reader(model: EntailmentModel, question: str) -> Reader:
    """A Reader for one question: 1 - the cross-encoder's probability that the sentence says nothing about it (0 for
    a blank sentence: a withheld one, see Verifier.prepare). Each sentence is read once per question."""
    import numpy as np

    read: dict[str, float] = {}

    def speaks_to(sentences: list[str]) -> np.ndarray:
        new = [s for s in dict.fromkeys(sentences) if s.strip() and s not in read]
        if new:
            probabilities = model.probabilities([(s, question) for s in new])
            read.update(zip(new, (1.0 - probabilities[:, 2]).tolist(), strict=True))
        return np.array([read.get(s, 0.0) for s in sentences])

    return speaks_to


@dataclass(frozen=True)
class Question:
    """A question as the steps that choose sentences see it: its text, its vector, its weighted words and, when the
    verifier has its cross-encoder, a reader of sentences."""

    text: str
    vector: np.ndarray
    terms: QuestionTerms
    reader: Reader | None = None

    def relevance(self, sentences: list[str], vectors: np.ndarray) -> np.ndarray:
        """sentence_relevance of each sentence (`vectors`: their embeddings, row by row)."""
        return sentence_relevance(self.terms, sentences, vectors @ self.vector)

    def reread(self, sentences: list[str], scores: np.ndarray) -> np.ndarray:
        """The scores of one abstract's sentences with the READ_CANDIDATES best re-read by the reader, for a question
        that asks for neither a quantity nor a name: for choosing which of them answers (comparisons between
        abstracts keep the plain relevance)."""
        if self.reader is None or self.terms.answer_type != "other":
            return scores
        best = scores.argsort()[::-1][:READ_CANDIDATES]
        reread = scores.astype(float)
        reread[best] += READ_WEIGHT * self.reader([sentences[i] for i in best])
        return reread

    def gives_answer_type(self, sentence: str) -> bool:
        return self.terms.gives_answer_type(sentence)

    def coverage(self, text: str) -> float:
        """Term coverage of a whole text (an abstract): does it speak of everything the question names?"""
        return self.terms.coverage(tokens([text])[0])

    def margin(self, default: float) -> float:
        """How close to the best sentence's relevance another abstract's best must come to join the answer."""
        return min(default, SEVERAL_MARGIN) if self.terms.asks_several else default


class TopicFilter:
    """Tells whether a sentence written for the answer addresses the question: as well as the abstracts it was
    written from allow (ANSWER_MARGIN of their best sentence), or by giving what the question asks for (a number,
    a name) or a paper's contribution (how a "How can ...?" question is answered)."""

    def __init__(self, question: Question, sources: list[Source], embed: Callable[[list[str]], np.ndarray]) -> None:
        self.question = question
        self.embed = embed
        best = [question.relevance(s.sentences, s.vectors).max() for s in sources if s.vectors is not None]
        self.floor = ANSWER_MARGIN * float(max(best, default=0.0))

    def addresses(self, sentence: str) -> bool:
        if self.question.gives_answer_type(sentence) or CONTRIBUTION.search(sentence):
            return True
        return float(self.question.relevance([sentence], self.embed([sentence]))[0]) >= self.floor
