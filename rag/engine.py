"""The engine: one per process, the facade that the CLI, the web app and the evaluation harness call.

It owns what is expensive to load (the library's embedder and indexes, the LLMs), loads it on first need, and
shares it between requests. Models can be injected: `Engine(settings, llm=..., embedder=...)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

from rag.answerer import OnEvent, Pipeline, Request
from rag.chunker import sentence_spans
from rag.library import Library
from rag.llm import LLM, LLMs, resolve_backend
from rag.prompts import load_prompt
from rag.records import Answer
from rag.settings import Backend, Mode, Settings

if TYPE_CHECKING:
    from rag.chat import ChatSession
    from rag.embedder import AnyEmbedder
    from rag.entailment import Judgement


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
        self.library.search("warm up", 1)
        self.pipeline.verifier.prepare([])  # loads the verifier's model
        llm = self.llms.get(self.backend_name(backend))
        if llm is not None:
            llm.warm_up(load_prompt("answer_system"))

    def ask(
        self,
        question: str,
        backend: str | None = None,
        k: int | None = None,
        venue: str | None = None,
        year: int | None = None,
        on_event: OnEvent | None = None,
        mode: Mode = "hybrid",
    ) -> Answer:
        """Answer a question from the abstracts; every sentence verified and cited (or a refusal)."""
        request = Request(question, self.backend_name(backend), "answer", k or self.settings.top_k, venue, year, mode)
        return self.pipeline.run(request, on_event)

    def summarize(
        self, topic: str, backend: str | None = None, k: int | None = None, on_event: OnEvent | None = None
    ) -> Answer:
        """A cited summary of a topic across abstracts: themes, then each paper's contribution."""
        request = Request(topic, self.backend_name(backend), "summary", k or self.settings.summary_k)
        return self.pipeline.run(request, on_event)

    def verify(self, claim: str, doc_id: str) -> Judgement:
        """Whether the indexed abstract `doc_id` supports the claim, contradicts it, or says nothing about it."""
        return self.pipeline.verify(claim, doc_id)

    def chat(self, backend: str | None = None, history: Iterable[tuple[str, str]] = ()) -> ChatSession:
        """A conversation (follow-ups understood in context), optionally continuing an earlier history."""
        from rag.chat import ChatSession

        return ChatSession(self, backend, history)
