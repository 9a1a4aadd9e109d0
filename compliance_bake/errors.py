"""One error family for the whole core.

Every error a user can cause or meet carries a one-line message, a hint that says how to fix it,
and the exit code documented in docs/commands.md (Exit codes). The CLI catches `BakeError` in
one place.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_TARGET_FAILED = 3
EXIT_INTERNAL = 4
EXIT_NOTHING_CHECKED = 5  # done, and nothing fell within the check (pytest's 5)


class BakeError(Exception):
    """Base of every user-facing error."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        text = self.message if not self.hint else f"{self.message} (fix: {self.hint})"
        # One line, always: a path or value with a newline must not split the diagnostic.
        return " ".join(text.split())


class InputError(BakeError):
    """Bad usage or bad input: an option, a fixture, a file. Nothing is written."""

    exit_code = EXIT_BAD_INPUT


class FixtureError(InputError):
    """A fixture file is malformed or says something impossible."""


class SecretError(InputError):
    """The report signing secret is missing, too weak or exposed."""


class SchemaError(InputError):
    """A bundled schema is missing or broken (an installation problem)."""


class TargetError(BakeError):
    """The compliance service under test failed: unreachable, too slow, or malformed answers."""

    exit_code = EXIT_TARGET_FAILED


class SourceError(BakeError):
    """A plays source (a database) that failed: refused the connection, broke off, or gave
    another count of rows than it holds."""

    exit_code = EXIT_TARGET_FAILED
