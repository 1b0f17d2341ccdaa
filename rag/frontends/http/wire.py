"""The OpenAI wire format: chat-completion request bodies, model ids, errors, and how an answer becomes a completion
or a stream of chunks with its citations (docs/contracts.md). Citations travel where OpenAI clients read them:
`message.annotations` (url_citation entries whose start/end are the span of each [n] marker in the text; the url is
the paper's, else abstracts-rag://DOC_ID percent-encoded) and, for richer clients, a top-level `citations` list with
the records of `rag ask --json`."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from rag.answer.chat import history_pairs
from rag.frontends.guard import ApiError
from rag.records import Answer
from rag.settings import BACKENDS
from rag.text import MARKER, web_url, where

MODEL = "abstracts-rag"


# ----- request bodies --------------------------------------------------------------------------------------------
class Message(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text (a list of content parts is joined; images and the like are ignored)."""
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    model: str = MODEL
    messages: list[Message]
    stream: bool = False
    answer_anyway: bool = False  # answer from the closest papers where the refusal gate would refuse (still verified)


# ----- responses -------------------------------------------------------------------------------------------------
def model_ids() -> list[str]:
    return [MODEL, *(f"{MODEL}:{backend}" for backend in BACKENDS)]


def backend_of(model: str) -> str | None:
    """The backend a model id selects (None: the configured default); 404 for an unknown id."""
    if model == MODEL:
        return None
    name, _, backend = model.partition(":")
    if name != MODEL or backend not in BACKENDS:
        raise ApiError(404, f"unknown model {model!r}; GET /v1/models lists them", code="model_not_found")
    return backend


def conversation(messages: list[Message]) -> tuple[str, list[tuple[str, str]]]:
    """The question (the last user message) and the earlier turns as (user, assistant) pairs."""
    turns = [m for m in messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user":
        raise ApiError(400, "the last message must be the user's question")
    return turns[-1].text(), history_pairs((m.role, m.text()) for m in turns[:-1])


def annotations(text: str, answer: Answer) -> list[dict[str, Any]]:
    """One url_citation per [n] marker in the text: its character span and the cited paper."""
    by_n = {c.n: c for c in answer.citations}
    out = []
    for match in MARKER.finditer(text):
        citation = by_n.get(int(match.group(1).split(",")[0].split(";")[0]))
        if citation is None:
            continue
        out.append({
            "type": "url_citation",
            "url_citation": {
                "start_index": match.start(),
                "end_index": match.end(),
                "url": web_url(citation.url) or f"{MODEL}://{quote(citation.doc_id, safe='')}",
                "title": citation.title or f"{where(citation.venue, citation.year)} {citation.doc_id}".strip(),
            },
        })  # fmt: skip
    return out


def completion(answer: Answer, model: str, ident: str, created: int, references: list[dict]) -> dict[str, Any]:
    message = {"role": "assistant", "content": answer.answer, "annotations": annotations(answer.answer, answer)}
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        **answer_extras(answer, references),
    }


def answer_extras(answer: Answer, references: list[dict]) -> dict[str, Any]:
    """The top-level fields beside OpenAI's: the citation records, the cited papers as CSL-JSON `references` (for
    a reference manager), the answer sentence by sentence, each `verified` or not (RAG_UNVERIFIED=show; an
    unverified sentence has no marker, so no annotation), with a refusal the papers that came closest, and what was
    searched for, and the answer's `note` (a fallback, an answer given anyway)."""
    contract = answer.contract()
    extras = {key: contract[key] for key in ("citations", "sentences", "nearest", "searched", "note")}
    return {**extras, "references": references}


def chunk(ident: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    body = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
