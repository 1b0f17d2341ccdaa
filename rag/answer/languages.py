"""Which language or script a sentence is in, roughly and without a model: the script of most of its letters, and
for Latin script the language whose common function words it uses most. Used to mark an answer sentence that
rests on a sentence in another language than its abstract's, so a code-switched instruction cannot pass as the
abstract's own words."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

FUNCTION_WORDS = {  # a word common to several languages is listed under each
    "English": "the of and in to is with that for was were are by from this",
    "French": "le la les des et est une dans pour que du sur au aux avec de en ont été",
    "Spanish": "el la los las del y en que por con una para se es de fue un",
    "German": "der die das und ist mit von den für nicht eine zu auf im wurde",
    "Italian": "il della che di per una sono con nel gli delle è la le un",
    "Portuguese": "os as das não uma para com que são pelo pela dos ao de em foi um",
    "Dutch": "de het een van en dat voor met zijn niet op ook werd in",
    "Swedish": "och att det som för med är på inte av till",
    "Polish": "i w się na nie że z do jest to od",
    "Indonesian": "dan yang di untuk dengan ini dari pada adalah",
    "Turkish": "ve bir bu için ile olan gibi daha",
    "Vietnamese": "và của các là trong có được những cho",
}
WORDS_OF = {name: set(words.split()) for name, words in FUNCTION_WORDS.items()}
SCRIPTS = {"CYRILLIC": "Cyrillic", "GREEK": "Greek", "ARABIC": "Arabic", "HEBREW": "Hebrew", "CJK": "Chinese",
           "HIRAGANA": "Japanese", "KATAKANA": "Japanese", "HANGUL": "Korean", "DEVANAGARI": "Devanagari",
           "THAI": "Thai"}  # fmt: skip
WORD = re.compile(r"[^\W\d_]+")


def language_of(sentence: str) -> str | None:
    """The sentence's language (a script's name for a script other than Latin), or None when it is too short or
    gives no clear sign."""
    letters = [c for c in sentence if c.isalpha()]
    if len(letters) < 12:
        return None
    scripts = Counter(script_of(c) for c in letters)
    script, count = scripts.most_common(1)[0]
    if script != "LATIN" and count > len(letters) / 2:
        return "Japanese" if scripts["HIRAGANA"] + scripts["KATAKANA"] else SCRIPTS.get(script, script.title())
    words = WORD.findall(sentence.lower())
    hits = Counter({name: sum(w in found for w in words) for name, found in WORDS_OF.items()}).most_common(2)
    (best, most), (_, second) = hits
    return best if most >= 3 and most >= second + 2 else None  # a clear lead, or no judgement


def script_of(letter: str) -> str:
    if letter.isascii():
        return "LATIN"
    name = unicodedata.name(letter, "UNKNOWN")
    return "CJK" if name.startswith("CJK") else name.split()[0]


def main_language(sentences: list[str]) -> str | None:
    found = Counter(lang for s in sentences if (lang := language_of(s)))
    return found.most_common(1)[0][0] if found else None


def foreign_to(sentence: str, sentences: list[str]) -> tuple[str, str] | None:
    """(the sentence's language, its abstract's) when they differ."""
    own, main = language_of(sentence), main_language(sentences)
    return (own, main) if own and main and own != main else None
