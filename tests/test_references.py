"""References out: BibTeX, RIS and CSL-JSON exports read back by the project's own readers with the same ids and
metadata (where the reader can carry the id), special characters and non-ASCII names, an unknown kind, and
deterministic output."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rag.corpus.common import text_hash_id
from rag.corpus.loaders import load_corpus
from rag.corpus.readers import read_csl_json, read_ris, sniff
from rag.corpus.references import FORMATS, export, to_bibtex, to_csl_items, to_csl_json, to_ris
from rag.errors import BadInput
from rag.records import Paper

ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
SPECIAL_TITLE = f"Q&A: 50% of {{braces}} fold as an {ALPHA}-helix ($x_1$ ~ #2^3) -- ``quoted'' \\path?` !`"
HASHED_ABSTRACT = "An abstract  with\nodd   spacing, 100% $cost$ & a back\\slash; see @article{x, too} -- ok."

PAPERS = [
    Paper(
        doc_id="doi:10.1234/abc.def_1",
        abstract=f"Folding of an {ALPHA}-helix in 30% of cases & more {{braced}} text.",
        title=SPECIAL_TITLE,
        authors=("Müller, Jürgen", "Ødegård", "Ñúñez, José María"),
        venue="Journal of Q&A",
        year=2021,
        url="https://doi.org/10.1234/abc.def_1",
        keywords=("protein folding", f"{ALPHA}-helix"),
        doi="10.1234/abc.def_1",
        identifiers=("doi:10.1234/abc.def_1", "pmid:99887766"),
    ),
    Paper(
        doc_id="pmid:12345",
        abstract="A PubMed abstract.",
        title="A PubMed paper",
        authors=("van der Berg, Jan", "World Health Organization"),
        venue="The Lancet",
        year=1999,
        url="https://pubmed.ncbi.nlm.nih.gov/12345/",
        identifiers=("pmid:12345",),
    ),
    Paper(
        doc_id="arxiv:2101.00001",
        abstract="An arXiv abstract.",
        title="An arXiv preprint",
        authors=("Doe, Jane",),
        venue="arXiv",
        year=2021,
        keywords=("cs.LG",),  # no link: the CSL reader must find the id in the note
        identifiers=("arxiv:2101.00001",),
    ),
    Paper(
        doc_id="openalex:W2741809807",
        abstract="An OpenAlex abstract.",
        title="An OpenAlex work",
        authors=("Smith, A. B.",),
        venue="Nature",
        year=2017,
        url="https://openalex.org/W2741809807",
        identifiers=("openalex:W2741809807",),
    ),
    Paper(
        doc_id="zotero:ABCD2345",
        abstract="A Zotero item's abstract.",
        title="A Zotero item",
        authors=("Østergaard, Ærø",),
        year=2010,
        url="zotero://select/library/items/ABCD2345",
        identifiers=("zotero:ABCD2345",),
    ),
    Paper(doc_id=text_hash_id(HASHED_ABSTRACT), abstract=HASHED_ABSTRACT),  # no title, authors, venue or year
    Paper(doc_id="seeds#3", abstract="A seed abstract; no title.", venue="ICML", year=2024),
    Paper(doc_id="icml#3", abstract="Another seed.", title="Title only", authors=("Literal Name",)),
]

# The ids each reader can carry (see the module's docstring); any other comes back as the abstract's text hash.
CARRIED = {
    "bibtex": {"doi", "pmid", "arxiv", "openalex", "zotero", "sha256", "free"},
    "ris": {"doi", "pmid", "sha256"},
    "csl-json": {"doi", "pmid", "arxiv", "zotero", "sha256"},
}


def id_kind(doc_id: str) -> str:
    kind, colon, _ = doc_id.partition(":")
    return kind if colon else "free"


def one_line(text: str | None) -> str | None:
    return " ".join(text.split()) if text is not None else None


def as_read(kind: str, text: str | None) -> str | None:
    """The text as the reader of `kind` gives it back: on one line; without braces from BibTeX (the loader's
    clean_latex drops them)."""
    if text is not None and kind == "bibtex":
        text = text.replace("{", "").replace("}", "")
    return one_line(text)


def read_back(tmp_path: Path, kind: str, papers: list[Paper]) -> list[Paper]:
    """The papers exported as `kind`, written to a file and read back by the project's reader of that format."""
    writer, suffix = FORMATS[kind]
    path = tmp_path / f"export{suffix}"
    path.write_text(writer(papers), encoding="utf-8")
    if kind == "bibtex":
        result = load_corpus([path])
        assert result.problems == []
        return result.papers
    items = list((read_ris if kind == "ris" else read_csl_json)(path))
    assert all(isinstance(item, Paper) for item in items), items
    return items


def expected_id(paper: Paper, kind: str) -> str:
    return paper.doc_id if id_kind(paper.doc_id) in CARRIED[kind] else text_hash_id(paper.abstract)


@pytest.mark.parametrize("kind", list(FORMATS))
def test_each_format_reads_back_with_the_same_ids_and_metadata(tmp_path: Path, kind: str) -> None:
    back = read_back(tmp_path, kind, PAPERS)
    assert [p.doc_id for p in back] == [expected_id(p, kind) for p in PAPERS]
    for paper, got in zip(PAPERS, back, strict=True):
        assert got.title == as_read(kind, paper.title)
        assert one_line(got.abstract) == as_read(kind, paper.abstract)
        assert got.authors == paper.authors
        assert got.venue == paper.venue
        assert got.year == paper.year
        assert got.keywords == paper.keywords


@pytest.mark.parametrize("kind", ["ris", "csl-json"])
def test_the_readers_of_ris_and_csl_get_the_doi_and_the_other_carried_ids(tmp_path: Path, kind: str) -> None:
    back = {p.doc_id: p for p in read_back(tmp_path, kind, PAPERS)}
    first = back["doi:10.1234/abc.def_1"]
    assert first.doi == "10.1234/abc.def_1"
    assert first.identifiers == ("doi:10.1234/abc.def_1", "pmid:99887766")
    assert first.url == "https://doi.org/10.1234/abc.def_1"
    assert all(p.doi is None for p in back.values() if p is not first)
    assert back["pmid:12345"].identifiers == ("pmid:12345",)


def test_bibtex_carries_the_doi_and_ids_in_their_own_fields() -> None:
    import bibtexparser

    library = bibtexparser.parse_string(to_bibtex(PAPERS[:3]))
    assert library.failed_blocks == []
    first, second, third = (entry.fields_dict for entry in library.entries)
    assert first["doi"].value == r"10.1234/abc.def\_1"
    assert first["pmid"].value == "99887766"
    assert (third["eprint"].value, third["archiveprefix"].value) == ("2101.00001", "arXiv")
    assert [entry.entry_type for entry in library.entries] == ["article"] * 3
    assert "journal" not in bibtexparser.parse_string(to_bibtex([PAPERS[4]])).entries[0].fields_dict  # @misc
    assert "{World Health Organization}" in second["author"].value  # a literal name stays whole in BibTeX


def test_bibtex_keeps_non_ascii_and_escapes_latex_specials() -> None:
    text = to_bibtex(PAPERS[:1])
    assert "Müller, Jürgen and {Ødegård} and Ñúñez, José María" in text
    assert f"{ALPHA}-helix" in text
    assert r"Q\&A: 50\% of \{braces\} fold" in text
    assert r"(\$x\_1\$ \textasciitilde{} \#2\string^3) -{}- `{}`quoted'{}' \textbackslash{}path?{}` !{}`" in text


def test_the_csl_json_read_back_keeps_a_zotero_items_link(tmp_path: Path) -> None:
    zotero = {p.doc_id: p for p in read_back(tmp_path, "csl-json", PAPERS)}["zotero:ABCD2345"]
    assert zotero.url == "zotero://select/library/items/ABCD2345"
    group = Paper("zotero:WXYZ6789", "An item of a group.", url="zotero://select/groups/42/items/WXYZ6789")
    (got,) = read_back(tmp_path, "csl-json", [group])
    assert (got.doc_id, got.url) == ("zotero:WXYZ6789", "zotero://select/groups/42/items/WXYZ6789")


def test_bibtex_round_trips_random_text_of_latex_specials(tmp_path: Path) -> None:
    pieces = [*"\\{}&%$#_~^-`'?!@,=\"<>|. aZ0ÜØñ\u00a0\t\n", ALPHA, "--", "``", "''", "?`", "@article{", "\\\\", "\\&"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 24))) for _ in range(150)]
    papers = [Paper(doc_id=f"p{n}", abstract=f"x {text}", title=text) for n, text in enumerate(texts)]
    back = read_back(tmp_path, "bibtex", papers)
    assert [p.title for p in back] == [as_read("bibtex", text) or None for text in texts]


def test_bibtex_keys_are_unique_and_safe(tmp_path: Path) -> None:
    papers = [Paper("a#1", "One."), Paper("a_1", "Two."), Paper("A_1", "Three."), Paper("x y,{z}", "Four.")]
    text = to_bibtex(papers)
    assert [line.split("{", 1)[1] for line in text.splitlines() if line.startswith("@")] == [
        "a_1,",
        "a_1-2,",
        "A_1-3,",
        "x_y__z_,",
    ]
    assert [p.doc_id for p in read_back(tmp_path, "bibtex", papers[:3])] == ["a#1", "a_1", "A_1"]


def test_ris_layout() -> None:
    entries = to_ris(PAPERS[:2]).split("\n\n")
    assert len(entries) == 2
    lines = entries[1].splitlines()
    assert lines[0] == "TY  - JOUR"
    assert lines[-1] == "ER  - "
    assert [x for x in lines if x.startswith("AU")] == ["AU  - van der Berg, Jan", "AU  - World Health Organization"]
    assert {"ID  - pmid:12345", "DB  - PubMed", "AN  - 12345", "PY  - 1999", "T2  - The Lancet"} <= set(lines)


def test_csl_items() -> None:
    items = to_csl_items(PAPERS)
    assert json.loads(to_csl_json(PAPERS)) == items
    first = items[0]
    assert first["id"] == "doi:10.1234/abc.def_1"
    assert first["type"] == "article-journal"
    assert first["author"] == [
        {"family": "Müller", "given": "Jürgen"},
        {"literal": "Ødegård"},
        {"family": "Ñúñez", "given": "José María"},
    ]
    assert first["issued"] == {"date-parts": [[2021]]}
    assert (first["container-title"], first["DOI"], first["PMID"]) == (
        "Journal of Q&A",
        "10.1234/abc.def_1",
        "99887766",
    )
    assert items[2]["note"] == "arXiv: 2101.00001"
    assert items[4]["id"] == "http://zotero.org/users/local/library/items/ABCD2345"
    assert "URL" not in items[4]  # only http(s) links go out
    assert set(items[5]) == {"id", "type", "abstract"}  # missing fields are left out, not null
    assert "Müller" in to_csl_json(PAPERS)  # UTF-8, not \u escapes


@pytest.mark.parametrize("kind", list(FORMATS))
def test_outputs_are_deterministic_and_take_any_iterable(kind: str) -> None:
    text = export(PAPERS, kind)
    assert export(PAPERS, kind) == text
    assert export(iter(PAPERS), kind) == text
    assert export([], kind) in ("", "[]\n")


def test_an_exported_ris_or_csl_file_is_sniffed_as_its_format(tmp_path: Path) -> None:
    for kind in ("ris", "csl-json"):
        path = tmp_path / f"export{FORMATS[kind][1]}"
        path.write_text(export(PAPERS, kind), encoding="utf-8")
        assert sniff(path) == kind


def test_an_unknown_kind_is_bad_input() -> None:
    with pytest.raises(BadInput, match="bibtex, ris, csl-json"):
        export(PAPERS, "endnote")
