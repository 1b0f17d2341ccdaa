"""Question -> ranked abstracts: dense, keyword (BM25) or both fused by weighted reciprocal rank.

A store that searches itself (Milvus: rag/index/milvus.py) ranks and filters inside the store and collapses and
fuses its rankings itself; for Chroma, the retriever queries the collection for the dense ranking and the local
keyword index for BM25. Both fuse with rag/index/fusion.py.

Queries go to the Chroma collection directly rather than through llama-index's ChromaVectorStore: importing
llama-index costs two seconds of a cold `rag search`, and the query is a single call.

Each ranking is first collapsed to one entry per abstract (its best chunk), then the rankings are fused, so an
abstract with several matching chunks takes one place, not several. llama-index's QueryFusionRetriever fuses
chunks rather than abstracts and has no weights for reciprocal-rank fusion, hence the few lines of fusion.py.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from rag.errors import BadInput
from rag.index.fusion import Hit, collapse, fuse
from rag.index.keywords import Filters, KeywordIndex, read_manifest, rebuild_keyword_index
from rag.index.stores import ChunkStore, SearchingStore, open_store
from rag.records import Query, SearchResult, doc_of_chunk
from rag.settings import Settings
from rag.terms import weighed_words
from rag.text import check_question

log = logging.getLogger(__name__)
EMPTY_INDEX = "the index is empty: run `rag ingest PATH` first (for example `rag ingest seeds/`)"

if TYPE_CHECKING:
    from concurrent.futures import Future

    import numpy as np
    from chromadb.api.models.Collection import Collection

    from rag.index.embedder import AnyEmbedder


class Retriever:
    """Loads the models and indexes once; search() is then cheap (tens of milliseconds)."""

    def __init__(self, settings: Settings, embedder: AnyEmbedder | None = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.settings = settings
        with ThreadPoolExecutor(2) as pool:
            # Over a local index of the bundled model, the model loads while Chroma is imported and opened (its
            # session is made in C++, beside the import), at the precision this machine would choose. An index
            # recorded at another (made elsewhere, or before int8) loads it again at its own below.
            early = pool.submit(self._ready_embedder, None) if embedder is None and self._local_index() else None
            found = open_store(settings, create=False)
            precision = found.precision() if found is not None else None
            if found is None or precision is None:  # no precision recorded: nothing was ever stored
                raise BadInput(EMPTY_INDEX)
            self.chunks: ChunkStore = found
            # the store itself when it ranks and filters (Milvus); None when the retriever does, over Chroma
            self.searcher = cast("SearchingStore", found) if found.searches_itself else None
            # The first call into the collection loads it (1-2 s at 300,000 chunks): the keyword index and the
            # embedding model load meanwhile.
            keyword = None if self.searcher else pool.submit(KeywordIndex.load, settings.keyword_dir)
            model = pool.submit(self._ready_embedder, precision) if embedder is None and early is None else None
            chunks = found.count()
        if chunks == 0:
            raise BadInput(EMPTY_INDEX)
        self.keyword = self._checked_keyword_index(keyword.result(), chunks) if keyword else None
        if embedder is None:
            embedder = self._at_precision(early, precision) if early else model.result()  # type: ignore[union-attr]
        self.embedder = embedder

    def _local_index(self) -> bool:
        """Whether the data directory holds an embedded Chroma index with a keyword index beside it (something was
        ingested here), embedded here by the bundled model."""
        settings = self.settings
        local = settings.store == "chroma" and not settings.chroma_host
        bundled = not settings.embedding_model and not settings.embedding_base_url
        return local and bundled and read_manifest(settings.keyword_dir) is not None

    def _at_precision(self, early: Future[AnyEmbedder], precision: str) -> AnyEmbedder:
        """The model loaded early when it is at the index's precision; otherwise (or when it could not be loaded)
        the model loaded now at the index's own."""
        try:
            guess = early.result()
        except Exception:  # the index's own precision may load where the guess did not (if not, it says why)
            log.debug("rag: the embedding model could not be loaded early", exc_info=True)
        else:
            if guess.precision == precision:
                return guess
        return self._ready_embedder(precision)

    @property
    def collection(self) -> Collection:
        """The Chroma collection (the Chroma store only)."""
        return self.chunks.collection  # type: ignore[attr-defined]

    def _ready_embedder(self, precision: str | None) -> AnyEmbedder:
        from rag.index.embedder import Embedder
        from rag.index.models import embedder_for

        embedder = embedder_for(self.settings, precision)
        if isinstance(embedder, Embedder):
            _ = embedder.sessions  # made now rather than with the first query
        return embedder

    def _checked_keyword_index(self, keyword: KeywordIndex | None, chunks: int) -> KeywordIndex:
        """The keyword index as loaded, or rebuilt from the collection when it does not hold its `chunks` chunks."""
        if keyword is None and self.settings.keyword_dir.exists():
            log.warning("rag: the keyword index was damaged or incomplete; rebuilding it from the collection")
        if keyword is None or keyword.manifest["chunks"] != chunks:
            rebuild_keyword_index(self.chunks, self.settings)  # another process or machine changed it
            keyword = KeywordIndex.load(self.settings.keyword_dir)
        assert keyword is not None
        return keyword

    def refresh(self) -> None:
        """Pick up abstracts ingested since this retriever was created (a store that searches itself always has)."""
        if self.keyword is None:
            return
        on_disk = read_manifest(self.settings.keyword_dir) or {}
        rebuilt = on_disk.get("built") != self.keyword.manifest.get("built")
        chunks = self.chunks.count()
        if rebuilt or on_disk.get("chunks") != chunks:
            self.keyword = self._checked_keyword_index(KeywordIndex.load(self.settings.keyword_dir), chunks)

    @property
    def manifest(self) -> dict:
        """The local keyword index's manifest (the Chroma store only)."""
        assert self.keyword is not None
        return self.keyword.manifest

    def term_weights(self, question: str) -> dict[str, float]:
        """The question's words (as the keyword index tokenizes them, question words left out) with their idf."""
        if self.searcher:
            return self.searcher.term_weights(weighed_words(question))
        assert self.keyword is not None
        return self.keyword.term_weights(question)

    def search(self, query: Query | str, query_vector: np.ndarray | None = None) -> list[SearchResult]:
        """The k best abstracts, one result each. `query_vector` is the question's embedding when the caller
        already has it (it is computed here otherwise)."""
        query = Query.of(query)
        mode = query.mode
        question = check_question(query.text, self.settings.max_question_chars)
        filters = Filters(self.check_venue(query.venue), self.check_years(query.year, query.year_to), query.author)
        k = query.k or self.settings.top_k
        pool = max(self.settings.candidates, k)
        if query_vector is None:
            query_vector = self.embedder.embed_query(question)
        if self.searcher:
            hits, cosine = self.searcher.ranked(question, [float(x) for x in query_vector], mode, pool, k, filters)
            found = {chunk_id: (text, meta) for chunk_id, _, _, text, meta in hits}
            return self._results([(Hit(c, d, s), s) for c, d, s, _, _ in hits], cosine, found)
        dense = self._dense(query_vector, pool, filters) if mode != "keyword" else []
        keyword = self._keyword(question, pool, filters) if mode != "dense" else []
        dense, keyword = collapse(dense), collapse(keyword)
        if mode == "hybrid":
            weights = (self.settings.dense_weight, self.settings.keyword_weight)
            ranked = fuse([dense, keyword], weights, self.settings.rrf_k)
        else:  # a single ranking keeps its own scores (cosine similarity or BM25)
            ranked = [(hit, hit.score) for hit in dense or keyword]
        top = ranked[:k]
        cosine = {hit.doc_id: hit.score for hit in dense}
        if mode == "keyword" and top:  # the dense similarity of keyword hits still tells how relevant they are
            cosine = self._cosine_of([hit.doc_id for hit, _ in top], query_vector)
        return self._results(top, cosine, self.chunks.get_chunks([hit.chunk_id for hit, _ in top]))

    def check_venue(self, venue: str | None) -> str | None:
        if venue is None:
            return None
        if self.searcher:
            if (name := self.searcher.venue_named(venue)) is None:
                raise BadInput(f"unknown venue {venue!r}; `rag stats` lists the indexed venues")
            return name
        known = [v for v in self.manifest["venues"] if v != "unknown"]
        for name in known:
            if name.lower() == venue.strip().lower():
                return name
        raise BadInput(f"unknown venue {venue!r}; indexed venues: {', '.join(known) or 'none'}")

    def check_years(self, year: int | None, year_to: int | None) -> tuple[int, int] | None:
        """The years searched, inclusive (None: any); BadInput when no indexed abstract is from any of them."""
        if year is None and year_to is None:
            return None
        years = (year or 1, year_to or year or 9999) if year_to is not None else (year or 1, year or 9999)
        if years[0] > years[1]:
            raise BadInput(f"the year range {years[0]}-{years[1]} is empty")
        asked = str(years[0]) if years[0] == years[1] else f"{years[0]}-{years[1]}"
        if self.searcher:
            if not self.searcher.has_years(years):
                raise BadInput(f"no indexed abstract is from {asked}; `rag stats` lists the indexed years")
            return years
        known = [y for y in self.manifest["years"] if y != "unknown"]
        if not any(years[0] <= int(y) <= years[1] for y in known):
            raise BadInput(f"no indexed abstract is from {asked}; indexed years: {', '.join(known) or 'none'}")
        return years

    def _dense(self, query_vector: np.ndarray, pool: int, filters: Filters) -> list[Hit]:
        conditions: list[dict] = [{"venue": filters.venue}] if filters.venue else []
        if filters.years and filters.years[0] == filters.years[1]:
            conditions.append({"year": filters.years[0]})
        elif filters.years:
            conditions += [{"year": {"$gte": filters.years[0]}}, {"year": {"$lte": filters.years[1]}}]
        if filters.author:  # Chroma cannot match part of a string: the keyword index's arrays can
            assert self.keyword is not None
            authored = self.keyword.docs_by(filters.author)
            if not authored:
                return []
            conditions.append({"doc_id": {"$in": authored}})
        where = conditions[0] if len(conditions) == 1 else ({"$and": conditions} if conditions else None)
        found = self.collection.query(
            query_embeddings=[query_vector],
            n_results=pool,  # Chroma returns what there is; counting first cost 20 ms at 300,000 chunks
            where=where,
            include=["metadatas", "distances"],
        )
        return [
            Hit(chunk_id, str(meta["doc_id"]), 1.0 - distance)  # cosine distance -> similarity
            for chunk_id, meta, distance in zip(
                found["ids"][0], found["metadatas"][0], found["distances"][0], strict=True
            )
        ]

    def _cosine_of(self, doc_ids: list[str], query_vector: np.ndarray) -> dict[str, float]:
        found = self.collection.query(
            query_embeddings=[query_vector],
            n_results=len(doc_ids) * 8,
            where={"doc_id": {"$in": doc_ids}},
            include=["metadatas", "distances"],
        )
        best: dict[str, float] = {}
        for meta, distance in zip(found["metadatas"][0], found["distances"][0], strict=True):
            best.setdefault(str(meta["doc_id"]), 1.0 - distance)
        return best

    def _keyword(self, question: str, pool: int, filters: Filters) -> list[Hit]:
        assert self.keyword is not None
        return [
            Hit(chunk_id, doc_of_chunk(chunk_id), score)
            for chunk_id, score in self.keyword.search(question, pool, filters)
        ]

    @staticmethod
    def _results(
        fused: list[tuple[Hit, float]], cosine: dict[str, float], chunks: dict[str, tuple[str, dict]]
    ) -> list[SearchResult]:
        results = []
        for rank, (hit, score) in enumerate(fused, start=1):
            text, meta = chunks[hit.chunk_id]
            results.append(
                SearchResult(
                    rank=rank,
                    doc_id=hit.doc_id,
                    score=score,
                    text=text,
                    venue=meta.get("venue") or None,
                    year=int(meta["year"]) if meta.get("year") else None,
                    title=meta.get("title") or None,
                    chunk_id=hit.chunk_id,
                    dense_score=cosine.get(hit.doc_id),
                    metadata=meta,
                )
            )
        return results
