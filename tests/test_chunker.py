"""The chunker: whole sentences, spans that reproduce the text exactly, bounded size, overlap."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from conftest import SEEDS

from rag.corpus.chunker import chunk_paper
from rag.corpus.loaders import load_corpus
from rag.records import Paper
from rag.sentences import sentence_spans


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    return load_corpus([SEEDS]).papers


@pytest.mark.parametrize(("size", "overlap"), [(300, 0), (700, 1), (1200, 2)])
def test_chunks_reproduce_the_abstract_and_keep_whole_sentences(papers: list[Paper], size: int, overlap: int) -> None:
    for paper in papers:
        spans = sentence_spans(paper.abstract)
        starts, ends = {s for s, _ in spans}, {e for _, e in spans}
        chunks = chunk_paper(paper, size, overlap)
        assert [c.index for c in chunks] == list(range(len(chunks)))
        covered = set()
        for chunk in chunks:
            assert paper.abstract[chunk.start : chunk.end] == chunk.text
            assert chunk.start in starts and chunk.end in ends  # whole sentences only
            n_sentences = sum(1 for s, e in spans if chunk.start <= s and e <= chunk.end)
            assert len(chunk.text) <= size or n_sentences == 1
            covered.update(i for i, (s, e) in enumerate(spans) if chunk.start <= s and e <= chunk.end)
        assert covered == set(range(len(spans)))  # nothing is lost


def test_consecutive_chunks_share_the_overlap(papers: list[Paper]) -> None:
    paper = max(papers, key=lambda p: len(p.abstract))
    chunks = chunk_paper(paper, 400, 1)
    assert len(chunks) >= 3
    for before, after in itertools.pairwise(chunks):
        assert after.start > before.start
        single_sentence = len([s for s in sentence_spans(paper.abstract) if before.start <= s[0] < before.end]) == 1
        assert after.start < before.end or single_sentence  # the last sentence is shared


def test_abbreviations_do_not_split_sentences() -> None:
    text = "We compare e.g. SAM and AT on CIFAR-10. The gain is 3.5 points, i.e. large. Smith et al. Agree."
    spans = sentence_spans(text)
    assert text[spans[0][0] : spans[0][1]] == "We compare e.g. SAM and AT on CIFAR-10."
    assert len(spans) == 3


def test_a_single_long_sentence_is_one_chunk() -> None:
    paper = Paper(doc_id="x", abstract="word " * 400 + "end.")
    (chunk,) = chunk_paper(paper, 200, 1)
    assert chunk.text == paper.abstract.strip() or chunk.text == paper.abstract


def test_punkt_loads_without_all_of_nltk_and_leaves_nltk_whole() -> None:
    """Splitting sentences must not import nltk's package init (scipy.stats and the rest: about 2 s of every cold
    start), and a later `import nltk` must still get the whole package. In a fresh interpreter, as a cold start."""
    code = (
        "import sys\n"
        "from rag.sentences import sentence_spans\n"
        "print(sentence_spans('We compare e.g. SAM and AT. Dr. Smith agrees.'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy')))\n"
        "import nltk\n"
        "print(callable(nltk.word_tokenize), 'nltk.chunk' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[(0, 27), (28, 45)]", "[]", "True True"]
