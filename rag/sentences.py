"""Sentences: where they start and end (Punkt's English model, from the copy llama-index ships; no download), and
how answers are split into sentences, also while they stream. One definition for the chunker, the verifier, the
answerer and the presenters."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rag.packages import package_folder
from rag.text import LEADING_MARKERS

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktTokenizer

_LOADING = threading.Lock()


@cache
def _punkt() -> PunktTokenizer:
    """Punkt's English model from the copy llama-index ships, loaded without importing llama-index (seconds) and,
    where possible, without nltk's package init: that init imports most of nltk (scipy.stats among it), about 2 s
    of every cold `rag ask` and `rag ingest`, for one tokenizer."""
    llama_index = package_folder("llama_index.core")
    assert llama_index is not None, "llama-index-core is a dependency"
    data = llama_index / "_static" / "nltk_cache"
    with _LOADING:
        if "nltk" not in sys.modules:
            with _bare_nltk_packages():
                try:
                    return _english_punkt(data)
                except ImportError:  # a future nltk's punkt needs the package init: import it in full below
                    pass
        return _english_punkt(data)


def _english_punkt(data: Path) -> PunktTokenizer:
    import nltk.data
    from nltk.tokenize.punkt import PunktTokenizer

    if str(data) not in nltk.data.path:
        nltk.data.path.append(str(data))
    return PunktTokenizer("english")


@contextmanager
def _bare_nltk_packages() -> Iterator[None]:
    """Empty stand-ins for the `nltk` and `nltk.tokenize` packages, so that their modules import without the
    packages' init. They and every nltk module imported under them leave sys.modules afterwards (the objects made
    meanwhile keep working), so a later `import nltk` anywhere gets the whole package."""
    folder = package_folder("nltk")
    assert folder is not None, "nltk is a dependency of llama-index-core"
    for name, path in (("nltk", folder), ("nltk.tokenize", folder / "tokenize")):
        package = sys.modules[name] = ModuleType(name)
        package.__path__ = [str(path)]
    try:
        yield
    finally:
        for name in [m for m in sys.modules if m == "nltk" or m.startswith("nltk.")]:
            del sys.modules[name]


# Abbreviations after which Punkt's English model still ends a sentence; scientific prose is full of them.
ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "cf.", "fig.", "eq.", "approx.", "resp.", "w.r.t.")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences in text (whitespace between sentences excluded)."""
    spans: list[tuple[int, int]] = []
    for start, end in _punkt().span_tokenize(text):
        if spans and text[spans[-1][0] : spans[-1][1]].lower().endswith(ABBREVIATIONS):
            spans[-1] = (spans[-1][0], end)
        elif text[start:end].strip():
            spans.append((start, end))
    return spans


def split_sentences(text: str) -> list[str]:
    """Sentences with their trailing citation markers attached ('... works. [1]' stays one sentence)."""
    out: list[str] = []
    for a, b in sentence_spans(text):
        piece = text[a:b].strip()
        lead = LEADING_MARKERS.match(piece)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(1).strip()}"
            piece = lead.group(2).strip()
        if piece:
            out.append(piece)
    return out


def whole_sentences(text: str, chars: int) -> str:
    """The leading sentences of text that fit in about `chars` characters (at least one)."""
    kept = ""
    for _, end in sentence_spans(text):
        if kept and end > chars:
            break
        kept = text[:end]
    return kept or text


def sentences_as_they_complete(tokens: Iterator[str], on_token: Callable[[str], Any]) -> Iterator[str]:
    """Group a token stream into sentences; a sentence is complete once the next one has begun."""
    buffer = ""
    for token in tokens:
        on_token(token)
        buffer += token
        parts = split_sentences(buffer)
        if len(parts) > 1 and parts[-1][:1].isalpha():  # the next sentence has begun: the others are complete
            yield from parts[:-1]
            buffer = parts[-1] + (" " if buffer[-1:].isspace() else "")  # "SAM " + "can", not "SAMcan"
    yield from split_sentences(buffer)


def lines_as_they_complete(tokens: Iterator[str], on_token: Callable[[str], Any]) -> Iterator[str]:
    """Group a token stream into its non-empty lines; a line is complete once the next one has begun."""
    buffer = ""
    for token in tokens:
        on_token(token)
        buffer += token
        *complete, buffer = buffer.split("\n")
        yield from (line.strip() for line in complete if line.strip())
    if buffer.strip():
        yield buffer.strip()
