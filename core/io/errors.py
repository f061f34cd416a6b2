"""The one error type every reader raises for malformed input."""

from __future__ import annotations


class MocapFormatError(ValueError):
    """A motion file could not be read: says which file, which line (1-based) and what is wrong."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class MocapWriteError(ValueError):
    """A motion could not be written as asked: says which file, which joint (if any) and why.

    Writers raise it before they create or touch the file, so a refusal leaves nothing behind.
    """

    def __init__(self, path: str, problem: str, joint: str | None = None) -> None:
        self.path = str(path)
        self.joint = joint
        self.problem = problem
        what = f"joint {joint!r}: " if joint is not None else ""
        super().__init__(f"cannot write {self.path}: {what}{problem}")
