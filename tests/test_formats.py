"""The formats researchers keep papers in, through `rag ingest` into a real index: PubMed XML (gzipped), RIS and
CSL-JSON with one paper in two formats (merged by DOI), citations without an abstract counted, a PubMed update
file's DeleteCitation, and bad input (a truncated gzip, an unknown kind). The readers themselves are tested record by
record in tests/test_readers.py."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_rag

from rag.corpus.common import Problem
from rag.corpus.readers import NO_ABSTRACT, READERS, sniff

FORMATS = ROOT / "tests" / "fixtures" / "formats"
# The PubMed record of the Streptomyces paper, as a reference manager exports it: its DOI in capitals, a shorter
# abstract, one keyword more; Windows line ends.
RIS_DUPLICATE = (
    "TY  - JOUR\r\nTI  - Soil Streptomyces strains suppress root rot in greenhouse tomatoes\r\n"
    "AU  - Müller, Jürgen\r\nPY  - 2019\r\nDO  - 10.5555/JIM.2019.0042\r\nKW  - biocontrol\r\n"
    "AB  - Streptomyces strains suppressed root rot.\r\nER  - \r\n"
)


def search(query: str, env: dict[str, str]) -> list[dict]:
    result = run_rag("search", query, "--json", "--top-k", "3", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["results"]


@pytest.mark.slow
def test_pubmed_ris_and_csl_json_are_ingested_as_one_paper_each_and_deletions_apply(cli_env, tmp_path: Path) -> None:
    corpus = tmp_path / "library"
    corpus.mkdir()
    with (FORMATS / "pubmed_efetch.xml").open("rb") as plain, gzip.open(corpus / "pubmed.xml.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    (corpus / "export.ris").write_bytes(RIS_DUPLICATE.encode())
    shutil.copy(FORMATS / "zotero_export.json", corpus / "zotero.json")

    result = run_rag("ingest", str(corpus), env=cli_env)
    assert result.returncode == 0, result.stderr
    without = sum(isinstance(item, Problem) and item.reason == NO_ABSTRACT
                  for path in corpus.iterdir() for item in READERS[sniff(path)](path))  # fmt: skip
    assert without >= 1 and f"merged 1 duplicate record(s), {without} without an abstract" in result.stdout

    [top, *_] = search("Streptomyces strains suppress root rot in tomatoes", cli_env)
    assert top["doc_id"] == "doi:10.5555/jim.2019.0042"  # one paper, by DOI, whichever file came first
    assert top["title"].startswith("Soil Streptomyces strains") and top["venue"] and top["year"] == 2019
    assert "BACKGROUND:" in top["text"] or "RESULTS:" in top["text"]  # the PubMed abstract, the longer, with labels

    # References out: what an answer cites, and any papers by id, read back in with the same ids.
    refs = tmp_path / "cited.ris"
    asked = run_rag("ask", "Do Streptomyces strains suppress root rot?", "--llm", "extractive", "--refs", str(refs),
                    env=cli_env)  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    assert [p.doc_id for p in READERS["ris"](refs)] == ["doi:10.5555/jim.2019.0042"]
    answer = json.loads(run_rag("ask", "Do Streptomyces strains suppress root rot?", "--llm", "extractive", "--json",
                                env=cli_env).stdout)  # fmt: skip
    [cited] = answer["citations"]  # title, authors, venue, year and a link, as the PubMed record has them
    assert cited["authors"] and cited["title"] and cited["url"] == "https://doi.org/10.5555/jim.2019.0042"
    printed = run_rag("refs", "doi:10.5555/jim.2019.0042", "--format", "csl-json", env=cli_env)
    assert json.loads(printed.stdout)[0]["DOI"] == "10.5555/jim.2019.0042"
    wrong = run_rag("ask", "Streptomyces?", "--refs", str(tmp_path / "cited.docx"), env=cli_env)
    assert wrong.returncode == 2 and ".bib (BibTeX)" in wrong.stderr

    # Filters by author (any part of a name, any case) and by a range of years.
    found = run_rag("search", "soil microbes and plants", "--author", "ØDEGÅRD", "--json", env=cli_env)
    assert {r["doc_id"] for r in json.loads(found.stdout)["results"]} == {
        "doi:10.5555/jim.2019.0042", "doi:10.5555/ics.2018.77"}  # fmt: skip
    ranged = run_rag("search", "soil microbes and plants", "--year", "2019-2021", "--json", env=cli_env)
    years = [r["year"] for r in json.loads(ranged.stdout)["results"]]
    assert years and all(2019 <= y <= 2021 for y in years) and 2021 in years and 2019 in years
    for bad in ("1850-1860", "2021-2019", "soon"):
        refused = run_rag("search", "soil", "--year", bad, env=cli_env)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    # A keyword index written in an earlier format is rebuilt once, and then filters as the new one does.
    [stale] = Path(cli_env["RAG_DATA_DIR"]).glob("keyword/*/*/author_codes.npy")
    stale.unlink()
    again = run_rag("search", "soil microbes and plants", "--author", "ødegård", "--json", env=cli_env)
    assert json.loads(again.stdout)["results"] == json.loads(found.stdout)["results"]

    stats = json.loads(run_rag("stats", "--json", env=cli_env).stdout)
    update = run_rag("ingest", str(FORMATS / "pubmed_update.xml"), env=cli_env)
    assert update.returncode == 0, update.stderr
    assert "deleted 2 (PubMed DeleteCitation)" in update.stdout and "added 2" in update.stdout
    after = json.loads(run_rag("stats", "--json", env=cli_env).stdout)
    assert after["abstracts"] == stats["abstracts"] - 2 + 2
    assert "doi:10.5555/jim.2019.0042" not in {r["doc_id"] for r in search("Streptomyces root rot", cli_env)}


@pytest.mark.slow
def test_a_truncated_gzip_keeps_what_came_before_and_an_unknown_kind_is_named(cli_env, tmp_path: Path) -> None:
    packed = gzip.compress((FORMATS / "pubmed_efetch.xml").read_bytes())
    cut = tmp_path / "baseline.xml.gz"
    cut.write_bytes(packed[: len(packed) * 9 // 10])  # the first record whole, the last ones cut off
    result = run_rag("ingest", str(cut), env=cli_env)
    assert result.returncode == 2
    assert "truncated gzip" in result.stderr and "record(s) skipped; the others were ingested" in result.stderr
    assert json.loads(run_rag("stats", "--json", env=cli_env).stdout)["abstracts"] >= 1

    unknown = tmp_path / "scan.pdf"
    unknown.write_bytes(b"%PDF-1.7 a scanned page")
    result = run_rag("ingest", str(unknown), env=cli_env)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "not a kind of file that is read" in result.stderr and "RIS" in result.stderr and "Zotero" in result.stderr
