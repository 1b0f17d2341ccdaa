"""The one typed settings object, read from the environment and a .env file.

Every field is documented in .env.example. Most variables carry the RAG_ prefix; the Chroma server and
OpenAI variables use the names those tools document (CHROMA_HOST, OPENAI_API_KEY, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# The one list of LLM backends and retriever modes: the CLI, the UI, the evaluation configs and the settings
# all take their choices from here.
Backend = Literal["local", "openai", "openai-compatible", "extractive"]
BackendSetting = Literal["auto", Backend]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
PrecisionSetting = Literal["auto", "fp32", "int8"]  # of the embeddings (rag/index/models.py)
Mode = Literal["hybrid", "dense", "keyword"]
MODES: tuple[Mode, ...] = get_args(Mode)
VerifierKind = Literal["auto", "model", "llm", "lexical"]
Unverified = Literal["drop", "show"]  # what becomes of a sentence the judge cannot confirm
StoreKind = Literal["chroma", "milvus"]  # where chunks, vectors and the keyword index live (rag/index/stores.py)
Rewrite = Literal["auto", "on", "off"]  # whether the LLM restates a question in the papers' words before searching


def _env(name: str, *aliases: str) -> AliasChoices:
    return AliasChoices(name, *aliases)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    # Storage
    data_dir: Path = Field(Path("data"), validation_alias=_env("RAG_DATA_DIR"))
    store: StoreKind = Field("chroma", validation_alias=_env("RAG_STORE"))
    milvus_uri: str | None = Field(None, validation_alias=_env("MILVUS_URI"))
    milvus_token: str | None = Field(None, validation_alias=_env("MILVUS_TOKEN"))
    chroma_host: str | None = Field(None, validation_alias=_env("CHROMA_HOST"))
    chroma_port: int = Field(8000, validation_alias=_env("CHROMA_PORT"))
    chroma_ssl: bool = Field(False, validation_alias=_env("CHROMA_SSL"))
    collection: str = Field(
        "abstracts",
        validation_alias=_env("RAG_COLLECTION", "CHROMA_COLLECTION"),
        min_length=3,
        max_length=512,
        pattern=r"^[a-zA-Z0-9._-]+$",
    )

    # Embeddings and chunking
    embedding_model: str = Field("", validation_alias=_env("RAG_EMBEDDING_MODEL"))
    embedding_precision: PrecisionSetting = Field("auto", validation_alias=_env("RAG_EMBEDDING_PRECISION"))
    model_cache: Path | None = Field(None, validation_alias=_env("RAG_MODEL_CACHE"))
    embed_batch_size: int = Field(1, ge=1, validation_alias=_env("RAG_EMBED_BATCH_SIZE"))
    embed_workers: int = Field(0, ge=0, validation_alias=_env("RAG_EMBED_WORKERS"))
    max_abstract_chars: int = Field(100_000, ge=100, validation_alias=_env("RAG_MAX_ABSTRACT_CHARS"))
    embedding_base_url: str | None = Field(None, validation_alias=_env("RAG_EMBEDDING_BASE_URL"))
    embedding_api_model: str = Field("all-MiniLM-L6-v2", validation_alias=_env("RAG_EMBEDDING_API_MODEL"))
    embedding_api_key: str | None = Field(None, validation_alias=_env("RAG_EMBEDDING_API_KEY"))
    embedding_api_batch_size: int = Field(128, ge=1, validation_alias=_env("RAG_EMBEDDING_API_BATCH_SIZE"))
    ingest_batch_size: int = Field(128, ge=1, validation_alias=_env("RAG_INGEST_BATCH_SIZE"))
    ingest_nice: int = Field(10, ge=0, le=19, validation_alias=_env("RAG_INGEST_NICE"))
    chunk_size: int = Field(700, ge=100, validation_alias=_env("RAG_CHUNK_SIZE"))
    chunk_overlap: int = Field(1, ge=0, validation_alias=_env("RAG_CHUNK_OVERLAP"))

    # Retrieval
    top_k: int = Field(5, ge=1, le=100, validation_alias=_env("RAG_TOP_K"))
    candidates: int = Field(50, ge=1, validation_alias=_env("RAG_CANDIDATES"))
    dense_weight: float = Field(1.0, ge=0, validation_alias=_env("RAG_DENSE_WEIGHT"))
    keyword_weight: float = Field(1.0, ge=0, validation_alias=_env("RAG_KEYWORD_WEIGHT"))
    rrf_k: int = Field(60, ge=1, validation_alias=_env("RAG_RRF_K"))
    max_question_chars: int = Field(2000, ge=1, validation_alias=_env("RAG_MAX_QUESTION_CHARS"))
    rerank_model: Path | None = Field(None, validation_alias=_env("RAG_RERANK_MODEL"))
    rerank_base_url: str | None = Field(None, validation_alias=_env("RAG_RERANK_BASE_URL"))
    rerank_api_model: str = Field("", validation_alias=_env("RAG_RERANK_API_MODEL"))
    rerank_api_key: str | None = Field(None, validation_alias=_env("RAG_RERANK_API_KEY"))
    rerank_candidates: int = Field(20, ge=1, le=200, validation_alias=_env("RAG_RERANK_CANDIDATES"))
    rerank_threshold: float = Field(0.5, ge=0, le=1, validation_alias=_env("RAG_RERANK_THRESHOLD"))
    rerank_timeout_s: float = Field(10.0, gt=0, validation_alias=_env("RAG_RERANK_TIMEOUT"))

    # Answering and verification
    refusal_threshold: float | None = Field(None, ge=0, le=2, validation_alias=_env("RAG_REFUSAL_THRESHOLD"))
    refusal_dense_floor: float | None = Field(None, ge=0, le=1, validation_alias=_env("RAG_REFUSAL_DENSE_FLOOR"))
    rewrite: Rewrite = Field("auto", validation_alias=_env("RAG_REWRITE"))
    verifier: VerifierKind = Field("auto", validation_alias=_env("RAG_VERIFIER"))
    verifier_model: Path | None = Field(None, validation_alias=_env("RAG_VERIFIER_MODEL"))
    unverified: Unverified = Field("drop", validation_alias=_env("RAG_UNVERIFIED"))
    verifier_acceptance: float | None = Field(
        None, gt=0, lt=1, validation_alias=_env("RAG_VERIFIER_ACCEPTANCE")
    )  # unset: the acceptor's recorded operating point (rag/models/verifier/acceptor.json)
    entailment_support: float = Field(0.9, ge=0, le=1, validation_alias=_env("RAG_ENTAILMENT_SUPPORT"))
    entailment_contradict: float | None = Field(
        None, gt=0, le=1, validation_alias=_env("RAG_ENTAILMENT_CONTRADICT")
    )  # unset: the shipped model's operating point (rag/answer/entailment.py)
    judge_max_tokens: int = Field(600, ge=1, validation_alias=_env("RAG_JUDGE_MAX_TOKENS"))
    support_threshold: float = Field(0.6, ge=-1, le=1, validation_alias=_env("RAG_SUPPORT_THRESHOLD"))
    support_coverage: float = Field(0.75, ge=0, le=1, validation_alias=_env("RAG_SUPPORT_COVERAGE"))
    focus_margin: float = Field(0.93, gt=0, le=1, validation_alias=_env("RAG_FOCUS_MARGIN"))
    prompt_sources: int = Field(3, ge=1, le=20, validation_alias=_env("RAG_PROMPT_SOURCES"))
    prompt_chars: int = Field(300, ge=100, validation_alias=_env("RAG_PROMPT_CHARS"))
    summary_k: int = Field(8, ge=1, le=30, validation_alias=_env("RAG_SUMMARY_K"))
    chat_history_turns: int = Field(6, ge=1, le=50, validation_alias=_env("RAG_CHAT_HISTORY_TURNS"))

    # LLM
    llm_backend: BackendSetting = Field("auto", validation_alias=_env("RAG_LLM_BACKEND"))
    llm_model_path: str = Field("", validation_alias=_env("RAG_LLM_MODEL_PATH"))
    llm_context_size: int = Field(2048, ge=256, validation_alias=_env("RAG_LLM_CONTEXT_SIZE"))
    llm_threads: int = Field(2, ge=1, validation_alias=_env("RAG_LLM_THREADS"))
    llm_max_tokens: int = Field(256, ge=16, validation_alias=_env("RAG_LLM_MAX_TOKENS"))
    llm_temperature: float = Field(0.1, ge=0, le=2, validation_alias=_env("RAG_LLM_TEMPERATURE"))
    llm_seed: int = Field(0, ge=0, validation_alias=_env("RAG_LLM_SEED"))
    llm_pick_sentences: bool = Field(True, validation_alias=_env("RAG_LLM_PICK_SENTENCES"))
    llm_timeout_s: float = Field(60.0, gt=0, validation_alias=_env("RAG_LLM_TIMEOUT"))
    openai_api_key: str | None = Field(None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=_env("OPENAI_BASE_URL"))
    openai_model: str = Field("gpt-4o-mini", validation_alias=_env("RAG_OPENAI_MODEL", "OPENAI_MODEL"))
    openai_context_size: int = Field(8192, ge=2048, validation_alias=_env("RAG_OPENAI_CONTEXT_SIZE"))
    openai_abstracts: Literal["whole", "key_sentences"] = Field("whole", validation_alias=_env("RAG_OPENAI_ABSTRACTS"))

    # HTTP service (rag serve)
    api_keys: str = Field("", validation_alias=_env("RAG_API_KEYS"))
    api_concurrency: int = Field(2, ge=1, validation_alias=_env("RAG_API_CONCURRENCY"))
    api_queue: int = Field(64, ge=0, validation_alias=_env("RAG_API_QUEUE"))
    api_max_body_mb: int = Field(20, ge=1, validation_alias=_env("RAG_API_MAX_BODY_MB"))
    mcp_allow_ingest: bool = Field(False, validation_alias=_env("RAG_MCP_ALLOW_INGEST"))
    tracing: bool = Field(False, validation_alias=_env("RAG_TRACING"))
    # the learned instruction filter beside the patterns (rag/corpus/instruction_filter.py); off for a trusted corpus
    instruction_filter: bool = Field(True, validation_alias=_env("RAG_INSTRUCTION_FILTER"))

    # Web UI
    ui_user: str | None = Field(None, validation_alias=_env("RAG_UI_USER"))
    ui_password: str | None = Field(None, validation_alias=_env("RAG_UI_PASSWORD"))
    ui_max_upload_mb: int = Field(20, ge=1, validation_alias=_env("RAG_UI_MAX_UPLOAD_MB"))
    ui_concurrency: int = Field(2, ge=1, validation_alias=_env("RAG_UI_CONCURRENCY"))
    ui_queue: int = Field(512, ge=1, validation_alias=_env("RAG_UI_QUEUE"))
    allowed_hosts: str = Field("", validation_alias=_env("RAG_ALLOWED_HOSTS", "RAG_UI_ALLOWED_HOSTS"))

    @property
    def api_key_list(self) -> list[str]:
        return [key.strip() for key in self.api_keys.split(",") if key.strip()]

    @property
    def milvus_target(self) -> str:
        """Where the Milvus store is: a server's URL, or the embedded edition's folder (under the data directory
        unless MILVUS_URI names one)."""
        return self.milvus_uri or str(self.data_dir / "milvus.db")

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def model_cache_dir(self) -> Path:
        """Where models exported to ONNX are kept: once per machine (the user's cache folder) unless
        RAG_MODEL_CACHE says otherwise."""
        from rag.model_cache import user_cache

        return self.model_cache or user_cache()

    @property
    def keyword_dir(self) -> Path:
        return self.data_dir / "keyword" / self.collection
