"""Settings: every field is documented in .env.example, and that file is itself a valid configuration."""

from __future__ import annotations

import re

from conftest import ROOT

from rag.settings import Settings


def documented_names() -> set[str]:
    text = (ROOT / ".env.example").read_text()
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def test_every_setting_is_documented() -> None:
    names = set()
    for field in Settings.model_fields.values():
        names.add(field.validation_alias.choices[0])
    assert names <= documented_names(), names - documented_names()


def test_env_example_is_a_valid_configuration(tmp_path, monkeypatch) -> None:
    for name in documented_names():
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=ROOT / ".env.example")
    assert settings.top_k == 5 and settings.chroma_host is None and settings.llm_backend == "auto"


def test_environment_overrides(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CHROMA_HOST", "chroma.internal.example")
    monkeypatch.setenv("RAG_TOP_K", "7")
    settings = Settings(_env_file=None)
    assert (settings.data_dir, settings.chroma_host, settings.top_k) == (tmp_path, "chroma.internal.example", 7)
    assert settings.keyword_dir == tmp_path / "keyword" / "abstracts"
