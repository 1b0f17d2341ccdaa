"""Paper -> sentence-window chunks that remember their character span in the abstract.

Sentences come from the Punkt model that llama-index bundles (no download). A chunk is a run of whole sentences of
roughly `size` characters; consecutive chunks share `overlap` sentences, so a claim that straddles two sentences
is still quotable from one chunk.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from rag.records import Chunk, Paper


@cache
def _punkt():  # type: ignore[no-untyped-def]
    """Punkt's English model from the copy llama-index ships, loaded without importing llama-index (seconds)."""
    import importlib.util

    import nltk
    from nltk.tokenize.punkt import PunktTokenizer

    spec = importlib.util.find_spec("llama_index.core")
    assert spec is not None and spec.submodule_search_locations, "llama-index-core is a dependency"
    data = Path(next(iter(spec.submodule_search_locations))) / "_static" / "nltk_cache"
    if str(data) not in nltk.data.path:
        nltk.data.path.append(str(data))
    return PunktTokenizer("english")


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
