"""The library service: what is indexed, finding papers, and adding files. The CLI, the web app and the evaluation
harness go through it instead of reaching into the store, the keyword index or the retriever.

Models load on first need: `stats()` and `papers()` read the index without them, so `rag stats` stays instant.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.index import stores
from rag.index.keywords import paper_counts, read_manifest
from rag.records import Paper, Query, SearchResult
from rag.settings import Settings
from rag.text import check_question
from rag.tracing import span

if TYPE_CHECKING:
    import numpy as np

    from rag.index.doctor import Checkup
    from rag.index.embedder import AnyEmbedder
    from rag.index.ingest import IngestReport, Progress, RemoveReport
    from rag.index.migrate import MigrateReport
    from rag.index.retriever import Retriever

QUERY_CACHE = 64  # recent questions whose vectors are kept: each request embeds its question once


class Library:
    def __init__(self, settings: Settings, embedder: AnyEmbedder | None = None) -> None:
        self.settings = settings
        self._given_embedder = embedder
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self.query_vector = lru_cache(maxsize=QUERY_CACHE)(self._embed_query)

    # ----- models --------------------------------------------------------------------------------------------
    @property
    def retriever(self) -> Retriever:
        """The retriever with its models and indexes, loaded on first use (BadInput when the index is empty)."""
        with self._lock:
            if self._retriever is None:
                from rag.index.retriever import Retriever

                self._retriever = Retriever(self.settings, self._given_embedder)
            return self._retriever

    @property
    def embedder(self) -> AnyEmbedder:
        return self.retriever.embedder

    def _embed_query(self, text: str) -> np.ndarray:
        """The question's vector (use `query_vector`, which remembers recent questions)."""
        return self.embedder.embed_query(text)

    # ----- reading -------------------------------------------------------------------------------------------
    def search(self, query: Query | str) -> list[SearchResult]:
        """The abstracts that best match a query (a plain question: the configured k, no filters, hybrid)."""
        query = Query.of(query)
        with span("rag.search", mode=query.mode, k=query.k or self.settings.top_k):
            question = check_question(query.text, self.settings.max_question_chars)  # before any model loads
            return self.retriever.search(query, self.query_vector(question))

    def fused(self, rankings: list[list[SearchResult]], k: int) -> list[SearchResult]:
        """Several rankings of abstracts (the searches for a question and its rewrites) as one, by reciprocal-rank
        fusion (RAG_RRF_K), each ranking counting the same; the top k."""
        from rag.index.fusion import fuse

        ranked = fuse(rankings, (1.0,) * len(rankings), self.settings.rrf_k)[:k]  # type: ignore[arg-type]
        return [replace(result, rank=rank, score=score) for rank, (result, score) in enumerate(ranked, start=1)]

    def term_weights(self, question: str) -> dict[str, float]:
        """The question's words with their rarity in the index (BM25's idf), for relevance scores."""
        return self.retriever.term_weights(question)

    def abstracts(self, doc_ids: list[str]) -> dict[str, str]:
        """Each document's whole abstract."""
        return self.retriever.chunks.get_abstracts(doc_ids)

    def records(self, doc_ids: list[str]) -> list[Paper]:
        """The indexed papers with these ids, in that order (unknown ids left out): for exporting references."""
        chunks = stores.open_store(self.settings, create=False)
        return chunks.get_papers(list(dict.fromkeys(doc_ids))) if chunks is not None else []

    def references(self, doc_ids: list[str], kind: str) -> str:
        """These papers as references to import into a reference manager: "bibtex", "ris" or "csl-json"."""
        from rag.corpus.references import export

        return export(self.records(doc_ids), kind)

    def missing(self, doc_ids: Iterable[str]) -> list[str]:
        """The ones of these document ids that are not indexed, in the order given."""
        wanted = list(dict.fromkeys(doc_ids))
        chunks = stores.open_store(self.settings, create=False)
        indexed = chunks.stored_docs(wanted) if chunks is not None else {}
        return [doc for doc in wanted if doc not in indexed]

    def papers(
        self, venue: str | None = None, year: int | None = None, author: str | None = None
    ) -> list[dict[str, Any]]:
        """One row per indexed abstract (doc_id, venue, year, title, authors, opening text), optionally filtered
        (`author`: any part of an author's name, any case)."""
        chunks = stores.open_store(self.settings, create=False)
        rows = chunks.list_papers() if chunks is not None else []
        name = (author or "").lower()
        return [r for r in rows if (not venue or r["venue"] == venue) and (not year or r["year"] == year)
                and name in r["authors"].lower()]  # fmt: skip

    def stats(self) -> dict[str, Any]:
        """What is indexed: counts of abstracts and chunks, venues and years (no model is loaded)."""
        settings = self.settings
        found = stores.open_store(settings, create=False)
        chunks = found.count() if found is not None else 0
        manifest = None if found is None or found.searches_itself else read_manifest(settings.keyword_dir)
        if found is not None and chunks and (manifest is None or manifest["chunks"] != chunks):
            manifest = paper_counts(found.list_papers())  # no local manifest, or it is stale or damaged: count afresh
        manifest = manifest or {"docs": 0, "venues": {}, "years": {}}
        return {
            "store": stores.location(settings),
            "collection": settings.collection,
            "abstracts": manifest["docs"] if chunks else 0,
            "chunks": chunks,
            "venues": manifest["venues"] if chunks else {},
            "years": manifest["years"] if chunks else {},
            "embedding_model": settings.embedding_model or "all-MiniLM-L6-v2 (bundled)",
            "verifier_model": judge_model(settings),
        }

    # ----- writing -------------------------------------------------------------------------------------------
    def add(
        self, paths: Iterable[str | Path], progress: Progress | None = None, sync: bool = False, rebuild: bool = False
    ) -> IngestReport:
        """Ingest corpus files (with `sync`, also remove the papers none of them holds; with `rebuild`, drop the
        whole index first); searches made afterwards see the change."""
        from rag.index.ingest import ingest

        report = ingest(paths, self.settings, progress, sync, rebuild)
        self._refresh()
        return report

    def remove(self, doc_ids: Iterable[str]) -> RemoveReport:
        """Take papers out of the index."""
        from rag.index.ingest import remove

        report = remove(doc_ids, self.settings)
        self._refresh()
        return report

    def migrate_to(self, destination: Settings, progress: Progress | None = None) -> MigrateReport:
        """Copy this index into another store (`destination`: its settings), keeping ids, texts, metadata and
        vectors (`rag migrate`)."""
        from rag.index.migrate import migrate

        return migrate(self.settings, destination, progress)

    def checkup(self, repair: bool = False, progress: Progress | None = None) -> Checkup:
        """`rag doctor`: check the index end to end; with `repair`, mend what the index itself can rebuild."""
        from rag.index.doctor import examine

        checkup = examine(self.settings, repair, progress)
        if repair:
            self._refresh()
        return checkup

    def _refresh(self) -> None:
        if self._retriever is not None:
            self._retriever.refresh()


def judge_model(settings: Settings) -> dict | None:
    """The judge model RAG_VERIFIER_MODEL names, as recorded beside the index when it was used (its folder,
    checksum, labels and precision: rag/answer/nli.py); None for the shipped one, and until the folder named is
    first used with this index (the record is of another folder, or there is none)."""
    import json

    if settings.verifier_model is None:
        return None
    try:
        record = json.loads((settings.data_dir / "verifier.json").read_text())
    except (OSError, ValueError):
        return None
    same = isinstance(record, dict) and record.get("path") == str(settings.verifier_model.resolve())
    return record if same else None
