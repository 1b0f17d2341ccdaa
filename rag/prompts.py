"""Prompt templates: every prompt is a text file in prompts/ (code never embeds prompt prose)."""

from __future__ import annotations

from pathlib import Path

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


def load_prompt(name: str) -> str:
    """The template prompts/<name>.txt (read on each use, so edits apply at once; fields as in str.format)."""
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")
