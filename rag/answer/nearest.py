"""What a refusal shows: the abstracts that came closest to the question, clearly not as support, each with its
sentence closest to the question and words from it that the question did not use (to ask again in the papers'
own words)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rag.records import NearestPaper
from rag.terms import WORD, tokenize

if TYPE_CHECKING:
    import numpy as np

    from rag.answer.sources import Source

NEAREST = 3  # papers shown with a refusal
NEAREST_POOL = 100  # chunks each half of the search looks at for them (the answer's search: RAG_CANDIDATES, 50)
TERMS = 4  # words to try, per paper


def nearest_papers(
    question: str, vector: np.ndarray, sources: list[Source], weights: Callable[[str], dict[str, float]]
) -> list[NearestPaper]:
    """Each source (its sentences embedded: `Verifier.prepare`) with its sentence closest to the question `vector`
    and the words of its title and abstract to try (`words_to_try`; `weights`: the index's idf of a text's words)."""
    asked = set(tokenize([question])[0])
    papers = []
    for source in sources:
        assert source.vectors is not None
        sentence = source.sentences[int((source.vectors @ vector).argmax())].strip()
        terms = words_to_try(f"{source.title or ''} {source.checkable}", asked, weights)
        papers.append(NearestPaper(source.doc_id, source.title, source.venue, source.year, source.url, sentence, terms))
    return papers


def words_to_try(text: str, asked: set[str], weights: Callable[[str], dict[str, float]]) -> list[str]:
    """The words of the paper that the question does not use, as the paper writes them: those it repeats and the
    index rarely holds first (count times idf), so its topic comes before its rare asides."""
    weight = weights(text)
    words = [w.strip("-") for w in WORD.findall(text)]
    candidates = list(dict.fromkeys(w for w in words if len(w) >= 4))
    stem_of = {w: stems[0] for w, stems in zip(candidates, tokenize(candidates), strict=True) if stems}
    counts: dict[str, int] = {}
    written: dict[str, str] = {}
    for word in words:
        stem = stem_of.get(word)
        if stem and stem not in asked:
            counts[stem] = counts.get(stem, 0) + 1
            written.setdefault(stem, word if any(c.isupper() for c in word[1:]) else word.lower())
    ranked = sorted(counts, key=lambda stem: -counts[stem] * weight.get(stem, 0.0))
    return [written[stem] for stem in ranked[:TERMS]]
