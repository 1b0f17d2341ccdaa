"""A scripted LLM: it streams the replies it was given, in order, and records every request it received.

It stands in for a real model where the test is about what the pipeline does with a model's output (composing,
verification outcomes, fallback, condensing, summaries), so those tests are fast and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.answer.llm import LLMError


class ScriptedLLM:
    name = "scripted"
    context_size = 4096

    def __init__(self, *replies: str, fail_after: int | None = None) -> None:
        """`replies` are returned one per call (the last one repeats); with `fail_after`, a stream breaks with
        LLMError after that many tokens, as a server dying mid-answer would."""
        self.replies = list(replies) or [""]
        self.fail_after = fail_after
        self.calls: list[list[dict[str, str]]] = []
        self.choices: list[str] | None = None  # the sentences the last stream was asked to pick from

    def _next(self, messages: list[dict[str, str]]) -> str:
        self.calls.append(messages)
        return self.replies[min(len(self.calls), len(self.replies)) - 1]

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int, choices: list[str] | None = None
    ) -> Iterator[str]:
        self.choices = choices
        tokens = re.findall(r"\S+\s*", self._next(messages))
        for i, token in enumerate(tokens):
            if self.fail_after is not None and i == self.fail_after:
                raise LLMError("scripted failure mid-stream")
            yield token

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        return self._next(messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def warm_up(self, system_prompt: str) -> None:
        """Nothing to load."""
