"""The vector store: Chroma, embedded (PersistentClient under the data directory) or a server (CHROMA_HOST).

Chunks are written and queried through llama-index's ChromaVectorStore; the few calls it does not offer (reading
the stored state of documents, deleting by document, paging through every chunk) use the collection directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import BadInput
from rag.records import Paper
from rag.settings import Settings

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from llama_index.vector_stores.chroma import ChromaVectorStore

PAGE = 1000  # ids per get/delete call, well under Chroma's batch limit
# Rows per paged read of ids and metadata: each page costs a fixed share plus its offset (listing the 100,400
# papers of a 320,000-chunk index: 51 s in pages of 1,000, 30 s in pages of 5,000). Whole chunks are read in
# pages of PAGE: in pages of 5,000, a keyword-index rebuild of that index peaked 450 MiB higher (one run).
READ_PAGE = 5000
# The HNSW graph's search width (benchmarks/dense_recall.py). At Chroma's default (100) a search missed close chunks,
# and over the index `rag ingest` wrote of all PubMedQA and SciFact abstracts (19,367 chunks) which ones changed
# from process to process, so a question could get other sources in another process: HNSW's first 50 held 0.981
# of the exact first 50 and differed between three processes for 17 of 205 questions; at 800, 0.9997 and none. At
# 318,583 chunks the first 50 held 0.906 at 100 and 0.981 at 800, a search taking 3.9 ms instead of 1.3. A process
# keeps the width its index had when it first searched it: a server (rag serve, rag ui, MCP, a Chroma server)
# running when an older index is widened searches at the old width until it restarts.
EF_SEARCH = 800
CHROMA_EF_SEARCH = 100  # Chroma's default


@dataclass(frozen=True)
class StoredDoc:
    content_hash: str
    expected_chunks: int
    present_chunks: int

    @property
    def complete(self) -> bool:
        return self.present_chunks == self.expected_chunks


def open_collection(settings: Settings, create: bool = True) -> Collection | None:
    """The chunk collection, created with cosine distance; None when create=False and it does not exist."""
    client = open_client(settings, create)
    return None if client is None else collection_of(client, settings, create)


def collection_of(client: ClientAPI, settings: Settings, create: bool) -> Collection | None:
    """The chunk collection through an open client (see open_collection)."""
    if not create:
        try:
            return client.get_collection(settings.collection, embedding_function=None)
        except Exception as exc:  # chromadb raises NotFoundError (or ValueError in older releases)
            if any(s in str(exc) for s in DAMAGED):
                raise damaged(settings, exc) from None
            return None
    collection = client.get_or_create_collection(
        settings.collection, configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}},
        embedding_function=None,
    )  # fmt: skip
    widen_search(collection)
    return collection


def search_width(collection: Collection) -> int | None:
    """The collection's HNSW search width; None for another kind of index (Chroma's distributed SPANN)."""
    hnsw = (collection.configuration_json or {}).get("hnsw")
    return None if hnsw is None else int(hnsw.get("ef_search", CHROMA_EF_SEARCH))


def widen_search(collection: Collection) -> None:
    """Give a collection made with a narrower search width (before EF_SEARCH) this one. Only writers call it (opening
    to write, `rag doctor --repair`), so an index is changed by the next ingest, not by a search."""
    width = search_width(collection)
    if width is not None and width < EF_SEARCH:
        collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})


def open_client(settings: Settings, create: bool = True) -> ClientAPI | None:
    """The Chroma client the settings name (server or embedded); None when create=False and no embedded index
    exists."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_host:
        try:
            client = chromadb.HttpClient(
                host=settings.chroma_host,
                port=settings.chroma_port,
                ssl=settings.chroma_ssl,
                settings=chroma_settings,
            )
            client.heartbeat()
        except Exception as exc:
            raise RuntimeError(
                f"cannot reach the Chroma server at {settings.chroma_host}:{settings.chroma_port} ({exc})"
            ) from None
        return client
    check_data_dir(settings)
    if not create and not settings.chroma_path.exists():
        return None
    make_folder(settings.chroma_path)
    try:
        return chromadb.PersistentClient(path=str(settings.chroma_path), settings=chroma_settings)
    except Exception as exc:
        raise (damaged(settings, exc) if any(s in str(exc) for s in DAMAGED) else exc) from None


def check_data_dir(settings: Settings) -> None:
    """BadInput, in one line, when the data directory (or its Chroma folder) is a file."""
    for folder in (settings.data_dir, settings.chroma_path):
        if folder.exists() and not folder.is_dir():
            raise BadInput(f"{folder} is a file, not a folder: the data directory (RAG_DATA_DIR, --data-dir) must be "
                           "a folder")  # fmt: skip


def make_folder(folder: Path) -> None:
    """Create a folder of the index (BadInput, in one line, when it cannot be)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create the data directory {folder}: {exc.strerror or exc}") from None


def drop_collection(settings: Settings) -> None:
    """Delete the chunk collection (for a rebuild from the corpus files); nothing happens when there is none."""
    client = open_client(settings, create=False)
    if client is not None and collection_of(client, settings, create=False) is not None:
        client.delete_collection(settings.collection)


def location(settings: Settings) -> str:
    if settings.chroma_host:
        return f"chroma server {settings.chroma_host}:{settings.chroma_port}"
    return f"embedded chroma in {settings.chroma_path}"


DAMAGED = ("malformed", "not a database")  # SQLite's words for a damaged file, as Chroma passes them on


def damaged(settings: Settings, exc: Exception) -> RuntimeError:
    """The error for an index whose files are damaged, saying what to do."""
    return RuntimeError(
        f"the index in {settings.chroma_path} is damaged ({str(exc).splitlines()[0]}); move {settings.data_dir} "
        "aside and ingest your corpus files again (e.g. `rag ingest seeds/`)"
    )


PRECISION_KEY = "embedding_precision"


def index_precision(collection: Collection) -> str | None:
    """The precision of the embeddings an index holds: as recorded, fp32 for an index built before precisions were
    recorded, None for an empty index."""
    recorded = (collection.metadata or {}).get(PRECISION_KEY)
    return str(recorded) if recorded else ("fp32" if collection.count() else None)


def record_precision(collection: Collection, precision: str) -> None:
    if not (collection.metadata or {}).get(PRECISION_KEY):
        collection.modify(metadata={**(collection.metadata or {}), PRECISION_KEY: precision})


def vector_store(collection: Collection) -> ChromaVectorStore:
    from llama_index.vector_stores.chroma import ChromaVectorStore

    return ChromaVectorStore(chroma_collection=collection)


def stored_docs(collection: Collection, doc_ids: list[str]) -> dict[str, StoredDoc]:
    """What the collection holds for these documents: their content hash and how many chunks are present."""
    found: dict[str, StoredDoc] = {}
    for i in range(0, len(doc_ids), PAGE):
        got = collection.get(where={"doc_id": {"$in": doc_ids[i : i + PAGE]}}, include=["metadatas"])
        count_stored(found, got["metadatas"] or [])
    return found


def count_stored(found: dict[str, StoredDoc], metas: Iterable[dict[str, Any]]) -> None:
    """Count stored chunks (their metadata) into `found`, per document; differing hashes leave the hash empty."""
    for meta in metas:
        doc_id = str(meta["doc_id"])
        previous = found.get(doc_id)
        same_hash = previous is None or previous.content_hash == meta.get("content_hash")
        found[doc_id] = StoredDoc(
            content_hash=str(meta.get("content_hash", "")) if same_hash else "",
            expected_chunks=int(meta.get("n_chunks", 0)),
            present_chunks=(previous.present_chunks if previous else 0) + 1,
        )


def docs_with_pmids(collection: Collection, pmids: list[str]) -> set[str]:
    """The ids of the papers whose PubMed id is one of these (bare numbers)."""
    found: set[str] = set()
    for i in range(0, len(pmids), PAGE):
        got = collection.get(where={"pmid": {"$in": pmids[i : i + PAGE]}}, include=["metadatas"])
        found.update(str(meta["doc_id"]) for meta in got["metadatas"] or [])
    return found


def delete_docs(collection: Collection, doc_ids: list[str]) -> None:
    for i in range(0, len(doc_ids), PAGE):
        collection.delete(where={"doc_id": {"$in": doc_ids[i : i + PAGE]}})


def indexed_doc_ids(collection: Collection) -> set[str]:
    """The ids of every paper with a chunk in the collection (reading metadata only, page by page)."""
    found: set[str] = set()
    offset = 0
    while True:
        got = collection.get(include=["metadatas"], limit=READ_PAGE, offset=offset)
        if not got["ids"]:
            return found
        metas = zip(got["ids"], got["metadatas"] or [], strict=True)
        found.update(str(written_by_rag(cid, meta)["doc_id"]) for cid, meta in metas)
        offset += len(got["ids"])


def iter_chunks(collection: Collection) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every stored chunk as (id, text, metadata), page by page."""
    offset = 0
    while True:
        got = collection.get(include=["documents", "metadatas"], limit=PAGE, offset=offset)
        ids = got["ids"]
        if not ids:
            return
        for cid, text, meta in zip(ids, got["documents"] or [], got["metadatas"] or [], strict=True):
            yield cid, text, written_by_rag(cid, meta)
        offset += len(ids)


def iter_vectors(collection: Collection) -> Iterator[tuple[str, str, dict[str, Any], list[float]]]:
    """Every stored chunk as (id, text, metadata, vector), page by page (for `rag migrate`)."""
    offset = 0
    while True:
        got = collection.get(include=["documents", "metadatas", "embeddings"], limit=PAGE, offset=offset)
        ids = got["ids"]
        if not ids:
            return
        rows = zip(ids, got["documents"] or [], got["metadatas"] or [], got["embeddings"], strict=True)
        for cid, text, meta, vector in rows:
            yield cid, text, written_by_rag(cid, meta), [float(x) for x in vector]
        offset += len(ids)


def written_by_rag(chunk_id: str, meta: dict[str, Any] | None) -> dict[str, Any]:
    """A stored chunk's metadata, or a clear error for a record that rag did not write (it has no doc_id)."""
    if not meta or "doc_id" not in meta:
        raise RuntimeError(
            f"the collection holds a record that rag did not write ({chunk_id!r} has no doc_id); remove it, or give "
            "rag a collection of its own (RAG_COLLECTION)"
        )
    return meta


def get_chunks(collection: Collection, chunk_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    if not chunk_ids:
        return {}
    got = collection.get(ids=chunk_ids, include=["documents", "metadatas"])
    return {
        cid: (text, meta)
        for cid, text, meta in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
    }


def get_abstracts(collection: Collection, doc_ids: list[str]) -> dict[str, str]:
    """Each document's abstract, put back together from its chunks' character spans."""
    if not doc_ids:
        return {}
    got = collection.get(where={"doc_id": {"$in": doc_ids}}, include=["documents", "metadatas"])
    return assembled(zip(got["documents"] or [], got["metadatas"] or [], strict=True))


def assembled(chunks: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Abstracts put back together from their chunks (text, metadata) by the chunks' character spans."""
    pieces: dict[str, list[tuple[int, str]]] = {}
    for text, meta in chunks:
        pieces.setdefault(str(meta["doc_id"]), []).append((int(meta.get("start", 0)), text))
    abstracts: dict[str, str] = {}
    for doc_id, parts in pieces.items():
        abstract = ""
        for start, text in sorted(parts):
            abstract = abstract.ljust(start) + text[max(len(abstract) - start, 0) :]
        abstracts[doc_id] = abstract
    return abstracts


def get_papers(collection: Collection, doc_ids: list[str]) -> list[Paper]:
    """The indexed papers with these ids, in that order (unknown ids left out), as their metadata describes them."""
    if not doc_ids:
        return []
    abstracts = get_abstracts(collection, doc_ids)
    got = collection.get(where={"$and": [{"doc_id": {"$in": doc_ids}}, {"chunk_index": 0}]}, include=["metadatas"])
    return papers_of(doc_ids, abstracts, {str(m["doc_id"]): m for m in got["metadatas"] or []})


def papers_of(doc_ids: list[str], abstracts: dict[str, str], metas: dict[str, dict[str, Any]]) -> list[Paper]:
    """Papers from their abstracts and their first chunks' metadata, in the order of doc_ids (unknown ones left out)."""

    def listed(meta: dict[str, Any], key: str, separator: str = "; ") -> tuple[str, ...]:
        return tuple(item for item in str(meta.get(key) or "").split(separator) if item)

    return [
        Paper(
            doc_id=doc,
            abstract=abstracts.get(doc, ""),
            title=meta.get("title") or None,
            authors=listed(meta, "authors"),
            venue=meta.get("venue") or None,
            year=int(meta["year"]) if meta.get("year") else None,
            url=meta.get("url") or None,
            keywords=listed(meta, "keywords"),
            doi=meta.get("doi") or None,
            identifiers=listed(meta, "identifiers", " "),
            collections=listed(meta, "collections"),
        )
        for doc in doc_ids
        if (meta := metas.get(doc)) is not None
    ]


def list_papers(collection: Collection) -> list[dict[str, Any]]:
    """One row per indexed abstract (from its first chunk): doc_id, venue, year, title and opening words. Read page
    by page: one unpaged read of 100,000 first chunks exceeds SQLite's limit on query variables."""
    rows, offset, first_chunks = [], 0, {"chunk_index": 0}
    while True:
        got = collection.get(where=first_chunks, include=["documents", "metadatas"], limit=READ_PAGE, offset=offset)
        if not got["ids"]:
            return sorted(rows, key=lambda r: r["doc_id"])
        offset += len(got["ids"])
        pairs = zip(got["documents"] or [], got["metadatas"] or [], strict=True)
        rows += [paper_row(text, meta) for text, meta in pairs]


def paper_row(text: str, meta: dict[str, Any]) -> dict[str, Any]:
    """A paper's row in `list_papers`, from its first chunk."""
    return {
        "doc_id": str(meta["doc_id"]),
        "venue": meta.get("venue") or "",
        "year": int(meta["year"]) if meta.get("year") else None,
        "title": meta.get("title") or "",
        "authors": meta.get("authors") or "",
        "text": text,
    }
