"""Answer-style pairs: abstract sentences restated the way an answering model writes them, faithful or not, with the
evidence the verifier would read. They teach the verifier's cross-encoder what capable models write, where SciFact's
expert claims and the plain sentence edits of rag/training/verifier.py taught it only what annotators write.

    .venv/bin/python -m rag.training.answer_pairs --out eval/datasets/answer_pairs   # the files, to read or score

Abstracts: PubMedQA (MIT) and SciFact (ODC-By) abstracts that no evaluation set cites (`excluded_docs`; never the
seeds). Each abstract belongs to one split for good, by the SHA-256 of its id (`split_of`): "train" (what
`rag train-verifier` learns from) or "heldout" (scored, never trained or tuned on); the abstracts SciFact's training
claims cite are always "train". Kinds, as the independent claim
sets name them:
- faithful (supported): `paraphrase` (lead-in and statistics dropped, plainer words, a reporting frame), `result`
  (a sentence with numbers, restated with them), `synthesis` (two sentences of one abstract in one sentence);
- unsupported: `changed_number`, `reversed_finding`, `negation` (contradicted); `swapped_name`, `overclaim`,
  `added_cause`, `unrelated` (a close sentence of another abstract) (not enough information).
Deterministic: one seeded random generator, abstracts in file order.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.corpus.loaders import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT / "eval" / "datasets"
SCIFACT_CORPUS = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
PUBMEDQA_CORPUS = DATASETS / "pubmedqa" / "corpus.jsonl"
HELDOUT_SHARE = 0.2  # of abstracts, by the hash of their id: fixed before any training
SUPPORT, CONTRADICT, NEI = "SUPPORT", "CONTRADICT", "NEI"


@dataclass(frozen=True)
class AnswerPair:
    doc_id: str
    premise: str  # the sentence(s) of the abstract the claim restates
    claim: str
    label: str  # SUPPORT, CONTRADICT or NEI
    kind: str


def split_of(doc_id: str) -> str:
    digest = int(hashlib.sha256(doc_id.encode()).hexdigest()[:8], 16)
    return "heldout" if digest / 0xFFFFFFFF < HELDOUT_SHARE else "train"


def excluded_docs() -> set[str]:
    """Every abstract an evaluation set cites (the PubMedQA and SciFact question and claim sets, dev and held-out):
    generating from them would score the verifier on what it was trained on."""
    docs: set[str] = set()
    for path in [*DATASETS.glob("pubmedqa*/*.jsonl"), *DATASETS.glob("scifact*/*.jsonl")]:
        if path.name == "corpus.jsonl":
            continue
        for row in read_jsonl(path):
            docs.update(row.get("gold") or [])
            docs.update(row.get("cited_doc_ids") or [])
            if row.get("doc_id"):
                docs.add(row["doc_id"])
    return docs


def abstracts(skip: set[str]) -> dict[str, list[str]]:
    """doc id -> sentences of 6 to 60 words, for the shared corpora's abstracts not in `skip`."""
    from rag.sentences import sentence_spans

    found = {d["doc_id"]: d["sentences"] for d in read_jsonl(SCIFACT_CORPUS) if d["doc_id"] not in skip}
    for d in read_jsonl(PUBMEDQA_CORPUS):
        if d["doc_id"] not in skip:
            found[d["doc_id"]] = [d["abstract"][a:b] for a, b in sentence_spans(d["abstract"])]
    kept = {doc: [s.strip() for s in ss if 6 <= len(s.split()) <= 60] for doc, ss in found.items()}
    return {doc: ss for doc, ss in kept.items() if len(ss) >= 3}


# ----- faithful rewrites -----------------------------------------------------------------------------------------
LEAD_IN = re.compile(
    r"^((in|from) (this|the present|our|the current) (study|paper|work|trial|analysis|cohort|series)[^,]{0,40},\s*|"
    r"we (also )?(found|find|show|showed|shown|report|demonstrate|demonstrated|observed|conclude|concluded) that\s*|"
    r"our (results|findings|data) (show|showed|suggest|indicate|demonstrate)d? that\s*|"
    r"(these|the|our) (results|findings|data) (also )?(show|showed|suggest|indicate|demonstrate)d? that\s*|"
    r"(results|conclusions?|findings|background|objective|methods?)\s*:\s*|"
    r"(here|however|nevertheless|in contrast|furthermore|moreover|in addition|finally|overall|thus|therefore|"
    r"in conclusion|in summary|taken together|similarly|importantly|\w+ly),\s*)",
    re.IGNORECASE,
)
HEADING = re.compile(r"^[A-Z]{4,}( [A-Z]{4,})?:?\s+(?=[A-Z])")  # "RESULTS Amplification of ..."
STATISTICS = re.compile(r"\s+[(\[][^()\[\]]*(\d|p\s*[<=>]|CI|OR|HR|RR)[^()\[\]]*[)\]]")
PLAIN_WORDS = [
    ("demonstrated", "showed"), ("revealed", "showed"), ("exhibited", "showed"), ("utilized", "used"),
    ("utilised", "used"), ("approximately", "about"), ("individuals", "people"), ("subjects", "participants"),
    ("in comparison with", "compared with"), ("compared to", "compared with"), ("prior to", "before"),
    ("in order to", "to"), ("the majority of", "most"), ("a total of ", ""), ("frequently", "often"),
    ("numerous", "many"), ("was observed", "was seen"), ("were observed", "were seen"), ("investigated", "studied"),
    ("evaluated", "assessed"), ("identified", "found"), ("therefore", "thus"), ("due to", "because of"),
    ("rapidly", "quickly"), ("commonly", "often"), ("markedly", "substantially"), ("regarding", "about"),
]  # fmt: skip
FRAMES = [
    "{}", "{}", "{}", "The study found that {}", "The authors report that {}", "The results showed that {}",
    "The study reports that {}", "According to the study, {}", "The authors found that {}",
]  # fmt: skip


def lower_first(text: str) -> str:
    """The sentence's first letter in lower case, unless the first word is an acronym or a name with capitals."""
    first = text.split(" ", 1)[0]
    kept = sum(c.isupper() for c in first) > 1 or any(c.isdigit() for c in first)
    return text if kept else text[:1].lower() + text[1:]


def tidy(text: str) -> str:
    text = re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s{2,}", " ", text)).strip().rstrip(".;,: ")
    return text[:1].upper() + text[1:] + "."


def plain(sentence: str, rng: random.Random, statistics: bool = False, frame: bool = True) -> str:
    """The sentence as an answer restates it: no lead-in, statistics in brackets dropped (unless `statistics`),
    some words plainer, the authors for "we", sometimes a reporting frame."""
    text = LEAD_IN.sub("", LEAD_IN.sub("", HEADING.sub("", sentence.strip())))
    text = re.sub(r"^we\b", "the authors", text, flags=re.IGNORECASE)
    if not statistics:
        text = STATISTICS.sub("", text)
    for word, simpler in PLAIN_WORDS:
        if rng.random() < 0.7:
            text = re.sub(rf"\b{word}\b", simpler, text, flags=re.IGNORECASE)
    body = tidy(text).rstrip(".")
    chosen = rng.choice(FRAMES) if frame else "{}"
    return tidy(chosen.format(lower_first(body) if chosen != "{}" else body))


def main_clause(sentence: str, rng: random.Random) -> str:
    """The plain sentence up to its first semicolon or subordinate "which/whereas/although" clause."""
    text = plain(sentence, rng, frame=False).rstrip(".")
    return re.split(r";|, (?:which|whereas|although|while)\b", text)[0].strip()


def synthesis(first: str, second: str, rng: random.Random) -> str:
    a, b = main_clause(first, rng), main_clause(second, rng)
    joint = rng.choice([", and ", "; ", ", and the authors also found that ", ", and "])
    return tidy(rng.choice(FRAMES).format(lower_first(a) + joint + lower_first(b)))


# ----- unsupported rewrites --------------------------------------------------------------------------------------
NUMBER_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty"]
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def change_number(text: str, rng: random.Random) -> str | None:
    words = [m for m in re.finditer(rf"\b({'|'.join(NUMBER_WORDS)})\b", text, re.I)]
    digits = [m for m in NUMBER.finditer(text) if not 1900 <= float(m.group()) <= 2030]
    if not words and not digits:
        return None
    if words and (not digits or rng.random() < 0.3):
        m = rng.choice(words)
        other = rng.choice([w for w in NUMBER_WORDS if w != m.group().lower()])
        return text[: m.start()] + other + text[m.end() :]
    m = rng.choice(digits)
    value = float(m.group())
    new = value * rng.choice([0.5, 1.5, 2, 3]) + rng.choice([1, 2, 5])
    shown = f"{new:.{len(m.group().split('.')[1])}f}" if "." in m.group() else str(int(new))
    return None if shown == m.group() else text[: m.start()] + shown + text[m.end() :]


OPPOSITES = [
    ("increased", "decreased"), ("increase", "decrease"), ("increases", "decreases"), ("higher", "lower"),
    ("more", "fewer"), ("improved", "worsened"), ("improves", "worsens"), ("better", "worse"), ("reduced", "raised"),
    ("reduces", "raises"), ("positive", "negative"), ("positively", "negatively"), ("greater", "smaller"),
    ("larger", "smaller"), ("enhanced", "impaired"), ("enhances", "impairs"), ("promotes", "inhibits"),
    ("promoted", "inhibited"), ("faster", "slower"), ("above", "below"), ("gain", "loss"), ("longer", "shorter"),
    ("up-regulated", "down-regulated"), ("upregulated", "downregulated"), ("similar", "different"),
    ("effective", "ineffective"), ("safe", "unsafe"), ("earlier", "later"), ("superior", "inferior"),
    ("benefit", "harm"), ("risk factor", "protective factor"), ("activates", "suppresses"), ("induced", "prevented"),
]  # fmt: skip


def swap_words(text: str, pairs: list[tuple[str, str]], rng: random.Random) -> str | None:
    """The text with one word of a pair it holds (either way round, chosen at random) replaced by the other."""
    options = [(a, b) for a, b in pairs if re.search(rf"\b{a}\b", text, re.I)]
    options += [(b, a) for a, b in pairs if re.search(rf"\b{b}\b", text, re.I)]
    if not options:
        return None
    a, b = rng.choice(options)
    return re.sub(rf"\b{re.escape(a)}\b", b, text, count=1, flags=re.I)


def reverse_finding(text: str, rng: random.Random) -> str | None:
    return swap_words(text, OPPOSITES, rng)


NEGATION_REMOVED = [
    (r"\bno significant\b", "a significant"), (r"\bnot significantly\b", "significantly"), (r"\bdid not\b", "did"),
    (r"\bdoes not\b", "does"), (r"\bwas not\b", "was"), (r"\bwere not\b", "were"), (r"\bis not\b", "is"),
    (r"\bare not\b", "are"), (r"\bfailed to\b", "managed to"), (r"\bcannot\b", "can"), (r"\bno\b", "a"),
]  # fmt: skip
NEGATION_ADDED = [
    (r"\bwas\b", "was not"), (r"\bwere\b", "were not"), (r"\bis\b", "is not"), (r"\bare\b", "are not"),
    (r"\bsignificantly\b", "not significantly"), (r"\bcan\b", "cannot"), (r"\bshowed\b", "failed to show"),
    (r"\bimproved\b", "did not improve"), (r"\breduced\b", "did not reduce"), (r"\bincreased\b", "did not increase"),
    (r"\bwas associated with\b", "was not associated with"), (r"\bpredicts\b", "does not predict"),
]  # fmt: skip


def negate(text: str, rng: random.Random) -> str | None:
    removals = [(p, r) for p, r in NEGATION_REMOVED if re.search(p, text)]
    for pattern, replacement in removals[:1] or rng.sample(NEGATION_ADDED, len(NEGATION_ADDED)):
        if re.search(pattern, text):
            return tidy(re.sub(pattern, replacement, text, count=1))
    return None


NAMED = re.compile(r"\b[A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*\b")


def swap_name(text: str, names: list[str], rng: random.Random) -> str | None:
    found = [m for m in NAMED.finditer(text) if len(m.group()) > 1 and m.start() > 0]
    if not found:
        return None
    m = rng.choice(found)
    other = rng.choice(names)
    return None if other.lower() == m.group().lower() else text[: m.start()] + other + text[m.end() :]


HEDGES = [
    (r"\bmay\b", "will"), (r"\bmight\b", "will"), (r"\bcould\b", "will"), (r"\bsuggests?\b", "proves"),
    (r"\bwas associated with\b", "caused"), (r"\bwere associated with\b", "caused"),
    (r"\bis associated with\b", "causes"), (r"\bare associated with\b", "cause"), (r"\bpossibly\b", "certainly"),
    (r"\bpotential\b", "proven"),
]  # fmt: skip
SCOPES = [
    (r"\bpatients\b", "all patients"), (r"\bchildren\b", "all children"), (r"\bwomen\b", "all women"),
    (r"\bmen\b", "all men"), (r"\bcells\b", "all cells"),
]  # fmt: skip
SUFFIXES = [
    ", in every patient group studied", ", regardless of age or sex", ", and this holds in all populations",
    ", the first such finding in the literature", ", making it the best available option",
    ", which settles the question definitively",
]  # fmt: skip


def overclaim(text: str, rng: random.Random) -> str | None:
    hedges = [(p, r) for p, r in HEDGES if re.search(p, text)]
    if hedges and rng.random() < 0.6:
        pattern, replacement = rng.choice(hedges)
        return re.sub(pattern, replacement, text, count=1)
    scopes = [(p, r) for p, r in SCOPES if re.search(p, text) and not re.search(r"\ball\b", text)]
    if scopes and rng.random() < 0.5:
        pattern, replacement = rng.choice(scopes)
        return re.sub(pattern, replacement, text, count=1)
    return tidy(text.rstrip(".") + rng.choice(SUFFIXES))


def added_cause(text: str, other: str, rng: random.Random) -> str:
    """The claim with a link to another finding of the same abstract that the abstract never draws."""
    link = rng.choice([", because ", ", which is explained by the fact that ", ", as a result of the fact that "])
    return tidy(text.rstrip(".") + link + lower_first(main_clause(other, rng)))


# ----- the pairs -------------------------------------------------------------------------------------------------
Unsupported = Callable[[str, random.Random], "str | None"]
UNSUPPORTED: list[tuple[str, str, Unsupported]] = [
    ("changed_number", CONTRADICT, change_number),
    ("reversed_finding", CONTRADICT, reverse_finding),
    ("negation", CONTRADICT, negate),
    ("overclaim", NEI, overclaim),
]


def pairs_for(
    doc: str, sentences: list[str], names: list[str], near: Callable[[str], tuple[str, str]], rng: random.Random
):  # type: ignore[no-untyped-def]
    """Two pairs from one abstract: one faithful, one unsupported, each of a randomly chosen kind that applies."""
    i = rng.randrange(len(sentences))
    sentence = sentences[i]
    numbered = [s for s in sentences if NUMBER.search(s)]
    faithful = rng.choice(["paraphrase", "result", "synthesis"])
    if faithful == "result" and numbered:
        sentence = rng.choice(numbered)
        yield AnswerPair(doc, sentence, plain(sentence, rng, statistics=rng.random() < 0.5), SUPPORT, "result")
    elif faithful == "synthesis":
        j = rng.choice([k for k in range(len(sentences)) if k != i])
        first, second = sorted((i, j))
        premise = f"{sentences[first]} {sentences[second]}"
        yield AnswerPair(doc, premise, synthesis(sentences[first], sentences[second], rng), SUPPORT, "synthesis")
    else:
        yield AnswerPair(doc, sentence, plain(sentence, rng), SUPPORT, "paraphrase")
    restated = plain(sentence, rng, statistics=rng.random() < 0.3)
    kind = rng.choice(["changed_number", "reversed_finding", "negation", "overclaim", "swapped_name", "added_cause",
                       "unrelated"])  # fmt: skip
    if kind == "swapped_name":
        claim = swap_name(restated, names, rng)
        if claim:
            yield AnswerPair(doc, sentence, claim, NEI, kind)
            return
    if kind == "added_cause":
        other = sentences[(i + rng.randrange(1, len(sentences))) % len(sentences)]
        yield AnswerPair(doc, sentence, added_cause(restated, other, rng), NEI, kind)
        return
    if kind == "unrelated":  # cited to the other abstract
        other_doc, premise = near(restated)
        if other_doc != doc:
            yield AnswerPair(other_doc, premise, restated, NEI, kind)
        return
    for name, label, rewrite in rng.sample(UNSUPPORTED, len(UNSUPPORTED)):
        if name == kind or kind == "swapped_name":
            claim = rewrite(restated, rng)
            if claim and claim != restated:
                yield AnswerPair(doc, sentence, claim, label, name)
                return


def scifact_trained_docs() -> set[str]:
    """The abstracts the SciFact train claims cite: the verifier trains on their sentences, so they are never held
    out."""
    return {d for c in read_jsonl(SCIFACT_CORPUS.with_name("train_claims.jsonl")) for d in c["cited_doc_ids"]}


def training_abstracts() -> dict[str, list[str]]:
    """The abstracts the verifier may train on: no evaluation set's, and none of the held-out split."""
    trained = scifact_trained_docs()
    return {d: ss for d, ss in abstracts(excluded_docs()).items() if d in trained or split_of(d) == "train"}


def answer_pairs(split: str, seed: int = 13) -> list[AnswerPair]:
    """The pairs of one split ("train" or "heldout"), two per abstract of that split."""
    rng = random.Random(seed)
    everything = abstracts(excluded_docs())
    train = training_abstracts()
    docs = [d for d in everything if (d in train) == (split == "train")]
    found = (m.group() for d in docs[:1500] for s in everything[d] for m in NAMED.finditer(s))
    names = sorted({name for name in found if len(name) > 2})
    pool = [(d, s) for d in docs for s in everything[d]]

    def near(claim: str) -> tuple[str, str]:
        """(doc id, sentence): the sentence closest in words to the claim among 200 of other abstracts (topical,
        but not evidence)."""
        words = set(re.findall(r"[a-z]{4,}", claim.lower()))
        sample = rng.sample(pool, min(200, len(pool)))
        return max(sample, key=lambda ds: len(words & set(re.findall(r"[a-z]{4,}", ds[1].lower()))))

    pairs: list[AnswerPair] = []
    for doc in docs:
        pairs.extend(pairs_for(doc, everything[doc], names, near, rng))
    return pairs


def as_claim(pair: AnswerPair, number: int) -> dict:
    """A pair in the claims format of `rag verify --claims` and benchmarks/verifier_quality.py."""
    gold = [pair.doc_id] if pair.label == SUPPORT else []
    return {"id": f"ap-{number:05d}", "question": pair.claim, "doc_id": pair.doc_id, "label": pair.label,
            "kind": pair.kind, "gold": gold, "answerable": bool(gold), "premise": pair.premise}  # fmt: skip


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Write the answer-style pairs of both splits as claims files.")
    parser.add_argument("--out", type=Path, default=DATASETS / "answer_pairs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "heldout"):
        rows = [as_claim(p, n) for n, p in enumerate(answer_pairs(split))]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (args.out / f"{split}.jsonl").write_text(text)
        print(f"{split}: {len(rows)} pairs -> {args.out / f'{split}.jsonl'}")


if __name__ == "__main__":
    main()
