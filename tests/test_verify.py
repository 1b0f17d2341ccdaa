"""The entailment judge with the shipped model on hand-written claims about the seed abstracts, `rag verify`, and
the claims mode of `rag eval`."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, run_rag, write_jsonl

from rag.engine import Engine

SAM_DOC = "000_c1913070b188e76b#5"
ESM_DOC = "000_c1913070b188e76b#8"
AHAC_DOC = "000_c1913070b188e76b#4"

CLAIMS = [
    # (claim, doc, expected verdict at the default operating point, where the model accuses nothing)
    ("Training with SAM by itself makes models more robust to adversarial attacks.", SAM_DOC, "supported"),
    ("Using SAM alone cannot improve adversarial robustness.", SAM_DOC, "not_supported"),  # negation
    ("SAM improves adversarial robustness but sacrifices clean accuracy.", SAM_DOC, "not_supported"),  # direction
    ("ESM-AA models proteins at both the atom scale and the residue scale.", ESM_DOC, "supported"),
    ("ESM-AA performs worse than previous methods on protein-molecule tasks.", ESM_DOC, "not_supported"),
    ("AHAC attains 40% more reward than model-free baselines on locomotion tasks.", AHAC_DOC, "supported"),
    ("AHAC attains 90% more reward than model-free baselines on locomotion tasks.", AHAC_DOC, "not_supported"),
    ("PPO attains 40% more reward than model-free baselines on locomotion tasks.", AHAC_DOC, "not_supported"),
    ("The method was deployed in hospitals to diagnose lung cancer.", SAM_DOC, "not_supported"),
]


SUPPORTED = "Using SAM alone can improve adversarial robustness."  # the abstract's words: supported by any judge


def test_the_judge_on_hand_written_claims(engine: Engine) -> None:
    """A floor on the judge's quality: at most two of the nine hand-written cases wrong. Known misses: the direction
    swap "...but sacrifices clean accuracy" is judged supported by the cross-encoder (short claims are its), and the
    acceptor (claims of 12 words or more) does not confirm the plain-words paraphrase "Training with SAM by
    itself ..."."""
    wrong = []
    for claim, doc_id, expected in CLAIMS:
        verdict = engine.verify(claim, doc_id)
        assert verdict.quote and 0.0 <= verdict.score <= 1.0
        right = verdict.label != "supported" if expected == "not_supported" else verdict.label == expected
        if not right:  # "not_supported": a changed number or name, contradicted or not enough information
            wrong.append(f"{claim!r}: {verdict.label} ({verdict.score:.2f})")
    assert len(wrong) <= 2, wrong
    assert engine.verify(CLAIMS[1][0], SAM_DOC).label == "not_enough_info"  # a plain negation is never supported


def test_the_model_accuses_only_at_an_operating_point(seeds_settings, engine: Engine) -> None:
    """No threshold makes the shipped model's "contradicted" right 9 times in 10 on held-out SciFact claims, so by
    default it calls nothing contradicted; a threshold set by the user (RAG_ENTAILMENT_CONTRADICT) restores it."""
    from rag.answer.entailment import CONTRADICTION_OPERATING_POINT

    assert CONTRADICTION_OPERATING_POINT is None and engine.settings.entailment_contradict is None
    assert [engine.verify(claim, doc).label for claim, doc, _ in CLAIMS].count("contradicted") == 0
    settings = seeds_settings.model_copy(update={"entailment_contradict": 0.7})
    accusing = Engine(settings, embedder=engine.library.embedder)
    verdict = accusing.verify(CLAIMS[1][0], SAM_DOC)
    assert verdict.label == "contradicted" and "SAM alone can improve adversarial robustness" in verdict.quote


def test_the_quote_is_verbatim_and_at_most_two_sentences(engine: Engine) -> None:
    verdict = engine.verify(CLAIMS[0][0], SAM_DOC)
    abstract = engine.library.abstracts([SAM_DOC])[SAM_DOC]
    assert verdict.quote in abstract and len(verdict.sentences) in (1, 2)
    # the sentence that states the finding, or the next one, which restates it ("how SAM can implicitly learn more
    # robust features"): the shipped model scores both at the support threshold (0.896 and 0.901)
    assert re.search(r"SAM (alone )?can (improve adversarial robustness|implicitly learn more robust)", verdict.quote)


@pytest.mark.slow
def test_cli_verify_one_claim_and_a_file(cli_env, seeds_settings, tmp_path) -> None:
    env = {**cli_env, "RAG_DATA_DIR": str(seeds_settings.data_dir), "RAG_ENTAILMENT_CONTRADICT": "0.7"}
    out = run_rag("verify", CLAIMS[1][0], "--doc", SAM_DOC, "--json", env=env)
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["verdict"] == "contradicted" and record["doc_id"] == SAM_DOC and record["quote"]
    claims = write_jsonl(
        tmp_path / "claims.jsonl",
        [{"id": "a", "claim": SUPPORTED, "doc_id": SAM_DOC}, {"id": "b", "claim": "Anything.", "doc_id": "nope#1"},
         "not json", {"id": "c", "claim": SUPPORTED, "doc_id": SAM_DOC}],
    )  # fmt: skip
    out = run_rag("verify", "--claims", str(claims), "--json", env=env)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 2 and "could not be checked" in out.stderr  # and the good claims were still checked
    assert [r.get("id") for r in lines] == ["a", "b", None, "c"]
    assert lines[0]["verdict"] == "supported" and set(lines[0]) == {"id", "doc_id", "verdict", "score", "quote"}
    assert "nope#1" in lines[1]["error"] and lines[2]["line"] == 3 and lines[3]["verdict"] == "supported"
    assert run_rag("verify", "A claim.", env=env).returncode == 2  # no --doc


@pytest.mark.slow
def test_eval_claims_mode_reports_kept_rates_per_label(cli_env, tmp_path) -> None:
    dev = [json.loads(line) for line in (ROOT / "eval/datasets/scifact/claims_dev.jsonl").read_text().splitlines()]
    picked = [next(c for c in dev if c["label"] == label) for label in ("SUPPORT", "CONTRADICT", "NEI")]
    corpus = [json.loads(line) for line in (ROOT / "eval/datasets/scifact/corpus.jsonl").read_text().splitlines()]
    needed = {c["doc_id"] for c in picked}
    write_jsonl(tmp_path / "corpus.jsonl", [d for d in corpus if d["doc_id"] in needed])
    write_jsonl(tmp_path / "claims.jsonl", picked)
    assert run_rag("ingest", str(tmp_path / "corpus.jsonl"), env=cli_env).returncode == 0
    out = tmp_path / "report"
    result = run_rag("eval", str(tmp_path / "claims.jsonl"), "--config", str(ROOT / "eval/configs/claims.toml"),
                     "--out", str(out), env=cli_env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    runs = json.loads((out / "report.json").read_text())["runs"]
    assert [r["name"] for r in runs] == ["verifier-lexical", "verifier-model"]
    for run in runs:
        assert {"kept_support", "kept_contradict", "kept_nei", "balanced_accuracy"} <= set(run["metrics"])
        assert [q["label"] for q in run["per_question"]] == ["SUPPORT", "CONTRADICT", "NEI"]
        for q in run["per_question"]:
            assert {"id", "label", "doc_id", "verdict"} <= set(q)
    lexical = runs[0]["per_question"]
    assert all(q["verdict"] != "contradicted" for q in lexical)  # the lexical judge cannot see contradictions
    assert f"| verifier-model | {tmp_path.name}/claims.jsonl | 3 |" in (out / "report.md").read_text()


@pytest.mark.slow
def test_the_rebuild_command_on_a_tiny_training_set(cli_env, tmp_path) -> None:
    """`rag train-verifier` end to end (pairs, training, ONNX export, quantisation, checksum) on 16 pairs."""
    from rag.answer.entailment import EntailmentModel, model_path

    out = tmp_path / "verifier"
    result = run_rag("train-verifier", "--limit", "16", "--out", str(out), env=cli_env, timeout=600)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record == json.loads((out / "model.json").read_text())
    assert record["precision"] in ("int8", "fp32") and sum(record["training_pairs"].values()) == 16
    assert sorted(p.name for p in out.iterdir()) == ["model.json", "model.onnx"]
    assert b"stack_trace" not in (out / "model.onnx").read_bytes()  # the checksum must not depend on source lines
    probabilities = EntailmentModel(model_path(out)).probabilities([("A premise.", "A claim."), ("B.", "C.")])
    assert probabilities.shape == (2, 3) and abs(float(probabilities.sum()) - 2.0) < 1e-4
    damaged = bytearray((out / "model.onnx").read_bytes())
    damaged[-1] ^= 0xFF
    (out / "model.onnx").write_bytes(bytes(damaged))  # a damaged file is refused
    with pytest.raises(RuntimeError, match="checksum"):
        model_path(out)
