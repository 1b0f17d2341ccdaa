"""The retrieved abstract as answering numbers, reads and checks it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Source:
    """A retrieved abstract as the answerer numbers it (n counts from 1 in retrieval order)."""

    n: int
    doc_id: str
    abstract: str
    venue: str | None = None
    year: int | None = None
    title: str | None = None
    url: str | None = None
    passage: str = ""  # the best-matching chunk, as retrieved
    key_passage: str = ""  # what the prompt shows of it: its key sentences for the question (see focus)
    spans: list[tuple[int, int]] = field(default_factory=list)  # its sentences' character spans
    sentences: list[str] = field(default_factory=list)  # withheld ones (instructions) are empty
    vectors: np.ndarray | None = None
    checkable: str = ""  # the abstract with withheld sentences blanked out (same length, same offsets)
    authors: tuple[str, ...] = ()
