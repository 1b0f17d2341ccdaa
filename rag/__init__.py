"""Retrieval-augmented Q&A over scientific paper abstracts, with every claim cited."""

__version__ = "0.1.0"
