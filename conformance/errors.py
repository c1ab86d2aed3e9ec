"""The one error hierarchy of conform; each class carries the exit code the CLI ends with."""

from __future__ import annotations


class ConformError(Exception):
    """A problem the user can fix: printed as one line at the CLI boundary, never a traceback."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self):
        # Raised in a worker process, it is sent to the main process and raised there again.
        return type(self), (self.message,)


class UsageError(ConformError):
    """Bad command-line input: unknown op, opset out of range, a dtype the version does not allow."""


class CaseFileError(ConformError):
    """A case file that cannot be loaded; names the file and line of every problem found."""

    def __init__(self, problems: list[tuple[str, int | None, str]]) -> None:
        self.problems = problems
        super().__init__("\n".join(_locate(path, line) + msg for path, line, msg in problems))

    def __reduce__(self):
        return CaseFileError, (self.problems,)


class UnavailableError(ConformError):
    """A provider, runner or backend that is not available on this machine."""

    exit_code = 3


class OutputError(ConformError):
    """A report, golden test or other file conform was asked to write that cannot be written there."""

    exit_code = 4


def _locate(path: str, line: int | None) -> str:
    return f"{path}:{line}: " if line is not None else f"{path}: "
