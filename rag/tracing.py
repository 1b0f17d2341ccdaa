"""Opt-in OpenTelemetry traces (RAG_TRACING=true): a span for each ingest, search, answer and summary, and a child
span per stage of an answer (retrieve, rerank, focus, generate, verify, ...), exported over OTLP as the standard
OTEL_* variables configure it (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...). Off, the spans cost nothing:
OpenTelemetry's API hands out non-recording ones. The library imports OpenTelemetry only when it makes a span."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from rag.settings import Settings

TRACER = "abstracts-rag"


def configure(settings: Settings, exporter: SpanExporter | None = None) -> bool:
    """Install the tracer provider when tracing is on (or an exporter is given, as tests do); whether it was. Once
    per process: OpenTelemetry's provider is process-wide by design."""
    if not settings.tracing and exporter is None:
        return False
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "abstracts-rag"}))  # OTEL_SERVICE_NAME wins
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return True


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span around a piece of work (non-recording unless tracing is configured)."""
    from opentelemetry import trace

    with trace.get_tracer(TRACER).start_as_current_span(name, attributes=attributes) as current:
        yield current


def stage_spans(name: str, began_ns: int, stages: dict[str, tuple[int, int]], **attributes: Any) -> None:
    """A span `name` from `began_ns` to now, with a child span per stage (its first start to its last end): made
    after the fact, so that a stage entered once per token costs one span, not one each time."""
    from opentelemetry import trace

    tracer = trace.get_tracer(TRACER)
    parent = tracer.start_span(name, start_time=began_ns, attributes=attributes)
    context = trace.set_span_in_context(parent)
    for stage, (start, end) in stages.items():
        tracer.start_span(stage, context=context, start_time=start).end(end_time=end)
    parent.end(end_time=time.time_ns())
