"""Bring your own judge (RAG_VERIFIER_MODEL), tested with the project's own cross-encoder saved as a Hugging Face
sequence-classification folder: the shipped ONNX model's weights put back into a BertForSequenceClassification
(the weights a linear layer's MatMul reads are the transposed torch weights), with the bundled model's tokenizer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_rag

from rag.answer.entailment import LABELS, EntailmentModel, model_path
from rag.answer.nli import inspect, prepared
from rag.engine import Engine
from rag.onnx import bundled_model_dir, cpu_has_int8_dot

PAIRS = [
    ("Intriguingly, we find that using SAM alone can improve adversarial robustness.", "SAM improves robustness."),
    ("Intriguingly, we find that using SAM alone can improve adversarial robustness.", "SAM hurts robustness."),
    ("The trial enrolled 240 adult patients.", "Protein language models work at the atom scale."),
]
CLAIMS = [
    "Using SAM alone can improve adversarial robustness.",
    "SAM can improve adversarial robustness without sacrificing clean accuracy.",
    "Adversarial training increases clean accuracy.",
    "The method was deployed in hospitals across Europe.",
]
SAM_DOC = "000_c1913070b188e76b#5"


def state_dict_of_shipped_model() -> dict[str, np.ndarray]:
    """The shipped ONNX model's weights under their torch names."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_path())).graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    weights = {name.removeprefix("inner."): value for name, value in constants.items() if name.startswith("inner.")}
    consumers = {i: node for node in graph.node for i in node.input}
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in constants and not node.input[1].startswith("inner."):
            add = consumers[node.output[0]]
            bias = next(i for i in add.input if i.startswith("inner."))
            weights[bias.removeprefix("inner.").removesuffix(".bias") + ".weight"] = constants[node.input[1]].T
    return weights


def save_folder(out: Path, order: list[int], names: list[str]) -> Path:
    """The shipped cross-encoder as a Hugging Face folder whose outputs are its logits in `order`, named `names`."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig.from_pretrained(str(bundled_model_dir()))
    config.num_labels = len(order)
    config.id2label = dict(enumerate(names))
    config.label2id = {name: i for i, name in enumerate(names)}
    model = BertForSequenceClassification(config)
    weights = state_dict_of_shipped_model()
    weights["classifier.weight"] = weights["classifier.weight"][order]
    weights["classifier.bias"] = weights["classifier.bias"][order]
    missing = model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()},
                                    strict=False).missing_keys  # fmt: skip
    assert [k for k in missing if "position_ids" not in k] == []
    model.save_pretrained(str(out))
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (bundled_model_dir() / name).exists():
            shutil.copy(bundled_model_dir() / name, out / name)
    return out


@pytest.fixture(scope="module")
def own_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_folder(tmp_path_factory.mktemp("own-judge"), [0, 1, 2], list(LABELS))


@pytest.mark.slow
def test_the_projects_cross_encoder_as_a_folder_judges_as_the_shipped_one(
    own_folder: Path, seeds_settings, engine, tmp_path: Path
) -> None:
    settings = seeds_settings.model_copy(update={"verifier_model": own_folder, "model_cache": tmp_path / "cache"})
    own = Engine(settings, embedder=engine.library.embedder)
    labels = [own.verify(c, SAM_DOC).label for c in CLAIMS]  # the first use exports the folder and records it
    judge = inspect(own_folder)
    assert judge.columns == LABELS
    recorded = own.library.stats()["verifier_model"]
    assert recorded["sha256"] == judge.sha256 and recorded["labels"] == list(LABELS)
    export = judge.export_dir(tmp_path / "cache")
    agreed = cpu_has_int8_dot() and json.loads((export / "model-int8.json").read_text())["agreement"] >= 0.95
    assert recorded["precision"] == ("int8" if agreed else "fp32")
    exported = EntailmentModel(export / "model.onnx", model_dir=own_folder).probabilities(PAIRS)
    assert np.allclose(exported, EntailmentModel().probabilities(PAIRS), atol=1e-4)  # the same model, exactly
    if recorded["precision"] == "fp32":  # int8 may move a probability across a threshold
        assert labels == [engine.verify(c, SAM_DOC).label for c in CLAIMS]
    assert labels[0] == "supported"
    assert engine.library.stats()["verifier_model"] is None


@pytest.mark.slow
def test_labels_are_read_from_id2label_whatever_their_order(tmp_path: Path) -> None:
    permuted = save_folder(tmp_path / "permuted", [2, 0, 1], ["neutral", "entailment", "contradiction"])
    judge = inspect(permuted)
    assert judge.columns == ("not_enough_info", "supported", "contradicted")
    path, _ = prepared(judge, tmp_path / "cache", lambda fp32, int8: 1.0)
    reordered = EntailmentModel(path.with_name("model.onnx"), model_dir=permuted, columns=judge.columns)
    assert np.allclose(reordered.probabilities(PAIRS), EntailmentModel().probabilities(PAIRS), atol=1e-4)

    two = save_folder(tmp_path / "two", [2, 0], ["LABEL_0", "LABEL_1"])  # MiniCheck's convention: 1 is supported
    judge = inspect(two)
    assert judge.columns == ("not_enough_info", "supported")
    path, _ = prepared(judge, tmp_path / "cache", lambda fp32, int8: 1.0)
    probabilities = EntailmentModel(path, model_dir=two, columns=judge.columns).probabilities(PAIRS)
    assert (probabilities[:, LABELS.index("contradicted")] == 0).all()  # it can never accuse


@pytest.mark.slow
def test_a_folder_that_is_not_such_a_model_is_one_line_and_exit_2(own_folder: Path, cli_env, tmp_path: Path) -> None:
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps({"doc_id": "d1", "abstract": "SAM improves adversarial robustness."}) + "\n")
    assert run_rag("ingest", str(corpus), env=cli_env).returncode == 0

    def broken(name: str, drop: str | None = None, config: dict | None = None) -> Path:
        folder = tmp_path / name
        shutil.copytree(own_folder, folder)
        if drop:
            (folder / drop).unlink()
        if config is not None:
            (folder / "config.json").write_text(json.dumps(config))
        return folder

    cases = {
        tmp_path / "nowhere": "is not a folder",
        broken("no-config", "config.json"): "has no config.json",
        broken("no-labels", config={"model_type": "bert"}): "has no id2label",
        broken("odd-labels", config={"model_type": "bert", "id2label": {"0": "cat", "1": "dog", "2": "fish"}}):
            "are not NLI labels",
        broken("no-weights", "model.safetensors"): "has no weights",
        broken("no-tokenizer", "tokenizer.json"): "has no tokenizer.json",
    }  # fmt: skip
    for folder, said in cases.items():
        result = run_rag(
            "verify", "SAM improves robustness.", "--doc", "d1", env={**cli_env, "RAG_VERIFIER_MODEL": str(folder)}
        )
        assert result.returncode == 2 and said in result.stderr and result.stderr.count("\n") == 1, result.stderr
