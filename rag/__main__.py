"""`python -m rag`: the command line, as the `rag` script runs it."""

from rag.frontends.cli import run

run()
