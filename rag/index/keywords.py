"""The keyword index: BM25 (bm25s) over the same chunks as the vector store, persisted beside it.

An ingest into an empty index builds it from the batches it writes (tokenized as they are written); an ingest that
only adds papers appends their chunks to a small delta segment (seconds, whatever the size of the index); changes,
removals and a delta grown past its limit rebuild it from the collection. Every write goes to a
temporary folder that then replaces the old one, so a reader never sees half an index. Filters are applied per
query as a bm25s weight mask; each segment scores with its own idf, which for a delta of at most a tenth of the
index shifts scores slightly, not rankings much. The manifest (venues, years, counts) also answers `rag stats`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.index import store
from rag.records import doc_of_chunk
from rag.terms import QUESTION_WORDS, idf, tokenize

if TYPE_CHECKING:
    import bm25s
    import numpy as np
    from chromadb.api.models.Collection import Collection

    from rag.settings import Settings

MANIFEST = "manifest.json"
ROWS = "chunks.json"  # the delta segment's rows (ids, texts, metadata): it is indexed again with the next ones
IDS, VENUES, YEARS = "chunk_ids.npy", "venues.npy", "years.npy"  # per chunk, in index order (fast to load)
AUTHORS = "authors.npy"  # per chunk, lower-cased, "; " between names (an index without it is rebuilt once)
PAPER_FIELDS = ("doc_id", "venue", "year", "authors")  # what a segment keeps per chunk (filters and counts)
DAMAGED = (OSError, ValueError, KeyError, TypeError, AttributeError)  # what reading damaged segment files raises


Row = tuple[str, str, dict[str, Any]]  # (chunk id, text, metadata)


@dataclass(frozen=True)
class Filters:
    """What a search keeps: one venue (any case), a range of years (inclusive), an author's name (a part of it)."""

    venue: str | None = None
    years: tuple[int, int] | None = None
    author: str | None = None


MAIN, DELTA = "main", "delta"
DELTA_MIN = 5000  # chunks the delta segment may hold before a full rebuild, at least...
DELTA_SHARE = 0.1  # ... or this share of the main segment
SLICE = 10_000  # rows tokenized at a time while indexing


@dataclass
class Segment:
    """One BM25 index over some of the chunks, with each chunk's venue and year for filtering."""

    bm25: bm25s.BM25
    chunk_ids: list[str]
    venues: np.ndarray  # per chunk, lower-cased
    years: np.ndarray  # per chunk, 0 when unknown
    authors: np.ndarray  # per chunk, lower-cased, "; " between names

    @classmethod
    def load(cls, folder: Path) -> Segment:
        import bm25s
        import numpy as np

        bm25 = bm25s.BM25.load(str(folder), mmap=True)
        if not (folder / IDS).exists():  # written before the arrays were: read the rows instead (slower)
            rows = json.loads((folder / ROWS).read_text())
            return cls(bm25, rows["chunk_ids"], *filter_arrays(rows["meta"]))
        arrays = (np.load(folder / name) for name in (VENUES, YEARS, AUTHORS))  # no authors: rebuilt by the caller
        return cls(bm25, np.load(folder / IDS).tolist(), *arrays)

    def frequency(self, word: str) -> int:
        """How many of this segment's chunks contain the word."""
        pointers = self.bm25.scores["indptr"]
        i = self.bm25.vocab_dict.get(word)
        return int(pointers[i + 1] - pointers[i]) if i is not None and i + 1 < len(pointers) else 0

    def mask(self, filters: Filters) -> np.ndarray:
        """1 for each chunk the filters let through, else 0."""
        import numpy as np

        mask = np.ones(len(self.chunk_ids), dtype=np.float32)
        if filters.venue:
            mask *= self.venues == filters.venue.lower()
        if filters.years:
            mask *= (self.years >= filters.years[0]) & (self.years <= filters.years[1])
        if filters.author:
            mask *= np.char.find(self.authors, filters.author.lower()) >= 0
        return mask

    def search(self, tokens: list[str], k: int, filters: Filters) -> list[tuple[str, float]]:
        import numpy as np

        token_ids = self.bm25.get_tokens_ids(tokens)
        if not token_ids:
            return []
        mask = self.mask(filters)
        scores = self.bm25.get_scores_from_ids(token_ids, weight_mask=mask)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.chunk_ids[i], float(scores[i])) for i in top if scores[i] > 0]


class SegmentBuilder:
    """A segment's rows, tokenized as they are added: an ingest adds each batch it writes, so that the keyword
    index of a new collection is built without reading every chunk back from Chroma. Only the words' ids, the chunk
    ids and the filter fields are kept, not the texts (unless `keep_texts`, for the delta segment)."""

    def __init__(self, keep_texts: bool = False) -> None:
        self.chunk_ids: list[str] = []
        self.metas: list[dict[str, Any]] = []
        self.ids: list[array[int]] = []  # each chunk's words as vocabulary ids (4 bytes each, not a list's 8)
        self.vocab: dict[str, int] = {}
        self.texts: list[str] | None = [] if keep_texts else None

    @classmethod
    def of(cls, rows: Iterable[Row], keep_texts: bool = False, slice_rows: int = SLICE) -> SegmentBuilder:
        """A builder given every row, read and tokenized `slice_rows` at a time: a rebuild then holds one slice's
        texts rather than the whole collection's."""
        builder, remaining = cls(keep_texts), iter(rows)
        while piece := list(islice(remaining, slice_rows)):
            builder.add(piece)
        return builder

    def __len__(self) -> int:
        return len(self.chunk_ids)

    def add(self, rows: list[Row]) -> None:
        vocab = self.vocab
        self.chunk_ids += [cid for cid, _, _ in rows]
        self.metas += [{k: meta.get(k) for k in PAPER_FIELDS} for _, _, meta in rows]
        words = tokenize([text for _, text, _ in rows])
        self.ids += [array("i", [vocab.setdefault(word, len(vocab)) for word in chunk]) for chunk in words]
        if self.texts is not None:
            self.texts += [text for _, text, _ in rows]

    def write(self, folder: Path, main: Segment | None = None) -> list[dict]:
        """Index the rows into folder; returns their metadata. With `main` (for the delta segment), words are
        weighted by their rarity in both segments, so that scores compare with the main segment's, and the texts
        are kept (the delta is indexed again with the next rows)."""
        import bm25s
        import numpy as np
        from bm25s.tokenization import Tokenized

        folder.mkdir(parents=True)
        if self.ids:
            bm25 = bm25s.BM25()
            bm25._np_csc = lean_csc  # type: ignore[method-assign]  # bm25s's hook for its CSC builder
            bm25.index(Tokenized(ids=self.ids, vocab=self.vocab), show_progress=False)  # type: ignore[arg-type]
            if main is not None:
                reweigh(bm25, main)
            bm25.save(str(folder), show_progress=False)
        np.save(folder / IDS, np.array(self.chunk_ids, dtype=str))
        venues, years, authors = filter_arrays(self.metas)
        np.save(folder / VENUES, venues)
        np.save(folder / YEARS, years)
        np.save(folder / AUTHORS, authors)
        if main is not None:
            rows = {"chunk_ids": self.chunk_ids, "meta": self.metas, "texts": self.texts}
            (folder / ROWS).write_text(json.dumps(rows))
        return self.metas


def filter_arrays(metas: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each chunk's venue (lower-cased), year (0 when unknown) and authors (lower-cased), as searches filter on
    them."""
    import numpy as np

    venues = np.array([(m.get("venue") or "").lower() for m in metas], dtype=str)
    authors = np.array([(m.get("authors") or "").lower() for m in metas], dtype=str)
    return venues, np.array([int(m.get("year") or 0) for m in metas], dtype=np.int32), authors


def lean_csc(data: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> tuple:
    """bm25s's column-sorted (CSC) score arrays, built without its packed 64-bit sort keys and their temporaries
    (a third of the peak memory of a large rebuild): the rows come in order, so a stable sort by column is enough."""
    import numpy as np

    order = np.argsort(cols, kind="stable")
    indptr = np.zeros(shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=shape[1]), out=indptr[1:])
    return data[order], rows[order], indptr


def reweigh(delta: bm25s.BM25, main: Segment) -> None:
    """Give the delta's precomputed scores the idf of both segments together instead of the delta's alone (a word
    rare in the delta but common in the index would otherwise outweigh everything the main segment scores)."""

    scores = delta.scores
    pointers, data = scores["indptr"], scores["data"]
    documents = scores["num_docs"] + len(main.chunk_ids)
    for word, i in delta.vocab_dict.items():
        here = int(pointers[i + 1] - pointers[i]) if i + 1 < len(pointers) else 0
        if here:
            both = idf(here + main.frequency(word), documents)
            data[pointers[i] : pointers[i + 1]] *= both / idf(here, scores["num_docs"])


@dataclass
class KeywordIndex:
    """BM25 over every chunk: a main segment, rebuilt from the whole collection, and a small delta segment that new
    chunks are appended to, so that adding a few papers to a large index does not rebuild it. The delta is folded
    into the main segment by the next full rebuild (when it outgrows DELTA_MIN / DELTA_SHARE, or papers are changed
    or removed). Both live in one folder that is swapped into place as a whole (the main segment's files are hard
    links, so appending does not copy them)."""

    segments: list[Segment]
    manifest: dict[str, Any]

    @classmethod
    def build(cls, rows: Iterable[Row], folder: Path) -> dict[str, Any]:
        """Index every (chunk id, text, metadata) row into folder, replacing what was there; returns the manifest."""
        return cls.save(SegmentBuilder.of(rows), folder)

    @classmethod
    def save(cls, builder: SegmentBuilder, folder: Path) -> dict[str, Any]:
        """Write the rows a builder holds as the whole index, replacing what was in folder; returns the manifest."""
        tmp = _fresh(folder)
        metas = builder.write(tmp / MAIN)
        manifest = _manifest(metas)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        _swap_into_place(tmp, folder)
        return manifest

    @classmethod
    def append(cls, rows: list[Row], folder: Path) -> dict[str, Any] | None:
        """Add the rows of new papers to the delta segment; returns the manifest, or None when a full rebuild is
        due instead (no main segment, or the delta would outgrow its limit)."""
        manifest = read_manifest(folder)
        try:
            main = Segment.load(folder / MAIN)
            old = json.loads((folder / DELTA / ROWS).read_text()) if (folder / DELTA).exists() else None
        except DAMAGED:
            return None
        delta = list(zip(old["chunk_ids"], old["texts"], old["meta"], strict=True)) if old else []
        if manifest is None or len(delta) + len(rows) > max(DELTA_MIN, DELTA_SHARE * len(main.chunk_ids)):
            return None
        tmp = _fresh(folder)
        (tmp / MAIN).mkdir(parents=True)
        for path in (folder / MAIN).iterdir():
            os.link(path, tmp / MAIN / path.name)
        metas = SegmentBuilder.of(delta + rows, keep_texts=True).write(tmp / DELTA, main=main)
        added = paper_counts(metas[len(delta) :])  # the new rows' papers
        manifest = {
            "built": time.time_ns(),
            "chunks": manifest["chunks"] + len(rows),
            "docs": manifest["docs"] + added["docs"],
            "venues": dict(Counter(manifest["venues"]) + Counter(added["venues"])),
            "years": dict(sorted((Counter(manifest["years"]) + Counter(added["years"])).items())),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        _swap_into_place(tmp, folder)
        return manifest

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex | None:
        """The persisted index, or None when there is none (or it is empty, or damaged)."""
        manifest = read_manifest(folder)
        if manifest is None or manifest.get("chunks", 0) == 0:
            return None
        try:
            segments = [Segment.load(folder / name) for name in (MAIN, DELTA) if (folder / name).exists()]
        except DAMAGED:  # rebuilt by the caller
            return None
        index = cls([s for s in segments if s.chunk_ids], manifest)
        return index if sum(len(s.chunk_ids) for s in segments) == manifest["chunks"] else None

    def search(self, query: str, k: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """The k best (chunk id, BM25 score) pairs with a positive score, restricted by the filters."""
        tokens = tokenize([query])[0]
        found = [hit for segment in self.segments for hit in segment.search(tokens, k, filters or Filters())]
        return sorted(found, key=lambda hit: -hit[1])[:k]

    def docs_by(self, author: str) -> list[str]:
        """The ids of the papers one of whose authors' names contains `author` (any case)."""
        import numpy as np

        found = {doc_of_chunk(segment.chunk_ids[i]) for segment in self.segments
                 for i in np.flatnonzero(np.char.find(segment.authors, author.lower()) >= 0)}  # fmt: skip
        return sorted(found)

    def term_weights(self, question: str) -> dict[str, float]:
        """The question's words (as this index tokenizes them, question words left out) with their idf here."""

        total = sum(len(s.chunk_ids) for s in self.segments)
        asking = set(tokenize([" ".join(QUESTION_WORDS)])[0])
        words = dict.fromkeys(w for w in tokenize([question])[0] if w not in asking)
        return {word: idf(sum(s.frequency(word) for s in self.segments), total) for word in words}


def rebuild_keyword_index(collection: Collection, settings: Settings) -> dict:
    """Build the keyword index anew from every chunk of the collection; its manifest."""
    return KeywordIndex.build(store.iter_chunks(collection), settings.keyword_dir)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest, or None when it is missing or unreadable (the index is then rebuilt from the collection)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    needed = {"chunks": int, "docs": int, "venues": dict, "years": dict}
    ok = isinstance(manifest, dict) and all(isinstance(manifest.get(k), t) for k, t in needed.items())
    return manifest if ok else None


def _manifest(metas: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "built": time.time_ns(),  # tells a long-running process that the index on disk was rebuilt
        "chunks": len(metas),
        **paper_counts(metas),
    }


def paper_counts(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """Abstracts, venues and years of chunk (or paper) metadata: each paper counted once."""
    first_chunks = {m["doc_id"]: m for m in metas}
    return {
        "docs": len(first_chunks),
        "venues": dict(Counter(m.get("venue") or "unknown" for m in first_chunks.values()).most_common()),
        "years": dict(sorted(Counter(str(m.get("year") or "unknown") for m in first_chunks.values()).items())),
    }


def _fresh(folder: Path) -> Path:
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def _swap_into_place(tmp: Path, folder: Path) -> None:
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
