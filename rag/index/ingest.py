"""Corpus files -> chunks -> embeddings -> Chroma, then the keyword index.

Idempotent and crash-safe: chunk ids are `<doc_id>::<n>`; each chunk records its document's content hash and
chunk count, so a document is unchanged only when every one of its chunks is present with the current hash.
Changed or partly written documents lose their old chunks right before the new ones are written, batch by batch
(a batch never splits a document), so a run killed at any point is completed by the next one without duplicates.

Papers leave the index with `remove` (`rag remove`) or by a sync (`rag ingest --sync`: afterwards the index holds
exactly the papers of the files given). Deleting is one Chroma call per page of ids. The keyword index, derived
from the collection, is built from the written batches by an ingest into an empty index, and takes new papers'
chunks as a delta; after changes or removals it is rebuilt from the collection, and also
whenever its chunk count disagrees with the collection's, so a run killed between the two is healed by the next
search or ingest.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import shutil
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.corpus.chunker import chunk_paper
from rag.corpus.loaders import Corpus, LoadResult, Problem, merged, windows
from rag.errors import BadInput
from rag.index import store
from rag.index.keywords import (
    DELTA_MIN,
    DELTA_SHARE,
    KeywordIndex,
    Row,
    SegmentBuilder,
    read_manifest,
    rebuild_keyword_index,
)
from rag.index.stores import ChunkStore, drop_store, open_store
from rag.records import Chunk, Paper, doc_of_chunk
from rag.sentences import sentence_spans
from rag.settings import Settings
from rag.tracing import span

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode

    from rag.corpus.injection import Guard

log = logging.getLogger(__name__)
WRITE_LOCK = ".write.lock"
TRIM_EVERY = 5_000  # papers written between two hand-backs of freed memory (see release_freed_memory)
SCHEMA = 2  # bump when the stored chunk metadata changes, so the next ingest rewrites old chunks
WINDOW = 10_000  # papers read ahead of the writing: an ingest's memory is bounded whatever the files' size
# (records handled so far, records in the files); while the files are first read and counted: (records read, None)
Progress = Callable[[int, int | None], None]
COUNT_EVERY = 5_000  # records between two progress reports while counting


@dataclass
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    problems: list[Problem] = field(default_factory=list)
    removed: int = 0  # with sync: indexed papers that are in none of the files
    deleted: int = 0  # papers a PubMed update file deletes (DeleteCitation)
    merged: int = 0  # records that were another record's paper (the same DOI, PMID, arXiv or OpenAlex id)
    no_abstract: int = 0  # records without an abstract, skipped and counted (not problems)
    flagged: int = 0  # written papers with sentences addressed to an assistant (withheld from answers)

    @property
    def skipped(self) -> int:
        return len(self.problems)


@contextmanager
def one_writer(settings: Settings) -> Iterator[None]:
    """Hold the data directory's write lock: embedded Chroma is not safe for several writing processes (vectors
    went missing when two ingests ran at once), so a second writer waits for the first to finish. A Milvus server
    takes several writers (each ingest worker its own files), so none is held for one."""
    from rag.index.milvus import is_server
    from rag.locks import exclusive

    if settings.store == "milvus" and is_server(settings.milvus_target):
        yield  # a Milvus server takes several writers: each ingest worker writes its own files' papers
        return
    store.check_data_dir(settings)
    store.make_folder(settings.data_dir)

    def waiting() -> None:
        log.warning("rag: another process is writing to %s; waiting for it to finish", settings.data_dir)

    with exclusive(settings.data_dir / WRITE_LOCK, waiting):
        yield


def ingest(
    paths: Iterable[str | Path],
    settings: Settings,
    progress: Progress | None = None,
    sync: bool = False,
    rebuild: bool = False,
) -> IngestReport:
    """Add or update the papers of the files; with `sync`, also remove the indexed papers none of them holds; with
    `rebuild`, first drop the whole index (vectors, keyword index, recorded precision) and build it anew from the
    files. Both are refused when a record could not be read, since its paper would be lost. One writer at a time.
    The files are read twice: once to check and count them before anything is written, then window by window
    while the papers are stored, so that memory stays bounded whatever their size."""
    with span("rag.ingest") as traced:
        report = _ingest(paths, settings, progress, sync, rebuild)
        traced.set_attributes({"added": report.added, "updated": report.updated, "chunks": report.chunks_written})
        return report


def _ingest(paths, settings: Settings, progress: Progress | None, sync: bool, rebuild: bool) -> IngestReport:
    corpus = Corpus.of(paths, settings.max_abstract_chars)  # raises BadInput before anything is written
    checked = LoadResult()
    with span("count"):
        total = _count(corpus, checked, progress)  # so does an unreadable part of a file
    for flag, wanted in (("--sync", sync), ("--rebuild", rebuild)):
        if wanted and (checked.problems or not total):
            raise BadInput(f"{flag} needs files that read without errors and hold at least one paper (nothing "
                           f"changed): {checked.problems[0] if checked.problems else 'no papers found'}")  # fmt: skip
    with one_writer(settings):
        if rebuild:
            drop_store(settings)
            shutil.rmtree(settings.keyword_dir, ignore_errors=True)
        with span("store", records=total):
            chunks, report, new_chunks = _store(corpus, total, settings, progress, sync)
        release_freed_memory()  # what the papers took, before the keyword index is built
        with span("keyword_index"):
            if not chunks.searches_itself:
                _index_keywords(chunks, settings, report, new_chunks)
        return report


def _count(corpus: Corpus, result: LoadResult, progress: Progress | None) -> int:
    """The number of records with an abstract in the files (read once, nothing kept but problems)."""
    total = 0
    for total, _ in enumerate(corpus.records(result), start=1):
        if progress and total % COUNT_EVERY == 0:
            progress(total, None)
    return total


def release_freed_memory() -> None:
    """Hand memory that Python freed back to the operating system (glibc keeps it otherwise, and the keyword
    index's large arrays are mapped afresh rather than reusing it)."""
    import ctypes

    process = ctypes.CDLL(None)  # the symbols already loaded, libc's among them (find_library would run ldconfig)
    if hasattr(process, "malloc_trim"):  # glibc only
        process.malloc_trim(0)


@dataclass
class NewChunks:
    """What the keyword index takes of the chunks an ingest writes: the rows for its delta segment (while they stay
    within `limit`), or, when the collection was empty before, every row tokenized as it is written, so that the
    index is built without reading the collection back (93 of the 138 s of building it at 320,000 chunks)."""

    delta: list[Row] | None = None
    limit: int = 0
    whole: SegmentBuilder | None = None

    def add(self, rows: list[Row]) -> None:
        if self.delta is not None:
            self.delta += rows
            self.delta = self.delta if len(self.delta) <= self.limit else None
        if self.whole is not None:
            self.whole.add(rows)


def _store(
    corpus: Corpus, total: int, settings: Settings, progress: Progress | None, sync: bool
) -> tuple[ChunkStore, IngestReport, NewChunks]:
    """Write the new and changed papers window by window (and with `sync`, remove the others); returns the
    store, the report and the new chunks as the keyword index takes them."""
    loaded = LoadResult(files=corpus.files)
    chunks = open_store(settings)
    assert chunks is not None
    before = read_manifest(settings.keyword_dir)
    chunks_before = chunks.count()
    if chunks.searches_itself:
        new_chunks = NewChunks()  # the store indexes keywords itself
    elif chunks_before == 0:
        new_chunks = NewChunks(whole=SegmentBuilder(workdir=settings.keyword_dir.parent))
    elif before is not None and before["chunks"] == chunks_before:
        new_chunks = NewChunks(delta=[], limit=delta_limit(before))  # given up at the first update
    else:
        new_chunks = NewChunks()  # the keyword index is rebuilt from the collection
    report = IngestReport(problems=loaded.problems)
    tally = Tally(total, progress)
    seen: set[str] = set()  # the files' doc_ids, for sync
    pending = _pending(windows(corpus, loaded, WINDOW), chunks, settings, report, tally, seen)
    _write(pending, chunks, settings, report, tally, new_chunks)
    if loaded.late:
        new_chunks.delta = None  # papers stored earlier in this run change: the keyword index is rebuilt
        _write(_late(loaded.late, chunks, settings, seen), chunks, settings, report, tally, new_chunks)
    report.merged, report.no_abstract = loaded.merged, loaded.no_abstract
    if sync:
        leaving = [doc for doc in chunks.indexed_doc_ids() if doc not in seen]
        chunks.delete_docs(leaving)
        report.removed = len(leaving)
    if loaded.deletions:
        deleted = chunks.docs_with_pmids([i.removeprefix("pmid:") for i in loaded.deletions])
        deleted |= set(chunks.stored_docs(sorted(loaded.deletions)))
        chunks.delete_docs(sorted(deleted))
        report.deleted = len(deleted)
    tally.finish()
    return chunks, report, new_chunks


@dataclass
class Tally:
    """Progress over the files' records: those stored, found unchanged or merged into another."""

    total: int
    progress: Progress | None
    done: int = 0

    def advance(self, records: int) -> None:
        self.done = min(self.done + records, self.total)
        if self.progress:
            self.progress(self.done, self.total)

    def finish(self) -> None:
        self.advance(self.total - self.done)


Pending = Iterator[tuple[Paper, str, bool]]  # (paper, content hash, has old chunks)


def _pending(
    papers: Iterator[list[Paper]], chunks: ChunkStore, settings: Settings, report: IngestReport, tally: Tally,
    seen: set[str],
) -> Pending:  # fmt: skip
    """The papers to write, window by window: those not stored with their current content."""
    for window in papers:
        stored = chunks.stored_docs([p.doc_id for p in window])
        unchanged = 0
        for paper in window:
            seen.add(paper.doc_id)
            digest = content_hash(paper, settings)
            old = stored.get(paper.doc_id)
            if old and old.complete and old.content_hash == digest:
                unchanged += 1
                continue
            if old is None:
                report.added += 1
            else:
                report.updated += 1
            yield paper, digest, old is not None
        report.unchanged += unchanged
        tally.advance(unchanged)


def _late(late: list[tuple[str, Paper]], chunks: ChunkStore, settings: Settings, seen: set[str]) -> Pending:
    """Records of papers stored from an earlier window, merged into the papers as stored (an id that ranks
    first by ID_KINDS renames the paper: its old chunks go)."""
    papers = {paper.doc_id: paper for paper in chunks.get_papers(list(dict.fromkeys(d for d, _ in late)))}
    for doc_id, record in late:
        papers[doc_id] = merged(papers[doc_id], record) if doc_id in papers else record
    for doc_id, paper in papers.items():
        if paper.doc_id != doc_id:
            chunks.delete_docs([doc_id])
            seen.discard(doc_id)
        seen.add(paper.doc_id)
        yield paper, content_hash(paper, settings), True


def _index_keywords(chunks: ChunkStore, settings: Settings, report: IngestReport, new: NewChunks) -> None:
    """Bring the keyword index in step with the collection: build it from the rows written into an empty
    collection, append the new chunks as a delta, or rebuild it from the collection."""
    manifest = read_manifest(settings.keyword_dir)
    changed = report.added or report.updated or report.removed or report.deleted
    count = chunks.count()
    if changed or manifest is None or manifest["chunks"] != count:
        if new.whole is not None and len(new.whole) == count:
            KeywordIndex.save(new.whole, settings.keyword_dir)
        elif not (
            new.delta
            and not (report.removed or report.deleted)
            and KeywordIndex.append(new.delta, settings.keyword_dir)
        ):
            rebuild_keyword_index(chunks, settings)


def delta_limit(manifest: dict | None) -> int:
    """How many new chunks the keyword index may take as a delta (more: a full rebuild)."""
    return int(max(DELTA_MIN, DELTA_SHARE * (manifest or {}).get("chunks", 0)))


@dataclass
class RemoveReport:
    removed: list[str]
    not_indexed: list[str]


def remove(doc_ids: Iterable[str], settings: Settings) -> RemoveReport:
    """Take papers out of the index (their chunks, vectors and keyword entries)."""
    with one_writer(settings):
        return _remove(list(dict.fromkeys(doc_ids)), settings)


def _remove(wanted: list[str], settings: Settings) -> RemoveReport:
    chunks = open_store(settings, create=False)
    if chunks is None or chunks.count() == 0:
        raise BadInput("the index is empty: there is nothing to remove")
    present = chunks.stored_docs(wanted)
    removed = [doc for doc in wanted if doc in present]
    chunks.delete_docs(removed)
    if removed and not chunks.searches_itself:
        rebuild_keyword_index(chunks, settings)
    return RemoveReport(removed, [doc for doc in wanted if doc not in present])


def content_hash(paper: Paper, settings: Settings) -> str:
    """Changes when the paper, the chunking or the embedding model changes."""
    fields = [
        paper.abstract, paper.title, list(paper.authors), paper.venue, paper.year, paper.url,
        list(paper.keywords), settings.chunk_size, settings.chunk_overlap, settings.embedding_model, SCHEMA,
    ]  # fmt: skip
    if paper.identifiers or paper.collections:  # only then: papers of the first formats keep their hash
        fields += [list(paper.identifiers), list(paper.collections), paper.doi]
    return hashlib.sha256(json.dumps(fields).encode("utf-8")).hexdigest()[:24]


def _write(
    pending: Pending, chunks: ChunkStore, settings: Settings, report: IngestReport, tally: Tally, new: NewChunks
) -> None:
    """Embed and store the pending papers batch by batch, handing each batch's chunks to `new` once written (the
    embedding model is loaded only when there is a paper to write)."""
    from rag.corpus.injection import Guard
    from rag.index.models import embedder_for
    from rag.index.workers import embedding_pipeline

    first = next(pending, None)
    if first is None:
        return
    embedder = embedder_for(settings, chunks.precision())
    chunks.record_precision(embedder.precision)
    done = 0
    with embedding_pipeline(embedder, tally.total - tally.done) as start:
        guard = Guard.of(settings)
        for batch, nodes in _embedded(_batches(itertools.chain([first], pending), settings, guard), start):
            chunks.delete_docs([paper.doc_id for paper, _, had_old, _, _ in batch if had_old])
            chunks.add(nodes)
            report.chunks_written += len(nodes)
            report.flagged += sum(
                1 for node in nodes if node.metadata["instructions"] and node.metadata["chunk_index"] == 0
            )
            if report.updated:
                new.delta = None  # an updated paper's old chunks are in the keyword index: it is rebuilt
            new.add([(node.id_, node.text, node.metadata | {"doc_id": paper_id(node)}) for node in nodes])
            done += len(batch)
            if done // TRIM_EVERY > (done - len(batch)) // TRIM_EVERY:
                release_freed_memory()  # the written papers' memory, so that it does not add to the collection's
            tally.advance(len(batch))


def _embedded(batches: Iterator[list], start: Callable) -> Iterator[tuple[list, list[TextNode]]]:
    """Each batch with its nodes, their vectors set. The next batch's embedding is started before a batch is given
    back, so that it goes on while the batch is written (see embedding_pipeline); at most two are in hand."""
    from llama_index.core.schema import MetadataMode

    started: deque = deque()
    for batch in batches:
        nodes = [node for paper, digest, _, chunks, flags in batch for node in to_nodes(paper, digest, chunks, flags)]
        started.append((batch, nodes, start([node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes])))
        if len(started) > 1:
            yield _with_vectors(*started.popleft())
    while started:
        yield _with_vectors(*started.popleft())


def _with_vectors(batch: list, nodes: list[TextNode], wait: Callable) -> tuple[list, list[TextNode]]:
    for node, vector in zip(nodes, wait(), strict=True):
        node.embedding = vector.tolist()
    return batch, nodes


def paper_id(node: TextNode) -> str:
    return node.ref_doc_id or doc_of_chunk(node.id_)


def _batches(
    pending: Iterator[tuple[Paper, str, bool]], settings: Settings, guard: Guard
) -> Iterator[list[tuple[Paper, str, bool, list[Chunk], dict[str, Any]]]]:
    """Groups of whole papers with about ingest_batch_size chunks each, taken off `pending` (so that a written
    batch is freed), each with its chunks and its instruction flags (the abstract split into sentences once for
    both)."""
    batch: list[tuple[Paper, str, bool, list[Chunk], dict[str, Any]]] = []
    size = 0
    for paper, digest, had_old in pending:
        spans = sentence_spans(paper.abstract)
        chunks = chunk_paper(paper, settings.chunk_size, settings.chunk_overlap, spans)
        flags = {"instructions": len(guard.withheld(paper.abstract, spans)), "instruction_check": guard.version}
        batch.append((paper, digest, had_old, chunks, flags))
        size += len(chunks)
        if size >= settings.ingest_batch_size:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def to_nodes(paper: Paper, digest: str, chunks: list[Chunk], flags: dict[str, Any]) -> list[TextNode]:
    """The paper's chunks as nodes, each with the paper's metadata and `flags`: `instructions` counts the abstract's
    sentences addressed to an assistant (withheld from answers; `rag doctor` lists them) as `instruction_check`
    (the guard's version: the doctor checks again under another) found them."""
    metadata = {
        "title": paper.title or "",
        "venue": paper.venue or "",
        "year": paper.year or 0,
        "url": paper.url or "",
        "authors": "; ".join(paper.authors),
        "keywords": "; ".join(paper.keywords),
        "doi": paper.doi or "",
        "pmid": next((i.removeprefix("pmid:") for i in paper.identifiers if i.startswith("pmid:")), ""),
        "identifiers": " ".join(paper.identifiers),
        "collections": "; ".join(paper.collections),
        "content_hash": digest,
        "n_chunks": len(chunks),
        **flags,
    }
    return [chunk_node(c.chunk_id, c.text, paper.doc_id, metadata | span_of(c)) for c in chunks]


def span_of(chunk: Chunk) -> dict[str, int]:
    return {"chunk_index": chunk.index, "start": chunk.start, "end": chunk.end}


def chunk_node(chunk_id: str, text: str, doc_id: str, metadata: dict[str, Any]) -> TextNode:
    """A chunk as the node stored: only its paper's title (when it has one) is embedded with its text; the rest of
    the metadata is for the store and the filters."""
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    hidden = [key for key in metadata if key != "title" or not metadata.get("title")]
    # The paper is the chunk's source document: llama-index then stores its id as `doc_id` metadata.
    return TextNode(
        id_=chunk_id,
        text=text,
        start_char_idx=metadata.get("start"),
        end_char_idx=metadata.get("end"),
        metadata=metadata,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=list(metadata),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc_id)},
    )
