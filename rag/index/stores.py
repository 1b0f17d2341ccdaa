"""The store seam: where chunks, their vectors and their metadata are written and read (RAG_STORE).

Two engines sit behind one small interface, `ChunkStore`:
- chroma (default): embedded Chroma or a Chroma server (rag/index/store.py); the BM25 keyword index is a bm25s file
  kept per machine beside it (rag/index/keywords.py) and the retriever fuses the two rankings itself;
- milvus (rag/index/milvus.py): dense and BM25 search run inside Milvus (embedded milvus-lite, a Milvus server or
  a cluster), so nothing but caches is kept per machine and every replica sees every writer's papers.

Ingest, removal, the library and the doctor call only this interface; the retriever asks a store that
`searches_itself` to rank, and ranks Chroma's results with the local keyword index otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rag.index import store
from rag.index.store import StoredDoc
from rag.records import Paper
from rag.settings import Settings

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection
    from llama_index.core.schema import TextNode

    from rag.index.keywords import Filters


class ChunkStore(Protocol):
    searches_itself: bool  # dense and keyword search and their fusion run in the store (no local keyword index)

    def count(self) -> int: ...
    def precision(self) -> str | None: ...
    def record_precision(self, precision: str) -> None: ...
    def add(self, nodes: list[TextNode]) -> None: ...
    def delete_docs(self, doc_ids: list[str]) -> None: ...
    def stored_docs(self, doc_ids: list[str]) -> dict[str, StoredDoc]: ...
    def docs_with_pmids(self, pmids: list[str]) -> set[str]: ...
    def indexed_doc_ids(self) -> set[str]: ...
    def iter_chunks(self) -> Iterator[tuple[str, str, dict[str, Any]]]: ...
    def iter_vectors(self) -> Iterator[tuple[str, str, dict[str, Any], list[float]]]: ...
    def get_chunks(self, chunk_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]: ...
    def get_abstracts(self, doc_ids: list[str]) -> dict[str, str]: ...
    def get_papers(self, doc_ids: list[str]) -> list[Paper]: ...
    def list_papers(self) -> list[dict[str, Any]]: ...


class SearchingStore(ChunkStore, Protocol):
    """A store that ranks, filters and fuses itself (searches_itself): what the retriever asks of it."""

    def ranked(
        self, question: str, vector: list[float], mode: str, pool: int, k: int, filters: Filters
    ) -> tuple[list[tuple[str, str, float, str, dict[str, Any]]], dict[str, float]]: ...
    def venue_named(self, venue: str) -> str | None: ...
    def has_years(self, years: tuple[int, int]) -> bool: ...
    def term_weights(self, words: list[str]) -> dict[str, float]: ...


@dataclass
class ChromaStore:
    """Chroma behind the seam: the functions of rag/index/store.py on one collection."""

    collection: Collection
    searches_itself = False

    def count(self) -> int:
        return self.collection.count()

    def precision(self) -> str | None:
        return store.index_precision(self.collection)

    def record_precision(self, precision: str) -> None:
        store.record_precision(self.collection, precision)

    def add(self, nodes: list[TextNode]) -> None:
        store.vector_store(self.collection).add(nodes)

    def delete_docs(self, doc_ids: list[str]) -> None:
        store.delete_docs(self.collection, doc_ids)

    def stored_docs(self, doc_ids: list[str]) -> dict[str, StoredDoc]:
        return store.stored_docs(self.collection, doc_ids)

    def docs_with_pmids(self, pmids: list[str]) -> set[str]:
        return store.docs_with_pmids(self.collection, pmids)

    def indexed_doc_ids(self) -> set[str]:
        return store.indexed_doc_ids(self.collection)

    def iter_chunks(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        return store.iter_chunks(self.collection)

    def iter_vectors(self) -> Iterator[tuple[str, str, dict[str, Any], list[float]]]:
        return store.iter_vectors(self.collection)

    def get_chunks(self, chunk_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        return store.get_chunks(self.collection, chunk_ids)

    def get_abstracts(self, doc_ids: list[str]) -> dict[str, str]:
        return store.get_abstracts(self.collection, doc_ids)

    def get_papers(self, doc_ids: list[str]) -> list[Paper]:
        return store.get_papers(self.collection, doc_ids)

    def list_papers(self) -> list[dict[str, Any]]:
        return store.list_papers(self.collection)


def open_store(settings: Settings, create: bool = True) -> ChunkStore | None:
    """The store the settings name; None when create=False and it holds no index yet."""
    if settings.store == "milvus":
        from rag.index.milvus import MilvusStore

        return MilvusStore.open(settings, create)
    collection = store.open_collection(settings, create)
    return None if collection is None else ChromaStore(collection)


def drop_store(settings: Settings) -> None:
    """Delete every chunk of the index (for a rebuild from the corpus files); nothing happens when there is none."""
    if settings.store == "milvus":
        from rag.index.milvus import drop

        drop(settings)
    else:
        store.drop_collection(settings)


def location(settings: Settings) -> str:
    if settings.store == "milvus":
        from rag.index.milvus import location as milvus_location

        return milvus_location(settings)
    return store.location(settings)
