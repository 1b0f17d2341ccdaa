"""Exact checks: what capable models get wrong when they restate an abstract, checked word for word before any
judge reads the claim. Each looks at the claim against the abstract's sentences it rests on (the evidence: its
closest sentences) or, for words that must simply occur, against the whole abstract:

- numbers with their units: "3.7" where the evidence says "4.7", "by 2%" where it says "2x", "3 Hz" where it
  says "5 Hz" (a small number with a unit is a measurement, not a count, and is looked for with its unit);
- named methods, datasets and models (SAM, CIFAR-10, GPT-4) that the abstract never names;
- negation: "does not" / "no significant" on one side only;
- direction: "reduces" where the evidence only says "increases", or says "increases" of the same thing while it says
  something else decreased;
- hedging: a definite claim where the evidence says "may" or "suggests";
- scope: "all", "always", "the first", "state of the art", "outperforms every", and certainty ("proven",
  "established as", "reliably") that the abstract never claims in any form of the word;
- added causes: "because", "due to", "leads to" where the abstract gives no cause.

An objection settles the claim without the judge: not supported. It says "contradicted" only for the kinds whose
calls were right at least 9 times in 10 on held-out labelled claims (`CONTRADICTING_KINDS`,
benchmarks/verifier_quality.py --checks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

CheckKind = Literal["number", "name", "negation", "direction", "hedge", "scope", "cause"]
CONTRADICTING_KINDS: frozenset[CheckKind] = frozenset()  # none reached 0.9 precision on held-out claims


@dataclass(frozen=True)
class Objection:
    kind: CheckKind
    detail: str  # for readers: what the claim says that its evidence does not

    @property
    def contradicts(self) -> bool:
        return self.kind in CONTRADICTING_KINDS


# ----- numbers and names -------------------------------------------------------------------------------------------
# a number standing alone, or after a minus sign that follows a space or a bracket ("a change of -5 mmHg"); not
# the "10" of "CIFAR-10" or "5-10" (names and ranges)
NUMBER = re.compile(r"(?:(?<![\w.-])|(?<=[\s(\[=:][-]))\d+(?:[.,]\d+)*")
TOKEN = re.compile(r"(?<![\w.])[A-Za-z0-9][\w-]*[\w]|(?<![\w.])[A-Z]")
PLAIN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:%|x|-?fold|s)?", re.I)
NUMBER_WORDS = {"1", "2", "3"}  # small counts are often paraphrased ("two", "three"); not checked
MEASURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%|percent\b|-?fold\b|x\b|\u00d7|times\b)", re.I)
UNITS = {"%": "%", "percent": "%", "fold": "x", "-fold": "x", "x": "x", "\u00d7": "x", "times": "x"}


SPELLED = {
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
}  # fmt: skip, counts written as words: "eight patients" is checked like "8 patients"
SPELLED_NUMBER = re.compile(r"\b(?:" + "|".join(SPELLED) + r")\b", re.I)
SMALL = {"one": "1", "two": "2", "three": "3"}
DIGITS = {digit: word for word, digit in (SPELLED | SMALL).items()}
# a small number with a unit is a measurement, not a count: "3 Hz", "2 mg", "2-fold" are checked, with the unit
SMALL_MEASURE = re.compile(
    r"(?<![\w.-])([123])\s*-?\s*(%|(?:fold|x|times|hz|kg|mg|ng|ug|\u00b5g|ml|mm|cm|m?mol|iu|kda|kb|mb"
    r"|min(?:ute)?s?|hours?|days?|weeks?|months?|years?)\b)"
)
# a number with a scale word is looked for with it: "$5 billion" is not given by "$750 million ... for 5 years"
SCALED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*-?\s*(thousand|million|billion|trillion)\b", re.I)
PER_CENT = re.compile(r"\s*\bper\s?cent\b")  # "3 percent", "3 per cent": read as "3%" on both sides


def unit_forms(unit: str) -> str:
    """How an abstract may write the unit: a ratio as -fold, x or times, an hour as h or hr, other times in any
    length ("min", "minutes"); any other unit as the claim writes it."""
    if unit in ("fold", "x", "times"):
        return r"(?:-?fold|x|times)\b"
    if unit.startswith("hour"):
        return r"(?:h|hrs?|hours?)\b"
    if unit.startswith(("min", "day", "week", "month", "year")):
        return re.escape(unit[:3]) + r"\w*"
    return re.escape(unit) + ("" if unit == "%" else r"\b")


def small_measures_missing(claim: str, abstract: str) -> list[str]:
    """The claim's small measurements ("3 Hz", "2-fold", "2 minutes") that the abstract never gives with that unit,
    in digits or in words ("three-fold", "threefold", "2 min")."""
    haystack = PER_CENT.sub("%", as_written(abstract))
    missing = []
    for m in SMALL_MEASURE.finditer(PER_CENT.sub("%", claim.lower())):
        number, unit = m.group(1), m.group(2)
        if not given_with(number, unit_forms(unit), haystack):
            missing.append(m.group(0))
    return missing


def scales_missing(claim: str, abstract: str) -> list[str]:
    """The claim's numbers with a scale word ("5 billion") that the abstract never gives with that word, in digits
    or in words ("five billion", "a 5-billion budget")."""
    haystack = as_written(abstract)
    return [m.group(0) for m in SCALED.finditer(as_written(claim)) if not given_with(m[1], m[2] + r"\b", haystack)]


def given_with(number: str, unit: str, haystack: str) -> bool:
    """Whether `haystack` gives `number`, in digits or as its word, followed by `unit` (a pattern): "3 Hz",
    "three-fold", "a 5-billion budget"."""
    forms = re.escape(number) + (f"|{DIGITS[number]}" if number in DIGITS else "")
    return re.search(rf"(?<![\w.])(?:{forms})\s*-?\s*{unit}", haystack) is not None


def lexical_gaps(claim: str, abstract: str) -> list[str]:
    """Numbers (in digits or words) and named terms of the claim that the abstract does not contain (an acronym
    counts as contained when the abstract spells it out: IVF, in vitro fertilization; a number, when the abstract
    writes it the other way: eight, 8)."""
    haystack = as_written(abstract)
    numbers = set(checked_numbers(as_written(claim))) | set(SPELLED_NUMBER.findall(single_number_words(claim)))
    names = {t for t in TOKEN.findall(claim) if is_name(t)} | proper_nouns(claim)
    missing = {n for n in numbers if not mentions_number(n, haystack)}
    return sorted(missing | {t for t in names if not named_in(t, haystack)})


# "20 885", "20,885", "322 246": one number; not "2019 246" (a year, then a count)
GROUPED_DIGITS = re.compile(r"(?<![\d.,])\d{1,3}(?:[,\u2009\u202f ]\d{3})+(?![\d.,]\d)")
BARE_DECIMAL = re.compile(r"(?<![\w.])\.(\d)")  # ".5" is "0.5"
SUPERSCRIPT = re.compile(r"(?<=[a-z])\((\d)\)")  # "kg/m(2)": kg/m2
GREEK = {"\u03b1": "alpha", "\u03b2": "beta", "\u03b3": "gamma", "\u03b4": "delta", "\u03ba": "kappa", "\u03bc": "mu"}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
UNIT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16}
TEENS |= {"seventeen": 17, "eighteen": 18, "nineteen": 19}
NUMBER_WORD_VALUES = TENS | UNIT_WORDS | TEENS | {"hundred": 100, "thousand": 1000}
BELOW_HUNDRED = rf"(?:(?:{'|'.join(TENS)})(?:[- ](?:{'|'.join(UNIT_WORDS)}))?|{'|'.join(TEENS)}|{'|'.join(UNIT_WORDS)})"
BELOW_THOUSAND = rf"(?:(?:{'|'.join(UNIT_WORDS)})[- ]hundred(?:[- ](?:and[- ])?{BELOW_HUNDRED})?|{BELOW_HUNDRED})"
# "seventy-six", "one hundred twenty-five", "two hundred and seven", "one thousand one", "seventeen"; not the
# "sixty" of "sixty-first" or "sixty-year"; "one hundred and two hundred" is two numbers, not 102
NUMBER_IN_WORDS = re.compile(
    rf"(?<![\w-]){BELOW_THOUSAND}(?:[- ]thousand(?:[- ](?:and[- ])?{BELOW_THOUSAND})?)?"
    r"\b(?!-)(?![- ](?:hundred|thousand)\b)",
    re.I,
)


def number_value(words: str) -> int:
    """The value of a number written in words ("two hundred and seven": 207)."""
    total = current = 0
    for word in re.split(r"[- ]", words):
        if word == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word != "and":
            current += NUMBER_WORD_VALUES[word]
    return total + current


def digits_beside(match: re.Match[str]) -> str:
    """A number in words with its digits after it, unless it is one word the checks already read ("eight")."""
    words = match.group(0)
    if words.lower() in SPELLED or words.lower() in SMALL:
        return words
    return f"{words} {number_value(words.lower())}"  # "fifty-five 55 million": the number beside its unit


def single_number_words(text: str) -> str:
    """The text without its numbers of several words ("fifteen thousand", "forty five"): `as_written` gives their
    digits, so their words are not looked for one by one."""
    return NUMBER_IN_WORDS.sub(lambda m: m.group(0) if " " not in m[0] and "-" not in m[0] else " ", text)


def joined_digits(text: str) -> str:
    """Digits grouped by commas or thin spaces written as one number."""
    return GROUPED_DIGITS.sub(lambda m: re.sub(r"\D", "", m.group(0)), text)


@lru_cache(maxsize=256)  # every check of every sentence of an answer reads the same abstracts this way
def as_written(text: str) -> str:
    """The text lower-cased, as the checks search it: digits grouped by commas or spaces joined, "m(2)" as "m2",
    Greek letters by name, ".5" as "0.5", and numbers in words with their digits after them ("one hundred and
    fifty-one 151")."""
    text = SUPERSCRIPT.sub(r"\1", joined_digits(BARE_DECIMAL.sub(r"0.\1", text.lower())))
    for letter, name in GREEK.items():
        text = text.replace(letter, name)
    return NUMBER_IN_WORDS.sub(digits_beside, text)


def compact(text: str) -> str:
    """Without hyphens and brackets: "SCF-FBW7" is "SCFFBW7", "LXA(4)" is "LXA4"."""
    return re.sub(r"[()\[\]-]", "", text)


CONNECTOR_WORDS = ("and", "of", "the", "for", "in", "on", "to", "with")
NAME_CONNECTORS = rf"(?:(?:{'|'.join(CONNECTOR_WORDS)})[\s-]+)?"  # "DHS": Demographic and Health Survey
WORD_GAP = re.compile(r"[\s-]+" + NAME_CONNECTORS)  # what may stand between the words that spell an abbreviation


def named_in(name: str, haystack: str) -> bool:
    """Whether the abstract (`as_written`) names it: as written, or without hyphens and brackets, in the singular
    ("TCRs"), spelled out (an acronym), or, for a name or number joined to plain words ("CT-measured",
    "5-minute"), the name itself with those words' stems anywhere."""
    lowered = as_written(name)
    if lowered in haystack or compact(lowered) in compact(haystack) or spelled_out(name, haystack):
        return True
    if name[-1] == "s" and name[-2:-1].isupper():
        return named_in(name[:-1], haystack)
    head, *rest = name.split("-")
    if not rest or not all(part.isalpha() and part.islower() and len(part) >= 4 for part in rest):
        return False
    found_head = mentions_number(head, haystack) if NUMBER.fullmatch(head) else named_in(head, haystack)
    return found_head and all(part[:STEM] in haystack for part in rest)


STEM = 3  # letters of a joined word that must occur: "5-minute" where the abstract says "5-min"


def checked_numbers(text: str) -> list[str]:
    """The numbers in digits that the checks hold a claim to, in order (small counts left out), without the commas
    that group their digits."""
    return [n for n in NUMBER.findall(joined_digits(text)) if n not in NUMBER_WORDS]


def mentions_number(number: str, haystack: str) -> bool:
    """Whether the haystack (`as_written`) gives the number whole, in digits or as its word: "208" is not in
    "20885", "3.7" not in "3.75", "7" not in "FBW7"; "3.7" is in "3.70", "25" in "25.0"."""
    digits = SPELLED.get(number.lower(), number)
    word = DIGITS.get(digits)
    zeros = "0*" if "." in digits else r"(?:\.0+)?"
    whole = rf"(?<![\w.]){re.escape(digits)}{zeros}(?!\.?\d)"
    return bool(re.search(whole, haystack) or (word and re.search(rf"\b{word}\b", haystack)))


def is_number(token: str) -> bool:
    return bool(NUMBER.fullmatch(token)) or token.lower() in SPELLED


PROPER = re.compile(r"(?<=[a-z0-9,;(] )[A-Z][a-z]{2,}(?:[- ][A-Z][a-z]+)*(?!\d)")  # "Igf2" is a name, not "Igf"


def proper_nouns(claim: str) -> set[str]:
    """Capitalised words inside the sentence (Utrecht, Claude, Optuna, National Trauma Data Bank): names."""
    return {m.group(0).split()[0] for m in PROPER.finditer(claim)}


ABBREVIATION = re.compile(r"([A-Za-z]{2,6})-?(\d{0,3})")
SPELLING_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
WITHIN_WORD = 4  # with a number to anchor it, a word may give more letters from its first four: "deacetylase": "dac"
SHORT_LETTERS = 2  # an abbreviation of this many letters and a number is spelled out only with its number attached


def spelled_out(acronym: str, text: str) -> bool:
    """Whether consecutive words of the (lower-cased) text start with the acronym's letters in order, short words
    such as "and" or "of" between them aside; or, for an abbreviation with small letters or a number (HDAC1, Igf2,
    siRNA, SF-12), whether such words spell it (`abbreviates`), followed by its number: histone deacetylase 1,
    insulin-like growth factor 2, small interfering RNA, short form-12. Two letters and a number need the number
    attached ("form-12", "b6"), as "cycle day 8" is not CD8."""
    if acronym.isalpha() and acronym.isupper() and 2 <= len(acronym) <= 6:
        initials = r"\b" + (r"[a-z]*[\s-]+" + NAME_CONNECTORS).join(acronym.lower()) + r"[a-z]*"
        if re.search(initials, text):
            return True
    found = ABBREVIATION.fullmatch(acronym)
    if found is None or (sum(c.isupper() for c in acronym) < 2 and not found[2]):
        return False
    letters, number = found[1].lower(), found[2]
    after = r"-?" if len(letters) <= SHORT_LETTERS else r"[\s-]*\(?"
    words = spelling_words(text)
    for i in range(len(words)):
        if words[i][0][0] != letters[0]:  # a span of two or more words starts with the first letter
            continue
        span = [words[i]]
        for nxt in words[i + 1 : i + len(letters)]:
            if not WORD_GAP.fullmatch(text, span[-1].end(), nxt.start()):
                break
            span.append(nxt)
            if abbreviates(letters, [w[0] for w in span], within=bool(number)) and (
                not number or re.match(rf"{after}{number}\b", text[nxt.end() :])
            ):
                return True
    return False


@lru_cache(maxsize=64)
def spelling_words(text: str) -> list[re.Match[str]]:
    """The words of a text that may spell an abbreviation, connectors ("and", "of") left out."""
    return [w for w in SPELLING_WORD.finditer(text) if w[0] not in CONNECTOR_WORDS]


def abbreviates(letters: str, words: list[str], within: bool) -> bool:
    """Whether the words give exactly `letters` in order: each its first letter (and, `within`, more of its first
    WITHIN_WORD letters: "hdac", histone deacetylase), the last word perhaps whole ("sirna", small interfering
    rna)."""
    if not words:
        return not letters
    word = words[0]
    if len(words) == 1 and word == letters:
        return True
    if not letters or word[0] != letters[0]:
        return False
    if not within:
        return abbreviates(letters[1:], words[1:], within)
    rest = iter(word[1:WITHIN_WORD])
    for taken in range(1, len(letters) + 1):  # this word gives letters[:taken]
        if taken > 1 and letters[taken - 1] not in rest:
            return False
        if abbreviates(letters[taken:], words[1:], within):
            return True
    return False


def is_name(token: str) -> bool:
    """A named method, dataset or model: a word with a capital after its first letter or a digit (SAM, CIFAR-10,
    GPT-4, top-1), but not a plain number or measure (2x, 3.7%, 1990s)."""
    return bool(re.search(r"\d|.[A-Z]", token)) and not PLAIN_NUMBER.fullmatch(token)


def measures(text: str) -> set[tuple[str, str]]:
    """(number, unit) pairs: '2%' -> ('2', '%'), '3-fold' and '3x' -> ('3', 'x')."""
    return {(m.group(1), UNITS[m.group(2).lower()]) for m in MEASURE.finditer(text)}


def number_objection(claim: str, evidence: str, abstract: str) -> Objection | None:
    gaps = lexical_gaps(claim, abstract)
    if gaps:
        kind: CheckKind = "number" if any(is_number(g) for g in gaps) else "name"
        return Objection(kind, f"the abstract does not mention {', '.join(repr(g) for g in gaps)}")
    measured = small_measures_missing(claim, abstract) + scales_missing(claim, abstract)
    if measured:
        return Objection("number", f"the abstract does not give {', '.join(repr(m) for m in measured)}")
    wanted, stated = measures(claim), measures(abstract)
    for number, unit in sorted(wanted - stated):
        if (number, "x" if unit == "%" else "%") in stated:
            return Objection("number", f"the abstract gives {number} as {'a ratio' if unit == '%' else 'a percentage'}")
    numbers = checked_numbers(as_written(claim))
    if len(numbers) > 1 and not in_two_sentences(numbers, number_runs(abstract)):
        return Objection("number", f"no two sentences of the abstract give {', '.join(map(repr, numbers))} together")
    return None


def restates_numbers(claim: str, abstract: str) -> bool | None:
    """Whether the claim's two or more numbers (beyond small counts) are given in the same order by one sentence
    of the abstract, or two read in order: a result restated from where it is stated. None: fewer numbers."""
    numbers = checked_numbers(as_written(claim))
    if len(numbers) < 2:
        return None
    sentences = number_runs(abstract)
    pairs = [a + " " + b for i, a in enumerate(sentences) for b in sentences[i + 1 :]]
    return any(in_order(numbers, NUMBER.findall(text)) for text in sentences + pairs)


def number_runs(abstract: str) -> list[str]:
    """The abstract `as_written`, cut where the numbers' checks read it as sentences. It is lower-cased, so
    SENTENCE_END cuts it only before a number: runs of sentences that end where one starts with a number. Cutting at
    every sentence objected to 2 more faithful tuning claims (numbers from three sentences) and to no unsupported
    one, so it stays so."""
    return SENTENCE_END.split(as_written(abstract))


def in_order(wanted: list[str], given: list[str]) -> bool:
    """Whether `wanted` is a subsequence of `given`."""
    rest = iter(given)
    return all(number in rest for number in wanted)


def in_two_sentences(numbers: list[str], sentences: list[str]) -> bool:
    """Whether one or two of the sentences state all the numbers (a result is restated from where it is given)."""
    held = [{n for n in numbers if n in sentence} for sentence in sentences]
    wanted = set(numbers)
    return any(a | b == wanted for i, a in enumerate(held) for b in held[i:])


# ----- words that change what a sentence says ------------------------------------------------------------------------
def words(*forms: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(forms) + r")\b", re.I)


NEGATION = words(
    r"not", r"no", r"never", r"neither", r"nor", r"cannot", r"\w+n't", r"fail(?:s|ed|ing)? to", r"unable",
    r"non-?significant(?:ly)?", r"insignificant", r"none",
)  # fmt: skip
NEGATION_LIKE = words(
    r"without",
    r"lack(?:s|ed|ing)?",
    r"absence",
    r"absent",
    r"unaffected",
    r"unchanged",
    r"similar",
    r"comparable",
    r"independent(?:ly)? of",
    r"neither",
    r"rather than",
    r"instead",
    r"only",
)  # fmt: skip, what the evidence may say a negated claim with
UP = words(
    r"increas\w*", r"higher", r"more", r"improv\w*", r"greater", r"larger", r"rais\w*", r"ris(?:e|es|ing)", r"rose",
    r"boost\w*", r"enhanc\w*", r"gain\w*", r"outperform\w*", r"better", r"faster", r"elevat\w*", r"superior",
    r"exceed\w*", r"accelerat\w*", r"strengthen\w*", r"up-?regulat\w*", r"promot\w*", r"surpass\w*", r"beats?",
    r"highest", r"augment\w*",
)  # fmt: skip
DOWN = words(
    r"decreas\w*", r"lower", r"less", r"fewer", r"reduc\w*", r"smaller", r"declin\w*", r"drop\w*", r"fall\w*", r"fell",
    r"diminish\w*", r"worse", r"slower", r"underperform\w*", r"inferior", r"degrad\w*", r"worsen\w*", r"impair\w*",
    r"weaken\w*", r"down-?regulat\w*", r"suppress\w*", r"inhibit\w*", r"hurt\w*", r"harm\w*", r"lags?",
    r"lowest", r"slow(?:s|ed|ing)?", r"imped\w*", r"attenuat\w*", r"retard(?:s|ed|ing|ation)",
)  # fmt: skip
HEDGE = words(
    r"may", r"might", r"could", r"suggest\w*", r"possibl\w*", r"potential\w*", r"likely", r"appears?", r"seems?",
    r"hypothes\w*", r"preliminary", r"promising",
)  # fmt: skip
SCOPE_FORMS = (
    r"all", r"every", r"always", r"any", r"first", r"state[- ]of[- ]the[- ]art", r"best", r"universal\w*",
    r"entirely", r"completely", r"guarantee\w*", r"prov(?:e|es|ed|en)", r"cures?", r"definitive\w*",
    r"conclusive\w*", r"eliminat\w*", r"certain(?:ty|ly)", r"undoubtedly",
    r"never", r"unprecedented", r"optimal", r"perfect\w*", r"reliab\w*",
    r"establish(?:es|ing)?(?! (?:a|an)\b)", r"(?:has|have) been established", r"established (?:as|that)",
)  # fmt: skip
SCOPE = [words(form) for form in SCOPE_FORMS]  # each in any of its forms: "proven" where the abstract says "proved"
CAUSE = words(
    r"because", r"due to", r"caused by", r"owing to", r"as a result of", r"driven by", r"explained by",
    r"attributable to", r"thanks to", r"responsible for", r"therefore",
)  # fmt: skip
CAUSE_LIKE = words(
    r"caus\w*",
    r"lead(?:s|ing)? to",
    r"led to",
    r"result(?:s|ed|ing)? in",
    r"mechanis\w*",
    r"mediat\w*",
    r"induc\w*",
    r"contribut\w*",
    r"explain\w*",
    r"attribut\w*",
    r"because",
    r"due to",
    r"thus",
    r"hence",
    r"therefore",
    r"consequently",
)  # fmt: skip, words with which an abstract gives a cause


EVIDENCE_SENTENCES = 3  # the abstract sentences closest to a claim: what the checks (and the acceptor) read it against
# not after "v.", "vs.", "et al.", "Fig.", "e.g.", "No.": "sensitivity (68.7% v. 56.3%)" is one sentence
SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bv\.)(?<!\bvs\.)(?<!\bal\.)(?<!\b[Ff]ig\.)(?<!\b[Ff]igs\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"(?<!\b[Nn]o\.)\s+(?=[A-Z0-9])"
)
CONTENT = re.compile(r"[a-z][a-z0-9-]{3,}")


def cut_words(text: str) -> set[str]:
    """Words of four letters or more, cut to six letters ("MACEs" is "MACE")."""
    return {w[:6] for w in CONTENT.findall(text.lower())}


def anchor_words(text: str) -> set[str]:
    """The cut words and the numbers: what ties a claim's words to the sentence they restate."""
    return cut_words(text) | set(NUMBER.findall(text))


def closest_sentences(claim: str, evidence: str) -> list[str]:
    """The evidence sentences sharing the most words and numbers with the claim (several when they tie)."""
    wanted = anchor_words(claim)
    shared = [(len(wanted & anchor_words(s)), s) for s in SENTENCE_END.split(evidence)]
    most = max(n for n, _ in shared)
    return [s for n, s in shared if n == most]


def closest_sentence(claim: str, evidence: str) -> str:
    """The first of the closest sentences."""
    return closest_sentences(claim, evidence)[0]


CLAUSE_WORDS = r"while|whereas|but|although|and"  # also end a phrase (PHRASE_END)
CLAUSE_END = re.compile(rf"[,;:()]|\.(?!\d)|\b(?:{CLAUSE_WORDS})\b", re.I)


def negated(claim: str, match: re.Match[str]) -> str:
    """What a negation denies: the words after it, to the end of its clause ("no significant predictors of relapse
    were identified")."""
    rest = claim[match.end() :]
    end = CLAUSE_END.search(rest, 1)
    return claim[match.start() : match.end() + (end.start() if end else len(rest))]


def found(pattern: re.Pattern[str], text: str) -> set[str]:
    return {m.group(0).lower() for m in pattern.finditer(text)}


# "more than 6", "7 mm or more": a bound on a number, not a direction; "inhibitors", "promoter": things, not changes
BOUNDING = re.compile(r"more|less|fewer|greater|higher|lower|larger|smaller", re.I)
BOUND_AFTER = re.compile(r"\s+than\s+(?:\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|half)\b)", re.I)
BOUND_BEFORE = re.compile(r"\d[\w%.]*\s+(?:[a-z/]+\s+)?or\s+$", re.I)
THINGS = re.compile(r"(?:inhibit|suppress|promot|enhanc|boost|reduc|accelerat|elevat|rais|attenuat)(?:or|er)s?$", re.I)


def directions(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """The direction words of the text that state a change or a comparison: not a bound on a number ("more than
    6", "6 or fewer") nor a thing's name ("FAAH inhibitors", "gene promoter")."""
    return [
        m
        for m in pattern.finditer(text)
        if not (BOUNDING.fullmatch(m.group(0)) and is_bound(text, m)) and not THINGS.match(m.group(0))
    ]


def is_bound(text: str, match: re.Match[str]) -> bool:
    """Whether the comparative bounds a number ("more than 6", "6 or fewer", "7 mm or more")."""
    return bool(
        BOUND_AFTER.match(text, match.end()) or BOUND_BEFORE.search(text[max(0, match.start() - 24) : match.start()])
    )


# A change and what it is said of: "compound K decreases brown adipose tissue activity" against "compound K increased
# brown adipose tissue activity and decreased plasma triglycerides".
PHRASE_TOKEN = re.compile(r"[A-Za-z0-9][\w'-]*|[,;:()]")
PHRASE_END = re.compile(rf"[,;:()]|{CLAUSE_WORDS}|or|than|compared|versus|vs|with|in|of|for|among|at|by|from|to|on|"
                        r"after|during|when|which|that|who", re.I)  # fmt: skip
COMPARISON = words(r"than", r"compared", r"versus", r"vs")  # a comparison may be stated from either side
NOT_A_CHANGE = words(  # direction words that judge quality or name a thing rather than say which way a measure went
    r"improv\w*", r"better", r"worse\w*", r"impair\w*", r"gain\w*", r"fall\w*", r"superior", r"inferior",
    r"outperform\w*", r"underperform\w*", r"harm\w*", r"hurt\w*", r"lags?", r"beats?", r"surpass\w*",
    r"highest", r"lowest",  # superlatives rank things ("the highest rate ..., the lowest ...")
)  # fmt: skip
FILLER = words(  # words of four letters or more that name nothing
    r"have", r"were", r"been", r"being", r"their", r"also", r"further", r"does", r"significantly", r"markedly",
    r"substantially", r"greatly",
)  # fmt: skip
SAID_OF = 3  # content words after a claim's change word (or before it, when none follow) that name what changes
NEAR = 5  # words either side of an abstract's change word that may name what changes
BESIDE = 2  # words within which two change words, or a negation and a change word, are read together


def changes(text: str) -> tuple[list[str], list[tuple[int, str]]]:
    """The text's tokens and its plain changes ((token index, "up" or "down")): not a thing's name, not a word of
    NOT_A_CHANGE, not a change of a change ("a greater decrease", "attenuated the increase") and not a negated
    change ("did not increase"): the way those go is not the word's."""
    tokens = PHRASE_TOKEN.findall(text)
    marks = [(i, way) for i, t in enumerate(tokens) for pattern, way in ((UP, "up"), (DOWN, "down"))
             if pattern.fullmatch(t) and not THINGS.match(t)]  # fmt: skip
    at = {i for i, _ in marks}
    negated_at = {i for i, t in enumerate(tokens) if NEGATION.fullmatch(t)}
    return tokens, [
        (i, way)
        for i, way in marks
        if not NOT_A_CHANGE.fullmatch(tokens[i])
        and not any(0 < abs(i - j) <= BESIDE and in_phrase(tokens, i, j) for j in at)
        and not any(0 < i - j <= BESIDE + 1 and in_phrase(tokens, i, j) for j in negated_at)
    ]


def in_phrase(tokens: list[str], i: int, j: int) -> bool:
    """Whether no phrase ends between tokens i and j ("promotes degradation and inhibits ...": it does)."""
    return not any(PHRASE_END.fullmatch(t) for t in tokens[min(i, j) + 1 : max(i, j)])


def said_of(tokens: list[str], i: int, step: int, reach: int) -> set[str]:
    """Up to `reach` content words (cut as `cut_words` cuts them) on one side of token i, to the end of its phrase;
    after it, a leading "of" or "in" is read through ("a reduction in blood pressure")."""
    out: set[str] = set()
    j = i + step
    while 0 <= j < len(tokens) and len(out) < reach:
        word = tokens[j].lower()
        if not (step == 1 and j == i + 1 and word in ("of", "in")):
            if PHRASE_END.fullmatch(word):
                break
            if not FILLER.fullmatch(word):
                out |= cut_words(word)
        j += step
    return out


def reversed_change(claim: str, evidence: str) -> str | None:
    """The way ("up" or "down") of a change the claim states of something that the evidence only says changed the
    other way: the evidence's changes near at least two of the words naming that thing all go the other way, and
    none that goes the claim's way is near any word of the claim, or near nothing at all ("blood pressure increased
    in the placebo group but decreased in the treatment group" backs "the treatment decreased blood pressure").
    Claims and evidence sentences that compare or negate are left to the other checks."""
    if COMPARISON.search(claim) or NEGATION.search(claim):
        return None
    tokens, said = changes(claim)
    claimed = cut_words(claim)
    sentences = []
    for sentence in SENTENCE_END.split(evidence):
        if not COMPARISON.search(sentence):
            words_in, marks = changes(sentence)
            sentences += [(way, said_of(words_in, j, 1, NEAR) | said_of(words_in, j, -1, NEAR)) for j, way in marks]
    for i, way in said:
        thing = said_of(tokens, i, 1, SAID_OF) or said_of(tokens, i, -1, SAID_OF)
        if len(thing) < 2:
            continue
        ways = {other for other, near in sentences if len(thing & near) >= 2}
        same = any(other == way and (near & claimed or not near) for other, near in sentences)
        if ways and way not in ways and not same:
            return way
    return None


def around(text: str, match: re.Match[str], reach: int = 40) -> str:
    """The words around a match: what a negation or direction word says something about."""
    return text[max(0, match.start() - reach) : match.end() + reach]


SIGNIFICANT = words(r"significant(?:ly)?")
NOT_SIGNIFICANT = re.compile(r"\bp\s*(?:=|>|\u2265)\s*0?\.(?:0[5-9]|[1-9])|\bn\.?s\.?\)", re.I)  # "(P = 0.56)"
SIGNIFICANT_P = re.compile(r"\bp\s*(?:<|=|\u2264)\s*0?\.0(?:[0-4]|5\d)", re.I)  # "(p < 0.001)"


def negation_objection(claim: str, evidence: str, abstract: str) -> Objection | None:
    """A negation on one side only. Each negation of the claim is read against the abstract sentences closest to
    the words around it and to its clause, what it denies (a sentence joining two findings negates one of them); a
    claim that asserts a significant finding is read against the sentence it restates, which must not deny it ("no
    significant difference")."""
    said = [m for m in NEGATION.finditer(claim) if claim[m.start() : m.end() + 5].lower() != "not only"]
    if said:
        anchors = [closest_sentence(claim, evidence)]
        for m in said:
            anchors.append(closest_sentence(around(claim, m), abstract))
            if anchor_words(denied := negated(claim, m)):  # "..., whereas placebo did not.": nothing to match
                anchors.append(closest_sentence(denied, abstract))
        if not any(found(NEGATION, a) or found(NEGATION_LIKE, a) or NOT_SIGNIFICANT.search(a) for a in anchors):
            return Objection("negation", "it is negated where the abstract is not")
    if not found(NEGATION, claim) and found(SIGNIFICANT, claim):
        said_words = cut_words(claim)
        for sentence in SENTENCE_END.split(abstract):
            if (found(NEGATION, sentence) and found(SIGNIFICANT, sentence)) or not_significant(sentence):
                its_words = cut_words(sentence)
                if len(its_words & said_words) >= DENIED_SHARE * len(its_words):
                    return Objection("negation", "it states as significant what the abstract does not")
    return None


def not_significant(sentence: str) -> bool:
    """A p-value of 0.05 or more and none below it: "decreased from 48.6% to 46.1% (p = 0.6)"."""
    return bool(NOT_SIGNIFICANT.search(sentence)) and not SIGNIFICANT_P.search(sentence)


DENIED_SHARE = 0.6  # of an abstract sentence's words that deny a significant finding, in a claim asserting it


AT_ALL = re.compile(r"\bat all\b(?=\s*(?:[,;.)]|$))", re.I)  # "no correlation at all.": emphasis, not scope
EVERY = frozenset({"all", "every", "each"})  # one scope in other words: "at every rate" = "with all rates"
EVERY_WORDS = words(*EVERY)


def scope_claimed(claim: str, abstract: str) -> list[str]:
    """The scope words of the claim that the abstract never uses in any form ("all", "every" and "each" standing
    for one another)."""
    claim = AT_ALL.sub("", claim)
    every = bool(found(EVERY_WORDS, abstract))
    return sorted(
        word
        for pattern in SCOPE
        if not pattern.search(abstract)
        for word in found(pattern, claim)
        if not (every and word in EVERY)
    )


def wording_objection(claim: str, evidence: str, abstract: str) -> Objection | None:
    """Negation, direction, hedging, scope and causes: what the claim adds to the sentences it rests on."""
    negation = negation_objection(claim, evidence, abstract)
    if negation is not None:
        return negation
    for same, other, name in ((UP, DOWN, "an increase"), (DOWN, UP, "a decrease")):
        for said in directions(same, claim):
            anchors = closest_sentences(around(claim, said), evidence)
            if not any(directions(same, a) for a in anchors) and all(directions(other, a) for a in anchors):
                return Objection("direction", f"it states {name} where the abstract states the opposite")
    way = reversed_change(claim, evidence)
    if way is not None:
        name = "an increase" if way == "up" else "a decrease"
        return Objection("direction", f"it states {name} of what the abstract says changed the other way")
    scope = scope_claimed(claim, abstract)
    if scope:
        return Objection("scope", f"the abstract never claims {', '.join(repr(s) for s in scope)}")
    cause = sorted(found(CAUSE, claim))
    if cause and not found(CAUSE, abstract) and not found(CAUSE_LIKE, evidence):
        return Objection("cause", f"the abstract gives no cause ({', '.join(repr(c) for c in cause)})")
    return None


def objection(claim: str, evidence: str, abstract: str) -> Objection | None:
    """What the claim says that its evidence (the abstract sentences it rests on) or its abstract does not; None
    when the exact checks find nothing (the judge then decides)."""
    return number_objection(claim, evidence, abstract) or wording_objection(claim, evidence, abstract)
