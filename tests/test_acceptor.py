"""The bundled judge's acceptor (rag/answer/acceptance.py) with the real embedding and cross-encoder models, and
`rag train-acceptor`."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import run_rag

from rag.answer.acceptance import ACCEPTOR_DIR, FEATURES, MIN_WORDS, Acceptor, load_acceptor
from rag.answer.judges import ModelJudge
from rag.answer.pipeline import make_judge
from rag.answer.sources import Source
from rag.engine import Engine
from rag.training.acceptor import BUILT_WITH

SAM_DOC = "000_c1913070b188e76b#5"
# 13 words, in plain words, about what the SAM abstract finds: the acceptor decides it
LONG = "Training a network with sharpness-aware minimization alone was found to make it more robust to attacks."
OFF_TOPIC = "The trial enrolled adult patients with type 2 diabetes across twelve hospitals in three countries."
SHORT_OFF_TOPIC = "The trial enrolled adult patients with diabetes."


def test_the_shipped_acceptor_is_intact_and_a_changed_one_is_refused(tmp_path: Path) -> None:
    acceptor = load_acceptor()
    record = json.loads((ACCEPTOR_DIR / "acceptor.json").read_text())
    assert 0 < acceptor.threshold < 1 and acceptor.threshold == record["threshold"]
    assert record["features"] == list(FEATURES) and record["min_words"] == MIN_WORDS and acceptor.trees
    for name in ("acceptor.json", "acceptor.sha256"):
        shutil.copy(ACCEPTOR_DIR / name, tmp_path / name)
    text = (tmp_path / "acceptor.json").read_text()
    (tmp_path / "acceptor.json").write_text(text.replace(f'"threshold": {record["threshold"]}', '"threshold": 0.1', 1))
    with pytest.raises(RuntimeError, match="checksum"):
        load_acceptor(tmp_path)
    other = json.dumps({**record, "features": [*FEATURES[:-1], "characters"]}).encode()  # a valid checksum
    (tmp_path / "acceptor.json").write_bytes(other)
    (tmp_path / "acceptor.sha256").write_text(hashlib.sha256(other).hexdigest() + "  acceptor.json\n")
    with pytest.raises(RuntimeError, match="other features"):
        load_acceptor(tmp_path)


def test_exported_trees_decide_as_scikit_learn_does_missing_values_included() -> None:
    """The trees `rag train-acceptor` writes, read in plain Python, give scikit-learn's probabilities, NaN too."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    from rag.training.acceptor import exported

    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 4))
    y = x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.3
    x[rng.random(x.shape) < 0.1] = np.nan  # scikit-learn learns where missing values go
    model = HistGradientBoostingClassifier(max_depth=2, max_iter=30, random_state=0).fit(x, y)
    baseline, trees = exported(model)
    acceptor = Acceptor(trees, baseline, 0.5)
    ours = [acceptor.probability(row.tolist()) for row in x]
    assert np.allclose(ours, model.predict_proba(x)[:, 1], atol=1e-9)
    assert any(node[5] == 1 for tree in trees for node in tree if node[0] >= 0)  # some NaN goes left


def test_the_operating_point_setting_moves_the_decision(seeds_settings, engine: Engine) -> None:
    """RAG_VERIFIER_ACCEPTANCE replaces the recorded operating point: the same claim, the same probability, kept or
    not by the threshold alone."""
    assert len(LONG.split()) >= MIN_WORDS
    verdicts = {}
    for threshold in (0.001, 0.999):
        settings = seeds_settings.model_copy(update={"verifier_acceptance": threshold})
        verdicts[threshold] = Engine(settings, embedder=engine.library.embedder).verify(LONG, SAM_DOC)
    assert verdicts[0.001].label == "supported" and verdicts[0.999].label == "not_enough_info"
    assert verdicts[0.001].score == pytest.approx(1 - verdicts[0.999].score)  # one probability, two thresholds
    abstract = engine.library.abstracts([SAM_DOC])[SAM_DOC]
    assert verdicts[0.001].quote in abstract and "SAM" in verdicts[0.001].quote
    default = engine.verify(LONG, SAM_DOC)
    assert (default.label == "supported") == (verdicts[0.001].score >= load_acceptor().threshold)


def test_the_acceptor_decides_long_claims_and_the_cross_encoder_short_ones(engine: Engine) -> None:
    """An acceptor that accepts everything (one leaf) shows who decides: it keeps a long off-topic claim, while a
    short one is still read by the cross-encoder, which does not support it."""
    shipped = engine.pipeline.verifier.judge
    assert isinstance(shipped, ModelJudge) and shipped.acceptor is not None
    accept_all = Acceptor([[[-1, 0.0, 0, 0, 10.0]]], 0.0, 0.5)
    judge = ModelJudge(shipped.model, shipped.support, None, shipped.similarity, accept_all)
    verifier = engine.pipeline.verifier
    source = Source(1, SAM_DOC, engine.library.abstracts([SAM_DOC])[SAM_DOC])
    verifier.prepare([source])
    assert len(SHORT_OFF_TOPIC.split()) < MIN_WORDS <= len(OFF_TOPIC.split())
    embed = engine.library.embedder.embed
    assert judge(OFF_TOPIC, embed([OFF_TOPIC])[0], source).label == "supported"
    assert judge(SHORT_OFF_TOPIC, embed([SHORT_OFF_TOPIC])[0], source).label != "supported"
    assert shipped(OFF_TOPIC, embed([OFF_TOPIC])[0], source).label != "supported"  # the shipped acceptor does not


def test_another_embedding_model_turns_the_acceptor_off(seeds_settings) -> None:
    """The acceptor's features are the bundled embedding model's similarities."""
    assert make_judge(seeds_settings).acceptor is not None  # type: ignore[union-attr]
    for change in ({"embedding_model": "/some/other/model"}, {"embedding_base_url": "http://localhost:9/v1"}):
        assert make_judge(seeds_settings.model_copy(update=change)).acceptor is None  # type: ignore[union-attr]


@pytest.mark.slow
def test_train_acceptor_is_deterministic_and_records_how_it_was_chosen(cli_env, tmp_path: Path) -> None:
    records = []
    for name in ("a", "b"):
        out = run_rag("train-acceptor", "--limit", "40", "--out", str(tmp_path / name), env=cli_env)
        assert out.returncode == 0, out.stderr
        records.append(json.loads(out.stdout))
    files = [(tmp_path / name / "acceptor.json").read_bytes() for name in ("a", "b")]
    assert files[0] == files[1]
    assert (tmp_path / "a" / "acceptor.sha256").read_text().split()[0] == hashlib.sha256(files[0]).hexdigest()
    record = records[0]
    assert record["config"]["limit"] == 40 and record["claims"]["all"] == 4 * 40 - (40 - 30)  # one file has 30
    assert record["threshold"] in [row["threshold"] for row in record["cross_validated"]]
    assert sum(record["claims"][d] for d in ("quoted", "objected", "short", "acceptor")) == record["claims"]["all"]
    assert load_acceptor(tmp_path / "a").threshold == record["threshold"]
    assert set(record["built_with"]) == set(BUILT_WITH)


def test_the_shipped_models_were_built_with_the_installed_packages() -> None:
    """A changed pin without a rebuild fails here: the same command gives other bytes with other versions."""
    from rag.corpus.instruction_filter import MODEL_DIR as FILTER_DIR
    from rag.training import built_with

    for record in (json.loads((ACCEPTOR_DIR / "acceptor.json").read_text()),
                   json.loads((FILTER_DIR / "model.json").read_text())):  # fmt: skip
        assert record["built_with"] == built_with(*record["built_with"])
