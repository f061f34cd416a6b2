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
