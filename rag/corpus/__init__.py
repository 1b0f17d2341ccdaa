"""Corpus files to papers and papers to chunks: the first steps of the write path."""

from rag.corpus.chunker import chunk_paper
from rag.corpus.loaders import SUFFIXES, LoadResult, Problem, collect_files, load_corpus, read_jsonl

__all__ = ["SUFFIXES", "LoadResult", "Problem", "chunk_paper", "collect_files", "load_corpus", "read_jsonl"]
