"""Who may use the service and how it answers when something is wrong: the request guard (rag/frontends/guard.py:
hosts, origins, API keys on every route but /healthz, the body-size limit), errors in OpenAI's shape, readiness,
and the refusal to listen beyond loopback without keys."""

from __future__ import annotations

import ipaddress
import logging
import threading

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from rag.answer import LLMConfigError
from rag.errors import BadInput, StoreUnavailable
from rag.frontends.http.wire import ApiError
from rag.settings import Settings
from rag.text import private

log = logging.getLogger("rag.serve")
OPEN_ROUTES = frozenset({"/healthz"})  # the only route that needs no key when keys are set


def guard(app: FastAPI, settings: Settings, host: str) -> None:
    """The request guard (hosts, origins, API keys, the body-size limit) on every request; every error answered as
    OpenAI does."""
    from rag.frontends.guard import Allowed, Guard, Policy

    limit = settings.api_max_body_mb * 1_000_000
    policy = Policy(
        allowed=Allowed.of(host, settings.allowed_hosts),
        keys=frozenset(settings.api_key_list),
        open_paths=OPEN_ROUTES,
        max_body=limit,
        max_body_reason=f"the request is larger than {settings.api_max_body_mb} MB (RAG_API_MAX_BODY_MB)",
    )
    app.add_middleware(Guard, policy=policy)

    def answer(error: ApiError) -> JSONResponse:
        error.message = private(error.message, settings.data_dir)
        return JSONResponse(error.body(), error.status, headers=error.headers)

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return answer(exc)

    @app.exception_handler(LLMConfigError)
    async def llm_unavailable(_: Request, exc: LLMConfigError) -> JSONResponse:
        return answer(ApiError(503, str(exc), "server_error", "llm_unavailable"))

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(_: Request, exc: StoreUnavailable) -> JSONResponse:
        return answer(ApiError(503, str(exc), "server_error", "store_unavailable", headers={"Retry-After": "5"}))

    @app.exception_handler(BadInput)
    async def bad_input(_: Request, exc: BadInput) -> JSONResponse:
        return answer(ApiError(400, str(exc)))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if p != "body")
        return answer(ApiError(400, f"invalid request: {where}: {first['msg']}"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return answer(ApiError(exc.status_code, str(exc.detail), headers=dict(exc.headers or {})))

    @app.exception_handler(Exception)
    async def failure(_: Request, exc: Exception) -> JSONResponse:
        log.error("request failed", exc_info=exc)
        message = str(exc).splitlines()[0] if isinstance(exc, RuntimeError) and str(exc) else "internal error"
        return answer(ApiError(500, message, "server_error", "internal_error"))


def health_router(ready: threading.Event) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> JSONResponse:
        """Ready once the models are loaded (503 while they load)."""
        if ready.is_set():
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "loading"}, 503)

    return router


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
