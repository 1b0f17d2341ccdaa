"""Paper -> sentence-window chunks that remember their character span in the abstract.

A chunk is a run of whole sentences (rag/sentences.py) of roughly `size` characters; consecutive chunks share
`overlap` sentences, so a claim that straddles two sentences is still quotable from one chunk.
"""

from __future__ import annotations

from rag.records import Chunk, Paper
from rag.sentences import sentence_spans


def chunk_paper(paper: Paper, size: int, overlap: int, spans: list[tuple[int, int]] | None = None) -> list[Chunk]:
    """`spans`: the abstract's sentence spans, when the caller has them already."""
    spans = (sentence_spans(paper.abstract) if spans is None else spans) or [(0, len(paper.abstract))]
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
