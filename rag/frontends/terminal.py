"""Terminal presentation of answers: verified sentences as they settle, then the numbered sources."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from rag.answer import Event, Sentence, Token
from rag.records import Answer, Query
from rag.text import byline, terminal_safe, where

if TYPE_CHECKING:
    from rag.engine import Engine


UNVERIFIED_MARK = "[not verified]"  # after a sentence shown without citations (RAG_UNVERIFIED=show)


def print_sources(answer: Answer, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if answer.note:
        print(f"\nNote: {terminal_safe(answer.note)}", file=out)
    if answer.nearest:
        print_nearest(answer, out)
    if answer.citations:
        print("\nSources:", file=out)
    for c in answer.citations:
        line = f"  [{c.n}] {where(c.venue, c.year)} · {c.doc_id}{' · ' + c.title if c.title else ''}"
        line += f" · {byline(c.authors)}" if c.authors else ""
        line += f" · {c.url}" if c.url else ""
        print(terminal_safe(line), file=out)
        print(f'      "{terminal_safe(c.quote)}"', file=out)
    print_removed(answer, out)


def print_removed(answer: Answer, out: TextIO) -> None:
    """The sentences the verifier removed, each with why: not part of the answer, but never silently gone."""
    if answer.removed:
        print("\nRemoved by the verifier (not part of the answer; the abstracts did not confirm them):", file=out)
    for removed in answer.removed:
        print(terminal_safe(f"  - {removed.text} ({removed.why})"), file=out)


def print_nearest(answer: Answer, out: TextIO) -> None:
    print(
        "\nClosest papers (they do not answer it; ask again in their words, or answer anyway: "
        "`rag ask --answer-anyway`, /anyway in `rag chat`):",
        file=out,
    )
    for paper in answer.nearest:
        title = f" · {paper.title}" if paper.title else ""
        print(terminal_safe(f"  - {where(paper.venue, paper.year)} · {paper.doc_id}{title}"), file=out)
        print(f'      "{terminal_safe(paper.sentence)}"', file=out)
        if paper.terms:
            print(f"      words to try: {terminal_safe(', '.join(paper.terms))}", file=out)


def answer_to_terminal(events: Iterator[Event | Answer]) -> Answer:
    """Print each verified sentence of a stream as soon as it is settled (a TTY also sees a live draft), then the
    sources; the stream's Answer."""
    live = sys.stdout.isatty()
    draft: list[str] = []
    for item in events:
        match item:
            case Token(text) if live:
                draft.append(text)
                tail = terminal_safe("".join(draft)[-70:].replace("\n", " "))
                sys.stderr.write(f"\r\033[2K\033[2mdrafting… {tail}\033[0m")
                sys.stderr.flush()
            case Sentence(text, verified):
                if live:
                    sys.stderr.write("\r\033[2K")
                    draft.clear()
                text = terminal_safe(text) + ("" if verified else f" {UNVERIFIED_MARK}")
                sys.stdout.write(text.lstrip(" ") + ("" if text.endswith("\n") else " "))
                sys.stdout.flush()
            case Answer() as answer:
                if live:
                    sys.stderr.write("\r\033[2K")
                print()
                print_sources(answer)
                return answer
    raise RuntimeError("the answer stream ended without an answer")


def chat_loop(engine: Engine, backend: str | None) -> None:
    from rag.errors import BadInput

    session = engine.chat(backend)
    if hasattr(sys.stdin, "reconfigure"):  # bytes that are not UTF-8 reach check_question, which says so
        sys.stdin.reconfigure(errors="surrogateescape")
    print("Ask about the indexed abstracts. Commands: /sources, /anyway, /reset, /quit", file=sys.stderr)
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
        query: Query | str = line
        if line == "/anyway":  # the last refused question, answered from the closest papers (still verified)
            if session.last is None or not session.last.refused:
                print("(nothing was refused)", file=sys.stderr)
                continue
            query = Query(session.last.question, anyway=True)
        try:
            answer_to_terminal(session.stream(query))
        except BadInput as exc:
            print(f"rag: {exc}", file=sys.stderr)
        except Exception as exc:  # the store or a server went away: this question fails, the conversation goes on
            if os.environ.get("RAG_DEBUG"):
                raise
            reason = terminal_safe(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            print(f"rag: not answered ({reason}); ask again once it is back", file=sys.stderr)
