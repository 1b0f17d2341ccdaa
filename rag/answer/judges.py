"""Judges: what one source says about a claim (supported, contradicted or not enough information).

`ModelJudge` (RAG_VERIFIER=model, the default) is the entailment cross-encoder of rag/answer/entailment.py, guarded
by a lexical check (every number and named term of the claim, such as SAM, ESM-AA, CIFAR-10 or GPT-4, must occur in
the abstract); `LexicalJudge` (RAG_VERIFIER=lexical) is the first judge (embedding similarity, named terms,
content-word coverage); `LLMJudge` (RAG_VERIFIER=llm) asks an API model about a whole answer at once.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from rag.answer.acceptance import acceptance_features, decides
from rag.answer.checks import lexical_gaps, restates_numbers
from rag.answer.entailment import Judgement, Label, decide, read_evidence
from rag.answer.sources import Source
from rag.corpus.injection import Guard
from rag.sentences import whole_sentences
from rag.terms import FUNCTION_WORDS, content_coverage

if TYPE_CHECKING:
    import numpy as np

    from rag.answer.acceptance import Acceptor
    from rag.answer.entailment import EntailmentModel
    from rag.answer.llm import LLM


ABSTRACT_CHARS = 1500  # what an API model reads of each abstract, answering and judging
MIN_JUDGE_CHARS = 200  # the judge's abstracts are cut no shorter than this to fit a small context window
TOKEN_MARGIN = 32  # tokens kept free in an LLM's context window for the chat template


class Judge(Protocol):
    """Decides what one source says about a claim."""

    def __call__(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement: ...


class LexicalJudge:
    """The first verifier (RAG_VERIFIER=lexical): supported when a sentence of the abstract is close in embedding
    space, every number and named term of the claim occurs in the abstract, and most of its content words do. It
    cannot see negation or direction, so it never says "contradicted"."""

    def __init__(self, similarity: float, coverage: float) -> None:
        self.similarity = similarity
        self.coverage = coverage

    def __call__(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement:
        assert source.vectors is not None
        scores = source.vectors @ claim_vector
        best = int(scores.argmax())
        text = " ".join(source.sentences)
        supported = (
            scores[best] >= self.similarity
            and not lexical_gaps(claim, text)
            and content_coverage(claim, text) >= self.coverage
        )
        label: Label = "supported" if supported else "not_enough_info"
        return Judgement(label, float(scores[best]), source.sentences[best], (best,))


class ModelJudge:
    """The entailment cross-encoder (RAG_VERIFIER=model). The verifier runs the exact checks (rag/answer/checks.py)
    first: a number or named term the abstract does not contain rules out support before the model reads it.

    A sentence the model does not confirm is still supported when it says what the abstract says in mostly the
    abstract's words: a sentence of the abstract at least `similarity` close to it and RESTATED_COVERAGE of its
    content words in the abstract. The small model misses most faithful restatements a capable model writes (on the
    tuning claims it confirmed 5 of 15); with this, 11 of 15, for one more contradicted SciFact dev claim of 18
    kept (benchmarks/verifier_quality.py --claims eval/datasets/pubmedqa_claims/tune.jsonl)."""

    def __init__(
        self,
        model: EntailmentModel,
        support: float,
        contradict: float | None,
        similarity: float,
        acceptor: Acceptor | None = None,
    ) -> None:
        """`acceptor`: the bundled models' (rag/answer/acceptance.py), which then decides claims of MIN_WORDS words
        or more instead of the model's probabilities and the restatement rule."""
        self.model = model
        self.support = support
        self.contradict = contradict
        self.similarity = similarity
        self.acceptor = acceptor

    def __call__(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement:
        assert source.vectors is not None
        if self.acceptor is not None and decides(claim):
            return self.by_acceptor(claim, claim_vector, source, self.acceptor)
        similarities = source.vectors @ claim_vector
        evidence = read_evidence(self.model, claim, source.checkable, source.spans, similarities, self.support)
        verdict = decide(evidence, self.support, self.contradict)
        if verdict.label == "not_enough_info" and self.restated(claim, similarities, source):
            best = int(similarities.argmax())
            return Judgement("supported", float(similarities[best]), source.sentences[best].strip(), (best,))
        return verdict

    def by_acceptor(self, claim: str, claim_vector: np.ndarray, source: Source, acceptor: Acceptor) -> Judgement:
        """The acceptor's verdict, quoting the closest sentence. A claim it does not accept is read by the
        cross-encoder only when a contradiction threshold is set (RAG_ENTAILMENT_CONTRADICT; the shipped model has
        no operating point), as that threshold was measured: every window, the contradiction at its threshold."""
        assert source.vectors is not None
        similarities = source.vectors @ claim_vector
        best = int(similarities.argmax())
        sentence = source.sentences[best].strip()
        p = acceptor.probability(acceptance_features(claim, claim_vector, source))
        if p >= acceptor.threshold:
            return Judgement("supported", p, sentence, (best,))
        if self.contradict is not None:
            evidence = read_evidence(self.model, claim, source.checkable, source.spans, similarities)
            verdict = decide(evidence, math.inf, self.contradict)  # support is the acceptor's to give
            if verdict.label == "contradicted":
                return verdict
        return Judgement("not_enough_info", 1 - p, sentence, (best,))

    def restated(self, claim: str, similarities: np.ndarray, source: Source) -> bool:
        """In mostly the abstract's words, close to one of its sentences; or a result restated with its numbers in
        the order a sentence of the abstract gives them (the model reads such sentences as contradicted)."""
        if restates_numbers(claim, source.checkable) and (
            content_coverage(claim, source.checkable, FUNCTION_WORDS) >= RESULT_COVERAGE
        ):
            return True
        close = float(similarities.max()) >= self.similarity
        return close and content_coverage(claim, source.checkable) >= RESTATED_COVERAGE


RESTATED_COVERAGE = 0.85  # chosen on the tuning claims (PubMedQA answer-style, SciFact dev) between 0.75 and 0.85
RESULT_COVERAGE = 0.7  # chosen on the same tuning claims


class JudgeError(RuntimeError):
    """The LLM judge did not return usable verdicts."""


class LLMJudge:
    """RAG_VERIFIER=llm: one call per answer to an API model, which returns a JSON verdict per sentence
    (prompts/judge.txt). Its quotes are kept only when they are verbatim in the abstract."""

    def __init__(self, llm: LLM, max_tokens: int, guard: Guard, source_chars: int = ABSTRACT_CHARS) -> None:
        self.llm = llm
        self.guard = guard
        self.max_tokens = max_tokens
        self.source_chars = source_chars

    def verdicts(
        self, claims: list[str], sources: list[Source], quotes: list[tuple[int, str] | None] | None = None
    ) -> list[tuple[Label, int | None, str]]:
        """(verdict, deciding source number, quote) for each claim; JudgeError when the reply is unusable.
        `quotes`: per claim, (source number, its verbatim words) that the answer said support it, shown to the
        judge beside the claim."""
        from rag.prompts import load_prompt

        quotes = quotes or [None] * len(claims)
        listed = "\n".join(
            f"{i}. {claim}" + (f'\n   (said to rest on [{q[0]}]: "{q[1]}")' if q else "")
            for i, (claim, q) in enumerate(zip(claims, quotes, strict=True), start=1)
        )
        abstracts = [(s.n, self.guard.without_instructions(s.abstract)) for s in sources]
        room = self.llm.context_size - self.max_tokens - TOKEN_MARGIN
        template, chars = load_prompt("judge"), self.source_chars
        while True:  # each abstract cut to fewer whole sentences until the prompt fits the window with its reply
            block = "\n\n".join(f"[{n}] {whole_sentences(text, chars)}" for n, text in abstracts)
            prompt = template.format(sources=block, sentences=listed)
            if chars <= MIN_JUDGE_CHARS or self.llm.count_tokens(prompt) <= room:
                break
            chars = max(int(chars * 0.8), MIN_JUDGE_CHARS)
        reply = self.llm.complete([{"role": "user", "content": prompt}], self.max_tokens, json=True)
        return parse_verdicts(reply, len(claims), {s.n for s in sources})


def parse_verdicts(reply: str, count: int, numbers: set[int]) -> list[tuple[Label, int | None, str]]:
    """The judge's JSON reply as one (verdict, source, quote) per sentence, in order."""
    import json

    try:
        data = json.loads(reply[reply.index("{") : reply.rindex("}") + 1])
        items = {int(v["sentence"]): v for v in data["verdicts"]}
        out: list[tuple[Label, int | None, str]] = []
        for i in range(1, count + 1):
            item = items[i]
            label = item["verdict"]
            source = item.get("source")
            if label not in ("supported", "contradicted", "not_enough_info"):
                raise ValueError(f"unknown verdict {label!r}")
            if label != "not_enough_info" and source not in numbers:
                raise ValueError(f"sentence {i} names no retrieved abstract")
            out.append((label, source, str(item.get("quote") or "")))
        return out
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise JudgeError(f"the judge's reply is not the expected JSON ({type(exc).__name__}: {exc})") from None
