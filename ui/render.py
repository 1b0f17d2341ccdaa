"""HTML for the UI. Every piece of corpus text and model output is escaped here before any markup is added, so an
abstract or an answer containing <script> or <img onerror=...> shows as text and runs nothing. Text that Gradio
renders as Markdown (the chat, the corpus line, notes) also has Markdown's characters escaped, so a Markdown image
in an abstract, a venue or a model's draft is shown as text and never fetched."""

from __future__ import annotations

import html
from typing import Any

from rag.records import Answer
from rag.text import MARKER, byline, markdown_text, replace_markers, web_url, where

EMPTY_SOURCES = '<div class="sources-empty">Sources of the latest answer appear here.</div>'
UNVERIFIED_TITLE = "Not verified: no abstract could be confirmed to support this sentence, so it cites none"


def answer_html(text: str, prefix: str = "", unverified: frozenset[str] | set[str] = frozenset()) -> str:
    """Escaped answer text whose [n] markers link to the sources panel (prefix keeps turns apart). Sentences in
    `unverified` (RAG_UNVERIFIED=show) are set apart: greyed, italic, marked "not verified", and link nowhere."""
    pieces, last = [], 0
    for start, end, shown_unverified in segments(text, unverified):
        piece = text[start:end]
        if shown_unverified:
            pieces.append(
                f'<span class="unverified" title="{UNVERIFIED_TITLE}"><em>{markdown_text(piece)}</em>'
                '<sup class="unverified-tag">not verified</sup></span>'
            )
            continue
        last = 0
        for marker in MARKER.finditer(piece):
            pieces.append(markdown_text(piece[last : marker.start()]))
            pieces.append(
                replace_markers(marker.group(0), lambda n: f'<a class="cite" href="#src-{prefix}{n}">[{n}]</a>')
            )
            last = marker.end()
        pieces.append(markdown_text(piece[last:]))
    return "".join(pieces).replace("\n\n", "<br><br>")


def segments(text: str, unverified: frozenset[str] | set[str]) -> list[tuple[int, int, bool]]:
    """(start, end, unverified) spans covering the text: each unverified sentence's span, and what lies between."""
    found = sorted(
        (start, start + len(sentence))
        for sentence in {u.strip() for u in unverified if u.strip()}
        if (start := text.find(sentence)) >= 0
    )
    spans, at = [], 0
    for start, end in found:
        if start >= at:
            spans += [(at, start, False), (start, end, True)]
            at = end
    return [span for span in [*spans, (at, len(text), False)] if span[1] > span[0]]


def draft_html(settled: list[str], draft: str, unverified: frozenset[str] | set[str] = frozenset()) -> str:
    """What is shown while an answer streams: settled sentences, then the raw draft of the next one, dimmed."""
    done = answer_html(" ".join(settled), unverified=unverified)
    tail = f' <span class="draft">{markdown_text(draft[-300:])}</span>' if draft else ""
    return (done + tail) or '<span class="draft">…</span>'


def highlight(abstract: str, quote: str) -> str:
    escaped, mark = html.escape(abstract), html.escape(quote)
    return escaped.replace(mark, f"<mark>{mark}</mark>", 1) if mark else escaped


def sources_html(record: dict[str, Any] | None, prefix: str = "") -> str:
    """The sources panel for one answer (its contract plus the cited abstracts): one collapsible entry per
    citation; opening it shows the whole abstract with the supporting quote marked."""
    note = f'<p class="note">{html.escape(record["note"])}</p>' if record and record.get("note") else ""
    if record and record.get("nearest") and not record["citations"]:
        return note + nearest_html(record["nearest"], prefix)
    if not record or not record["citations"]:
        return removed_html(record, prefix) or EMPTY_SOURCES
    items = []
    for c in record["citations"]:
        abstract = record["abstracts"].get(c["doc_id"], c["quote"])
        label = c["title"] or " ".join(abstract.split()[:12]) + " …"
        place = html.escape(where(c["venue"], c["year"]))
        link = paper_link(c["url"], " · ")
        authors = f'<p class="authors">{html.escape(byline(tuple(c["authors"])))}</p>' if c.get("authors") else ""
        items.append(
            f'<details class="source" id="src-{prefix}{c["n"]}"><summary><b>[{c["n"]}]</b> {place} · '
            f"{html.escape(label)} · <code>{html.escape(c['doc_id'])}</code></summary>"
            f'{authors}<p class="abstract">{highlight(abstract, c["quote"])}</p>{link}</details>'
        )
    return note + "".join(items) + removed_html(record, prefix)


def removed_html(record: dict[str, Any] | None, prefix: str = "") -> str:
    """The sentences the verifier removed, each with why, collapsed under a count: never part of the answer, but
    never hidden from the reader either."""
    removed = (record or {}).get("removed", [])
    if not removed:
        return ""
    items = "".join(f"<li><em>{html.escape(r['text'])}</em> · {html.escape(r['why'])}</li>" for r in removed)
    return (
        f'<details class="removed" id="removed-{prefix}"><summary>{len(removed)} sentence(s) removed: '
        f"not part of the answer, the abstracts did not confirm them</summary><ul>{items}</ul></details>"
    )


def paper_link(url: str | None, before: str = "") -> str:
    """A paper's web page as a link that opens apart from the app (nothing for a url that is not a web one)."""
    page = web_url(url)
    return f'{before}<a href="{html.escape(page)}" rel="noopener noreferrer" target="_blank">link</a>' if page else ""


def nearest_html(nearest: list[dict[str, Any]], prefix: str = "") -> str:
    """With a refusal: the papers that came closest, each with its closest sentence and words to try, under a
    heading that says they are not support."""
    items = []
    for i, paper in enumerate(nearest, start=1):
        label = html.escape(paper["title"] or paper["doc_id"])
        place = html.escape(where(paper["venue"], paper["year"]))
        link = paper_link(paper["url"])
        terms = ", ".join(f"<b>{html.escape(t)}</b>" for t in paper["terms"])
        tries = f'<p class="try">Words to try: {terms}</p>' if terms else ""
        items.append(
            f'<details class="nearest" id="near-{prefix}{i}" open><summary>{place} · {label} · '
            f"<code>{html.escape(paper['doc_id'])}</code></summary>"
            f'<p class="closest">“{html.escape(paper["sentence"])}”</p>{tries}{link}</details>'
        )
    head = "No abstract answers this. The closest papers, <em>not support for an answer</em>:"
    return f'<div class="nearest-papers"><p class="nearest-head">{head}</p>{"".join(items)}</div>'


def verifier_note(answer: Answer) -> str:
    """What was searched for besides the question, and a visible line when the verifier changed the answer or it
    fell back to extractive; a contradicted sentence is shown with the words of the abstract that contradict it.
    Markdown, with corpus text escaped."""
    report = answer.verifier
    contradicted = [d for d in report.dropped_sentences if d.kind == "contradicted"]
    parts = []
    if report.dropped > len(contradicted):
        parts.append(f"{report.dropped - len(contradicted)} unsupported sentence(s) removed (listed under the sources)")
    parts += [f"removed “{markdown_text(d.text)}”, {d.reason} (“{markdown_text(d.quote or '')}”)" for d in contradicted]
    if report.unverified:
        parts.append(f"{report.unverified} sentence(s) shown unverified: no abstract was confirmed to support them")
    if report.reattributed:
        parts.append(f"{report.reattributed} sentence(s) re-attributed to the abstract that supports them")
    if report.fallback:
        parts.append("answer assembled from verbatim sentences (extractive)")
    note = ("Verifier: " + "; ".join(parts) + ".") if parts else ""
    return "\n\n".join(line for line in (searched_line(answer), note) if line)


def searched_line(answer: Answer) -> str:
    """What retrieval searched for besides the question, when the LLM rewrote it (RAG_REWRITE)."""
    rewrites = answer.searched[1:]
    return ("Also searched for: " + "; ".join(f"“{markdown_text(r)}”" for r in rewrites) + ".") if rewrites else ""


def markdown_export(turns: list[dict]) -> str:
    """The conversation as Markdown with one numbered reference list (citations renumbered across turns); every
    text in it escaped (markdown_text), so a Markdown viewer fetches and links nothing from it."""
    numbers: dict[str, int] = {}
    references: list[str] = []
    lines = ["# Conversation", ""]
    for turn in turns:
        local: dict[str, int] = {}
        for c in turn["citations"]:
            if c["doc_id"] not in numbers:
                numbers[c["doc_id"]] = len(numbers) + 1
                place = where(c["venue"], c["year"])
                references.append(f"{numbers[c['doc_id']]}. " + markdown_text(f'{place} {c["doc_id"]}: "{c["quote"]}"'))
            local[c["n"]] = numbers[c["doc_id"]]
        answer = markdown_text(replace_markers(turn["answer"], lambda n, local=local: f"[{local.get(n, n)}]"))
        for sentence in turn.get("sentences", []):
            if not sentence["verified"]:
                text = markdown_text(sentence["text"].strip())
                answer = answer.replace(text, f"{text} *(not verified)*", 1)
        lines += [f"**Q:** {markdown_text(turn['question'])}", "", f"**A:** {answer}", ""]
    return "\n".join([*lines, "## References", "", *references, ""])
