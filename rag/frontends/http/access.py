"""Who may use the service and how it answers when something is wrong: API keys on every route but /healthz, the
request-size limit, errors in OpenAI's shape, readiness, and the refusal to listen beyond loopback without keys."""

from __future__ import annotations

import ipaddress
import threading

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from rag.answer import LLMConfigError
from rag.errors import BadInput
from rag.frontends.http.admission import RETRY_AFTER_S
from rag.frontends.http.wire import ApiError
from rag.settings import Settings

OPEN_ROUTES = frozenset({"/healthz"})  # the only route that needs no key when keys are set


def guard(app: FastAPI, settings: Settings) -> None:
    """API keys and the request-size limit on every request; every error answered as OpenAI does."""

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
    async def keys_and_size(request: Request, call_next):  # type: ignore[no-untyped-def]
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
