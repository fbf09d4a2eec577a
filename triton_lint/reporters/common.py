"""Helpers the report formats share: repo-relative paths, fingerprints, rule lookup."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from triton_lint.finding import Finding, Severity
from triton_lint.fingerprint import fingerprint
from triton_lint.rules import rules_by_code
from triton_lint.run import RunResult

#: Where rule pages live; SARIF `helpUri` and Markdown links point here.
RULES_URL = "https://github.com/triton-lint/triton-lint/blob/main/rules/{code}.md"
INFORMATION_URI = "https://github.com/triton-lint/triton-lint"

SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def relative_path(path: str, root: Path | None = None) -> str | None:
    """``path`` relative to ``root`` (default: the working directory) in POSIX form.

    None when the path lies outside the root (or is standard input's ``-``).
    """
    return _relative(path, os.fspath(root) if root is not None else os.getcwd())


@lru_cache(maxsize=8192)
def _relative(path: str, root_name: str) -> str | None:
    if path == "-":
        return None
    root = Path(root_name).resolve()
    try:
        absolute = Path(os.path.abspath(path))
        relative = absolute.relative_to(root)
    except ValueError:
        try:
            relative = Path(path).resolve().relative_to(root)
        except (OSError, ValueError):
            return None
    return PurePosixPath(*relative.parts).as_posix()


def display_path(path: str, root: Path | None = None) -> str:
    """The repo-relative path when there is one, else the path as given."""
    return relative_path(path, root) or path


def uri_for(path: str, root: Path | None = None) -> tuple[str, bool]:
    """(uri, relative): a percent-encoded repo-relative URI, or an absolute ``file:`` URI."""
    relative = relative_path(path, root)
    if relative is not None:
        return quote(relative), True
    if path == "-":
        return "stdin", True
    return Path(path).resolve().as_uri(), False


def source_texts(result: RunResult) -> dict[str, str]:
    """Decoded text of every linted file, by the path findings carry."""
    return {f.path: f.text for f in result.files if f.text is not None}


def fingerprints(result: RunResult) -> dict[int, str]:
    """id(finding) -> fingerprint, for every finding of the run."""
    texts = source_texts(result)
    return {id(f): fingerprint(f, texts.get(f.path)) for f in result.findings}


def by_severity(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (SEVERITY_RANK[f.severity], f.sort_key()))


def dynamic_code_docs() -> dict[str, object]:
    """Metadata of the dynamic checks (``triton_lint.dynamic.codes.CODES``) when installed.

    The dynamic engine lives in its own package; reports describe its codes when it is there
    and fall back to what the findings carry otherwise. Importing it never imports torch.
    """
    try:
        from triton_lint.dynamic.codes import CODES  # type: ignore[import-not-found]
    except ImportError:
        return {}
    return dict(CODES)


def how_to_fix(code: str) -> str | None:
    """The documented fix of a static rule or dynamic check, None when unknown."""
    rule = rules_by_code().get(code)
    if rule is not None:
        return rule.fix
    docs = dynamic_code_docs().get(code)
    return getattr(docs, "fix", None)
