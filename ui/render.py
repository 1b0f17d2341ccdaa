"""HTML for the UI. Every piece of corpus text and model output is escaped here before any markup is added, so an
abstract or an answer containing <script> or <img onerror=...> shows as text and runs nothing."""

from __future__ import annotations

import html
import re
from typing import Any

from rag.answerer import Answer

CITATION = re.compile(r"\[(\d+)\]")


def answer_html(text: str, prefix: str = "") -> str:
    """Escaped answer text whose [n] markers link to the sources panel (prefix keeps turns apart)."""
    escaped = html.escape(text).replace("\n\n", "<br><br>")
    return CITATION.sub(lambda m: f'<a class="cite" href="#src-{prefix}{m.group(1)}">[{m.group(1)}]</a>', escaped)


def draft_html(settled: list[str], draft: str) -> str:
    """What is shown while an answer streams: verified sentences, then the raw draft of the next one, dimmed."""
    done = answer_html(" ".join(settled))
    tail = f' <span class="draft">{html.escape(draft[-300:])}</span>' if draft else ""
    return (done + tail) or '<span class="draft">…</span>'


def highlight(abstract: str, quote: str) -> str:
    escaped, mark = html.escape(abstract), html.escape(quote)
    return escaped.replace(mark, f"<mark>{mark}</mark>", 1) if mark else escaped


def sources_html(record: dict[str, Any] | None, prefix: str = "") -> str:
    """The sources panel for one answer (its contract plus the cited abstracts): one collapsible entry per
    citation; opening it shows the whole abstract with the supporting quote marked."""
    if not record or not record["citations"]:
        return '<div class="sources-empty">Sources of the latest answer appear here.</div>'
    items = []
    for c in record["citations"]:
        abstract = record["abstracts"].get(c["doc_id"], c["quote"])
        label = c["title"] or " ".join(abstract.split()[:12]) + " …"
        where = " ".join(str(x) for x in (c["venue"], c["year"]) if x)
        link = f' · <a href="{html.escape(c["url"])}" rel="noopener" target="_blank">link</a>' if c["url"] else ""
        items.append(
            f'<details class="source" id="src-{prefix}{c["n"]}"><summary><b>[{c["n"]}]</b> {html.escape(where)} · '
            f"{html.escape(label)} · <code>{html.escape(c['doc_id'])}</code></summary>"
            f'<p class="abstract">{highlight(abstract, c["quote"])}</p>{link}</details>'
        )
    note = f'<p class="note">{html.escape(record["note"])}</p>' if record.get("note") else ""
    return note + "".join(items)


def verifier_note(answer: Answer) -> str:
    """A visible line when the verifier changed the answer or it fell back to extractive."""
    report = answer.verifier or {}
    parts = []
    if report.get("dropped"):
        parts.append(f"{report['dropped']} unsupported sentence(s) removed")
    if report.get("reattributed"):
        parts.append(f"{report['reattributed']} sentence(s) re-attributed to the abstract that supports them")
    if report.get("fallback"):
        parts.append("answer assembled from verbatim sentences (extractive)")
    return ("Verifier: " + "; ".join(parts) + ".") if parts else ""


def markdown_export(turns: list[dict]) -> str:
    """The conversation as Markdown with one numbered reference list (citations renumbered across turns)."""
    numbers: dict[str, int] = {}
    references: list[str] = []
    lines = ["# Conversation", ""]
    for turn in turns:
        local: dict[str, int] = {}
        for c in turn["citations"]:
            if c["doc_id"] not in numbers:
                numbers[c["doc_id"]] = len(numbers) + 1
                where = " ".join(str(x) for x in (c["venue"], c["year"]) if x)
                references.append(f'{numbers[c["doc_id"]]}. {where} {c["doc_id"]}: "{c["quote"]}"')
            local[str(c["n"])] = numbers[c["doc_id"]]
        answer = CITATION.sub(lambda m, local=local: f"[{local.get(m.group(1), m.group(1))}]", turn["answer"])
        lines += [f"**Q:** {turn['question']}", "", f"**A:** {answer}", ""]
    return "\n".join([*lines, "## References", "", *references, ""])
