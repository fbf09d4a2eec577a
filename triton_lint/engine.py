"""Lint one file: decode, prefilter, parse, build the kernel model, run rules, apply noqa."""

from __future__ import annotations

import ast
import codecs
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from triton_lint import depth
from triton_lint.finding import Finding, Span
from triton_lint.model.build import build_module_model
from triton_lint.model.compiled_arms import in_dead_arm
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.parsing import parse_module
from triton_lint.model.project import ProjectContext
from triton_lint.rules import rules_by_code
from triton_lint.rules.base import Rule
from triton_lint.source import decode
from triton_lint.suppression import Suppressions, parse_suppressions
from triton_lint.target import resolve_target

#: Python accepts expressions about 3,000 levels deep; the model walks them recursively.
RECURSION_LIMIT = 20_000
#: Kernel files above this size are generated code: libcst's tree of a 10 MB file took 8.8 GB
#: of memory and more than a minute before it was stopped; the largest kernel file of seven
#: kernel libraries is 81 KB.
MAX_KERNEL_FILE_CHARS = 2_000_000


@dataclass
class FileResult:
    """Findings of one file plus what went wrong around them (warnings, rule crashes)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    text: str | None = None
    model: ModuleModel | None = None
    #: Line of the ``def`` of each kernel a finding names (reports group findings by kernel).
    kernel_lines: dict[str, int] = field(default_factory=dict)
    #: Other files of the project the findings read -> digest of what was read of each
    #: (`triton_lint.model.host_reads`): the results cache checks them before reusing these.
    reads: dict[str, str] = field(default_factory=dict)

    def to_cache(self) -> dict[str, Any]:
        """What the results cache keeps: everything a report shows, not the text or model."""
        return {
            "findings": [finding.to_dict() for finding in self.findings],
            "warnings": self.warnings,
            "kernel_lines": self.kernel_lines,
            "reads": self.reads,
        }

    @classmethod
    def from_cache(cls, path: str, data: dict[str, Any]) -> FileResult:
        return cls(
            path,
            findings=[Finding.from_dict(f) for f in data["findings"]],
            warnings=list(data["warnings"]),
            kernel_lines=dict(data["kernel_lines"]),
            reads=dict(data.get("reads", {})),
        )


def mentions_triton(text: str) -> bool:
    """Cheap prefilter: only files that mention Triton are parsed."""
    return "triton" in text


#: Byte order marks of encodings Python never reads source in (it fails on such a file).
_WIDE_BOMS = {
    codecs.BOM_UTF32_LE: "utf-32",
    codecs.BOM_UTF32_BE: "utf-32",
    codecs.BOM_UTF16_LE: "utf-16",
    codecs.BOM_UTF16_BE: "utf-16",
}


def _wide_encoding(data: bytes) -> str | None:
    """``utf-16``/``utf-32`` when ``data`` starts with that encoding's byte order mark."""
    return next((name for bom, name in _WIDE_BOMS.items() if data.startswith(bom)), None)


def may_hold_kernels(data: bytes) -> bool:
    """The prefilter on raw bytes, before decoding: a kernel file mentions both words (in
    UTF-16 or UTF-32 too, which Python cannot run: such a file gets TL001)."""
    wide = _wide_encoding(data)
    if wide is not None:
        data = data.decode(wide, errors="replace").encode()
    return b"triton" in data and b"jit" in data


#: A decorator whose last name contains ``jit`` (``@triton.jit``, ``@jit(...)``,
#: ``@triton_jit``, not ``@torch.jit.script``), or an import that renames ``jit``.
_KERNEL_HINT = re.compile(
    r"^[ \t]*@[ \t]*(?:\w+[ \t]*\.[ \t]*)*\w*jit\w*\b(?![ \t]*\.)|\bjit[ \t]+as\b", re.MULTILINE
)


def _syntax_error(path: str, line: int, column: int, message: str) -> Finding:
    rule = rules_by_code()["TL001"]
    return rule.finding_at(path, Span(line, column, line, column + 1), message)


def may_define_kernels(text: str) -> bool:
    """Kernels need a ``jit`` decorator: files without one (an import of Triton, a call of
    ``torch.jit``) are not parsed at all, not even for syntax errors."""
    return "jit" in text and _KERNEL_HINT.search(text) is not None


def _wants_tl001(rules: Sequence[Rule]) -> bool:
    return any(rule.code == "TL001" for rule in rules)


def _python_syntax(path: str, text: str) -> ast.Module | Finding:
    """The stdlib's tree of ``text``, or the TL001 finding of why Python cannot parse it.

    Python parses first: libcst's native parser overflows its stack (the process dies) on
    nesting Python itself rejects, such as thousands of nested brackets, and Python's
    message names the error better.
    """
    try:
        with warnings.catch_warnings():  # `"\d"` and the like warn about the file, not to us
            warnings.simplefilter("ignore")
            return compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        line = error.lineno or 1
        return _syntax_error(path, line, error.offset or 1, f"syntax error: {error.msg}")
    except (RecursionError, MemoryError):
        return _syntax_error(path, 1, 1, "cannot parse file: expressions nested too deeply")
    except ValueError as error:  # a NUL byte
        return _syntax_error(path, 1, 1, f"cannot parse file: {error}")


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Room for the model's recursive walks over the deepest expressions Python accepts
    (about 3,000 levels, a few frames each); the limit is restored afterwards."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def lint_bytes(
    path: str,
    data: bytes,
    rules: Sequence[Rule],
    target_version: str | None = None,
    project: ProjectContext | None = None,
) -> FileResult:
    if not may_hold_kernels(data):
        return FileResult(path)
    wide = _wide_encoding(data)
    try:
        if wide is not None:
            raise UnicodeError(
                f"it is {wide.upper()} (byte order mark); Python reads source files as UTF-8 "
                "or the encoding a coding comment names: save it as UTF-8"
            )
        text = decode(data)
    except (SyntaxError, UnicodeError, LookupError) as error:
        result = FileResult(path)
        if _wants_tl001(rules):
            result.findings.append(_syntax_error(path, 1, 1, f"cannot decode file: {error}"))
        return result
    return lint_text(path, text, rules, target_version, project)


def _suppressions_of(
    finding_path: str,
    path: str,
    own: Suppressions,
    project: ProjectContext | None,
    others: dict[str, Suppressions],
) -> Suppressions:
    """The ``noqa`` comments of the file a finding lies in (a launch in another file), read
    once per file (``others``), not once per finding."""
    if finding_path == path or project is None or finding_path not in project.sources:
        return own
    if finding_path not in others:
        try:
            others[finding_path] = parse_suppressions(decode(project.sources[finding_path]))
        except (SyntaxError, UnicodeError, LookupError):
            others[finding_path] = own
    return others[finding_path]


def lint_text(
    path: str,
    text: str,
    rules: Sequence[Rule],
    target_version: str | None = None,
    project: ProjectContext | None = None,
) -> FileResult:
    """Run ``rules`` on one file's text; a rule that crashes is recorded, the others still run.

    ``target_version`` is the Triton ``MAJOR.MINOR`` version-dependent rules check against
    (resolved by `triton_lint.target.resolve_target` when None); ``project`` the other files
    of the project its launches and callers are in (`triton_lint.project.index`). Findings
    can lie in those files (a launch there): the caller keeps those of the files it asked for.
    """
    result = FileResult(path, text=text)
    if not (mentions_triton(text) and may_define_kernels(text)):
        return result
    if len(text) > MAX_KERNEL_FILE_CHARS:
        result.warnings.append(
            f"{path}: {len(text) / 1e6:.1f} MB with kernels, more than the "
            f"{MAX_KERNEL_FILE_CHARS // 1_000_000} MB the linter reads (its syntax tree would "
            "take about a gigabyte of memory per megabyte); not linted"
        )
        return result
    suppressions = parse_suppressions(text)
    others: dict[str, Suppressions] = {}  # the other files findings lie in: their suppressions
    result.warnings.extend(f"{path}:{line}: {message}" for line, message in suppressions.warnings)
    syntax = _python_syntax(path, text)
    if isinstance(syntax, Finding):
        if _wants_tl001(rules) and not suppressions.suppresses(syntax.line, syntax.code):
            result.findings.append(syntax)
        return result
    if depth.too_deep(syntax, text):
        result.warnings.append(
            f"{path}: expressions nested more than {depth.SAFE_DEPTH} levels deep, past what the "
            "parser the linter uses can read; not linted"
        )
        return result
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as error:  # Python accepts it: syntax newer than libcst's
        if _wants_tl001(rules):
            finding = _syntax_error(
                path, error.raw_line, error.raw_column + 1, f"cannot parse: {error.message}"
            )
            if not suppressions.suppresses(finding.line, finding.code):
                result.findings.append(finding)
        return result
    with _deep_recursion():
        try:
            model = build_module_model(
                path, text, module, resolve_target(target_version), syntax, project
            )
        except RecursionError:
            result.warnings.append(f"{path}: expressions nested too deeply to analyse; not linted")
            return result
        except Exception as error:
            result.crashes.append(
                f"{path}: building the kernel model crashed: {type(error).__name__}: {error}"
            )
            return result
        result.model = model
        if not model.kernels:
            return result
        for rule in rules:
            try:
                findings = list(rule.check(model))
            except RecursionError:
                result.warnings.append(
                    f"{path}: expressions nested too deeply for rule {rule.code}; skipped"
                )
                continue
            except Exception as error:
                result.crashes.append(
                    f"{path}: rule {rule.code} crashed: {type(error).__name__}: {error}"
                )
                continue
            result.findings.extend(
                f
                for f in findings
                if not _suppressions_of(f.path, path, suppressions, project, others).suppresses(
                    f.line, f.code
                )
                and not (f.path == path and in_dead_arm(model, f.kernel, f.span))
            )
    result.findings.sort(key=Finding.sort_key)
    result.reads = dict(model.reads)
    named = {finding.kernel for finding in result.findings}
    for kernel in model.kernels:
        if kernel.name in named and kernel.name not in result.kernel_lines:
            result.kernel_lines[kernel.name] = kernel.span(kernel.node.name).line
    return result
