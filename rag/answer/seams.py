"""What answering needs of the index, as Protocols: answering sees the index only through a `Library`
(rag.index.Library has these members), and embeds only through its `Embedding`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from rag.records import Query, SearchResult


class Embedding(Protocol):
    """Text -> unit vectors, at the index's precision ("fp32" or "int8")."""

    precision: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class Library(Protocol):
    @property
    def embedder(self) -> Embedding: ...

    def search(self, query: Query | str) -> list[SearchResult]: ...

    def fused(self, rankings: list[list[SearchResult]], k: int) -> list[SearchResult]: ...

    def abstracts(self, doc_ids: list[str]) -> dict[str, str]: ...

    def term_weights(self, question: str) -> dict[str, float]: ...

    def query_vector(self, question: str) -> np.ndarray: ...
