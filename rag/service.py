"""The bot as a service: an OpenAI-compatible chat-completions API whose answers keep their citations, plus search,
ingest and stats endpoints. It calls only the library (one Engine per process, as the web app does).

    rag serve [--host 127.0.0.1] [--port 8000]

Citations travel where OpenAI clients read them: `message.annotations` (url_citation entries whose start/end are
the span of each [n] marker in the text; the url is the paper's, else abstracts-rag://DOC_ID percent-encoded) and,
for richer clients, a top-level `citations` list with the records of `rag ask --json`. When streaming, only
verified sentences are sent as content, and the annotations and citations come in the last chunk.
docs/contracts.md gives the shapes; the README shows curl and openai-client examples. This module is imported
only by `rag serve` (FastAPI loads with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import FastAPI, File, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from rag.errors import BadInput
from rag.llm import LLMConfigError
from rag.settings import BACKENDS, Mode, Settings
from rag.text import MARKER, web_url, where

if TYPE_CHECKING:
    from rag.engine import Engine
    from rag.records import Answer

MODEL = "abstracts-rag"
RETRY_AFTER_S = 2  # what a 429 asks the client to wait
OPEN_ROUTES = frozenset({"/healthz"})  # the only route that needs no key when keys are set


class ApiError(Exception):
    """An error answered as OpenAI does: {"error": {"message", "type", "param", "code"}} with an HTTP status."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code = status, message, kind, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}}


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


class EmbeddingsRequest(BaseModel):
    model: str = ""
    input: str | list[str]
    encoding_format: str = "float"


class SearchRequest(BaseModel):
    query: str
    k: int | None = Field(None, ge=1, le=100)
    venue: str | None = None
    year: int | None = None
    mode: Mode = "hybrid"


# ----- what the routes compute -----------------------------------------------------------------------------------
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
    history, pending = [], None
    for message in turns[:-1]:
        if message.role == "user":
            pending = message.text()
        elif pending is not None:
            history.append((pending, message.text()))
            pending = None
    return turns[-1].text(), history


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


def completion(answer: Answer, model: str, ident: str, created: int) -> dict[str, Any]:
    message = {"role": "assistant", "content": answer.answer, "annotations": annotations(answer.answer, answer)}
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "citations": answer.contract()["citations"],
    }


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


class Admission:
    """At most `running` requests are served at once and `waiting` more wait in line; beyond that, HTTP 429."""

    def __init__(self, running: int, waiting: int) -> None:
        self.running = running
        self.limit = running + waiting
        self.admitted = 0
        self.semaphore: asyncio.Semaphore | None = None  # made inside the server's event loop

    def admit(self) -> Place:
        """Take a place in line, or raise the 429."""
        if self.admitted >= self.limit:
            raise ApiError(429, "the server is busy; retry shortly", "rate_limit_error", "rate_limit_exceeded")
        self.admitted += 1
        return Place(self)

    @asynccontextmanager
    async def turn(self, place: Place) -> AsyncIterator[None]:
        """Wait for a free slot, run, then leave the line."""
        self.semaphore = self.semaphore or asyncio.Semaphore(self.running)
        try:
            async with self.semaphore:
                yield
        finally:
            place.leave()


class Place:
    """One admitted request's place in line, given back once: when its turn ends, or when its stream ends without
    ever starting one (a client that hung up before the first byte)."""

    def __init__(self, admission: Admission) -> None:
        self.admission: Admission | None = admission

    def leave(self) -> None:
        if self.admission is not None:
            self.admission.admitted -= 1
            self.admission = None


class AdmittedStream(StreamingResponse):
    """A streamed response that gives its place in line back however the stream ends."""

    def __init__(self, content: AsyncIterator[str], place: Place) -> None:
        super().__init__(content, media_type="text/event-stream")
        self.place = place

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.place.leave()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, host: str) -> None:
    """Refuse to listen beyond this machine without API keys."""
    if not is_loopback(host) and not settings.api_key_list:
        raise BadInput(f"refusing to listen on {host} without API keys: set RAG_API_KEYS (or use --host 127.0.0.1)")


# ----- the app ---------------------------------------------------------------------------------------------------
def create_app(engine: Engine, warm_up: bool = True) -> FastAPI:
    """The FastAPI app over one engine. With `warm_up`, models load in the background and /healthz says ready
    once they have."""
    settings = engine.settings
    admission = Admission(settings.api_concurrency, settings.api_queue)
    ready = threading.Event()

    def load() -> None:
        with contextlib.suppress(BadInput):  # an empty index: nothing to load yet; requests say so themselves
            engine.warm_up()
        ready.set()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            threading.Thread(target=load, daemon=True).start()
        else:
            ready.set()
        yield

    app = FastAPI(
        title="abstracts-rag",
        summary="Answers about scientific abstracts, every sentence verified and cited; OpenAI-compatible.",
        lifespan=lifespan,
    )

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = {"Retry-After": str(RETRY_AFTER_S)} if exc.status == 429 else None
        return JSONResponse(exc.body(), exc.status, headers=headers)

    @app.exception_handler(LLMConfigError)
    async def llm_unavailable(_: Request, exc: LLMConfigError) -> JSONResponse:
        return JSONResponse(ApiError(503, str(exc), "server_error", "llm_unavailable").body(), 503)

    @app.exception_handler(BadInput)
    async def bad_input(_: Request, exc: BadInput) -> JSONResponse:
        return JSONResponse(ApiError(400, str(exc)).body(), 400)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if p != "body")
        return JSONResponse(ApiError(400, f"invalid request: {where}: {first['msg']}").body(), 400)

    @app.middleware("http")
    async def guard(request: Request, call_next):  # type: ignore[no-untyped-def]
        """API keys on every route but the open ones, and the request-size limit."""
        keys = settings.api_key_list
        if keys and request.url.path not in OPEN_ROUTES:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if given not in keys:
                error = ApiError(401, "missing or wrong API key (Authorization: Bearer ...)", code="invalid_api_key")
                return JSONResponse(error.body(), 401)
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > settings.api_max_body_mb * 1_000_000:
            error = ApiError(413, f"the request is larger than {settings.api_max_body_mb} MB (RAG_API_MAX_BODY_MB)")
            return JSONResponse(error.body(), 413)
        return await call_next(request)

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        """Ready once the models are loaded (503 while they load)."""
        if ready.is_set():
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "loading"}, 503)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        created = int(time.time())
        return {"object": "list", "data": [{"id": m, "object": "model", "created": created, "owned_by": MODEL}
                                           for m in model_ids()]}  # fmt: skip

    @app.get("/v1/stats")
    async def stats() -> dict[str, Any]:
        return await run_in_threadpool(engine.library.stats)

    @app.post("/v1/search")
    async def search(body: SearchRequest) -> dict[str, Any]:
        place = admission.admit()
        async with admission.turn(place):
            library = engine.library
            results = await run_in_threadpool(library.search, body.query, body.k, body.venue, body.year, body.mode)
        return {"query": body.query, "results": [r.contract() for r in results]}

    @app.post("/v1/embeddings")
    async def embeddings(body: EmbeddingsRequest) -> dict[str, Any]:
        """This process's embedding model as an OpenAI-compatible embeddings server (for other machines' ingests:
        RAG_EMBEDDING_BASE_URL). Served at the index's precision."""
        texts = [body.input] if isinstance(body.input, str) else body.input
        if not texts or body.encoding_format != "float":
            raise ApiError(400, "input must be one or more texts, encoding_format 'float'")
        place = admission.admit()
        async with admission.turn(place):
            vectors = await run_in_threadpool(engine.library.embedder.embed, texts)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return {"object": "list", "data": data, "model": body.model or settings.embedding_api_model, "usage": usage}

    @app.post("/v1/ingest")
    async def ingest(file: UploadFile = File(...)) -> dict[str, Any]:  # noqa: B008 - FastAPI's idiom
        """Add the abstracts of one corpus file (.jsonl, .csv, .bib or seed-format .txt)."""
        name = Path(file.filename or "upload.jsonl").name
        data = await file.read(settings.api_max_body_mb * 1_000_000 + 1)
        if len(data) > settings.api_max_body_mb * 1_000_000:
            raise ApiError(413, f"the file is larger than {settings.api_max_body_mb} MB (RAG_API_MAX_BODY_MB)")
        place = admission.admit()
        async with admission.turn(place):
            report = await run_in_threadpool(add_file, engine, name, data)
        return report

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatRequest) -> dict[str, Any] | StreamingResponse:
        backend = backend_of(body.model)
        question, history = conversation(body.messages)
        engine.llms.check(engine.backend_name(backend))  # 503 before any work when the LLM cannot be used
        session = engine.chat(backend, history)
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        place = admission.admit()
        if not body.stream:
            async with admission.turn(place):
                answer = await run_in_threadpool(session.ask, question)
            return completion(answer, body.model, ident, created)
        return AdmittedStream(stream(session, question, body.model, ident, created, place), place)

    async def stream(session, question: str, model: str, ident: str, created: int, place: Place) -> AsyncIterator[str]:  # type: ignore[no-untyped-def]
        """SSE chunks: the role, each verified sentence as it is settled, then the annotations and citations."""
        async with admission.turn(place):
            loop = asyncio.get_running_loop()
            events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

            def work() -> None:
                def on_event(event) -> None:  # type: ignore[no-untyped-def]
                    if event.kind == "sentence":
                        loop.call_soon_threadsafe(events.put_nowait, ("sentence", event.text))

                try:
                    outcome: tuple[str, Any] = ("answer", session.ask(question, on_event))
                except Exception as exc:
                    outcome = ("error", exc)
                loop.call_soon_threadsafe(events.put_nowait, outcome)

            threading.Thread(target=work, daemon=True).start()
            yield chunk(ident, created, model, {"role": "assistant", "content": ""})
            sent = ""
            while True:
                kind, payload = await events.get()
                if kind == "sentence":
                    piece = payload if not sent or payload.startswith("\n") else f" {payload}"
                    sent += piece
                    yield chunk(ident, created, model, {"content": piece})
                    continue
                if kind == "error":
                    error = ApiError(400, str(payload)) if isinstance(payload, BadInput) else ApiError(
                        500, f"the answer failed ({type(payload).__name__})", "server_error")  # fmt: skip
                    yield f"data: {json.dumps(error.body())}\n\n"
                else:
                    answer: Answer = payload
                    text = answer.answer
                    if text != sent and text.startswith(sent):
                        yield chunk(ident, created, model, {"content": text[len(sent) :]})
                    final = {"annotations": annotations(text, answer)}
                    yield chunk(ident, created, model, final, "stop", citations=answer.contract()["citations"])
                yield "data: [DONE]\n\n"
                return

    return app


def add_file(engine: Engine, name: str, data: bytes) -> dict[str, Any]:
    """Ingest one uploaded file; the report of `rag ingest`."""
    with tempfile.TemporaryDirectory(prefix="rag-upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        report = engine.library.add([path])
    return {
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "rejected": report.skipped,
        "problems": [p.short() for p in report.problems],
        "chunks_written": report.chunks_written,
    }


def serve(settings: Settings, host: str, port: int) -> None:
    """Run the service until interrupted (BadInput when it would be exposed without keys)."""
    import uvicorn

    from rag.engine import Engine

    check_exposure(settings, host)
    app = create_app(Engine(settings))
    print(f"serving on http://{host}:{port} (OpenAI base URL http://{host}:{port}/v1, docs at /docs)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
