"""Streaming readers: each format's records (ids, fields, non-ASCII names), problems with file and line, gzip read by
content, a truncated gzip, malformed records, sniffing, a Zotero library held locked, and bounded memory."""

from __future__ import annotations

import gzip
import json
import sqlite3
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.corpus import readers
from rag.corpus.loaders import Problem
from rag.corpus.readers import (
    NO_ABSTRACT,
    READERS,
    TRUNCATED,
    Deletion,
    open_text,
    read_arxiv,
    read_csl_json,
    read_medline,
    read_openalex,
    read_pubmed_xml,
    read_ris,
    read_zotero,
    sniff,
)
from rag.records import Paper

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
SEEDS = Path(__file__).resolve().parent.parent / "seeds"


def papers(items: list) -> dict[str, Paper]:
    return {item.doc_id: item for item in items if isinstance(item, Paper)}


def problems(items: list) -> list[tuple[str, str]]:
    """(file name:line, reason) of each Problem."""
    return [(Path(p.source).name, p.reason) for p in items if isinstance(p, Problem)]


def line_of(path: Path, needle: str, nth: int = 1) -> int:
    """The number of the line holding the nth occurrence of `needle`."""
    hits = [n for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1) if needle in line]
    return hits[nth - 1]


def gzipped(source: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(source.read_bytes()))
    return target


def without_sources(items: list) -> list:
    """The items without where they were read: Papers whole, a Problem's reason, a Deletion's PMIDs."""
    return [
        i.__class__(**{**vars(i), "source": ""}) if isinstance(i, Paper) else getattr(i, "reason", None) or i.pmids
        for i in items
    ]


# PubMed XML


def test_pubmed_xml_records_fields_and_ids() -> None:
    path = FORMATS / "pubmed_efetch.xml"
    items = list(read_pubmed_xml(path))
    found = papers(items)
    assert list(found) == ["doi:10.5555/jim.2019.0042", "doi:10.5555/aie.1998.12", "pmid:31000004"]
    first = found["doi:10.5555/jim.2019.0042"]
    assert first.title == "Soil Streptomyces strains suppress root rot in greenhouse tomatoes."
    assert first.abstract == (
        "BACKGROUND: Root rot limits greenhouse tomato yields. METHODS: We inoculated 240 seedlings with one of six "
        "soil Streptomyces strains. RESULTS: Two strains cut disease incidence by 41% (p < 0.01). CONCLUSIONS: Soil "
        "actinobacteria are promising biocontrol agents."
    )
    assert first.authors == ("Müller, Hans", "Ñúñez, Ana María", "Ødegård, Kari", "Greenhouse Trials Consortium")
    assert (first.venue, first.year, first.doi) == ("Journal of Invented Microbiology", 2019, "10.5555/jim.2019.0042")
    assert first.identifiers == ("doi:10.5555/jim.2019.0042", "pmid:31000001")  # not the reference's DOI
    assert first.url == "https://doi.org/10.5555/jim.2019.0042"
    assert first.keywords == ("Solanum lycopersicum", "Streptomyces", "biocontrol", "root rot")
    assert first.source == f"{path}:{line_of(path, '<PubmedArticle>')}"
    medline_date = found["doi:10.5555/aie.1998.12"]  # DOI from ELocationID, year from MedlineDate, ISO venue
    assert (medline_date.year, medline_date.venue, medline_date.authors) == (1998, "Arch Invent Ecol", ("Sørensen, B",))
    only_pmid = found["pmid:31000004"]  # no DOI; the year from ArticleDate
    assert (only_pmid.year, only_pmid.doi, only_pmid.identifiers) == (2021, None, ("pmid:31000004",))
    assert only_pmid.url == "https://pubmed.ncbi.nlm.nih.gov/31000004/"
    assert problems(items) == [(f"pubmed_efetch.xml:{line_of(path, '<PubmedArticle>', 2)}", NO_ABSTRACT)]


def test_pubmed_update_gz_has_deletions_and_reads_as_the_plain_file(tmp_path: Path) -> None:
    plain = FORMATS / "pubmed_update.xml"
    packed = gzipped(plain, tmp_path / "pubmed25n1234.xml.gz")
    items = list(read_pubmed_xml(packed))
    assert without_sources(items) == without_sources(list(read_pubmed_xml(plain)))
    assert list(papers(items)) == ["doi:10.5555/ijh.2022.5", "pmid:32000002"]
    assert papers(items)["doi:10.5555/ijh.2022.5"].authors == ("Černý, Jiří",)
    deletion = items[-1]
    assert isinstance(deletion, Deletion)
    assert deletion.pmids == ("31000001", "9900003")
    assert deletion.identifiers == ("pmid:31000001", "pmid:9900003")
    assert deletion.source == f"{packed}:{line_of(plain, '<DeleteCitation>')}"


def test_malformed_xml_keeps_the_records_before_and_reports_the_parse_error_line() -> None:
    path = FORMATS / "malformed.xml"
    items = list(read_pubmed_xml(path))
    assert list(papers(items)) == ["pmid:33000001", "pmid:33000002"]
    assert len(items) == 3
    assert problems(items) == [(f"malformed.xml:{line_of(path, '</Title>')}", "malformed XML (mismatched tag)")]


def test_xml_that_is_not_pubmed_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "other.xml"
    path.write_text("<?xml version='1.0'?>\n<rss><item>x</item></rss>\n")
    assert problems(list(read_pubmed_xml(path))) == [("other.xml:2", "not a PubMed XML file (its root is <rss>)")]


# MEDLINE text


MEDLINE_BAD_LINE = "not a MEDLINE line ('TAG - value' or an indented continuation)"


def test_medline_records_with_continuation_lines() -> None:
    path = FORMATS / "pubmed.nbib"
    items = list(read_medline(path))
    found = papers(items)
    assert list(found) == ["doi:10.5555/ims.2020.0008", "pmid:34000002", "pmid:34000005"]
    first = found["doi:10.5555/ims.2020.0008"]
    assert (
        first.title == "Deep-sea sponges host nitrifying archaea across a depth gradient of more than three kilometres."
    )
    assert first.abstract.startswith("BACKGROUND: Sponges filter large volumes of seawater. METHODS: We sequenced the")
    assert first.abstract.endswith("CONCLUSIONS: Sponges are nitrogen hotspots in the deep sea.")
    assert first.authors == ("Ødegård, Kari", "Ñúñez, Ana María", "Deep Sea Census Group")  # FAU over AU, then CN
    assert (first.venue, first.year) == ("Invented Marine Science", 2020)  # JT over TA; DP "2020 Mar 5"
    assert first.identifiers == ("doi:10.5555/ims.2020.0008", "pmid:34000001")
    assert first.keywords == ("Animals", "Archaea", "Porifera", "nitrification", "sponge microbiome")
    assert first.source == f"{path}:{line_of(path, 'PMID- 34000001')}"
    second = found["pmid:34000002"]
    assert (second.authors, second.venue, second.year) == (("Keller M", "Brandt S"), "Invent Environ Monit", 2018)
    assert problems(items) == [
        (f"pubmed.nbib:{line_of(path, 'PMID- 34000003')}", NO_ABSTRACT),
        (f"pubmed.nbib:{line_of(path, 'the second line has')}", MEDLINE_BAD_LINE),
    ]


# RIS


def ris_variants(tmp_path: Path) -> tuple[Path, Path]:
    """The fixture with CRLF line ends and a BOM, and with LF and no BOM."""
    text = (FORMATS / "zotero_export.ris").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    crlf, lf = tmp_path / "crlf.ris", tmp_path / "lf.ris"
    crlf.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    lf.write_bytes(text.encode())
    return crlf, lf


def test_ris_records_problems_and_line_ends(tmp_path: Path) -> None:
    crlf, lf = ris_variants(tmp_path)
    items = list(read_ris(crlf))
    assert without_sources(items) == without_sources(list(read_ris(lf)))
    found = papers(items)
    first = found["doi:10.5555/jim.2019.0042"]
    assert first.abstract == (
        "Root rot limits greenhouse tomato yields. We inoculated 240 seedlings with one of six soil Streptomyces "
        "strains; two of them cut disease incidence by 41%."
    )  # a continuation line, no \r left
    assert first.authors == ("Müller, Hans", "Ñúñez, Ana María", "Ødegård, Kari")
    assert (first.venue, first.year, first.doi) == ("Journal of Invented Microbiology", 2019, "10.5555/jim.2019.0042")
    assert first.keywords == ("biocontrol", "root rot")
    assert first.source == f"{crlf}:1"
    assert found["pmid:35000003"].identifiers == ("pmid:35000003",)  # AN with DB PubMed
    chapter = next(p for p in found.values() if p.title == "Seed banks of arable weeds")
    assert chapter.doc_id.startswith("sha256:") and chapter.identifiers == ()  # AN of another database: no id
    assert (chapter.year, chapter.venue, chapter.abstract[:9]) == (
        2012,
        "Invented Handbook of Weed Science",
        "Weed seed",
    )
    coral = next(p for p in found.values() if p.title == "Coral spawning tracks lunar cycles")
    assert coral.venue == "Invented Coral Reef Studies"  # JF before T2
    assert len(found) == 4
    assert problems(items) == [  # at the TY line of the entry, or the first stray line
        (f"crlf.ris:{line_of(lf, 'TI  - Erratum') - 1}", NO_ABSTRACT),
        (f"crlf.ris:{line_of(lf, 'An entry that lost its ER line') - 1}", "the entry has no ER line"),
        (f"crlf.ris:{line_of(lf, 'stray text')}", "a line outside any entry (no TY line before it)"),
    ]


def test_a_paper_in_two_formats_has_one_doc_id() -> None:
    from_pubmed = papers(list(read_pubmed_xml(FORMATS / "pubmed_efetch.xml")))
    from_ris = papers(list(read_ris(FORMATS / "zotero_export.ris")))
    assert "doi:10.5555/jim.2019.0042" in from_pubmed.keys() & from_ris.keys()
    from_csl = papers(list(read_csl_json(FORMATS / "zotero_export.json")))
    assert "pmid:35000003" in from_ris.keys() & from_csl.keys()


def test_ris_without_its_last_er_line_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "cut.ris"
    path.write_text("TY  - JOUR\nTI  - Kept\nAB  - Kept abstract.\nER  - \n\nTY  - JOUR\nTI  - Cut\nAB  - Cut.\n")
    items = list(read_ris(path))
    assert [p.title for p in papers(items).values()] == ["Kept"]
    assert problems(items) == [("cut.ris:6", "the entry has no ER line")]


# CSL-JSON


def test_csl_json_array_items() -> None:
    path = FORMATS / "zotero_export.json"
    items = list(read_csl_json(path))
    found = papers(items)
    assert list(found) == ["pmid:35000003", "doi:10.5555/ics.2018.77", "arxiv:2203.01234"]
    moth = found["pmid:35000003"]  # the PMID from Zotero's note
    assert moth.identifiers == ("pmid:35000003", "zotero:ZK4MWP8Q")
    assert moth.authors == ("Lindqvist, Eva", "van Beethoven, Ludwig")
    assert (moth.venue, moth.year, moth.url) == (
        "Invented Journal of Insect Ecology",
        2021,
        "https://pubmed.ncbi.nlm.nih.gov/35000003/",
    )
    assert moth.source == f"{path}:2"
    sampler = found["doi:10.5555/ics.2018.77"]
    assert sampler.authors == ("Simulation Study Group Ω", "Ødegård, Kari")
    assert sampler.abstract == 'We propose a sampler for "rare" events that needs 40% fewer model runs.'
    assert (sampler.year, sampler.doi, sampler.keywords) == (2018, "10.5555/ics.2018.77", ("sampling", "rare events"))
    preprint = found["arxiv:2203.01234"]  # "arXiv: ..." in the note
    assert (preprint.url, preprint.year) == ("https://arxiv.org/abs/2203.01234", 2022)
    assert problems(items) == [(f"zotero_export.json:{line_of(path, 'smith2016') - 1}", NO_ABSTRACT)]


def test_csl_json_lines_read_as_the_array(tmp_path: Path) -> None:
    array = json.loads((FORMATS / "zotero_export.json").read_text(encoding="utf-8"))
    lines = tmp_path / "items.jsonl"
    lines.write_text("\n".join(json.dumps(item, ensure_ascii=False) for item in array) + "\n", encoding="utf-8")
    items = list(read_csl_json(lines))
    assert without_sources(items) == without_sources(list(read_csl_json(FORMATS / "zotero_export.json")))
    assert [p.source for p in papers(items).values()] == [f"{lines}:1", f"{lines}:2", f"{lines}:4"]


def test_zotero_links_only_without_a_web_link(tmp_path: Path) -> None:
    items = [
        {"id": "http://zotero.org/users/local/ab/items/ZZ23ZZ45", "type": "article", "abstract": "User library."},
        {"id": "http://zotero.org/groups/77/items/YY23YY45", "type": "article", "abstract": "Group library."},
    ]
    path = tmp_path / "z.json"
    path.write_text(json.dumps(items))
    found = papers(list(read_csl_json(path)))
    assert found["zotero:ZZ23ZZ45"].url == "zotero://select/library/items/ZZ23ZZ45"
    assert found["zotero:YY23YY45"].url == "zotero://select/groups/77/items/YY23YY45"


def test_malformed_csl_array_keeps_the_items_before(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n{"type": "article", "abstract": "Fine one."},\n{"type": "article", "abstract": "Bad" "x"},\n'
                    '{"type": "article", "abstract": "Never read."}\n]\n')  # fmt: skip
    items = list(read_csl_json(path))
    assert [p.abstract for p in papers(items).values()] == ["Fine one."]
    assert problems(items) == [("broken.json:3", "malformed JSON (Expecting ',' delimiter)")]


@pytest.mark.parametrize(
    ("raw", "doc_id"),
    [
        ({"DOI": "https://dx.doi.org/10.5555/ABC.1"}, "doi:10.5555/abc.1"),
        ({"DOI": "doi:10.5555/Abc.2", "PMID": "123"}, "doi:10.5555/abc.2"),
        ({"DOI": "not a doi", "PMID": "00123"}, "pmid:123"),
        ({"note": "arXiv: arXiv:2101.00001v3"}, "arxiv:2101.00001"),
        ({"URL": "https://arxiv.org/abs/math.AG/0101001v2"}, "arxiv:math.AG/0101001"),
        ({"id": "http://zotero.org/users/1/items/ABCD2345", "URL": "https://example.org/x"}, "zotero:ABCD2345"),
    ],
)
def test_ids_are_normalised_and_follow_the_precedence(tmp_path: Path, raw: dict, doc_id: str) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"type": "article", "abstract": "An abstract.", **raw}]))
    (paper,) = read_csl_json(path)
    assert isinstance(paper, Paper)
    assert (paper.doc_id, paper.identifiers[0]) == (doc_id, doc_id)


# Zotero library


def make_zotero(path: Path) -> Path:
    """A minimal zotero.sqlite: the tables and columns the reader uses, and items of every kind it must tell apart."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT);
        CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT, key TEXT, libraryID INT, dateAdded TEXT);
        CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT);
        CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value);
        CREATE TABLE itemData (itemID INT, fieldID INT, valueID INT);
        CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT);
        CREATE TABLE itemCreators (itemID INT, creatorID INT, creatorTypeID INT, orderIndex INT);
        CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT, parentCollectionID INT,
                                  libraryID INT, key TEXT);
        CREATE TABLE collectionItems (collectionID INT, itemID INT, orderIndex INT);
        CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY);
    """)
    types = ["journalArticle", "conferencePaper", "book", "attachment", "note", "preprint"]
    db.executemany("INSERT INTO itemTypes VALUES (?, ?)", list(enumerate(types, start=1)))
    collections = {"Reading list": 1, "Thesis": 2}
    db.executemany(
        "INSERT INTO collections VALUES (?, ?, NULL, 1, ?)", [(i, n, f"C{i}") for n, i in collections.items()]
    )
    items = [  # key, type, library, fields, creators (last, first, fieldMode, orderIndex), collections
        ("ABCD2345", "journalArticle", 1,
         {"title": "Beaver dams raise valley water tables", "abstractNote": "Water tables rose by 40 cm near dams.",
          "date": "2021-03-00 March 2021", "DOI": "10.5555/ZOT.2021.1", "publicationTitle": "Invented Annals",
          "url": "https://example.org/zot1"},
         [("Ødegård", "Kari", 0, 1), ("Müller", "Hans", 0, 0), ("ACME Field Consortium", "", 1, 2)],
         ["Thesis", "Reading list"]),
        ("EFGH6789", "conferencePaper", 1,
         {"title": "Drones count seals", "abstractNote": "Counts from drone images matched boat counts.",
          "date": "2019", "proceedingsTitle": "Proc. Invented Workshop", "extra": "Citation Key: seal2019"},
         [("Ñúñez", "Ana", 0, 0)], ["Thesis"]),
        ("JKLM2345", "book", 1, {"title": "A book without an abstract", "date": "2010"}, [], []),
        ("DELE7777", "journalArticle", 1, {"title": "In the trash", "abstractNote": "Deleted."}, [], []),
        ("ATTA2222", "attachment", 1, {"title": "Full Text PDF"}, [], []),
        ("NOTE3333", "note", 1, {"title": "My note", "abstractNote": "not a paper"}, [], []),
        ("PREP3456", "preprint", 1,
         {"title": "Lake ice", "abstractNote": "Ice-out came earlier.", "archiveID": "arXiv:2104.05678",
          "date": "2021-04-12 2021-04-12"}, [], []),
        ("GRPX2345", "journalArticle", 2,
         {"title": "Group paper", "abstractNote": "Shared in a group.", "extra": "PMID: 37000006\nPMCID: PMC1"},
         [], []),
        ("GRPY2345", "journalArticle", 2,
         {"title": "Group paper without ids", "abstractNote": "No ids at all.", "url": "https://example.org/g"},
         [], []),
    ]  # fmt: skip
    for item_id, (key, kind, library, fields, creators, in_collections) in enumerate(items, start=1):
        db.execute("INSERT INTO items VALUES (?, ?, ?, ?, '')", (item_id, types.index(kind) + 1, key, library))
        for name, value in fields.items():
            field_id = zotero_id(db, "fields", "fieldName", name)
            value_id = zotero_id(db, "itemDataValues", "value", value)
            db.execute("INSERT INTO itemData VALUES (?, ?, ?)", (item_id, field_id, value_id))
        for last, first, mode, order in creators:
            creator = db.execute("INSERT INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                                 (first, last, mode)).lastrowid  # fmt: skip
            db.execute("INSERT INTO itemCreators VALUES (?, ?, 1, ?)", (item_id, creator, order))
        for name in in_collections:
            db.execute("INSERT INTO collectionItems VALUES (?, ?, 0)", (collections[name], item_id))
    db.execute("INSERT INTO deletedItems VALUES (4)")
    db.commit()
    db.close()
    return path


def zotero_id(db: sqlite3.Connection, table: str, column: str, value: str) -> int:
    row = db.execute(f"SELECT rowid FROM {table} WHERE {column} = ?", (value,)).fetchone()
    return row[0] if row else db.execute(f"INSERT INTO {table} ({column}) VALUES (?)", (value,)).lastrowid


def test_zotero_library_items(tmp_path: Path) -> None:
    path = make_zotero(tmp_path / "zotero.sqlite")
    items = list(read_zotero(path))
    found = papers(items)
    assert list(found) == [
        "doi:10.5555/zot.2021.1",
        "zotero:EFGH6789",
        "arxiv:2104.05678",
        "pmid:37000006",
        "zotero:GRPY2345",
    ]  # not the deleted item, the attachment or the note
    beaver = found["doi:10.5555/zot.2021.1"]
    assert beaver.authors == ("Müller, Hans", "Ødegård, Kari", "ACME Field Consortium")  # by orderIndex
    assert (beaver.venue, beaver.year, beaver.url) == ("Invented Annals", 2021, "https://doi.org/10.5555/zot.2021.1")
    assert beaver.identifiers == ("doi:10.5555/zot.2021.1", "zotero:ABCD2345")
    assert beaver.collections == ("Reading list", "Thesis")
    seals = found["zotero:EFGH6789"]
    assert (seals.venue, seals.year, seals.collections) == ("Proc. Invented Workshop", 2019, ("Thesis",))
    assert seals.url == "zotero://select/library/items/EFGH6789"
    assert found["arxiv:2104.05678"].identifiers == ("arxiv:2104.05678", "zotero:PREP3456")
    assert found["pmid:37000006"].identifiers == ("pmid:37000006", "zotero:GRPX2345")
    assert found["zotero:GRPY2345"].url == "https://example.org/g"  # a group item: no zotero://select link
    assert problems(items) == [("zotero.sqlite:JKLM2345", NO_ABSTRACT)]


def test_zotero_library_reads_while_another_connection_holds_it_locked(tmp_path: Path) -> None:
    path = make_zotero(tmp_path / "zotero.sqlite")
    expected = list(read_zotero(path))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(path, timeout=0).execute("SELECT count(*) FROM items").fetchone()
        assert list(read_zotero(path)) == expected
        assert sniff(path) == "zotero"
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_database_that_is_not_zotero_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things (x)")
    db.commit()
    db.close()
    assert sniff(path) is None
    items = list(read_zotero(path))
    assert len(items) == 1 and items[0].reason.startswith("not a readable Zotero library (no such table")


# arXiv snapshot


def test_arxiv_snapshot_lines() -> None:
    path = FORMATS / "arxiv_snapshot.jsonl"
    items = list(read_arxiv(path))
    found = papers(items)
    assert list(found) == ["arxiv:2101.00001", "doi:10.5555/ipl.1999.3", "arxiv:2103.00004"]
    sparse = found["arxiv:2101.00001"]
    assert sparse.title == "Sparse attention for long protein sequences"
    assert sparse.abstract.startswith("We introduce a sparse attention pattern") and "\n" not in sparse.abstract
    assert sparse.authors == ("Núñez, Ana", "Okafor, B.", "Zhang, C.")  # from authors_parsed
    assert (sparse.venue, sparse.keywords, sparse.year) == ("arXiv", ("cs.LG", "q-bio.BM"), 2021)  # the id's yymm
    assert sparse.url == "https://arxiv.org/abs/2101.00001"
    strings = found["doi:10.5555/ipl.1999.3"]
    assert strings.identifiers == ("doi:10.5555/ipl.1999.3", "arxiv:hep-th/9901001")
    assert (strings.year, strings.authors) == (1999, ("D. Roe", "E. Poe"))  # old-style id: 99 -> 1999, not 2008
    assert found["arxiv:2103.00004"].authors == ("H. One", "I. Two", "J. Three")
    assert problems(items) == [
        ("arxiv_snapshot.jsonl:3", NO_ABSTRACT),
        ("arxiv_snapshot.jsonl:4", "malformed JSON (Expecting ',' delimiter)"),
    ]


def test_arxiv_authors_string_without_parsed_names(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    record = {
        "id": "2201.00005",
        "abstract": "x",
        "authors": "A. One, B. Two (MIT, USA) and C. Three",
        "categories": "",
    }
    path.write_text(json.dumps(record) + "\n")
    (paper,) = read_arxiv(path)
    assert paper.authors == ("A. One", "B. Two", "C. Three")


# OpenAlex


def test_openalex_api_page() -> None:
    items = list(read_openalex(FORMATS / "openalex_page.json"))
    (work,) = papers(items).values()
    assert work.doc_id == "doi:10.5555/ijh.2022.5"
    assert work.identifiers == ("doi:10.5555/ijh.2022.5", "pmid:32000001", "openalex:W4200000001")
    assert work.abstract == "Recharge rose for three years after canopy loss. It outlasted the loss."
    assert work.authors == ("Jiří Černý", "Zoë Ødegård")
    assert (work.venue, work.year, work.keywords) == ("Invented Journal of Hydrology", 2022, ("Groundwater recharge",))
    assert problems(items) == [("openalex_page.json:1 (result 2)", NO_ABSTRACT)]


def test_openalex_snapshot_lines_gzipped(tmp_path: Path) -> None:
    packed = gzipped(FORMATS / "openalex_works.jsonl", tmp_path / "part_000.gz")
    found = papers(list(read_openalex(packed)))
    coral = found["openalex:W3000000003"]
    assert (coral.url, coral.venue, coral.source) == (
        "https://openalex.org/W3000000003",
        "Invented Coral Reef Studies",  # host_venue, from older snapshots
        f"{packed}:1",
    )
    soil = found["doi:10.5555/abc.2020.1"]
    assert (soil.title, soil.identifiers[1]) == ("Soil carbon under cover crops", "pmid:36000004")


# gzip and truncation


def test_gzip_is_told_by_content_not_by_name(tmp_path: Path) -> None:
    plain = FORMATS / "zotero_export.ris"
    packed = gzipped(plain, tmp_path / "export.ris")  # gzip data under a plain name
    named = tmp_path / "export.ris.gz"  # plain text under a gzip name
    named.write_bytes(plain.read_bytes())
    expected = without_sources(list(read_ris(plain)))
    assert without_sources(list(read_ris(packed))) == expected
    assert without_sources(list(read_ris(named))) == expected
    assert sniff(packed) == sniff(named) == "ris"
    with open_text(packed) as text:
        assert text.readline() == "TY  - JOUR\n"  # no BOM, no \r


def arxiv_lines(n: int, repeat: int = 1) -> Iterator[str]:
    for i in range(n):
        abstract = (
            f"Paper {i} studies the effect number {i} on a benchmark and finds a gain of {i % 97} points. " * repeat
        )
        yield json.dumps({"id": f"2301.{i:05d}", "title": f"Paper {i}", "authors": "A. Author and B. Author",
                          "categories": "cs.LG", "abstract": abstract, "update_date": "2023-01-15"}) + "\n"  # fmt: skip


def ris_entries(n: int) -> Iterator[str]:
    for i in range(n):
        yield f"TY  - JOUR\nTI  - Paper {i}\nAB  - Abstract of paper {i}, long enough to be an abstract.\nER  - \n\n"


def xml_records(n: int) -> Iterator[str]:
    yield '<?xml version="1.0"?>\n<PubmedArticleSet>\n'
    for i in range(n):
        yield (f"<PubmedArticle>\n  <MedlineCitation>\n    <PMID>{i + 1}</PMID>\n    <Article>\n"
               f"      <Abstract><AbstractText>Abstract of paper {i}.</AbstractText></Abstract>\n"
               "    </Article>\n  </MedlineCitation>\n</PubmedArticle>\n")  # fmt: skip
    yield "</PubmedArticleSet>\n"


@pytest.mark.parametrize(
    ("reader", "records", "doc_id"),
    [
        (read_arxiv, arxiv_lines, lambda i: f"arxiv:2301.{i:05d}"),
        (read_ris, ris_entries, None),
        (read_pubmed_xml, xml_records, lambda i: f"pmid:{i + 1}"),
    ],
)
def test_a_truncated_gzip_keeps_the_records_before_the_cut(tmp_path: Path, reader, records, doc_id) -> None:
    n = 3000
    text = "".join(records(n))
    data = gzip.compress(text.encode())
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    items = list(reader(path))
    kept = [item for item in items if isinstance(item, Paper)]
    assert 0 < len(kept) < n
    assert all(isinstance(item, Paper) for item in items[:-1])
    assert isinstance(items[-1], Problem) and items[-1].reason == TRUNCATED
    if doc_id is not None:
        assert [p.doc_id for p in kept] == [doc_id(i) for i in range(len(kept))]
    else:
        assert [p.title for p in kept] == [f"Paper {i}" for i in range(len(kept))]
    cut_line = int(items[-1].source.rsplit(":", 1)[1])
    assert int(kept[-1].source.rsplit(":", 1)[1]) < cut_line <= text.count("\n")


# sniffing


def test_sniff_by_content_and_extension(tmp_path: Path) -> None:
    expected = {
        "pubmed_efetch.xml": "pubmed-xml",
        "pubmed_update.xml": "pubmed-xml",
        "malformed.xml": "pubmed-xml",
        "pubmed.nbib": "medline",
        "zotero_export.ris": "ris",
        "zotero_export.json": "csl-json",
        "arxiv_snapshot.jsonl": "arxiv",
        "openalex_page.json": "openalex",
        "openalex_works.jsonl": "openalex",
    }
    assert {path.name: sniff(path) for path in FORMATS.iterdir()} == expected
    assert set(expected.values()) | {"zotero"} == set(READERS)

    def saved(name: str, data: bytes) -> Path:
        (tmp_path / name).write_bytes(data)
        return tmp_path / name

    xml_as_txt = saved("efetch.txt", (FORMATS / "pubmed_efetch.xml").read_bytes())
    medline_txt = saved("pubmed-export.txt", (FORMATS / "pubmed.nbib").read_bytes())
    assert (sniff(xml_as_txt), sniff(medline_txt)) == ("pubmed-xml", "medline")
    assert sniff(gzipped(medline_txt, tmp_path / "pubmed.nbib.gz")) == "medline"
    seeds = sorted(SEEDS.glob("*.txt"))[0]
    project_jsonl = saved("papers.jsonl", b'{"doc_id": "x1", "title": "T", "abstract": "A.", "venue": "V"}\n')
    csv = saved("papers.csv", b"doc_id,abstract\nx1,An abstract.\n")
    binary = saved("blob.bin", bytes(range(256)) * 8)
    rss = saved("feed.xml", b"<?xml version='1.0'?><rss></rss>")
    empty = saved("empty.ris", b"")
    csl_lines = saved("csl.jsonl", b'{"id": "a", "type": "article-journal", "title": "T", "abstract": "A."}\n')
    assert [sniff(p) for p in (seeds, project_jsonl, csv, binary, rss, empty)] == [None] * 6
    assert sniff(csl_lines) == "csl-json"
    assert sniff(make_zotero(tmp_path / "zotero.sqlite")) == "zotero"


# bounded memory


def test_memory_stays_bounded_on_a_large_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "arxiv-metadata-oai-snapshot.json"
    n = 5_000  # of about 1 KB each: few enough for tracemalloc's slowness, more than twice what the bound holds
    with path.open("w") as out:
        out.writelines(arxiv_lines(n, repeat=10))
    assert path.stat().st_size > 5_000_000  # read whole, it would show
    tracemalloc.start()
    try:
        count = sum(isinstance(item, Paper) for item in read_arxiv(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n
    assert peak < 2_000_000  # about 0.5 MB is measured


def test_pubmed_xml_memory_stays_bounded(tmp_path: Path) -> None:
    """Each record is cleared once read: parsed whole, these 5,000 records take about 8 MB."""
    path = tmp_path / "pubmed25n0001.xml"
    path.write_text("".join(xml_records(5000)))
    tracemalloc.start()
    try:
        count = sum(isinstance(item, Paper) for item in read_pubmed_xml(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 5000
    assert peak < 2_000_000


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_json_values_split_across_reads_decode_the_same(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Every value cut by the end of a read (a number, a string, an escape) is read on, not reported as malformed."""
    cases = [
        (read_openalex, "openalex_page.json"),
        (read_openalex, "openalex_works.jsonl"),
        (read_csl_json, "zotero_export.json"),
        (read_arxiv, "arxiv_snapshot.jsonl"),
    ]
    expected = [list(reader(FORMATS / name)) for reader, name in cases]
    monkeypatch.setattr(readers._JsonStream, "CHUNK", chunk)
    assert [list(reader(FORMATS / name)) for reader, name in cases] == expected
