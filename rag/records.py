"""The records that flow between stages: papers, chunks, search results and answers.

The JSON contracts of docs/contracts.md (`rag search --json`, `rag ask --json`) are built from these dataclasses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from rag.settings import Mode

CHUNK_SEPARATOR = "::"  # a chunk's id is "<doc_id>::<n>" (docs/contracts.md)


def chunk_id(doc_id: str, index: int) -> str:
    """The id of an abstract's `index`-th chunk."""
    return f"{doc_id}{CHUNK_SEPARATOR}{index}"


def doc_of_chunk(chunk: str) -> str:
    """The document id of a chunk id (document ids may themselves hold the separator)."""
    return chunk.rsplit(CHUNK_SEPARATOR, 1)[0]


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
    doi: str | None = None  # bare and lower-cased: "10.1234/abc"
    identifiers: tuple[str, ...] = ()  # every id of the record, prefixed ("doi:...", "pmid:..."), doc_id included
    collections: tuple[str, ...] = ()  # the Zotero collections the paper is in


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
        return chunk_id(self.doc_id, self.index)


@dataclass(frozen=True)
class Query:
    """A question and how to look for it: how many abstracts (None: the configured number), the venue and year
    filters and the retriever mode. One value from the front ends down to the retriever."""

    text: str
    k: int | None = None
    venue: str | None = None
    year: int | None = None
    mode: Mode = "hybrid"
    year_to: int | None = None  # with `year`, a range of years (inclusive); alone, up to that year
    author: str | None = None  # a name (or part of one) that one of the paper's authors has, any case
    anyway: bool = False  # answer from the closest papers where the refusal gate would refuse (still verified)

    @classmethod
    def of(cls, query: Query | str) -> Query:
        """A Query for a plain question (defaults for the rest), or the query itself."""
        return query if isinstance(query, Query) else cls(query)

    def about(self, text: str) -> Query:
        """The same search for another question (a chat's standalone rewrite)."""
        return replace(self, text=text)


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
        """The `rag search --json` result shape of docs/contracts.md, exactly."""
        return {
            "rank": self.rank,
            "doc_id": self.doc_id,
            "score": round(float(self.score), 6),
            "venue": self.venue,
            "year": self.year,
            "title": self.title,
            "text": self.text,
        }


@dataclass
class Citation:
    """One numbered source of an answer, with the verbatim sentence of its abstract that supports the claim."""

    n: int
    doc_id: str
    venue: str | None
    year: int | None
    title: str | None
    quote: str
    url: str | None
    authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class NearestPaper:
    """A paper that came closest to a refused question: shown to help ask again, never as support."""

    doc_id: str
    title: str | None
    venue: str | None
    year: int | None
    url: str | None
    sentence: str  # the abstract's sentence closest to the question, verbatim
    terms: list[str]  # its words (and the title's) that the question did not use, rarest first


# Why a sentence was dropped. Presenters read the kind; `reason` is its wording for readers (docs/contracts.md).
DropKind = Literal["unsupported", "contradicted", "off_topic", "too_short", "instruction"]


@dataclass
class DroppedSentence:
    text: str
    reason: str
    quote: str | None = None  # when a cited abstract contradicts it: that abstract's words
    doc_id: str | None = None  # and that abstract
    kind: DropKind = "unsupported"
    detail: str | None = None  # what the exact checks found, when they decided ("the abstract never claims 'every'")

    @property
    def why(self) -> str:
        """Why it was removed, for readers: the contradicting words, what the checks found, or the reason."""
        return f"{self.reason}: “{self.quote}”" if self.quote else self.detail or self.reason


# Removed sentences shown to readers (collapsed, apart from the answer); instructions and fragments are only counted.
REMOVALS_SHOWN: tuple[DropKind, ...] = ("unsupported", "contradicted", "off_topic")


@dataclass
class AnswerSentence:
    """One sentence of an answer as shown: verified (with its citation numbers) or, with RAG_UNVERIFIED=show, a
    sentence no abstract could be confirmed to support, shown without citations and with the reason."""

    text: str
    verified: bool = True
    citations: list[int] = field(default_factory=list)
    reason: str | None = None


@dataclass
class VerifierReport:
    """What the verifier did to an answer: sentences kept, re-attributed and dropped (with reasons), and whether
    the answer fell back to verbatim sentences."""

    kept: int = 0
    reattributed: int = 0
    dropped: int = 0
    unverified: int = 0  # shown without citations (RAG_UNVERIFIED=show)
    dropped_sentences: list[DroppedSentence] = field(default_factory=list)
    fallback: Literal["extractive"] | None = None


@dataclass
class Answer:
    question: str
    answer: str
    refused: bool
    citations: list[Citation]
    backend: str
    timings_ms: dict[str, float]
    verifier: VerifierReport = field(default_factory=VerifierReport)
    note: str | None = None
    standalone_question: str | None = None  # the follow-up rewritten to stand alone, in a chat
    abstracts: dict[str, str] = field(default_factory=dict)  # cited doc_id -> full abstract, for presenters
    sentences: list[AnswerSentence] = field(default_factory=list)  # the answer sentence by sentence
    nearest: list[NearestPaper] = field(default_factory=list)  # with a refusal: the papers that came closest
    searched: list[str] = field(default_factory=list)  # what was searched for: the question, then its rewrites

    @property
    def removed(self) -> list[DroppedSentence]:
        """The sentences the verifier removed that readers are shown apart from the answer, never silently gone."""
        return [d for d in self.verifier.dropped_sentences if d.kind in REMOVALS_SHOWN]

    @property
    def unverified_sentences(self) -> set[str]:
        """The texts of the sentences shown without citations (RAG_UNVERIFIED=show)."""
        return {s.text for s in self.sentences if not s.verified}

    def contract(self) -> dict[str, Any]:
        """The `rag ask --json` shape of docs/contracts.md: the design's fields, the verifier's report, any note,
        and the standalone question when a chat rewrote the follow-up."""
        data = asdict(self)
        del data["abstracts"]
        for citation in data["citations"]:
            citation["authors"] = list(citation["authors"])  # as JSON has it
        for dropped in data["verifier"]["dropped_sentences"]:
            del dropped["kind"]  # the wording says it to readers; the JSON shape stays that of the contract
        data["timings_ms"] = {k: round(v, 1) for k, v in self.timings_ms.items()}
        if not self.standalone_question or self.standalone_question == self.question:
            del data["standalone_question"]
        return data
