"""What a request reports while it runs, and the one adapter from the pipeline's callback to a stream.

The pipeline calls `on_event` with a raw LLM `Token` (to show progress), each `Sentence` once it is verified and
cited, and `Note`s; `streamed` runs a request in a worker thread and yields those events as they come, then the
`Answer`. The terminal, the web app and the HTTP service all consume that one stream.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rag.records import Answer


@dataclass(frozen=True)
class TextEvent:
    text: str


class Token(TextEvent):
    """A raw token of the LLM's draft (not verified: shown dimmed, if at all)."""


@dataclass(frozen=True)
class Sentence(TextEvent):
    """A settled sentence: verified, with its final citation numbers (or the refusal); or, with
    RAG_UNVERIFIED=show, a sentence no abstract could be confirmed to support (`verified` false, with the reason)."""

    verified: bool = True
    reason: str | None = None


class Note(TextEvent):
    """Something the reader should know about the answer (a failed backend, an extractive fallback)."""


Event = Token | Sentence | Note
OnEvent = Callable[[Event], None]


@dataclass(frozen=True)
class _Failed:
    error: BaseException


class Cancelled(Exception):
    """Raised inside a request whose consumer stopped listening, so that it stops at its next event."""


def streamed(run: Callable[[OnEvent], Answer]) -> Iterator[Event | Answer]:
    """The events of `run(on_event)` as they are reported, then its Answer. `run` works in a thread of its own, so
    the consumer can show each event while the next is computed; an exception it raises is raised here. A consumer
    that stops early (a client that hung up) stops the request at its next event."""
    items: queue.Queue[Event | Answer | _Failed] = queue.Queue()
    stopped = threading.Event()

    def report(event: Event) -> None:
        if stopped.is_set():
            raise Cancelled
        items.put(event)

    def work() -> None:
        try:
            items.put(run(report))
        except Cancelled:
            pass
        except BaseException as exc:  # handed to the consumer, which decides what the user sees
            items.put(_Failed(exc))

    threading.Thread(target=work, daemon=True).start()
    try:
        while True:
            item = items.get()
            if isinstance(item, _Failed):
                raise item.error
            yield item
            if isinstance(item, Answer):
                return
    finally:
        stopped.set()
