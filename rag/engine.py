"""The engine: one per process, the facade that the CLI, the web app, the HTTP service and the evaluation harness
call.

It owns what is expensive to load (the library's embedder and indexes, the LLMs), loads it on first need, and
shares it between requests. Models can be injected: `Engine(settings, llm=..., embedder=...)`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.answer.chat import ChatSession
from rag.answer.claims import check_claims
from rag.answer.events import Event, OnEvent, streamed
from rag.answer.llm import LLM, LLMs, resolve_backend
from rag.answer.pipeline import Pipeline, Request, Task
from rag.index.library import Library
from rag.prompts import load_prompt
from rag.records import Answer, Query
from rag.sentences import sentence_spans
from rag.settings import Backend, Settings

if TYPE_CHECKING:
    from rag.answer.entailment import Judgement
    from rag.index.embedder import AnyEmbedder


class Engine:
    def __init__(self, settings: Settings, llm: LLM | None = None, embedder: AnyEmbedder | None = None) -> None:
        self.settings = settings
        self.library = Library(settings, embedder)
        self.llms = LLMs(settings, llm)

    @cached_property
    def pipeline(self) -> Pipeline:
        return Pipeline(self.settings, self.library, self.llms)

    def backend_name(self, requested: str | None = None) -> Backend:
        """The backend a request runs on (`auto` and the default resolved)."""
        return resolve_backend(self.settings, requested)

    def warm_up(self, backend: str | None = None) -> None:
        """Load what the first request would otherwise wait for (models, sentence splitter); for long-running
        apps."""
        sentence_spans("Warm up. Now.")
        self.library.search(Query("warm up", 1))
        self.pipeline.warm_up()
        llm = self.llms.get(self.backend_name(backend))
        if llm is not None:
            llm.warm_up(load_prompt("answer_system"))

    def ask(self, query: Query | str, backend: str | None = None, on_event: OnEvent | None = None) -> Answer:
        """Answer a question from the abstracts; every sentence verified and cited (or a refusal)."""
        return self.pipeline.run(self.request(query, backend, "answer"), on_event)

    def summarize(self, query: Query | str, backend: str | None = None, on_event: OnEvent | None = None) -> Answer:
        """A cited summary of a topic across abstracts: themes, then each paper's contribution."""
        return self.pipeline.run(self.request(query, backend, "summary"), on_event)

    def stream(self, query: Query | str, backend: str | None = None, task: Task = "answer") -> Iterator[Event | Answer]:
        """The events of an answer (or a summary) as they happen, ending in the Answer."""
        request = self.request(query, backend, task)
        return streamed(lambda on_event: self.pipeline.run(request, on_event))

    def request(self, query: Query | str, backend: str | None, task: Task) -> Request:
        query = Query.of(query)
        if task == "summary" and not query.k:
            query = replace(query, k=self.settings.summary_k)
        return Request(query, self.backend_name(backend), task)

    def verify(self, claim: str, doc_id: str) -> Judgement:
        """Whether the indexed abstract `doc_id` supports the claim, contradicts it, or says nothing about it."""
        return self.pipeline.verify(claim, doc_id)

    def verify_file(self, path: Path) -> Iterator[dict[str, Any]]:
        """`rag verify --claims`: one record per line of a JSONL file of {"id", "claim", "doc_id"}."""
        return check_claims(path, self.pipeline.verify)

    def chat(self, backend: str | None = None, history: Iterable[tuple[str, str]] = ()) -> ChatSession:
        """A conversation (follow-ups understood in context), optionally continuing an earlier history."""
        return ChatSession(self.pipeline, self.backend_name(backend), history)
