"""Source bytes to text, as Python reads a module: shared by the engine and the model, which
parses the other files of a project for their launches."""

from __future__ import annotations

import io
import tokenize


def decode(data: bytes) -> str:
    """Decode source bytes as Python does (PEP 263 coding cookie, BOM); keep line endings."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)
