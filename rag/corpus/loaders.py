"""Corpus files -> Paper records.

Formats (docs/contracts.md): the seeds' text format (.txt: a "VENUE YEAR ..." header line, then one abstract per
non-empty line), JSONL, CSV and BibTeX, read here; PubMed/MEDLINE XML, MEDLINE text, RIS, CSL-JSON, a Zotero
library, the arXiv metadata snapshot and OpenAlex works, streamed by rag/corpus/readers.py. A file's kind is told by
its content as well as its extension, and any of them may be gzipped. A file that cannot be read at all (missing,
empty, binary, unknown kind) raises BadInput before anything is written; a bad record is reported as a Problem with
file and line, and the rest of the file still loads. Records without an abstract are counted, not reported. The
same paper met twice (by DOI, PMID, arXiv or OpenAlex id, in one file or two) is one paper with merged metadata.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rag.corpus.common import ID_KINDS, Problem, optional_str, parse_year, split_list, text_hash_id
from rag.errors import BadInput
from rag.records import Paper
from rag.text import stored_text

SUFFIXES = {".txt": "seeds", ".jsonl": "jsonl", ".csv": "csv", ".bib": "bibtex"}
# Extensions of the streamed kinds, for finding files in a folder (their content decides the kind: sniff).
STREAMED_SUFFIXES = (".xml", ".nbib", ".ris", ".json", ".sqlite")
KINDS = (
    "text (.txt, a venue-and-year header, an abstract a line), JSONL, CSV, BibTeX, PubMed XML, MEDLINE (.nbib), RIS, "
    "CSL-JSON, a Zotero library (zotero.sqlite), arXiv or OpenAlex JSON lines; any of them gzipped"
)
HEADER = re.compile(r"^\s*(?P<venue>[A-Za-z][\w&.\- ]*?)\s+(?P<year>(?:19|20)\d{2})\b")


@dataclass
class LoadResult:
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    no_abstract: int = 0  # records skipped for having no abstract (citations PubMed lists without one)
    merged: int = 0  # records that were a paper already met, merged into it
    deletions: set[str] = field(default_factory=set)  # ids a PubMed update file deletes ("pmid:123")
    late: list[tuple[str, Paper]] = field(default_factory=list)  # (doc_id of a paper of an earlier window, its record)

    def take_papers(self) -> list[Paper]:
        """The papers, which this result then no longer holds: whoever takes them can free each once it is used."""
        papers, self.papers = self.papers, []
        return papers


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders (recursively, the kinds that are read, gzipped or not); explicitly named files are checked
    when they are read (their content tells their kind)."""
    files: list[Path] = []
    wanted = (*SUFFIXES, *STREAMED_SUFFIXES)
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise BadInput(f"{path}: no such file or folder")
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".") and suffix_of(p) in wanted
            )
            if not found:
                raise BadInput(f"{path}: no corpus files ({', '.join(wanted)}, or gzipped) in this folder")
            files.extend(found)
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def suffix_of(path: Path) -> str:
    """The extension that tells the kind: "papers.ris.gz" -> ".ris"."""
    name = path.name.lower()
    return Path(name.removesuffix(".gz")).suffix


def kind_of(path: Path) -> str:
    """The file's kind: a streamed one by its content (rag/corpus/readers.py sniff), else by its extension;
    BadInput naming the kinds that are read."""
    from rag.corpus.readers import sniff

    kind = sniff(path) or SUFFIXES.get(suffix_of(path))
    if kind is None:
        raise BadInput(f"{path}: not a kind of file that is read; the kinds: {KINDS}")
    return kind


HEAD_BYTES = 65_536  # what is checked of a file before any is parsed


def check_text(path: Path) -> None:
    """BadInput unless the file's opening is UTF-8 text (not empty, not binary, not a damaged gzip)."""
    head = _read(path, HEAD_BYTES)
    if not head.strip():
        raise BadInput(f"{path}: the file is empty")
    if b"\x00" in head[:8192]:
        raise BadInput(f"{path}: not a text file (binary content)")
    _decoded(path, head[: len(head) - 4] if len(head) == HEAD_BYTES else head)  # a character may be cut at the end


def read_text(path: Path) -> str:
    """The whole file as text (the kinds parsed whole: seeds, CSV, BibTeX, which are small)."""
    return _decoded(path, _read(path))


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, one at a time (JSONL files may be of any size)."""
    from rag.corpus.readers import GZIP_ERRORS, open_binary

    with open_binary(path) as file:
        try:
            for lineno, raw in enumerate(file, start=1):
                yield lineno, _decoded(f"{path}:{lineno}", raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw)
        except GZIP_ERRORS as exc:
            raise BadInput(f"{path}: a damaged gzip file ({exc})") from None


def _decoded(where: Path | str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where}: not UTF-8 text (byte {exc.start})") from None


def _read(path: Path, size: int = -1) -> bytes:
    """The file's bytes (the first `size`), decompressed when it is gzipped (BadInput when the gzip is damaged)."""
    from rag.corpus.readers import GZIP_ERRORS, open_binary

    try:
        with open_binary(path) as file:
            return file.read(size)
    except GZIP_ERRORS as exc:
        raise BadInput(f"{path}: a damaged gzip file ({exc})") from None


MAX_ABSTRACT_CHARS = 100_000  # abstracts run to a few thousand characters; a longer record is not one


def load_corpus(paths: Iterable[str | Path], max_abstract_chars: int = MAX_ABSTRACT_CHARS) -> LoadResult:
    """Load every file; raises BadInput for unreadable files, collects record problems (an abstract longer than
    `max_abstract_chars` is one), counts records without an abstract and merges papers met twice."""
    corpus = Corpus.of(paths, max_abstract_chars)
    result = LoadResult(files=corpus.files)
    merger = Merger(result)
    for paper in corpus.records(result):
        merger.add(paper)
    return result


def windows(corpus: Corpus, result: LoadResult, size: int) -> Iterator[list[Paper]]:
    """The corpus's papers in windows of about `size`, merged within a window, so that a file of any size is read
    in bounded memory. A record of a paper met in an earlier window (rare: the same DOI or PMID far apart) goes to
    `result.late`, to be merged with the paper as it was stored."""
    merger = Merger(result)
    for paper in corpus.records(result):
        merger.add(paper)
        if len(result.papers) >= size:
            yield merger.take_window()
    if result.papers:
        yield merger.take_window()


@dataclass
class Corpus:
    """The files to read, checked before any is parsed (each exists and is of a kind that is read); read as often
    as needed (an ingest reads it twice: once to count and check, once to store)."""

    files: list[Path]
    kinds: dict[Path, str]
    max_abstract_chars: int = MAX_ABSTRACT_CHARS

    @classmethod
    def of(cls, paths: Iterable[str | Path], max_abstract_chars: int = MAX_ABSTRACT_CHARS) -> Corpus:
        files = collect_files(paths)
        kinds = {path: kind_of(path) for path in files}
        for path, kind in kinds.items():
            if kind in PARSERS:
                check_text(path)
        return cls(files, kinds, max_abstract_chars)

    def records(self, result: LoadResult) -> Iterator[Paper]:
        """Every file's papers in order; problems (a too long abstract is one), records without an abstract and
        deletions go to `result`."""
        limit = f"the limit is {self.max_abstract_chars:,} (RAG_MAX_ABSTRACT_CHARS)"
        for path, kind in self.kinds.items():
            items = PARSERS[kind](path) if kind in PARSERS else streamed(path, kind, result)
            for item in items:
                if isinstance(item, Paper) and len(item.abstract) > self.max_abstract_chars:
                    item = Problem(item.source, f"the abstract has {len(item.abstract):,} characters; {limit}")
                if isinstance(item, Problem):
                    result.problems.append(item)
                else:
                    yield item


def streamed(path: Path, kind: str, result: LoadResult) -> Iterator[Paper | Problem]:
    """A streamed kind's papers and problems; records without an abstract are counted and deletions kept in
    `result`."""
    from rag.corpus.readers import NO_ABSTRACT, READERS, Deletion

    for item in READERS[kind](path):
        if isinstance(item, Deletion):
            result.deletions.update(item.identifiers)
        elif isinstance(item, Problem) and item.reason == NO_ABSTRACT:
            result.no_abstract += 1
        else:
            yield item


class Merger:
    """Adds papers to a LoadResult, one paper per identity: a paper sharing a DOI, PMID, arXiv or OpenAlex id
    (or a Zotero key) with one met before is merged into it; one without such ids whose doc_id was met is a
    duplicate (a Problem), as before. Papers of earlier windows (see `windows`) are known by name only."""

    def __init__(self, result: LoadResult) -> None:
        self.result = result
        self.where: dict[str, int] = {}  # doc_id or identifier -> index in result.papers
        self.earlier: dict[str, str] = {}  # doc_id or identifier -> doc_id, for papers of earlier windows

    def add(self, paper: Paper) -> None:
        papers = self.result.papers
        names = (*paper.identifiers, paper.doc_id)
        known = next((self.where[i] for i in paper.identifiers if i in self.where), None)
        if known is None and (before := next((self.earlier[i] for i in names if i in self.earlier), None)):
            if paper.identifiers:
                self.result.late.append((before, paper))
                self.result.merged += 1
            else:
                self.result.problems.append(Problem(paper.source, f"duplicate doc_id {paper.doc_id!r} (met earlier)"))
            return
        if known is None and paper.doc_id in self.where and not paper.identifiers:
            first = papers[self.where[paper.doc_id]].source
            self.result.problems.append(Problem(paper.source, f"duplicate doc_id {paper.doc_id!r} (first at {first})"))
            return
        if known is None:
            known = self.where.get(paper.doc_id)
        if known is None:
            papers.append(paper)
            known = len(papers) - 1
        else:
            papers[known] = merged(papers[known], paper)
            self.result.merged += 1
        for name in (papers[known].doc_id, *papers[known].identifiers):
            self.where[name] = known

    def take_window(self) -> list[Paper]:
        """The papers in hand, which are then remembered by name only."""
        papers = self.result.take_papers()
        self.earlier.update((name, papers[index].doc_id) for name, index in self.where.items())
        self.where.clear()
        return papers


def merged(first: Paper, second: Paper) -> Paper:
    """One paper from two records of it: the first's fields, the second's where the first has none, the longer
    abstract and author list, every id and keyword; its doc_id the first of its ids by ID_KINDS."""
    identifiers = tuple(dict.fromkeys((*first.identifiers, *second.identifiers)))
    order = {kind: n for n, kind in enumerate(ID_KINDS)}  # another id (a text hash) last
    ranked = sorted(identifiers, key=lambda i: order.get(i.partition(":")[0], len(order)))
    longer = second if len(second.abstract) > len(first.abstract) else first
    return replace(
        first,
        doc_id=ranked[0] if ranked else first.doc_id,
        abstract=longer.abstract,
        title=first.title or second.title,
        authors=max(first.authors, second.authors, key=len),  # the fuller list (a RIS export may list one)
        venue=first.venue or second.venue,
        year=first.year or second.year,
        url=first.url or second.url,
        keywords=tuple(dict.fromkeys((*first.keywords, *second.keywords))),
        doi=first.doi or second.doi,
        identifiers=tuple(ranked),
        collections=tuple(dict.fromkeys((*first.collections, *second.collections))),
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file of trusted data (a dataset of the project's; corpus files go through
    `load_corpus`, which reports bad lines)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def parse_seeds(path: Path) -> Iterator[Paper | Problem]:
    lines = read_text(path).splitlines()
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


def parse_jsonl(path: Path) -> Iterator[Paper | Problem]:
    for lineno, line in text_lines(path):
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


def parse_csv(path: Path) -> Iterator[Paper | Problem]:
    reader = csv.DictReader(io.StringIO(read_text(path)))
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


def parse_bibtex(path: Path) -> Iterator[Paper | Problem]:
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # failures are reported as Problems below
    library = bibtexparser.parse_string(read_text(path), append_middleware=[LatexDecodingMiddleware()])
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


PARSERS = {"seeds": parse_seeds, "jsonl": parse_jsonl, "csv": parse_csv, "bibtex": parse_bibtex}
