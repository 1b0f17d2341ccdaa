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


# Sentences where an abstract states its own contribution answer "what/which/how" questions best.
CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work|study))\s+(\w+\s+)?(propose|introduce|present|develop|design|show|prove|find|"
    r"demonstrate|call|term|dub|give)\w*|\b(called|dubbed|termed|named)\b",
    re.IGNORECASE,
)
CUE_BONUS = 0.08


def sentence_scores(source: Source, query_vector: np.ndarray) -> np.ndarray:
    """Similarity of each sentence to the query, plus a small bonus for contribution statements."""
    import numpy as np

    if source.vectors is None:
        raise ValueError("sources must be prepared by the verifier first")
    cues = np.array([CUE_BONUS if CONTRIBUTION.search(s) else 0.0 for s in source.sentences])
    return source.vectors @ query_vector + cues


def key_sentences(source: Source, query_vector: np.ndarray, margin: float) -> list[int]:
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
    sources: list[Source],
    q: np.ndarray,
    max_sentences: int = 4,
    margin: float = 0.9,
) -> str:
    """Sentences in source order, each ending with its [n]; '' when there are no sources. `q` is the question's
    vector; the sources must be prepared by the verifier."""
    if not sources:
        return ""
    top = sources[0]
    picks = [(top.n, i) for i in key_sentences(top, q, margin)]
    best = float(sentence_scores(top, q).max())
    for source in sources[1:]:
        scores = sentence_scores(source, q)
        if scores.max() >= margin * best and len(picks) < max_sentences:
            picks.append((source.n, int(scores.argmax())))
    by_n = {s.n: s for s in sources}
    return " ".join(f"{by_n[n].sentences[i].strip()} [{n}]" for n, i in picks)


def extractive_summary(sources: list[Source], q: np.ndarray) -> str:
    """Themes: the two sentences closest to the topic (vector `q`); Contributions: each other abstract's sentence
    closest to it."""
    themes = sorted(best_sentences(sources, q), reverse=True)[:2]
    by_n = {s.n: s for s in sources}
    lines = [f"{by_n[n].sentences[i].strip()} [{n}]" for _, n, i in themes]
    lines[0] = f"Themes: {lines[0]}"
    themed = {n for _, n, _ in themes}
    rest = contributions([s for s in sources if s.n not in themed], q)
    return " ".join([*lines, rest] if rest else lines)


def contributions(sources: list[Source], q: np.ndarray) -> str:
    """'Contributions:' and each abstract's sentence closest to the topic, cited, in source order ('' for none)."""
    lines = [
        f"{s.sentences[i].strip()} [{s.n}]" for s, (_, _, i) in zip(sources, best_sentences(sources, q), strict=True)
    ]
    return f"Contributions: {' '.join(lines)}" if lines else ""


def best_sentences(sources: list[Source], q: np.ndarray) -> list[tuple[float, int, int]]:
    """(score, source n, sentence index) of each source's sentence closest to the topic."""
    best = []
    for source in sources:
        scores = sentence_scores(source, q)
        best.append((float(scores.max()), source.n, int(scores.argmax())))
    return best
