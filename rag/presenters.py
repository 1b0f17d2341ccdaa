"""Terminal presentation of answers: verified sentences as they settle, then the numbered sources."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from rag.text import terminal_safe, where

if TYPE_CHECKING:
    from rag.answerer import Event, OnEvent
    from rag.engine import Engine
    from rag.records import Answer


def print_sources(answer: Answer, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if answer.note:
        print(f"\nNote: {terminal_safe(answer.note)}", file=out)
    if not answer.citations:
        return
    print("\nSources:", file=out)
    for c in answer.citations:
        line = f"  [{c.n}] {where(c.venue, c.year)} · {c.doc_id}{' · ' + c.title if c.title else ''}"
        print(terminal_safe(line), file=out)
        print(f'      "{terminal_safe(c.quote)}"', file=out)


def answer_to_terminal(run: Callable[[OnEvent], Answer]) -> Answer:
    """Run a request, printing each verified sentence as soon as it is settled; a TTY also sees a live draft."""
    live = sys.stdout.isatty()
    draft: list[str] = []

    def on_event(event: Event) -> None:
        if event.kind == "token" and live:
            draft.append(event.text)
            tail = terminal_safe("".join(draft)[-70:].replace("\n", " "))
            sys.stderr.write(f"\r\033[2K\033[2mdrafting… {tail}\033[0m")
            sys.stderr.flush()
        elif event.kind == "sentence":
            if live:
                sys.stderr.write("\r\033[2K")
                draft.clear()
            text = terminal_safe(event.text)
            sys.stdout.write(text.lstrip(" ") + ("" if text.endswith("\n") else " "))
            sys.stdout.flush()

    answer = run(on_event)
    if live:
        sys.stderr.write("\r\033[2K")
    print()
    print_sources(answer)
    return answer


def chat_loop(engine: Engine, backend: str | None) -> None:
    from rag.errors import BadInput

    session = engine.chat(backend)
    if hasattr(sys.stdin, "reconfigure"):  # bytes that are not UTF-8 reach check_question, which says so
        sys.stdin.reconfigure(errors="surrogateescape")
    print("Ask about the indexed abstracts. Commands: /sources, /reset, /quit", file=sys.stderr)
    while True:
        try:
            line = input("you> ").strip()
        except EOFError:
            print(file=sys.stderr)
            return
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return
        if line == "/reset":
            session.reset()
            print("(conversation cleared)", file=sys.stderr)
            continue
        if line == "/sources":
            if session.last is None:
                print("(no answer yet)", file=sys.stderr)
            else:
                print_sources(session.last)
            continue
        try:
            answer_to_terminal(lambda on_event, q=line: session.ask(q, on_event=on_event))
        except BadInput as exc:
            print(f"rag: {exc}", file=sys.stderr)
        except Exception as exc:  # the store or a server went away: this question fails, the conversation goes on
            if os.environ.get("RAG_DEBUG"):
                raise
            reason = terminal_safe(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            print(f"rag: not answered ({reason}); ask again once it is back", file=sys.stderr)
