"""What the corpus readers share: the problem record, the id of a record without one, and field parsers."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.text import stored_text

ID_KINDS = ("doi", "pmid", "arxiv", "openalex", "zotero")  # a paper's ids, in the order of the doc_id precedence


@dataclass(frozen=True)
class Problem:
    source: str  # "file:line"
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"

    def short(self) -> str:
        """The problem with the file's name only (not its folder): "papers.jsonl:3: malformed JSON"."""
        file, _, line = self.source.rpartition(":")
        return f"{Path(file).name}:{line}: {self.reason}"


def text_hash_id(text: str) -> str:
    """The stable id of a record that has no doc_id: a hash of its whitespace-normalised text."""
    normalised = " ".join(text.split())
    return "sha256:" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:16]


def parse_year(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year = int(str(value).strip())
    if not 1000 <= year <= 9999:
        raise ValueError(value)
    return year


def optional_str(value: Any) -> str | None:
    text = stored_text(str(value)).strip() if value is not None else ""
    return text or None


def split_list(value: Any, separators: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else re.split(separators, str(value))
    return tuple(s for s in (stored_text(str(item)).strip() for item in items) if s)
