"""`rag doctor`: checks an index end to end and, with repair, mends what can be mended from the index itself.

With RAG_STORE=milvus the store keeps vectors and BM25 itself: the doctor checks the papers and the precision.

Checks: the collection opens and searches its graph wide enough; every chunk has its vector (two writers at once
once left chunks without one: dense search can never find them); every paper has all its chunks; the keyword index
loads and counts the collection's chunks; the embedding precision recorded in the index is the one the settings ask
for. Repairs, under the write lock: chunks without vectors are embedded again from their stored text, the keyword
index is rebuilt, and an index made with a narrower HNSW search width than today's (rag/index/store.py EF_SEARCH)
is widened. A paper with missing chunks cannot be rebuilt from the index: the fix is to ingest its file again
(ingest completes it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rag.errors import BadInput
from rag.index import store
from rag.index.stores import ChromaStore, ChunkStore, location, open_store
from rag.settings import Settings

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

Progress = Callable[[int, int], None]
PAGE = 500  # papers asked of the store at once
REEMBED = "rag doctor --repair embeds them again"
REBUILD = "rag doctor --repair rebuilds it (so does the next search)"


@dataclass
class Finding:
    check: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass
class Checkup:
    findings: list[Finding] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)  # {"doc_id", "sentences"} addressed to an assistant

    @property
    def healthy(self) -> bool:
        return all(f.ok for f in self.findings)

    def contract(self) -> dict[str, Any]:
        return {"healthy": self.healthy, "findings": [asdict(f) for f in self.findings], "repaired": self.repaired,
                "flagged": self.flagged}  # fmt: skip


def examine(settings: Settings, repair: bool = False, progress: Progress | None = None) -> Checkup:
    """Check the index in settings.data_dir (or on the Chroma server); with repair, mend what can be mended and
    check again."""
    from rag.index.ingest import one_writer

    chunks = open_store(settings, create=False)
    if chunks is None or chunks.count() == 0:
        raise BadInput(f"there is no index in {location(settings)}: run `rag ingest FILES` first")
    checkup = diagnose(chunks, settings, progress)
    if repair and not checkup.healthy and isinstance(chunks, ChromaStore):
        with one_writer(settings):
            repaired = mend(chunks.collection, settings, checkup)
        checkup = diagnose(chunks, settings, progress)
        checkup.repaired = repaired
    checkup.flagged = flagged_papers(chunks, settings)
    found = len(checkup.flagged)
    detail = f"{found} abstract(s) hold sentences addressed to an assistant, withheld from answers (listed)"
    off = "" if settings.instruction_filter else " (the learned filter is off: RAG_INSTRUCTION_FILTER=false)"
    checkup.findings.append(
        Finding("instructions", True, (detail if found else "no abstract addresses the assistant") + off)
    )
    return checkup


def flagged_papers(chunks: ChunkStore, settings: Settings) -> list[dict[str, Any]]:
    """The papers whose abstracts hold sentences addressed to an assistant, with those sentences: those flagged at
    ingest (`instructions` in the chunk metadata), and every paper checked by another filter than the settings'
    (or ingested before the flag existed), checked now."""
    from rag.corpus.injection import Guard
    from rag.sentences import sentence_spans

    guard = Guard.of(settings)
    firsts = [meta for _, _, meta in chunks.iter_chunks() if not meta.get("chunk_index")]
    suspects = sorted(
        {str(m["doc_id"]) for m in firsts if m.get("instructions") or m.get("instruction_check") != guard.version}
    )
    found = []
    for start in range(0, len(suspects), PAGE):
        for doc, abstract in sorted(chunks.get_abstracts(suspects[start : start + PAGE]).items()):
            spans = sentence_spans(abstract)
            withheld = sorted(guard.withheld(abstract, spans))
            if withheld:
                found.append({"doc_id": doc, "sentences": [abstract[spans[i][0] : spans[i][1]] for i in withheld]})
    return found


def diagnose(chunks: ChunkStore, settings: Settings, progress: Progress | None = None) -> Checkup:
    count = chunks.count()
    findings = [Finding("collection", True, f"{count} chunks in {location(settings)}")]
    if isinstance(chunks, ChromaStore):
        findings.append(width_finding(chunks.collection))
    missing = chunks_without_vectors(chunks.collection, progress) if isinstance(chunks, ChromaStore) else []
    if missing:
        findings.append(Finding("vectors", False, f"{len(missing)} chunk(s) without a vector", REEMBED))
    else:
        findings.append(Finding("vectors", True, "every chunk has its vector"))  # Milvus stores no row without one
    partial = partly_stored(chunks)
    if partial:
        findings.append(Finding("papers", False, f"{len(partial)} paper(s) partly stored: {', '.join(partial[:5])}",
                                "ingest their files again (`rag ingest FILES` completes them)"))  # fmt: skip
    else:
        findings.append(Finding("papers", True, "every paper has all its chunks"))
    findings.append(keyword_finding(chunks, settings, count))
    findings.append(precision_finding(chunks.precision(), settings))
    return Checkup(findings)


def width_finding(collection: Collection) -> Finding:
    width = store.search_width(collection)
    if width is None:
        return Finding("search width", True, "not an HNSW index")
    if width >= store.EF_SEARCH:
        return Finding("search width", True, f"HNSW searched {width} wide")
    return Finding("search width", False,
                   f"HNSW searched {width} wide (below {store.EF_SEARCH}: a search may miss close chunks, and "
                   "different ones in different processes)",
                   "rag doctor --repair widens it (so does the next ingest); then restart running servers")  # fmt: skip


def keyword_finding(chunks: ChunkStore, settings: Settings, count: int) -> Finding:
    from rag.index.keywords import KeywordIndex

    if chunks.searches_itself:
        return Finding("keyword index", True, "BM25 over every chunk, kept by the store itself")
    keyword = KeywordIndex.load(settings.keyword_dir)
    counted = keyword.manifest["chunks"] if keyword else None
    detail = f"counts {counted} chunks" if keyword else "missing or unreadable"
    return Finding("keyword index", counted == count, detail, "" if counted == count else REBUILD)


def precision_finding(recorded: str | None, settings: Settings) -> Finding:
    wanted = settings.embedding_precision
    if wanted != "auto" and recorded != wanted:
        return Finding(
            "embeddings", False, f"the index holds {recorded} embeddings; RAG_EMBEDDING_PRECISION asks for {wanted}",
            f"set RAG_EMBEDDING_PRECISION={recorded}, or rebuild with `rag ingest --rebuild FILES`",
        )  # fmt: skip
    model = settings.embedding_model or "all-MiniLM-L6-v2 (bundled)"
    return Finding("embeddings", True, f"{model}, {recorded}, as the settings ask")


def chunks_without_vectors(collection: Collection, progress: Progress | None = None) -> list[str]:
    """Ids of chunks whose vector is missing, reading the collection page by page (a page that fails to read is
    split until the failing ids are found)."""
    total, missing, offset = collection.count(), [], 0
    while True:
        ids = collection.get(include=[], limit=store.READ_PAGE, offset=offset)["ids"]
        if not ids:
            return missing
        missing += _without_vectors(collection, ids)
        offset += len(ids)
        if progress:
            progress(min(offset, total), total)


def _without_vectors(collection: Collection, ids: list[str]) -> list[str]:
    try:
        got = collection.get(ids=ids, include=["embeddings"])
    except Exception:
        if len(ids) == 1:
            return ids
        half = len(ids) // 2
        return _without_vectors(collection, ids[:half]) + _without_vectors(collection, ids[half:])
    vectors = got["embeddings"]
    present = {cid for cid, v in zip(got["ids"], vectors if vectors is not None else [], strict=False) if len(v)}
    return [cid for cid in ids if cid not in present]


def partly_stored(chunks: ChunkStore) -> list[str]:
    """Papers with fewer chunks present than they were split into."""
    present: dict[str, int] = {}
    expected: dict[str, int] = {}
    for _, _, meta in chunks.iter_chunks():
        doc = str(meta["doc_id"])
        present[doc] = present.get(doc, 0) + 1
        expected[doc] = int(meta.get("n_chunks", 0))
    return sorted(doc for doc, n in present.items() if n != expected[doc])


def mend(collection: Collection, settings: Settings, checkup: Checkup) -> list[str]:
    """Embed chunks without vectors again and rebuild the keyword index; returns what was done."""
    from rag.index.keywords import rebuild_keyword_index

    done = []
    failing = {f.check for f in checkup.findings if not f.ok}
    if "search width" in failing:
        store.widen_search(collection)
        done.append(f"widened the search to {store.EF_SEARCH}")
    if "vectors" in failing:
        missing = chunks_without_vectors(collection)
        reembed(collection, settings, missing)
        done.append(f"embedded {len(missing)} chunk(s) again")
    if failing & {"vectors", "keyword index"}:
        rebuild_keyword_index(ChromaStore(collection), settings)
        done.append("rebuilt the keyword index")
    return done


def reembed(collection: Collection, settings: Settings, chunk_ids: list[str]) -> None:
    """Give chunks their vectors again, embedding exactly the text ingest embedded (rebuilt from the stored node)."""
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    from rag.index.models import embedder_for

    embedder = embedder_for(settings, store.index_precision(collection))
    for start in range(0, len(chunk_ids), store.PAGE):
        got = collection.get(ids=chunk_ids[start : start + store.PAGE], include=["documents", "metadatas"])
        rows = zip(got["documents"], got["metadatas"], strict=True)
        nodes = [metadata_dict_to_node(meta, text) for text, meta in rows]
        vectors = embedder.embed([node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes])
        collection.upsert(ids=got["ids"], embeddings=vectors, documents=got["documents"], metadatas=got["metadatas"])
