"""The project seen from an editor: the index of each open document's project, read from disk
and rebuilt when a file is saved, so a kernel file's diagnostics use the launches and callers
elsewhere and a launching file's diagnostics come from linting the kernels it launches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from triton_lint.config import Config, ConfigError
from triton_lint.discovery import iter_python_files
from triton_lint.model.project import ProjectContext
from triton_lint.project.index import ProjectIndex
from triton_lint.project.run import MAX_PROJECT_FILES, project_root


class EditorProject:
    """Project indexes by root, for the documents of one editor session."""

    def __init__(self, config_for: Callable[[Path], Config]) -> None:
        self.config_for = config_for
        self._indexes: dict[Path, ProjectIndex] = {}

    def index_for(self, path: Path) -> ProjectIndex:
        """The index of ``path``'s project (none when its configuration cannot be read: the
        server shows that error and lints the document alone)."""
        try:
            root = project_root(path, self.config_for(path.parent).root).resolve()
            if root not in self._indexes:
                self._indexes[root] = ProjectIndex(self._entries(root))
        except ConfigError:
            return ProjectIndex([])
        return self._indexes[root]

    def _entries(self, root: Path) -> list[tuple[str, Path, bytes]]:
        entries = []
        for found in iter_python_files(root, self.config_for):
            if len(entries) >= MAX_PROJECT_FILES:
                break
            try:
                entries.append((str(found.resolve()), found.resolve(), found.read_bytes()))
            except OSError:
                continue
        return entries

    def forget(self) -> None:
        """Files changed on disk: read them again on the next lint."""
        self._indexes.clear()

    def context(self, path: Path) -> ProjectContext | None:
        return self.index_for(path).context_for(str(path.resolve()))

    def launched_kernel_files(self, path: Path, text: str) -> list[tuple[str, str, ProjectContext]]:
        """The kernel files whose lint reads ``path`` (it launches their kernels or calls the
        functions that do), each with its text and a context holding ``text``, the
        document's unsaved content."""
        index = self.index_for(path)
        display = str(path.resolve())
        found = []
        for kernel_file in sorted(index.dependents(display) - {display}):
            context = index.context_for(kernel_file)
            if context is None:
                continue
            sources = {**context.sources, display: text.encode()}
            found.append(
                (kernel_file, index.files[kernel_file].text, replace(context, sources=sources))
            )
        return found

    def related(self, saved: Path, documents: list[Path]) -> list[Path]:
        """The open documents whose diagnostics read ``saved``: those whose own lint or whose
        kernel files' lint (a launching file's) reads it, or is its lint."""
        saved_display = str(saved.resolve())
        related = []
        for document in documents:
            index = self.index_for(document)
            display = str(document.resolve())
            for kernel_file in index.dependents(display) | {display}:
                context = index.context_for(kernel_file)
                if kernel_file == saved_display or (
                    context is not None and saved_display in context.sources
                ):
                    related.append(document)
                    break
        return related
