"""`rag serve`: the OpenAI-compatible HTTP service."""

from rag.frontends.http.app import create_app, serve

__all__ = ["create_app", "serve"]
