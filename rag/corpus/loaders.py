"""Corpus files -> Paper records.

Formats (docs/contracts.md): the seeds' text format (.txt: a "VENUE YEAR ..." header line, then one abstract per
non-empty line), JSONL, CSV and BibTeX. A file that cannot be read at all (missing, empty, binary, unknown type) raises
BadInput before anything is written; a bad record is reported as a Problem with file and line, and the rest of
the file still loads.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.errors import BadInput
from rag.records import Paper
from rag.text import stored_text

SUFFIXES = {".txt": "seeds", ".jsonl": "jsonl", ".csv": "csv", ".bib": "bibtex"}
HEADER = re.compile(r"^\s*(?P<venue>[A-Za-z][\w&.\- ]*?)\s+(?P<year>(?:19|20)\d{2})\b")


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


@dataclass
class LoadResult:
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def take_papers(self) -> list[Paper]:
        """The papers, which this result then no longer holds: whoever takes them can free each once it is used."""
        papers, self.papers = self.papers, []
        return papers


def text_hash_id(text: str) -> str:
    """The stable id of a record that has no doc_id: a hash of its whitespace-normalised text."""
    normalised = " ".join(text.split())
    return "sha256:" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:16]


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders (recursively, supported types only); explicitly named files must be supported."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise BadInput(f"{path}: no such file or folder")
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.startswith(".")
            )
            if not found:
                raise BadInput(f"{path}: no corpus files ({', '.join(SUFFIXES)}) in this folder")
            files.extend(found)
        elif path.suffix.lower() not in SUFFIXES:
            raise BadInput(f"{path}: unsupported file type; use one of {', '.join(SUFFIXES)}")
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if not data.strip():
        raise BadInput(f"{path}: the file is empty")
    if b"\x00" in data[:8192]:
        raise BadInput(f"{path}: not a text file (binary content)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text (byte {exc.start})") from None


MAX_ABSTRACT_CHARS = 100_000  # abstracts run to a few thousand characters; a longer record is not one


def load_corpus(paths: Iterable[str | Path], max_abstract_chars: int = MAX_ABSTRACT_CHARS) -> LoadResult:
    """Load every file; raises BadInput for unreadable files, collects record problems (an abstract longer than
    `max_abstract_chars` is one)."""
    result = LoadResult(files=collect_files(paths))
    texts = {path: read_text(path) for path in result.files}  # validate every file before parsing any
    seen: dict[str, str] = {}
    for path, text in texts.items():
        for item in PARSERS[SUFFIXES[path.suffix.lower()]](path, text):
            if isinstance(item, Paper) and len(item.abstract) > max_abstract_chars:
                limit = f"the limit is {max_abstract_chars:,} (RAG_MAX_ABSTRACT_CHARS)"
                item = Problem(item.source, f"the abstract has {len(item.abstract):,} characters; {limit}")
            if isinstance(item, Problem):
                result.problems.append(item)
            elif item.doc_id in seen:
                result.problems.append(
                    Problem(item.source, f"duplicate doc_id {item.doc_id!r} (first at {seen[item.doc_id]})")
                )
            else:
                seen[item.doc_id] = item.source
                result.papers.append(item)
    return result


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file of trusted data (a dataset of the project's; corpus files go through
    `load_corpus`, which reports bad lines)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def parse_seeds(path: Path, text: str) -> Iterator[Paper | Problem]:
    lines = text.splitlines()
    header = HEADER.match(lines[0])
    if header is None:
        raise BadInput(f"{path}:1: expected a header line such as 'ICML 2024 Papers'")
    venue, year = header["venue"].strip(), int(header["year"])
    n = 0
    for lineno, line in enumerate(lines[1:], start=2):
        abstract = stored_text(line).strip()
        if abstract:
            n += 1
            yield Paper(
                doc_id=f"{path.stem}#{n}",
                abstract=abstract,
                venue=venue,
                year=year,
                source=f"{path}:{lineno}",
            )


def parse_jsonl(path: Path, text: str) -> Iterator[Paper | Problem]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Problem(source, f"malformed JSON ({exc.msg})")
            continue
        except RecursionError:
            yield Problem(source, "malformed JSON (nested too deeply)")
            continue
        if not isinstance(record, dict):
            yield Problem(source, "expected a JSON object")
            continue
        yield record_to_paper(record, source)


def parse_csv(path: Path, text: str) -> Iterator[Paper | Problem]:
    reader = csv.DictReader(io.StringIO(text))
    columns = {c.strip().lower() for c in reader.fieldnames or []}
    if not columns & {"abstract", "text"}:
        raise BadInput(f"{path}:1: the CSV header needs an 'abstract' or 'text' column")
    line_of_row = 2
    for row in reader:
        record = {(k or "").strip().lower(): v for k, v in row.items() if k is not None}
        if None in row:
            yield Problem(f"{path}:{line_of_row}", "more fields than the header has columns")
        else:
            yield record_to_paper(record, f"{path}:{line_of_row}")
        line_of_row = reader.line_num + 1


def parse_bibtex(path: Path, text: str) -> Iterator[Paper | Problem]:
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # failures are reported as Problems below
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    for block in library.failed_blocks:
        lines = [line.strip() for line in str(getattr(block, "error", "")).splitlines() if line.strip()]
        reason = f" ({lines[-1]})" if lines else ""
        yield Problem(f"{path}:{block.start_line + 1}", f"malformed BibTeX entry{reason}")
    if not library.entries and not library.failed_blocks:
        yield Problem(f"{path}:1", "no BibTeX entries found")
    for entry in library.entries:
        record = {name.lower(): clean_latex(str(f.value)) for name, f in entry.fields_dict.items()}
        record.setdefault("doc_id", entry.key)
        record["authors"] = record.pop("author", None)
        yield record_to_paper(record, f"{path}:{entry.start_line + 1}")


def clean_latex(value: str) -> str:
    return " ".join(value.replace("{", "").replace("}", "").split())


def record_to_paper(record: dict[str, Any], source: str) -> Paper | Problem:
    abstract = record.get("abstract") or record.get("text")
    if not isinstance(abstract, str) or not stored_text(abstract).strip():
        return Problem(source, "record has no abstract or text")
    abstract = stored_text(abstract).strip()
    try:
        year = parse_year(record.get("year"))
    except ValueError:
        return Problem(source, f"year {record.get('year')!r} is not a year")
    doc_id = str(record.get("doc_id") or "").strip() or text_hash_id(abstract)
    return Paper(
        doc_id=doc_id,
        abstract=abstract,
        title=optional_str(record.get("title")),
        authors=split_list(record.get("authors"), r"\s+and\s+|;"),
        venue=optional_str(record.get("venue")),
        year=year,
        url=optional_str(record.get("url")),
        keywords=split_list(record.get("keywords"), r"[;,]"),
        source=source,
    )


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


PARSERS = {"seeds": parse_seeds, "jsonl": parse_jsonl, "csv": parse_csv, "bibtex": parse_bibtex}
