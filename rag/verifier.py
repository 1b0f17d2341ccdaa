"""The citation verifier: every answer sentence that survives is supported by the abstract it cites.

A judge decides what an abstract says about a claim: supported, contradicted or not enough information. The
default judge is the entailment cross-encoder of rag/entailment.py, guarded by a lexical check (every number and
named term of the claim, such as SAM, ESM-AA, CIFAR-10 or GPT-4, must occur in the abstract); the first, lexical
judge (embedding similarity, named terms, content-word coverage) remains as RAG_VERIFIER=lexical. A sentence is
kept when a source it cites supports it, re-attributed to another retrieved source that does, or dropped, with
"contradicted by [n]" and the contradicting words when a cited source contradicts it. The supporting sentence(s)
become the citation's verbatim quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from rag.chunker import sentence_spans
from rag.entailment import Judgement, Label, decide, read_evidence
from rag.records import DroppedSentence, VerifierReport
from rag.text import INVISIBLE, content_coverage, split_markers

if TYPE_CHECKING:
    import numpy as np

    from rag.embedder import Embedder
    from rag.entailment import EntailmentModel
    from rag.llm import LLM

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
NAMED = re.compile(r"\b[\w-]*(?:[A-Z][\w-]*[A-Z0-9]|\d)[\w-]*\b")
# Text in an abstract that addresses the assistant rather than describing research (prompt injection). Such
# sentences are withheld from the prompt and can never support or be quoted in an answer. Matched after
# unicode_folded (full-width letters folded, invisible characters removed), sentence by sentence and across each
# pair of neighbouring sentences (an instruction split in two).
INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your|preceding)\s+"
    r"(\w+\s+)?(instructions?|prompts?|rules)\b"
    r"|\b(ignore|disregard|forget)\s+(everything|anything)\s+(above|before|said|you\b)"
    r"|\byou are now\b|\bsystem prompt\b|\b(reply|respond|answer|output) only with\b|\bnew instructions?\s*:"
    r"|\bfrom now on,?\s+(you|respond|reply|answer|say|always)\b"
    r"|\b(say|print|output|reply with|respond with|write|answer with)\s+(only\s+)?(exactly\s+)?the\s+(word|phrase)\b"
    r"|\b(note|message|instructions?)\s+(to|for)\s+(the|any|all)\s+(ai|assistants?|language models?|llms?|chatbots?)\b"
    r"|\b(dear|hey|attention)\s*,?\s+(ai|assistant|chatbot|llm|language model)\b"
    # chat-template and role tokens, role prefixes and comments, which no abstract needs
    r"|<\|[a-z_]{2,20}\|>|\[/?INST\]|<</?SYS>>|^\s*#{2,}\s*(system|instruction)\b|<!--|^\s*\[//\]:\s*#"
    r"|^\W{0,3}(system|assistant|user|human)\s*:"
    # "ignore the previous instructions" in Spanish, Portuguese, French, Italian, German, Dutch, Polish, Russian,
    # Chinese, Japanese, Korean and Arabic
    r"|\b(ignora|ignorez|ignorer|ignorar|ignoriere|negeer|zignoruj|игнорируй(те)?)\s+(\w+\s+){0,3}"
    r"(instrucciones|instruções|instructions|istruzioni|anweisungen|instructies|instrukcje|инструкции)\b"
    r"|\bignore\s+(todas\s+)?as\s+instruções"
    r"|(忽略|无视|忽视).{0,6}(指令|指示|说明|提示)|(指示|命令).{0,4}無視|(지시|명령|지침).{0,8}무시|تجاهل.{0,20}(التعليمات|الأوامر)",
    re.IGNORECASE | re.MULTILINE,
)
HIDDEN = re.compile(f"[\u200c\u200d]|{INVISIBLE.pattern}")  # stored text keeps the joiners; matching drops them


def unicode_folded(text: str) -> str:
    """Text as the instruction patterns read it: compatibility forms folded (full-width letters), invisible
    characters that could split a word removed."""
    import unicodedata

    return HIDDEN.sub("", unicodedata.normalize("NFKC", text))


def instruction_like(text: str) -> bool:
    return INSTRUCTION.search(unicode_folded(text)) is not None


def withheld_sentences(text: str, spans: list[tuple[int, int]]) -> set[int]:
    """Indices of the sentences that address the assistant, alone or together with a neighbour."""
    found = {i for i, (a, b) in enumerate(spans) if instruction_like(text[a:b])}
    for i in range(len(spans) - 1):
        pair = re.sub(r"[.!?]+\s+", " ", text[spans[i][0] : spans[i + 1][1]])  # read on across the full stop
        if i not in found and i + 1 not in found and instruction_like(pair):
            found |= {i, i + 1}
    return found


NUMBER_WORDS = {"1", "2", "3"}  # small counts are often paraphrased ("two", "three"); not checked
PREAMBLE = re.compile(r"^(the answer( to (the|your) question)? is|in summary|in conclusion|to answer)\s*[:,]\s*", re.I)
# The prompt shows each source as "[n] (VENUE YEAR) ..."; small models copy that label into their sentences.
SOURCE_LABEL = re.compile(r"^\s*(\[\d+\]\s*)?\(\s*[A-Za-z][\w .&-]*\s\d{4}\s*\)\s*[:,-]?\s*")
MIN_CLAIM_WORDS = 3
REATTRIBUTION_CANDIDATES = 1  # uncited sources judged before a sentence is dropped (the closest by embedding)
REATTRIBUTION_SIMILARITY = 0.4  # ... when their closest sentence is at least this similar to the claim

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
    spans: list[tuple[int, int]] = field(default_factory=list)  # its sentences' character spans
    sentences: list[str] = field(default_factory=list)  # withheld ones (instructions) are empty
    vectors: np.ndarray | None = None
    checkable: str = ""  # the abstract with withheld sentences blanked out (same length, same offsets)


@dataclass
class Verdict:
    text: str  # the claim without its markers
    sources: list[int]  # supporting source numbers (empty when dropped)
    quotes: dict[int, str]  # source number -> verbatim supporting sentence
    status: Status
    reason: str = ""
    quote: str | None = None  # for a contradicted sentence: the abstract's words that contradict it
    doc_id: str | None = None  # and whose they are


def record(report: VerifierReport, verdict: Verdict) -> None:
    """Count a verdict in the report (a dropped sentence with its reason)."""
    if verdict.status == "kept":
        report.kept += 1
    elif verdict.status == "reattributed":
        report.reattributed += 1
    else:
        report.dropped += 1
        report.dropped_sentences.append(DroppedSentence(verdict.text, verdict.reason, verdict.quote, verdict.doc_id))


def lexical_gaps(claim: str, abstract: str) -> list[str]:
    """Numbers and named terms of the claim that the abstract does not contain."""
    haystack = abstract.lower()
    numbers = {n for n in NUMBER.findall(claim) if n not in NUMBER_WORDS}
    names = {t for t in NAMED.findall(claim) if not t.isdigit()}
    return sorted(t for t in numbers | names if t.lower() not in haystack)


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


class ModelJudge:
    """The entailment cross-encoder (RAG_VERIFIER=model, the default). A number or named term the abstract does not
    contain still rules out support, whatever the model says."""

    def __init__(self, model: EntailmentModel, support: float, contradict: float) -> None:
        self.model = model
        self.support = support
        self.contradict = contradict

    def __call__(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement:
        assert source.vectors is not None
        similarities = source.vectors @ claim_vector
        evidence = read_evidence(self.model, claim, source.checkable, source.spans, similarities, self.support)
        verdict = decide(evidence, self.support, self.contradict)
        if verdict.label == "supported" and lexical_gaps(claim, source.checkable):
            return Judgement("not_enough_info", 1 - verdict.score, verdict.quote, verdict.sentences)
        return verdict


class JudgeError(RuntimeError):
    """The LLM judge did not return usable verdicts."""


class LLMJudge:
    """RAG_VERIFIER=llm: one call per answer to an API model, which returns a JSON verdict per sentence
    (prompts/judge.txt). Its quotes are kept only when they are verbatim in the abstract."""

    def __init__(self, llm: LLM, max_tokens: int, source_chars: int = 1500) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.source_chars = source_chars

    def verdicts(self, claims: list[str], sources: list[Source]) -> list[tuple[Label, int | None, str]]:
        """(verdict, deciding source number, quote) for each claim; JudgeError when the reply is unusable."""
        from rag.prompts import load_prompt

        block = "\n\n".join(f"[{s.n}] {without_instructions(s.abstract)[: self.source_chars]}" for s in sources)
        listed = "\n".join(f"{i}. {claim}" for i, claim in enumerate(claims, start=1))
        prompt = load_prompt("judge").format(sources=block, sentences=listed)
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


class Verifier:
    """Checks answer sentences against the sources a request may cite. Stateless between requests: what it learns
    about a source (its sentences and their vectors) is kept on the Source."""

    def __init__(self, embedder: Embedder, judge: Judge) -> None:
        self.embedder = embedder
        self.judge = judge

    def prepare(self, sources: list[Source]) -> None:
        """Split each source into sentences and embed them (once per source). Sentences that address the assistant
        are blanked out: they can never be quoted or support a claim."""
        for source in sources:
            if source.vectors is None:
                text = source.abstract
                source.spans = sentence_spans(text) or [(0, len(text))]
                withheld = withheld_sentences(text, source.spans)
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

    def check(self, sentence: str, sources: list[Source]) -> Verdict:
        """Keep the sentence when a source it cites supports it; re-attribute it to the closest other source that
        does; drop it otherwise (saying so when a cited source contradicts it)."""
        claim, cited, early = self.claim_of(sentence)
        if early is not None:
            return early
        self.prepare(sources)
        quoted = self.quoted_by(claim, cited, sources)
        if quoted is not None:
            return quoted
        vector = self.embedder.embed([claim])[0]
        by_n = {s.n: s for s in sources}
        judged = {n: self.judge(claim, vector, by_n[n]) for n in cited if n in by_n}
        kept = {n: j.quote for n, j in judged.items() if j.label == "supported"}
        if kept:
            return Verdict(claim, list(kept), kept, "kept")
        for source in self.closest(vector, [s for s in sources if s.n not in judged]):
            other = self.judge(claim, vector, source)
            if other.label == "supported":
                reason = f"cited {cited or 'nothing'}"
                return Verdict(claim, [source.n], {source.n: other.quote}, "reattributed", reason)
        for n, j in judged.items():
            if j.label == "contradicted":
                return Verdict(claim, [], {}, "dropped", f"contradicted by [{n}]", j.quote, by_n[n].doc_id)
        return Verdict(claim, [], {}, "dropped", "no retrieved abstract supports it")

    def judgement(self, claim: str, claim_vector: np.ndarray, source: Source) -> Judgement:
        """What one prepared source says about a claim: a quotation of one of its sentences supports itself,
        whatever the judge makes of it; otherwise the judge decides."""
        quoted = verbatim_in(claim, source)
        if quoted is not None:
            return Judgement("supported", 1.0, source.sentences[quoted].strip(), (quoted,))
        return self.judge(claim, claim_vector, source)

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

    def check_all(self, sentences: list[str], sources: list[Source], llm_judge: LLMJudge) -> list[Verdict]:
        """Every sentence of an answer checked in one call to the LLM judge (JudgeError or LLMError on failure)."""
        self.prepare(sources)
        claims = [self.claim_of(sentence) for sentence in sentences]
        pending = [i for i, (claim, _, early) in enumerate(claims) if early is None]
        judged = llm_judge.verdicts([claims[i][0] for i in pending], sources) if pending else []
        verdicts: list[Verdict] = [early for _, _, early in claims]  # type: ignore[misc]
        by_n = {s.n: s for s in sources}
        for i, (label, n, quote) in zip(pending, judged, strict=True):
            claim, cited, _ = claims[i]
            source = by_n.get(n) if n is not None else None
            if source is not None:
                quote = quote if quote and quote in source.checkable else self.closest_sentence(claim, source)
            if label == "supported" and source is not None and not lexical_gaps(claim, source.checkable):
                status: Status = "kept" if n in cited else "reattributed"
                reason = "" if status == "kept" else f"cited {cited or 'nothing'}"
                verdicts[i] = Verdict(claim, [source.n], {source.n: quote}, status, reason)
            elif label == "contradicted" and source is not None:
                verdicts[i] = Verdict(claim, [], {}, "dropped", f"contradicted by [{n}]", quote, source.doc_id)
            else:
                verdicts[i] = Verdict(claim, [], {}, "dropped", "no retrieved abstract supports it")
        return verdicts

    def claim_of(self, sentence: str) -> tuple[str, list[int], Verdict | None]:
        """The claim of a sentence, its citations, and a verdict when it cannot be a claim at all."""
        claim, cited = split_markers(sentence)
        claim = PREAMBLE.sub("", SOURCE_LABEL.sub("", claim))
        claim = claim[:1].upper() + claim[1:]
        if len(claim.split()) < MIN_CLAIM_WORDS:
            return claim, cited, Verdict(claim, [], {}, "dropped", "too short to be a claim")
        if instruction_like(claim):
            return claim, cited, Verdict(claim, [], {}, "dropped", "an instruction, not a claim")
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


def without_instructions(text: str) -> str:
    """The text with any sentence addressed to the assistant replaced by a marker (for prompts)."""
    spans = sentence_spans(text)
    withheld = withheld_sentences(text, spans)
    if not withheld:
        return text
    return " ".join("[text withheld]" if i in withheld else text[a:b] for i, (a, b) in enumerate(spans))
