"""Text never becomes markup: a payload corpus (Markdown images, links and reference links, autolinks, HTML tags
that fetch, KaTeX, code-span breakouts) in every field of the records, in the question, the topic and an upload's
rejected records, driven through the real web app in headless Chromium. Every payload points at a local listener
that counts the requests it gets; the browser also records every request it makes. The target: none reaches a host
other than the app's, and the only clickable links are records' own http(s) urls (and the [n] anchors)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import start_rag, write_jsonl
from test_ui import CHROMIUM_ARGS

from rag.index.ingest import ingest
from rag.settings import Settings

pytestmark = pytest.mark.slow
OWN_URL = "https://example.org/quillnet-paper"  # a record's own url: the one kind of link allowed


def payloads(base: str) -> list[str]:
    """Markup that would fetch from, or link to, `base` if it were rendered rather than shown."""
    return [
        f"![img]({base}/md-image.png)",
        f"[link]({base}/md-link)",
        f"[ref][r] [r]: {base}/ref-link",
        f"<{base}/autolink>",
        f"{base}/bare-url",
        "www.example.com/www-autolink",
        "reader@example.com",
        f'<img src="{base}/img-tag.png">',
        f'<iframe src="{base}/iframe"></iframe>',
        f'<link rel="stylesheet" href="{base}/link.css">',
        f'<base href="{base}/base/">',
        f'<a href="{base}/a-tag">a</a>',
        f'<svg><image href="{base}/svg.png"/></svg>',
        f"$$\\url{{{base}/katex-url}}$$",
        f"$\\href{{{base}/katex-href}}{{x}}$",
        f"a` ![c]({base}/code-span.png) `b",
        f"``` ![f]({base}/fence.png)",
    ]


class Listener:
    """A local HTTP server counting the requests that reach it."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def payload_records(base: str) -> list[dict]:
    """QuillNet papers, each sentence naming QuillNet beside a payload, and payloads in every other field."""
    records = []
    for i, payload in enumerate(payloads(base)):
        records.append({
            "doc_id": f"quill{i}",
            "title": f"QuillNet {payload}",
            "authors": f"Ada {payload}; Grace Hopper",
            "venue": f"QV{i} {payload}"[:60],
            "year": 2020 + i % 5,
            "url": OWN_URL if i == 0 else f"javascript:fetch('{base}/js-url')",
            "keywords": f"quill; {payload}",
            "abstract": f"QuillNet parses scanned manuscripts {payload} with a pen-stroke model. "
                        f"QuillNet reads {payload} ink traces at 98% accuracy.",
        })  # fmt: skip
    return records


@pytest.fixture(scope="module")
def listener():
    found = Listener()
    yield found
    found.server.shutdown()


@pytest.fixture(scope="module")
def payload_app(tmp_path_factory, model_cache, listener):
    """A `rag ui` over the payload corpus (the extractive backend: the answer quotes the abstracts verbatim)."""
    data = tmp_path_factory.mktemp("safety") / "data"
    settings = Settings(_env_file=None, data_dir=data, model_cache=model_cache)
    ingest([write_jsonl(data.parent / "payload.jsonl", payload_records(listener.base))], settings)
    log = data.parent / "ui.log"
    proc, base = start_rag("ui", data, model_cache, log, "/", RAG_LLM_BACKEND="extractive")
    url = f"{base}/"
    yield SimpleNamespace(url=url, origin=url.rstrip("/"), log=log, data=data)
    proc.terminate()
    proc.wait(timeout=30)


CONTENT = "#chat, #sources, #summary, #summary-sources, #verifier-note, #corpus-line, #library, #ingest-report"


def links(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The hrefs of clickable links in the parts of the page that show stored or typed text ([n] anchors aside)."""
    hrefs = page.evaluate(
        f"() => [...document.querySelectorAll('{CONTENT}')].flatMap(root => "
        "[...root.querySelectorAll('a[href]')].map(a => a.getAttribute('href')))"
    )
    return [href for href in hrefs if not href.startswith("#")]


def test_no_payload_is_fetched_or_linked_from_any_page_state(payload_app, listener, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 950}, accept_downloads=True)
        page = context.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(payload_app.url)
        page.wait_for_selector("#corpus-line :text('abstracts')")
        seen_links: list[str] = links(page)

        # The chat: a question holding payloads, answered by quoting the payload sentences; every source opened.
        question = f"How does QuillNet parse manuscripts? ![q]({listener.base}/question.png) {listener.base}/q"
        page.fill("#question textarea", question)
        page.press("#question textarea", "Enter")
        page.wait_for_selector("#sources details[id^='src-t1-']", timeout=120_000)
        page.wait_for_timeout(500)
        page.evaluate("() => document.querySelectorAll('#sources details').forEach(d => d.open = true)")
        chat = page.inner_text("#chat")
        assert "QuillNet" in chat and "question.png" in chat  # the question and the payloads shown as text
        seen_links += links(page)

        # Export: the conversation as Markdown, and the references.
        page.click("#export")
        page.wait_for_selector("#download a", timeout=30_000)
        with page.expect_download() as download:
            page.locator("#download a").first.click()
        exported = download.value.path().read_text(encoding="utf-8")

        # Summarize a topic holding payloads.
        page.get_by_role("tab", name="Summarize").click()
        page.fill("#topic textarea", f"QuillNet manuscripts <img src={listener.base}/topic.png>")
        page.click("#summarize")
        page.wait_for_selector("#summary-sources details", timeout=120_000)
        page.evaluate("() => document.querySelectorAll('#summary-sources details').forEach(d => d.open = true)")
        seen_links += links(page)

        # The library: every paper listed; an upload whose rejected records quote payloads.
        page.get_by_role("tab", name="Library").click()
        page.wait_for_selector("#library :text('quill0')")
        upload = tmp_path / "payload-upload.jsonl"
        bad = [{"doc_id": "quill-new", "abstract": f"QuillNet again. {payloads(listener.base)[0]}", "year": y}
               for y in (f"![y]({listener.base}/year.png)", f"`x` ![y]({listener.base}/year-code.png) `")]  # fmt: skip
        dup = {"doc_id": f"dup` ![d]({listener.base}/dup.png) `", "abstract": "QuillNet twice."}
        upload.write_text("\n".join(json.dumps(r) for r in [*bad, dup, dup]) + "\n", encoding="utf-8")
        page.set_input_files("#upload input[type=file]", str(upload))
        page.click("#ingest")
        page.wait_for_selector("#ingest-report :text('rejected')", timeout=120_000)
        report = page.inner_text("#ingest-report")
        assert "year.png" in report and "dup.png" in report  # the rejected values, shown as text
        seen_links += links(page)

        # An upload of an unknown kind: the error names the file, not where the server keeps it.
        (tmp_path / "notes.json").write_text("not a corpus file\n", encoding="utf-8")
        page.set_input_files("#upload input[type=file]", str(tmp_path / "notes.json"))
        page.click("#ingest")
        toast = page.wait_for_selector("[data-testid=toast-text]:has-text('not a kind of file')", timeout=60_000)
        assert toast.inner_text().startswith("notes.json: not a kind of file"), toast.inner_text()
        page.wait_for_timeout(1000)

        # The export, rendered as a Markdown viewer would (CommonMark), in the browser.
        from markdown_it import MarkdownIt

        viewer = context.new_page()
        viewer.on("request", lambda request: requested.append(request.url))
        viewer.set_content(MarkdownIt("commonmark").enable("table").render(exported))
        viewer.wait_for_timeout(500)
        export_links = viewer.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
        browser.close()

    outside = [url for url in requested if not url.startswith(payload_app.origin) and not url.startswith("data:")]
    assert outside == [] and listener.hits == []
    assert set(seen_links) <= {OWN_URL} and OWN_URL in seen_links  # the one record with a web url links to it
    assert export_links == [] and "question\\.png" in exported
