"""POST /v1/chat/completions: a conversation's last question answered with citations, whole or streamed. When
streaming, only verified sentences are sent as content, and the annotations and citations come in the last chunk."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from rag.answer import Sentence
from rag.errors import BadInput
from rag.frontends.http.admission import Admission, AdmittedStream, Place
from rag.frontends.http.wire import (
    ApiError,
    ChatRequest,
    annotations,
    answer_extras,
    backend_of,
    chunk,
    completion,
    conversation,
)
from rag.records import Answer, Query

if TYPE_CHECKING:
    from rag.answer import ChatSession
    from rag.engine import Engine
    from rag.frontends.http.metrics import Metrics


def chat_router(engine: Engine, admission: Admission, metrics: Metrics) -> APIRouter:
    router = APIRouter()

    @router.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatRequest) -> dict[str, Any] | StreamingResponse:
        backend = backend_of(body.model)
        text, history = conversation(body.messages)
        question = Query(text, anyway=body.answer_anyway)
        engine.llms.check(engine.backend_name(backend))  # 503 before any work when the LLM cannot be used
        session = engine.chat(backend, history)
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        place = admission.admit()
        if not body.stream:
            async with admission.turn(place):
                answer = await run_in_threadpool(session.ask, question, metrics.counted_token)
                metrics.observe_answer(answer)
                references = await run_in_threadpool(cited_references, engine, answer)
            return completion(answer, body.model, ident, created, references)
        chunks = Chunks(ident, created, body.model)
        streamed = streamed_answer(admission, place, session, question, chunks, engine, metrics)
        return AdmittedStream(streamed, place)

    return router


def cited_references(engine: Engine, answer: Answer) -> list[dict[str, Any]]:
    """The papers an answer cites, as CSL-JSON items (rag/corpus/references.py)."""
    from rag.corpus.references import to_csl_items

    return to_csl_items(engine.library.records([c.doc_id for c in answer.citations]))


class Chunks:
    """The SSE chunks of one completion."""

    def __init__(self, ident: str, created: int, model: str) -> None:
        self.ident, self.created, self.model = ident, created, model

    def __call__(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return chunk(self.ident, self.created, self.model, delta, finish, **extra)


async def streamed_answer(
    admission: Admission, place: Place, session: ChatSession, question: Query, chunks: Chunks, engine: Engine,
    metrics: Metrics,
) -> AsyncIterator[str]:  # fmt: skip
    """SSE chunks: the role, each verified sentence as it is settled, then the annotations and citations (or an
    error), then [DONE]."""
    async with admission.turn(place):
        yield chunks({"role": "assistant", "content": ""})
        sent = ""
        try:
            settled = (item for item in session.stream(question) if not metrics.counted_token(item))  # tokens stay
            async for item in iterate_in_threadpool(settled):
                if isinstance(item, Sentence):
                    piece = item.text if not sent or item.text.startswith("\n") else f" {item.text}"
                    sent += piece
                    yield chunks({"content": piece})
                elif isinstance(item, Answer):
                    metrics.observe_answer(item)
                    yield from_answer(item, sent, chunks, await run_in_threadpool(cited_references, engine, item))
        except Exception as exc:
            error = ApiError(400, str(exc)) if isinstance(exc, BadInput) else ApiError(
                500, f"the answer failed ({type(exc).__name__})", "server_error")  # fmt: skip
            yield f"data: {json.dumps(error.body())}\n\n"
        yield "data: [DONE]\n\n"


def from_answer(answer: Answer, sent: str, chunks: Chunks, references: list[dict]) -> str:
    """The last chunks: whatever of the answer's text was not streamed, then its annotations and citations."""
    text = answer.answer
    rest = chunks({"content": text[len(sent) :]}) if text != sent and text.startswith(sent) else ""
    final = {"annotations": annotations(text, answer)}
    return rest + chunks(final, "stop", **answer_extras(answer, references))
