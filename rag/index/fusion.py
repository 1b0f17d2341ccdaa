"""Rankings of chunks -> one ranking of abstracts: each ranking collapsed to its abstracts' best chunks, then fused
by weighted reciprocal rank. Shared by the retriever (over Chroma and the local keyword index) and the Milvus
store, so both stores fuse alike."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hit", "collapse", "fuse"]


@dataclass
class Hit:
    chunk_id: str
    doc_id: str
    score: float


def collapse(hits: list[Hit]) -> list[Hit]:
    """Keep each abstract's best-ranked chunk, in rank order."""
    seen: dict[str, Hit] = {}
    for hit in hits:
        seen.setdefault(hit.doc_id, hit)
    return list(seen.values())


def fuse(rankings: list[list[Hit]], weights: tuple[float, ...], rrf_k: int) -> list[tuple[Hit, float]]:
    """Weighted reciprocal-rank fusion of abstract rankings; the representative chunk is the one of the
    ranking that contributes most to the abstract's score."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[float, Hit]] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, hit in enumerate(ranking, start=1):
            contribution = weight / (rrf_k + rank)
            scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + contribution
            if hit.doc_id not in best or contribution > best[hit.doc_id][0]:
                best[hit.doc_id] = (contribution, hit)
    ordered = sorted(scores, key=lambda doc_id: -scores[doc_id])
    return [(best[doc_id][1], scores[doc_id]) for doc_id in ordered]
