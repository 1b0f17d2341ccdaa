"""Words as the indexes and the relevance scores see them: BM25's tokens and idf, and the content words that the
verifier's coverage checks, the gate and the chat's topic check compare (stemmed, without stop words)."""

from __future__ import annotations

import math
import re
from functools import cache

WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
# Words that say what is asked rather than what it is about; with English stop words they are not content words.
QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "how", "why", "when", "where"}
    | {"does", "do", "did", "can", "could", "should", "would"}
)


def tokenize(texts: list[str]) -> list[list[str]]:
    """Each text's words as the index sees them: lower-cased, stemmed, without English stop words."""
    import bm25s
    import Stemmer

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False, show_progress=False
    )


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


@cache
def _skipped_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return QUESTION_WORDS.union(STOPWORDS_EN)


def content_words(text: str) -> set[str]:
    """The stemmed words of a text that carry its content (stop words and question words left out)."""
    stem, skip = _stemmer().stemWord, _skipped_words()
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
