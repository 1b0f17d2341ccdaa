"""Admission: bounded concurrency and a bounded queue; beyond both, HTTP 429."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi.responses import StreamingResponse

from rag.frontends.http.wire import ApiError

RETRY_AFTER_S = 2  # what a 429 asks the client to wait


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
