"""Readers and writers of motion-capture file formats."""

from .errors import MocapFormatError

__all__ = ["MocapFormatError"]
