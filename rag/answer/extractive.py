"""The extractive answer: verbatim sentences of the retrieved abstracts, each with its citation. No LLM.

Sentences are chosen by their relevance to the question (rag/answer/relevance.py). The top abstract contributes its key
sentences (see key_sentences). The best sentence of a further abstract joins only when it addresses the question
nearly as well (within `margin` of the best), which keeps single-paper answers to one paper and lets questions
about several papers cite each of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.answer.relevance import CONTRIBUTION
from rag.answer.sources import Source

if TYPE_CHECKING:
    import numpy as np

    from rag.answer.relevance import Question


CUE_BONUS = 0.08


def sentence_scores(source: Source, question: Question) -> np.ndarray:
    """Relevance of each sentence to the question (rag/answer/relevance.py), plus a small bonus for contribution
    statements."""
    import numpy as np

    if source.vectors is None:
        raise ValueError("sources must be prepared by the verifier first")
    cues = np.array([CUE_BONUS if CONTRIBUTION.search(s) else 0.0 for s in source.sentences])
    return question.relevance(source.sentences, source.vectors) + cues


def answering_scores(source: Source, question: Question) -> np.ndarray:
    """sentence_scores with the best few re-read by the question's reader: which sentence of the abstract answers."""
    return question.reread(source.sentences, sentence_scores(source, question))


def key_sentences(source: Source, question: Question, margin: float) -> list[int]:
    """Indices, in abstract order, of the sentence that best answers the question and of the best one that
    states the abstract's contribution ("we propose X", which names the method most questions are after) or gives
    what the question asks for (a name, a number), or failing that, the runner-up when it is within the margin.
    A quantity question gets the two best sentences that state a number, those of the kind it asks for first (a
    percentage for a share): the aim and background sentences that resemble it most state none."""
    scores = answering_scores(source, question)
    order = [int(i) for i in scores.argsort()[::-1]]
    sentences = source.sentences
    answers = [i for i in order if question.gives_answer_type(sentences[i])]
    if question.terms.answer_type == "quantity" and len(answers) > 1:
        answers.sort(key=lambda i: not question.terms.states_unit(sentences[i]))  # stable: by score within each
        return sorted(answers[:2])
    picks = order[:1]
    claims = [i for i in answers if i != picks[0]] or [i for i in order[1:] if CONTRIBUTION.search(sentences[i])]
    if claims:
        picks.append(claims[0])
    elif len(order) > 1 and scores[order[1]] >= margin * scores[order[0]]:
        picks.append(order[1])
    return sorted(picks)


def extractive_answer(
    sources: list[Source],
    question: Question,
    max_sentences: int = 4,
    margin: float = 0.9,
) -> str:
    """The top abstract's key sentences, then the best sentence of each further abstract that addresses the question
    nearly as well (its best sentence and its term coverage within `margin` of the top abstract's, or a wider margin
    for a question about several papers), most relevant first, up to `max_sentences`; each ends with its [n]. ''
    when there are no sources; the sources must be prepared."""
    if not sources:
        return ""
    top = sources[0]
    picks = [(top.n, i) for i in key_sentences(top, question, margin)]
    best = float(sentence_scores(top, question).max())
    coverage = question.coverage(top.abstract)
    others = []
    for source in sources[1:]:
        scores = sentence_scores(source, question)
        near = question.margin(margin)
        if scores.max() >= near * best and question.coverage(source.abstract) >= near * coverage:
            others.append((float(scores.max()), source.n, int(question.reread(source.sentences, scores).argmax())))
    picks += [(n, i) for _, n, i in sorted(others, reverse=True)][: max(max_sentences - len(picks), 0)]
    by_n = {s.n: s for s in sources}
    return " ".join(f"{by_n[n].sentences[i].strip()} [{n}]" for n, i in picks)


def extractive_summary(sources: list[Source], topic: Question) -> str:
    """Themes: the two sentences most relevant to the topic; Contributions: each other abstract's most relevant
    sentence."""
    themes = sorted(best_sentences(sources, topic), reverse=True)[:2]
    by_n = {s.n: s for s in sources}
    lines = [f"{by_n[n].sentences[i].strip()} [{n}]" for _, n, i in themes]
    lines[0] = f"Themes: {lines[0]}"
    themed = {n for _, n, _ in themes}
    rest = contributions([s for s in sources if s.n not in themed], topic)
    return " ".join([*lines, rest] if rest else lines)


def contributions(sources: list[Source], topic: Question) -> str:
    """'Contributions:' and each abstract's sentence closest to the topic, cited, in source order ('' for none)."""
    best = best_sentences(sources, topic)
    lines = [f"{s.sentences[i].strip()} [{s.n}]" for s, (_, _, i) in zip(sources, best, strict=True)]
    return f"Contributions: {' '.join(lines)}" if lines else ""


def best_sentences(sources: list[Source], topic: Question) -> list[tuple[float, int, int]]:
    """(score, source n, sentence index) of each source's sentence most relevant to the topic."""
    best = []
    for source in sources:
        scores = sentence_scores(source, topic)
        best.append((float(scores.max()), source.n, int(scores.argmax())))
    return best
