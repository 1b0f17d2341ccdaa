"""Admission: bounded concurrency and a bounded queue; beyond both, HTTP 429 with an honest Retry-After."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi.responses import StreamingResponse

from rag.frontends.http.wire import ApiError

FIRST_GUESS_S = 2.0  # a request's service time before any was measured
SMOOTHING = 0.2  # weight of the latest service time in the running mean


class Admission:
    """At most `running` requests are served at once and `waiting` more wait in line; beyond that, HTTP 429. Its
    Retry-After is when a place is expected to be free for this client: places free at `running` per mean service
    time, and each turned-away client is given the next one not yet promised to another, so that a burst's retries
    come back spread over the time the line takes to drain rather than all at once."""

    def __init__(self, running: int, waiting: int) -> None:
        self.running = running
        self.limit = running + waiting
        self.admitted = 0
        self.mean_s = FIRST_GUESS_S
        self.started: dict[int, float] = {}  # the turns being served: their start times
        self.promised_until = 0.0  # monotonic time by which the places promised so far are expected to be free
        self.semaphore: asyncio.Semaphore | None = None  # made inside the server's event loop

    def admit(self) -> Place:
        """Take a place in line, or raise the 429."""
        if self.admitted >= self.limit:
            raise ApiError(429, "the server is busy; retry shortly", "rate_limit_error", "rate_limit_exceeded",
                           {"Retry-After": str(self.retry_after())})  # fmt: skip
        self.admitted += 1
        return Place(self)

    def retry_after(self, now: float | None = None) -> int:
        """Whole seconds until the next place not yet promised is expected to be free (that place is promised)."""
        now = time.monotonic() if now is None else now
        longest = max((now - begun for begun in self.started.values()), default=0.0)
        per_place = max(self.mean_s, longest) / self.running  # a turn running longer than the mean raises the guess
        self.promised_until = max(self.promised_until, now) + per_place
        return max(1, math.ceil(self.promised_until - now))

    def served(self, seconds: float) -> None:
        self.mean_s += SMOOTHING * (seconds - self.mean_s)

    @asynccontextmanager
    async def turn(self, place: Place) -> AsyncIterator[None]:
        """Wait for a free slot, run, then leave the line."""
        self.semaphore = self.semaphore or asyncio.Semaphore(self.running)
        try:
            async with self.semaphore:
                begun = self.started[id(place)] = time.monotonic()
                try:
                    yield
                finally:
                    del self.started[id(place)]
                    self.served(time.monotonic() - begun)
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
