"""A multi-turn conversation over the engine: follow-ups are rewritten into standalone questions first."""

from __future__ import annotations

from rag.answerer import Answer, Engine, Event


class ChatSession:
    """Per-conversation state (history and the last answer); the engine itself is shared."""

    def __init__(self, engine: Engine, backend: str | None = None) -> None:
        self.engine = engine
        self.backend = backend
        self.history: list[tuple[str, str]] = []
        self.last: Answer | None = None

    def ask(self, question: str, on_event: Event | None = None, **filters) -> Answer:
        standalone = self.engine.condense(self.history, question, self.backend)
        answer = self.engine.ask(standalone, self.backend, on_event=on_event, **filters)
        answer.question, answer.standalone_question = question, standalone
        self.history.append((standalone, answer.answer))
        del self.history[: -self.engine.settings.chat_history_turns]
        self.last = answer
        return answer

    def reset(self) -> None:
        self.history.clear()
        self.last = None
