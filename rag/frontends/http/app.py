"""The bot as a service: an OpenAI-compatible chat-completions API whose answers keep their citations, plus search,
ingest, stats and embeddings endpoints. It calls only the library (one Engine per process, as the web app does).

    rag serve [--host 127.0.0.1] [--port 8000]

The routes live by concern: chat completions (chat.py), the library's routes (library.py), health and access
(access.py); the OpenAI wire format is wire.py. docs/contracts.md gives the shapes; the README shows curl and
openai-client examples. This package is imported only by `rag serve` (FastAPI loads with it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings

from rag.errors import BadInput
from rag.frontends.http.access import check_exposure, guard, health_router
from rag.frontends.http.admission import Admission
from rag.frontends.http.chat import chat_router
from rag.frontends.http.library import library_router
from rag.frontends.http.metrics import Metrics, RequestMetrics
from rag.frontends.mcp_server import create_server
from rag.settings import Settings

if TYPE_CHECKING:
    from rag.engine import Engine


def create_app(engine: Engine, warm_up: bool = True, host: str = "127.0.0.1") -> FastAPI:
    """The FastAPI app over one engine, served on `host` (the guard lets requests name it). With `warm_up`, models
    load in the background and /healthz says ready once they have."""
    admission = Admission(engine.settings.api_concurrency, engine.settings.api_queue)
    ready = threading.Event()

    def load() -> None:
        with contextlib.suppress(BadInput):  # an empty index: nothing to load yet; requests say so themselves
            engine.warm_up()
        ready.set()

    mcp_server = create_server(engine, admission)
    mcp_app = mcp_server.streamable_http_app(
        streamable_http_path="/",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),  # the guard's work
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            threading.Thread(target=load, daemon=True).start()
        else:
            ready.set()
        async with mcp_server.session_manager.run():
            yield

    app = FastAPI(
        title="abstracts-rag",
        summary="Answers about scientific abstracts, every sentence verified and cited; OpenAI-compatible.",
        lifespan=lifespan,
    )
    guard(app, engine.settings, host)
    metrics = Metrics(engine, admission)
    app.add_middleware(RequestMetrics, metrics=metrics)  # outside the guard: its refusals are counted too
    app.include_router(health_router(ready))
    app.include_router(metrics.router())
    app.include_router(library_router(engine, admission))
    app.include_router(chat_router(engine, admission, metrics))
    app.mount("/mcp", mcp_app)  # MCP over streamable HTTP, at /mcp/ (rag/frontends/mcp_server.py)
    return app


def serve(settings: Settings, host: str, port: int) -> None:
    """Run the service until interrupted (BadInput when it would be exposed without keys)."""
    import uvicorn

    from rag.engine import Engine

    check_exposure(settings, host)
    app = create_app(Engine(settings), host=host)
    print(f"serving on http://{host}:{port} (OpenAI base URL http://{host}:{port}/v1, docs at /docs)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
