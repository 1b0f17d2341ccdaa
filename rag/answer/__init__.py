"""Answering: the pipeline (retrieve, gate, focus, generate, verify, fall back, cite), its judges and LLMs, the chat,
and the events a request reports. It sees the index only through the `Library` protocol (rag/answer/seams.py)."""

from rag.answer.chat import ChatSession
from rag.answer.events import Event, Note, OnEvent, Sentence, Token, streamed
from rag.answer.pipeline import Pipeline, Request, Task
from rag.answer.seams import Library

__all__ = [
    "ChatSession",
    "Event",
    "Library",
    "Note",
    "OnEvent",
    "Pipeline",
    "Request",
    "Sentence",
    "Task",
    "Token",
    "streamed",
]
