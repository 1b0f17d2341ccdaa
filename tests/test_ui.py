"""The Gradio app in a real headless Chromium (Playwright), served by a real `rag ui` process."""

from __future__ import annotations

import json
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from conftest import SEEDS, free_port, start_rag, write_jsonl

from rag.corpus.loaders import load_corpus
from rag.index.ingest import ingest
from rag.settings import Settings

LEAK = (
    "The LeakyNet detector flags exfiltration pixels ![a](http://leak.invalid/answer.png) in outgoing images. "
    "LeakyNet reaches 99% recall on the LeakBench benchmark."
)
PAYLOAD = (
    "We propose XSSGuard, a filter that sanitizes untrusted web inputs before rendering. "
    "Its test pages contain <script>alert('xss')</script> and <img src=x onerror=alert(1)> payloads. "
    "XSSGuard blocks every payload in our benchmark of browser exploits."
)
LONG = (
    "SpanNet encodes genomes as one unbroken token: " + "ACGT" * 2500 + ". "
    "SpanNet reads the unbroken genome token without splitting it."
)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory, model_cache):
    """A `rag ui` process on the seeds and three hostile abstracts: its URL and its log."""
    data = tmp_path_factory.mktemp("ui-data")
    settings = Settings(_env_file=None, data_dir=data, model_cache=model_cache)
    payload = write_jsonl(
        data / "payload.jsonl",
        [{"doc_id": "xss1", "venue": "SEC", "year": 2023, "abstract": PAYLOAD},
         {"doc_id": "leak1", "venue": "![v](http://leak.invalid/venue.png)", "year": 2023, "abstract": LEAK},
         {"doc_id": "long1", "venue": "BIO", "year": 2024, "abstract": LONG}],
    )  # fmt: skip
    ingest([SEEDS, payload], settings)
    proc, base = start_rag("ui", data, model_cache, data / "ui.log", "/")
    url = f"{base}/"
    yield SimpleNamespace(url=url, log=data / "ui.log")
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def ui_url(ui_server) -> str:
    return ui_server.url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(browser, log: Path | None, **context_options):  # type: ignore[no-untyped-def]
    """A page in a fresh browser context; it records dialogs and knows the app's log file (None: this process)."""
    page = browser.new_context(**context_options).new_page()
    page.dialogs, page.ui_log = [], log
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    return page


@pytest.fixture
def page(browser, ui_server):
    page = open_page(browser, ui_server.log, viewport={"width": 1400, "height": 950})
    page.goto(ui_server.url)
    page.wait_for_selector("#corpus-line")
    yield page
    page.context.close()


def ask(page, question: str, turn: int) -> str:
    """Ask in the chat; the answer's text once its sources show (on failure, what the chat and the app's log said)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.fill("#question textarea", question)
    page.press("#question textarea", "Enter")
    try:
        page.wait_for_selector(f"#sources details[id^='src-t{turn}-']", timeout=120_000)
    except PlaywrightTimeout:
        chat = page.inner_text("#chat") if page.locator("#chat").count() else "(no chat)"
        log = page.ui_log.read_text()[-3000:] if page.ui_log else "(the app ran in this process: see the captured log)"
        pytest.fail(f"turn {turn} got no sources.\nchat: {chat[-1500:]}\napp log: {log}")
    return page.locator("#chat [data-testid='bot']").last.inner_text()


def test_ask_open_citation_and_follow_up(page) -> None:
    assert "98 abstracts" in page.inner_text("#corpus-line") and "ICML" in page.inner_text("#corpus-line")
    answer = ask(page, "Which approach lets a protein language model work at both the residue and the atom scale?", 1)
    assert "[1]" in answer
    page.locator("#chat a.cite").first.click()  # a citation marker opens its abstract in the sources panel
    opened = page.locator("#sources details[open]").first
    assert "000_c1913070b188e76b#8" in opened.inner_text() and "ESM-AA" in opened.inner_text()
    assert opened.locator("mark").count() == 1  # the supporting quote is highlighted
    ask(page, "What does it gain through unified molecular modeling?", 2)
    assert "000_c1913070b188e76b#8" in page.inner_text("#sources")
    page.click("#export")
    page.wait_for_selector("#download a", timeout=30_000)
    page.wait_for_function("document.querySelectorAll('#download a').length >= 4", timeout=30_000)
    # The conversation, and the cited paper as references in three formats.
    links = {
        href.rsplit("/", 1)[-1]: href for href in page.eval_on_selector_all("#download a", "a => a.map(e => e.href)")
    }
    assert {"conversation.md", "references.bib", "references.ris", "references.json"} <= set(links)
    with tempfile.TemporaryDirectory() as folder:  # it reads back in with the same id
        bib = Path(folder) / "references.bib"
        bib.write_text(page.request.get(links["references.bib"]).text(), encoding="utf-8")
        assert [p.doc_id for p in load_corpus([bib]).papers] == ["000_c1913070b188e76b#8"]
    page.click("#reset")
    page.wait_for_function("!document.querySelector('#chat').innerText.includes('residue')")


def test_a_refusal_shows_the_closest_papers_not_as_support(page) -> None:
    page.fill("#question textarea", "How long should sourdough bread ferment at high altitude?")
    page.press("#question textarea", "Enter")
    page.wait_for_selector("#sources details.nearest[id^='near-t1-']", timeout=120_000)
    assert "do not answer" in page.locator("#chat [data-testid='bot']").last.inner_text()
    panel = page.locator("#sources")
    assert "not support for an answer" in panel.inner_text() and panel.locator("details.nearest").count() == 3
    first = panel.locator("details.nearest").first
    assert first.get_attribute("open") is not None and "Words to try" in first.inner_text()
    assert panel.locator("mark").count() == 0 and page.locator("#chat a.cite").count() == 0  # nothing cited


def test_a_refusal_is_not_final_the_reader_can_have_it_answered_anyway(page) -> None:
    """The gate turns this plain-words question away (the seeds' ChatGPT example); the reader may still ask for an
    answer from the closest papers, which says so and cites what it says."""
    page.fill("#question textarea", "Is there a way to tell whether a text was written by ChatGPT?")
    page.press("#question textarea", "Enter")
    page.wait_for_selector("#sources details.nearest[id^='near-t1-']", timeout=120_000)
    page.click("#anyway")
    page.wait_for_selector("#sources details[id^='src-t2-']", timeout=120_000)
    assert "(answer anyway)" in page.locator("#chat [data-testid='user']").last.inner_text()
    assert page.locator("#chat a.cite").count() >= 1
    assert "Answered as asked" in page.inner_text("#sources .note")
    assert not page.locator("#anyway").is_visible()  # offered under a refusal only


def test_summarize_view(page) -> None:
    page.get_by_role("tab", name="Summarize").click()
    page.fill("#topic textarea", "adversarial robustness")
    page.click("#summarize")
    page.wait_for_selector("#summary-sources details", timeout=120_000)
    text = page.inner_text("#summary")
    assert "[1]" in text and "[2]" in text
    assert page.locator("#summary a.cite").count() >= 2


def test_upload_makes_a_paper_searchable(page, tmp_path: Path) -> None:
    upload = write_jsonl(
        tmp_path / "new.jsonl",
        [{"doc_id": "knit1", "venue": "NEW", "year": 2025,
          "abstract": "We teach quantum robots to knit woollen scarves. The robots learn stitches by imitation."},
         '{"broken": ']
    )  # fmt: skip
    page.get_by_role("tab", name="Library").click()
    page.set_input_files("#upload input[type=file]", str(upload))
    page.click("#ingest")
    page.wait_for_selector("#ingest-report :text('Added 1')", timeout=120_000)
    assert "rejected 1" in page.inner_text("#ingest-report") and "malformed JSON" in page.inner_text("#ingest-report")
    page.fill("#library-query textarea", "robots that knit scarves")
    page.press("#library-query textarea", "Enter")
    page.wait_for_selector("#library :text('knit1')", timeout=30_000)

    # A reference manager's RIS export, and the library filtered by one of its authors.
    ris = tmp_path / "export.ris"
    ris.write_text("TY  - JOUR\nTI  - Knitting robots at sea\nAU  - Ødegård, Kari\nPY  - 2025\nDO  - 10.5555/KNIT.1\n"
                   "AB  - Robots knit sweaters for sailors on long voyages.\nER  - \n", encoding="utf-8")  # fmt: skip
    page.set_input_files("#upload input[type=file]", str(ris))  # beside the first file, which is unchanged
    page.click("#ingest")
    page.wait_for_selector("#ingest-report :text('unchanged 1')", timeout=120_000)
    page.fill("#library-query textarea", "")
    page.fill("#library-author textarea", "ødegÅrd")
    page.press("#library-author textarea", "Enter")
    page.wait_for_function("document.querySelector('#library').innerText.includes('doi:10.5555/knit.1')",
                           timeout=30_000)  # fmt: skip
    assert "knit1" not in page.inner_text("#library") and "ICML" not in page.inner_text("#library")  # only it


def test_script_payload_renders_inert(page) -> None:
    ask(page, "How does XSSGuard sanitize untrusted web inputs?", 1)
    page.locator("#sources details summary").first.click()
    sources = page.inner_text("#sources")
    assert "<script>alert('xss')</script>" in sources and "onerror=alert(1)" in sources  # shown as text
    assert page.dialogs == []  # and nothing ran
    assert page.locator("#sources script, #chat script, #sources img, #chat img[src=x]").count() == 0


def test_two_sessions_keep_separate_histories(browser, ui_server) -> None:
    pages = []
    for _ in range(2):
        pages.append(open_page(browser, ui_server.log))
        pages[-1].goto(ui_server.url)
        pages[-1].wait_for_selector("#corpus-line")
    ask(pages[0], "What is ESM-AA?", 1)
    ask(pages[1], "What is Jumanji?", 1)
    assert "ESM-AA" in pages[0].inner_text("#chat") and "Jumanji" not in pages[0].inner_text("#chat")
    assert "Jumanji" in pages[1].inner_text("#chat") and "ESM-AA" not in pages[1].inner_text("#chat")
    ask(pages[1], "Who designed it to be fast?", 2)  # a follow-up in session 2 stays on session 2's topic
    assert "002_bf171d658999aba6#1" in pages[1].inner_text("#sources")
    for p in pages:
        p.context.close()


def test_gradio_client_api(ui_url) -> None:
    from gradio_client import Client

    client = Client(ui_url, verbose=False)
    data = client.predict("What is ESM-AA?", "extractive", api_name="/ask")
    data = json.loads(data) if isinstance(data, str) else data
    assert data["citations"][0]["doc_id"] == "000_c1913070b188e76b#8" and "[1]" in data["answer"]
    refused = client.predict("How long should sourdough ferment at altitude?", "extractive", api_name="/ask")
    refused = json.loads(refused) if isinstance(refused, str) else refused
    assert refused["refused"] is True and refused["citations"] == []


def test_errors_show_as_a_short_message_and_the_app_keeps_working(page) -> None:
    page.click("#ask")  # no question typed
    page.wait_for_selector("text=Type a question first.", timeout=30_000)
    assert "Traceback" not in page.content()
    assert "[1]" in ask(page, "What is ESM-AA?", 1)


@contextmanager
def scripted_page(browser, settings, engine, reply: str):  # type: ignore[no-untyped-def]
    """The app in this process, answering with a scripted LLM, opened in a real browser."""
    from scripted import ScriptedLLM

    from rag.engine import Engine
    from ui.app import build_app

    app = build_app(Engine(settings, llm=ScriptedLLM(reply), embedder=engine.library.embedder))
    port = free_port()
    app.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    page = open_page(browser, None)
    try:
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#corpus-line")
        yield page
    finally:
        page.context.close()
        app.close()


def test_a_contradicted_sentence_is_shown_in_the_verifier_note(browser, seeds_settings, engine) -> None:
    reply = (
        "We find that using SAM alone can improve adversarial robustness [1]. "
        "Using SAM alone cannot improve adversarial robustness [1]."
    )
    accusing = seeds_settings.model_copy(update={"entailment_contradict": 0.7})  # the shipped model accuses nothing
    with scripted_page(browser, accusing, engine, reply) as page:
        answer = ask(page, "Can sharpness-aware minimization alone improve adversarial robustness?", 1)
        assert "cannot" not in answer and "[1]" in answer
        note = page.inner_text("#verifier-note")
        assert "contradicted by [1]" in note and "SAM alone can improve adversarial robustness" in note


def test_an_unverified_sentence_looks_different_and_cites_nothing(browser, seeds_settings, engine) -> None:
    """RAG_UNVERIFIED=show: the sentence no abstract confirms is set apart and links nowhere."""
    unverified = "SAM alone improves adversarial robustness on every dataset ever studied"
    reply = f"We find that using SAM alone can improve adversarial robustness [1]. {unverified} [1]."
    showing = seeds_settings.model_copy(update={"unverified": "show"})
    with scripted_page(browser, showing, engine, reply) as page:
        ask(page, "Can sharpness-aware minimization alone improve adversarial robustness?", 1)
        marked = page.locator(".unverified").last
        assert unverified in marked.inner_text() and "not verified" in marked.inner_text()
        assert marked.locator("a.cite").count() == 0
        assert marked.locator("em").evaluate("e => getComputedStyle(e).fontStyle") == "italic"
        assert "1 sentence(s) shown unverified" in page.inner_text("#verifier-note")


def test_a_removed_sentence_is_listed_with_why_apart_from_the_answer(browser, seeds_settings, engine) -> None:
    """By default (RAG_UNVERIFIED=drop) a sentence no abstract confirms is not part of the answer, but the reader
    can open it, with what the checks found, under the sources: an unsure judgement is never silent."""
    removed = "SAM alone improves adversarial robustness on every dataset ever studied"
    reply = f"We find that using SAM alone can improve adversarial robustness [1]. {removed} [1]."
    with scripted_page(browser, seeds_settings, engine, reply) as page:
        answer = ask(page, "Can sharpness-aware minimization alone improve adversarial robustness?", 1)
        assert removed not in answer and "[1]" in answer
        listed = page.locator("#sources details.removed")
        assert "1 sentence(s) removed" in listed.locator("summary").inner_text()
        listed.locator("summary").click()
        shown = listed.inner_text()
        assert removed in shown and "the abstract never claims 'every'" in shown
        assert "listed under the sources" in page.inner_text("#verifier-note")


def test_markdown_images_in_corpus_text_are_never_fetched(browser, ui_server) -> None:
    page = open_page(browser, ui_server.log)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(ui_server.url)
    page.wait_for_selector("#corpus-line :text('abstracts')")
    shown = page.inner_text("#corpus-line").replace("\\", "")  # (a linkified URL keeps its escapes visible)
    assert "![v](http://leak.invalid/venue.png)" in shown  # the venue, shown as text
    answer = ask(page, "How does the LeakyNet detector flag exfiltration pixels?", 1)
    assert "LeakyNet" in answer
    assert not [url for url in requested if "leak.invalid" in url]
    assert page.locator("#chat img, #corpus-line img").count() == 0
    page.context.close()


def test_markdown_in_answers_and_drafts_is_escaped() -> None:
    from ui.render import answer_html, draft_html

    image = "![a](http://leak.invalid/x.png)"
    for html_text in (answer_html(f"LeakyNet works {image} well [1]."), draft_html(["Done [1]."], image)):
        assert "![" not in html_text and "\\!\\[a\\]\\(http\\:\\/\\/leak\\.invalid\\/x\\.png\\)" in html_text
    assert '<a class="cite" href="#src-1">[1]</a>' in answer_html("LeakyNet works [1].")


def test_the_verifier_note_reads_the_kind_of_a_dropped_sentence_not_its_wording() -> None:
    from rag.records import Answer, DroppedSentence, VerifierReport
    from ui.render import verifier_note

    dropped = [
        DroppedSentence(
            "SAM hurts robustness.", "contradicted by [2]", "SAM improves robustness.", "d", "contradicted"
        ),
        DroppedSentence(
            "Contradicted by nothing at all.", "contradicted by the wording alone", None, None, "off_topic"
        ),
    ]
    report = VerifierReport(dropped=2, dropped_sentences=dropped)
    note = verifier_note(Answer("q", "a", False, [], "extractive", {}, report))
    assert note == (
        "Verifier: 1 unsupported sentence(s) removed (listed under the sources); removed “SAM hurts robustness\\.”, "
        "contradicted by [2] "
        "(“SAM improves robustness\\.”)."
    )


def test_only_web_urls_become_links() -> None:
    from ui.render import sources_html

    citation = {"n": 1, "doc_id": "x", "venue": "V", "year": 2024, "title": "T", "quote": "q", "url": ""}
    record = {"citations": [], "abstracts": {"x": "q"}, "note": None}
    for url, linked in (("javascript:alert(1)", False), ("data:text/html,hi", False), ("https://ex.org/p", True)):
        shown = sources_html({**record, "citations": [{**citation, "url": url}]})
        assert ("href=" in shown and 'rel="noopener noreferrer"' in shown) == linked and "javascript:" not in shown


def test_a_long_unbroken_string_wraps_in_the_sources_panel(page) -> None:
    ask(page, "How does SpanNet encode genomes?", 1)
    page.locator("#sources details").first.evaluate("d => d.open = true")
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.querySelector('#sources').scrollWidth]"
    )
    assert "ACGTACGT" in page.inner_text("#sources")
    assert max(widths) <= 1400, widths  # the viewport's width: nothing stretches the page sideways


def test_foreign_hosts_and_cross_origin_requests_are_refused(ui_url) -> None:
    """DNS rebinding (a foreign Host) and a page on another site calling the app's API (a foreign Origin)."""
    call = f"{ui_url}gradio_api/call/ask"
    body = {"data": ["What does SAM do?", "extractive"]}
    assert httpx.get(ui_url, headers={"Host": "evil.example.com"}).status_code == 403
    refused = httpx.post(call, json=body, headers={"Origin": "http://evil.example.com"})
    assert refused.status_code == 403 and "cross-origin" in refused.json()["error"]["message"]
    assert "access-control-allow-origin" not in refused.headers
    assert httpx.post(call, json=body, headers={"Origin": "null"}).status_code == 403
    same_origin = ui_url.rstrip("/")
    assert httpx.post(call, json=body, headers={"Origin": same_origin}).status_code == 200
    assert httpx.post(call, json=body).status_code == 200  # no Origin: not a browser's cross-site request
    assert httpx.get(ui_url, headers={"Host": "localhost"}).status_code == 200


def test_repeated_wrong_logins_lock_the_client_out(seeds_settings, engine) -> None:
    """A real app with a login, served in this process: the sixth try is refused even with the right password."""
    from rag.frontends.guard import LOGIN_FAILURES
    from ui.app import build_app, start

    settings = seeds_settings.model_copy(update={"ui_user": "ada", "ui_password": "right"})
    app = build_app(engine)
    port = free_port()
    start(app, settings, "127.0.0.1", port, block=False)
    login = f"http://127.0.0.1:{port}/login"
    try:
        assert httpx.post(login, data={"username": "ada", "password": "right"}).status_code == 200
        for _ in range(LOGIN_FAILURES):
            assert httpx.post(login, data={"username": "ada", "password": "wrong"}).status_code == 400
        locked = httpx.post(login, data={"username": "ada", "password": "right"})
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
    finally:
        app.close()


def test_the_login_lockout_grows_and_ends() -> None:
    from rag.frontends.guard import LOGIN_FAILURES, LOGIN_LOCKOUT, LoginThrottle

    throttle = LoginThrottle()
    for second in range(LOGIN_FAILURES - 1):
        throttle.failed("10.0.0.1", float(second))
    assert throttle.wait("10.0.0.1", 5.0) == 0
    throttle.failed("10.0.0.1", 5.0)
    assert throttle.wait("10.0.0.1", 5.0) == LOGIN_LOCKOUT and throttle.wait("10.0.0.2", 5.0) == 0
    throttle.failed("10.0.0.1", 40.0)  # a failure after the lockout doubles the next one
    assert throttle.wait("10.0.0.1", 40.0) == 2 * LOGIN_LOCKOUT
    assert throttle.wait("10.0.0.1", 40.0 + 2 * LOGIN_LOCKOUT) == 0
    throttle.succeeded("10.0.0.1")
    throttle.failed("10.0.0.1", 200.0)
    assert throttle.wait("10.0.0.1", 200.0) == 0


def test_allowed_hosts() -> None:
    from rag.frontends.guard import Allowed

    loopback = Allowed.of("127.0.0.1", "")
    assert loopback.host("localhost") and loopback.host("127.0.0.1") and not loopback.host("evil.example.com")
    assert Allowed.of("127.0.0.1", "papers.lab.org").host("papers.lab.org")
    assert Allowed.of("0.0.0.0", "").host("my-workstation")
    assert not Allowed.of("0.0.0.0", "papers.lab.org").host("evil.example.com")
    assert Allowed.of("127.0.0.1", "*").host("anything")


def test_the_export_marks_unverified_sentences() -> None:
    from ui.render import answer_html, markdown_export

    turn = {
        "question": "q",
        "answer": "A backed claim [1]. A claim no abstract confirms.",
        "citations": [{"n": 1, "doc_id": "d#1", "venue": "ICML", "year": 2024, "quote": "backed"}],
        "sentences": [
            {"text": "A backed claim [1].", "verified": True},
            {"text": "A claim no abstract confirms.", "verified": False},
        ],
    }
    assert "A claim no abstract confirms\\. *(not verified)*" in markdown_export([turn])
    html = answer_html(turn["answer"], "", {"A claim no abstract confirms."})
    assert html.count('class="unverified"') == 1 and html.count('class="cite"') == 1


def test_the_error_box_gets_text_not_markup_and_no_server_paths() -> None:
    """Gradio renders an error's message as HTML; its file names are cleaned by Gradio, but a message may also quote
    a question or a record."""
    from ui.app import page_error

    error = page_error("/tmp/gradio/0a1b/notes <img src=http://127.0.0.1:9/x.png>.json: not a kind of file")
    assert error.message == "notes &lt;img src=http://127.0.0.1:9/x.png&gt;.json: not a kind of file"
