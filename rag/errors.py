"""Exceptions the presenters turn into exit codes and readable messages."""


class BadInput(ValueError):
    """The user's input or usage is wrong; the message is a one-line reason (exit code 2)."""
