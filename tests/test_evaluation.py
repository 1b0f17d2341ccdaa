"""The evaluation harness: metric values on synthetic rankings, the report schema, resume, compare."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SEEDS_QA, run_rag

from rag.evaluation.harness import answer_metrics, claim_metrics, retrieval_metrics, wilson
from rag.evaluation.reports import compare, dataset_label

CONFIG = """
[[runs]]
name = "dense-extractive"
retriever = "dense"
backend = "extractive"

[[runs]]
name = "hybrid-extractive"
retriever = "hybrid"
backend = "extractive"
"""


def test_retrieval_metrics_on_synthetic_rankings() -> None:
    gold = {"q1": ["d1", "d2"], "q2": ["d9"], "q3": ["x"]}
    rankings = {"q1": [("d3", 3.0), ("d1", 2.0), ("d2", 1.0)], "q2": [("d9", 1.0)], "q3": []}
    m = retrieval_metrics(rankings, gold)
    ndcg_q1 = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert m["recall@1"] == pytest.approx((0 + 1 + 0) / 3)
    assert m["recall@5"] == pytest.approx((1 + 1 + 0) / 3)
    assert m["recall@10"] == pytest.approx(2 / 3)
    assert m["mrr"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert m["ndcg@10"] == pytest.approx((ndcg_q1 + 1 + 0) / 3)


def test_answer_metrics_on_synthetic_results() -> None:
    verdict = {"kept": 2, "reattributed": 1, "dropped": 1, "fallback": None}
    fell_back = {"kept": 3, "reattributed": 0, "dropped": 2, "fallback": "extractive"}  # 3 verbatim sentences kept
    base = {"verifier": verdict, "timings_ms": {"total": 100.0}, "must_contain_hits": []}
    results = [
        {**base, "answerable": True, "gold": ["a", "b"], "cited": ["a", "c"], "refused": False,
         "must_contain_hits": [True, False]},
        {**base, "answerable": True, "gold": ["d"], "cited": [], "refused": True, "nearest": ["e", "d"]},
        {**base, "answerable": True, "gold": ["f"], "cited": [], "refused": True, "nearest": ["e"]},
        {**base, "answerable": False, "gold": [], "cited": [], "refused": True},
        {**base, "verifier": fell_back, "answerable": False, "gold": [], "cited": [], "refused": True},
    ]  # fmt: skip
    m = answer_metrics(results)
    assert m["citation_precision"] == pytest.approx(1 / 2)
    assert m["citation_recall"] == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert m["support_rate"] == pytest.approx(12 / (16 + 2))  # the LLM's sentences only
    assert (m["answered_rate"], m["refusal_rate"], m["must_contain"]) == (pytest.approx(1 / 3), 1.0, 0.5)
    assert m["nearest_gold_rate"] == 0.5  # of the two answerable questions refused, one showed its gold paper
    assert m["latency_ms"]["total"] == {"p50": 100.0, "p95": 100.0}


@pytest.fixture
def eval_env(cli_env, seeds_settings, tmp_path) -> dict[str, str]:
    (tmp_path / "runs.toml").write_text(CONFIG)
    return {**cli_env, "RAG_DATA_DIR": str(seeds_settings.data_dir)}


def test_claim_metrics_give_kept_and_accused_shares_with_intervals_per_label_and_kind() -> None:
    def claim(label: str, verdict: str, kind: str) -> dict:
        return {"label": label, "verdict": verdict, "kind": kind, "timings_ms": {"verify": 5.0}}

    results = [claim("SUPPORT", "supported", "paraphrase")] * 3 + [claim("SUPPORT", "contradicted", "synthesis")]
    results += [claim("CONTRADICT", "contradicted", "negation"), claim("CONTRADICT", "supported", "changed number")]
    m = claim_metrics(results)
    assert (m["kept_support"], m["accused_support"], m["kept_contradict"]) == (0.75, 0.25, 0.5)
    assert m["by_label"]["SUPPORT"] == {"n": 4, "kept": 0.75, "kept_ci": wilson(3, 4), "accused": 0.25,
                                        "accused_ci": wilson(1, 4)}  # fmt: skip
    assert m["by_label"]["NEI"]["n"] == 0 and m["kept_nei"] is None
    assert m["by_kind"]["SUPPORT paraphrase"]["kept"] == 1.0 and m["by_kind"]["SUPPORT synthesis"]["accused"] == 1.0
    assert set(m["by_kind"]) == {"SUPPORT paraphrase", "SUPPORT synthesis", "CONTRADICT negation",
                                 "CONTRADICT changed number"}  # fmt: skip
    assert "by_kind" not in claim_metrics([{**r, "kind": ""} for r in results])


def test_wilson_intervals() -> None:
    assert wilson(8, 14) == pytest.approx((0.3259, 0.7862), abs=1e-3)  # the held-out row of the README's table
    low, high = wilson(0, 57)
    assert low == 0.0 and high == pytest.approx(0.0631, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


def test_report_schema_and_files(eval_env, tmp_path) -> None:
    out = tmp_path / "report"
    result = run_rag(
        "eval", str(SEEDS_QA), "--config", str(tmp_path / "runs.toml"), "--limit", "4", "--out", str(out), env=eval_env
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    assert [r["name"] for r in report["runs"]] == ["dense-extractive", "hybrid-extractive"]
    for run in report["runs"]:
        assert set(run) == {"name", "dataset", "config", "metrics", "per_question"}
        assert run["config"]["retriever"] in ("dense", "hybrid") and len(run["per_question"]) == 4
        metrics = run["metrics"]
        for name in ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "citation_precision", "citation_recall",
                     "support_rate", "answered_rate", "must_contain"):  # fmt: skip
            assert 0.0 <= metrics[name] <= 1.0, name
        assert metrics["recall@5"] == 1.0
        assert set(metrics["latency_ms"]) == {"retrieve", "focus", "generate", "verify", "fallback", "total"}
        assert metrics["latency_ms"]["fallback"]["p50"] > 0  # extractive answers are timed as such
        assert metrics["latency_ms"]["generate"]["p50"] is None  # and no LLM ran
    assert "| hybrid-extractive | datasets/seeds_qa.jsonl | 4 |" in (out / "report.md").read_text()
    for png in ("metrics_by_run.png", "latency.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_says_why_an_answerable_question_was_refused_and_whether_its_gold_paper_was_shown(
    eval_env, tmp_path
) -> None:
    rows = [
        {"id": "lay-1", "question": "Is there a way to tell whether a text was written by ChatGPT?",
         "gold": ["002_bf171d658999aba6#15"], "answerable": True},
        {"id": "off-1", "question": "How long should sourdough bread ferment at high altitude?", "gold": [],
         "answerable": False},
    ]  # fmt: skip
    dataset = tmp_path / "lay.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "refusals"
    result = run_rag("eval", str(dataset), "--out", str(out), env=eval_env)
    assert result.returncode == 0, result.stderr
    run = json.loads((out / "report.json").read_text())["runs"][0]
    lay = next(q for q in run["per_question"] if q["id"] == "lay-1")
    assert lay["refused"] and lay["refusal"].startswith("the gate: score ") and len(lay["nearest"]) == 3
    shown = "002_bf171d658999aba6#15" in lay["nearest"]
    assert run["metrics"]["nearest_gold_rate"] == float(shown)
    expected = "gold among the closest papers shown" if shown else "gold not among the closest papers shown"
    assert "refused an answerable question (the gate: score " in (out / "report.md").read_text()
    assert expected in (out / "report.md").read_text()


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_an_interrupted_run_resumes_where_it_stopped(eval_env, tmp_path) -> None:
    out = tmp_path / "resumable"
    args = [sys.executable, "-m", "rag", "eval", str(SEEDS_QA), "--config", str(tmp_path / "runs.toml"),
            "--limit", "12", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(args, env=eval_env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(out.glob("cache/*/*/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    done = {p: p.stat().st_mtime_ns for p in out.glob("cache/*/*/*.json")}
    assert 0 < len(done) < 24 and not (out / "report.json").exists()
    result = subprocess.run(args, env=eval_env, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in done.items())  # finished questions were not redone
    assert len(list(out.glob("cache/*/*/*.json"))) == 24
    assert all(len(r["per_question"]) == 12 for r in json.loads((out / "report.json").read_text())["runs"])


def test_compare_flags_a_planted_regression(eval_env, tmp_path) -> None:
    a = tmp_path / "a"
    assert run_rag("eval", str(SEEDS_QA), "--limit", "3", "--out", str(a), env=eval_env).returncode == 0
    b = tmp_path / "b"
    b.mkdir()
    report = json.loads((a / "report.json").read_text())
    same, regressions = compare(report, report)
    assert regressions == 0 and len(same) > 2
    report["runs"][0]["metrics"]["recall@5"] -= 0.2
    (b / "report.json").write_text(json.dumps(report))
    result = run_rag("eval", "--compare", str(a), str(b), env=eval_env)
    assert result.returncode == 0
    assert "REGRESSION" in result.stdout and "1 regression(s) flagged" in result.stdout
    assert "recall@5" in next(line for line in result.stdout.splitlines() if "REGRESSION" in line)


def test_compare_keeps_datasets_with_the_same_file_name_apart() -> None:
    def report(tune: float, independent: float) -> dict:
        return {"runs": [
            {"name": "hybrid", "dataset": "eval/datasets/pubmedqa_tune/questions.jsonl", "metrics": {"mrr": tune}},
            {"name": "hybrid", "dataset": "/abs/eval/datasets/pubmedqa_independent/questions.jsonl",
             "metrics": {"mrr": independent}},
        ]}  # fmt: skip

    lines, regressions = compare(report(0.7, 0.9), report(0.7, 0.9))
    assert regressions == 0 and len(lines) == 2 + 2  # one row per dataset, each against itself
    assert {line.split(" | ")[1] for line in lines[2:]} == {
        "pubmedqa_tune/questions.jsonl", "pubmedqa_independent/questions.jsonl"
    }  # fmt: skip
    assert compare(report(0.7, 0.9), report(0.7, 0.5))[1] == 1
    assert dataset_label("seeds_qa.jsonl") == f"{Path.cwd().name}/seeds_qa.jsonl"  # read from where rag eval ran


def test_gold_abstracts_must_be_indexed(eval_env, tmp_path) -> None:
    pubmed = ROOT / "eval" / "datasets" / "pubmedqa" / "dev_questions.jsonl"
    result = run_rag("eval", str(pubmed), "--limit", "2", "--out", str(tmp_path / "x"), env=eval_env)
    assert result.returncode == 2 and "not indexed" in result.stderr and "ingest" in result.stderr


def test_bad_config_is_bad_input(eval_env, tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('[[runs]]\nname = "x"\nretriever = "magic"\n')
    result = run_rag("eval", str(SEEDS_QA), "--config", str(tmp_path / "bad.toml"), env=eval_env)
    assert result.returncode == 2 and "retriever must be" in result.stderr


def test_bad_datasets_and_compares_are_one_line_before_any_work(eval_env, tmp_path: Path) -> None:
    missing = run_rag("eval", str(tmp_path / "nope.jsonl"), env={**eval_env, "RAG_TOP_K": "0"})
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.jsonl" in missing.stderr
    for name, dataset in (("a", "one/questions.jsonl"), ("b", "two/questions.jsonl")):
        (tmp_path / name).mkdir()
        run = {"name": "r", "dataset": str(tmp_path / dataset), "metrics": {"mrr": 1.0}}
        (tmp_path / name / "report.json").write_text(json.dumps({"runs": [run]}))
    apart = run_rag("eval", "--compare", str(tmp_path / "a"), str(tmp_path / "b"), env=eval_env)
    assert apart.returncode == 2 and "nothing to compare" in apart.stderr  # not "no regressions"


@pytest.mark.llm
def test_yes_no_maybe_decisions_are_scored(eval_env, tmp_path) -> None:
    dataset = tmp_path / "decide.jsonl"
    rows = [
        {"id": "d1", "question": "Can sharpness-aware minimization alone improve adversarial robustness?",
         "gold": ["000_c1913070b188e76b#5"], "final_decision": "yes"},
        {"id": "d2", "question": "Does ESM-AA model proteins at both the atom and the residue scale?",
         "gold": ["000_c1913070b188e76b#8"], "final_decision": "yes"},
    ]  # fmt: skip
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "decide.toml").write_text('[[runs]]\nname = "local-decide"\nbackend = "local"\ndecide = true\n')
    out = tmp_path / "decided"
    result = run_rag("eval", str(dataset), "--config", str(tmp_path / "decide.toml"), "--out", str(out), env=eval_env)
    assert result.returncode == 0, result.stderr
    (run,) = json.loads((out / "report.json").read_text())["runs"]
    decisions = [q["decision"] for q in run["per_question"]]
    assert all(d in ("yes", "no", "maybe", None) for d in decisions) and any(d is not None for d in decisions)
    correct = sum(q["decision_correct"] for q in run["per_question"])
    assert run["metrics"]["decision_accuracy"] == pytest.approx(correct / 2)
