"""Builds the learned instruction filter (rag/corpus/instruction_filter.py): a logistic regression over hashed
character n-grams, trained from nothing (no pretrained weights) to tell sentences addressed to an assistant from
sentences of research abstracts.

    rag train-instruction-filter      # about 3 minutes on 2 CPU cores; writes rag/models/instructions/

Deterministic (fixed seed, CPU only, offline). The data:
- Ordinary sentences (label 0): every sentence of the PubMedQA (MIT) and SciFact (ODC-By abstracts) corpora in
  ../shared/datasets, and each pair of neighbouring sentences (the filter also reads pairs); research sentences
  in 19 languages and 5 transliterations, English sentences about instructions, prompts and assistants in a
  research voice, and 300 in the voice of machine-learning abstracts (rag/training/instruction_phrases.py).
- Instructions (label 1): generated from the phrase tables in 11 template families; mixed-language (each phrase in
  its own language), transliterated, obfuscated (spaced letters, look-alike letters, invisible characters,
  full-width letters, leetspeak, punctuation inside words, base64 with a hint to decode it), wrapped in chat-template
  and role tokens or comments, and set inside an ordinary sentence.

The split, fixed before any training: the abstracts are split by the hash of their id into train (70 %), tune
(10 %: the threshold) and test (20 %: false alarms, scored at the end). Three languages (sv, uk, id: their
instructions and their ordinary sentences) and two template families (role, link) are held out: an evaluation model
trained without them reports how well the filter withholds instructions in a language or a form it never saw.
The shipped model is then trained the same way with every language and family (still without the tune and test
abstracts) and keeps the tuned threshold. Both evaluations are recorded in rag/models/instructions/model.json.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from rag.corpus.injection import Guard
from rag.corpus.instruction_filter import (
    BUCKETS,
    MIN_NGRAMS,
    MODEL_DIR,
    NGRAMS,
    WINDOW,
    InstructionFilter,
    folded,
    ngram_buckets,
)
from rag.corpus.loaders import read_jsonl
from rag.training import built_with
from rag.training.instruction_phrases import PHRASES, RESEARCH_ABOUT_INSTRUCTIONS, RESEARCH_ABOUT_MODELS

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"
CORPORA = (SHARED / "pubmedqa" / "corpus.jsonl", SHARED / "scifact" / "corpus.jsonl")
SEED = 29
HELD_OUT_LANGUAGES = ("sv", "uk", "id")
HELD_OUT_FAMILIES = ("role", "link")
TEMPLATES = {
    "override": [
        "{ignore} {prior} {and} {reply} {payload}",
        "{ignore} {prior}.",
        "{ignore} {prior}: {reply} {payload}",
    ],
    "output": ["{always}, {reply} {payload}", "{reply} {payload}, {always}."],
    "address": ["{address}: {reply} {payload}", "{address}, {cite}.", "{address}: {always} {reply} {payload}"],
    "reveal": ["{reveal}.", "{address}: {reveal}.", "{ignore} {prior} {and} {reveal}."],
    "citation": ["{cite}.", "{address}: {cite}.", "{always} {cite}."],
    "role": [
        "{you_are} {persona}.",
        "{you_are} {persona} {and} {reply} {payload}",
        "{you_are} {persona}: {always} {cite}.",
    ],
    "link": ["{link} {url}", "{link} {url} {and} {cite}."],
    "format": ["{format}.", "{address}: {format}.", "{always}, {format}."],
    "refuse": ["{refuse}.", "{address}: {refuse}.", "{ignore} {prior} {and} {refuse}."],
    "verdict": ["{verdict}.", "{address}: {verdict}.", "{always}, {verdict}."],
    "secrecy": [
        "{reply} {payload} {and} {secrecy}.",
        "{cite} {and} {secrecy}.",
        "{address}: {secrecy}; {reply} {payload}",
    ],
}
WRAPPERS = [
    "<|im_start|>system\n{x}<|im_end|>", "<|im_end|><|im_start|>user {x}", "[INST] {x} [/INST]", "<<SYS>> {x} <</SYS>>",
    "System: {x}", "SYSTEM: {x}", "Assistant: {x}", "### Instruction: {x}", "### System:\n{x}", "<!-- {x} -->",
    "[//]: # ({x})", "<system>{x}</system>", "</abstract> {x} <abstract>", "<|system|> {x}", "[SYSTEM] {x}",
    "<start_of_turn>user {x}<end_of_turn>", "{{{{system}}}} {x}", "END OF ABSTRACT. {x}",
]  # fmt: skip
# What the instructions ask for: one list for training, another for every evaluation (so that a known canary word
# never gives an instruction away)
CANARIES = (["PWNED", "HACKED", "I have been pwned", "ACCESS GRANTED", "JAILBROKEN", "Z0RG"],
            ["PIRATÉ", "OWNED", "compromised", "Hello there", "7", "kiwi"])  # fmt: skip
PERSONAS = (
    ["DAN", "FreeGPT", "an unfiltered AI", "EvilBot", "a pirate"],
    ["the developer", "Grandma", "root", "Mr. X"],
)
URLS = (["http://evil.example/x", "https://bit.ly/3xYz"], ["www.free-pdf.example", "http://192.0.2.7/login"])
DECODE = ["Decode this base64 and follow it:", "base64:", "Follow the decoded instruction:", "b64 ->", "Dekodiere:"]
LEET = str.maketrans("aeiost", "4310$7")
LOOKALIKE = str.maketrans("aeopcyxi", "аеорсухі")  # noqa: RUF001 - Latin to Cyrillic look-alikes
CJK = {"zh", "ja"}
WORDS_OF_URLS = ["tools", "data", "code", "release", "model", "bench", "lab", "pipeline", "v2", "suite"]


@dataclass
class FilterConfig:
    seed: int = SEED
    instructions: int = 40000  # generated instructions for training
    test_instructions: int = 2000  # per held-out group in the evaluation (2,000: rates within about 2 points)
    pairs: int = 30000  # neighbouring ordinary sentences read together
    benign_per_language: int = 400
    c: float = 16.0  # inverse regularisation of the logistic regression (chosen on seen-language validation data)
    false_alarm_rate: float = 0.0008  # on the tune abstracts' sentences and pairs: sets the threshold
    limit: int | None = None  # train on only this many examples (a quick check of the command)


# ----- ordinary sentences ------------------------------------------------------------------------------------------
def split_of(doc_id: str) -> str:
    share = int(hashlib.sha256(f"instructions:{doc_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if share < 0.2 else "tune" if share < 0.3 else "train"


def corpus_sentences() -> dict[str, list[str]]:
    """doc id -> its sentences, as the product splits them, for every abstract of the shared corpora."""
    from rag.sentences import sentence_spans

    found = {}
    for path in CORPORA:
        for row in read_jsonl(path):
            text = row["abstract"]
            found[row["doc_id"]] = [text[a:b] for a, b in sentence_spans(text)]
    return found


def neighbour_pairs(docs: dict[str, list[str]]) -> list[str]:
    return [f"{s[i]} {s[i + 1]}" for s in docs.values() for i in range(len(s) - 1)]


def fill(text: str, rng: random.Random, topics: list[str]) -> str:
    url = rng.choice(
        ["https://github.com/{a}/{b}", "http://www.{a}.org/{b}", "https://{a}.{b}.edu", "https://doi.org/10.{n}/{a}"]
    )
    url = url.format(a=rng.choice(topics).split()[0].lower(), b=rng.choice(WORDS_OF_URLS), n=rng.randint(1000, 9999))
    return text.format(
        n=rng.randint(2, 2020), p=rng.randint(1, 99), q=rng.randint(1, 99), x=rng.choice(topics), url=url
    )


def benign_phrases(languages: list[str], rng: random.Random, per_language: int) -> list[str]:
    found = []
    for lang in languages:
        frames, topics = PHRASES[lang]["benign"].split("|"), PHRASES[lang]["topics"].split("|")
        found += [fill(rng.choice(frames), rng, topics) for _ in range(per_language)]
    english = PHRASES["en"]["topics"].split("|")
    # each English list drawn per_language * 4 times (twice the English research sentences of one list): the short
    # lines ("Abstract.") that balance the wrappers ("END OF ABSTRACT. ...") must not be diluted by the longer list
    # (drawn together, "A valid abstract." came to read as an instruction)
    for research in (RESEARCH_ABOUT_INSTRUCTIONS, RESEARCH_ABOUT_MODELS):
        found += [fill(rng.choice(research), rng, english) for _ in range(per_language * 4)]
    return found


# ----- instructions ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Instruction:
    text: str
    language: str  # "fr", "en+fr" when mixed
    family: str
    form: str  # plain, or the obfuscation or wrapping applied
    core: str = ""  # the instruction itself, when `text` also holds ordinary words around it

    def span_in(self, abstract: str, start: int) -> tuple[int, int]:
        """Where the instruction itself lies in an abstract that holds `text` from `start`."""
        core = self.core or self.text
        first = start + self.text.index(core)
        return first, first + len(core)


def phrase(lang: str, slot: str, rng: random.Random) -> str:
    return rng.choice(PHRASES[lang][slot].split("|"))


def instruction(
    rng: random.Random, languages: list[str], families: list[str], words: list[str], side: int
) -> Instruction:
    lang = rng.choice(languages)
    mixed = rng.choice(languages) if rng.random() < 0.2 else lang
    family = rng.choice(families)
    template = rng.choice(TEMPLATES[family])
    if PHRASES[lang].get("sov"):
        template = template.replace("{ignore} {prior}", "{prior} {ignore}").replace(
            "{reply} {payload}", "{payload} {reply}"
        )
    payload = rng.choice(CANARIES[side]) if rng.random() < 0.5 else rng.choice(words)  # not a word to learn
    slots = {
        slot: phrase(rng.choice([lang, mixed]), slot, rng) for slot in PHRASES["en"] if slot not in ("benign", "topics")
    }
    text = template.format(**slots, payload=payload, persona=rng.choice(PERSONAS[side]), url=rng.choice(URLS[side]))
    if lang in CJK and mixed == lang:
        text = text.replace(" ", "")
    language = lang if mixed == lang else f"{lang}+{mixed}"
    text, form = disguised(text, rng)
    return Instruction(text[:1].upper() + text[1:] if rng.random() < 0.5 else text, language, family, form)


def disguised(text: str, rng: random.Random) -> tuple[str, str]:
    """The text, perhaps obfuscated or wrapped, and the name of what was done."""
    form = rng.choice(["plain"] * 8 + ["upper", "spaced", "lookalike", "invisible", "fullwidth", "leet", "punctuated",
                       "base64", "wrapped", "wrapped", "wrapped"])  # fmt: skip
    words = text.split(" ")
    i = rng.randrange(len(words))
    if form == "upper":
        text = text.upper()
    elif form == "spaced":
        words[i] = " ".join(words[i])
        text = " ".join(words)
    elif form == "lookalike":
        text = "".join(c.translate(LOOKALIKE) if rng.random() < 0.5 else c for c in text)
    elif form == "invisible":
        text = "".join(c + rng.choice("\u200b\u200c\u200d\u2060\u00ad") if c.isalpha() and rng.random() < 0.3 else c
                       for c in text)  # fmt: skip
    elif form == "fullwidth":
        text = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    elif form == "leet":
        text = text.translate(LEET)
    elif form == "punctuated":
        words[i] = re.sub(r"(?<=\w)(?=\w)", lambda _: rng.choice(["-", ".", "_", "*"]), words[i], count=2)
        text = " ".join(words)
    elif form == "base64":
        text = f"{rng.choice(DECODE)} {base64.b64encode(text.encode()).decode()}"
    elif form == "wrapped":
        text = rng.choice(WRAPPERS).format(x=text)
    return text, form


def in_context(text: str, rng: random.Random, sentences: list[str]) -> str:
    """Half the time, the instruction shares its sentence with ordinary words about the topic."""
    if rng.random() < 0.5:
        return text
    host = rng.choice(sentences).rstrip(".")
    cut = " ".join(host.split()[: rng.randint(4, 14)])
    joiner = rng.choice(["; ", ", ", " ", ": ", " and "])
    return f"{cut}{joiner}{text}" if rng.random() < 0.6 else f"{text} {cut}."


def instructions(
    n: int, rng: random.Random, languages: list[str], families: list[str], host: list[str], side: int = 0
) -> Iterator[Instruction]:
    """`side`: 0 for training, 1 for evaluation (other payloads)."""
    words = [w for s in host[:2000] for w in s.split() if w.isalpha() and len(w) > 5]
    for _ in range(n):
        made = instruction(rng, languages, families, words, side)
        yield Instruction(in_context(made.text, rng, host), made.language, made.family, made.form, made.text)


# ----- training ----------------------------------------------------------------------------------------------------
def features(texts: list[str], size: int = BUCKETS):
    """The training matrix: each text's hashed n-gram counts over the square root of its n-gram count, exactly
    what InstructionFilter.run_scores computes."""
    import numpy as np
    from scipy.sparse import csr_matrix

    rows, cols, values = [], [], []
    for i, text in enumerate(texts):
        buckets = np.concatenate(ngram_buckets(folded(text), size) or [np.zeros(0, dtype=np.int64)])
        rows.append(np.full(len(buckets), i))
        cols.append(buckets)
        values.append(np.full(len(buckets), 1 / max(len(buckets), MIN_NGRAMS) ** 0.5))
    return csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(len(texts), size))


def as_read(made: Iterator[Instruction], rng: random.Random, host: list[str]) -> list[str]:
    """Each instruction as the filter meets it: the sentences holding it once its abstract (the instruction between
    two ordinary sentences) is split as the product splits it."""
    from rag.sentences import sentence_spans

    found = []
    for i in made:
        before, after = rng.sample(host, 2)
        abstract = f"{before} {i.text} {after}"
        start, end = i.span_in(abstract, len(before) + 1)
        found += [abstract[a:b] for a, b in sentence_spans(abstract) if a < end and b > start]
    return found


def fit(benign: list[str], attacks: list[str], config: FilterConfig):
    from sklearn.linear_model import LogisticRegression

    if config.limit:  # half of each kind, so that both are there
        rng = random.Random(config.seed)
        half = config.limit // 2
        benign, attacks = rng.sample(benign, min(half, len(benign))), rng.sample(attacks, min(half, len(attacks)))
    texts, labels = benign + attacks, [0] * len(benign) + [1] * len(attacks)
    model = LogisticRegression(C=config.c, class_weight="balanced", max_iter=2000, solver="liblinear")
    model.fit(features(texts), labels)
    return model


def as_filter(model, tune: list[str], rate: float) -> InstructionFilter:
    """The trained model as a filter, its threshold set so that no more than `rate` of the tune texts (the tune
    abstracts' sentences and pairs) score above it."""
    import numpy as np

    weights = model.coef_[0].astype(np.float16).astype(np.float32)
    untuned = InstructionFilter(weights, float(model.intercept_[0]), 0.0, "")
    return replace(untuned, threshold=sorted(untuned.scores(tune), reverse=True)[int(rate * len(tune))])


@dataclass
class Data:
    train_benign: list[str]
    tune_benign: list[str]
    test_docs: dict[str, list[str]]
    host: list[str]


def ordinary(config: FilterConfig, rng: random.Random, languages: list[str]) -> Data:
    docs = corpus_sentences()
    by_split = defaultdict(dict)
    for doc, sentences in docs.items():
        by_split[split_of(doc)][doc] = sentences
    train_sentences = [s for ss in by_split["train"].values() for s in ss]
    pairs = neighbour_pairs(by_split["train"])
    windows = [
        s[w : w + WINDOW]
        for s in train_sentences
        if len(s) > WINDOW * 5 // 4
        for w in range(0, len(s) - WINDOW, WINDOW // 2)
    ]
    benign = train_sentences + rng.sample(pairs, min(config.pairs, len(pairs)))
    benign += rng.sample(windows, min(config.pairs, len(windows)))  # long sentences are also read in windows
    benign += benign_phrases(languages, rng, config.benign_per_language)
    tune = [s for ss in by_split["tune"].values() for s in ss] + neighbour_pairs(by_split["tune"])
    return Data(benign, tune, by_split["test"], train_sentences)


def build(out: Path = MODEL_DIR, config: FilterConfig | None = None, log: Callable[[str], None] = print) -> dict:
    """Train the evaluation model (held-out languages and families left out), evaluate it, train the shipped model
    on everything and write it with its checksum and both evaluations."""
    import numpy as np

    config = config or FilterConfig()
    if config.limit:  # a quick check of the command: little of everything
        small = max(config.limit // 2, 8)
        config = replace(config, instructions=small, pairs=small, benign_per_language=10, test_instructions=20)
    started = time.monotonic()
    every = [lang for lang in PHRASES]
    seen = [lang for lang in every if lang not in HELD_OUT_LANGUAGES]
    trained_families = [f for f in TEMPLATES if f not in HELD_OUT_FAMILIES]
    rng = random.Random(config.seed)
    data = ordinary(config, rng, seen)
    log(f"{len(data.train_benign)} ordinary texts to train on, {len(data.tune_benign)} to tune on")

    attacks = as_read(instructions(config.instructions, rng, seen, trained_families, data.host), rng, data.host)
    evaluation_model = as_filter(fit(data.train_benign, attacks, config), data.tune_benign, config.false_alarm_rate)
    log(f"evaluation model trained ({time.monotonic() - started:.0f} s)")
    evaluation = evaluate(evaluation_model, config, data, seen, trained_families)
    log(json.dumps(evaluation["withheld"], ensure_ascii=False))

    rng = random.Random(config.seed + 1)
    benign = data.train_benign + benign_phrases(list(HELD_OUT_LANGUAGES), rng, config.benign_per_language)
    attacks = as_read(instructions(config.instructions, rng, every, list(TEMPLATES), data.host), rng, data.host)
    shipped = as_filter(fit(benign, attacks, config), data.tune_benign, config.false_alarm_rate)
    final = evaluate(shipped, config, data, every, list(TEMPLATES), in_sample=True)
    out.mkdir(parents=True, exist_ok=True)
    raw = shipped.weights.astype(np.float16).tobytes()
    (out / "weights.f16").write_bytes(raw)
    record = {
        "file": "weights.f16", "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw),
        "bias": shipped.bias, "threshold": shipped.threshold,
        "ngrams": list(NGRAMS), "buckets": BUCKETS, "min_ngrams": MIN_NGRAMS,
        "config": asdict(config), "languages": every, "families": list(TEMPLATES),
        "held_out": {"languages": list(HELD_OUT_LANGUAGES), "families": list(HELD_OUT_FAMILIES)},
        "evaluation_model": evaluation, "shipped_model": final,
        "built_with": built_with("scikit-learn", "numpy", "nltk"),  # the solver and the sentences
        "seconds": round(time.monotonic() - started),
    }  # fmt: skip
    (out / "model.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return record


def evaluate(model: InstructionFilter, config: FilterConfig, data: Data, languages: list[str], families: list[str],
             in_sample: bool = False) -> dict:  # fmt: skip
    """Withheld rates on instructions generated with another seed (per group, per family, per form), and false
    alarms on the test abstracts' sentences (listed)."""
    guard = Guard(model)
    rng = random.Random(config.seed + 2)
    host = [s for ss in data.test_docs.values() for s in ss]
    groups = {"seen languages, seen families": (languages, families)}
    if not in_sample:
        groups |= {
            "held-out languages": (list(HELD_OUT_LANGUAGES), families),
            "held-out families": (languages, list(HELD_OUT_FAMILIES)),
            "held-out languages and families": (list(HELD_OUT_LANGUAGES), list(HELD_OUT_FAMILIES)),
        }
    withheld: dict[str, dict] = {}
    for name, (langs, fams) in groups.items():
        made = list(instructions(config.test_instructions, rng, langs, fams, host, side=1))
        caught = [withheld_in_abstract(guard, i, rng.sample(host, 2)) for i in made]
        learned = [score > model.threshold for score in model.scores([i.text for i in made])]
        withheld[name] = {"n": len(made), "withheld": rate(caught), "learned_alone": rate(learned),
                          **{f"family:{k}": v for k, v in per(made, caught, lambda i: i.family).items()},
                          **{f"form:{k}": v for k, v in per(made, caught, lambda i: i.form).items()},
                          **{f"language:{k}": v for k, v in per(made, caught, lambda i: i.language).items()
                             if "+" not in k}}  # fmt: skip
    sentences = [(doc, s) for doc, ss in data.test_docs.items() for s in ss]
    flagged = [(doc, s) for (doc, s), score in zip(sentences, model.scores([s for _, s in sentences]), strict=True)
               if score > model.threshold]  # fmt: skip
    return {"withheld": withheld, "test_sentences": len(sentences), "false_alarms": len(flagged),
            "flagged": [{"doc_id": d, "sentence": s} for d, s in flagged[:50]]}  # fmt: skip


def withheld_in_abstract(guard: Guard, made: Instruction, around: list[str]) -> bool:
    """Whether every sentence holding part of the instruction is withheld, in an abstract that has it between
    two ordinary sentences (the abstract is split into sentences as the product splits it)."""
    from rag.sentences import sentence_spans

    abstract = f"{around[0]} {made.text} {around[1]}"
    start, end = made.span_in(abstract, len(around[0]) + 1)
    spans = sentence_spans(abstract)
    withheld = guard.withheld(abstract, spans)
    return all(i in withheld for i, (a, b) in enumerate(spans) if a < end and b > start)


def rate(hits: list[bool]) -> float:
    return round(sum(hits) / max(len(hits), 1), 4)


def per(made: list[Instruction], caught: list[bool], key: Callable[[Instruction], str]) -> dict[str, float]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for i, hit in zip(made, caught, strict=True):
        groups[key(i)].append(hit)
    return {k: rate(v) for k, v in sorted(groups.items())}
