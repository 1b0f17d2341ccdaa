"""Benchmark: the streamed corpus readers (PubMed XML, the arXiv snapshot) against the project's JSONL. Prints a table.

    .venv/bin/python benchmarks/formats_speed.py                 # 30,000 PubMed citations, 1 GB of arXiv (2-3 min)
    .venv/bin/python benchmarks/formats_speed.py --arxiv-mb 64   # the same with 64 MB of arXiv, a quick check

Target: reading PubMed XML and the arXiv JSON costs under 10% of an ingest's time (an ingest embeds --ingest-rate
abstracts a second, 48 as measured at scale), and a reader's memory is bounded (peak RSS <= 2 GiB whatever the file's
size).

The files are generated, deterministically (--seed), into --work (default /tmp/formats-bench), and reused while
their parameters and size match (the 1 GB arXiv file takes a minute or two to write; progress goes to stderr):
- a PubMed baseline file of 30,000 citations, gzipped like the real pubmedYYnNNNN.xml.gz: PubmedArticle records as
  NLM writes them (PMID, Journal with its Title and PubDate, ArticleTitle, an Abstract of 3-4 labelled parts,
  3-6 authors, some with non-ASCII names, an ELocationID DOI, MeSH headings, ArticleIdList, a few references),
  about 10% without an abstract; the abstracts' sentences are those of PubMedQA's corpus, recombined;
- an arXiv metadata snapshot (JSON Lines as Kaggle's arxiv-metadata-oai-snapshot.json, about 1.2 KB a line) of
  --arxiv-mb MB;
- the PubMed citations that have an abstract as the project's JSONL ({"doc_id", "title", "abstract", "authors",
  "venue", "year"}).

Each read runs in a fresh child process (this file, with a hidden option), so that its peak memory is its own: RSS
peak above the child's baseline after its imports, and the absolute peak. A streamed file is read as
`READERS[sniff(path)](path)` iterated to its end, keeping nothing; "load_corpus" rows are `load_corpus([path])`, which
an ingest calls and which keeps every paper. records counts what a reader yields (papers, records without an
abstract, problems); records/s is records over read seconds; reading's share of an ingest is
read s / (read s + papers / --ingest-rate).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parents[1]
PUBMED_QA = ROOT / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"
GENERATOR = 3  # bumped when a generated file's content changes, so that older files are written again
MB = 1 << 20

LAST = ["Smith", "Wang", "Li", "Zhang", "Kim", "Nguyen", "Garcia", "Johnson", "Brown", "Rossi", "Patel", "Kumar",
        "Müller", "Sørensen", "García", "Žukauskas", "Çelik", "Nguyễn", "Łukasiewicz", "Ødegård", "Jäger", "Dvořák",
        "O'Brien", "Schmidt", "Tanaka", "Suzuki", "Silva", "Santos", "Martin", "Bernard", "Novák",
        "Ivanova"]  # fmt: skip
FIRST = ["John", "Wei", "Mei", "Ji-Hoon", "Anh", "Maria", "Robert", "Emily", "Giulia", "Priya", "Arjun", "José",
         "Zoë", "Søren", "Łukasz", "Ewa", "Björn", "François", "Hélène", "Ümit", "Jiří", "Kenji", "Ana",
         "David"]  # fmt: skip
JOURNALS = [
    ("The New England journal of medicine", "N Engl J Med", "1533-4406"),
    ("Lancet (London, England)", "Lancet", "1474-547X"),
    ("PloS one", "PLoS One", "1932-6203"),
    ("BMJ (Clinical research ed.)", "BMJ", "1756-1833"),
    ("Journal of clinical oncology : official journal of the American Society of Clinical Oncology",
     "J Clin Oncol", "1527-7755"),
    ("Scientific reports", "Sci Rep", "2045-2322"),
    ("Annals of surgery", "Ann Surg", "1528-1140"),
    ("Pediatrics", "Pediatrics", "1098-4275"),
]  # fmt: skip
MESH = ["Humans", "Female", "Male", "Adult", "Middle Aged", "Aged", "Retrospective Studies", "Prospective Studies",
        "Treatment Outcome", "Risk Factors", "Child", "Adolescent", "Cohort Studies", "Prognosis", "Mice", "Animals",
        "Neoplasms", "Diabetes Mellitus, Type 2", "Cross-Sectional Studies", "Surveys and Questionnaires"]  # fmt: skip
LABELS = [("BACKGROUND", "OBJECTIVE"), ("METHODS",), ("RESULTS",), ("CONCLUSIONS",)]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
CATEGORIES = ["hep-ph", "hep-th", "astro-ph.CO", "cs.LG", "cs.CL", "math.PR", "cond-mat.str-el", "quant-ph", "q-bio.NC",
              "stat.ML", "physics.optics", "math.AP", "eess.SP", "gr-qc"]  # fmt: skip
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sentence_pool() -> list[str]:
    """The sentences of PubMedQA's abstracts (real text: its word lengths, numbers, "<" and non-ASCII)."""
    sentences = []
    for line in PUBMED_QA.read_text(encoding="utf-8").splitlines():
        abstract = json.loads(line)["abstract"]
        sentences += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", abstract) if 30 <= len(s) <= 400]
    return sentences


def person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(LAST), rng.choice(FIRST)


# -- generated files -----------------------------------------------------------------------------------------------


def reuse(path: Path, params: dict) -> dict | None:
    """The file's recorded facts when it exists, was made with these parameters and has the recorded size."""
    meta = path.with_name(path.name + ".meta.json")
    try:
        facts = json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    ok = facts.get("params") == params and path.is_file() and path.stat().st_size == facts.get("bytes")
    return facts if ok else None


def generate(path: Path, params: dict, write: Callable[[Path], dict]) -> dict:
    """The facts of the file at `path`, written by `write` (into a temporary name, then moved) unless reused."""
    if (facts := reuse(path, params)) is not None:
        progress(f"reusing {path} ({facts['bytes'] / MB:,.0f} MB)")
        return facts
    progress(f"writing {path} ...")
    start = time.perf_counter()
    partial = path.with_name(path.name + ".partial")
    facts = {**write(partial), "params": params}
    partial.replace(path)
    facts["bytes"] = path.stat().st_size
    path.with_name(path.name + ".meta.json").write_text(json.dumps(facts))
    progress(f"  wrote {facts['bytes'] / MB:,.0f} MB in {time.perf_counter() - start:.0f} s")
    return facts


def pubmed_citations(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    pool = sentence_pool()
    citations = []
    for i in range(n):
        pmid = 30_000_000 + i * 7 + rng.randrange(7)
        journal = rng.choice(JOURNALS)
        year = rng.randint(1995, 2024)
        parts = []
        if rng.random() >= 0.10:  # about 10% of citations have no abstract
            labels = LABELS if rng.random() < 0.5 else [LABELS[0], LABELS[1], LABELS[3]]
            parts = [(rng.choice(label), " ".join(rng.sample(pool, rng.randint(1, 3)))) for label in labels]
        title = rng.choice(pool).rstrip(".")
        citations.append({
            "pmid": pmid,
            "journal": journal,
            "year": year,
            "month": rng.choice(MONTHS),
            "title": title + ".",
            "parts": parts,
            "italic": rng.random() < 0.1,  # inline markup in some abstracts, as real ones have
            "authors": [person(rng) for _ in range(rng.randint(3, 6))],
            "doi": f"10.{rng.randint(1000, 9999)}/j.{rng.randint(1000, 9999)}.{year}.{pmid}",
            "mesh": rng.sample(MESH, rng.randint(4, 10)),
            "references": [f"10.{rng.randint(1000, 9999)}/r.{rng.randint(1, 10**6)}" for _ in range(rng.randint(0, 8))],
            "volume": rng.randint(1, 400),
            "pages": rng.randint(1, 2000),
        })  # fmt: skip
    return citations


def pubmed_article(c: dict) -> str:
    year, pmid = c["year"], c["pmid"]
    title, iso, issn = (escape(x) for x in c["journal"])
    authors = "".join(
        f'<Author ValidYN="Y"><LastName>{escape(last)}</LastName><ForeName>{escape(first)}</ForeName>'
        f"<Initials>{first[0]}</Initials><AffiliationInfo><Affiliation>Department of Medicine, University Hospital, "
        f"{escape(last)} Institute, City, Country.</Affiliation></AffiliationInfo></Author>\n"
        for last, first in c["authors"]
    )
    abstract = ""
    if c["parts"]:
        texts = []
        for n, (label, text) in enumerate(c["parts"]):
            body = escape(text)
            if c["italic"] and n == 1:
                body = body.replace(" ", " <i>in vitro</i> ", 1)
            texts.append(f"<AbstractText Label={quoteattr(label)} NlmCategory={quoteattr(label)}>{body}</AbstractText>")
        abstract = (
            "<Abstract>\n"
            + "\n".join(texts)
            + f"\n<CopyrightInformation>© {year} The Authors.</CopyrightInformation>\n</Abstract>\n"
        )
    mesh = "".join(
        f'<MeshHeading><DescriptorName UI="D{MESH.index(m) * 7919 + 1000:06d}" MajorTopicYN="N">{escape(m)}'
        "</DescriptorName></MeshHeading>\n"
        for m in c["mesh"]
    )
    references = "".join(
        f"<Reference><Citation>{escape(c['authors'][0][0])} et al. A cited study. {iso}. {year - 3};12:1-9."
        f'</Citation><ArticleIdList><ArticleId IdType="doi">{ref}</ArticleId></ArticleIdList></Reference>\n'
        for ref in c["references"]
    )
    return (
        f"<PubmedArticle>\n"
        f'<MedlineCitation Status="MEDLINE" Owner="NLM" IndexingMethod="Automated">\n'
        f'<PMID Version="1">{pmid}</PMID>\n'
        f"<DateCompleted><Year>{year}</Year><Month>07</Month><Day>15</Day></DateCompleted>\n"
        f'<Article PubModel="Print-Electronic">\n'
        f'<Journal><ISSN IssnType="Electronic">{issn}</ISSN><JournalIssue CitedMedium="Internet">'
        f"<Volume>{c['volume']}</Volume><Issue>3</Issue><PubDate><Year>{year}</Year><Month>{c['month']}</Month>"
        f"</PubDate></JournalIssue><Title>{title}</Title><ISOAbbreviation>{iso}</ISOAbbreviation></Journal>\n"
        f"<ArticleTitle>{escape(c['title'])}</ArticleTitle>\n"
        f"<Pagination><StartPage>{c['pages']}</StartPage><MedlinePgn>{c['pages']}-{c['pages'] + 9}</MedlinePgn>"
        f"</Pagination>\n"
        f'<ELocationID EIdType="doi" ValidYN="Y">{c["doi"]}</ELocationID>\n'
        f"{abstract}"
        f'<AuthorList CompleteYN="Y">\n{authors}</AuthorList>\n'
        f"<Language>eng</Language>\n"
        f'<PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType></PublicationTypeList>\n'
        f"</Article>\n"
        f"<MedlineJournalInfo><Country>United States</Country><MedlineTA>{iso}</MedlineTA>"
        f"<NlmUniqueID>{pmid % 10**7}</NlmUniqueID><ISSNLinking>{issn}</ISSNLinking></MedlineJournalInfo>\n"
        f"<CitationSubset>IM</CitationSubset>\n"
        f"<MeshHeadingList>\n{mesh}</MeshHeadingList>\n"
        f"</MedlineCitation>\n"
        f"<PubmedData>\n"
        f'<History><PubMedPubDate PubStatus="received"><Year>{year}</Year><Month>1</Month><Day>4</Day>'
        f'</PubMedPubDate><PubMedPubDate PubStatus="pubmed"><Year>{year}</Year><Month>5</Month><Day>2</Day>'
        f"</PubMedPubDate></History>\n"
        f"<PublicationStatus>ppublish</PublicationStatus>\n"
        f'<ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId><ArticleId IdType="doi">{c["doi"]}</ArticleId>'
        f"</ArticleIdList>\n"
        f"{f'<ReferenceList>{chr(10)}{references}</ReferenceList>{chr(10)}' if references else ''}"
        f"</PubmedData>\n"
        f"</PubmedArticle>\n"
    )


def write_pubmed_xml(citations: list[dict]) -> Callable[[Path], dict]:
    def write(path: Path) -> dict:
        unpacked = 0
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
            for text in (
                '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January '
                '2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n',
                *map(pubmed_article, citations),
                "</PubmedArticleSet>\n",
            ):
                unpacked += len(text.encode())
                out.write(text)
        return {"records": len(citations), "unpacked": unpacked}

    return write


def write_jsonl(citations: list[dict]) -> Callable[[Path], dict]:
    def write(path: Path) -> dict:
        n = 0
        with path.open("w", encoding="utf-8") as out:
            for c in citations:
                if c["parts"]:
                    abstract = " ".join(f"{label}: {text}" for label, text in c["parts"])
                    record = {"doc_id": f"pmid:{c['pmid']}", "title": c["title"], "abstract": abstract,
                              "authors": [f"{last}, {first}" for last, first in c["authors"]],
                              "venue": c["journal"][0], "year": c["year"]}  # fmt: skip
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    n += 1
        return {"records": n}

    return write


def wrapped(text: str, indent: str = "") -> str:
    """Text broken into lines of 12 words, as the arXiv snapshot keeps the submitters' line breaks."""
    words = text.split(" ")
    return "\n".join(indent + " ".join(words[i : i + 12]) for i in range(0, len(words), 12))


def write_arxiv(target_bytes: int, seed: int) -> Callable[[Path], dict]:
    def write(path: Path) -> dict:
        rng = random.Random(seed)
        pool = sentence_pool()
        written, n, step = 0, 0, max(1, target_bytes // 10)
        with path.open("wb") as out:
            while written < target_bytes:
                # Unique ids in the snapshot's order: 5,000 a month from 0704 (new style), 1 in 10 old style.
                month = 7 * 12 + 3 + n // 5000
                yymm = f"{month // 12 % 100:02d}{month % 12 + 1:02d}"
                if n % 10 == 9:  # archive/YYMMNNN, 1991-1999
                    k = n // 10
                    archive = ("hep-th", "math", "astro-ph", "cond-mat")[k // 108_000 % 4]
                    arxiv_id = f"{archive}/{91 + k // 12_000 % 9}{k // 1000 % 12 + 1:02d}{k % 1000:03d}"
                else:  # YYMM.NNNN, YYMM.NNNNN from 2015
                    arxiv_id = f"{yymm}.{n % 5000 + 1:0{4 if month < 15 * 12 else 5}d}"
                names = [person(rng) for _ in range(rng.randint(1, 6))]
                versions = [
                    {"version": f"v{v}", "created": f"{rng.choice(DAYS)}, {rng.randint(1, 28)} "
                     f"{rng.choice(MONTHS)} 20{yymm[:2]} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
                     f"{rng.randint(0, 59):02d} GMT"}
                    for v in range(1, rng.randint(2, 4))
                ]  # fmt: skip
                record = {
                    "id": arxiv_id,
                    "submitter": " ".join(reversed(names[0])),
                    "authors": ", ".join(f"{first[0]}. {last}" for last, first in names),
                    "title": wrapped(rng.choice(pool).rstrip("."), "  ").strip(),
                    "comments": f"{rng.randint(4, 60)} pages, {rng.randint(1, 20)} figures",
                    "journal-ref": f"Phys.Rev.D{rng.randint(50, 110)}:{rng.randint(1000, 99999)},20{yymm[:2]}"
                    if rng.random() < 0.3 else None,
                    "doi": f"10.1103/PhysRevD.{rng.randint(50, 110)}.{n:06d}"
                    if rng.random() < 0.4 else None,
                    "report-no": None,
                    "categories": " ".join(rng.sample(CATEGORIES, rng.randint(1, 3))),
                    "license": rng.choice([None, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
                                           "http://creativecommons.org/licenses/by/4.0/"]),
                    "abstract": wrapped(" ".join(rng.sample(pool, rng.randint(3, 5))), "  ") + "\n",
                    "versions": versions,
                    "update_date": f"20{yymm[:2]}-{yymm[2:]}-{rng.randint(1, 28):02d}",
                    "authors_parsed": [[last, first[0] + ".", ""] for last, first in names],
                }  # fmt: skip
                line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
                out.write(line)
                if (written + len(line)) // step > written // step:
                    progress(f"  {(written + len(line)) / MB:,.0f} of {target_bytes / MB:,.0f} MB")
                written += len(line)
                n += 1
        return {"records": n}

    return write


# -- reading, in a child process -----------------------------------------------------------------------------------


def child(mode: str, path: Path) -> None:
    """Read the file (mode "reader", "windows" or "load_corpus") and print the measures as JSON."""
    from rag.corpus.loaders import load_corpus
    from rag.corpus.readers import NO_ABSTRACT, READERS, Deletion, sniff
    from rag.records import Paper

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    counts = {"papers": 0, "no_abstract": 0, "problems": 0, "deletions": 0}
    start = time.perf_counter()
    if mode == "reader":
        kind = sniff(path)
        if kind is None:
            sys.exit(f"{path}: sniff found no format")
        for item in READERS[kind](path):
            if isinstance(item, Paper):
                counts["papers"] += 1
            elif isinstance(item, Deletion):
                counts["deletions"] += 1
            elif item.reason == NO_ABSTRACT:
                counts["no_abstract"] += 1
            else:
                counts["problems"] += 1
    elif mode == "windows":  # what `rag ingest` does with the file besides embedding and writing
        from rag.corpus.loaders import Corpus, LoadResult, windows
        from rag.index.ingest import WINDOW

        kind = "windows"
        corpus = Corpus.of([path])
        counted = sum(1 for _ in corpus.records(LoadResult()))
        result = LoadResult()
        counts["papers"] = sum(len(window) for window in windows(corpus, result, WINDOW))
        counts |= {"no_abstract": result.no_abstract, "problems": len(result.problems), "counted": counted}
    else:
        kind = "load_corpus"
        result = load_corpus([path])
        counts = {"papers": len(result.papers), "no_abstract": result.no_abstract, "problems": len(result.problems),
                  "deletions": len(result.deletions), "merged": result.merged}  # fmt: skip
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"kind": kind, "seconds": seconds, "baseline_kb": baseline, "peak_kb": peak, **counts}))


def measure(mode: str, path: Path) -> dict:
    progress(f"reading {path.name} ({mode}) ...")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"reading {path} ({mode}) failed: {proc.stderr.strip()}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    progress(f"  {found['seconds']:.1f} s")
    return found


def prepare(args: argparse.Namespace) -> dict[str, dict]:
    """The generated files (written, or reused) and their facts: the PubMed XML, its JSONL, the arXiv snapshot."""
    args.work.mkdir(parents=True, exist_ok=True)
    pubmed_params = {"generator": GENERATOR, "citations": args.pubmed, "seed": args.seed}
    xml_path = args.work / "pubmed25n0001.xml.gz"
    jsonl_path = args.work / "pubmed25n0001.jsonl"
    arxiv_path = args.work / "arxiv-metadata-oai-snapshot.json"
    citations: list[dict] = []

    def write_with(writer: Callable[[list[dict]], Callable[[Path], dict]]) -> Callable[[Path], dict]:
        def write(path: Path) -> dict:
            if not citations:
                citations.extend(pubmed_citations(args.pubmed, args.seed))
            return writer(citations)(path)

        return write

    arxiv_params = {"generator": GENERATOR, "mb": args.arxiv_mb, "seed": args.seed}
    return {
        str(xml_path): generate(xml_path, pubmed_params, write_with(write_pubmed_xml)),
        str(jsonl_path): generate(jsonl_path, pubmed_params, write_with(write_jsonl)),
        str(arxiv_path): generate(arxiv_path, arxiv_params, write_arxiv(args.arxiv_mb * MB, args.seed)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("/tmp/formats-bench"), help="where the files are generated")
    parser.add_argument("--pubmed", type=int, default=30_000, help="citations in the PubMed XML file")
    parser.add_argument("--arxiv-mb", type=int, default=1024, help="size of the arXiv snapshot file, in MB")
    parser.add_argument("--ingest-rate", type=float, default=48.0, help="an ingest's abstracts per second")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-load-corpus", action="store_true", help="only the readers (and JSONL's load_corpus)")
    parser.add_argument(
        "--ingest-seconds", type=int, default=0, help="also a real `rag ingest` of the arXiv file, for this long"
    )
    parser.add_argument("--resume-seconds", type=int, default=150, help="how long the resumed ingest runs")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    if args.prepare:
        print(json.dumps(prepare(args)))
        return

    begun = time.perf_counter()
    # The files are made in a child process too: a child's ru_maxrss starts at its parent's RSS (fork), kept by exec.
    made = subprocess.run([sys.executable, str(Path(__file__).resolve()), *sys.argv[1:], "--prepare"], cwd=ROOT,
                          stdout=subprocess.PIPE, text=True)  # fmt: skip
    if made.returncode != 0:
        sys.exit("generating the files failed")
    files = {Path(path): facts for path, facts in json.loads(made.stdout.strip().splitlines()[-1]).items()}
    xml_path, jsonl_path, arxiv_path = files
    generated = time.perf_counter() - begun

    runs = [("reader", xml_path), ("reader", arxiv_path), ("load_corpus", jsonl_path)]
    runs += [("windows", xml_path), ("windows", arxiv_path)]
    if not args.skip_load_corpus:
        runs += [("load_corpus", xml_path), ("load_corpus", arxiv_path)]
    results = [(mode, path, measure(mode, path)) for mode, path in runs]
    ingested = ingest_for(arxiv_path, args) if args.ingest_seconds else None

    rate = args.ingest_rate
    print(f"\n## Corpus readers against JSONL ({os.cpu_count()} cores, files in {args.work})\n")
    print(
        f"| file | size | records | read s | records/s | peak RSS (MB) | reading's share of an ingest at {rate:g}/s |"
    )
    print("|---|---|---|---|---|---|---|")
    for mode, path, r in results:
        facts = files[path]
        size = f"{facts['bytes'] / MB:,.0f} MB" + (
            f" ({facts['unpacked'] / MB:,.0f} MB unpacked)" if "unpacked" in facts else ""
        )
        records = r["papers"] + r["no_abstract"] + r["problems"] + r["deletions"]
        detail = [f"{r['papers']:,} papers"]
        detail += [f"{r['no_abstract']:,} without abstract"] if r["no_abstract"] else []
        detail += [f"{r['problems']:,} problems"] if r["problems"] else []
        how = {"reader": f"`READERS[{r['kind']!r}]`", "windows": "ingest's two passes (count, windows)"}.get(
            mode, "`load_corpus`"
        )
        share = r["seconds"] / (r["seconds"] + r["papers"] / rate) if r["papers"] else 1.0
        above = (r["peak_kb"] - r["baseline_kb"]) / 1024
        print(
            f"| {path.name}, {how} | {size} | {records:,} ({', '.join(detail)}) | {r['seconds']:.1f} | "
            f"{records / r['seconds']:,.0f} | {above:,.1f} above baseline ({r['peak_kb'] / 1024:,.0f} total) | "
            f"{share:.2%} |"
        )
    if ingested:
        print(
            f"\n`rag ingest {arxiv_path.name}` into a fresh index, killed after {args.ingest_seconds} s: counted "
            f"{ingested['total']:,} records and stored the first batch in {ingested['first_s']:.0f} s, then "
            f"stored {ingested['stored']:,} "
            f"({ingested['rate']:.1f} records/s); peak RSS of the ingest and its workers together "
            f"{ingested['peak_mb']:,.0f} MB (sampled every 0.5 s). The same command again: "
            f"{ingested['resumed']}."
        )
    print(
        f"\nGenerating (or reusing) the files: {generated:.0f} s; the whole run: {time.perf_counter() - begun:.0f} s."
    )


def tree_rss_mb(pid: int) -> float:
    """The resident memory of a process and its descendants, in MB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
            rss[int(stat.parent.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(rss.get(p, 0) for p in tree) / MB


def ingest_for(path: Path, args: argparse.Namespace) -> dict:
    """A real `rag ingest` of the file into a fresh data directory, its memory sampled, killed after
    --ingest-seconds; then the same command for --resume-seconds, to see that it resumes where the first stopped."""
    import shutil
    import signal
    import threading

    data = args.work / "ingest-data"
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "RAG_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "rag", "ingest", str(path), "-v"]

    def run(seconds: float) -> tuple[list[tuple[float, int, int]], float]:
        """(seconds since start, stored, total) for each stored batch, and the peak RSS in MB."""
        progress(f"rag ingest {path.name} for {seconds:.0f} s ...")
        proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)  # fmt: skip
        begun, peak, batches = time.perf_counter(), 0.0, []

        def follow() -> None:
            for line in proc.stdout:
                if match := re.match(r"stored (\d+)/(\d+)", line):
                    batches.append((time.perf_counter() - begun, int(match[1]), int(match[2])))

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        while proc.poll() is None and time.perf_counter() - begun < seconds:
            peak = max(peak, tree_rss_mb(proc.pid))
            time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        reader.join(5)
        return batches, peak

    batches, peak = run(args.ingest_seconds)
    if len(batches) < 2:
        sys.exit(f"the ingest stored fewer than two batches in {args.ingest_seconds} s")
    (first_s, first_done, total), (last_s, done, _) = batches[0], batches[-1]
    again, _ = run(args.resume_seconds)
    resumed = (f"its first report {again[0][1]:,}/{again[0][2]:,} at {again[0][0]:.0f} s (the {done:,} stored "
               f"before found unchanged)" if again else f"nothing stored within {args.resume_seconds} s")  # fmt: skip
    return {"total": total, "first_s": first_s, "stored": done, "rate": (done - first_done) / (last_s - first_s),
            "peak_mb": peak, "resumed": resumed}  # fmt: skip


if __name__ == "__main__":
    main()
