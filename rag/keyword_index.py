"""The keyword index: BM25 (bm25s) over the same chunks as the vector store, persisted beside it.

It is rebuilt from the collection after every ingest (a few seconds for thousands of chunks) and written to a
temporary folder that replaces the old one, so a reader never sees half an index. Filters are applied per query
as a bm25s weight mask. The manifest it keeps (venues, years, counts) also answers `rag stats` cheaply.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import bm25s
    import numpy as np

MANIFEST = "manifest.json"
ROWS = "chunks.json"


def _tokenize(texts: list[str], return_ids: bool) -> Any:
    import bm25s
    import Stemmer

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=return_ids, show_progress=False
    )


def tokenize(texts: list[str]) -> list[list[str]]:
    """Each text's words as the index sees them: lower-cased, stemmed, without English stop words."""
    return _tokenize(texts, return_ids=False)


@dataclass
class KeywordIndex:
    bm25: bm25s.BM25
    chunk_ids: list[str]
    venues: np.ndarray  # per chunk, lower-cased
    years: np.ndarray  # per chunk, 0 when unknown
    manifest: dict[str, Any]

    @classmethod
    def build(cls, rows: Iterable[tuple[str, str, dict[str, Any]]], folder: Path) -> dict[str, Any]:
        """Index (chunk id, text, metadata) rows into folder; returns the manifest."""
        import bm25s

        chunk_ids, texts, metas = [], [], []
        for chunk_id, text, meta in rows:
            chunk_ids.append(chunk_id)
            texts.append(text)
            metas.append({k: meta.get(k) for k in ("doc_id", "venue", "year", "title")})
        manifest = _manifest(metas)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if chunk_ids:
            bm25 = bm25s.BM25()
            bm25.index(_tokenize(texts, return_ids=True), show_progress=False)
            bm25.save(str(tmp), show_progress=False)
        (tmp / ROWS).write_text(json.dumps({"chunk_ids": chunk_ids, "meta": metas}))
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        _swap_into_place(tmp, folder)
        return manifest

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex | None:
        """The persisted index, or None when there is none (or it is empty)."""
        import bm25s
        import numpy as np

        manifest = read_manifest(folder)
        if manifest is None or manifest.get("chunks", 0) == 0:
            return None
        try:
            rows = json.loads((folder / ROWS).read_text())
            metas = rows["meta"]
            index = cls(
                bm25=bm25s.BM25.load(str(folder), mmap=True),
                chunk_ids=rows["chunk_ids"],
                venues=np.array([(m.get("venue") or "").lower() for m in metas]),
                years=np.array([int(m.get("year") or 0) for m in metas]),
                manifest=manifest,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # damaged files: rebuilt by the caller
            return None
        return index if len(index.chunk_ids) == manifest["chunks"] else None

    def search(self, query: str, k: int, venue: str | None = None, year: int | None = None) -> list[tuple[str, float]]:
        """The k best (chunk id, BM25 score) pairs with a positive score, restricted by the filters."""
        import numpy as np

        tokens = tokenize([query])[0]
        token_ids = self.bm25.get_tokens_ids(tokens)
        if not token_ids:
            return []
        mask = np.ones(len(self.chunk_ids), dtype=np.float32)
        if venue:
            mask *= self.venues == venue.lower()
        if year:
            mask *= self.years == year
        scores = self.bm25.get_scores_from_ids(token_ids, weight_mask=mask)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.chunk_ids[i], float(scores[i])) for i in top if scores[i] > 0]

    def term_weights(self, question: str) -> dict[str, float]:
        """The question's words (as this index tokenizes them, question words left out) with their idf here."""
        import numpy as np

        from rag.relevance import idf
        from rag.text import QUESTION_WORDS

        pointers = np.asarray(self.bm25.scores["indptr"])
        vocabulary = self.bm25.vocab_dict
        asking = set(tokenize([" ".join(QUESTION_WORDS)])[0])
        weights = {}
        for word in dict.fromkeys(w for w in tokenize([question])[0] if w not in asking):
            i = vocabulary.get(word)
            frequency = int(pointers[i + 1] - pointers[i]) if i is not None and i + 1 < len(pointers) else 0
            weights[word] = idf(frequency, len(self.chunk_ids))
        return weights


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


def _swap_into_place(tmp: Path, folder: Path) -> None:
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
