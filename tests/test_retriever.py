"""Hybrid retrieval on the seed index: filters, one result per abstract, scores, and recall on the seeds set."""

from __future__ import annotations

import itertools

import pytest
from conftest import load_questions

from rag.errors import BadInput
from rag.index.fusion import Hit, fuse
from rag.records import Query


def test_recall_at_5_on_the_seeds_questions(seeds_retriever) -> None:
    questions = [q for q in load_questions() if q.get("answerable", True)]
    assert len(questions) >= 35
    recall = 0.0
    for q in questions:
        found = {r.doc_id for r in seeds_retriever.search(Query(q["question"], 5))}
        recall += len(found & set(q["gold"])) / len(q["gold"])
    assert recall / len(questions) >= 0.95


@pytest.mark.parametrize("mode", ["dense", "keyword", "hybrid"])
def test_each_mode_finds_an_obvious_paper(seeds_retriever, mode: str) -> None:
    results = seeds_retriever.search(Query("Sharpness-Aware Minimization adversarial robustness", 5, mode=mode))
    assert results[0].doc_id == "000_c1913070b188e76b#5"
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(results))


def test_one_result_per_abstract_with_its_text(seeds_retriever) -> None:
    results = seeds_retriever.search(Query("reinforcement learning policy", 20))
    assert len(results) == 20
    assert len({r.doc_id for r in results}) == 20
    for r in results:
        assert r.chunk_id.startswith(r.doc_id + "::") and r.text


def test_venue_and_year_filters(seeds_retriever) -> None:
    iclr = seeds_retriever.search(Query("adversarial robustness", 10, venue="iclr"))
    assert iclr and all(r.venue == "ICLR" for r in iclr)
    icml = seeds_retriever.search(Query("adversarial robustness", 10, venue="ICML", year=2024))
    assert icml and all(r.venue == "ICML" and r.year == 2024 for r in icml)
    assert {r.doc_id for r in iclr}.isdisjoint({r.doc_id for r in icml})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": "   "}, "empty"),
        ({"text": "x" * 2001}, "limit is 2000"),
        ({"text": "robustness", "venue": "NeurIPS"}, "unknown venue 'NeurIPS'; indexed venues: ICLR, ICML"),
        ({"text": "robustness", "year": 1999}, "1999"),
    ],
)
def test_bad_queries(seeds_retriever, kwargs: dict, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        seeds_retriever.search(Query(**kwargs))


def test_weighted_reciprocal_rank_fusion() -> None:
    dense = [Hit("a::0", "a", 0.9), Hit("b::1", "b", 0.8)]
    keyword = [Hit("b::0", "b", 7.0), Hit("c::0", "c", 5.0)]
    fused = fuse([dense, keyword], (1.0, 1.0), 60)
    assert [hit.doc_id for hit, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0][0].chunk_id == "b::0"  # the chunk from the ranking that placed b higher
    keyword_only = fuse([dense, keyword], (0.0, 1.0), 60)
    assert [hit.doc_id for hit, score in keyword_only if score > 0] == ["b", "c"]


def test_chunk_ids_are_made_and_read_in_one_place() -> None:
    from rag.records import Chunk, chunk_id, doc_of_chunk

    assert chunk_id("paper#1", 3) == "paper#1::3" == Chunk("paper#1", 3, 0, 1, "x").chunk_id
    assert doc_of_chunk(chunk_id("a::b", 12)) == "a::b"  # a document id may itself hold the separator
