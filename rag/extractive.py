"""The extractive answer: verbatim sentences of the retrieved abstracts, each with its citation. No LLM.

The top abstract contributes its key sentences (see key_sentences). The best sentence of a further abstract joins
only when it is nearly as close to the question (within `margin` of the best), which keeps single-paper answers
to one paper and lets questions about several papers cite each of them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rag.verifier import Source

if TYPE_CHECKING:
    import numpy as np

    from rag.embedder import Embedder


# Sentences where an abstract states its own contribution answer "what/which/how" questions best.
CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work|study))\s+(\w+\s+)?(propose|introduce|present|develop|design|show|prove|find|"
    r"demonstrate|call|term|dub|give)\w*|\b(called|dubbed|termed|named)\b",
    re.IGNORECASE,
)
CUE_BONUS = 0.08


def sentence_scores(source: Source, query_vector) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Similarity of each sentence to the query, plus a small bonus for contribution statements."""
    import numpy as np

    if source.vectors is None:
        raise ValueError("sources must be prepared by the verifier first")
    cues = np.array([CUE_BONUS if CONTRIBUTION.search(s) else 0.0 for s in source.sentences])
    return source.vectors @ query_vector + cues


def key_sentences(source: Source, query_vector, margin: float) -> list[int]:  # type: ignore[no-untyped-def]
    """Indices, in abstract order, of the sentence closest to the query and of the abstract's own statement of
    its contribution ("we propose X", which names the method most questions are after) or, failing that, the
    runner-up when it is within the margin."""
    scores = sentence_scores(source, query_vector)
    order = [int(i) for i in scores.argsort()[::-1]]
    picks = order[:1]
    claims = [i for i in order[1:] if CONTRIBUTION.search(source.sentences[i])]
    if claims:
        picks.append(claims[0])
    elif len(order) > 1 and scores[order[1]] >= margin * scores[order[0]]:
        picks.append(order[1])
    return sorted(picks)


def extractive_answer(
    question: str,
    sources: list[Source],
    embedder: Embedder,
    max_sentences: int = 4,
    margin: float = 0.9,
) -> str:
    """Sentences in source order, each ending with its [n]; '' when there are no sources."""
    if not sources:
        return ""
    q = embedder.embed_query(question)
    top = sources[0]
    picks = [(top.n, i) for i in key_sentences(top, q, margin)]
    best = float(sentence_scores(top, q).max())
    for source in sources[1:]:
        scores = sentence_scores(source, q)
        if scores.max() >= margin * best and len(picks) < max_sentences:
            picks.append((source.n, int(scores.argmax())))
    by_n = {s.n: s for s in sources}
    return " ".join(f"{by_n[n].sentences[i].strip()} [{n}]" for n, i in picks)


def extractive_summary(topic: str, sources: list[Source], embedder: Embedder) -> str:
    """Themes: the two sentences closest to the topic; Contributions: each abstract's sentence closest to it."""
    q = embedder.embed_query(topic)
    best: list[tuple[float, int, int]] = []  # (score, source n, sentence index)
    for source in sources:
        scores = sentence_scores(source, q)
        best.append((float(scores.max()), source.n, int(scores.argmax())))
    by_n = {s.n: s for s in sources}
    themes = sorted(best, reverse=True)[:2]
    theme_keys = {(n, i) for _, n, i in themes}
    lines = [f"Themes: {by_n[n].sentences[i].strip()} [{n}]" if j == 0 else f"{by_n[n].sentences[i].strip()} [{n}]"
             for j, (_, n, i) in enumerate(themes)]  # fmt: skip
    contributions = [(n, i) for _, n, i in sorted(best, key=lambda b: b[1]) if (n, i) not in theme_keys]
    for j, (n, i) in enumerate(contributions):
        prefix = "Contributions: " if j == 0 else ""
        lines.append(f"{prefix}{by_n[n].sentences[i].strip()} [{n}]")
    return " ".join(lines)
