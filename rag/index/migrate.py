"""`rag migrate`: copy an index from one store to another (Chroma to Milvus, or back), keeping every chunk's id,
text, metadata and vector, so nothing is embedded again and citations keep their ids.

The source is read page by page and written batch by batch; a copy interrupted part way is completed by running it
again (writes are by id). The destination must be empty or hold a copy of the same index (the same precision).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag.errors import BadInput
from rag.index.stores import location, open_store
from rag.settings import Settings

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode

BATCH = 500  # chunks per write
Progress = Callable[[int, int], None]


@dataclass
class MigrateReport:
    chunks: int
    source: str
    destination: str


def migrate(source: Settings, destination: Settings, progress: Progress | None = None) -> MigrateReport:
    from rag.index.ingest import one_writer

    if location(source) == location(destination) and source.collection == destination.collection:
        raise BadInput(f"the source and the destination are the same index ({location(source)})")
    chunks_from = open_store(source, create=False)
    if chunks_from is None or chunks_from.count() == 0:
        raise BadInput(f"there is no index in {location(source)} to migrate")
    precision = chunks_from.precision()
    assert precision is not None
    with one_writer(destination):
        chunks_to = open_store(destination)
        assert chunks_to is not None
        held = chunks_to.precision()
        if held not in (None, precision):
            raise BadInput(f"{location(destination)} holds {held} embeddings, the source {precision}: migrate into "
                           "an empty collection (RAG_COLLECTION) instead")  # fmt: skip
        chunks_to.record_precision(precision)
        total, done = chunks_from.count(), 0
        rows = chunks_from.iter_vectors()
        while batch := list(itertools.islice(rows, BATCH)):
            chunks_to.add([node_of(*r) for r in batch])
            done += len(batch)
            if progress:
                progress(done, total)
        if not chunks_to.searches_itself:
            from rag.index.keywords import rebuild_keyword_index

            rebuild_keyword_index(chunks_to, destination)
    return MigrateReport(done, location(source), location(destination))


def node_of(chunk_id: str, text: str, meta: dict[str, Any], vector: list[float]) -> TextNode:
    """A stored chunk as the node ingest wrote, with its vector."""
    from rag.index.ingest import chunk_node

    if "_node_content" in meta:  # as llama-index's Chroma store keeps it: the node itself
        from llama_index.core.vector_stores.utils import metadata_dict_to_node

        node = metadata_dict_to_node(meta, text)
    else:
        fields = {k: v for k, v in meta.items() if k != "doc_id"}
        node = chunk_node(chunk_id, text, str(meta["doc_id"]), fields)
    node.embedding = [float(x) for x in vector]
    return node
