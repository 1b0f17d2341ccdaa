"""Prometheus metrics of `rag serve` at /metrics (behind the same guard and keys as every route): requests and errors
by route and status, request latency by route, time per pipeline stage, LLM tokens generated, the admission line
(running, waiting) and the index's size. One registry per app (no process-wide state)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from rag.answer import Token
from rag.frontends.guard import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from rag.engine import Engine
    from rag.frontends.http.admission import Admission
    from rag.records import Answer

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    def __init__(self, engine: Engine, admission: Admission) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("rag_requests", "HTTP requests by route and status.", ["route", "status"],
                                registry=self.registry)  # fmt: skip
        self.latency = Histogram("rag_request_seconds", "HTTP request latency by route.", ["route"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)  # fmt: skip
        self.stages = Histogram("rag_stage_seconds", "Time per pipeline stage of answers and summaries.", ["stage"],
                                buckets=LATENCY_BUCKETS, registry=self.registry)  # fmt: skip
        self.tokens = Counter("rag_generated_tokens", "LLM tokens generated (drafts).", registry=self.registry)
        running = Gauge("rag_admission_running", "Requests being served.", registry=self.registry)
        running.set_function(lambda: len(admission.started))
        waiting = Gauge("rag_admission_waiting", "Requests waiting in line.", registry=self.registry)
        waiting.set_function(lambda: max(0, admission.admitted - len(admission.started)))
        self.registry.register(IndexSize(engine))

    def counted_token(self, event: Any) -> bool:
        """Count an LLM token; whether the event was one."""
        if isinstance(event, Token):
            self.tokens.inc()
            return True
        return False

    def observe_answer(self, answer: Answer) -> None:
        for stage, ms in answer.timings_ms.items():
            if stage != "total":
                self.stages.labels(stage).observe(ms / 1000)

    def router(self) -> APIRouter:
        router = APIRouter()

        @router.get("/metrics", include_in_schema=False)
        async def metrics() -> Response:
            return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

        return router


class IndexSize(Collector):
    """The index's abstracts and chunks, read at each scrape (from the keyword index's manifest: cheap)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            stats = self.engine.library.stats()
        except Exception:
            return
        yield GaugeMetricFamily("rag_index_abstracts", "Abstracts indexed.", value=stats["abstracts"])
        yield GaugeMetricFamily("rag_index_chunks", "Chunks indexed.", value=stats["chunks"])


class RequestMetrics:
    """ASGI middleware counting each request by its route's template (not its path: bounded labels) and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        begun, status = time.perf_counter(), [500]

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            route = getattr(scope.get("route"), "path", None) or (
                "/mcp" if scope["path"].startswith("/mcp") else "other"
            )
            self.metrics.requests.labels(route, str(status[0])).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - begun)
