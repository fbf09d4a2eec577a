"""Project indexes of small packages written into a test's temporary directory."""

from __future__ import annotations

from pathlib import Path

from triton_lint.project.index import ProjectIndex


def project_index(tmp_path: Path, files: dict[str, str]) -> ProjectIndex:
    """The index of ``files`` (relative path -> text), written under ``tmp_path``."""
    entries = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        entries.append((name, path, text.encode()))
    return ProjectIndex(entries)
