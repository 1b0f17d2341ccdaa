"""Bring your own judge (RAG_VERIFIER_MODEL): a local folder holding a Hugging Face sequence-classification NLI model
(a DeBERTa-v3 NLI model, a MiniCheck-style fact checker, or the project's own cross-encoder saved that way), made
ready once: its labels read from config.json's id2label, exported to ONNX in a child process and cached under
RAG_MODEL_CACHE, quantised to int8 where the CPU has int8 instructions and the int8 model decides a fixed sample of
pairs as the fp32 one does. The folder's checksum is recorded in the data folder beside the index (`verifier.json`,
shown by `rag stats`). Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.errors import BadInput

WEIGHTS = ("model.safetensors", "pytorch_model.bin")
# The names NLI and fact-checking models give their labels, as the verifier's three.
LABEL_NAMES = {
    "supported": "supported", "support": "supported", "supports": "supported", "entailment": "supported",
    "entailed": "supported", "entails": "supported", "consistent": "supported",
    "contradicted": "contradicted", "contradiction": "contradicted", "contradict": "contradicted",
    "refutes": "contradicted", "refuted": "contradicted",
    "not_enough_info": "not_enough_info", "neutral": "not_enough_info", "nei": "not_enough_info",
    "not enough info": "not_enough_info", "unsupported": "not_enough_info", "not_supported": "not_enough_info",
    "not_entailment": "not_enough_info", "inconsistent": "not_enough_info",
}  # fmt: skip
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
)
RECORD = "verifier.json"  # in the data folder: which judge model an index's answers were checked with
Agreement = Callable[[Path, Path], float]  # (fp32 model, int8 model) -> the share of pairs they decide alike


@dataclass(frozen=True)
class JudgeFolder:
    """A checked folder: where it is, its checksum, its label per output column, and its ONNX export's folder."""

    path: Path
    sha256: str
    columns: tuple[str, ...]  # the verifier's label of each of the model's outputs

    def export_dir(self, cache: Path) -> Path:
        return cache / f"verifier-{self.sha256[:16]}"


def inspect(folder: Path) -> JudgeFolder:
    """The folder as a judge, or BadInput naming what is missing."""
    if not folder.is_dir():
        raise BadInput(f"RAG_VERIFIER_MODEL: {folder} is not a folder")
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise BadInput(f"RAG_VERIFIER_MODEL: {folder} has no config.json (not a Hugging Face model folder)")
    try:
        config = json.loads(config_path.read_text())
        classifier = any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or [])
        if "id2label" not in config and classifier:  # transformers leaves out its default two labels
            config["id2label"] = {"0": "LABEL_0", "1": "LABEL_1"}
        id2label = {int(i): str(name) for i, name in config["id2label"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadInput(f"RAG_VERIFIER_MODEL: {config_path} has no id2label (not a classification model)") from None
    weights = [folder / name for name in WEIGHTS if (folder / name).is_file()]
    if not weights:
        raise BadInput(f"RAG_VERIFIER_MODEL: {folder} has no weights ({' or '.join(WEIGHTS)})")
    if not (folder / "tokenizer.json").is_file():
        raise BadInput(f"RAG_VERIFIER_MODEL: {folder} has no tokenizer.json")
    columns = label_columns(id2label, config_path)
    digest = hashlib.sha256()
    for path in (config_path, weights[0], folder / "tokenizer.json"):
        digest.update(path.read_bytes())
    return JudgeFolder(folder.resolve(), digest.hexdigest(), columns)


def label_columns(id2label: dict[int, str], where: Path) -> tuple[str, ...]:
    """The verifier's label of each output column. A two-label model whose names are not recognised (LABEL_0,
    LABEL_1) is read as MiniCheck's: 1 supported, 0 not; it never says "contradicted"."""
    names = [id2label.get(i, "") for i in range(len(id2label))]
    mapped = [LABEL_NAMES.get(name.lower().replace("-", "_").strip()) for name in names]
    if len(names) == 2 and None in mapped:
        mapped = ["not_enough_info", "supported"]
    if None in mapped or "supported" not in mapped:
        raise BadInput(
            f"RAG_VERIFIER_MODEL: {where}'s labels {names} are not NLI labels "
            "(entailment/neutral/contradiction or supported/unsupported)"
        )
    return tuple(label for label in mapped if label is not None)


def prepared(judge: JudgeFolder, cache: Path, agreement: Agreement) -> tuple[Path, str]:
    """The ONNX model to run (exported once) and its precision: int8 where the CPU has int8 instructions and the
    int8 model decides AGREEMENT_PAIRS as the fp32 one does (`agreement(fp32, int8)`: the share), else fp32."""
    from rag.onnx import cpu_has_int8_dot, in_child_process

    folder = judge.export_dir(cache)
    fp32, int8, record = folder / "model.onnx", folder / "model-int8.onnx", folder / "model-int8.json"
    if not fp32.exists():
        in_child_process(export_classifier, judge.path, fp32)
    if not cpu_has_int8_dot():
        return fp32, "fp32"
    if not record.exists():
        from rag.onnx import quantize_int8

        quantize_int8(fp32, int8)
        record.write_text(json.dumps({"agreement": agreement(fp32, int8), "threshold": AGREEMENT}) + "\n")
    return (int8, "int8") if json.loads(record.read_text())["agreement"] >= AGREEMENT else (fp32, "fp32")


def export_classifier(folder: Path, path: Path) -> None:
    """Export the folder's classifier (logits for INPUTS) to ONNX."""
    from rag.onnx import INPUTS, OFFLINE, classifier_logits, encoder_feeds, export_encoder, load_tokenizer

    os.environ.update(OFFLINE)
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(folder), attn_implementation="eager").eval()
    example = encoder_feeds(load_tokenizer(folder, 512), [AGREEMENT_PAIRS[0], ("A premise.", "A longer claim here.")])
    export_encoder(classifier_logits(model), tuple(torch.from_numpy(example[name]) for name in INPUTS), path, "logits")


def record_use(judge: JudgeFolder, precision: str, data_dir: Path) -> None:
    """Record the judge model beside the index (data_dir/verifier.json), for `rag stats`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    entry = {"path": str(judge.path), "sha256": judge.sha256, "labels": list(judge.columns), "precision": precision}
    (data_dir / RECORD).write_text(json.dumps(entry, indent=1) + "\n")
