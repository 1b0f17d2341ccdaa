"""Streaming readers for the formats researchers keep papers in: one record at a time, in bounded memory.

Formats (the keys of `READERS`; `sniff` picks one from a file's first KB and its extension):
- "pubmed-xml": PubMed/MEDLINE XML (efetch results, the baseline and update files), DeleteCitation as `Deletion`;
- "medline": MEDLINE text (.nbib, PubMed's "PubMed format" .txt);
- "ris": RIS (Zotero, EndNote, Mendeley);
- "csl-json": CSL-JSON (Zotero's export: one array, or one item per line);
- "zotero": a Zotero library (zotero.sqlite), read-only, even while Zotero holds it locked;
- "arxiv": the arXiv metadata snapshot (JSON Lines);
- "openalex": OpenAlex works (API result pages, or snapshot JSON Lines).

Any file may be gzipped (told by its magic bytes, not its name). A reader yields `Paper`s, `Problem`s ("file:line" of
the record's start and a short reason; exactly "no abstract" for a record without one, which is skipped) and
`Deletion`s; a malformed record is reported and the next one read (XML and a JSON array cannot be resynchronised:
there the Problem ends the stream). A truncated gzip ends the stream with one Problem; the records before it stand.

Ids: doc_id is the first id the record has in the order doi > pmid > arxiv > openalex > zotero, prefixed and
normalised ("doi:10.1234/abc" lower-cased, "pmid:12345", "arxiv:2101.00001" without its version, "openalex:W123",
"zotero:ABCD2345"), else `text_hash_id(abstract)`; `Paper.identifiers` holds every one of them. A Zotero item's id is
its key in every library: keys are 8 random characters of a 32-letter alphabet, and "zotero:KEY" is then the same
whether the item comes from zotero.sqlite or from Zotero's CSL-JSON export. `Paper.url` is the link of the first
of doi, pmid, arxiv and openalex the record has, else the record's own http(s) link, else the Zotero item link.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rag.corpus.common import ID_KINDS, Problem, split_list, text_hash_id
from rag.records import Paper
from rag.text import stored_text, web_url

if TYPE_CHECKING:
    import sqlite3
    from xml.etree.ElementTree import Element

__all__ = [
    "NO_ABSTRACT",
    "READERS",
    "TRUNCATED",
    "Deletion",
    "open_binary",
    "open_text",
    "read_arxiv",
    "read_csl_json",
    "read_medline",
    "read_openalex",
    "read_pubmed_xml",
    "read_ris",
    "read_zotero",
    "sniff",
]

NO_ABSTRACT = "no abstract"  # the reason of a skipped record without an abstract: callers count these apart
TRUNCATED = "the file ends early (truncated gzip)"
GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


@dataclass(frozen=True)
class Deletion:
    """PubMed withdrew these citations (a DeleteCitation of an update file): drop the papers with these PMIDs."""

    pmids: tuple[str, ...]  # bare: "12345"
    source: str

    @property
    def identifiers(self) -> tuple[str, ...]:
        """The PMIDs as `Paper.identifiers` holds them ("pmid:12345")."""
        return tuple(f"pmid:{pmid}" for pmid in self.pmids)


Item = Paper | Problem | Deletion
Reader = Callable[[Path], Iterator[Item]]


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as raw:
        return raw.read(2) == GZIP_MAGIC


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed on the fly when it is gzip (told by its magic bytes, whatever its name)."""
    return gzip.open(path, "rb") if _is_gzip(path) else path.open("rb")


def open_text(path: Path) -> IO[str]:
    """The file as UTF-8 text: gzip-aware, a BOM dropped, any newline read as "\\n", undecodable bytes replaced."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors="replace")


class _Broken(Exception):
    """The stream of a gzipped file broke off at `source`."""

    def __init__(self, source: str, error: Exception) -> None:
        super().__init__(source)
        self.problem = Problem(source, TRUNCATED if isinstance(error, EOFError) else "the gzip data is corrupt")


def _stops_at_broken_gzip(reader: Reader) -> Reader:
    """The reader, ending with one Problem where its gzip breaks off (the records before it already yielded)."""

    @functools.wraps(reader)
    def read(path: Path) -> Iterator[Item]:
        try:
            yield from reader(path)
        except _Broken as broken:
            yield broken.problem

    return read


def _numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline) for each line of the file."""
    lineno = 0
    with open_text(path) as text:
        try:
            for lineno, line in enumerate(text, start=1):
                yield lineno, line.rstrip("\n")
        except GZIP_ERRORS as error:
            raise _Broken(f"{path}:{lineno + 1}", error) from None


def _binary_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) for each line, in pieces of at most 64 KB (a longer line comes in several)."""
    lineno = 1
    with open_binary(path) as stream:
        try:
            while data := stream.readline(1 << 16):
                yield lineno, data
                lineno += data.endswith(b"\n")
        except GZIP_ERRORS as error:
            raise _Broken(f"{path}:{lineno}", error) from None


def _clean(value: Any) -> str | None:
    """Text as stored, on one line with single spaces; None when empty or not text."""
    if not isinstance(value, str):
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        value = str(value)
    text = " ".join(value.split())
    if not text.isprintable():  # printable text holds no control or invisible formatting character to remove
        text = " ".join(stored_text(text).split())
    return text or None


_YEAR = re.compile(r"(?<!\d)(?:1\d|20)\d\d(?!\d)")


def _year(value: Any) -> int | None:
    """The first plausible year (1000-2099) in "2019/05/01/", "1998 Dec-1999 Jan", 2019..."""
    match = _YEAR.search(str(value)) if value is not None else None
    return int(match[0]) if match else None


def _person(family: Any, given: Any) -> str | None:
    """The name as "Family, Given", or whichever of the two there is."""
    return ", ".join(filter(None, (_clean(family), _clean(given)))) or None


def _unique(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(text for value in values if (text := _clean(value))))


_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)", re.I)


def _norm_doi(value: Any) -> str | None:
    """The bare DOI, lower-cased: "https://doi.org/10.1234/ABC" -> "10.1234/abc"; None when it is not a DOI."""
    match = _DOI.fullmatch(_clean(value) or "")
    return match[1].lower() if match else None


_PMID = re.compile(r"(?:https?://[\w.]*ncbi\.nlm\.nih\.gov/(?:pubmed/)?|pmid:\s*)?0*([1-9][0-9]{0,9})/?", re.I)


def _norm_pmid(value: Any) -> str | None:
    """The bare PMID: "https://pubmed.ncbi.nlm.nih.gov/12345" -> "12345"."""
    match = _PMID.fullmatch(_clean(value) or "")
    return match[1] if match else None


_ARXIV = re.compile(
    r"(?:arxiv:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)?"
    r"(\d{4}\.\d{4,5}|[a-z][a-z.\-]*/\d{7})(?:v\d+)?(?:\.pdf)?",
    re.I,
)


def _norm_arxiv(value: Any) -> str | None:
    """The id without version: "arXiv:2101.00001v2" -> "2101.00001", "https://arxiv.org/abs/hep-th/9901001v1" ->
    "hep-th/9901001"."""
    match = _ARXIV.fullmatch(_clean(value) or "")
    return match[1] if match else None


_OPENALEX = re.compile(r"(?:https?://openalex\.org/)?(W\d+)", re.I)
_ZOTERO_KEY = re.compile(r"[A-Z0-9]{8}")


def _norm_openalex(value: Any) -> str | None:
    match = _OPENALEX.fullmatch(_clean(value) or "")
    return match[1].upper() if match else None


def _norm_zotero(value: Any) -> str | None:
    text = _clean(value) or ""
    return text if _ZOTERO_KEY.fullmatch(text) else None


# The kinds of id, in the order of the doc_id precedence (ID_KINDS), and the links made of them.
_NORMALISE = dict(zip(ID_KINDS, (_norm_doi, _norm_pmid, _norm_arxiv, _norm_openalex, _norm_zotero), strict=True))
_LINKS = {
    "doi": "https://doi.org/{}",
    "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}/",
    "arxiv": "https://arxiv.org/abs/{}",
    "openalex": "https://openalex.org/{}",
}


@dataclass
class _Record:
    """What a reader found in one record, raw; `paper()` normalises it."""

    source: str
    abstract: str | None = None
    title: Any = None
    authors: Iterable[Any] = ()
    venue: Any = None
    year: int | None = None
    ids: dict[str, Any] = field(default_factory=dict)  # raw ids by kind: {"doi": "https://doi.org/10.1/X"}
    url: Any = None  # the record's own link
    zotero_url: str | None = None
    keywords: Iterable[Any] = ()
    collections: Iterable[Any] = ()

    def paper(self) -> Paper | Problem:
        abstract = _clean(self.abstract)
        if not abstract:
            return Problem(self.source, NO_ABSTRACT)
        ids = {kind: value for kind, norm in _NORMALISE.items() if (value := norm(self.ids.get(kind)))}
        identifiers = tuple(f"{kind}:{value}" for kind, value in ids.items())
        links = [_LINKS[kind].format(value) for kind, value in ids.items() if kind in _LINKS]
        zotero_url = self.zotero_url if "zotero" in ids else None
        return Paper(
            doc_id=identifiers[0] if identifiers else text_hash_id(abstract),
            abstract=abstract,
            title=_clean(self.title),
            authors=tuple(name for author in self.authors if (name := _clean(author))),
            venue=_clean(self.venue),
            year=self.year,
            url=next(iter(links), None) or web_url(_clean(self.url)) or zotero_url,
            keywords=_unique(self.keywords),
            source=self.source,
            doi=ids.get("doi"),
            identifiers=identifiers,
            collections=_unique(self.collections),
        )


def _extra_field(text: Any, name: str) -> str | None:
    """The value of a "Name: value" line of a Zotero "extra" field or CSL note ("PMID: 123")."""
    match = re.search(rf"^[ \t]*{name}[ \t]*:[ \t]*(\S+)", text, re.I | re.M) if isinstance(text, str) else None
    return match[1] if match else None


@_stops_at_broken_gzip
def read_pubmed_xml(path: Path) -> Iterator[Item]:
    """PubmedArticle (and PubmedBookArticle) records and DeleteCitation deletions of a PubmedArticleSet.

    The pull parser under `iterparse`, fed line by line so that each record's start line is known, and cleared after
    each record so that memory stays bounded. Malformed XML cannot be resynchronised: it ends the stream with a
    Problem at the line the parser stopped at."""
    from xml.etree.ElementTree import ParseError, XMLPullParser

    parser = XMLPullParser(events=("start", "end"))
    depth, start, root = 0, 1, None
    try:
        for lineno, data in _binary_lines(path):
            parser.feed(data)
            for event, elem in parser.read_events():
                depth += 1 if event == "start" else -1
                if event == "start" and depth == 1:
                    if elem.tag not in ("PubmedArticleSet", "PubmedBookArticleSet"):
                        yield Problem(f"{path}:{lineno}", f"not a PubMed XML file (its root is <{elem.tag}>)")
                        return
                    root = elem
                elif event == "start" and depth == 2:
                    start = lineno
                elif event == "end" and depth == 1 and root is not None:
                    if (item := _pubmed_item(elem, f"{path}:{start}")) is not None:
                        yield item
                    root.clear()  # the records read so far go
        parser.close()
    except ParseError as error:
        reason = str(error).split(":")[0]
        yield Problem(f"{path}:{error.position[0]}", f"malformed XML ({reason})")


def _text_of(elem: Element | None) -> str | None:
    """The element's text with that of its inner markup (<i>, <sup>...)."""
    return _clean("".join(elem.itertext())) if elem is not None else None


def _pubmed_item(record: Element, source: str) -> Item | None:
    if record.tag == "DeleteCitation":
        return Deletion(tuple(p for pmid in record.iterfind("PMID") if (p := _norm_pmid(pmid.text))), source)
    citation = record.find("MedlineCitation")
    if citation is None:
        citation = record.find("BookDocument")
    if citation is None:
        return (
            None
            if record.tag not in ("PubmedArticle", "PubmedBookArticle")
            else Problem(source, "a record without MedlineCitation")
        )
    article = citation.find("Article")
    article = citation if article is None else article  # a BookDocument holds the article's parts itself
    book = citation.find("Book")
    book_title = citation.findtext("Book/BookTitle")
    return _Record(
        source,
        abstract=_pubmed_abstract(article.find("Abstract")),
        title=_text_of(article.find("ArticleTitle")) or book_title,
        authors=_pubmed_authors(article) or (_pubmed_authors(book) if book is not None else []),
        venue=article.findtext("Journal/Title") or article.findtext("Journal/ISOAbbreviation") or book_title,
        year=_pubmed_year(article, citation),
        ids={"pmid": citation.findtext("PMID"), "doi": _pubmed_doi(record, article)},
        keywords=[
            *(_text_of(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")),
            *(_text_of(k) for k in citation.iterfind("KeywordList/Keyword")),
        ],
    ).paper()


def _pubmed_doi(record: Element, article: Element) -> str | None:
    """The record's own DOI (not one of its references'): ArticleIdList's, else ELocationID's."""
    for data in ("PubmedData", "PubmedBookData"):
        if doi := record.findtext(f"{data}/ArticleIdList/ArticleId[@IdType='doi']"):
            return doi
    return article.findtext("ELocationID[@EIdType='doi']")


def _pubmed_abstract(abstract: Element | None) -> str | None:
    """The AbstractText parts joined, each structured one as "LABEL: text"."""
    if abstract is None:
        return None
    parts = []
    for part in abstract.iterfind("AbstractText"):
        if text := _text_of(part):
            label = _clean(part.get("Label"))
            parts.append(f"{label}: {text}" if label else text)
    return " ".join(parts)


def _pubmed_authors(holder: Element) -> list[str | None]:
    return [
        _person(author.findtext("LastName"), author.findtext("ForeName") or author.findtext("Initials"))
        or _text_of(author.find("CollectiveName"))
        for author in holder.iterfind("AuthorList/Author")
    ]


def _pubmed_year(article: Element, citation: Element) -> int | None:
    """PubDate's Year, else MedlineDate's first year ("1998 Dec-1999 Jan"), else ArticleDate's Year."""
    date = article.find("Journal/JournalIssue/PubDate")
    if date is None:
        date = citation.find("Book/PubDate")
    found = [date.findtext("Year"), date.findtext("MedlineDate")] if date is not None else []
    return next(filter(None, map(_year, [*found, article.findtext("ArticleDate/Year")])), None)


_MEDLINE_TAG = re.compile(r"(?=[A-Z][A-Z0-9]{1,3} *-)([A-Z0-9 ]{4})-(?: (.*))?$")


@_stops_at_broken_gzip
def read_medline(path: Path) -> Iterator[Item]:
    """MEDLINE records ("TAG - value" lines, continuations indented, records apart by blank lines). A line that is
    neither makes its record a Problem (at that line); the next record is read."""
    fields: dict[str, list[str]] = {}
    last, start, bad = "", 0, False
    for lineno, line in _with_end(_numbered_lines(path)):
        tag = _MEDLINE_TAG.match(line)
        if not line.strip() or (tag and tag[1].strip() == "PMID" and (fields or bad)):  # a record ends
            if fields and not bad:
                yield _medline_record(fields, f"{path}:{start}")
            fields, last, bad = {}, "", False
        if not line.strip() or bad:
            continue
        if tag:
            start = start if fields else lineno
            last = tag[1].strip()
            fields.setdefault(last, []).append(tag[2] or "")
        elif line[:1].isspace() and last:
            fields[last][-1] += " " + line.strip()
        else:
            yield Problem(f"{path}:{lineno}", "not a MEDLINE line ('TAG - value' or an indented continuation)")
            bad = True


def _with_end(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines, then one blank line (which ends the last record)."""
    yield from lines
    yield 0, ""


def _medline_record(fields: dict[str, list[str]], source: str) -> Paper | Problem:
    def first(*tags: str) -> str | None:
        return next((value for tag in tags for value in fields.get(tag, ()) if value.strip()), None)

    dois = [v.removesuffix("[doi]") for v in fields.get("LID", []) + fields.get("AID", []) if v.endswith("[doi]")]
    return _Record(
        source,
        abstract=first("AB"),
        title=first("TI", "BTI"),
        authors=[*(fields.get("FAU") or fields.get("AU") or ()), *fields.get("CN", ())],
        venue=first("JT", "TA"),
        year=_year(first("DP")),
        ids={"pmid": first("PMID"), "doi": next(iter(dois), None)},
        keywords=[*(mesh.lstrip("*").split("/")[0] for mesh in fields.get("MH", ())), *fields.get("OT", ())],
    ).paper()


_RIS_TAG = re.compile(r"([A-Z][A-Z0-9])  -(?: (.*))?$")
_NO_ER = "the entry has no ER line"


@_stops_at_broken_gzip
def read_ris(path: Path) -> Iterator[Item]:
    """RIS entries (TY ... ER). An entry without its ER line, missing at the end of the file too, is a Problem at
    its TY line; lines outside any entry are one Problem at the first of them."""
    entry: dict[str, list[str]] | None = None
    last, start, stray = "", 0, False
    for lineno, raw in _numbered_lines(path):
        line = raw.lstrip("\ufeff").rstrip()
        tag = _RIS_TAG.match(line)
        if tag and tag[1] == "TY":
            if entry is not None:
                yield Problem(f"{path}:{start}", _NO_ER)
            entry, last, start, stray = {"TY": [tag[2] or ""]}, "TY", lineno, False
        elif entry is None:
            if line and not stray:
                yield Problem(f"{path}:{lineno}", "a line outside any entry (no TY line before it)")
            stray = stray or bool(line)
        elif tag and tag[1] == "ER":
            yield _ris_record(entry, f"{path}:{start}")
            entry = None
        elif tag:
            last = tag[1]
            entry.setdefault(last, []).append(tag[2] or "")
        elif line:
            entry[last][-1] += " " + line.strip()
    if entry is not None:
        yield Problem(f"{path}:{start}", _NO_ER)


def _ris_record(fields: dict[str, list[str]], source: str) -> Paper | Problem:
    def first(*tags: str) -> str | None:
        return next((value for tag in tags for value in fields.get(tag, ()) if value.strip()), None)

    database = " ".join(fields.get("DB", []) + fields.get("DP", [])).lower()
    accession = (first("AN") or "").strip()
    urls = fields.get("UR", [])
    return _Record(
        source,
        abstract=first("AB", "N2"),
        title=first("TI", "T1"),
        authors=fields.get("AU") or fields.get("A1") or (),
        venue=first("JF", "T2", "JO", "JA"),
        year=_year(first("PY", "Y1", "DA")),
        ids={
            "doi": first("DO") or next((url for url in urls if _norm_doi(url)), None),
            "pmid": accession if accession.isascii() and accession.isdigit() and "pubmed" in database else None,
        },
        url=next((url for url in urls if web_url(url.strip())), None),
        keywords=fields.get("KW", ()),
    ).paper()


class _BadJson(Exception):
    pass


_NON_SPACE = re.compile(r"\S")


class _JsonStream:
    """The JSON values of a text stream one at a time, from a buffer that holds about one value: the top-level values
    one after another (JSON Lines, concatenated objects), and a top-level array item by item."""

    CHUNK = 1 << 16
    LIMIT = 64 << 20  # a value larger than this is no record

    def __init__(self, text: IO[str], path: Path) -> None:
        self.text, self.path = text, path
        self.buf, self.pos, self.eof = "", 0, False
        self.line, self.counted = 1, 0  # buf[counted] is on line `line`
        self.decoder = json.JSONDecoder()

    def source(self, pos: int) -> str:
        """The "file:line" of buf[pos] (pos never goes back)."""
        self.line += self.buf.count("\n", self.counted, pos)
        self.counted = pos
        return f"{self.path}:{self.line}"

    def fill(self) -> bool:
        """Read on, dropping what is consumed; False at the end. A value that spans chunks doubles the read, so that
        decoding it again from its start each time costs linear time, not quadratic."""
        if self.eof:
            return False
        try:
            chunk = self.text.read(max(self.CHUNK, len(self.buf) - self.pos))
        except GZIP_ERRORS as error:
            raise _Broken(self.source(self.pos), error) from None
        if not chunk:
            self.eof = True
            return False
        self.source(self.pos)
        self.buf, self.pos, self.counted = self.buf[self.pos :] + chunk, 0, 0
        return True

    def peek(self) -> str:
        """The next character that is not white space, moving to it ("" at the end)."""
        while not (match := _NON_SPACE.search(self.buf, self.pos)):
            self.pos = len(self.buf)
            if not self.fill():
                return ""
        self.pos = match.start()
        return self.buf[self.pos]

    def decode(self) -> Any:
        """The value at pos, reading on while the buffer's end may cut it off."""
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as error:
                if len(self.buf) - self.pos > self.LIMIT:
                    raise _BadJson(f"a value over {self.LIMIT >> 20} MB") from None
                cut = error.pos >= len(self.buf) - 32 or error.msg.startswith("Unterminated string")
                if cut and self.fill():
                    continue
                raise _BadJson(error.msg) from None
            except RecursionError:
                raise _BadJson("nested too deeply") from None
            if end == len(self.buf) and self.fill():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value

    def skip_line(self) -> bool:
        """Move past the end of the current line (to resynchronise JSON Lines after a malformed one)."""
        while (end := self.buf.find("\n", self.pos)) < 0:
            self.pos = len(self.buf)
            if not self.fill():
                return False
        self.pos = end + 1
        return True

    def values(self) -> Iterator[tuple[str, Any]]:
        """(source, value) for each value; a Problem in place of a malformed one."""
        while char := self.peek():
            if char == "[":
                if not (yield from self.items()):
                    return
                continue
            source = self.source(self.pos)
            try:
                value = self.decode()
            except _BadJson as error:
                yield source, Problem(source, f"malformed JSON ({error})")
                if not self.skip_line():
                    return
                continue
            yield source, value

    def items(self) -> Generator[tuple[str, Any], None, bool]:
        """The items of the array at pos; False when a malformed one ended the stream (no resynchronising in an
        array)."""
        self.pos += 1
        if self.peek() == "]":
            self.pos += 1
            return True
        while True:
            char = self.peek()
            source = self.source(self.pos)
            if not char:
                yield source, Problem(source, "malformed JSON (the array ends early)")
                return False
            try:
                yield source, self.decode()
            except _BadJson as error:
                yield source, Problem(source, f"malformed JSON ({error})")
                return False
            char = self.peek()
            if char != ",":
                if char == "]":
                    self.pos += 1
                    return True
                where = self.source(self.pos)
                yield where, Problem(where, "malformed JSON (expected ',' or ']' after an item)")
                return False
            self.pos += 1


def _json_objects(path: Path, what: str) -> Iterator[tuple[str, dict[str, Any]] | Problem]:
    """(source, object) for each JSON object of the file, or a Problem."""
    with open_text(path) as text:
        for source, value in _JsonStream(text, path).values():
            if isinstance(value, Problem):
                yield value
            elif isinstance(value, dict):
                yield source, value
            else:
                yield Problem(source, f"expected a JSON object ({what})")


@_stops_at_broken_gzip
def read_csl_json(path: Path) -> Iterator[Item]:
    """CSL-JSON items: an array streamed item by item (a malformed item ends it), or one item per line."""
    for found in _json_objects(path, "a CSL item"):
        yield found if isinstance(found, Problem) else _csl_record(*found)


def _csl_record(source: str, item: dict[str, Any]) -> Paper | Problem:
    note = item.get("note")
    zotero = re.search(r"zotero\.org/(users|groups)/(?:local/)?([^/]+)/items/([A-Z0-9]{8})$", str(item.get("id")))
    url = item.get("URL")
    return _Record(
        source,
        abstract=item.get("abstract"),
        title=_csl_text(item.get("title")),
        authors=[_csl_name(author) for author in item.get("author") or () if isinstance(author, dict)],
        venue=_csl_text(item.get("container-title")),
        year=_csl_year(item.get("issued")),
        ids={
            "doi": item.get("DOI") or _extra_field(note, "DOI"),
            "pmid": item.get("PMID") or _extra_field(note, "PMID"),
            "arxiv": _extra_field(note, "arXiv") or (url if _norm_arxiv(url) else None),
            "zotero": zotero[3] if zotero else None,
        },
        url=url,
        zotero_url=_zotero_link(zotero[3], None if zotero[1] == "users" else zotero[2]) if zotero else None,
        keywords=split_list(item.get("keyword"), r"[,;]"),
    ).paper()


def _csl_text(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


def _csl_name(author: dict[str, Any]) -> str | None:
    family = " ".join(filter(None, (_clean(author.get("non-dropping-particle")), _clean(author.get("family")))))
    return _clean(author.get("literal")) or _person(family, author.get("given"))


def _csl_year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return _year(_clean(issued))
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        return _year(_clean(parts[0][0]))
    return _year(_clean(issued.get("raw") or issued.get("literal")))


def _zotero_link(key: str, group: str | None = None) -> str:
    return f"zotero://select/groups/{group}/items/{key}" if group else f"zotero://select/library/items/{key}"


_ZOTERO_ITEMS = """
    SELECT items.itemID, items.key, items.libraryID FROM items
    JOIN itemTypes ON itemTypes.itemTypeID = items.itemTypeID
    WHERE itemTypes.typeName NOT IN ('attachment', 'note', 'annotation')
      AND items.itemID NOT IN (SELECT itemID FROM deletedItems)
    ORDER BY items.itemID"""
_ZOTERO_FIELDS = """
    SELECT fields.fieldName, itemDataValues.value FROM itemData
    JOIN {fields} AS fields ON fields.fieldID = itemData.fieldID
    JOIN itemDataValues ON itemDataValues.valueID = itemData.valueID
    WHERE itemData.itemID = ?"""
_ZOTERO_CREATORS = """
    SELECT creators.lastName, creators.firstName, creators.fieldMode FROM itemCreators
    JOIN creators ON creators.creatorID = itemCreators.creatorID
    WHERE itemCreators.itemID = ? ORDER BY itemCreators.orderIndex"""
_ZOTERO_COLLECTIONS = """
    SELECT collections.collectionName FROM collectionItems
    JOIN collections ON collections.collectionID = collectionItems.collectionID
    WHERE collectionItems.itemID = ? ORDER BY collections.collectionName"""
_ZOTERO_VENUES = ("publicationTitle", "proceedingsTitle", "bookTitle", "websiteTitle")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """The database read-only and immutable: Zotero keeps it locked while it runs, and no lock is then asked for (what
    Zotero has not yet written back is not seen)."""
    import sqlite3

    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)


def read_zotero(path: Path) -> Iterator[Item]:
    """The regular items of a zotero.sqlite (not attachments, notes or items in the trash), with their collections.
    A Problem's source is "zotero.sqlite:ITEMKEY"; a database that cannot be read is one Problem at "file:1"."""
    import sqlite3

    try:
        connection = _connect_read_only(path)
    except sqlite3.Error as error:
        yield Problem(f"{path}:1", f"cannot open the database ({error})")
        return
    try:
        yield from _zotero_items(connection, path)
    except sqlite3.Error as error:
        yield Problem(f"{path}:1", f"not a readable Zotero library ({error})")
    finally:
        connection.close()


def _zotero_items(connection: sqlite3.Connection, path: Path) -> Iterator[Item]:
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    fields_query = _ZOTERO_FIELDS.format(fields="fieldsCombined" if "fieldsCombined" in tables else "fields")
    for item_id, key, library in connection.execute(_ZOTERO_ITEMS):
        fields = dict(connection.execute(fields_query, (item_id,)))
        creators = connection.execute(_ZOTERO_CREATORS, (item_id,))
        extra = fields.get("extra")
        yield _Record(
            f"{path}:{key}",
            abstract=fields.get("abstractNote"),
            title=fields.get("title"),
            authors=[last if mode == 1 else _person(last, first) for last, first, mode in creators],
            venue=next((fields[name] for name in _ZOTERO_VENUES if fields.get(name)), None),
            year=_year(fields.get("date")),
            ids={
                "doi": fields.get("DOI") or _extra_field(extra, "DOI"),
                "pmid": _extra_field(extra, "PMID"),
                "arxiv": next(filter(_norm_arxiv, (fields.get("archiveID"), _extra_field(extra, "arXiv"))), None),
                "zotero": key,
            },
            url=fields.get("url"),
            zotero_url=_zotero_link(key) if library == 1 else None,  # a group's link needs its id on zotero.org
            collections=[name for (name,) in connection.execute(_ZOTERO_COLLECTIONS, (item_id,))],
        ).paper()


@_stops_at_broken_gzip
def read_arxiv(path: Path) -> Iterator[Item]:
    """The arXiv metadata snapshot, line by line. venue is "arXiv" and the keywords are the categories; the year is
    the submission's, from a new- or old-style id (yymm), else the year of update_date (the last version's)."""
    for found in _json_objects(path, "an arXiv record"):
        yield found if isinstance(found, Problem) else _arxiv_record(*found)


_AFFILIATION = re.compile(r"\([^()]*\)")
_NAME_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_ARXIV_YYMM = re.compile(r"(?:.*/)?(\d\d)(\d\d)")


def _arxiv_record(source: str, item: dict[str, Any]) -> Paper | Problem:
    arxiv_id = _norm_arxiv(item.get("id"))
    parsed = item.get("authors_parsed")
    if isinstance(parsed, list) and parsed and all(isinstance(p, list) and len(p) >= 2 for p in parsed):
        authors = [_person(p[0], " ".join(filter(None, map(_clean, p[1:])))) for p in parsed]
    else:
        text = _AFFILIATION.sub("", str(item.get("authors") or ""))
        authors = _NAME_SEPARATOR.split(text)
    return _Record(
        source,
        abstract=item.get("abstract"),
        title=item.get("title"),
        authors=authors,
        venue="arXiv",
        year=_arxiv_year(arxiv_id) or _year(_clean(item.get("update_date"))),
        ids={"doi": next(iter(str(item.get("doi") or "").split()), None), "arxiv": arxiv_id},
        keywords=str(item.get("categories") or "").split(),
    ).paper()


def _arxiv_year(arxiv_id: str | None) -> int | None:
    """The submission year in an id: "2101.00001" -> 2021, "hep-th/9901001" -> 1999."""
    match = _ARXIV_YYMM.match(arxiv_id or "")
    if not match or not 1 <= int(match[2]) <= 12:
        return None
    yy = int(match[1])
    return 1900 + yy if yy >= 91 else 2000 + yy


@_stops_at_broken_gzip
def read_openalex(path: Path) -> Iterator[Item]:
    """OpenAlex works: snapshot JSON Lines, or API pages ({"results": [...]}, read a page at a time: the API returns
    at most 200 works a page). A work of a page has the source "file:line (result n)"."""
    for found in _json_objects(path, "an OpenAlex work"):
        if isinstance(found, Problem):
            yield found
            continue
        source, value = found
        results = value.get("results")
        if not isinstance(results, list):
            yield _openalex_record(source, value)
            continue
        for n, work in enumerate(results, start=1):
            where = f"{source} (result {n})"
            yield _openalex_record(where, work) if isinstance(work, dict) else Problem(where, "expected a JSON object")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _openalex_record(source: str, work: dict[str, Any]) -> Paper | Problem:
    ids = _dict(work.get("ids"))
    venue = _dict(_dict(work.get("primary_location")).get("source")).get("display_name")
    keywords = work.get("keywords") if isinstance(work.get("keywords"), list) else []
    return _Record(
        source,
        abstract=_inverted_abstract(work.get("abstract_inverted_index")),
        title=work.get("title") or work.get("display_name"),
        authors=[_dict(_dict(a).get("author")).get("display_name") for a in work.get("authorships") or ()],
        venue=venue or _dict(work.get("host_venue")).get("display_name"),
        year=_year(_clean(work.get("publication_year"))),
        ids={"doi": work.get("doi") or ids.get("doi"), "pmid": ids.get("pmid"), "openalex": work.get("id")},
        keywords=[_dict(k).get("display_name") or _dict(k).get("keyword") for k in keywords],
    ).paper()


def _inverted_abstract(index: Any) -> str | None:
    """The abstract from OpenAlex's inverted index ({word: [positions]})."""
    if not isinstance(index, dict):
        return None
    words = {p: word for word, places in index.items() if isinstance(places, list) for p in places if type(p) is int}
    return " ".join(words[p] for p in sorted(words))


READERS: dict[str, Reader] = {
    "pubmed-xml": read_pubmed_xml,
    "medline": read_medline,
    "ris": read_ris,
    "csl-json": read_csl_json,
    "zotero": read_zotero,
    "arxiv": read_arxiv,
    "openalex": read_openalex,
}

# fmt: off
_CSL_TYPES = frozenset((
    "article", "article-journal", "article-magazine", "article-newspaper", "bill", "book", "broadcast",
    "chapter", "classic", "collection", "dataset", "document", "entry", "entry-dictionary",
    "entry-encyclopedia", "event", "figure", "graphic", "hearing", "interview", "legal_case", "legislation",
    "manuscript", "map", "motion_picture", "musical_score", "pamphlet", "paper-conference", "patent",
    "performance", "periodical", "personal_communication", "post", "post-weblog", "regulation", "report",
    "review", "review-book", "software", "song", "speech", "standard", "thesis", "treaty", "webpage",
))
# fmt: on


def _read_head(path: Path, size: int = 8192) -> bytes:
    """The first `size` bytes (decompressed), or fewer when the file or its gzip ends before."""
    data = b""
    with open_binary(path) as stream:
        try:
            while len(data) < size and (chunk := stream.read1(size - len(data))):
                data += chunk
        except GZIP_ERRORS:
            pass
    return data


def sniff(path: Path) -> str | None:
    """The format of a file (a key of READERS), from its first 8 KB (decompressed) and its extension; None when it
    is none of them (seeds .txt, the project's .jsonl, .csv, .bib, anything else)."""
    head = _read_head(path)
    if head.startswith(SQLITE_MAGIC):
        return "zotero" if not _is_gzip(path) and _has_items_table(path) else None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if text.startswith("<"):
        return "pubmed-xml" if re.search(r"<(?:!DOCTYPE\s+)?Pubmed(?:Book)?ArticleSet\b", text) else None
    if text.startswith(("[", "{")):
        return _json_kind(text)
    first = text.split("\n", 1)[0]
    if re.match(r"PMID- *\d", first) or (suffix == ".nbib" and re.search(r"^[A-Z]{2,4} *- ", text, re.M)):
        return "medline"
    if first.startswith("TY  -") or (suffix == ".ris" and re.search(r"^TY  -", text, re.M)):
        return "ris"
    return None


def _json_kind(text: str) -> str | None:
    def has(*keys: str) -> bool:
        return any(re.search(rf'"{re.escape(key)}"\s*:', text) for key in keys)

    if has("abstract_inverted_index") or re.search(r'"id"\s*:\s*"https://openalex\.org/W', text):
        return "openalex"
    if has("id") and has("abstract") and has("categories", "update_date"):
        return "arxiv"
    kind = re.search(r'"type"\s*:\s*"([^"]*)"', text)
    if kind and kind[1] in _CSL_TYPES and has("title", "issued", "container-title"):
        return "csl-json"
    return None


def _has_items_table(path: Path) -> bool:
    import sqlite3

    try:
        connection = _connect_read_only(path)
        try:
            return connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'items'").fetchone() is not None
        finally:
            connection.close()
    except sqlite3.Error:
        return False
