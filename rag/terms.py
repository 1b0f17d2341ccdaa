"""Words as the indexes and the relevance scores see them: BM25's tokens and idf, and the content words that the
verifier's coverage checks, the gate and the chat's topic check compare (stemmed, without stop words)."""

from __future__ import annotations

import math
import re
from functools import cache

WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
TOKEN = re.compile(r"(?u)\b\w\w+\b")  # the keyword index's words: bm25s's (and scikit-learn's) token pattern
# bm25s's English stop words (bm25s.stopwords.STOPWORDS_EN, Lucene's list), which the keyword index leaves out
STOP_WORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not"}
    | {"of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was"}
    | {"will", "with"}
)
# Words that say what is asked rather than what it is about; with English stop words they are not content words.
QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "how", "why", "when", "where"}
    | {"does", "do", "did", "can", "could", "should", "would"}
)
NOT_CONTENT = QUESTION_WORDS | STOP_WORDS


def tokenize(texts: list[str]) -> list[list[str]]:
    """Each text's words as the index sees them: lower-cased, stemmed, without English stop words. The same words as
    `bm25s.tokenize(texts, stopwords="en", stemmer=<English Snowball>)` (tests hold them equal), without importing
    bm25s, which imports scipy: a fifth of a second of every cold search."""
    import Stemmer

    words = [[word for word in TOKEN.findall(text.lower()) if word not in STOP_WORDS] for text in texts]
    distinct = list(dict.fromkeys(word for text in words for word in text))  # each stemmed once, as bm25s does
    stem_of = dict(zip(distinct, Stemmer.Stemmer("english").stemWords(distinct), strict=True))
    return [[stem_of[word] for word in text] for text in words]


def weighed_words(question: str) -> list[str]:
    """The question's words as the keyword index tokenizes them, once each, question words left out."""
    asking = _question_tokens()
    return list(dict.fromkeys(w for w in tokenize([question])[0] if w not in asking))


@cache
def _question_tokens() -> frozenset[str]:
    return frozenset(tokenize([" ".join(sorted(QUESTION_WORDS))])[0])


def idf(document_frequency: int, documents: int) -> float:
    """BM25's idf; a word the index never saw weighs the most."""
    return math.log((documents - document_frequency + 0.5) / (document_frequency + 0.5) + 1)


@cache
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


def content_words(text: str) -> set[str]:
    """The stemmed words of a text that carry its content (stop words and question words left out)."""
    stem, skip = _stemmer().stemWord, NOT_CONTENT
    return {stem(w.lower()) for w in WORD.findall(text) if w.lower() not in skip}


def stemmed_words(text: str) -> set[str]:
    """Every stemmed word of a text, stop words included (what a claim's content words are looked up in)."""
    stem = _stemmer().stemWord
    return {stem(w.lower()) for w in WORD.findall(text)}


# Words a restatement adds around what it restates ("were", "against", "most"): not content when a claim's words
# are looked up in its source. Direction and scope words among them are checked on their own (rag/answer/checks.py).
FUNCTION_WORDS = frozenset(
    {"were", "been", "being", "has", "have", "had", "do", "does", "did", "its", "our", "we", "us", "his", "her"}
    | {"from", "between", "against", "than", "more", "most", "less", "also", "both", "each", "which", "who"}
    | {"whom", "whose", "while", "whereas", "although", "though", "when", "where", "whether", "after", "before"}
    | {"during", "over", "under", "about", "above", "below", "among", "within", "without", "per", "via", "those"}
    | {"these", "other", "some", "any", "all", "only", "very"}
)


def content_coverage(claim: str, text: str, ignored: frozenset[str] = frozenset()) -> float:
    """Share of the claim's content words (less `ignored` words) that occur in the text."""
    words = content_words(claim) - _stems(ignored)
    return len(words & stemmed_words(text)) / len(words) if words else 0.0


@cache
def _stems(words: frozenset[str]) -> frozenset[str]:
    stem = _stemmer().stemWord
    return frozenset(stem(w) for w in words)
