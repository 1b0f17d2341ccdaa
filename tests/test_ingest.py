"""Ingestion into a real embedded Chroma: counts, idempotence, replacement of changed abstracts, crash safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SEEDS, run_rag, write_jsonl

from rag.corpus.chunker import chunk_paper
from rag.corpus.loaders import load_corpus
from rag.errors import BadInput
from rag.index import doctor, store
from rag.index.ingest import ingest
from rag.index.keywords import Filters, read_manifest
from rag.index.retriever import Retriever
from rag.records import Query
from rag.settings import Settings

PUBMED = ROOT / "eval" / "datasets" / "pubmedqa" / "corpus.jsonl"


def expected_chunk_ids(paths, settings) -> set[str]:
    return {
        c.chunk_id
        for p in load_corpus(paths).papers
        for c in chunk_paper(p, settings.chunk_size, settings.chunk_overlap)
    }


def children(pid: int) -> dict[int, bytes]:
    """A process's children: their ids and command lines."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):  # the process ended meanwhile
            continue
    return found


def child_commands(pid: int) -> list[bytes]:
    """The command lines of a process's children (the resource tracker's left out)."""
    return [command for command in children(pid).values() if b"resource_tracker" not in command]


def stored_ids(settings) -> list[str]:
    collection = store.open_collection(settings, create=False)
    return list(collection.get(include=[])["ids"]) if collection else []


def test_seeds_are_indexed_with_the_right_chunks(seeds_settings) -> None:
    ids = stored_ids(seeds_settings)
    assert len(ids) == len(set(ids))
    assert set(ids) == expected_chunk_ids([SEEDS], seeds_settings)
    manifest = read_manifest(seeds_settings.keyword_dir)
    assert manifest["docs"] == 95 and manifest["chunks"] == len(ids)
    assert manifest["venues"] == {"ICLR": 57, "ICML": 38}


def test_a_first_ingest_builds_the_keyword_index_the_collection_would_give(seeds_settings, tmp_path: Path) -> None:
    """Into an empty collection, the ingest tokenizes each batch as it writes it instead of reading every chunk
    back at the end: the index must be the one a rebuild from the collection gives."""
    from rag.index.keywords import KeywordIndex
    from rag.terms import tokenize

    written = KeywordIndex.load(seeds_settings.keyword_dir)
    assert written is not None and len(written.segments) == 1  # no delta
    rebuilt_manifest = KeywordIndex.build(store.iter_chunks(store.open_collection(seeds_settings)), tmp_path / "kw")
    rebuilt = KeywordIndex.load(tmp_path / "kw")
    assert {k: v for k, v in written.manifest.items() if k != "built"} == {
        k: v for k, v in rebuilt_manifest.items() if k != "built"
    }
    assert sorted(written.segments[0].chunk_ids) == sorted(rebuilt.segments[0].chunk_ids)
    questions = ["adversarial robustness sharpness", "protein language model atom scale", "graph neural network"]
    for words in tokenize(questions):
        every = len(rebuilt.segments[0].chunk_ids)  # every chunk with a score (the order of ties may differ)
        found = written.segments[0].search(words, every, Filters())
        assert found and sorted((c, round(s, 5)) for c, s in found) == sorted(
            (c, round(s, 5)) for c, s in rebuilt.segments[0].search(words, every, Filters())
        )


def test_paged_reads_give_every_chunk_and_paper_once(seeds_settings, monkeypatch) -> None:
    """Reads page through the collection (1,000 or 5,000 rows at a time); pages of 7 exercise the paging on the
    seeds."""
    collection = store.open_collection(seeds_settings, create=False)
    whole = stored_ids(seeds_settings)
    monkeypatch.setattr(store, "PAGE", 7)
    monkeypatch.setattr(store, "READ_PAGE", 7)
    paged = [cid for cid, _, _ in store.iter_chunks(collection)]
    assert len(paged) == len(whole) and set(paged) == set(whole)
    papers = store.list_papers(collection)
    assert len(papers) == 95 == len({p["doc_id"] for p in papers}) == len(store.indexed_doc_ids(collection))


def test_reingest_adds_nothing(seeds_settings) -> None:
    before = stored_ids(seeds_settings)
    report = ingest([SEEDS], seeds_settings)
    assert (report.added, report.updated, report.unchanged, report.chunks_written) == (0, 0, 95, 0)
    assert sorted(stored_ids(seeds_settings)) == sorted(before)


def test_progress_counts_the_files_records_until_all_are_handled(make_settings, tmp_path: Path) -> None:
    settings = make_settings(ingest_batch_size=2)
    papers = [{"doc_id": f"p{i}", "abstract": f"Paper {i} studies topic {i}. It finds result {i}."} for i in range(7)]
    ingest([write_jsonl(tmp_path / "first.jsonl", papers[:4])], settings)
    calls: list[tuple[int, int]] = []
    report = ingest([write_jsonl(tmp_path / "all.jsonl", papers)], settings, lambda *call: calls.append(call))
    assert (report.added, report.unchanged) == (3, 4)
    assert [total for _, total in calls] == [7] * len(calls)  # every record of the files, counted first
    done = [d for d, _ in calls]
    assert done[0] == 4  # the unchanged ones, at once
    assert done == sorted(done) and done[-1] == 7 and len(set(done)) >= 3  # then batch by batch


def test_changed_abstract_replaces_its_chunks(make_settings, tmp_path: Path) -> None:
    settings = make_settings(chunk_size=200)
    long_text = " ".join(f"Sentence number {i} talks about graph neural networks." for i in range(12))
    corpus = write_jsonl(
        tmp_path / "c.jsonl",
        [{"doc_id": "p1", "abstract": long_text}, {"doc_id": "p2", "abstract": "Other paper. About robots."}],
    )
    first = ingest([corpus], settings)
    assert (first.added, first.updated) == (2, 0)
    old = [i for i in stored_ids(settings) if i.startswith("p1::")]
    assert len(old) > 2
    write_jsonl(
        corpus,
        [
            {"doc_id": "p1", "abstract": "Now a short abstract about protein folding."},
            {"doc_id": "p2", "abstract": "Other paper. About robots."},
        ],
    )
    second = ingest([corpus], settings)
    assert (second.added, second.updated, second.unchanged) == (0, 1, 1)
    assert [i for i in stored_ids(settings) if i.startswith("p1::")] == ["p1::0"]
    hits = Retriever(settings).search(Query("protein folding", 1))
    assert hits[0].doc_id == "p1" and hits[0].text == "Now a short abstract about protein folding."
    assert Retriever(settings).search(Query("graph neural networks sentence number", 2, mode="keyword")) == []


def test_bad_file_writes_nothing(make_settings, tmp_path: Path) -> None:
    settings = make_settings()
    good = write_jsonl(tmp_path / "good.jsonl", [{"doc_id": "g", "abstract": "Fine text. Really fine."}])
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(BadInput):
        ingest([good, tmp_path / "empty.csv"], settings)
    assert stored_ids(settings) == []


@pytest.mark.slow
def test_killed_ingest_is_completed_by_the_next_run(cli_env, tmp_path: Path) -> None:
    """Kill -9 a real `rag ingest` after its first stored batch; the re-run must end with exactly the right chunks."""
    corpus = write_jsonl(tmp_path / "part.jsonl", [json.loads(line) for line in PUBMED.read_text().splitlines()[:240]])
    env = {**cli_env, "RAG_INGEST_BATCH_SIZE": "40"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag", "ingest", str(corpus), "-v"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    for line in proc.stdout:
        if line.startswith("stored "):
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the ingest finished before it could be killed"

    from rag.settings import Settings

    settings = Settings(_env_file=None, data_dir=Path(env["RAG_DATA_DIR"]), model_cache=Path(env["RAG_MODEL_CACHE"]))
    partial = stored_ids(settings)
    expected = expected_chunk_ids([corpus], settings)
    assert 0 < len(partial) < len(expected)

    rerun = subprocess.run(
        [sys.executable, "-m", "rag", "ingest", str(corpus)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert rerun.returncode == 0, rerun.stderr
    final = stored_ids(settings)
    assert len(final) == len(set(final)) == len(expected)
    assert set(final) == expected
    assert read_manifest(settings.keyword_dir)["chunks"] == len(expected)


@pytest.mark.slow
def test_a_long_ingest_embeds_in_worker_processes_and_stores_the_same_vectors(cli_env, tmp_path: Path) -> None:
    """From POOL_MIN_PAPERS papers on, `rag ingest` embeds in worker processes (one per core) while it writes: the
    workers must really run, and every chunk must get the vector the embedder of this process gives it."""
    import time

    import numpy as np

    from rag.index.models import embedder_for
    from rag.index.workers import POOL_MIN_PAPERS

    lines = PUBMED.read_text().splitlines()[:POOL_MIN_PAPERS]
    corpus = write_jsonl(tmp_path / "long.jsonl", [json.loads(line) for line in lines])
    env = {**cli_env, "RAG_EMBED_WORKERS": "2"}
    log = tmp_path / "ingest.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "rag", "ingest", str(corpus)], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=stderr)  # fmt: skip
    workers = 0
    while proc.poll() is None:
        workers = max(workers, sum(b"spawn_main" in command for command in child_commands(proc.pid)))
        time.sleep(0.2)
    assert proc.returncode == 0, log.read_text()
    assert workers == 2

    settings = Settings(_env_file=None, data_dir=Path(env["RAG_DATA_DIR"]), model_cache=Path(env["RAG_MODEL_CACHE"]))
    collection = store.open_collection(settings, create=False)
    stored = collection.get(include=["embeddings", "documents"])
    assert set(stored["ids"]) == expected_chunk_ids([corpus], settings)
    here = embedder_for(settings, store.index_precision(collection)).embed(stored["documents"])  # no titles here
    assert np.abs(np.asarray(stored["embeddings"]) - here).max() < 1e-4


@pytest.mark.slow
def test_the_embedding_workers_end_with_a_killed_ingest(cli_env, tmp_path: Path) -> None:
    """Kill -9 an ingest while its workers embed: they end too (they went on spinning before)."""
    import os
    import time

    from rag.index.workers import POOL_MIN_PAPERS

    lines = PUBMED.read_text().splitlines()[:POOL_MIN_PAPERS]
    corpus = write_jsonl(tmp_path / "long.jsonl", [json.loads(line) for line in lines])
    env = {**cli_env, "RAG_EMBED_WORKERS": "2"}
    proc = subprocess.Popen([sys.executable, "-m", "rag", "ingest", str(corpus)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = [child for child, command in children(proc.pid).items() if b"spawn_main" in command]
        time.sleep(0.2)
    assert len(workers) == 2, "the workers did not start"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "workers outlived the killed ingest"


@pytest.mark.slow
def test_ingest_and_search_through_a_chroma_server(chroma_server, make_settings) -> None:
    host, port = chroma_server
    settings = make_settings(chroma_host=host, chroma_port=port, collection="server-seeds")
    report = ingest([SEEDS], settings)
    assert report.added == 95
    assert ingest([SEEDS], settings).unchanged == 95
    import chromadb

    remote = chromadb.HttpClient(host=host, port=port).get_collection("server-seeds")
    assert remote.count() == len(expected_chunk_ids([SEEDS], settings))
    hits = Retriever(settings).search(Query("protein language model at the atom scale", 3))
    assert hits[0].doc_id == "000_c1913070b188e76b#8"
    assert not (settings.data_dir / "chroma").exists()  # nothing went to the embedded store


PAPERS = [
    {"doc_id": "sam", "abstract": "Sharpness-aware minimization finds flat minima and improves generalization."},
    {"doc_id": "gnn", "abstract": "Deep graph neural networks suffer from oversmoothing and oversquashing."},
    {"doc_id": "hcg", "abstract": "Serum hCG was measured with five commercial immunoassays in pregnant women."},
]


def test_removed_papers_leave_every_index(make_settings, tmp_path: Path) -> None:
    from rag.index.library import Library

    settings = make_settings()
    ingest([write_jsonl(tmp_path / "p.jsonl", PAPERS)], settings)
    library = Library(settings)
    assert library.search(Query("oversmoothing graph neural networks", 1, mode="keyword"))[0].doc_id == "gnn"
    report = library.remove(["gnn", "nope"])
    assert (report.removed, report.not_indexed) == (["gnn"], ["nope"])
    for mode in ("dense", "keyword", "hybrid"):
        assert "gnn" not in [
            r.doc_id for r in library.search(Query("oversmoothing graph neural networks", 3, mode=mode))
        ]
    assert library.stats()["abstracts"] == 2 and read_manifest(settings.keyword_dir)["chunks"] == 2


def test_cli_remove_reports_unknown_ids_with_exit_2(cli_env, tmp_path: Path) -> None:
    run_rag("ingest", str(write_jsonl(tmp_path / "p.jsonl", PAPERS)), env=cli_env)
    result = run_rag("remove", "sam", "missing-id", env=cli_env)
    assert result.returncode == 2 and "removed 1" in result.stdout
    assert result.stderr.strip() == "rag: not indexed, so not removed: missing-id"
    assert json.loads(run_rag("stats", "--json", env=cli_env).stdout)["abstracts"] == 2


def test_sync_makes_the_index_hold_exactly_the_files_papers(make_settings, tmp_path: Path) -> None:
    settings = make_settings()
    path = write_jsonl(tmp_path / "p.jsonl", PAPERS)
    ingest([path], settings)
    changed = [PAPERS[0], {**PAPERS[2], "abstract": PAPERS[2]["abstract"] + " Results differed by assay."}]
    write_jsonl(path, [*changed, "{broken"])
    with pytest.raises(BadInput, match="--sync needs files that read without errors"):
        ingest([path], settings, sync=True)  # a record that cannot be read would lose its paper: nothing changes
    assert store.indexed_doc_ids(store.open_collection(settings, create=False)) == {"sam", "gnn", "hcg"}
    write_jsonl(path, changed)
    report = ingest([path], settings, sync=True)
    assert (report.unchanged, report.updated, report.removed) == (1, 1, 1)
    assert store.indexed_doc_ids(store.open_collection(settings, create=False)) == {"sam", "hcg"}
    assert read_manifest(settings.keyword_dir)["docs"] == 2


@pytest.mark.slow
def test_two_workers_ingest_into_one_chroma_server_at_once(chroma_server, cli_env, tmp_path: Path) -> None:
    """Each worker has its own data directory (as on separate machines) and its own file; the server's collection
    ends up with every chunk of both, once, and a third machine's keyword index is built from it."""
    host, port = chroma_server
    lines = PUBMED.read_text().splitlines()
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    files[0].write_text("\n".join(lines[:200]) + "\n")
    files[1].write_text("\n".join(lines[200:400]) + "\n")
    server = {"CHROMA_HOST": host, "CHROMA_PORT": str(port), "RAG_COLLECTION": "two-workers"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "rag", "ingest", str(path)],
            env={**cli_env, **server, "RAG_DATA_DIR": str(tmp_path / f"worker-{i}")},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, path in enumerate(files)
    ]
    outputs = [w.communicate(timeout=600) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    assert all("added 200" in out for out, _ in outputs)
    import chromadb

    remote = chromadb.HttpClient(host=host, port=port).get_collection("two-workers")
    settings = Settings(data_dir=tmp_path / "reader", collection="two-workers", chroma_host=host, chroma_port=port,
                        model_cache=Path(cli_env["RAG_MODEL_CACHE"]))  # fmt: skip
    assert remote.count() == len(expected_chunk_ids(files, settings))  # nothing lost, nothing twice
    reader = Retriever(settings)
    for path in files:
        first = json.loads(path.read_text().splitlines()[0])
        question = first["abstract"][:200]
        assert reader.search(Query(question, 3, mode="keyword"))[0].doc_id == first["doc_id"]
        assert reader.search(Query(question, 3, mode="dense"))[0].doc_id == first["doc_id"]


def test_a_damaged_keyword_index_heals_and_stats_stay_true(make_settings, tmp_path: Path) -> None:
    from rag.index.library import Library

    settings = make_settings()
    ingest([write_jsonl(tmp_path / "p.jsonl", PAPERS)], settings)
    folder = settings.keyword_dir
    (folder / "main" / "chunk_ids.json").write_text("{garbled")
    assert Library(settings).search(Query("oversmoothing graph networks", 1, mode="keyword"))[0].doc_id == "gnn"
    for path in [p for p in (folder / "main").iterdir() if p.name != "chunk_ids.json"]:
        path.unlink()  # the BM25 files gone
    assert Library(settings).search(Query("serum hCG immunoassays", 1, mode="keyword"))[0].doc_id == "hcg"
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "chunks": 1, "docs": 1}))  # stale
    assert Library(settings).stats()["abstracts"] == 3
    (folder / "manifest.json").write_text("not json")
    assert Library(settings).stats()["abstracts"] == 3
    assert ingest([tmp_path / "p.jsonl"], settings).unchanged == 3  # and an ingest repairs the files
    assert json.loads((folder / "manifest.json").read_text())["docs"] == 3


def test_a_damaged_store_is_one_line_with_what_to_do(cli_env, tmp_path: Path) -> None:
    run_rag("ingest", str(write_jsonl(tmp_path / "p.jsonl", PAPERS)), env=cli_env)
    sqlite = Path(cli_env["RAG_DATA_DIR"]) / "chroma" / "chroma.sqlite3"
    data = bytearray(sqlite.read_bytes())
    data[100:4096] = bytes(3996)  # the first page's schema zeroed
    sqlite.write_bytes(bytes(data))
    result = run_rag("stats", env=cli_env)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "is damaged" in result.stderr and "ingest your corpus files again" in result.stderr


@pytest.mark.slow
def test_two_ingests_into_one_embedded_index_take_turns_and_lose_nothing(cli_env, make_settings, tmp_path) -> None:
    lines = PUBMED.read_text().splitlines()
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    files[0].write_text("\n".join(lines[:150]) + "\n")
    files[1].write_text("\n".join(lines[150:300]) + "\n")
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "rag", "ingest", str(path)],
            env=cli_env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in files
    ]
    outputs = [w.communicate(timeout=600) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    assert any("waiting for it to finish" in err for _, err in outputs)  # the second writer waited its turn
    settings = make_settings(data_dir=Path(cli_env["RAG_DATA_DIR"]))
    retriever = Retriever(settings)
    assert retriever.collection.count() == len(expected_chunk_ids(files, settings))
    firsts = [(text, meta["doc_id"]) for _, text, meta in store.iter_chunks(retriever.collection)
              if meta["chunk_index"] == 0]  # fmt: skip
    assert len(firsts) == 300
    for text, doc_id in firsts:  # every chunk has its vector: a first chunk's own text finds it
        assert retriever.search(Query(text, 1, mode="dense"))[0].doc_id == doc_id


def lose_vector_log_entries(settings, count: int) -> None:
    """The fault two unlocked writers caused: chunks whose metadata is stored but whose vectors never reached the
    vector index (here: the last entries of Chroma's write-ahead log are deleted before the index replays it)."""
    import sqlite3

    with sqlite3.connect(settings.chroma_path / "chroma.sqlite3") as db:
        db.execute(
            "DELETE FROM embeddings_queue WHERE seq_id IN "
            "(SELECT seq_id FROM embeddings_queue WHERE operation = 0 ORDER BY seq_id DESC LIMIT ?)",
            (count,),
        )


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_doctor_finds_and_repairs_what_went_wrong(cli_env, make_settings, tmp_path: Path) -> None:
    from rag.index.library import Library

    settings = make_settings(data_dir=Path(cli_env["RAG_DATA_DIR"]))
    long_paper = {
        "doc_id": "long",
        "abstract": " ".join(f"Finding {i} about kinase inhibitors in mice." for i in range(60)),
    }
    path = write_jsonl(tmp_path / "p.jsonl", [*PAPERS, long_paper])
    ingest([path], settings)
    assert run_rag("doctor", env=cli_env).returncode == 0
    store.open_collection(settings, create=False).delete(ids=["long::0"])  # a paper missing a chunk
    lose_vector_log_entries(settings, 1)  # the last chunk written: the long paper's last one
    (settings.keyword_dir / "manifest.json").write_text("garbled")
    found = run_rag("doctor", "--json", env=cli_env)
    assert found.returncode == 1
    failing = {f["check"]: f for f in json.loads(found.stdout)["findings"] if not f["ok"]}
    assert set(failing) == {"vectors", "papers", "keyword index"}
    assert failing["vectors"]["detail"].startswith("1 chunk") and "long" in failing["papers"]["detail"]
    repaired = run_rag("doctor", "--repair", env=cli_env)
    assert "repaired: embedded 1 chunk(s) again" in repaired.stdout and "PROBLEM  papers" in repaired.stdout
    assert repaired.returncode == 1  # the partly stored paper needs its file
    assert ingest([path], settings).updated == 1
    assert run_rag("doctor", env=cli_env).returncode == 0
    last = sorted(stored_ids(settings), key=lambda cid: int(cid.split("::")[1]))[-1]
    text = store.get_chunks(store.open_collection(settings, create=False), [last])[last][0]
    assert Library(settings).search(Query(text, 1, mode="dense"))[0].doc_id == "long"


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_rebuild_starts_the_index_afresh_from_the_files(cli_env, make_settings, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", PAPERS)
    env = {**cli_env, "RAG_EMBEDDING_PRECISION": "fp32"}
    run_rag("ingest", str(path), env=env)
    int8 = {**cli_env, "RAG_EMBEDDING_PRECISION": "int8"}
    doctor = run_rag("doctor", env=int8)
    assert doctor.returncode == 1 and "RAG_EMBEDDING_PRECISION asks for int8" in doctor.stdout
    broken = write_jsonl(tmp_path / "broken.jsonl", [*PAPERS[:2], {"doc_id": "x"}])
    refused = run_rag("ingest", "--rebuild", str(broken), env=int8)
    assert refused.returncode == 2 and "nothing changed" in refused.stderr
    rebuilt = run_rag("ingest", "--rebuild", str(write_jsonl(tmp_path / "two.jsonl", PAPERS[:2])), env=int8)
    assert rebuilt.returncode == 0 and rebuilt.stdout.startswith("added 2, updated 0")
    assert run_rag("doctor", env=int8).returncode == 0
    settings = make_settings(data_dir=Path(cli_env["RAG_DATA_DIR"]))
    assert store.index_precision(store.open_collection(settings, create=False)) == "int8"
    assert sorted(stored_ids(settings)) == ["gnn::0", "sam::0"]


def test_the_score_arrays_built_on_disk_are_the_ones_bm25s_builds(tmp_path: Path, monkeypatch) -> None:
    """The keyword index counts words slice by slice, spills them and writes bm25s's arrays block by block
    (bounded memory): what it writes must be what bm25s itself builds from the same words, file for file."""
    import bm25s
    import numpy as np
    from bm25s.tokenization import Tokenized

    from rag.index import postings
    from rag.index.keywords import SegmentBuilder
    from rag.terms import tokenize

    monkeypatch.setattr(postings, "SLICE_CHUNKS", 7)  # many slices and blocks on a small corpus
    monkeypatch.setattr(postings, "BLOCK_ENTRIES", 50)
    rng = np.random.default_rng(7)
    words = [f"{a}{b}" for a in ("gene", "cell", "tumour", "protein", "neuron") for b in ("al", "ic", "ase", "in")]
    texts = [" ".join(rng.choice(words, rng.integers(0, 40))) for _ in range(300)]
    texts[5] = texts[6] = ""  # chunks without a word count too
    rows = [(f"d{i}::0", text, {"doc_id": f"d{i}"}) for i, text in enumerate(texts)]
    killed, running = tmp_path / ".keywords-spill-999999999-a", tmp_path / f".keywords-spill-{os.getpid()}-b"
    killed.mkdir(), running.mkdir()  # a build killed before it cleaned up, one still at work
    SegmentBuilder.of(rows, slice_rows=11, workdir=tmp_path).write(tmp_path / "ours")
    assert list(tmp_path.glob(".keywords-spill-*")) == [running]  # ours and the dead build's spills are removed

    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(word, len(vocab)) for word in chunk] for chunk in tokenize(texts)]
    reference = bm25s.BM25()
    reference.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    reference.save(str(tmp_path / "theirs"), show_progress=False)
    for name in ("data", "indices", "indptr"):
        ours, theirs = (np.load(tmp_path / side / f"{name}.csc.index.npy") for side in ("ours", "theirs"))
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert np.allclose(ours, theirs, rtol=1e-6) if name == "data" else np.array_equal(ours, theirs)
    for name in ("params.index.json", "vocab.index.json"):
        ours, theirs = (json.loads((tmp_path / side / name).read_text()) for side in ("ours", "theirs"))
        assert ours == theirs


def test_words_and_scores_are_bm25s_s_without_importing_it(tmp_path: Path) -> None:
    """Questions are tokenized and scored without bm25s (its import, with scipy's, was a fifth of a second of every
    cold search): the words must be those bm25s.tokenize gives and the scores those of bm25s reading the same files,
    on the evaluation sets' PubMedQA and SciFact abstracts (Unicode, numbers, hyphens) and on odd input."""
    import bm25s
    import numpy as np
    import Stemmer

    from rag.index.keywords import Scores, SegmentBuilder
    from rag.terms import tokenize

    corpora = [ROOT / "eval" / "datasets" / name / "corpus.jsonl" for name in ("pubmedqa", "scifact")]
    texts = [json.loads(line)["abstract"] for path in corpora for line in path.open()]
    texts += ["", "A", "Über naïve café: CO₂ at 3.7% and β-blockers don't", "日本語のテキスト 123 ab", "the THE The"]
    reference = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False,
                               show_progress=False)  # fmt: skip
    assert tokenize(texts) == reference

    rows = [(f"d{i}::0", text, {"doc_id": f"d{i}"}) for i, text in enumerate(texts[:1100])]
    SegmentBuilder.of(rows).write(tmp_path / "seg")
    theirs, ours = bm25s.BM25.load(str(tmp_path / "seg"), mmap=True), Scores.load(tmp_path / "seg")
    questions = [*texts[1100:1150], "insulin insulin resistance", "no word here is indexed: zzzqx", ""]
    for question in questions:
        words = tokenize([question])[0]
        ids = theirs.get_tokens_ids(words)
        expected = theirs.get_scores_from_ids(ids) if ids else None
        got = ours.of(words)
        assert (got is None) == (expected is None)
        assert got is None or (got.dtype == expected.dtype and np.array_equal(got, expected))
    assert all(ours.frequency(w) == theirs.scores["indptr"][i + 1] - theirs.scores["indptr"][i]
               for w, i in list(ours.vocab.items())[:3000])  # fmt: skip
    assert "" not in ours.vocab and ours.frequency("") == 0  # bm25s's empty word has no column


def test_a_paper_with_thousands_of_authors_is_stored_once_and_filters(tmp_path: Path) -> None:
    """Author lists are kept once each, not padded per chunk to the longest (a collaboration paper on arXiv lists
    thousands of names: padded, 100,000 chunks would take gigabytes)."""
    from rag.index.keywords import AUTHORS, Segment, SegmentBuilder

    crowd = "; ".join(f"Author Number{i}" for i in range(3000))
    rows = [(f"p{i}::0", f"Detector calibration run {i}.", {"doc_id": f"p{i}", "authors": "Ada Lovelace"})
            for i in range(200)]  # fmt: skip
    rows.append(("atlas::0", "Detector calibration of the collaboration.", {"doc_id": "atlas", "authors": crowd}))
    SegmentBuilder.of(rows).write(tmp_path / "seg")
    assert (tmp_path / "seg" / AUTHORS).stat().st_size < len(crowd) + 100
    segment = Segment.load(tmp_path / "seg")
    assert segment.by_author("number2999") == ["atlas::0"]
    assert len(segment.by_author("LOVELACE")) == 200 and segment.by_author("nobody") == []
    found = segment.search(["calibr"], 300, Filters(author="number17"))
    assert [chunk for chunk, _ in found] == ["atlas::0"]


def test_new_papers_join_the_keyword_index_without_a_rebuild(make_settings, tmp_path: Path) -> None:
    from rag.index.keywords import DELTA_MIN, KeywordIndex
    from rag.index.library import Library

    settings = make_settings()
    ingest([write_jsonl(tmp_path / "p.jsonl", PAPERS)], settings)
    main = settings.keyword_dir / "main" / "chunk_ids.json"
    inode = main.stat().st_ino
    library = Library(settings)
    assert library.search(Query("oversmoothing graph networks", 1, mode="keyword"))[0].doc_id == "gnn"
    extra = [
        {"doc_id": "vit", "venue": "ICLR", "year": 2021, "abstract": "Vision transformers split images into patches."}
    ]
    assert library.add([write_jsonl(tmp_path / "q.jsonl", extra)]).added == 1
    assert main.stat().st_ino == inode  # the main segment was linked into place, not rebuilt
    assert json.loads((settings.keyword_dir / "delta" / "chunks.json").read_text())["chunk_ids"] == ["vit::0"]
    assert library.search(Query("vision transformers image patches", 1, mode="keyword"))[0].doc_id == "vit"
    assert library.search(Query("oversmoothing graph networks", 1, mode="keyword"))[0].doc_id == "gnn"
    appended = library.retriever.keyword.search("vision transformers split images", 1)[0]
    KeywordIndex.build(store.iter_chunks(store.open_collection(settings)), tmp_path / "whole")
    rebuilt = KeywordIndex.load(tmp_path / "whole").search("vision transformers split images", 1)[0]
    assert appended[0] == rebuilt[0] == "vit::0" and 0.8 < appended[1] / rebuilt[1] < 1.25  # scores comparable
    stats = library.stats()
    assert stats["abstracts"] == 4 and stats["venues"]["ICLR"] == 1 and stats["chunks"] == 4
    changed = [{**PAPERS[0], "abstract": PAPERS[0]["abstract"] + " It also helps transformers."}]
    assert library.add([write_jsonl(tmp_path / "c.jsonl", changed)]).updated == 1
    assert not (settings.keyword_dir / "delta").exists() and main.stat().st_ino != inode  # a change: rebuilt
    assert library.search(Query("vision transformers image patches", 1, mode="keyword"))[0].doc_id == "vit"
    rows = [(f"x{i}::0", "filler text", {"doc_id": f"x{i}"}) for i in range(DELTA_MIN + 1)]
    assert KeywordIndex.append(rows, settings.keyword_dir) is None  # too many for a delta: the caller rebuilds


def test_the_keyword_index_built_slice_by_slice_scores_as_one_built_at_once(tmp_path: Path) -> None:
    """A rebuild reads and tokenizes the collection a slice at a time (memory): the slices share one vocabulary,
    so every score is the same as when all rows are tokenized together."""
    from rag.index.keywords import Segment, SegmentBuilder
    from rag.terms import tokenize

    rows = [(f"{p['doc_id']}::0", p["abstract"], {"doc_id": p["doc_id"], "venue": p.get("venue")}) for p in PAPERS]
    rows += [(f"extra{i}::0", f"Graph networks variant {i} reduces oversmoothing.", {"doc_id": f"extra{i}"})
             for i in range(5)]  # fmt: skip
    SegmentBuilder.of(rows, slice_rows=len(rows)).write(tmp_path / "one")
    SegmentBuilder.of(iter(rows), slice_rows=2).write(tmp_path / "sliced")
    one, sliced = Segment.load(tmp_path / "one"), Segment.load(tmp_path / "sliced")
    assert one.chunk_ids == sliced.chunk_ids
    for words in tokenize(["oversmoothing graph networks", "sharpness adversarial robustness", "variant 3"]):
        found = one.search(words, 5, Filters())
        assert found and found == sliced.search(words, 5, Filters())


def test_a_record_that_rag_did_not_write_is_named_in_a_clear_error(make_settings, tmp_path: Path) -> None:
    # Another program wrote into rag's collection (no doc_id): the keyword index cannot be rebuilt over it, and the
    # error says which record and what to do, instead of a TypeError from deep inside.
    settings = make_settings()
    ingest([write_jsonl(tmp_path / "two.jsonl", PAPERS[:2])], settings)
    collection = store.open_collection(settings)
    collection.add(ids=["foreign-1"], embeddings=[[0.1] * 384], documents=["written by another program"])
    with pytest.raises(RuntimeError, match=r"record that rag did not write \('foreign-1' has no doc_id\)"):
        ingest([write_jsonl(tmp_path / "third.jsonl", PAPERS[2:])], settings)
    with pytest.raises(RuntimeError, match="RAG_COLLECTION"):
        store.indexed_doc_ids(collection)


def test_a_windowed_ingest_stores_what_one_window_would_and_merges_a_paper_met_windows_apart(
    make_settings, tmp_path: Path, monkeypatch
) -> None:
    """Files are stored window by window (bounded memory): a record of a paper stored windows earlier (here the
    PubMed record of a paper a RIS file brought first) is merged into it as stored; the index ends as with one
    window."""
    from test_formats import FORMATS, RIS_DUPLICATE

    from rag.index import ingest as ingest_module

    corpus = tmp_path / "library"
    corpus.mkdir()
    (corpus / "a.ris").write_bytes(RIS_DUPLICATE.encode())  # read first: the paper is stored from it
    (corpus / "b.ris").write_bytes((FORMATS / "zotero_export.ris").read_bytes())
    (corpus / "c.xml").write_bytes((FORMATS / "pubmed_efetch.xml").read_bytes())
    whole = ingest([corpus], make_settings(data_dir=tmp_path / "whole"))
    monkeypatch.setattr(ingest_module, "WINDOW", 1)
    calls: list[tuple[int, int | None]] = []
    monkeypatch.setattr(ingest_module, "COUNT_EVERY", 1)
    windowed_settings = make_settings(data_dir=tmp_path / "windowed")
    windowed = ingest([corpus], windowed_settings, lambda *call: calls.append(call))

    assert windowed.merged == whole.merged >= 1 and windowed.added == whole.added
    counted = [done for done, total in calls if total is None]
    assert counted == list(range(1, len(counted) + 1)) and calls[-1][0] == calls[-1][1] == counted[-1]

    def papers(settings: Settings) -> dict[str, tuple]:
        collection = store.open_collection(settings, create=False)
        doc_ids = sorted(store.indexed_doc_ids(collection))
        return {
            p.doc_id: (p.abstract, p.title, p.authors, p.identifiers) for p in store.get_papers(collection, doc_ids)
        }

    assert papers(windowed_settings) == papers(make_settings(data_dir=tmp_path / "whole"))
    merged = papers(windowed_settings)["doi:10.5555/jim.2019.0042"]
    assert "BACKGROUND:" in merged[0] or "RESULTS:" in merged[0]  # the longer PubMed abstract, stored afterwards
    assert read_manifest(windowed_settings.keyword_dir)["chunks"] == len(stored_ids(windowed_settings))


def test_the_search_width_is_set_on_new_indexes_and_widened_by_the_next_ingest(make_settings, tmp_path: Path) -> None:
    """Chroma's default HNSW width (100) missed close chunks, differently in each process; an index made with it
    is widened by the next ingest (a writer) or `rag doctor --repair`, never by a search."""

    def width(settings) -> int:
        return store.open_collection(settings, create=False).configuration_json["hnsw"]["ef_search"]

    settings = make_settings()
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"doc_id": "p1", "abstract": "Graph neural networks oversmooth."}])
    ingest([corpus], settings)
    assert width(settings) == store.EF_SEARCH

    old = make_settings(data_dir=tmp_path / "old")
    store.open_client(old).create_collection(
        old.collection, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    assert width(old) == 100  # Chroma's default, as indexes made before EF_SEARCH have it
    assert store.open_collection(old, create=False) is not None and width(old) == 100  # reading changes nothing
    ingest([corpus], old)
    assert width(old) == store.EF_SEARCH
    store.open_collection(old, create=False).modify(configuration={"hnsw": {"ef_search": 100}})
    found = {f.check: f for f in doctor.examine(old).findings}["search width"]
    assert not found.ok and "100 wide" in found.detail and width(old) == 100
    repaired = doctor.examine(old, repair=True)
    assert repaired.healthy and f"widened the search to {store.EF_SEARCH}" in repaired.repaired
    assert width(old) == store.EF_SEARCH
    assert Retriever(old).search(Query("graph neural networks", 1))[0].doc_id == "p1"
