"""Grounded answering as a pipeline of named steps, each with its constants beside it:

    retrieve -> (rerank) -> gate (refuse) -> focus -> generate -> verify -> fall back -> cite

Answers are verified sentence by sentence while the LLM streams. Whoever asked receives typed events
(rag/answer/events.py): the raw tokens (to show progress), each verified sentence as soon as it is settled, and
notes, so what they finally show is only verified text. The terminal, the web app, the HTTP service and the
evaluation harness consume the same events and the same `Answer`. docs/architecture.md draws the flow;
docs/contracts.md gives the JSON shape of an Answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import zip_longest
from typing import TYPE_CHECKING, Literal

from rag.answer.entailment import Judgement
from rag.answer.events import Note, OnEvent, Sentence, Token
from rag.answer.extractive import contributions, extractive_answer, extractive_summary, key_sentences
from rag.answer.judges import ABSTRACT_CHARS, TOKEN_MARGIN, Judge, JudgeError, LexicalJudge, LLMJudge, ModelJudge
from rag.answer.languages import foreign_to
from rag.answer.llm import LLM, LLMError, LLMs
from rag.answer.nearest import NEAREST, NEAREST_POOL, nearest_papers
from rag.answer.relevance import (
    Question,
    TopicFilter,
    closest_similarity,
    dense_floor,
    entailment_reader,
    gate_score,
    gate_threshold,
    question_terms,
)
from rag.answer.rerank import Reranked, make_reranker, rerank
from rag.answer.rewrite import rewrites
from rag.answer.sources import Source
from rag.answer.verifier import Verdict, Verifier, record
from rag.corpus.injection import Guard
from rag.errors import BadInput
from rag.prompts import load_prompt
from rag.records import Answer, AnswerSentence, Citation, NearestPaper, Query, SearchResult, VerifierReport
from rag.sentences import lines_as_they_complete, sentences_as_they_complete, split_sentences, whole_sentences
from rag.settings import Backend, Settings, VerifierKind
from rag.text import check_question, split_quote, where
from rag.tracing import stage_spans

if TYPE_CHECKING:
    from rag.answer.relevance import QuestionTerms, Reader
    from rag.answer.rerank import Reranker
    from rag.answer.seams import Library

Task = Literal["answer", "summary"]


@dataclass(frozen=True)
class Request:
    query: Query  # its text is the topic, for a summary
    backend: Backend
    task: Task = "answer"


class Timer:
    """Milliseconds per stage; a stage entered several times adds up. Each stage's first start and last end are kept
    for its trace span (rag/tracing.py)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.began_ns = time.time_ns()
        self.times: dict[str, float] = {}
        self.spans: dict[str, tuple[int, int]] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        began, began_ns = time.perf_counter(), time.time_ns()
        try:
            yield
        finally:
            self.times[name] = self.times.get(name, 0.0) + (time.perf_counter() - began) * 1000
            self.spans[name] = (self.spans.get(name, (began_ns, 0))[0], time.time_ns())

    def first(self, name: str) -> None:
        """Record the time since the start, the first time only."""
        self.times.setdefault(name, (time.perf_counter() - self.start) * 1000)

    def done(self, name: str = "rag.answer") -> dict[str, float]:
        """The times, the total added; the request's span and its stages' recorded."""
        self.times["total"] = (time.perf_counter() - self.start) * 1000
        stage_spans(name, self.began_ns, self.spans)
        return self.times


def timed(items: Iterable[str], clock: Timer, stage: str) -> Iterator[str]:
    """The items, with the time spent waiting for each added to the stage (the consumer's time is not)."""
    iterator = iter(items)
    while True:
        with clock.stage(stage):
            item = next(iterator, None)
        if item is None:
            return
        yield item


# ----- gate: refuse when no retrieved abstract addresses the question (rag/answer/relevance.py scores it) ----------
REFUSAL = "The indexed abstracts do not answer this question."
DECLINED_NOTE = "The model read the closest abstracts and found no answer to the question in them."


def is_refusal(sentence: str) -> bool:
    """Whether an LLM's sentence is the refusal it is told to give when the sources do not answer."""
    return sentence.strip().rstrip(".").casefold() == REFUSAL.rstrip(".").casefold()


# ----- focus: the abstracts an answer draws on, and what the LLM is shown of them ---------------------------------
def focus(results: list[SearchResult], sources: list[Source], margin: float, limit: int) -> list[Source]:
    """The sources whose dense score is within `margin` of the best (at most `limit`): several only when several
    are about equally relevant. The LLM sees only those, and only those can support its sentences."""
    best = max((r.dense_score or 0.0 for r in results), default=0.0)
    near = [s for s, r in zip(sources, results, strict=True) if (r.dense_score or 0.0) >= margin * best]
    return (near or sources[:1])[:limit]


def show_key_sentences(sources: list[Source], question: Question, margin: float) -> None:
    """Show the LLM each abstract's key sentences for the question rather than the start of its best chunk: small
    models copy what they are shown, so it had better be the part that answers. Sources must be prepared."""
    for source in sources:
        picks = key_sentences(source, question, margin)
        source.key_passage = " ".join(source.sentences[i].strip() for i in picks)


# ----- generate --------------------------------------------------------------------------------------------------
PROMPT_FILES: dict[Task, tuple[str, str]] = {
    "answer": ("answer_system", "answer_user"),
    "summary": ("summary_system", "summary_user"),
}
QUOTED_PROMPTS = ("answer_system_quoted", "answer_user_quoted")  # API answers: each sentence with its source's words
API_BACKENDS: tuple[Backend, ...] = ("openai", "openai-compatible")


def quoting(request: Request) -> bool:
    """Whether the answer is written with quotes: an answer (not a summary) by an API model."""
    return request.task == "answer" and request.backend in API_BACKENDS


def reads_whole(request: Request, settings: Settings) -> bool:
    """Whether the LLM reads every retrieved abstract whole: an API model answering, unless RAG_OPENAI_ABSTRACTS
    gives it the closest abstracts' key sentences, as the local model gets (for a small model behind an API)."""
    return quoting(request) and settings.openai_abstracts == "whole"


def prompt_messages(
    llm: LLM, request: Request, sources: list[Source], settings: Settings, guard: Guard
) -> list[dict[str, str]]:
    whole = reads_whole(request, settings)
    system, user = (load_prompt(name) for name in (QUOTED_PROMPTS if quoting(request) else PROMPT_FILES[request.task]))
    budget = llm.context_size - settings.llm_max_tokens - llm.count_tokens(system + user + request.query.text)
    chars = ABSTRACT_CHARS if whole else settings.prompt_chars
    block = fit_sources(sources, llm, budget - TOKEN_MARGIN, chars, guard, whole)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.format(sources=block, question=request.query.text)},
    ]


def fit_sources(sources: list[Source], llm: LLM, budget: int, chars: int, guard: Guard, whole: bool = False) -> str:
    """The numbered source block: each passage (or `whole` abstract) cut to about `chars` characters, all within the
    token budget."""
    lines: list[str] = []
    for source in sources:
        text = source.abstract if whole else source.key_passage or source.passage
        passage = whole_sentences(guard.without_instructions(text), chars)
        title = f"{source.title}: " if source.title and not guard.instruction_like(source.title) else ""
        line = f"[{source.n}] ({where(source.venue, source.year)}) {title}{passage}"
        cost = llm.count_tokens(line)
        if cost > budget:
            keep = max(budget, 0) * 3  # characters: at least this many tokens for every tokenizer here
            if keep > 80:
                lines.append(line[:keep].rsplit(" ", 1)[0] + " …")
            break
        lines.append(line)
        budget -= cost
    return "\n\n".join(lines)


# ----- verify and cite -------------------------------------------------------------------------------------------
SECTION = re.compile(r"^\s*\**(themes|contributions)\**\s*:\s*\**\s*", re.IGNORECASE)  # summary headings


class Citations:
    """Numbers sources in order of first use and keeps one verbatim quote per cited source."""

    def __init__(self, sources: list[Source]) -> None:
        self.sources = {s.n: s for s in sources}
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
        return f"{text.rstrip('.!?')}{self.language_note(verdict)} {''.join(marks)}{end}"

    def language_note(self, verdict: Verdict) -> str:
        """A mark when the sentence rests on words in another language than their abstract's: a code-switched
        instruction must not pass as the abstract's own words."""
        for n in verdict.sources:
            source = self.sources[n]
            found = foreign_to(verdict.quotes[n], source.sentences or [source.abstract])
            if found:
                return f" [quoted from a sentence in {found[0]} in an abstract in {found[1]}]"
        return ""

    def entries(self) -> list[Citation]:
        return [
            Citation(num, s.doc_id, s.venue, s.year, s.title, self.quotes[n], s.url, s.authors)
            for n, num in sorted(self.numbers.items(), key=lambda item: item[1])
            for s in [self.sources[n]]
        ]


def split_heading(sentence: str) -> tuple[str, str]:
    """('Themes: ', rest) for a sentence that opens a summary section, else ('', sentence)."""
    label = SECTION.match(sentence)
    return (f"{label.group(1).capitalize()}: ", sentence[label.end() :]) if label else ("", sentence)


OFF_TOPIC = "does not address the question"
ANSWERED_ANYWAY_NOTE = (
    "Answered as asked, although no indexed abstract clearly addresses the question: each sentence is still checked "
    "against the abstract it cites."
)


class Composer:
    """Settles answer sentences one by one: verify, render with final citation numbers, report, emit. With
    `show_unverified`, a sentence no abstract could be confirmed to support is shown without citations, marked
    as not verified, rather than dropped (a contradicted one is always dropped)."""

    def __init__(self, citations: Citations, emit: OnEvent, show_unverified: bool = False) -> None:
        self.citations = citations
        self.emit = emit
        self.show_unverified = show_unverified
        self.sentences: list[AnswerSentence] = []
        self.report = VerifierReport()

    @property
    def rendered(self) -> list[str]:
        return [s.text for s in self.sentences]

    @property
    def verified(self) -> int:
        return sum(s.verified for s in self.sentences)

    def settle(
        self, sentence: str, verifier: Verifier, sources: list[Source], topic: TopicFilter | None = None
    ) -> None:
        heading, body = split_heading(sentence)
        self.accept(heading, verifier.check(body, sources), topic)

    def accept(self, heading: str, verdict: Verdict, topic: TopicFilter | None = None) -> None:
        """Count the verdict; a surviving sentence (that addresses the question, when `topic` checks that) is
        rendered with its final citation numbers and emitted."""
        shown = verdict.status != "dropped" or (verdict.kind == "unsupported" and self.show_unverified)
        if shown and topic is not None and not topic.addresses(verdict.text):
            verdict = Verdict.dropped(verdict.text, "off_topic", OFF_TOPIC)
        if verdict.status == "dropped" and verdict.kind == "unsupported" and self.show_unverified:
            self.report.unverified += 1
            self.add(heading, AnswerSentence(verdict.text.rstrip(), False, [], verdict.detail or verdict.reason))
            return
        record(self.report, verdict)
        if verdict.status != "dropped":
            text = self.citations.render(verdict)
            self.add(heading, AnswerSentence(text, True, [self.citations.numbers[n] for n in verdict.sources]))

    def add(self, heading: str, sentence: AnswerSentence) -> None:
        sentence.text = ("\n\n" if heading and self.sentences else "") + heading + sentence.text
        self.sentences.append(sentence)
        self.emit(Sentence(sentence.text, sentence.verified, sentence.reason))

    def text(self) -> str:
        return " ".join(self.rendered).replace(" \n\n", "\n\n") if self.sentences else REFUSAL


# ----- fall back: verbatim sentences when nothing generated survives (or there is no LLM) ------------------------
UNVERIFIED_NOTE = (
    "No sentence of the generated answer could be verified against the abstracts; this answer is extractive."
)
UNVERIFIED_SHOWN_NOTE = (
    "No sentence of the generated answer could be verified against the abstracts; verbatim sentences follow it."
)


def extractive_text(task: Task, sources: list[Source], question: Question, margin: float) -> str:
    if task == "summary":
        return extractive_summary(sources, question)
    return extractive_answer(sources, question, margin=margin)


def missing_contributions(composer: Composer, sources: list[Source], topic: Question) -> str:
    """A summary gives each paper's contribution: the verbatim ones of the papers the LLM's summary left out."""
    left_out = [s for s in sources if s.n not in composer.citations.numbers]
    text = contributions(left_out, topic)
    if any("Contributions:" in sentence for sentence in composer.rendered):
        text = text.removeprefix("Contributions: ")
    return text


def judge_kind(setting: VerifierKind, backend: Backend) -> VerifierKind:
    """The judge of an answer: RAG_VERIFIER, where auto is the LLM judge for an answer an API model writes (the
    user's capable model checks it) and the entailment model otherwise."""
    if setting != "auto":
        return setting
    return "llm" if backend in API_BACKENDS else "model"


def make_judge(settings: Settings) -> Judge:
    """The judge of sentences one by one (its entailment model is loaded with the first sentence it reads, or by
    `Pipeline.warm_up`); the LLM judge checks whole answers and falls back to this one."""
    if settings.verifier == "lexical":
        return LexicalJudge(settings.support_threshold, settings.support_coverage)
    from rag.answer.acceptance import load_acceptor
    from rag.answer.entailment import CONTRADICTION_OPERATING_POINT, entailment_model

    point = settings.entailment_contradict or CONTRADICTION_OPERATING_POINT
    bundled = not (settings.verifier_model or settings.embedding_model or settings.embedding_base_url)
    acceptor = load_acceptor(threshold=settings.verifier_acceptance) if bundled else None
    model = entailment_model(settings)
    return ModelJudge(model, settings.entailment_support, point, settings.support_threshold, acceptor)


# ----- the pipeline ----------------------------------------------------------------------------------------------
class Pipeline:
    """Runs requests through the steps above. Shared by every request of a process; holds no per-request state."""

    def __init__(self, settings: Settings, library: Library, llms: LLMs) -> None:
        self.settings = settings
        self.library = library
        self.llms = llms

    @cached_property
    def reranker(self) -> Reranker | None:
        """RAG_RERANK_MODEL's or RAG_RERANK_BASE_URL's reranker (rag/answer/rerank.py), made ready on first use."""
        return make_reranker(self.settings)

    @cached_property
    def guard(self) -> Guard:
        return Guard.of(self.settings)

    @cached_property
    def verifier(self) -> Verifier:
        return Verifier(self.library.embedder, make_judge(self.settings), self.guard)

    def warm_up(self) -> None:
        """Load the verifier's models now rather than with the first answer."""
        self.verifier.prepare([])
        if isinstance(self.verifier.judge, ModelJudge):
            self.verifier.judge.model.load()

    def verify(self, claim: str, doc_id: str) -> Judgement:
        """What an indexed abstract says about a claim (BadInput for an unknown doc_id or an empty claim)."""
        claim = check_question(claim, self.settings.max_question_chars, "claim")
        abstract = self.library.abstracts([doc_id]).get(doc_id)
        if abstract is None:
            raise BadInput(f"no indexed abstract has the id {doc_id!r}")
        source = Source(1, doc_id, abstract)
        self.verifier.prepare([source])
        return self.verifier.judgement(claim, self.library.embedder.embed([claim])[0], source)

    def run(self, request: Request, on_event: OnEvent | None = None) -> Answer:
        emit = on_event or (lambda event: None)
        what = "topic" if request.task == "summary" else "question"
        question = check_question(request.query.text, self.settings.max_question_chars, what)
        self.llms.check(request.backend)  # a misconfigured backend is reported before any work is done
        if self.settings.verifier == "llm":
            self.llms.judge()  # and so is a judge without an API backend
        clock = Timer()
        searched = [question]
        if self.rewriting(request):
            with clock.stage("rewrite"):
                searched += rewrites(self.llms.get(request.backend), question)  # type: ignore[arg-type]
        k = request.query.k or self.settings.top_k
        deeper = replace(request.query, k=max(k, self.settings.rerank_candidates)) if self.reranker else request.query
        with clock.stage("retrieve"):
            rankings = [self.library.search(deeper.about(text)) for text in searched]
            results = self.library.fused(rankings, len(rankings[0])) if len(rankings) > 1 else rankings[0]
        reranked = Reranked(results[:k])
        if self.reranker is not None:
            with clock.stage("rerank"):
                reranked = rerank(self.reranker, question, results, k)
            if reranked.note:
                emit(Note(reranked.note))
        with clock.stage("retrieve"):
            results = reranked.results
            abstracts = self.library.abstracts(list({r.doc_id for ranking in rankings for r in ranking}))
            sources = self.sources_for(results, abstracts)
            terms = self.question_terms(question)
            if reranked.best is not None:
                answerable = reranked.best >= self.settings.rerank_threshold
            else:
                score = self.gate(searched, terms, rankings, abstracts)
                answerable = self.passes(score, rankings[0])
        overridden = not answerable and request.query.anyway
        if overridden:
            emit(Note(ANSWERED_ANYWAY_NOTE))
        elif not answerable:
            return self.refused(request, question, sources, searched, clock, emit, reranked.note)
        asked = Question(question, self.library.query_vector(question), terms, self.reader_for(question))
        composer = Composer(Citations(sources), emit, self.settings.unverified == "show")
        note = None
        llm = self.llms.get(request.backend)
        if llm is not None:
            with clock.stage("focus"):
                shown = self.shown(request, results, sources, asked)
            note = self.generate_and_verify(llm, request, shown, asked, composer, clock)
            if note == DECLINED_NOTE and not request.query.anyway:
                emit(Note(note))
                notes = " ".join(n for n in (reranked.note, note) if n)
                return self.refused(request, question, sources, searched, clock, emit, notes, composer.report)
        if request.task == "summary" and composer.rendered:
            with clock.stage("fallback"):
                self.settle_all(missing_contributions(composer, sources, asked), sources, composer, clock)
        if not composer.verified:
            with clock.stage("fallback"):
                if llm is not None:
                    composer.report.fallback = "extractive"
                    note = note or (UNVERIFIED_SHOWN_NOTE if composer.sentences else UNVERIFIED_NOTE)
                    emit(Note(note))
                self.fall_back(request.task, sources, asked, composer, clock)
        cited = composer.citations.entries()
        abstracts = {s.doc_id: s.abstract for s in sources if s.doc_id in {c.doc_id for c in cited}}
        nearest = [] if composer.rendered else self.nearest(question, sources, request.query, searched)
        note = " ".join(n for n in (reranked.note, ANSWERED_ANYWAY_NOTE if overridden else None, note) if n) or None
        return Answer(request.query.text, composer.text(), not composer.rendered, cited, request.backend,
                      clock.done(f"rag.{request.task}"), composer.report, note, abstracts=abstracts,
                      sentences=composer.sentences, nearest=nearest, searched=searched)  # fmt: skip

    def refused(
        self,
        request: Request,
        question: str,
        sources: list[Source],
        searched: list[str],
        clock: Timer,
        emit: OnEvent,
        note: str | None,
        report: VerifierReport | None = None,
    ) -> Answer:
        """The refusal, with the papers that came closest."""
        with clock.stage("nearest"):
            nearest = self.nearest(question, sources, request.query, searched)
        emit(Sentence(REFUSAL))
        return Answer(request.query.text, REFUSAL, True, [], request.backend, clock.done(f"rag.{request.task}"),
                      report or VerifierReport(), note, nearest=nearest, searched=searched)  # fmt: skip

    def rewriting(self, request: Request) -> bool:
        """Whether the LLM restates the question in the papers' words first (RAG_REWRITE; auto: an API model)."""
        setting = self.settings.rewrite
        if setting == "off" or request.backend == "extractive":
            return False
        return setting == "on" or request.backend in API_BACKENDS

    def gate(
        self, searched: list[str], terms: QuestionTerms, rankings: list[list[SearchResult]], abstracts: dict[str, str]
    ) -> float:
        """The refusal gate's score: the best over the question (its `terms`) and its rewrites, each on its own
        search. (Gating on the question and the rewrite's abstract-style sentence only was tried on the lay tuning
        questions: 1 of 14 unanswerable answered instead of 2, but the seeds' "written by ChatGPT?" stays refused.)"""
        weighted = [terms, *map(self.question_terms, searched[1:])]
        return max(
            gate_score(text, text_terms, ranking, abstracts)
            for text, text_terms, ranking in zip(searched, weighted, rankings, strict=True)
        )

    def nearest(self, question: str, sources: list[Source], query: Query, searched: list[str]) -> list[NearestPaper]:
        """The papers that came closest to a refused question (rag/answer/nearest.py): the reranker's first, or the
        search's first and the closest by meaning alone, in turn (`searched`: the question and its rewrites)."""
        if self.reranker is not None:
            closest = sources[:NEAREST]
        else:
            closest = self.in_turn(sources, query.about(question), rewritten=len(searched) > 1)
        self.verifier.prepare(closest)
        return nearest_papers(question, self.library.query_vector(question), closest, self.library.term_weights)

    def in_turn(self, sources: list[Source], query: Query, rewritten: bool) -> list[Source]:
        """The NEAREST first of the search and of a search by meaning alone, taken in turn. A question in plain words
        often shares no word with its paper, so the keyword half of the search can push that paper below others that
        share its words; by meaning alone it may still come first. Unless the question was `rewritten` (then the
        `sources`, fused over its rewrites, lead), the search looks deeper (NEAREST_POOL chunks each way): a paper
        both halves find low can rise above those only one finds. On the lay-worded tuning questions the gate
        refused, the gold paper was shown for 8 of 11 in search order, 9 with the closest by meaning in turn, 10 with
        the deeper search too (the paraphrased PubMedQA tuning questions: 8 of 9 either way)."""
        held = {s.doc_id: s for s in sources}  # a paper already among the sources keeps its Source (and vectors)
        deeper = replace(query, k=max(NEAREST_POOL, query.k or 0))
        leading = sources if rewritten else self.fetched(self.library.search(deeper)[:NEAREST], held)
        by_meaning = self.fetched(self.library.search(replace(query, k=NEAREST, mode="dense")), held)
        distinct: dict[str, Source] = {}
        for pair in zip_longest(leading, by_meaning):
            for source in pair:
                if source is not None:
                    distinct.setdefault(source.doc_id, source)
        return list(distinct.values())[:NEAREST]

    def fetched(self, results: list[SearchResult], held: dict[str, Source]) -> list[Source]:
        """The results as sources, those not `held` yet fetched (and added to it)."""
        new = [r for r in results if r.doc_id not in held]
        held |= {s.doc_id: s for s in self.sources_for(new, self.library.abstracts([r.doc_id for r in new]))}
        return [held[r.doc_id] for r in results]

    @property
    def refusal_threshold(self) -> float:
        """Below this gate score a question is refused (rag/answer/relevance.py)..."""
        return gate_threshold(self.settings.refusal_threshold, self.library.embedder.precision)

    @property
    def refusal_dense_floor(self) -> float:
        """...unless the question's closest abstract is at least this similar to it (relevance.py's DENSE_FLOORS)."""
        return dense_floor(self.settings.refusal_dense_floor, self.library.embedder.precision)

    def passes(self, score: float, results: list[SearchResult]) -> bool:
        """The gate's decision on its `score` and the question's own search `results`."""
        return score >= self.refusal_threshold or closest_similarity(results) >= self.refusal_dense_floor

    def addressed(self, question: str) -> float:
        """How well the indexed abstracts address a question: the refusal gate's score (rag/answer/relevance.py)."""
        return self.gate_reading(question)[0]

    def gate_reading(self, question: str) -> tuple[float, float]:
        """The refusal gate's score for a question alone, and its closest abstract's similarity."""
        results = self.library.search(question)
        abstracts = self.library.abstracts([r.doc_id for r in results])
        return gate_score(question, self.question_terms(question), results, abstracts), closest_similarity(results)

    def question_terms(self, question: str) -> QuestionTerms:
        """The question's words weighted by their rarity in the index, and what it asks for (relevance.py)."""
        return question_terms(question, self.library.term_weights(question))

    def reader_for(self, question: str) -> Reader | None:
        """The verifier's cross-encoder as a reader of sentences for the question (none with RAG_VERIFIER=lexical)."""
        judge = self.verifier.judge
        return entailment_reader(judge.model, question) if isinstance(judge, ModelJudge) else None

    def sources_for(self, results: list[SearchResult], abstracts: dict[str, str]) -> list[Source]:
        """The results as numbered sources, each with its whole abstract (from `abstracts`, fetched once)."""
        return [
            Source(
                i,
                r.doc_id,
                abstracts.get(r.doc_id, r.text),
                r.venue,
                r.year,
                r.title,
                r.metadata.get("url") or None,
                passage=r.text,
                authors=tuple(a for a in str(r.metadata.get("authors") or "").split("; ") if a),
            )
            for i, r in enumerate(results, start=1)
        ]

    def shown(
        self, request: Request, results: list[SearchResult], sources: list[Source], asked: Question
    ) -> list[Source]:
        """The sources the LLM reads (and that may support its sentences), prepared for the verifier. An API model
        reads every retrieved abstract whole, as its judge does (unless RAG_OPENAI_ABSTRACTS says otherwise); the
        local model only the most relevant abstracts' key sentences, and a summary every abstract's."""
        whole = reads_whole(request, self.settings)
        shown = sources if request.task == "summary" or whole else self.focused(results, sources)
        self.verifier.prepare(shown)
        if not whole:
            show_key_sentences(shown, asked, self.settings.focus_margin)
        return shown

    def focused(self, results: list[SearchResult], sources: list[Source]) -> list[Source]:
        return focus(results, sources, self.settings.focus_margin, self.settings.prompt_sources)

    def choices(self, request: Request, sources: list[Source], asked: Question) -> list[str] | None:
        """The sentences a local model picks its answer from (RAG_LLM_PICK_SENTENCES): those the extractive answer
        would give, each with its source's marker."""
        if request.task != "answer" or not self.settings.llm_pick_sentences:
            return None
        return split_sentences(extractive_answer(sources, asked, margin=self.settings.focus_margin))

    def generate_and_verify(
        self, llm: LLM, request: Request, sources: list[Source], asked: Question, composer: Composer, clock: Timer
    ) -> str | None:
        """Stream the LLM's answer and settle each sentence as it completes (an answer keeps only the sentences
        that address the question); a note when the LLM failed, or DECLINED_NOTE when an API model that read every
        abstract whole wrote only that they do not answer the question (it then stands as a refusal; one shown only
        key sentences, RAG_OPENAI_ABSTRACTS, falls back to the extractive answer as the local model does). With the
        LLM judge, the whole answer is checked in one call once it is written."""
        choices = self.choices(request, sources, asked)
        written = request.task == "answer" and choices is None  # picked sentences were chosen for their relevance
        topic = TopicFilter(asked, sources, self.library.embedder.embed) if written else None
        by_llm = judge_kind(self.settings.verifier, request.backend) == "llm"

        def on_token(token: str) -> None:
            clock.first("first_token")
            composer.emit(Token(token))

        judged_later: list[tuple[str, str | None]] = []  # the LLM judge: the whole answer in one call
        declined = False  # an API model wrote that the abstracts do not answer the question
        quoted = quoting(request)
        try:
            with clock.stage("generate"):
                messages = prompt_messages(llm, request, sources, self.settings, self.guard)
            tokens = timed(llm.stream(messages, self.settings.llm_max_tokens, choices), clock, "generate")
            for sentence, quote in self.written(tokens, on_token, quoted):
                if quoted and is_refusal(sentence):
                    declined = True
                    continue
                if by_llm:
                    judged_later.append((sentence, quote))
                    continue
                with clock.stage("verify"):
                    heading, body = split_heading(sentence)
                    composer.accept(heading, self.verifier.check(body, sources, quote), topic)
        except LLMError as exc:
            done = "the answer may be incomplete" if composer.verified or judged_later else "this answer is extractive"
            return f"The {request.backend} backend failed ({exc}); {done}."
        if judged_later:
            with clock.stage("verify"):
                note = self.judge_with_llm(judged_later, sources, composer, topic)
            if note:
                return note
        stands = declined and reads_whole(request, self.settings)  # it read every abstract whole
        return DECLINED_NOTE if stands and not composer.sentences else None

    @staticmethod
    def written(
        tokens: Iterable[str], on_token: Callable[[str], None], quoted: bool
    ) -> Iterator[tuple[str, str | None]]:
        """The answer's sentences as they complete, each with the words of its source it quotes (quoted answers:
        one sentence per line, 'sentence [n] | "words"'; a line without them may hold several sentences)."""
        if not quoted:
            yield from ((sentence, None) for sentence in sentences_as_they_complete(iter(tokens), on_token))
            return
        for line in lines_as_they_complete(iter(tokens), on_token):
            sentence, quote = split_quote(line)
            if quote is not None:
                yield sentence, quote
            else:
                yield from ((part, None) for part in split_sentences(sentence))

    def judge_with_llm(
        self,
        sentences: list[tuple[str, str | None]],
        sources: list[Source],
        composer: Composer,
        topic: TopicFilter | None,
    ) -> str | None:
        """Check the whole answer with one call to the LLM judge; when the judge fails, with the model instead (and
        a note saying so)."""
        headings, bodies = zip(*(split_heading(s) for s, _ in sentences), strict=True)
        quotes = [quote for _, quote in sentences]
        note = None
        try:
            judge = LLMJudge(self.llms.judge(), self.settings.judge_max_tokens, self.guard)
            verdicts = self.verifier.check_all(list(bodies), sources, judge, quotes)
        except (JudgeError, LLMError) as exc:
            note = f"The LLM judge failed ({exc}); the answer was checked by the entailment model instead."
            verdicts = [self.verifier.check(body, sources, quote) for body, quote in zip(bodies, quotes, strict=True)]
        for heading, verdict in zip(headings, verdicts, strict=True):
            composer.accept(heading, verdict, topic)
        return note

    def fall_back(self, task: Task, sources: list[Source], asked: Question, composer: Composer, clock: Timer) -> None:
        self.verifier.prepare(sources)
        self.settle_all(extractive_text(task, sources, asked, self.settings.focus_margin), sources, composer, clock)

    def settle_all(self, text: str, sources: list[Source], composer: Composer, clock: Timer) -> None:
        """Verify and cite each sentence of verbatim text (each already carries its source's marker)."""
        for sentence in split_sentences(text):
            clock.first("first_token")
            composer.settle(sentence, self.verifier, sources)
