"""The verifier's training data (rag/training/): answer-style pairs in every kind, a held-out split fixed by the
abstract's id, and nothing from an evaluation set or the held-out split in what the model trains on."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rag.training import answer_pairs as ap
from rag.training.verifier import TrainConfig, training_pairs

KINDS = {
    "paraphrase": "SUPPORT", "result": "SUPPORT", "synthesis": "SUPPORT", "changed_number": "CONTRADICT",
    "reversed_finding": "CONTRADICT", "negation": "CONTRADICT", "swapped_name": "NEI", "overclaim": "NEI",
    "added_cause": "NEI", "unrelated": "NEI",
}  # fmt: skip


@pytest.fixture(scope="module")
def splits() -> dict[str, list[ap.AnswerPair]]:
    return {split: ap.answer_pairs(split) for split in ("train", "heldout")}


def test_every_kind_in_both_splits_and_enough_pairs(splits) -> None:
    assert len(splits["train"]) + len(splits["heldout"]) >= 1500 and len(splits["heldout"]) >= 500
    for pairs in splits.values():
        kinds = Counter((p.kind, p.label) for p in pairs)
        assert {kind: label for kind, label in kinds} == KINDS
        assert min(kinds.values()) >= 20


def test_the_split_is_by_abstract_and_excludes_every_evaluation_set(splits) -> None:
    train_docs = {p.doc_id for p in splits["train"]}
    heldout_docs = {p.doc_id for p in splits["heldout"]}
    assert not train_docs & heldout_docs
    assert all(ap.split_of(d) == "heldout" for d in heldout_docs)
    assert not heldout_docs & ap.scifact_trained_docs()
    evaluated = ap.excluded_docs()
    assert "pubmed:7547656" in evaluated and "pubmed:10808977" in evaluated  # an independent claim's, a dev question's
    assert not (train_docs | heldout_docs) & evaluated
    assert all(d.startswith(("scifact:", "pubmed:")) for d in train_docs | heldout_docs)  # never the seeds


def test_pairs_are_deterministic_and_faithful_ones_keep_the_facts(splits) -> None:
    assert ap.answer_pairs("heldout")[:50] == splits["heldout"][:50]
    results = [p for p in splits["heldout"] if p.kind == "result"]
    for pair in results[:100]:
        numbers = ap.NUMBER.findall(pair.claim)
        assert all(n in pair.premise for n in numbers), pair
    changed = [p for p in splits["heldout"] if p.kind == "changed_number"]
    assert all(p.claim not in p.premise for p in changed)


def test_training_never_reads_a_held_out_or_evaluated_abstract(splits) -> None:
    held = {p.doc_id for p in splits["heldout"]} | ap.excluded_docs()
    corpus = ap.abstracts(set())
    unseen = {s for d in held if d in corpus for s in corpus[d] if len(s.split()) >= 12}
    trained = training_pairs(TrainConfig())
    origins = Counter(p.origin.split("-")[0] for p in trained)
    assert origins["answer"] >= 3000 and origins["scifact"] >= 1000
    leaked = [p for p in trained if p.premise in unseen or p.hypothesis in unseen]
    assert not leaked, leaked[:3]


def test_written_claims_are_split_by_abstract_and_never_about_an_evaluated_or_held_out_one() -> None:
    """eval/datasets/written_claims/: the capable models' claims that tune the exact checks, and their held-out
    part, split by the rule they were written under."""
    import importlib.util
    import json

    folder = ap.DATASETS / "written_claims"
    spec = importlib.util.spec_from_file_location("written", folder / "written.py")
    assert spec and spec.loader
    written = importlib.util.module_from_spec(spec)  # the split rule the data was written under
    spec.loader.exec_module(written)

    parts = {p: [json.loads(line) for line in (folder / f"{p}.jsonl").read_text().splitlines()]
             for p in ("tune", "heldout")}  # fmt: skip
    docs = {p: {c["doc_id"] for c in rows} for p, rows in parts.items()}
    assert not docs["tune"] & docs["heldout"] and len(parts["tune"]) + len(parts["heldout"]) >= 900
    assert all(written.split_of(d) == p for p, ds in docs.items() for d in ds)
    usable = ap.training_abstracts()
    assert all(d in usable for ds in docs.values() for d in ds)  # never the seeds, an evaluated or held-out abstract
    for c in parts["tune"] + parts["heldout"]:
        assert c["label"] in written.KINDS and c["kind"] in written.KINDS[c["label"]], c["id"]
        assert any(c["premise"].startswith(s) for s in usable[c["doc_id"]]), c["id"]  # the sentence(s) it rests on


def test_a_merge_about_abstracts_already_merged_writes_neither_part(tmp_path: Path) -> None:
    """`written.py merge --append` with claims about an abstract of the held-out part: one line, exit 2, and
    neither tune.jsonl nor heldout.jsonl is written (the tune part was written before the held-out check)."""
    import json
    import shutil
    import subprocess
    import sys

    folder = ap.DATASETS / "written_claims"
    copy = tmp_path / "written_claims"
    copy.mkdir()
    for name in ("written.py", "tune.jsonl", "heldout.jsonl"):
        shutil.copy(folder / name, copy / name)
    held = json.loads((copy / "heldout.jsonl").read_text().splitlines()[0])
    claim = {"doc_id": held["doc_id"], "question": held["question"], "label": held["label"], "kind": held["kind"],
             "premise": [1]}  # fmt: skip
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "part-1.jsonl").write_text(json.dumps(claim) + "\n")
    before = {name: (copy / name).read_bytes() for name in ("tune.jsonl", "heldout.jsonl")}
    done = subprocess.run([sys.executable, str(copy / "written.py"), "merge", str(parts), "--append"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2 and "already holds claims" in done.stderr and len(done.stderr.splitlines()) == 1
    assert done.stdout == ""
    assert {name: (copy / name).read_bytes() for name in before} == before
