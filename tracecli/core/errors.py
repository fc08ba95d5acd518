"""Errors a user can act on. Each carries the file and line at fault when one is known."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: the CLI prints it as one line and exits 2."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, source: str = ""):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.source = source  # the offending source line, stripped

    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""

    def __str__(self) -> str:
        where = self.where()
        text = f"{where}: {self.message}" if where else self.message
        if self.source:
            text += f" (at `{self.source}`)"
        return text


class TracingError(UserError):
    """The entry function did something tracing cannot follow, or raised."""
