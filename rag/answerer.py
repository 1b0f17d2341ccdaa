"""Grounded answering: retrieve, number the passages, generate, verify every sentence, renumber the citations.

The Engine holds what is expensive to load (embedder, indexes, LLMs) once per process; every request is a call on
it. Answers are verified sentence by sentence while the LLM streams: presenters receive the raw tokens (to show
progress) and each verified sentence as soon as it is settled, so what they finally show is only verified text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag import store
from rag.chunker import sentence_spans
from rag.extractive import extractive_answer, extractive_summary, key_sentences
from rag.llm import LLM, LLMError, LocalLLM, check_config, create_llm, resolve_backend
from rag.records import SearchResult
from rag.retriever import Mode, Retriever
from rag.settings import Settings
from rag.verifier import Source, Verdict, Verifier, content_coverage, without_instructions

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
STANDALONE_MATCH = 0.5  # dense similarity at which a follow-up is understood without the conversation
LEXICAL_MATCH = 0.99  # share of the question's content words the passage must contain for a weak dense match
REFUSAL = "The indexed abstracts do not answer this question."
SECTION = re.compile(r"^\s*\**(themes|contributions)\**\s*:\s*\**\s*", re.IGNORECASE)
UNVERIFIED_NOTE = (
    "No sentence of the generated answer could be verified against the abstracts; this answer is extractive."
)
Event = Callable[[str, str], None]  # (kind, text): kind is "token", "sentence" or "note"


def load_prompt(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


@dataclass
class Citation:
    n: int
    doc_id: str
    venue: str | None
    year: int | None
    title: str | None
    quote: str
    url: str | None

    def contract(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "venue": self.venue,
            "year": self.year,
            "title": self.title,
            "quote": self.quote,
            "url": self.url,
        }


@dataclass
class Answer:
    question: str
    answer: str
    refused: bool
    citations: list[Citation]
    backend: str
    timings_ms: dict[str, float]
    verifier: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    standalone_question: str | None = None
    abstracts: dict[str, str] = field(default_factory=dict)  # cited doc_id -> full abstract, for presenters

    def contract(self) -> dict[str, Any]:
        """The `rag ask --json` shape of DESIGN.md, plus the verifier's report and any note."""
        data = {
            "question": self.question,
            "answer": self.answer,
            "refused": self.refused,
            "citations": [c.contract() for c in self.citations],
            "backend": self.backend,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "verifier": self.verifier,
            "note": self.note,
        }
        if self.standalone_question and self.standalone_question != self.question:
            data["standalone_question"] = self.standalone_question
        return data


class Citations:
    """Numbers sources in order of first use and keeps one verbatim quote per cited source."""

    def __init__(self, sources: dict[int, Source]) -> None:
        self.sources = sources
        self.numbers: dict[int, int] = {}  # source n -> citation number
        self.quotes: dict[int, str] = {}

    def render(self, verdict: Verdict) -> str:
        marks = []
        for n in verdict.sources:
            if n not in self.numbers:
                self.numbers[n] = len(self.numbers) + 1
                self.quotes[n] = verdict.quotes[n]
            marks.append(f"[{self.numbers[n]}]")
        text = verdict.text
        end = text[-1] if text and text[-1] in ".!?" else "."
        return f"{text.rstrip('.!?')} {''.join(marks)}{end}"

    def entries(self) -> list[Citation]:
        return [
            Citation(num, s.doc_id, s.venue, s.year, s.title, self.quotes[n], s.url)
            for n, num in sorted(self.numbers.items(), key=lambda item: item[1])
            for s in [self.sources[n]]
        ]


class Composer:
    """Settles answer sentences one by one: verify, render with final citation numbers, report, emit."""

    def __init__(self, citations: Citations, emit: Event) -> None:
        self.citations = citations
        self.emit = emit
        self.rendered: list[str] = []
        self.report = new_report()

    def settle(self, sentence: str, verifier: Verifier) -> None:
        label = SECTION.match(sentence)
        verdict = verifier.check(sentence[label.end() :] if label else sentence)
        if verdict.status == "dropped":
            self.report["dropped"] += 1
            self.report["dropped_sentences"].append({"text": verdict.text, "reason": verdict.reason})
            return
        self.report[verdict.status] += 1
        heading = f"{label.group(1).capitalize()}: " if label else ""
        self.rendered.append(("\n\n" if heading and self.rendered else "") + heading + self.citations.render(verdict))
        self.emit("sentence", self.rendered[-1])

    def text(self) -> str:
        return " ".join(self.rendered).replace(" \n\n", "\n\n") if self.rendered else REFUSAL


class Engine:
    """One per process: the retriever, the embedder and the LLMs, loaded once and shared by all requests."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.retriever = Retriever(settings)
        self.embedder = self.retriever.embedder
        self._llms: dict[str, LLM | None] = {}

    def warm_up(self, backend: str | None = None) -> None:
        """Load what the first request would otherwise wait for (sentence model, LLM); for long-running apps."""
        sentence_spans("Warm up. Now.")
        llm = self.llm(self.backend_name(backend))
        if llm is not None and isinstance(llm, LocalLLM):  # leaves the system prompt in llama.cpp's prefix cache
            llm.complete(
                [{"role": "system", "content": load_prompt("answer_system")}, {"role": "user", "content": "Hi"}], 1
            )

    def llm(self, backend: str) -> LLM | None:
        if backend not in self._llms:
            self._llms[backend] = create_llm(self.settings, backend)
        return self._llms[backend]

    def backend_name(self, requested: str | None) -> str:
        return resolve_backend(self.settings, requested)

    # ----- retrieval ---------------------------------------------------------------------------------------
    def sources_for(self, results: list[SearchResult]) -> list[Source]:
        abstracts = store.get_abstracts(self.retriever.collection, [r.doc_id for r in results])
        return [
            Source(
                n=i,
                doc_id=r.doc_id,
                abstract=abstracts.get(r.doc_id, r.text),
                venue=r.venue,
                year=r.year,
                title=r.title,
                url=(r.metadata.get("url") or None),
                passage=r.text,
            )
            for i, r in enumerate(results, start=1)
        ]

    def relevant(self, question: str, results: list[SearchResult]) -> bool:
        """Whether retrieval found anything the question is about: a close dense match, or a weaker one whose
        passage contains nearly all the question's content words (short questions about a named method, such as
        "What is ESM-AA?", embed poorly but match exactly)."""
        best = max((r.dense_score or 0.0 for r in results), default=0.0)
        if best >= self.settings.refusal_threshold:
            return True
        lexical = max((content_coverage(question, r.text) for r in results[:3]), default=0.0)
        return best >= self.settings.refusal_threshold / 2 and lexical >= LEXICAL_MATCH

    # ----- answering ---------------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        backend: str | None = None,
        k: int | None = None,
        venue: str | None = None,
        year: int | None = None,
        on_event: Event | None = None,
        mode: Mode = "hybrid",
    ) -> Answer:
        return self._run(question, backend, k or self.settings.top_k, venue, year, on_event, "answer", mode)

    def summarize(self, topic: str, backend: str | None = None, k: int | None = None, on_event: Event | None = None):
        return self._run(topic, backend, k or self.settings.summary_k, None, None, on_event, "summary")

    def _run(self, question, backend, k, venue, year, on_event, kind: str, mode: Mode = "hybrid") -> Answer:
        emit = on_event or (lambda kind_, text: None)
        backend = self.backend_name(backend)
        check_config(self.settings, backend)  # a misconfigured backend is reported before any work is done
        clock = Timer()
        results = self.retriever.search(question, k, venue, year, mode=mode)
        clock.lap("retrieve")
        if not results or not self.relevant(question, results):
            emit("sentence", REFUSAL)
            return Answer(question, REFUSAL, True, [], backend, clock.done(), new_report())
        sources = self.sources_for(results)
        # Answers draw on the abstracts that score near the best one (several only when several are about
        # equally relevant); the LLM sees only those, and only those can support its sentences.
        focused = sources if kind == "summary" else focus(results, sources, self.settings)
        composer = Composer(Citations({s.n: s for s in sources}), emit)
        note = None
        llm = self.llm(backend)
        if llm is not None:
            verifier = Verifier(self.embedder, focused, self.settings.support_threshold, self.settings.support_coverage)
            self.show_key_sentences(question, focused, verifier)
            try:
                tokens = self._generate(llm, question, focused, kind)
                on_token = lambda t: (clock.first("first_token"), emit("token", t))  # noqa: E731
                for sentence in sentences_as_they_complete(tokens, on_token):
                    composer.settle(sentence, verifier)
            except LLMError as exc:
                done = "the answer may be incomplete" if composer.rendered else "this answer is extractive"
                note = f"The {backend} backend failed ({exc}); {done}."
            clock.lap("generate")
        if not composer.rendered:  # nothing verified survived (or no LLM): verbatim sentences instead
            if llm is not None:
                composer.report["fallback"] = "extractive"
                note = note or UNVERIFIED_NOTE
                emit("note", note)
            self._extractive(question, sources, kind, composer, clock)
        clock.lap("verify")
        cited = composer.citations.entries()
        abstracts = {s.doc_id: s.abstract for s in sources if s.doc_id in {c.doc_id for c in cited}}
        return Answer(question, composer.text(), not composer.rendered, cited, backend if llm else "extractive",
                      clock.done(), composer.report, note, abstracts=abstracts)  # fmt: skip

    def show_key_sentences(self, question: str, sources: list[Source], verifier: Verifier) -> None:
        """Give the LLM each abstract's key sentences for this question rather than the start of its best chunk:
        small models copy what they are shown, so it had better be the part that answers."""
        q = self.embedder.embed_query(question)
        for source in sources:
            verifier.prepare(source)
            source.passage = " ".join(
                source.sentences[i].strip() for i in key_sentences(source, q, self.settings.focus_margin)
            )

    def _extractive(self, question: str, sources: list[Source], kind: str, composer: Composer, clock: Timer) -> None:
        verifier = Verifier(self.embedder, sources, self.settings.support_threshold, self.settings.support_coverage)
        for source in sources:
            verifier.prepare(source)
        if kind == "summary":
            text = extractive_summary(question, sources, self.embedder)
        else:
            text = extractive_answer(question, sources, self.embedder, margin=self.settings.focus_margin)
        for sentence in split_sentences(text):
            clock.first("first_token")
            composer.settle(sentence, verifier)

    def _generate(self, llm: LLM, question: str, sources: list[Source], kind: str) -> Iterator[str]:
        system = load_prompt(f"{kind}_system")
        user = load_prompt(f"{kind}_user")
        budget = llm.context_size - self.settings.llm_max_tokens - llm.count_tokens(system + user + question) - 32
        block = fit_sources(sources, llm, budget, self.settings.prompt_chars)
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": user.format(sources=block, question=question)},
        ]
        return llm.stream(messages, self.settings.llm_max_tokens)

    def stands_alone(self, question: str) -> bool:
        """A follow-up that retrieval already matches closely on its own ("what makes it possible to train
        1000-layer transformers?") is not rewritten: pronouns alone do not make a question depend on the last."""
        results = self.retriever.search(question, 1)
        return bool(results) and (results[0].dense_score or 0.0) >= STANDALONE_MATCH

    def condense(self, history: list[tuple[str, str]], question: str, backend: str | None = None) -> str:
        """A standalone version of a follow-up question, for retrieval. Falls back to joining it with the
        previous question when no LLM is available or its rewrite loses the conversation's topic."""
        if not history or not needs_context(question) or self.stands_alone(question):
            return question
        previous = history[-1][0]
        fallback = f"{previous} {question}"
        llm = self.llm(self.backend_name(backend))
        if llm is None:
            return fallback
        transcript = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in history[-self.settings.chat_history_turns :])
        prompt = load_prompt("condense").format(history=transcript, question=question)
        try:
            rewrite = llm.complete([{"role": "user", "content": prompt}], 64).strip().splitlines()
        except LLMError:
            return fallback
        candidate = rewrite[0].strip() if rewrite else ""
        if not candidate or len(candidate) > 300 or not shares_content_word(candidate, previous):
            return fallback
        return candidate


def focus(results: list[SearchResult], sources: list[Source], settings: Settings) -> list[Source]:
    """The sources whose dense score is within the focus margin of the best (at most prompt_sources)."""
    best = max((r.dense_score or 0.0) for r in results)
    near = [s for s, r in zip(sources, results, strict=True) if (r.dense_score or 0.0) >= settings.focus_margin * best]
    return (near or sources[:1])[: settings.prompt_sources]


def new_report() -> dict[str, Any]:
    """What the verifier did: sentences kept, re-attributed and dropped (with reasons), and any fallback."""
    return {"kept": 0, "reattributed": 0, "dropped": 0, "dropped_sentences": [], "fallback": None}


class Timer:
    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.times: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = self.times.get(name, 0.0) + (now - self.last) * 1000
        self.last = now

    def first(self, name: str) -> None:
        self.times.setdefault(name, (time.perf_counter() - self.start) * 1000)

    def done(self) -> dict[str, float]:
        self.times["total"] = (time.perf_counter() - self.start) * 1000
        return self.times


def fit_sources(sources: list[Source], llm: LLM, budget: int, chars: int) -> str:
    """The numbered source block: each passage cut to about `chars` characters, all within the token budget."""
    lines: list[str] = []
    for source in sources:
        where = " ".join(str(x) for x in (source.venue, source.year) if x)
        passage = whole_sentences(without_instructions(source.passage), chars)
        line = f"[{source.n}] ({where}) {source.title + ': ' if source.title else ''}{passage}"
        cost = llm.count_tokens(line)
        if cost > budget:
            keep = max(budget, 0) * 4
            if keep > 80:
                lines.append(line[:keep].rsplit(" ", 1)[0] + " …")
            break
        lines.append(line)
        budget -= cost
    return "\n\n".join(lines)


def whole_sentences(text: str, chars: int) -> str:
    """The leading sentences of text that fit in about `chars` characters (at least one)."""
    kept = ""
    for _, end in sentence_spans(text):
        if kept and end > chars:
            break
        kept = text[:end]
    return kept or text


def split_sentences(text: str) -> list[str]:
    """Sentences with their trailing citation markers attached ('... works. [1]' stays one sentence)."""
    spans = sentence_spans(text)
    out: list[str] = []
    for a, b in spans:
        piece = text[a:b].strip()
        lead = re.match(r"^((?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]\s*)+)(.*)$", piece, re.S)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(1).strip()}"
            piece = lead.group(2).strip()
        if piece:
            out.append(piece)
    return out


def sentences_as_they_complete(tokens: Iterator[str], on_token: Callable[[str], Any]) -> Iterator[str]:
    """Group a token stream into sentences; a sentence is complete once the next one has begun."""
    buffer = ""
    for token in tokens:
        on_token(token)
        buffer += token
        parts = split_sentences(buffer)
        if len(parts) > 1 and parts[-1][:1].isalpha():  # the next sentence has begun: the others are complete
            yield from parts[:-1]
            buffer = parts[-1]
    yield from split_sentences(buffer)


CONTEXT_WORDS = re.compile(
    r"\b(they|them|their|it|its|this|that|these|those|he|she|the (paper|method|model|approach|authors|work))\b",
    re.IGNORECASE,
)
STOPWORDS = set(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "for",
        "to",
        "and",
        "or",
        "with",
        "what",
        "which",
        "how",
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "by",
        "from",
        "as",
        "at",
    ]
)


def needs_context(question: str) -> bool:
    return bool(CONTEXT_WORDS.search(question)) or len(question.split()) <= 3


def shares_content_word(a: str, b: str) -> bool:
    words = lambda s: {w for w in re.findall(r"[a-z0-9-]+", s.lower()) if w not in STOPWORDS and len(w) > 2}  # noqa: E731
    return bool(words(a) & words(b))
