"""Models prepared once per machine: the user's cache by default, keyed by the model's checksum and the ONNX
Runtime version, one process preparing at a time, damaged files made again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from rag.index.models import load_embedder
from rag.model_cache import SIZES, export_folder, read_sizes
from rag.onnx import bundled_model_dir
from rag.settings import Settings

TEXTS = ["Graph neural networks oversmooth as they grow deeper.", "Serum hCG was measured by five immunoassays."]


def test_the_default_cache_is_the_users_and_shared_by_every_data_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RAG_MODEL_CACHE", raising=False)
    one, two = (Settings(_env_file=None, data_dir=tmp_path / name) for name in ("one", "two"))
    assert one.model_cache_dir == two.model_cache_dir == tmp_path / "xdg" / "abstracts-rag" / "models"
    mine = Settings(_env_file=None, data_dir=tmp_path, model_cache=tmp_path / "mine")
    assert mine.model_cache_dir == tmp_path / "mine"


def test_the_cache_folder_is_named_by_the_models_checksum_and_the_runtime(model_cache: Path, tmp_path: Path) -> None:
    from importlib.metadata import version

    folder = export_folder(model_cache, "model", bundled_model_dir())
    assert folder.name.endswith(f"-ort{version('onnxruntime')}")
    copy = tmp_path / "model"  # the same files elsewhere: the same folder (a copy of a model is not exported again)
    shutil.copytree(bundled_model_dir(), copy)
    assert export_folder(model_cache, "model", copy) == folder
    (copy / "config.json").write_text((copy / "config.json").read_text().replace("}", ', "changed": 1}', 1))
    assert export_folder(model_cache, "model", copy) != folder  # a changed model is a new folder


@pytest.mark.slow  # a subprocess or server: not in `make check`
def test_two_processes_preparing_at_once_share_one_export(tmp_path: Path) -> None:
    """Both start on an empty cache: one prepares while the other waits, then both use the same files."""
    cache = tmp_path / "cache"
    env = {**os.environ, "RAG_MODEL_CACHE": str(cache), "RAG_EMBEDDING_PRECISION": "int8"}
    command = [sys.executable, "-m", "rag.index.models"]
    runs = [subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [run.communicate(timeout=600)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], errors
    assert sum("waiting for another process preparing the model" in e for e in errors) == 1, errors
    [folder] = [p for p in cache.iterdir() if p.is_dir()]
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["model-int8.json", "model-int8.onnx", "model.onnx", SIZES], names  # no temporary files left
    assert read_sizes(folder) == {n: (folder / n).stat().st_size for n in names if n.endswith(".onnx")} | {
        "model-int8.json": (folder / "model-int8.json").stat().st_size}  # fmt: skip


def test_a_damaged_model_file_is_found_and_made_again(model_cache: Path, tmp_path: Path, capfd) -> None:
    expected = load_embedder("", model_cache, precision="int8").embed(TEXTS)
    prepared = export_folder(model_cache, "model", bundled_model_dir())
    cache = tmp_path / "cache"
    shutil.copytree(prepared, cache / prepared.name)
    shutil.copy(model_cache / "checksums.json", cache / "checksums.json")
    int8 = cache / prepared.name / "model-int8.onnx"
    with int8.open("r+b") as file:
        file.truncate(int8.stat().st_size // 2)  # a copy cut short
    embedder = load_embedder("", cache, precision="int8")
    assert f"note: {int8} is damaged or incomplete; preparing it again" in capfd.readouterr().err
    assert embedder.precision == "int8" and int8.stat().st_size == read_sizes(int8.parent)["model-int8.onnx"]
    assert np.allclose(embedder.embed(TEXTS), expected, atol=1e-5)
