"""The records that flow between stages: papers, chunks and search results."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Paper:
    doc_id: str
    abstract: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    keywords: tuple[str, ...] = ()
    source: str = ""  # "file:line", for messages


@dataclass(frozen=True)
class Chunk:
    """A window of whole sentences; abstract[start:end] == text."""

    doc_id: str
    index: int
    start: int
    end: int
    text: str

    @property
    def chunk_id(self) -> str:
        return f"{self.doc_id}::{self.index}"


@dataclass
class SearchResult:
    rank: int
    doc_id: str
    score: float
    text: str
    venue: str | None = None
    year: int | None = None
    title: str | None = None
    chunk_id: str = ""
    start: int = 0
    end: int = 0
    dense_score: float | None = None  # cosine similarity of the best dense chunk, when dense ran
    metadata: dict = field(default_factory=dict)

    def contract(self) -> dict:
        """The `rag search --json` result shape of DESIGN.md, exactly."""
        return {
            "rank": self.rank,
            "doc_id": self.doc_id,
            "score": round(float(self.score), 6),
            "venue": self.venue,
            "year": self.year,
            "title": self.title,
            "text": self.text,
        }
