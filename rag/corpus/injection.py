"""Prompt-injection defence: text in an abstract that addresses the assistant rather than describing research. Such
sentences are withheld from prompts and can never support or be quoted in an answer (rag/answer/verifier.py blanks
them when it prepares a source)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from rag.corpus.instruction_filter import MODEL_DIR, InstructionFilter
from rag.sentences import sentence_spans
from rag.text import INVISIBLE

if TYPE_CHECKING:
    from rag.settings import Settings

# Matched after
# unicode_folded (full-width letters folded, invisible characters removed), sentence by sentence and across each
# pair of neighbouring sentences (an instruction split in two).
INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your|preceding)\s+"
    r"(\w+\s+)?(instructions?|prompts?|rules)\b"
    r"|\b(ignore|disregard|forget)\s+(everything|anything)\s+(above|before|said|you\b)"
    r"|\byou are now\b|\bsystem prompt\b|\b(reply|respond|answer|output) only with\b|\bnew instructions?\s*:"
    r"|\bfrom now on,?\s+(you|respond|reply|answer|say|always)\b"
    r"|\b(say|print|output|reply with|respond with|write|answer with)\s+(only\s+)?(exactly\s+)?the\s+(word|phrase)\b"
    r"|\b(note|message|instructions?)\s+(to|for)\s+(the|any|all)\s+(ai|assistants?|language models?|llms?|chatbots?)\b"
    r"|\b(dear|hey|attention)\s*,?\s+(ai|assistant|chatbot|llm|language model)\b"
    # chat-template and role tokens, role prefixes and comments, which no abstract needs
    r"|<\|[a-z_]{2,20}\|>|\[/?INST\]|<</?SYS>>|^\s*#{2,}\s*(system|instruction)\b|<!--|^\s*\[//\]:\s*#"
    r"|^\W{0,3}(system|assistant|user|human)\s*:"
    # "ignore the previous instructions" in Spanish, Portuguese, French, Italian, German, Dutch, Polish, Russian,
    # Chinese, Japanese, Korean and Arabic
    r"|\b(ignora|ignorez|ignorer|ignorar|ignoriere|negeer|zignoruj|игнорируй(те)?)\s+(\w+\s+){0,3}"
    r"(instrucciones|instruções|instructions|istruzioni|anweisungen|instructies|instrukcje|инструкции)\b"
    r"|\bignore\s+(todas\s+)?as\s+instruções"
    r"|(忽略|无视|忽视).{0,6}(指令|指示|说明|提示)|(指示|命令).{0,4}無視|(지시|명령|지침).{0,8}무시|تجاهل.{0,20}(التعليمات|الأوامر)",
    re.IGNORECASE | re.MULTILINE,
)
ANYWHERE = re.compile(INSTRUCTION.pattern, INSTRUCTION.flags | re.DOTALL)  # the precheck: any line, across lines
READ_ON = re.compile(r"[.!?]+\s+")  # a full stop and the space after it: read on into the next sentence
HIDDEN = re.compile(f"[\u200c\u200d]|{INVISIBLE.pattern}")  # stored text keeps the joiners; matching drops them


def unicode_folded(text: str) -> str:
    """Text as the instruction patterns read it: compatibility forms folded (full-width letters), invisible
    characters that could split a word removed."""
    import unicodedata

    return HIDDEN.sub("", unicodedata.normalize("NFKC", text))


def pattern_like(text: str) -> bool:
    return INSTRUCTION.search(unicode_folded(text)) is not None


def pattern_withheld(text: str, spans: list[tuple[int, int]], pieces: list[str]) -> set[int]:
    """The sentences the patterns find, alone or read on across the full stop into the next. One search of the
    whole abstract first (a sentence per line, read on across its full stops as a pair is, so any pair reads on
    into the next line): when it finds nothing, no sentence or pair can, which is most abstracts."""
    lines = "\n".join(READ_ON.sub(" ", p).rstrip(".!?") for p in pieces)
    if not pieces or not ANYWHERE.search(unicode_folded(lines)):
        return set()
    found = {i for i, piece in enumerate(pieces) if pattern_like(piece)}
    for i in range(len(pieces) - 1):
        pair = READ_ON.sub(" ", text[spans[i][0] : spans[i + 1][1]])
        if i not in found and i + 1 not in found and pattern_like(pair):
            found |= {i, i + 1}
    return found


@cache
def learned_filter(folder: Path = MODEL_DIR) -> InstructionFilter:
    """The shipped learned filter, loaded once per process (a few milliseconds; checked against its checksum)."""
    return InstructionFilter.load(folder)


@dataclass(frozen=True)
class Guard:
    """What decides that text addresses the assistant: the patterns above, and the learned filter
    (rag/corpus/instruction_filter.py) unless RAG_INSTRUCTION_FILTER=false turns it off for a trusted corpus."""

    learned: InstructionFilter | None = None

    @property
    def version(self) -> str:
        """What decided: stored with each paper's count, so a paper checked by another filter is checked again."""
        return f"patterns+{self.learned.sha256[:12]}" if self.learned else "patterns"

    @classmethod
    def of(cls, settings: Settings) -> Guard:
        return cls(learned_filter() if settings.instruction_filter else None)

    def instruction_like(self, text: str) -> bool:
        return pattern_like(text) or (self.learned is not None and self.learned.flagged_runs([text], [(0, 1)])[0])

    def withheld(self, text: str, spans: list[tuple[int, int]]) -> set[int]:
        """Indices of the sentences that address the assistant, alone or together with a neighbour."""
        pieces = [text[a:b] for a, b in spans]
        found = pattern_withheld(text, spans, pieces)
        if self.learned is not None and pieces:
            n = len(pieces)
            runs = [(i, i + 1) for i in range(n)] + [(i, i + 2) for i in range(n - 1)]  # sentences, then pairs
            flags = self.learned.flagged_runs(pieces, runs)
            found |= {i for i in range(n) if flags[i]}
            for i in range(n - 1):  # a pair, as the patterns read pairs: when neither sentence is withheld yet
                if flags[n + i] and not {i, i + 1} & found:
                    found |= {i, i + 1}
        return found

    def without_instructions(self, text: str) -> str:
        """The text with any sentence addressed to the assistant replaced by a marker (for prompts)."""
        spans = sentence_spans(text)
        withheld = self.withheld(text, spans)
        if not withheld:
            return text
        return " ".join("[text withheld]" if i in withheld else text[a:b] for i, (a, b) in enumerate(spans))
