"""Questions in plain words: the configured LLM restates a question in the vocabulary of research abstracts (a few
search queries and one sentence as an abstract might say the answer), so that retrieval and the refusal gate see
the papers' words as well as the reader's."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rag.answer.llm import LLMError
from rag.prompts import load_prompt

if TYPE_CHECKING:
    from rag.answer.llm import LLM

REWRITES = 4  # queries kept from a reply: three rewrites and the hypothetical sentence
REWRITE_MAX_TOKENS = 200
LEAD = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|(?:query|sentence)\s*\d*\s*:)\s*", re.IGNORECASE)


def rewrites(llm: LLM, question: str) -> list[str]:
    """What to search for besides the question itself; [] when the LLM fails or says nothing usable."""
    prompt = load_prompt("rewrite_question").format(question=question)
    try:
        reply = llm.complete([{"role": "user", "content": prompt}], REWRITE_MAX_TOKENS)
    except LLMError:
        return []
    return parse_rewrites(reply, question)


def parse_rewrites(reply: str, question: str) -> list[str]:
    """The reply's lines as queries: list marks and quotes stripped, 2 to 60 words, none repeating the question."""
    lines = [LEAD.sub("", line).strip().strip("\"'") for line in reply.splitlines()]
    kept = [line for line in lines if 2 <= len(line.split()) <= 60 and line.lower() != question.lower()]
    return list(dict.fromkeys(kept))[:REWRITES]
