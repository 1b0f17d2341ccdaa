"""A multi-turn conversation over the answer pipeline. A follow-up that needs the conversation ("which tasks did
they test it on?") is first condensed into a standalone question for retrieval; a question that stands alone is not."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from rag.answer.events import Event, OnEvent, streamed
from rag.answer.llm import LLMError
from rag.answer.pipeline import Request
from rag.prompts import load_prompt
from rag.records import Answer, Query
from rag.terms import content_words

if TYPE_CHECKING:
    from rag.answer.pipeline import Pipeline
    from rag.settings import Backend

STANDALONE_MATCH = 0.5  # dense similarity at which a follow-up is understood without the conversation
CONTEXT_WORDS = re.compile(
    r"\b(they|them|their|it|its|this|that|these|those|he|she|the (paper|method|model|approach|authors|work))\b",
    re.IGNORECASE,
)
SHORT_QUESTION_WORDS = 3  # a question this short is taken as a follow-up
CONDENSE_MAX_TOKENS = 64
CONDENSE_MAX_CHARS = 300


def history_pairs(turns: Iterable[tuple[str | None, str]]) -> list[tuple[str, str]]:
    """Earlier turns, (role, text) in order, as the (question, answer) pairs a ChatSession continues: each assistant
    turn with the user turn before it; other roles are left out."""
    history, pending = [], None
    for role, text in turns:
        if role == "user":
            pending = text
        elif role == "assistant" and pending is not None:
            history.append((pending, text))
            pending = None
    return history


class ChatSession:
    """Per-conversation state (history and the last answer); the pipeline itself is shared."""

    def __init__(self, pipeline: Pipeline, backend: Backend, history: Iterable[tuple[str, str]] = ()) -> None:
        self.pipeline = pipeline
        self.settings = pipeline.settings
        self.backend = backend
        self.history: list[tuple[str, str]] = list(history)
        self.last: Answer | None = None

    def ask(self, query: Query | str, on_event: OnEvent | None = None) -> Answer:
        """Answer the next question of the conversation (its filters and k as the query gives them)."""
        query = Query.of(query)
        standalone = self.condense(query.text)
        answer = self.pipeline.run(Request(query.about(standalone), self.backend), on_event)
        answer.question, answer.standalone_question = query.text, standalone
        self.history.append((standalone, answer.answer))
        del self.history[: -self.settings.chat_history_turns]
        self.last = answer
        return answer

    def stream(self, query: Query | str) -> Iterator[Event | Answer]:
        """The events of the next answer as they happen, ending in the Answer."""
        return streamed(lambda on_event: self.ask(query, on_event))

    def reset(self) -> None:
        self.history.clear()
        self.last = None

    def condense(self, question: str) -> str:
        """A standalone version of a follow-up question, for retrieval. Falls back to joining it with the previous
        question when no LLM is available or its rewrite loses the conversation's topic or addresses the indexed
        abstracts less well than the joined question does."""
        if not self.history or not needs_context(question) or self.stands_alone(question):
            return question
        previous = self.history[-1][0]
        fallback = f"{previous} {question}"
        llm = self.pipeline.llms.get(self.backend)
        if llm is None:
            return fallback
        turns = self.history[-self.settings.chat_history_turns :]
        transcript = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in turns)
        prompt = load_prompt("condense").format(history=transcript, question=question)
        try:
            rewrite = llm.complete([{"role": "user", "content": prompt}], CONDENSE_MAX_TOKENS).strip().splitlines()
        except LLMError:
            return fallback
        candidate = rewrite[0].strip() if rewrite else ""
        on_topic = bool(content_words(candidate) & content_words(previous))
        if not (candidate and len(candidate) <= CONDENSE_MAX_CHARS and on_topic):
            return fallback
        addressed = self.pipeline.addressed  # a rewrite that adds words of its own can lose the abstracts
        return candidate if addressed(candidate) >= addressed(fallback) else fallback

    def stands_alone(self, question: str) -> bool:
        """A follow-up that retrieval already matches closely on its own ("what makes it possible to train
        1000-layer transformers?") is not rewritten: pronouns alone do not make a question depend on the last."""
        results = self.pipeline.library.search(Query(question, 1))
        return bool(results) and (results[0].dense_score or 0.0) >= STANDALONE_MATCH


def needs_context(question: str) -> bool:
    return bool(CONTEXT_WORDS.search(question)) or len(question.split()) <= SHORT_QUESTION_WORDS
