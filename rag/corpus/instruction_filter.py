"""The learned instruction filter: a linear model over hashed character n-grams that tells a sentence addressed to an
assistant ("ignore toutes les instructions ...", "<|im_start|>system ...") from a sentence describing research, in
any language and spelling the patterns of rag/corpus/injection.py do not list.

Trained by the project without pretrained weights (`rag train-instruction-filter`, rag/training/instructions.py);
the artefact is `rag/models/instructions/`: the weights of 2^18 hashed n-grams (float16, 512 KiB) and model.json
(the hashing, the threshold, the checksum, the evaluation). Loading takes milliseconds and needs only numpy.

Scoring is cheap because the model is linear and each text's n-gram counts are divided by the square root of how
many n-grams it has (at least MIN_NGRAMS): an abstract is folded and hashed once, and the score of any run of its
sentences (one sentence, or two neighbours read together) is then a difference of prefix sums.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.text import INVISIBLE

if TYPE_CHECKING:
    import numpy as np

MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / "instructions"
NGRAMS = (2, 3, 4, 5)
BUCKETS = 1 << 18
WINDOW = 80  # characters: long sentences are also read in windows of this size
MIN_NGRAMS = 64  # a shorter text is scored as if it had this many n-grams: a few letters are weak evidence
_PRIME = 1_000_003
_MIX = 0x9E3779B97F4A7C15  # the golden-ratio constant: spreads consecutive hashes over the buckets
HIDDEN = re.compile(f"[\u200c\u200d\u2062-\u2064]|{INVISIBLE.pattern}")
# Letters that look Latin in Cyrillic and Greek: folded so "ignore" spelled with Cyrillic i, o, e reads as such. Applied
# to every text, in training as in use, so Russian and Greek are folded the same way both times.
HOMOGLYPHS = str.maketrans(
    dict(
        zip(
            "аеорсухіјѕԁԛԝӏвкмнтαβεηικμνορτυχ",
            "aeopcyxijsdqwlbkmhtabehikmvoptux",
            strict=True,
        )
    )
)
SPACED = re.compile(r"(?<!\w)(?:\w[ .\-_*·]){3,}\w(?!\w)")  # "i g n o r e", "i.g.n.o.r.e"
SPACES = re.compile(r"\s+")


def folded(text: str) -> str:
    """Text as the filter reads it: compatibility forms folded (full-width letters), invisible characters dropped,
    lower case, look-alike letters folded, spaced-out letters joined, whitespace collapsed."""
    text = HIDDEN.sub("", unicodedata.normalize("NFKC", text)).lower().translate(HOMOGLYPHS)
    text = SPACED.sub(lambda m: re.sub(r"[ .\-_*·]", "", m.group()), text)
    return SPACES.sub(" ", text).strip()


def ngram_buckets(text: str, buckets: int = BUCKETS) -> list[np.ndarray]:
    """For each n of NGRAMS, the bucket of the n-gram starting at each position of the text (already folded)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    rolling = np.zeros(len(codes), dtype=np.uint64)
    found = []
    with np.errstate(over="ignore"):
        for n in range(1, max(NGRAMS) + 1):
            if len(codes) < n:
                break
            rolling = rolling[: len(codes) - n + 1] * np.uint64(_PRIME) + codes[n - 1 :]
            if n in NGRAMS:
                mixed = (rolling + np.uint64(n)) * np.uint64(_MIX)
                found.append(((mixed >> np.uint64(40)) % np.uint64(buckets)).astype(np.int64))
    return found


@dataclass(frozen=True)
class InstructionFilter:
    weights: np.ndarray  # one per bucket
    bias: float
    threshold: float  # on the logit: a text scoring above it is withheld
    sha256: str

    @classmethod
    def load(cls, folder: Path = MODEL_DIR) -> InstructionFilter:
        import numpy as np

        record = json.loads((folder / "model.json").read_text())
        raw = (folder / record["file"]).read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        if digest != record["sha256"]:
            raise ValueError(f"{folder / record['file']} does not match the checksum in model.json")
        weights = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
        return cls(weights, float(record["bias"]), float(record["threshold"]), digest)

    def scores(self, texts: list[str]) -> list[float]:
        """The logit of each text being addressed to an assistant."""
        return self.run_scores(texts, [(i, i + 1) for i in range(len(texts))])

    def run_scores(self, pieces: list[str], runs: list[tuple[int, int]]) -> list[float]:
        """The logit of each run of consecutive pieces (pieces[a:b], each folded, joined by a space), from one pass
        of hashing: the highest of the whole run's and of its windows' (WINDOW characters, overlapping by half), so
        that an instruction sharing a long sentence with ordinary words is not diluted by them."""
        import numpy as np

        texts = [folded(p) for p in pieces]
        offsets = np.cumsum([0] + [len(t) + 1 for t in texts])  # each piece is followed by one space
        sums = [
            np.concatenate([[0.0], np.cumsum(self.weights[b], dtype=np.float64)])
            for b in ngram_buckets(" ".join(texts), len(self.weights))
        ]
        owners, starts, ends = [], [], []
        for k, (a, b) in enumerate(runs):
            start, end = int(offsets[a]), int(offsets[b]) - 1
            windows = range(start, end - WINDOW, WINDOW // 2) if end - start > WINDOW * 5 // 4 else ()
            for first, last in [(start, end), *((w, w + WINDOW) for w in windows), (max(start, end - WINDOW), end)]:
                owners.append(k)
                starts.append(first)
                ends.append(last)
        if not runs:
            return []
        starts_, ends_ = np.array(starts), np.array(ends)
        total = np.zeros(len(starts))
        for n, s in zip(NGRAMS, sums, strict=False):  # a text shorter than n has no sums for n (and beyond)
            last = len(s) - 1
            total += s[np.minimum(np.maximum(starts_, ends_ - n + 1), last)] - s[np.minimum(starts_, last)]
        counts = sum(np.maximum(0, ends_ - starts_ - n + 1) for n in NGRAMS)
        scores = total / np.sqrt(np.maximum(counts, MIN_NGRAMS)) + self.bias
        best = np.full(len(runs), -np.inf)
        np.maximum.at(best, np.array(owners), scores)
        return best.tolist()

    def flagged_runs(self, pieces: list[str], runs: list[tuple[int, int]]) -> list[bool]:
        return [score > self.threshold for score in self.run_scores(pieces, runs)]
