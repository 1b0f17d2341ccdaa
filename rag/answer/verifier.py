"""The citation verifier: every answer sentence that survives is supported by the abstract it cites.

A judge (rag/answer/judges.py) decides what an abstract says about a claim. A sentence is kept when a source it
cites supports it, re-attributed to another retrieved source that does, or dropped, with "contradicted by [n]" and
the contradicting words when a cited source contradicts it; each dropped sentence carries the kind of its reason
(`DropKind`). The supporting sentence(s) become the citation's verbatim quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rag.answer.checks import EVIDENCE_SENTENCES, objection
from rag.answer.entailment import Judgement, Label
from rag.answer.judges import Judge, LLMJudge
from rag.answer.sources import Source
from rag.corpus.injection import Guard
from rag.records import DropKind, DroppedSentence, VerifierReport
from rag.sentences import sentence_spans
from rag.text import split_markers

if TYPE_CHECKING:
    import numpy as np

    from rag.answer.seams import Embedding

PREAMBLE = re.compile(r"^(the answer( to (the|your) question)? is|in summary|in conclusion|to answer)\s*[:,]\s*", re.I)
# The prompt shows each source as "[n] (VENUE YEAR) ..."; small models copy that label into their sentences.
SOURCE_LABEL = re.compile(r"^\s*(\[\d+\]\s*)?\(\s*[A-Za-z][\w .&-]*\s\d{4}\s*\)\s*[:,-]?\s*")
MIN_CLAIM_WORDS = 3
REATTRIBUTION_CANDIDATES = 1  # uncited sources judged before a sentence is dropped (the closest by embedding)
REATTRIBUTION_SIMILARITY = 0.4  # ... when their closest sentence is at least this similar to the claim
UNSUPPORTED = "no retrieved abstract supports it"

Status = Literal["kept", "reattributed", "dropped"]


@dataclass
class Verdict:
    text: str  # the claim without its markers
    sources: list[int]  # supporting source numbers (empty when dropped)
    quotes: dict[int, str]  # source number -> verbatim supporting sentence
    status: Status
    reason: str = ""
    quote: str | None = None  # for a contradicted sentence: the abstract's words that contradict it
    doc_id: str | None = None  # and whose they are
    kind: DropKind | None = None  # why it was dropped (None unless dropped)
    detail: str = ""  # what the exact checks found, when they decided (shown for an unverified sentence)

    @classmethod
    def dropped(
        cls, claim: str, kind: DropKind, reason: str, quote: str | None = None, doc_id: str | None = None
    ) -> Verdict:
        return cls(claim, [], {}, "dropped", reason, quote, doc_id, kind)


def record(report: VerifierReport, verdict: Verdict) -> None:
    """Count a verdict in the report (a dropped sentence with its reason)."""
    if verdict.status == "kept":
        report.kept += 1
    elif verdict.status == "reattributed":
        report.reattributed += 1
    else:
        report.dropped += 1
        report.dropped_sentences.append(
            DroppedSentence(
                verdict.text,
                verdict.reason,
                verdict.quote,
                verdict.doc_id,
                verdict.kind or "unsupported",
                verdict.detail or None,
            )
        )


def normalized(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s%.-]", " ", text.lower()).split()).strip(" .")


VERBATIM_SHARE = 0.8  # a claim quoting at least this share of a sentence, word for word, is a quotation of it


def verbatim_in(claim: str, source: Source) -> int | None:
    """The index of the source sentence that the claim quotes word for word (case and punctuation aside), at most
    leaving out a lead-in such as "Intriguingly, we find that"; None when it quotes none."""
    wanted = normalized(claim)
    for i, sentence in enumerate(source.sentences):
        text = normalized(sentence)
        if wanted and wanted in text and len(wanted) >= VERBATIM_SHARE * len(text):
            return i
    return None


def quoted_sentences(quote: str | None, source: Source) -> list[int]:
    """The indices of the source sentences that hold the quoted words, when they are verbatim in the source (case
    and punctuation aside); [] otherwise."""
    wanted = normalized(quote or "")
    if len(wanted.split()) < MIN_CLAIM_WORDS or wanted not in normalized(source.checkable):
        return []
    held = [i for i, s in enumerate(source.sentences) if (text := normalized(s)) and (text in wanted or wanted in text)]
    return held or [i for i, s in enumerate(source.sentences) if normalized(s) and normalized(s)[:40] in wanted]


class Verifier:
    """Checks answer sentences against the sources a request may cite. Stateless between requests: what it learns
    about a source (its sentences and their vectors) is kept on the Source."""

    def __init__(self, embedder: Embedding, judge: Judge, guard: Guard) -> None:
        self.embedder = embedder
        self.judge = judge
        self.guard = guard

    def prepare(self, sources: list[Source]) -> None:
        """Split each source into sentences and embed them (once per source). Sentences that address the assistant
        are blanked out: they can never be quoted or support a claim."""
        for source in sources:
            if source.vectors is None:
                text = source.abstract
                source.spans = sentence_spans(text) or [(0, len(text))]
                withheld = self.guard.withheld(text, source.spans)
                for i in withheld:
                    a, b = source.spans[i]
                    text = text[:a] + " " * (b - a) + text[b:]
                source.checkable = text
                source.sentences = [text[a:b] for a, b in source.spans]
                vectors = self.embedder.embed(source.sentences)
                if withheld:
                    vectors = vectors.copy()
                    vectors[sorted(withheld)] = 0.0  # never the closest sentence to anything
                source.vectors = vectors

    def check(self, sentence: str, sources: list[Source], quote: str | None = None) -> Verdict:
        """Keep the sentence when a source it cites supports it; re-attribute it to the closest other source that
        does; drop it otherwise (saying so when a cited source contradicts it). `quote`: the words of its source
        that the LLM said support it; where they are verbatim in a cited source, the exact checks read the claim
        against them."""
        claim, cited, early = self.claim_of(sentence)
        if early is not None:
            return early
        self.prepare(sources)
        quoted = self.quoted_by(claim, cited, sources)
        if quoted is not None:
            return quoted
        vector = self.embedder.embed([claim])[0]
        by_n = {s.n: s for s in sources}
        judged = {n: self.checked(claim, vector, by_n[n], quote) for n in cited if n in by_n}
        kept = {n: j.quote for n, j in judged.items() if j.label == "supported"}
        if kept:
            return Verdict(claim, list(kept), kept, "kept")
        for source in self.closest(vector, [s for s in sources if s.n not in judged]):
            other = self.checked(claim, vector, source)
            if other.label == "supported":
                reason = f"cited {cited or 'nothing'}"
                return Verdict(claim, [source.n], {source.n: other.quote}, "reattributed", reason)
        for n, j in judged.items():
            if j.label == "contradicted":
                return Verdict.dropped(claim, "contradicted", f"contradicted by [{n}]", j.quote, by_n[n].doc_id)
        unsupported = Verdict.dropped(claim, "unsupported", UNSUPPORTED)
        unsupported.detail = next((j.reason for j in judged.values() if j.reason), "")
        return unsupported

    def judgement(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement:
        """What one prepared source says about a claim: a quotation of one of its sentences supports itself,
        whatever the judge makes of it; otherwise the exact checks and then the judge decide."""
        quoted = verbatim_in(claim, source)
        if quoted is not None:
            return Judgement("supported", 1.0, source.sentences[quoted].strip(), (quoted,))
        return self.checked(claim, claim_vector, source)

    def checked(self, claim: str, claim_vector: np.ndarray, source: Source, quote: str | None = None) -> Judgement:
        """The exact checks (rag/answer/checks.py) against the sentences the claim rests on; the judge when they
        find nothing to object to."""
        found = self.objection(claim, claim_vector, source, quote)
        if found is None:
            return self.judge(claim, claim_vector, source)
        if found.label == "contradicted" or getattr(self.judge, "contradict", None) is None:
            return found  # the checks rule out support, and this judge never accuses
        verdict = self.judge(claim, claim_vector, source)  # it may still find the claim contradicted
        return verdict if verdict.label == "contradicted" else found

    @staticmethod
    def objection(claim: str, claim_vector: np.ndarray, source: Source, quote: str | None = None) -> Judgement | None:
        """A verdict from the exact checks alone, or None when they leave it to the judge. The claim rests on the
        sentences holding `quote` when it is verbatim in the source, else on the source's closest sentences."""
        assert source.vectors is not None
        order = [int(i) for i in (source.vectors @ claim_vector).argsort()[::-1][:EVIDENCE_SENTENCES]]
        order = quoted_sentences(quote, source) or order
        evidence = " ".join(source.sentences[i] for i in sorted(order))
        found = objection(claim, evidence, source.checkable)
        if found is None:
            return None
        label: Label = "contradicted" if found.contradicts else "not_enough_info"
        return Judgement(label, 1.0, source.sentences[order[0]].strip(), (order[0],), found.detail)

    @staticmethod
    def quoted_by(claim: str, cited: list[int], sources: list[Source]) -> Verdict | None:
        """A claim that quotes a source sentence is supported by that source, with no model needed: kept when that
        source is cited, else re-attributed to it."""
        for source in sorted(sources, key=lambda s: s.n not in cited):
            i = verbatim_in(claim, source)
            if i is not None:
                quote = {source.n: source.sentences[i].strip()}
                if source.n in cited:
                    return Verdict(claim, [source.n], quote, "kept")
                return Verdict(claim, [source.n], quote, "reattributed", f"cited {cited or 'nothing'}")
        return None

    def check_all(
        self, sentences: list[str], sources: list[Source], llm_judge: LLMJudge, quotes: list[str | None] | None = None
    ) -> list[Verdict]:
        """Every sentence of an answer checked in one call to the LLM judge (JudgeError or LLMError on failure).
        `quotes`: per sentence, the words its source was said to support it with; the judge reads the sentence
        against them where they are verbatim in the source it cites."""
        self.prepare(sources)
        quotes = quotes or [None] * len(sentences)
        claims = [self.claim_of(sentence) for sentence in sentences]
        pending = [i for i, (claim, _, early) in enumerate(claims) if early is None]
        shown = [self.verbatim_quote(quotes[i], claims[i][1], sources) for i in pending]
        judged = llm_judge.verdicts([claims[i][0] for i in pending], sources, shown) if pending else []
        verdicts: list[Verdict] = [early for _, _, early in claims]  # type: ignore[misc]
        by_n = {s.n: s for s in sources}
        for i, (label, n, quote) in zip(pending, judged, strict=True):
            claim, cited, _ = claims[i]
            source = by_n.get(n) if n is not None else None
            if source is not None:
                quote = quote if quote and quote in source.checkable else self.closest_sentence(claim, source)
            vector = self.embedder.embed([claim])[0]
            objected = source is not None and self.objection(claim, vector, source, quotes[i]) is not None
            if label == "supported" and source is not None and not objected:
                status: Status = "kept" if n in cited else "reattributed"
                reason = "" if status == "kept" else f"cited {cited or 'nothing'}"
                verdicts[i] = Verdict(claim, [source.n], {source.n: quote}, status, reason)
            elif label == "contradicted" and source is not None:
                verdicts[i] = Verdict.dropped(claim, "contradicted", f"contradicted by [{n}]", quote, source.doc_id)
            else:
                verdicts[i] = Verdict.dropped(claim, "unsupported", UNSUPPORTED)
        return verdicts

    @staticmethod
    def verbatim_quote(quote: str | None, cited: list[int], sources: list[Source]) -> tuple[int, str] | None:
        """(source number, quote) when the quote is verbatim in a source the sentence cites."""
        for source in sources:
            if source.n in cited and quoted_sentences(quote, source):
                return source.n, str(quote)
        return None

    def claim_of(self, sentence: str) -> tuple[str, list[int], Verdict | None]:
        """The claim of a sentence, its citations, and a verdict when it cannot be a claim at all."""
        claim, cited = split_markers(sentence)
        claim = PREAMBLE.sub("", SOURCE_LABEL.sub("", claim))
        claim = claim[:1].upper() + claim[1:]
        if len(claim.split()) < MIN_CLAIM_WORDS:
            return claim, cited, Verdict.dropped(claim, "too_short", "too short to be a claim")
        if self.guard.instruction_like(claim):
            return claim, cited, Verdict.dropped(claim, "instruction", "an instruction, not a claim")
        return claim, cited, None

    def closest_sentence(self, claim: str, source: Source) -> str:
        assert source.vectors is not None
        return source.sentences[int((source.vectors @ self.embedder.embed([claim])[0]).argmax())].strip()

    @staticmethod
    def closest(vector: np.ndarray, sources: list[Source]) -> list[Source]:
        """The sources worth judging for re-attribution: the few whose best sentence is closest to the claim, if
        close at all (an abstract with no sentence near the claim does not support it; judging it costs time)."""

        def best(source: Source) -> float:
            assert source.vectors is not None
            return float((source.vectors @ vector).max())

        near = [s for s in sources if best(s) >= REATTRIBUTION_SIMILARITY]
        return sorted(near, key=best, reverse=True)[:REATTRIBUTION_CANDIDATES]
