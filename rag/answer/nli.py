"""Bring your own judge (RAG_VERIFIER_MODEL): a local folder holding a Hugging Face sequence-classification NLI model
(a DeBERTa-v3 NLI model, a MiniCheck-style fact checker, or the project's own cross-encoder saved that way), made
ready once: its labels read from config.json's id2label, exported to ONNX in a child process (fp32 weights, whatever
the folder stores) and cached under RAG_MODEL_CACHE in a folder named by the model's checksum, quantised to int8
where the CPU has int8 instructions and the int8 model decides a fixed sample of pairs as the fp32 one does. The
folder's checksum is recorded in the data folder beside the index (`verifier.json`, shown by `rag stats`). Nothing is
downloaded, and no code from the folder is run.

Pairs are given as (premise, hypothesis): the abstract's sentences, then the claim, as NLI models and MiniCheck
(document, claim) take them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.errors import BadInput
from rag.model_cache import checksum, write_atomically

WEIGHTS = ("model.safetensors", "pytorch_model.bin")
SHARDED = ("model.safetensors.index.json", "pytorch_model.bin.index.json")  # a weight_map naming the shards
# A tokenizer without tokenizer.json (a "slow" one) is converted once, into the export's folder.
SLOW_TOKENIZER = ("vocab.txt", "vocab.json", "merges.txt", "spm.model", "sentencepiece.bpe.model", "tokenizer.model",
                  "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")  # fmt: skip
SENTENCEPIECE = ("spm.model", "sentencepiece.bpe.model", "tokenizer.model")  # converting these needs sentencepiece
# The names NLI and fact-checking models give their labels (lower case, "-" and " " as "_"), as the verifier's three.
SUPPORTED = ("entailment", "entailed", "entails", "entail", "supported", "supports", "support", "consistent",
             "faithful", "factual", "correct")  # fmt: skip
CONTRADICTED = ("contradiction", "contradicted", "contradicts", "contradict", "refutes", "refuted", "refute")
NOT_ENOUGH_INFO = ("neutral", "not_enough_info", "not_enough_information", "nei", "unsupported", "not_supported",
                   "not_entailment", "non_entailment", "not_entailed", "inconsistent", "unfaithful", "incorrect",
                   "hallucinated", "hallucination")  # fmt: skip
LABEL_NAMES = {
    **dict.fromkeys(SUPPORTED, "supported"),
    **dict.fromkeys(CONTRADICTED, "contradicted"),
    **dict.fromkeys(NOT_ENOUGH_INFO, "not_enough_info"),
}
AGREEMENT = 0.95  # share of AGREEMENT_PAIRS the int8 model must decide as fp32 does to be used
AGREEMENT_PAIRS = (
    ("SAM can improve adversarial robustness without sacrificing clean accuracy.", "SAM improves robustness."),
    ("SAM can improve adversarial robustness without sacrificing clean accuracy.", "SAM hurts robustness."),
    ("The trial enrolled 240 adult patients.", "The trial enrolled 240 adults."),
    ("The trial enrolled 240 adult patients.", "The trial enrolled 24 children."),
    ("No significant association was found between vitamin D and depression.", "Vitamin D prevents depression."),
    ("No significant association was found between vitamin D and depression.", "Vitamin D was not associated."),
    ("Graph neural networks suffer from oversmoothing as they grow deeper.", "Deep GNNs oversmooth."),
    ("Graph neural networks suffer from oversmoothing as they grow deeper.", "Protein models use atoms."),
    ("Our method improves the FID on CIFAR-10 from 3.2 to 1.7 with a single sampling step.",
     "The method reaches an FID of 1.7 on CIFAR-10."),
    ("Our method improves the FID on CIFAR-10 from 3.2 to 1.7 with a single sampling step.",
     "The method needs fifty sampling steps."),
    ("Ultrasound guidance reduced the number of attempts needed for cannulation.",
     "Ultrasound guidance increased the number of attempts."),
    ("Ultrasound guidance reduced the number of attempts needed for cannulation.", "The study was run in Canada."),
)  # fmt: skip
RECORD = "verifier.json"  # in the data folder: which judge model an index's answers were checked with
Agreement = Callable[[Path, Path], float]  # (fp32 model, int8 model) -> the share of pairs they decide alike


@dataclass(frozen=True)
class JudgeFolder:
    """A checked folder: where it is, its checksum, its label per output column, whether it has tokenizer.json
    (else its tokenizer is converted to one beside the export), and the setting that named it (a judge's, or a
    reranker's: rag/answer/rerank.py)."""

    path: Path
    sha256: str
    columns: tuple[str, ...]  # the verifier's label of each of the model's outputs
    fast_tokenizer: bool = True
    setting: str = "RAG_VERIFIER_MODEL"

    def export_dir(self, cache: Path) -> Path:
        kind = "verifier" if self.setting == "RAG_VERIFIER_MODEL" else "reranker"
        from rag.model_cache import runtime_version

        return cache / f"{kind}-{self.sha256[:16]}-ort{runtime_version()}"

    def tokenizer_dir(self, cache: Path) -> Path:
        """The folder whose tokenizer.json the judge reads: the model's own, or the converted one."""
        return self.path if self.fast_tokenizer else self.export_dir(cache)


def inspect(
    folder: Path,
    setting: str = "RAG_VERIFIER_MODEL",
    columns_of: Callable[[dict[int, str], str], tuple[str, ...]] | None = None,
) -> JudgeFolder:
    """The folder as a judge (or, with another `setting` and `columns_of`, another classifier: a reranker), or
    BadInput naming what is missing (one line)."""
    where = f"{setting}: {folder}"
    if not folder.is_dir():
        raise BadInput(f"{where} is not a folder")
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise BadInput(f"{where} has no config.json (not a Hugging Face model folder)")
    try:
        config = json.loads(config_path.read_text())
        architectures = [str(a) for a in config.get("architectures") or []]
    except (ValueError, AttributeError, TypeError, UnicodeDecodeError):
        raise BadInput(f"{where}: config.json is not a JSON object") from None
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise BadInput(f"{where} holds a {architectures[0]}, not a sequence-classification model")
    try:
        if "id2label" not in config and architectures:  # transformers leaves out its default two labels
            config["id2label"] = {"0": "LABEL_0", "1": "LABEL_1"}
        id2label = {int(i): str(name) for i, name in config["id2label"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadInput(f"{where}: config.json has no id2label (not a classification model)") from None
    columns = (columns_of or label_columns)(id2label, where)
    weights = weight_files(folder, where)
    fast = (folder / "tokenizer.json").is_file()
    tokenizer = [folder / "tokenizer.json"] if fast else [folder / n for n in SLOW_TOKENIZER if (folder / n).is_file()]
    if not fast and not any(p.name not in ("tokenizer_config.json", "special_tokens_map.json") for p in tokenizer):
        raise BadInput(f"{where} has no tokenizer (tokenizer.json, or vocab.txt, vocab.json or spm.model)")
    needs = [p.name for p in tokenizer if p.name in SENTENCEPIECE]
    if not fast and needs and importlib.util.find_spec("sentencepiece") is None:
        raise BadInput(f"{where} has no tokenizer.json, and its {needs[0]} needs the sentencepiece package to be read: "
                       "save the tokenizer with tokenizer.json where you downloaded it (see the README)")  # fmt: skip
    return JudgeFolder(folder.resolve(), checksum([config_path, *weights, *tokenizer]), columns, fast, setting)


def weight_files(folder: Path, where: str) -> list[Path]:
    """The weight files the model loads from (safetensors first, as transformers does), or BadInput."""
    for name in WEIGHTS:
        if (folder / name).is_file():
            return [folder / name]
    for name in SHARDED:
        if (folder / name).is_file():
            try:
                shards = sorted(set(json.loads((folder / name).read_text())["weight_map"].values()))
            except (ValueError, KeyError, TypeError, AttributeError):
                raise BadInput(f"{where}: {name} has no weight_map") from None
            missing = [s for s in shards if not (folder / s).is_file()]
            if missing or not shards:
                raise BadInput(f"{where} has no weights: {name} names {missing[0] if missing else 'no files'}")
            return [folder / name, *(folder / s for s in shards)]
    raise BadInput(f"{where} has no weights ({' or '.join(WEIGHTS)})")


def label_columns(id2label: dict[int, str], where: str) -> tuple[str, ...]:
    """The verifier's label of each output column, from id2label's names. A two-label model (a fact checker:
    supported or not) never says "contradicted": the label that is not support counts as not enough information;
    one whose names say nothing (LABEL_0, LABEL_1) is read as MiniCheck's: 1 supported, 0 not."""
    names = [id2label.get(i) for i in range(len(id2label))]
    if None in names:
        raise BadInput(f"{where}: config.json's id2label is not numbered 0 to {len(id2label) - 1}")
    mapped = [LABEL_NAMES.get(str(name).strip().lower().replace("-", "_").replace(" ", "_")) for name in names]
    if len(names) == 2:
        if mapped.count("supported") == 1:
            return tuple("supported" if m == "supported" else "not_enough_info" for m in mapped)
        if mapped == [None, None]:
            return ("not_enough_info", "supported")
    elif len(names) > 2 and None not in mapped and "supported" in mapped:
        return tuple(m for m in mapped if m is not None)
    raise BadInput(
        f"{where}: config.json's labels {names} are not NLI labels "
        "(entailment/neutral/contradiction, or supported/unsupported)"
    )


def prepared(judge: JudgeFolder, cache: Path, agreement: Agreement) -> tuple[Path, str]:
    """The ONNX model to run (exported once) and its precision: int8 where the CPU has int8 instructions and the
    int8 model decides AGREEMENT_PAIRS as the fp32 one does (`agreement(fp32, int8)`: the share), else fp32."""
    from rag.model_cache import intact, preparing, record_sizes
    from rag.onnx import cpu_has_int8_dot, in_child_process

    folder = judge.export_dir(cache)
    fp32, int8, record = folder / "model.onnx", folder / "model-int8.onnx", folder / "model-int8.json"
    int8_pays = cpu_has_int8_dot()
    wanted = [fp32.name, *([int8.name, record.name] if int8_pays else [])]
    tokenizer = judge.tokenizer_dir(cache) / "tokenizer.json"
    if not intact(folder, wanted) or not tokenizer.exists():
        with preparing(folder):  # another process preparing the same model is waited for
            if not intact(folder, wanted[:1], repair=True) or not tokenizer.exists():
                in_child_process(export_classifier, judge.path, folder, judge.setting)
                record_sizes(folder, wanted[:1])
            if int8_pays and not intact(folder, wanted[1:], repair=True):
                from rag.onnx import quantize_int8

                tmp = folder / f"model-int8.{os.getpid()}.tmp.onnx"
                quantize_int8(fp32, tmp)
                share = agreement(fp32, tmp)
                tmp.replace(int8)
                write_atomically(record, json.dumps({"agreement": share, "threshold": AGREEMENT}) + "\n")
                record_sizes(folder, wanted[1:])
    if not int8_pays:
        return fp32, "fp32"
    return (int8, "int8") if json.loads(record.read_text())["agreement"] >= AGREEMENT else (fp32, "fp32")


def export_classifier(folder: Path, out: Path, setting: str = "RAG_VERIFIER_MODEL") -> None:
    """Export the folder's classifier (logits for INPUTS) to out/model.onnx in fp32, and, when the folder has no
    tokenizer.json, convert its tokenizer to out/tokenizer.json first. BadInput when either cannot be loaded."""
    from rag.onnx import INPUTS, OFFLINE, classifier_logits, encoder_feeds, export_encoder, load_tokenizer

    os.environ.update(OFFLINE)
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    where = f"{setting}: {folder}"
    tokenizer_dir = folder if (folder / "tokenizer.json").is_file() else out
    if not (tokenizer_dir / "tokenizer.json").is_file():
        try:
            converted = AutoTokenizer.from_pretrained(str(folder))
            if not converted.is_fast:
                raise ValueError(f"{type(converted).__name__} has no fast version")
            tmp = out / f"tokenizer.{os.getpid()}.tmp"
            converted.save_pretrained(str(tmp))
            (tmp / "tokenizer.json").replace(out / "tokenizer.json")
            shutil.rmtree(tmp)
        except Exception as exc:
            raise BadInput(f"{where} has no tokenizer.json and its tokenizer could not be converted to one "
                           f"({first_line(exc)})") from None  # fmt: skip
    if (out / "model.onnx").exists():
        return
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            str(folder), attn_implementation="eager", dtype=torch.float32
        ).eval()
    except Exception as exc:  # an architecture transformers does not know, damaged weights, ...
        raise BadInput(f"{where} could not be loaded as a sequence-classification model ({first_line(exc)})") from None
    example = encoder_feeds(load_tokenizer(tokenizer_dir, 512), [AGREEMENT_PAIRS[0], ("A premise.", "A longer claim.")])
    sample = tuple(torch.from_numpy(example[name]) for name in INPUTS)
    export_encoder(classifier_logits(model), sample, out / "model.onnx", "logits")


def first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def record_use(judge: JudgeFolder, precision: str, data_dir: Path) -> None:
    """Record the judge model beside the index (data_dir/verifier.json), for `rag stats`; rewritten only when it
    changes (another folder, other weights, another precision)."""
    entry = {"path": str(judge.path), "sha256": judge.sha256, "labels": list(judge.columns), "precision": precision}
    path = data_dir / RECORD
    try:
        if json.loads(path.read_text()) == entry:
            return
    except (OSError, ValueError):
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(entry, indent=1) + "\n")
