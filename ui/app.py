"""The Gradio app. It only calls the library (rag.answerer, rag.chat, rag.ingest, rag.store): no retrieval, prompt
or citation logic of its own. One Engine per process serves every session; conversation state is per session."""

from __future__ import annotations

import logging
import queue
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from rag.answerer import Answer, Engine
from rag.chat import ChatSession
from rag.errors import BadInput
from rag.settings import Settings
from ui.render import answer_html, draft_html, markdown_export, sources_html, verifier_note

log = logging.getLogger("rag.ui")
BACKENDS = ["local", "extractive", "openai", "openai-compatible"]
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
.source { margin: 0.4em 0; }
.source summary { cursor: pointer; }
.note { color: #b45309; }
mark { background: #fde68a; }
"""


def stream_request(run: Callable[[Callable[[str, str], None]], Answer]) -> Iterator[tuple[str, Any]]:
    """Run an engine request in a worker thread. Yields ("progress", html of the verified sentences so far and the
    dimmed draft of the next) while the answer streams, then ("answer", Answer) or ("error", message)."""
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            events.put(("answer", run(lambda kind, text: events.put((kind, text)))))
        except BadInput as exc:
            events.put(("error", str(exc)))
        except Exception as exc:  # shown as a short message; the details go to the log
            log.exception("request failed")
            events.put(("error", f"Something went wrong ({type(exc).__name__}). The app keeps working; try again."))

    threading.Thread(target=work, daemon=True).start()
    settled: list[str] = []
    draft = ""
    while True:
        kind, payload = events.get()
        if kind in ("answer", "error"):
            yield kind, payload
            return
        if kind == "token":
            draft += payload
        elif kind == "sentence":
            settled.append(payload)
            draft = ""
        yield "progress", draft_html(settled, draft)


def turn_record(answer: Answer) -> dict[str, Any]:
    return {**answer.contract(), "abstracts": answer.abstracts}


def header_text(engine: Engine) -> str:
    manifest = engine.retriever.manifest
    venues = ", ".join(f"{v} ({n})" for v, n in manifest["venues"].items())
    years = ", ".join(y for y in manifest["years"] if y != "unknown")
    return (
        f"**{manifest['docs']} abstracts** indexed: {venues}; {years}. Ask a question: every sentence of the "
        "answer is checked against the abstract it cites, and each [n] opens that abstract."
    )


def build_app(engine: Engine) -> gr.Blocks:
    settings = engine.settings
    default_backend = engine.backend_name(None)

    def filters(venue: str, year: str) -> dict[str, Any]:
        return {
            "venue": None if venue in (ALL, "", None) else venue,
            "year": None if year in (ALL, "", None) else int(year),
        }

    def choices() -> tuple[list[str], list[str]]:
        manifest = engine.retriever.manifest
        venues = [ALL, *(v for v in manifest["venues"] if v != "unknown")]
        return venues, [ALL, *(y for y in manifest["years"] if y != "unknown")]

    def respond(question, history, state, venue, year, k, backend):  # type: ignore[no-untyped-def]
        question = (question or "").strip()
        if not question:
            raise gr.Error("Type a question first.")
        history = [*history, {"role": "user", "content": question}, {"role": "assistant", "content": "…"}]
        session = ChatSession(engine, backend)
        session.history = list(state["history"])
        run = lambda on_event: session.ask(question, on_event=on_event, k=int(k), **filters(venue, year))  # noqa: E731
        for kind, payload in stream_request(run):
            if kind == "error":
                history[-1]["content"] = f"⚠ {payload}"
                yield history, gr.update(), "", state, ""
            elif kind == "answer":
                record = turn_record(payload)
                turns = [*state["turns"], record]
                prefix = f"t{len(turns)}-"
                history[-1]["content"] = answer_html(payload.answer, prefix)
                new_state = {"history": session.history, "turns": turns}
                yield history, sources_html(record, prefix), verifier_note(payload), new_state, ""
            else:
                history[-1]["content"] = payload
                yield history, gr.update(), "", state, ""

    def summarize(topic, k, backend):  # type: ignore[no-untyped-def]
        topic = (topic or "").strip()
        if not topic:
            raise gr.Error("Type a topic first.")
        for kind, payload in stream_request(lambda on_event: engine.summarize(topic, backend, int(k), on_event)):
            if kind == "error":
                raise gr.Error(payload)
            if kind == "answer":
                record = turn_record(payload)
                yield answer_html(payload.answer, "s-"), sources_html(record, "s-"), verifier_note(payload)
            else:
                yield payload, gr.update(), ""

    def api_ask(question: str, backend: str = default_backend) -> dict[str, Any]:
        """Answer one question (no conversation): the JSON contract of `rag ask --json`."""
        try:
            return engine.ask(question, backend).contract()
        except BadInput as exc:
            raise gr.Error(str(exc)) from None

    def export(state):  # type: ignore[no-untyped-def]
        if not state["turns"]:
            raise gr.Error("Nothing to export yet: ask a question first.")
        path = Path(tempfile.mkdtemp(prefix="rag-export-")) / "conversation.md"
        path.write_text(markdown_export(state["turns"]), encoding="utf-8")
        return gr.update(value=str(path), visible=True)

    def library(query, venue, year):  # type: ignore[no-untyped-def]
        from rag import store

        chosen = filters(venue, year)
        if (query or "").strip():
            try:
                rows = [
                    {"doc_id": r.doc_id, "venue": r.venue or "", "year": r.year, "title": r.title or "", "text": r.text}
                    for r in engine.retriever.search(query, 50, **chosen)
                ]
            except BadInput as exc:
                raise gr.Error(str(exc)) from None
        else:
            rows = [
                r
                for r in store.list_papers(engine.retriever.collection)
                if (not chosen["venue"] or r["venue"] == chosen["venue"])
                and (not chosen["year"] or r["year"] == chosen["year"])
            ]
        return [
            [r["doc_id"], r["venue"], r["year"], r["title"] or " ".join(r["text"].split()[:25]) + " …"]
            for r in rows[:500]
        ]

    def upload(files, progress=gr.Progress()):  # type: ignore[no-untyped-def]  # noqa: B008 - Gradio's idiom
        from rag.ingest import ingest

        if not files:
            raise gr.Error("Choose one or more files first.")
        paths = [Path(f if isinstance(f, str) else f.name) for f in files]
        progress(0, desc="Reading files")
        try:
            report = ingest(paths, settings, lambda done, total: progress(done / max(total, 1), desc="Embedding"))
        except BadInput as exc:
            raise gr.Error(str(exc)) from None
        engine.retriever.refresh()
        lines = [
            f"**Added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
            f"rejected {report.skipped}.**"
        ]
        lines += [
            f"- rejected `{Path(p.source.rsplit(':', 1)[0]).name}:{p.source.rsplit(':', 1)[1]}`: {p.reason}"
            for p in report.problems
        ]
        venues, years = choices()
        return (
            "\n".join(lines),
            header_text(engine),
            library("", ALL, ALL),
            gr.update(choices=venues),
            gr.update(choices=years),
        )

    venues, years = choices()
    backends = sorted(set(BACKENDS) | {default_backend}, key=BACKENDS.index)
    with gr.Blocks(title="Abstracts Q&A") as app:
        header = gr.Markdown(header_text(engine), elem_id="corpus-line")
        state = gr.State(lambda: {"history": [], "turns": []})
        with gr.Tab("Chat"), gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(elem_id="chat", height=480, sanitize_html=True, label="Conversation")
                question = gr.Textbox(placeholder="Ask about the indexed papers…", show_label=False, elem_id="question")
                with gr.Row():
                    ask_button = gr.Button("Ask", variant="primary", elem_id="ask")
                    reset_button = gr.Button("Reset", elem_id="reset")
                    export_button = gr.Button("Export as Markdown", elem_id="export")
                download = gr.File(label="Conversation", visible=False, elem_id="download")
                gr.Examples(EXAMPLES, inputs=question, label="Examples")
            with gr.Column(scale=2):
                note = gr.Markdown(elem_id="verifier-note")
                sources = gr.HTML(sources_html(None), elem_id="sources", label="Sources")
                with gr.Accordion("Settings", open=False):
                    venue = gr.Dropdown(venues, value=ALL, label="Venue", elem_id="venue")
                    year = gr.Dropdown(years, value=ALL, label="Year", elem_id="year")
                    k = gr.Slider(1, 20, value=settings.top_k, step=1, label="Passages")
                    backend = gr.Dropdown(backends, value=default_backend, label="Backend", elem_id="backend")
                    gr.Markdown(f"Configured: `{default_backend}` (RAG_LLM_BACKEND={settings.llm_backend}); "
                                f"local model: `{settings.llm_model_path or 'SmolLM2-135M-Instruct (bundled)'}`; "
                                f"API model: `{settings.openai_model}`.")  # fmt: skip
        with gr.Tab("Summarize"):
            topic = gr.Textbox(placeholder="A topic, e.g. adversarial robustness", show_label=False, elem_id="topic")
            with gr.Row():
                summary_k = gr.Slider(2, 20, value=settings.summary_k, step=1, label="Abstracts")
                summarize_button = gr.Button("Summarize", variant="primary", elem_id="summarize")
            with gr.Row():
                summary = gr.HTML(elem_id="summary")
                with gr.Column():
                    summary_note = gr.Markdown()
                    summary_sources = gr.HTML(elem_id="summary-sources")
        with gr.Tab("Library"):
            with gr.Row():
                library_query = gr.Textbox(placeholder="Search the library…", show_label=False, elem_id="library-query")
                library_venue = gr.Dropdown(venues, value=ALL, label="Venue")
                library_year = gr.Dropdown(years, value=ALL, label="Year")
            table = gr.Dataframe(
                library("", ALL, ALL), headers=["doc id", "venue", "year", "title or opening words"],
                interactive=False, wrap=True, elem_id="library",
            )  # fmt: skip
            files = gr.File(
                label="Add abstracts (.jsonl, .csv, .bib, seed-format .txt)", file_count="multiple",
                file_types=[".jsonl", ".csv", ".bib", ".txt"], elem_id="upload",
            )  # fmt: skip
            ingest_button = gr.Button("Add to the library", elem_id="ingest")
            ingest_report = gr.Markdown(elem_id="ingest-report")

        chat_outputs = [chatbot, sources, note, state, question]
        chat_inputs = [question, chatbot, state, venue, year, k, backend]
        question.submit(respond, chat_inputs, chat_outputs, api_name="chat")
        ask_button.click(respond, chat_inputs, chat_outputs, api_name=False)
        reset_button.click(
            lambda: ([], sources_html(None), "", {"history": [], "turns": []}, gr.update(visible=False)),
            None, [chatbot, sources, note, state, download], api_name=False,
        )  # fmt: skip
        export_button.click(export, state, download, api_name=False)
        summarize_button.click(
            summarize, [topic, summary_k, backend], [summary, summary_sources, summary_note], api_name="summarize"
        )
        topic.submit(summarize, [topic, summary_k, backend], [summary, summary_sources, summary_note], api_name=False)
        for trigger in (library_query.submit, library_venue.change, library_year.change):
            trigger(library, [library_query, library_venue, library_year], table, api_name=False)
        ingest_button.click(upload, files, [ingest_report, header, table, venue, year], api_name=False)
        gr.api(api_ask, api_name="ask")
    return app


def launch(settings: Settings, host: str = "127.0.0.1", port: int = 7860, share: bool = False) -> None:
    engine = Engine(settings)
    engine.warm_up()
    app = build_app(engine)
    app.queue(default_concurrency_limit=settings.ui_concurrency, max_size=64)
    auth = (settings.ui_user, settings.ui_password) if settings.ui_user and settings.ui_password else None
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
    )
