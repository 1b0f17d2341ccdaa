"""Loaders: every corpus format, the id contract, and every malformed case (reported with file and line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SEEDS, write_jsonl

from rag.corpus.loaders import load_corpus, text_hash_id
from rag.errors import BadInput

ABSTRACT = "We study things. We find that things work well on two benchmarks."


def test_seed_files_follow_the_id_contract() -> None:
    result = load_corpus([SEEDS])
    assert len(result.papers) == 95
    assert not result.problems
    first = result.papers[0]
    assert first.doc_id == "000_c1913070b188e76b#1"
    assert (first.venue, first.year) == ("ICML", 2024)
    assert first.abstract.startswith("How can a scientist use a Reinforcement Learning")
    by_file = {p.doc_id.split("#")[0] for p in result.papers}
    assert len(by_file) == 5
    assert {p.doc_id for p in result.papers if p.doc_id.startswith("004_")} == {
        f"004_b162160cb3a036d7#{n}" for n in range(1, 20)
    }
    iclr = [p for p in result.papers if p.venue == "ICLR"]
    assert iclr and all(p.year == 2024 for p in iclr)


def test_ids_are_stable_across_loads_and_paths(tmp_path: Path) -> None:
    first = [p.doc_id for p in load_corpus([SEEDS]).papers]
    again = [
        p.doc_id
        for p in load_corpus([SEEDS / f"{name}.txt" for name in sorted({i.split("#")[0] for i in first})]).papers
    ]
    assert first == again
    path = write_jsonl(tmp_path / "a.jsonl", [{"abstract": ABSTRACT}])
    copy = write_jsonl(tmp_path / "b.jsonl", [{"abstract": "  " + ABSTRACT.replace(" ", "  ") + "\n"}])
    assert load_corpus([path]).papers[0].doc_id == load_corpus([copy]).papers[0].doc_id == text_hash_id(ABSTRACT)


def test_jsonl_fields(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"doc_id": "x1", "abstract": ABSTRACT, "title": "T", "authors": ["A B", "C D"], "venue": "NeurIPS",
             "year": "2023", "url": "https://example.org/x1", "keywords": "k1; k2"},
            {"text": ABSTRACT + " Extra.", "authors": "A B and C D"},
        ],
    )  # fmt: skip
    one, two = load_corpus([path]).papers
    assert (one.doc_id, one.title, one.venue, one.year, one.url) == (
        "x1",
        "T",
        "NeurIPS",
        2023,
        "https://example.org/x1",
    )
    assert one.authors == ("A B", "C D") and one.keywords == ("k1", "k2")
    assert two.doc_id.startswith("sha256:") and two.authors == ("A B", "C D")


def test_jsonl_malformed_records_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"doc_id": "ok1", "abstract": ABSTRACT},
            '{"doc_id": "broken", "abstract": ',
            '["not", "an", "object"]',
            {"doc_id": "no-abstract", "title": "Only a title"},
            {"doc_id": "bad-year", "abstract": ABSTRACT, "year": "soon"},
            {"doc_id": "ok1", "abstract": "A duplicate id."},
            {"doc_id": "ok2", "abstract": ABSTRACT + " Two."},
        ],
    )
    result = load_corpus([path])
    assert [p.doc_id for p in result.papers] == ["ok1", "ok2"]
    reasons = {p.source: p.reason for p in result.problems}
    assert set(reasons) == {f"{path}:{n}" for n in (2, 3, 4, 5, 6)}
    assert "malformed JSON" in reasons[f"{path}:2"]
    assert "JSON object" in reasons[f"{path}:3"]
    assert "no abstract" in reasons[f"{path}:4"]
    assert "not a year" in reasons[f"{path}:5"]
    assert "duplicate doc_id" in reasons[f"{path}:6"]


def test_csv(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text(
        "doc_id,title,abstract,venue,year,authors\n"
        f'c1,First,"{ABSTRACT}",ICML,2023,A B; C D\n'
        "c2,No abstract,,ICML,2023,\n"
        f'c3,"Multi\nline title","{ABSTRACT} Three.",ICLR,2022,E F\n'
        f'c4,Too many,"{ABSTRACT}",ICML,2023,A,extra\n'
    )
    result = load_corpus([path])
    assert [p.doc_id for p in result.papers] == ["c1", "c3"]
    assert result.papers[0].authors == ("A B", "C D") and result.papers[1].year == 2022
    assert {str(p) for p in result.problems} == {
        f"{path}:3: record has no abstract or text",
        f"{path}:6: more fields than the header has columns",
    }


def test_csv_without_an_abstract_column_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("doc_id,title\n1,t\n")
    with pytest.raises(BadInput, match="abstract"):
        load_corpus([path])


def test_bibtex(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(
        "@comment{ignored}\n"
        "@article{smith2024,\n  title={A {Good} Paper},\n  author={Smith, J. and Doe, A.},\n"
        "  journal={JMLR},\n  year={2024},\n  abstract={We show {X} matters. It does.},\n}\n"
        "@inproceedings{noabs2023,\n  title={No abstract here},\n  year={2023}\n}\n"
        "@article{broken2022,\n  title={Unclosed,\n  abstract={Text\n\n"
    )
    result = load_corpus([path])
    assert len(result.papers) == 1
    paper = result.papers[0]
    assert (paper.doc_id, paper.title, paper.year) == ("smith2024", "A Good Paper", 2024)
    assert paper.abstract == "We show X matters. It does."
    assert paper.authors == ("Smith, J.", "Doe, A.")
    assert {p.source for p in result.problems} == {f"{path}:9", f"{path}:13"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "empty"),
        ("blank.txt", b"\n  \n", "empty"),
        ("binary.jsonl", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
        ("latin1.csv", "abstract\ncaf\xe9\n".encode("latin-1"), "UTF-8"),
        ("notes.pdf", b"%PDF-1.4", "not a kind of file that is read; the kinds: .*PubMed XML"),
        ("noheader.txt", b"This abstract has no header line. It goes on.\nAnother one.\n", "header"),
    ],
)
def test_unreadable_files_are_bad_input(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(BadInput, match=message) as raised:
        load_corpus([path])
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        load_corpus([tmp_path / "nope.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="no corpus files"):
        load_corpus([tmp_path / "empty"])


def test_one_bad_file_stops_the_whole_load(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"abstract": ABSTRACT}])
    (tmp_path / "bad.jsonl").write_bytes(b"")
    with pytest.raises(BadInput):
        load_corpus([good, tmp_path / "bad.jsonl"])


def test_pubmedqa_corpus_loads_completely() -> None:
    corpus = Path(__file__).resolve().parents[1] / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"
    result = load_corpus([corpus])
    assert len(result.papers) == 1000 and not result.problems
    first = json.loads(corpus.read_text().splitlines()[0])
    assert result.papers[0].doc_id == first["doc_id"] and result.papers[0].venue == "PubMed"


def test_hostile_records_are_skipped_with_their_line(tmp_path: Path) -> None:
    ok = {"doc_id": "ok", "abstract": "A normal abstract about flat minima."}
    huge = {"doc_id": "huge", "abstract": "word " * 20_001}  # 100,005 characters: not an abstract
    path = write_jsonl(tmp_path / "h.jsonl", [ok, huge, "[" * 100_000 + "]" * 100_000])
    loaded = load_corpus([path])
    assert [p.doc_id for p in loaded.papers] == ["ok"]
    assert [p.short() for p in loaded.problems] == [
        "h.jsonl:2: the abstract has 100,004 characters; the limit is 100,000 (RAG_MAX_ABSTRACT_CHARS)",
        "h.jsonl:3: malformed JSON (nested too deeply)",
    ]
    assert [p.doc_id for p in load_corpus([path], max_abstract_chars=200_000).papers] == ["ok", "huge"]
    garbage = tmp_path / "g.bib"
    garbage.write_text("this is not bibtex at all\n%%% nothing here\n")
    assert [p.short() for p in load_corpus([garbage]).problems] == ["g.bib:1: no BibTeX entries found"]


def test_control_and_invisible_characters_are_not_stored(tmp_path: Path) -> None:
    """Escape sequences, bidirectional overrides and zero-width spaces are removed before chunking, so the stored
    text (and every citation offset into it) is what is shown."""
    hostile = "Evil\x1b]0;retitled\x07Net hides \u202ereversed\u202c text in zero\u200bwidth gaps\u00ad."
    path = write_jsonl(
        tmp_path / "c.jsonl", [{"doc_id": "a", "abstract": hostile, "title": "T\x1b[31m", "venue": "V\u200b"}]
    )
    paper = load_corpus([path]).papers[0]
    assert paper.abstract == "Evil]0;retitledNet hides reversed text in zerowidth gaps."
    assert paper.title == "T[31m" and paper.venue == "V"
