"""Answering: the pipeline (retrieve, gate, focus, generate, verify, fall back, cite), its judges and LLMs, the chat,
and the events a request reports. It sees the index only through the `Library` protocol (rag/answer/seams.py)."""

from rag.answer.chat import ChatSession
from rag.answer.claims import check_claims, verdict_record
from rag.answer.events import Event, Note, OnEvent, Sentence, Token, streamed
from rag.answer.llm import LLM, LLMConfigError, LLMError
from rag.answer.pipeline import Pipeline, Request, Task
from rag.answer.seams import Library

__all__ = [
    "LLM", "ChatSession", "Event", "LLMConfigError", "LLMError", "Library", "Note", "OnEvent", "Pipeline", "Request",
    "Sentence", "Task", "Token", "check_claims", "streamed", "verdict_record",
]  # fmt: skip
