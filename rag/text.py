"""Text conventions shared by every stage: citation markers, question checks, text as stored and shown, and how a
paper's venue and year are shown. One definition each, so that the verifier, the answerer, the chat and the
presenters cannot drift apart."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from pathlib import Path

from rag.errors import BadInput

# A citation marker: [1], [1, 3] or [2; 4]. Answers carry them inline; citation numbers count from 1.
MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
LEADING_MARKERS = re.compile(r"^((?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]\s*)+)(.*)$", re.S)


class EmptyInput(BadInput):
    """A question or topic with nothing in it (presenters may word this their own way)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"the {what} is empty")
        self.what = what


def check_question(text: str, limit: int, what: str = "question") -> str:
    """The stripped question, or BadInput when it is empty or longer than `limit` characters."""
    text = text.strip()
    if not text:
        raise EmptyInput(what)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: bytes that were not UTF-8, smuggled through argv or stdin
        raise BadInput(f"the {what} is not valid text (it holds bytes that are not UTF-8)") from None
    if len(text) > limit:
        raise BadInput(f"the {what} has {len(text)} characters; the limit is {limit} (RAG_MAX_QUESTION_CHARS)")
    return text


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 and C1 controls but tab and newline


# Invisible formatting characters that no abstract needs and that can hide or reorder text (bidirectional overrides
# as in "Trojan Source", zero-width spaces splitting a word to slip past a filter, soft hyphens, byte-order marks).
# The zero-width (non-)joiners stay: some scripts need them.
INVISIBLE = re.compile("[\u00ad\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def stored_text(text: str) -> str:
    """Corpus text as it is stored: without control and invisible formatting characters (removed before chunking,
    so the character offsets of chunks and citations refer to the text as stored and shown)."""
    return INVISIBLE.sub("", CONTROL.sub("", text))


def terminal_safe(text: str) -> str:
    """Text from a corpus or a model without control characters, so that printing it cannot drive the terminal
    (an abstract holding ESC ] 0; ... BEL would retitle it)."""
    return CONTROL.sub("", text)


# What markdown_text writes for the characters that would otherwise be markup: HTML's as entities, the rest of ASCII
# punctuation backslash-escaped (CommonMark: any of them may be), so that no emphasis, link, image, autolink
# (http://, www., an e-mail address), code span, table, HTML tag or math delimiter can form from the text.
MARKDOWN_ESCAPES = {c: f"\\{c}" for c in string.punctuation} | {"<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;"}


def markdown_text(text: str) -> str:
    """Text to be shown as itself where Markdown is rendered (the web app, a Markdown export): the one rule for
    putting stored or typed text into Markdown."""
    return text.translate(str.maketrans(MARKDOWN_ESCAPES))


# An absolute path (not a url's path): what is left of it in a message to a client is its last part.
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[^\s/:'\"]+/)+(?=[^\s/:'\"]*)")


def private(message: str, data_dir: Path | None = None) -> str:
    """A message for a client of a server (the API, the web app): files named relative to the data directory, no
    other server path."""
    for folder in {data_dir.resolve(), data_dir.absolute()} if data_dir else ():
        message = message.replace(f"{folder}/", "").replace(str(folder), "the data directory")
    return ABSOLUTE_PATH.sub("", message)


def web_url(url: str | None) -> str | None:
    """The url when it is an http(s) link; a javascript: or data: url from a corpus never becomes a link."""
    return url if url and re.match(r"https?://", url, re.IGNORECASE) else None


def where(venue: str | None, year: int | str | None) -> str:
    """How a paper's venue and year are shown: 'ICML 2024', 'ICML', '2024' or ''."""
    return " ".join(str(x) for x in (venue, year) if x)


def split_markers(sentence: str) -> tuple[str, list[int]]:
    """The sentence without [n] markers, and the cited numbers in order of first appearance."""
    cited: list[int] = []
    for group in MARKER.findall(sentence):
        cited.extend(int(x) for x in re.split(r"\s*[,;]\s*", group))
    text = MARKER.sub("", sentence)
    text = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
    return text, list(dict.fromkeys(cited))


QUOTED = re.compile(r"^(?P<sentence>.*?\S)\s*\|\s*[\"“](?P<quote>.+?)[\"”]?\s*$", re.S)


def split_quote(line: str) -> tuple[str, str | None]:
    """A line of a quoted answer, 'A sentence [2] | "the words of source 2"', as (sentence, quote); a line without
    the quoted words is (line, None)."""
    found = QUOTED.match(line.strip())
    return (found["sentence"], found["quote"].strip()) if found else (line.strip(), None)


def replace_markers(text: str, replace: Callable[[int], str]) -> str:
    """Every citation marker replaced by replace(n) for each number it cites: [1, 3] -> replace(1) + replace(3)."""
    return MARKER.sub(lambda m: "".join(replace(int(n)) for n in re.split(r"\s*[,;]\s*", m.group(1))), text)


def byline(authors: tuple[str, ...]) -> str:
    """The first authors' family names: "Müller, Ødegård and Ñúñez", "Müller et al."."""
    names = [a.split(",")[0].strip() for a in authors]
    if len(names) > 3:
        return f"{names[0]} et al."
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
