"""The Gradio app. It only calls the library's facades (rag.engine.Engine and its Library): no retrieval, prompt or
citation logic of its own. One Engine per process serves every session; conversation state is per session."""

from __future__ import annotations

import html
import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from rag.answer import Event, Sentence, Token
from rag.engine import Engine
from rag.errors import BadInput
from rag.records import Answer, Query
from rag.settings import BACKENDS, Settings
from rag.text import EmptyInput, check_question, markdown_text, private
from ui.render import answer_html, draft_html, markdown_export, sources_html, verifier_note

log = logging.getLogger("rag.ui")
ALL = "All"
EXAMPLES = [
    "Can sharpness-aware minimization improve adversarial robustness?",
    "Which papers use diffusion models as reinforcement learning policies?",
    "How can protein language models work at the atom scale?",
]
HEAD = """<script>
document.addEventListener('click', (event) => {
  const link = event.target.closest('a.cite');
  if (!link) return;
  event.preventDefault();
  const target = document.getElementById(link.getAttribute('href').slice(1));
  if (target) { target.open = true; target.scrollIntoView({behavior: 'smooth', block: 'center'}); }
}, true);
</script>"""
CSS = """
.draft { opacity: 0.5; }
.unverified { color: #6b7280; font-style: italic; text-decoration: underline dotted; }
.unverified-tag { margin-left: 0.25em; font-style: normal; font-size: 0.7em; color: #b45309; }
.source { margin: 0.4em 0; }
.source summary { cursor: pointer; }
.note { color: #b45309; }
.nearest-head { font-weight: 600; }
.nearest { margin: 0.4em 0; border-left: 3px dashed #9ca3af; padding-left: 0.5em; }
.nearest .closest { color: #4b5563; }
mark { background: #fde68a; }
#chat, #sources, #summary, #summary-sources, #verifier-note, #corpus-line, #library { overflow-wrap: anywhere; }
"""


@dataclass(frozen=True)
class Failure:
    """A request that failed, as one short message for the page."""

    message: str


def shown(events: Iterator[Event | Answer]) -> Iterator[str | Answer | Failure]:
    """An answer's stream as the page shows it: after each event, the html of the verified sentences so far and the
    dimmed draft of the next; then the Answer, or a Failure."""
    settled: list[str] = []
    unverified: set[str] = set()
    draft = ""
    try:
        for item in events:
            match item:
                case Answer():
                    yield item
                    return
                case Token(text):
                    draft += text
                case Sentence(text, verified):
                    settled.append(text)
                    if not verified:
                        unverified.add(text)
                    draft = ""
            yield draft_html(settled, draft, unverified)
    except BadInput as exc:
        yield Failure(str(exc))
    except Exception as exc:  # shown as a short message; the details go to the log
        log.exception("request failed")
        yield Failure(f"Something went wrong ({type(exc).__name__}). The app keeps working; try again.")


def page_error(message: str) -> gr.Error:
    """A message for the page's error box, which renders HTML: escaped, as it may quote a file name or a question;
    without server paths (an upload is named by its file name)."""
    return gr.Error(html.escape(private(message)))


def turn_record(answer: Answer) -> dict[str, Any]:
    removed = [{"text": d.text, "why": d.why} for d in answer.removed]
    return {**answer.contract(), "abstracts": answer.abstracts, "removed": removed}


def header_text(stats: dict[str, Any]) -> str:
    venues = ", ".join(f"{markdown_text(v)} ({n})" for v, n in stats["venues"].items())
    years = ", ".join(y for y in stats["years"] if y != "unknown")
    return (
        f"**{stats['abstracts']} abstracts** indexed: {venues}; {years}. Ask a question: every sentence of the "
        "answer is checked against the abstract it cites, and each [n] opens that abstract."
    )


def filters(venue: str, year: str) -> dict[str, Any]:
    """The venue and year filters of the dropdowns ("All" is no filter)."""
    return {
        "venue": None if venue in (ALL, "", None) else venue,
        "year": None if year in (ALL, "", None) else int(year),
    }


def choices(stats: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The venue and year dropdowns' choices for what is indexed."""
    venues = [ALL, *(v for v in stats["venues"] if v != "unknown")]
    return venues, [ALL, *(y for y in stats["years"] if y != "unknown")]


class Handlers:
    """What the page's events call: each takes the components' values and returns (or streams) their updates."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.library = engine.library

    def checked(self, text: str | None, what: str) -> str:
        """The question or topic, or a short message in the page when it is empty or too long."""
        try:
            return check_question(text or "", self.engine.settings.max_question_chars, what)
        except EmptyInput:
            raise gr.Error(f"Type a {what} first.") from None
        except BadInput as exc:
            raise page_error(str(exc)) from None

    def respond(self, question, history, state, venue, year, k, backend):  # type: ignore[no-untyped-def]
        question = self.checked(question, "question")
        yield from self.answering(markdown_text(question), Query(question, int(k), **filters(venue, year)),
                                  history, state, backend)  # fmt: skip

    def answer_anyway(self, history, state, venue, year, k, backend):  # type: ignore[no-untyped-def]
        """The last refused question again, answered from the closest papers (every sentence still verified)."""
        if not state["turns"] or not state["turns"][-1]["refused"]:
            raise gr.Error("Nothing was refused: ask a question first.")
        question = state["turns"][-1]["question"]
        query = Query(question, int(k), **filters(venue, year), anyway=True)
        yield from self.answering(f"{markdown_text(question)} *(answer anyway)*", query, history, state, backend)

    def answering(self, shown_question, query, history, state, backend):  # type: ignore[no-untyped-def]
        """The chat's updates while a query is answered: the conversation, sources, note, state, the emptied
        question box, and the "answer anyway" button (shown under a refusal)."""
        history = [*history, {"role": "user", "content": shown_question}, {"role": "assistant", "content": "…"}]
        session = self.engine.chat(backend, state["history"])
        hidden = gr.update(visible=False)
        for item in shown(session.stream(query)):
            match item:
                case Failure(message):
                    history[-1]["content"] = f"⚠ {message}"
                    yield history, gr.update(), "", state, "", hidden
                case Answer():
                    record = turn_record(item)
                    turns = [*state["turns"], record]
                    prefix = f"t{len(turns)}-"
                    history[-1]["content"] = answer_html(item.answer, prefix, item.unverified_sentences)
                    new_state = {"history": session.history, "turns": turns}
                    anyway = gr.update(visible=item.refused and not query.anyway)
                    yield history, sources_html(record, prefix), verifier_note(item), new_state, "", anyway
                case str(html):
                    history[-1]["content"] = html
                    yield history, gr.update(), "", state, "", hidden

    def summarize(self, topic, k, backend):  # type: ignore[no-untyped-def]
        topic = self.checked(topic, "topic")
        for item in shown(self.engine.stream(Query(topic, int(k)), backend, "summary")):
            match item:
                case Failure(message):
                    raise page_error(message)
                case Answer():
                    record = turn_record(item)
                    yield (
                        answer_html(item.answer, "s-", item.unverified_sentences),
                        sources_html(record, "s-"),
                        verifier_note(item),
                    )
                case str(html):
                    yield html, gr.update(), ""

    def api_ask(self, question: str, backend: str = "") -> dict[str, Any]:
        """Answer one question (no conversation): the JSON contract of `rag ask --json`. An empty backend is the
        configured one."""
        try:
            return self.engine.ask(question, backend or None).contract()
        except BadInput as exc:
            raise gr.Error(str(exc)) from None  # to a program (gradio_client), not the page

    def export(self, state):  # type: ignore[no-untyped-def]
        if not state["turns"]:
            raise gr.Error("Nothing to export yet: ask a question first.")
        folder = Path(tempfile.mkdtemp(prefix="rag-export-"))
        (folder / "conversation.md").write_text(markdown_export(state["turns"]), encoding="utf-8")
        cited = list(dict.fromkeys(c["doc_id"] for turn in state["turns"] for c in turn["citations"]))
        files = [folder / "conversation.md"]
        for kind, name in (("bibtex", "references.bib"), ("ris", "references.ris"), ("csl-json", "references.json")):
            if cited:  # the cited papers, to import into a reference manager
                (folder / name).write_text(self.engine.library.references(cited, kind), encoding="utf-8")
                files.append(folder / name)
        return gr.update(value=[str(f) for f in files], visible=True)

    def papers(self, query, venue, year, author=""):  # type: ignore[no-untyped-def]
        """The library table: search results for a query, else every paper (filtered; the author by any part of a
        name)."""
        chosen = {**filters(venue, year), "author": (author or "").strip() or None}
        if (query or "").strip():
            try:
                rows = [
                    {"doc_id": r.doc_id, "venue": r.venue or "", "year": r.year, "title": r.title or "", "text": r.text}
                    for r in self.library.search(Query(query, 50, **chosen))
                ]
            except BadInput as exc:
                raise page_error(str(exc)) from None
        else:
            rows = self.library.papers(**chosen)
        return [
            [r["doc_id"], r["venue"], r["year"], r["title"] or " ".join(r["text"].split()[:25]) + " …"]
            for r in rows[:500]
        ]

    def upload(self, files, progress=gr.Progress()):  # type: ignore[no-untyped-def]  # noqa: B008 - Gradio's idiom
        if not files:
            raise gr.Error("Choose one or more files first.")
        paths = [Path(f if isinstance(f, str) else f.name) for f in files]
        progress(0, desc="Reading files")

        def report_progress(done: int, total: int | None) -> None:
            if total is None:
                progress(None, desc=f"Reading files: {done:,} records")
            else:
                progress(done / max(total, 1), desc="Embedding")

        try:
            report = self.library.add(paths, report_progress)
        except BadInput as exc:
            raise page_error(str(exc)) from None
        lines = [
            f"**Added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
            f"rejected {report.skipped}.**"
        ]
        lines += [f"- rejected {markdown_text(p.short())}" for p in report.problems]
        stats = self.library.stats()
        venues, years = choices(stats)
        return (
            "\n".join(lines),
            header_text(stats),
            self.papers("", ALL, ALL),
            gr.update(choices=venues),
            gr.update(choices=years),
        )


def build_app(engine: Engine) -> gr.Blocks:
    settings = engine.settings
    default_backend = engine.backend_name(None)
    on = Handlers(engine)
    stats = engine.library.stats()
    venues, years = choices(stats)
    with gr.Blocks(title="Abstracts Q&A") as app:
        header = gr.Markdown(header_text(stats), elem_id="corpus-line", latex_delimiters=[])
        state = gr.State(lambda: {"history": [], "turns": []})
        with gr.Tab("Chat"), gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    elem_id="chat", height=480, sanitize_html=True, label="Conversation", latex_delimiters=[]
                )
                question = gr.Textbox(placeholder="Ask about the indexed papers…", show_label=False, elem_id="question")
                with gr.Row():
                    ask_button = gr.Button("Ask", variant="primary", elem_id="ask")
                    reset_button = gr.Button("Reset", elem_id="reset")
                    export_button = gr.Button("Export (Markdown, references)", elem_id="export")
                download = gr.File(
                    label="Conversation and references", file_count="multiple", visible=False, elem_id="download"
                )
                gr.Examples(EXAMPLES, inputs=question, label="Examples")
            with gr.Column(scale=2):
                note = gr.Markdown(elem_id="verifier-note", latex_delimiters=[])
                anyway_button = gr.Button(
                    "Answer from the closest papers anyway (every sentence still verified)",
                    visible=False, size="sm", elem_id="anyway",
                )  # fmt: skip
                sources = gr.HTML(sources_html(None), elem_id="sources", label="Sources")
                with gr.Accordion("Settings", open=False):
                    venue = gr.Dropdown(venues, value=ALL, label="Venue", elem_id="venue")
                    year = gr.Dropdown(years, value=ALL, label="Year", elem_id="year")
                    k = gr.Slider(1, 20, value=settings.top_k, step=1, label="Passages")
                    backend = gr.Dropdown(list(BACKENDS), value=default_backend, label="Backend", elem_id="backend")
                    local = settings.llm_model_path or "SmolLM2-135M-Instruct (bundled)"
                    gr.Markdown(markdown_text(f"Configured: {default_backend} (RAG_LLM_BACKEND={settings.llm_backend}"
                                              f"); local model: {local}; API model: {settings.openai_model}."),
                                latex_delimiters=[])  # fmt: skip
        with gr.Tab("Summarize"):
            topic = gr.Textbox(placeholder="A topic, e.g. adversarial robustness", show_label=False, elem_id="topic")
            with gr.Row():
                summary_k = gr.Slider(2, 20, value=settings.summary_k, step=1, label="Abstracts")
                summarize_button = gr.Button("Summarize", variant="primary", elem_id="summarize")
            with gr.Row():
                summary = gr.HTML(elem_id="summary")
                with gr.Column():
                    summary_note = gr.Markdown(latex_delimiters=[])
                    summary_sources = gr.HTML(elem_id="summary-sources")
        with gr.Tab("Library"):
            with gr.Row():
                library_query = gr.Textbox(placeholder="Search the library…", show_label=False, elem_id="library-query")
                library_venue = gr.Dropdown(venues, value=ALL, label="Venue")
                library_year = gr.Dropdown(years, value=ALL, label="Year")
                library_author = gr.Textbox(placeholder="Author (any part of a name)", show_label=False,
                                            elem_id="library-author")  # fmt: skip
            table = gr.Dataframe(
                on.papers("", ALL, ALL), headers=["doc id", "venue", "year", "title or opening words"],
                interactive=False, wrap=True, elem_id="library", latex_delimiters=[],
            )  # fmt: skip
            files = gr.File(
                label="Add abstracts (.jsonl .csv .bib .ris .nbib, PubMed .xml, CSL .json, zotero.sqlite, .txt, .gz)",
                file_count="multiple",
                file_types=[".jsonl", ".csv", ".bib", ".txt", ".ris", ".nbib", ".xml", ".json", ".sqlite", ".gz"],
                elem_id="upload",
            )  # fmt: skip
            ingest_button = gr.Button("Add to the library", elem_id="ingest")
            ingest_report = gr.Markdown(elem_id="ingest-report", latex_delimiters=[])

        chat_outputs = [chatbot, sources, note, state, question, anyway_button]
        chat_inputs = [question, chatbot, state, venue, year, k, backend]
        question.submit(on.respond, chat_inputs, chat_outputs, api_name="chat")
        ask_button.click(on.respond, chat_inputs, chat_outputs, api_name=False)
        anyway_button.click(on.answer_anyway, chat_inputs[1:], chat_outputs, api_name=False)
        reset_button.click(
            lambda: ([], sources_html(None), "", {"history": [], "turns": []}, *[gr.update(visible=False)] * 2),
            None, [chatbot, sources, note, state, download, anyway_button], api_name=False,
        )  # fmt: skip
        export_button.click(on.export, state, download, api_name=False)
        summarize_button.click(
            on.summarize, [topic, summary_k, backend], [summary, summary_sources, summary_note], api_name="summarize"
        )
        topic.submit(
            on.summarize, [topic, summary_k, backend], [summary, summary_sources, summary_note], api_name=False
        )
        for trigger in (library_query.submit, library_venue.change, library_year.change, library_author.submit):
            trigger(on.papers, [library_query, library_venue, library_year, library_author], table, api_name=False)
        ingest_button.click(on.upload, files, [ingest_report, header, table, venue, year], api_name=False)
        gr.api(on.api_ask, api_name="ask")
    return app


def launch(settings: Settings, host: str = "127.0.0.1", port: int = 7860, share: bool = False) -> None:
    engine = Engine(settings)
    engine.warm_up()
    start(build_app(engine), settings, host, port, share=share)


def start(app: gr.Blocks, settings: Settings, host: str, port: int, share: bool = False, block: bool = True) -> None:
    """Serve the app behind the request guard (rag/frontends/guard.py); with block=False, return once it listens."""
    from starlette.middleware import Middleware

    from rag.frontends.guard import Allowed, Guard, Policy

    app.queue(default_concurrency_limit=settings.ui_concurrency, max_size=settings.ui_queue)
    auth = (settings.ui_user, settings.ui_password) if settings.ui_user and settings.ui_password else None
    guard = Middleware(Guard, policy=Policy(Allowed.of(host, settings.allowed_hosts), throttle_logins=True))
    app.launch(
        server_name=host,
        server_port=port,
        share=share,
        auth=auth,
        max_file_size=f"{settings.ui_max_upload_mb}mb",
        show_error=False,
        head=HEAD,
        css=CSS,
        footer_links=["api"],
        quiet=True,
        app_kwargs={"middleware": [guard]},
        prevent_thread_lock=not block,
    )
