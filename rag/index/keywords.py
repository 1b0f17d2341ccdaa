"""The keyword index: BM25 (bm25s) over the same chunks as the vector store, persisted beside it.

An ingest into an empty index builds it from the batches it writes (tokenized as they are written); an ingest that
only adds papers appends their chunks to a small delta segment (seconds, whatever the size of the index); changes,
removals and a delta grown past its limit rebuild it from the collection. Every write goes to a
temporary folder that then replaces the old one, so a reader never sees half an index. Filters are applied per
query as a bm25s weight mask; each segment scores with its own idf, which for a delta of at most a tenth of the
index shifts scores slightly, not rankings much. The manifest (venues, years, counts) also answers `rag stats`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rag.index.postings import Postings, Spill
from rag.records import doc_of_chunk
from rag.terms import idf, tokenize, weighed_words

if TYPE_CHECKING:
    import numpy as np

    from rag.settings import Settings

MANIFEST = "manifest.json"
ROWS = "chunks.json"  # the delta segment's rows (ids, texts, metadata): it is indexed again with the next ones
IDS, YEARS = "chunk_ids.json", "years.npy"  # per chunk, in index order
VENUES, VENUE_CODES = "venues.json", "venue_codes.npy"  # distinct venues (lower-cased), and each chunk's
AUTHORS, AUTHOR_CODES = "authors.txt", "author_codes.npy"  # distinct author lists (lower-cased), and each chunk's
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


@dataclass(frozen=True)
class Names:
    """Distinct lower-cased strings (venues, author lists) that chunks point at by number: a paper's thousand
    authors are kept once, not once per chunk and padded to the longest list as a NumPy string array would."""

    names: list[str]

    @cached_property
    def _text(self) -> tuple[str, np.ndarray]:
        import numpy as np

        starts = np.zeros(len(self.names) + 1, dtype=np.int64)
        np.cumsum([len(name) + 1 for name in self.names], out=starts[1:])
        return "\n".join(self.names), starts

    def equal_to(self, value: str) -> list[int]:
        wanted = value.lower()
        return [i for i, name in enumerate(self.names) if name == wanted]

    def containing(self, part: str) -> np.ndarray:
        """The numbers of the names that contain part (any case)."""
        import numpy as np

        text, starts = self._text
        part = part.lower().replace("\n", " ")
        hits = [m.start() for m in re.finditer(re.escape(part), text)] if part else []
        return np.unique(np.searchsorted(starts, np.array(hits, dtype=np.int64), side="right") - 1)


@dataclass(frozen=True)
class Scores:
    """A segment's BM25 scores as bm25s saves them: for each word (a column), the chunks that hold it and its score
    in each. Read and summed here as bm25s does, without importing bm25s, which imports scipy: a fifth of a second
    of every cold search."""

    data: np.ndarray  # per (word, chunk) pair, column by column
    indices: np.ndarray  # the chunk of each pair
    indptr: np.ndarray  # where each word's column starts
    vocab: dict[str, int]
    chunks: int

    @classmethod
    def load(cls, folder: Path) -> Scores:
        import numpy as np

        data, indices, indptr = (np.load(folder / f"{name}.csc.index.npy", mmap_mode="r")
                                 for name in ("data", "indices", "indptr"))  # fmt: skip
        words = len(indptr) - 1  # bm25s's vocabulary also names the empty word, which has no column
        vocab = {w: i for w, i in json.loads((folder / "vocab.index.json").read_text(encoding="utf-8")).items()
                 if i < words}  # fmt: skip
        chunks = int(json.loads((folder / "params.index.json").read_text())["num_docs"])
        return cls(data, indices, indptr, vocab, chunks)

    def frequency(self, word: str) -> int:
        """How many chunks contain the word."""
        i = self.vocab.get(word)
        return 0 if i is None else int(self.indptr[i + 1] - self.indptr[i])

    def of(self, words: list[str]) -> np.ndarray | None:
        """Each chunk's score for the words (a word given twice counts twice), or None when none is indexed."""
        import numpy as np

        columns = [self.vocab[word] for word in words if word in self.vocab]
        if not columns:
            return None
        scores = np.zeros(self.chunks, dtype=np.float32)
        for i in columns:
            start, end = self.indptr[i], self.indptr[i + 1]
            scores[self.indices[start:end]] += self.data[start:end]  # a column names each chunk once
        return scores


@dataclass
class Segment:
    """One BM25 index over some of the chunks, with each chunk's venue, year and authors for filtering."""

    scores: Scores
    chunk_ids: list[str]
    venues: Names
    venue_codes: np.ndarray  # per chunk
    years: np.ndarray  # per chunk, 0 when unknown
    authors: Names
    author_codes: np.ndarray  # per chunk

    @classmethod
    def load(cls, folder: Path) -> Segment:
        import numpy as np

        return cls(
            Scores.load(folder),
            json.loads((folder / IDS).read_text()),
            Names(json.loads((folder / VENUES).read_text())),
            np.load(folder / VENUE_CODES),
            np.load(folder / YEARS),
            Names((folder / AUTHORS).read_text().split("\n")),
            np.load(folder / AUTHOR_CODES),
        )

    def frequency(self, word: str) -> int:
        """How many of this segment's chunks contain the word."""
        return self.scores.frequency(word)

    def mask(self, filters: Filters) -> np.ndarray:
        """1 for each chunk the filters let through, else 0."""
        import numpy as np

        mask = np.ones(len(self.chunk_ids), dtype=np.float32)
        if filters.venue:
            mask *= np.isin(self.venue_codes, self.venues.equal_to(filters.venue))
        if filters.years:
            mask *= (self.years >= filters.years[0]) & (self.years <= filters.years[1])
        if filters.author:
            mask *= np.isin(self.author_codes, self.authors.containing(filters.author))
        return mask

    def by_author(self, author: str) -> list[str]:
        """The chunks one of whose authors' names contains `author` (any case)."""
        import numpy as np

        return [self.chunk_ids[i] for i in np.flatnonzero(self.mask(Filters(author=author)))]

    def search(self, tokens: list[str], k: int, filters: Filters) -> list[tuple[str, float]]:
        import numpy as np

        scores = self.scores.of(tokens)
        if scores is None:
            return []
        scores *= self.mask(filters)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.chunk_ids[i], float(scores[i])) for i in top if scores[i] > 0]


class SegmentBuilder:
    """A segment's rows, tokenized as they are added: an ingest adds each batch it writes, so that the keyword
    index of a new collection is built without reading every chunk back from Chroma. Memory holds about 30 bytes
    per chunk: its words, id and author list are spilled to disk (rag.index.postings) until `write`; the texts
    are kept only with `keep_texts`, for the delta segment."""

    def __init__(self, keep_texts: bool = False, workdir: Path | None = None) -> None:
        self.vocab: dict[str, int] = {}
        self.spill = Spill(workdir)
        self.postings = Postings(self.spill)
        self._venues: dict[str, int] = {}
        self._authors: tuple[str, int] = ("", -1)  # the last author list spilled, and its number
        self.papers = array("q")  # per chunk, a 64-bit hash of its paper's id
        self.columns = {name: array("i") for name in ("venue", "year", "authors")}  # per chunk
        self.rows: list[Row] | None = [] if keep_texts else None

    @classmethod
    def of(cls, rows: Iterable[Row], keep_texts: bool = False, slice_rows: int = SLICE,
           workdir: Path | None = None) -> SegmentBuilder:  # fmt: skip
        """A builder given every row, read and tokenized `slice_rows` at a time: a rebuild then holds one slice's
        texts rather than the whole collection's."""
        builder, remaining = cls(keep_texts, workdir), iter(rows)
        while piece := list(islice(remaining, slice_rows)):
            builder.add(piece)
        return builder

    def __len__(self) -> int:
        return len(self.papers)

    def add(self, rows: list[Row]) -> None:
        vocab, columns, ids = self.vocab, self.columns, self.spill.file("chunk_ids")
        for chunk_id, _, meta in rows:
            ids.write(json.dumps(chunk_id).encode() + b"\n")
            self.papers.append(_hash(meta.get("doc_id") or ""))
            columns["venue"].append(self._venues.setdefault(meta.get("venue") or "", len(self._venues)))
            columns["year"].append(int(meta.get("year") or 0))
            columns["authors"].append(self._author_number((meta.get("authors") or "").lower().replace("\n", " ")))
        words = tokenize([text for _, text, _ in rows])
        self.postings.add([array("i", [vocab.setdefault(word, len(vocab)) for word in chunk]) for chunk in words])
        if self.rows is not None:
            self.rows += [(cid, text, {k: meta.get(k) for k in PAPER_FIELDS}) for cid, text, meta in rows]

    def _author_number(self, authors: str) -> int:
        """A chunk's author list as a number: a paper's chunks come together, so a list is spilled once per run of
        chunks that share it."""
        last, number = self._authors
        if authors != last or number < 0:
            number += 1
            self.spill.file("authors").write(("\n" if number else "").encode() + authors.encode())
            self._authors = (authors, number)
        return number

    def write(self, folder: Path, main: Segment | None = None) -> None:
        """Index the rows into folder. With `main` (for the delta segment), words are weighted by their rarity in
        both segments, so that scores compare with the main segment's, and the rows are kept (the delta is
        indexed again with the next rows)."""
        import bm25s
        import numpy as np
        from bm25s.scoring import _select_tfc_scorer

        folder.mkdir(parents=True)
        bm25 = bm25s.BM25()
        self.postings.flush()
        frequencies = np.frombuffer(self.postings.frequencies, dtype=np.int64).copy()
        frequencies.resize(len(self.vocab))
        documents = len(self)
        if main is not None:
            frequencies += np.array([main.frequency(word) for word in self.vocab], dtype=np.int64)
            documents += len(main.chunk_ids)
        weights = np.array([idf(frequency, documents) for frequency in frequencies.tolist()], dtype=np.float32)
        tfc = partial(_select_tfc_scorer(bm25.method), k1=bm25.k1, b=bm25.b, delta=bm25.delta)
        self.postings.write(folder, len(self.vocab), weights, tfc)
        params = {"k1": bm25.k1, "b": bm25.b, "delta": bm25.delta, "method": bm25.method,
                  "idf_method": bm25.idf_method, "dtype": bm25.dtype, "int_dtype": bm25.int_dtype,
                  "num_docs": len(self), "version": bm25s.__version__, "backend": bm25.backend}  # fmt: skip
        (folder / "params.index.json").write_text(json.dumps(params, indent=4))  # as bm25s.BM25.save writes them
        vocab = self.vocab if "" in self.vocab else {**self.vocab, "": len(self.vocab)}  # bm25s's empty word
        (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        self._write_columns(folder)
        if self.rows is not None:
            rows = {"chunk_ids": [r[0] for r in self.rows], "texts": [r[1] for r in self.rows],
                    "meta": [r[2] for r in self.rows]}  # fmt: skip
            (folder / ROWS).write_text(json.dumps(rows))
        self.spill.close()

    def _write_columns(self, folder: Path) -> None:
        import numpy as np

        with (folder / IDS).open("wb") as out:  # a JSON list, written line by line from the spill
            out.write(b"[")
            for i, line in enumerate(self.spill.read_back("chunk_ids")):
                out.write((b"," if i else b"") + line.rstrip(b"\n"))
            out.write(b"]")
        with (folder / AUTHORS).open("wb") as out:
            shutil.copyfileobj(self.spill.read_back("authors"), out)
        (folder / VENUES).write_text(json.dumps([venue.lower() for venue in self._venues]))
        for name, column in ((VENUE_CODES, "venue"), (YEARS, "year"), (AUTHOR_CODES, "authors")):
            np.save(folder / name, np.frombuffer(self.columns[column], dtype=np.int32))

    def paper_counts(self, since: int = 0) -> dict[str, Any]:
        """Abstracts, venues and years of the papers of the chunks from `since` on, each paper counted once (by
        the last of its chunks)."""
        import numpy as np

        papers = np.frombuffer(self.papers, dtype=np.int64)[since:]
        _, first_from_end = np.unique(papers[::-1], return_index=True)
        last = since + len(papers) - 1 - first_from_end
        venue_names, venues, years = list(self._venues), self.columns["venue"], self.columns["year"]
        return count_papers((venue_names[venues[i]], years[i]) for i in last)


def _hash(doc_id: str) -> int:
    """A paper's id in 8 bytes (for counting papers: two ids share one with odds of about 1 in 10^19)."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode(), digest_size=8).digest(), "little", signed=True)


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
        return cls.save(SegmentBuilder.of(rows, workdir=folder.parent), folder)

    @classmethod
    def save(cls, builder: SegmentBuilder, folder: Path) -> dict[str, Any]:
        """Write the rows a builder holds as the whole index, replacing what was in folder; returns the manifest."""
        tmp = _fresh(folder)
        builder.write(tmp / MAIN)
        manifest = {
            "built": time.time_ns(),  # tells a long-running process that the index on disk was rebuilt
            "chunks": len(builder),
            **builder.paper_counts(),
        }
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
        builder = SegmentBuilder.of(delta + rows, keep_texts=True, workdir=folder.parent)
        builder.write(tmp / DELTA, main=main)
        added = builder.paper_counts(since=len(delta))  # the new rows' papers
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
        return sorted({doc_of_chunk(chunk) for segment in self.segments for chunk in segment.by_author(author)})

    def term_weights(self, question: str) -> dict[str, float]:
        """The question's words (as this index tokenizes them, question words left out) with their idf here."""
        total = sum(len(s.chunk_ids) for s in self.segments)
        return {word: idf(sum(s.frequency(word) for s in self.segments), total) for word in weighed_words(question)}


class ChunkSource(Protocol):
    def iter_chunks(self) -> Iterator[Row]: ...


def rebuild_keyword_index(chunks: ChunkSource, settings: Settings) -> dict:
    """Build the keyword index anew from every chunk of the collection; its manifest."""
    return KeywordIndex.build(chunks.iter_chunks(), settings.keyword_dir)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest, or None when it is missing or unreadable (the index is then rebuilt from the collection)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    needed = {"chunks": int, "docs": int, "venues": dict, "years": dict}
    ok = isinstance(manifest, dict) and all(isinstance(manifest.get(k), t) for k, t in needed.items())
    return manifest if ok else None


def paper_counts(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """Abstracts, venues and years of paper metadata, each paper counted once."""
    papers = {m["doc_id"]: m for m in metas}
    return count_papers((m.get("venue"), m.get("year")) for m in papers.values())


def count_papers(papers: Iterable[tuple[str | None, int | None]]) -> dict[str, Any]:
    """The manifest's counts of papers given as (venue, year): how many, by venue and by year."""
    venues: Counter[str] = Counter()
    years: Counter[str] = Counter()
    for venue, year in papers:
        venues[venue or "unknown"] += 1
        years[str(year or "unknown")] += 1
    return {"docs": venues.total(), "venues": dict(venues.most_common()), "years": dict(sorted(years.items()))}


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
