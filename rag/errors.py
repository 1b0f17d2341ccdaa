"""Exceptions the presenters turn into exit codes and readable messages."""


class BadInput(ValueError):
    """The user's input or usage is wrong; the message is a one-line reason (exit code 2)."""


class StoreUnavailable(RuntimeError):
    """The index's store (a Milvus or Chroma server) cannot be reached; the message names it (HTTP 503)."""
