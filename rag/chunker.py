"""Paper -> sentence-window chunks that remember their character span in the abstract.

Sentences come from the Punkt model that llama-index bundles (no download). A chunk is a run of whole sentences of
roughly `size` characters; consecutive chunks share `overlap` sentences, so a claim that straddles two sentences
is still quotable from one chunk.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rag.packages import package_folder
from rag.records import Chunk, Paper

if TYPE_CHECKING:
    from collections.abc import Iterator

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


def chunk_paper(paper: Paper, size: int, overlap: int) -> list[Chunk]:
    spans = sentence_spans(paper.abstract) or [(0, len(paper.abstract))]
    chunks: list[Chunk] = []
    first = 0
    while True:
        last = first
        while last + 1 < len(spans) and spans[last + 1][1] - spans[first][0] <= size:
            last += 1
        start, end = spans[first][0], spans[last][1]
        chunks.append(Chunk(paper.doc_id, len(chunks), start, end, paper.abstract[start:end]))
        if last + 1 >= len(spans):
            return chunks
        first = max(last + 1 - overlap, first + 1)
