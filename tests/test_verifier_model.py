"""Bring your own judge (RAG_VERIFIER_MODEL), tested with the project's own cross-encoder saved as a Hugging Face
sequence-classification folder: whatever rag/models/verifier/model.onnx is present, its weights are put back into a
BertForSequenceClassification (the weights a linear layer's MatMul reads are the transposed torch weights) with the
bundled model's tokenizer, and the folder must predict as the ONNX model does. Also: labels read from id2label in any
order, a two-label fact checker that never accuses, the int8/fp32 rule, the record in `rag stats`, other
architectures, and folders that are not such a model (one line, exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_rag

import rag.onnx
from rag.answer.acceptance import MIN_WORDS
from rag.answer.entailment import LABELS, MAX_LENGTH, EntailmentModel, entailment_model, label_matrix, model_path
from rag.answer.nli import AGREEMENT, RECORD, export_classifier, inspect, label_columns, prepared
from rag.engine import Engine
from rag.errors import BadInput
from rag.onnx import bundled_model_dir, cpu_has_int8_dot, encoder_feeds, load_tokenizer

PAIRS = [
    ("Intriguingly, we find that using SAM alone can improve adversarial robustness.", "SAM improves robustness."),
    ("Intriguingly, we find that using SAM alone can improve adversarial robustness.", "SAM hurts robustness."),
    ("The trial enrolled 240 adult patients.", "Protein language models work at the atom scale."),
]
SAM_DOC = "000_c1913070b188e76b#5"
CLAIMS = [
    "Using SAM alone can improve adversarial robustness.",  # the abstract's words: supported by any judge
    "SAM can improve adversarial robustness without sacrificing clean accuracy.",
    "Adversarial training increases clean accuracy.",
    "SAM reduces adversarial robustness.",
    "The method was deployed in hospitals across Europe.",  # nothing about it: not enough information
]
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json")


# ----- the shipped cross-encoder as a Hugging Face folder ----------------------------------------------------------
def state_dict_of_shipped_model() -> dict[str, np.ndarray]:
    """The shipped ONNX model's weights under their torch names (its initializers are named inner.<torch name>, but
    for the linear layers' weights, which the exporter stores transposed for a MatMul followed by the bias' Add)."""
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
    config.architectures = ["BertForSequenceClassification"]
    model = BertForSequenceClassification(config)
    weights = state_dict_of_shipped_model()
    weights["classifier.weight"] = weights["classifier.weight"][order]
    weights["classifier.bias"] = weights["classifier.bias"][order]
    loaded = model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()}, strict=False)
    assert [k for k in loaded.missing_keys + loaded.unexpected_keys if "position_ids" not in k] == []  # a buffer
    model.save_pretrained(str(out))
    copy_tokenizer(out)
    return out


def copy_tokenizer(out: Path, names: tuple[str, ...] = TOKENIZER_FILES) -> None:
    for name in names:
        if (bundled_model_dir() / name).exists():
            shutil.copy(bundled_model_dir() / name, out / name)


def torch_probabilities(folder: Path, pairs: list[tuple[str, str]], tokenizer_dir: Path | None = None) -> np.ndarray:
    """The folder's model in torch (as transformers loads it, in fp32): softmax of its logits, in its own order."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(folder), dtype=torch.float32).eval()
    tokenizer = load_tokenizer(tokenizer_dir or folder, MAX_LENGTH)
    tokenizer.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
    rows = []
    for pair in pairs:  # one pair at a time, as the judge reads them
        feeds = encoder_feeds(tokenizer, [pair])
        with torch.no_grad():
            logits = model(**{name: torch.from_numpy(value) for name, value in feeds.items()}).logits
        rows.append(torch.softmax(logits, dim=1).numpy()[0])
    return np.array(rows)


@pytest.fixture(scope="session")
def own_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped cross-encoder saved as a folder, checked to round-trip: its predictions in torch are the shipped
    ONNX model's (fp32) within 1e-4."""
    folder = save_folder(tmp_path_factory.mktemp("own-judge") / "judge", [0, 1, 2], list(LABELS))
    assert np.allclose(torch_probabilities(folder, PAIRS), EntailmentModel().probabilities(PAIRS), atol=1e-4)
    return folder


@pytest.fixture
def fp32_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU without int8 instructions: the judge runs its fp32 export, the same model as the shipped one."""
    monkeypatch.setattr(rag.onnx, "cpu_has_int8_dot", lambda: False)


def judge_engine(seeds_settings, engine: Engine, folder: Path, **settings) -> Engine:  # type: ignore[no-untyped-def]
    """An engine over the seed index judging with `folder` (made ready now, exported once into the session's model
    cache)."""
    judged = Engine(seeds_settings.model_copy(update={"verifier_model": folder, **settings}),
                    embedder=engine.library.embedder)  # fmt: skip
    judged.pipeline.verifier  # noqa: B018 (builds the judge)
    return judged


# ----- the project's cross-encoder as a folder judges as the shipped one -------------------------------------------
@pytest.mark.slow
def test_the_projects_cross_encoder_as_a_folder_judges_as_the_shipped_one(
    own_folder: Path, seeds_settings, engine: Engine, fp32_only: None
) -> None:
    """A folder holding the shipped cross-encoder judges as the shipped one does where it decides: claims shorter
    than MIN_WORDS (longer ones the shipped judge leaves to its acceptor, which a folder's model has not)."""
    assert all(len(claim.split()) < MIN_WORDS for claim in CLAIMS)
    own = judge_engine(seeds_settings, engine, own_folder)
    mine, shipped = ([e.verify(c, SAM_DOC) for c in CLAIMS] for e in (own, engine))
    assert own.pipeline.verifier.judge.acceptor is None and engine.pipeline.verifier.judge.acceptor is not None
    assert [j.label for j in mine] == [j.label for j in shipped]
    assert {"supported", "not_enough_info"} <= {j.label for j in shipped}
    assert [j.quote for j in mine] == [j.quote for j in shipped]
    assert np.allclose([j.score for j in mine], [j.score for j in shipped], atol=1e-3)

    judge = inspect(own_folder)
    assert judge.columns == LABELS and judge.fast_tokenizer
    exported = EntailmentModel(judge.export_dir(seeds_settings.model_cache_dir) / "model.onnx", model_dir=own_folder)
    assert np.allclose(exported.probabilities(PAIRS), EntailmentModel().probabilities(PAIRS), atol=1e-4)
    recorded = {"path": str(own_folder.resolve()), "sha256": judge.sha256, "labels": list(LABELS), "precision": "fp32"}
    assert own.library.stats()["verifier_model"] == recorded
    assert engine.library.stats()["verifier_model"] is None  # the shipped judge


@pytest.mark.slow
def test_int8_where_the_cpu_has_it_and_it_decides_as_fp32(
    own_folder: Path, seeds_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = inspect(own_folder)
    settings = seeds_settings.model_copy(update={"verifier_model": own_folder, "data_dir": tmp_path / "data"})
    entailment_model(settings)  # this machine's choice, by the rule
    export = judge.export_dir(settings.model_cache_dir)
    agreed = cpu_has_int8_dot() and json.loads((export / "model-int8.json").read_text())["agreement"] >= AGREEMENT
    recorded = json.loads((tmp_path / "data" / RECORD).read_text())
    assert recorded["precision"] == ("int8" if agreed else "fp32") and recorded["sha256"] == judge.sha256

    def cache_with_the_export(name: str) -> Path:  # the fp32 export alone, nothing quantised yet
        (judge.export_dir(tmp_path / name)).mkdir(parents=True)
        shutil.copy(export / "model.onnx", judge.export_dir(tmp_path / name) / "model.onnx")
        return tmp_path / name

    def never(fp32: Path, int8: Path) -> float:
        raise AssertionError("measured again")

    monkeypatch.setattr(rag.onnx, "cpu_has_int8_dot", lambda: False)
    cache = cache_with_the_export("no-int8-instructions")
    assert prepared(judge, cache, never) == (judge.export_dir(cache) / "model.onnx", "fp32")
    assert not (judge.export_dir(cache) / "model-int8.onnx").exists()  # not even made

    monkeypatch.setattr(rag.onnx, "cpu_has_int8_dot", lambda: True)
    measured: list[tuple[Path, Path]] = []

    def disagrees(fp32: Path, int8: Path) -> float:
        assert fp32.exists() and int8.exists() and fp32 != int8
        measured.append((fp32, int8))
        return AGREEMENT - 0.1

    cache = cache_with_the_export("disagrees")
    assert prepared(judge, cache, disagrees) == (judge.export_dir(cache) / "model.onnx", "fp32")
    assert prepared(judge, cache, never)[1] == "fp32" and len(measured) == 1  # recorded once
    cache = cache_with_the_export("agrees")
    assert prepared(judge, cache, lambda fp32, int8: 1.0) == (judge.export_dir(cache) / "model-int8.onnx", "int8")
    assert prepared(judge, cache, never)[1] == "int8"
    agreement = json.loads((judge.export_dir(cache) / "model-int8.json").read_text())
    assert agreement == {"agreement": 1.0, "threshold": AGREEMENT}


@pytest.mark.slow
def test_labels_are_read_from_id2label_and_a_two_label_checker_never_accuses(
    own_folder: Path, seeds_settings, engine: Engine, fp32_only: None, tmp_path: Path
) -> None:
    shipped = [engine.verify(c, SAM_DOC).label for c in CLAIMS]
    permuted = save_folder(tmp_path / "permuted", [2, 0, 1], ["neutral", "entailment", "contradiction"])
    assert inspect(permuted).columns == ("not_enough_info", "supported", "contradicted")
    assert [judge_engine(seeds_settings, engine, permuted).verify(c, SAM_DOC).label for c in CLAIMS] == shipped

    # accusing at any probability of contradiction: the three-label judge then calls some claim contradicted ...
    three = judge_engine(seeds_settings, engine, own_folder, entailment_contradict=0.01)
    accused = [three.verify(c, SAM_DOC).label for c in CLAIMS]
    assert "contradicted" in accused
    # ... and a fact checker with MiniCheck's labels (1 supported, 0 not) never does, and keeps what it supports
    two = save_folder(tmp_path / "two", [2, 0], ["LABEL_0", "LABEL_1"])
    assert inspect(two).columns == ("not_enough_info", "supported")
    checked = [judge_engine(seeds_settings, engine, two, entailment_contradict=0.01).verify(c, SAM_DOC) for c in CLAIMS]
    assert "contradicted" not in {j.label for j in checked} and checked[0].label == "supported"
    assert [j.label for j in checked] == [label.replace("contradicted", "not_enough_info") for label in accused]


# ----- other architectures, weights stored in fp16, a tokenizer without tokenizer.json ---------------------------
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def tiny_folder(out: Path, kind: str, names: list[str]) -> Path:
    """A small random classifier of another architecture (the bundled tokenizer's vocabulary)."""
    import torch
    import transformers as hf

    torch.manual_seed(0)
    labels = {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}, "vocab_size": 30522}
    if kind == "deberta-v2":  # as DeBERTa-v3 NLI models: relative positions, no token types, weights saved in fp16
        config = hf.DebertaV2Config(**TINY, **labels, type_vocab_size=0, relative_attention=True, position_buckets=16,
                                    pos_att_type=["p2c", "c2p"], max_relative_positions=64,
                                    position_biased_input=False)  # fmt: skip
        model = hf.DebertaV2ForSequenceClassification(config).half()
    else:  # as MiniCheck-RoBERTa
        config = hf.RobertaConfig(**TINY, **labels, pad_token_id=0, type_vocab_size=2)  # BERT's type ids
        model = hf.RobertaForSequenceClassification(config)
    model.eval().save_pretrained(str(out))
    return out


@pytest.mark.slow
def test_other_architectures_export_as_they_predict(tmp_path: Path) -> None:
    deberta = tiny_folder(tmp_path / "deberta", "deberta-v2", ["entailment", "neutral", "contradiction"])
    copy_tokenizer(deberta)
    roberta = tiny_folder(tmp_path / "roberta", "roberta", ["LABEL_0", "LABEL_1"])
    copy_tokenizer(roberta, ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"))  # no tokenizer.json
    for folder in (deberta, roberta):
        judge = inspect(folder)
        export_classifier(folder, judge.export_dir(tmp_path / "cache"))  # as the child process does
        tokenizer = judge.tokenizer_dir(tmp_path / "cache")
        assert (tokenizer / "tokenizer.json").exists() and judge.fast_tokenizer == (folder == deberta)
        exported = EntailmentModel(judge.export_dir(tmp_path / "cache") / "model.onnx", model_dir=tokenizer,
                                   columns=judge.columns)  # fmt: skip
        expected = torch_probabilities(folder, PAIRS, tokenizer) @ label_matrix(judge.columns)
        assert np.allclose(exported.probabilities(PAIRS), expected, atol=1e-4), folder.name
    converted = load_tokenizer(inspect(roberta).tokenizer_dir(tmp_path / "cache"), MAX_LENGTH)
    bundled = load_tokenizer(bundled_model_dir(), MAX_LENGTH)
    assert [e.ids for e in converted.encode_batch(PAIRS)] == [e.ids for e in bundled.encode_batch(PAIRS)]


# ----- labels and folders, checked without loading a model ----------------------------------------------------------
@pytest.mark.parametrize(
    ("id2label", "columns"),
    [
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, ("supported", "not_enough_info", "contradicted")),
        ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, ("contradicted", "not_enough_info", "supported")),
        ({0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}, ("supported", "contradicted", "not_enough_info")),
        ({0: "LABEL_0", 1: "LABEL_1"}, ("not_enough_info", "supported")),  # MiniCheck: 1 is supported
        ({0: "0", 1: "1"}, ("not_enough_info", "supported")),
        ({0: "supported", 1: "unsupported"}, ("supported", "not_enough_info")),
        ({0: "entailment", 1: "not_entailment"}, ("supported", "not_enough_info")),
        ({0: "contradiction", 1: "entailment"}, ("not_enough_info", "supported")),  # two labels never accuse
    ],
)
def test_labels_map_to_the_verifiers_three(id2label: dict[int, str], columns: tuple[str, ...]) -> None:
    assert label_columns(id2label, "here") == columns


@pytest.mark.parametrize(
    "id2label",
    [{0: "cat", 1: "dog", 2: "fish"}, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {0: "neutral", 1: "contradiction"},
     {1: "entailment", 2: "neutral"}, {0: "entailment"}],
)  # fmt: skip
def test_labels_that_are_not_nli_labels_are_bad_input(id2label: dict[int, str]) -> None:
    with pytest.raises(BadInput):
        label_columns(id2label, "here")


def test_outputs_become_the_verifiers_columns_and_two_labels_never_contradict() -> None:
    two = np.array([[0.3, 0.7], [0.9, 0.1]], dtype=np.float32) @ label_matrix(("not_enough_info", "supported"))
    assert np.allclose(two, [[0.7, 0.0, 0.3], [0.1, 0.0, 0.9]])  # LABELS order; nothing ever contradicted
    three = np.array([[0.2, 0.5, 0.3]], dtype=np.float32) @ label_matrix(
        ("not_enough_info", "supported", "contradicted")
    )
    assert np.allclose(three, [[0.5, 0.3, 0.2]])


def fake_folder(path: Path, config: dict | None = None, files: tuple[str, ...] = ("model.safetensors",)) -> Path:
    """A folder with the files a judge needs (the weights empty: only inspected, never loaded)."""
    path.mkdir(parents=True)
    base = {"architectures": ["BertForSequenceClassification"], "id2label": {"0": "entailment", "1": "neutral",
            "2": "contradiction"}}  # fmt: skip
    (path / "config.json").write_text(json.dumps(base if config is None else config))
    for name in files:
        (path / name).write_bytes(b"weights")
    copy_tokenizer(path, ("tokenizer.json",))
    return path


def test_a_folder_is_checked_and_checksummed_before_anything_is_loaded(tmp_path: Path) -> None:
    judge = inspect(fake_folder(tmp_path / "a"))
    assert judge.columns == ("supported", "not_enough_info", "contradicted") and len(judge.sha256) == 64
    assert inspect(fake_folder(tmp_path / "b")).sha256 == judge.sha256  # the content, not the place
    changed = fake_folder(tmp_path / "c")
    (changed / "model.safetensors").write_bytes(b"other weights")
    assert inspect(changed).sha256 != judge.sha256
    sharded = fake_folder(tmp_path / "sharded", files=("model-1.safetensors", "model-2.safetensors"))
    index = {"weight_map": {"a": "model-1.safetensors", "b": "model-2.safetensors"}}
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    assert inspect(sharded).sha256 != judge.sha256
    default_labels = fake_folder(tmp_path / "minicheck", {"architectures": ["RobertaForSequenceClassification"]})
    assert inspect(default_labels).columns == ("not_enough_info", "supported")  # transformers' default two labels


def bad_folders(tmp_path: Path, good: Path) -> dict[Path, str]:
    """Folders that are not such a model, and what the one-line error names."""

    def broken(name: str, drop: str = "", config: dict | None = None, add: dict | None = None) -> Path:
        folder = tmp_path / name
        shutil.copytree(good, folder)
        for file in drop.split():
            (folder / file).unlink(missing_ok=True)
        if config is not None:
            (folder / "config.json").write_text(json.dumps(config))
        for file, content in (add or {}).items():
            (folder / file).write_bytes(content)
        return folder

    bert = json.loads((good / "config.json").read_text())
    return {
        tmp_path / "nowhere": "is not a folder",
        broken("no-config", "config.json"): "has no config.json",
        broken("not-json", add={"config.json": b"{not json"}): "config.json is not a JSON object",
        broken("no-labels", config={"model_type": "bert"}): "has no id2label",
        broken("odd-labels", config={**bert, "id2label": {"0": "cat", "1": "dog", "2": "fish"}}): "are not NLI labels",
        broken("encoder-only", config={**bert, "architectures": ["BertModel"]}):
            "holds a BertModel, not a sequence-classification model",
        broken("no-weights", "model.safetensors"): "has no weights",
        broken("missing-shard", "model.safetensors",
               add={"model.safetensors.index.json": b'{"weight_map": {"a": "model-1.safetensors"}}'}):
            "names model-1.safetensors",
        broken("no-tokenizer", " ".join(TOKENIZER_FILES)): "has no tokenizer",
    }  # fmt: skip


def test_a_folder_that_is_not_such_a_model_is_bad_input_naming_what_is_missing(tmp_path: Path) -> None:
    good = fake_folder(tmp_path / "good")
    for folder, said in bad_folders(tmp_path, good).items():
        with pytest.raises(BadInput, match=said) as caught:
            inspect(folder)
        assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_the_cli_says_what_is_missing_in_one_line_and_exits_2(own_folder: Path, cli_env, tmp_path: Path) -> None:
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps({"doc_id": "d1", "abstract": "SAM improves adversarial robustness."}) + "\n")
    assert run_rag("ingest", str(corpus), env=cli_env).returncode == 0
    unloadable = tmp_path / "unloadable"  # all its files are there, but the weights are not weights
    shutil.copytree(own_folder, unloadable)
    (unloadable / "model.safetensors").write_bytes(b"not safetensors")
    cases = {**bad_folders(tmp_path, own_folder), unloadable: "could not be loaded as a sequence-classification model"}
    for folder, said in cases.items():
        env = {**cli_env, "RAG_VERIFIER_MODEL": str(folder)}
        result = run_rag("verify", "SAM improves robustness.", "--doc", "d1", env=env)
        assert result.returncode == 2 and said in result.stderr and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.slow
def test_rag_stats_shows_the_judge_model_once_used(own_folder: Path, cli_env) -> None:
    corpus = Path(cli_env["RAG_DATA_DIR"]).parent / "one.jsonl"
    corpus.write_text(json.dumps({"doc_id": "d1", "abstract": "SAM improves adversarial robustness."}) + "\n")
    assert run_rag("ingest", str(corpus), env=cli_env).returncode == 0
    env = {**cli_env, "RAG_VERIFIER_MODEL": str(own_folder)}
    assert json.loads(run_rag("stats", "--json", env=env).stdout)["verifier_model"] is None  # not used yet
    verdict = run_rag("verify", "SAM improves adversarial robustness.", "--doc", "d1", "--json", env=env)
    assert verdict.returncode == 0, verdict.stderr
    assert json.loads(verdict.stdout)["verdict"] == "supported"
    recorded = json.loads(run_rag("stats", "--json", env=env).stdout)["verifier_model"]
    assert recorded["sha256"] == inspect(own_folder).sha256 and recorded["path"] == str(own_folder.resolve())
    assert recorded["labels"] == list(LABELS) and recorded["precision"] in ("fp32", "int8")
    assert json.loads(run_rag("stats", "--json", env=cli_env).stdout)["verifier_model"] is None  # the shipped judge
