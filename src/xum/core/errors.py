"""Typed errors. Every user-facing error says what went wrong and what to do about it."""

from __future__ import annotations


class XumError(Exception):
    """Base of every error xum raises on purpose.

    `message` says what went wrong; `hint` says what the user can do next. `code` is a stable,
    machine-readable name used in `--json` output and API responses.
    """

    code = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message

    def to_dict(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out


class ConfigError(XumError):
    """A config file that cannot be used. Names the file, and the line and column when known."""

    code = "config_error"

    def __init__(
        self,
        message: str,
        *,
        path: str,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = path if line is None else f"{path}:{line}:{column or 1}"
        super().__init__(
            f"{where}: {message}",
            hint=hint
            or "fix the file by hand (xum never overwrites a file it cannot parse); "
            "`xum doctor` still works and reports every problem it finds",
        )
        self.path = path
        self.line = line
        self.column = column


class StoreError(XumError):
    code = "store_error"


class SessionBusyError(StoreError):
    """Another process holds the session's writer lock."""

    code = "session_busy"


class SessionChangedError(StoreError):
    """The session log changed under a writer; the append is refused instead of overwriting."""

    code = "session_changed"


class UsageError(XumError):
    code = "usage_error"
