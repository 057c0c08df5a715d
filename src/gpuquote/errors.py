"""Errors shared by every layer. BadInput maps to exit code 2 and a one-line message."""

from __future__ import annotations


class GpuquoteError(Exception):
    """Base class; an uncaught one is an internal error (exit 1)."""

    exit_code = 1


class BadInput(GpuquoteError):
    """Invalid user input: one line naming the field and the accepted values (exit 2)."""

    exit_code = 2

    def __init__(self, message: str, *, field: str | None = None, accepted: list[str] | None = None):
        self.field = field
        self.accepted = accepted
        self.message = message  # may be an i18n.Msg: the interface shows it in the reader's language
        super().__init__(message)

    def to_dict(self) -> dict:
        return {"error": str(self), "field": self.field, "accepted": self.accepted}


class StoreError(BadInput):
    """The catalog store cannot be opened or written (bad path, corrupt file): exit 2, nothing written."""
