"""What a rule is: its documentation, its defaults and its check.

A rule module defines one subclass of `Rule`. Everything the docs (`triton-lint rule CODE`,
`rules/CODE.md`, SARIF rule metadata) say about a rule comes from these attributes, and the
examples are run as tests: the ``bad`` example must produce the rule's code on every line
marked ``# <- CODE`` and nowhere else, the ``good`` example must produce nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import libcst as cst

from triton_lint.finding import Category, Edit, Finding, Fix, Severity, Span
from triton_lint.model.kernel import Kernel, ModuleModel


class Rule:
    """Base class of every static rule; subclasses set the metadata and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[Category]
    severity: ClassVar[Severity]
    default_enabled: ClassVar[bool] = True
    summary: ClassVar[str]
    rationale: ClassVar[str]
    fix: ClassVar[str]
    bad: ClassVar[str]
    good: ClassVar[str]
    #: How reliable the rule is, for SARIF consumers: very-high, high, medium or low.
    precision: ClassVar[str] = "high"
    #: The rule judges code against upstream Triton's API and code generator, so it does not
    #: apply to code written for a vendor fork (see `fork-backends`).
    upstream_only: ClassVar[bool] = False
    #: A finding stands for several occurrences of one root cause in a kernel, and its related
    #: locations are the other occurrences (not evidence): benchmarks count each of them.
    groups_occurrences: ClassVar[bool] = False

    def check(self, module: ModuleModel) -> Iterator[Finding]:
        """Yield findings for one file; the default visits each kernel."""
        for kernel in module.kernels:
            yield from self.check_kernel(kernel)

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        return iter(())

    def finding(
        self,
        kernel: Kernel,
        node: cst.CSTNode,
        message: str,
        *,
        top: cst.CSTNode | None = None,
        severity: Severity | None = None,
        fix: Fix | None = None,
    ) -> Finding:
        """A finding at ``node``; ``top`` is needed for nodes outside the kernel (launches, in
        this file or, for a launch elsewhere in the project, in that file)."""
        span = kernel.module.span(top, node) if top is not None else kernel.span(node)
        path = kernel.module.owner(top).path
        finding = self.finding_at(path, span, message, kernel.name, severity)
        finding.fix = fix
        return finding

    @staticmethod
    def replace_node(
        kernel: Kernel, node: cst.CSTNode, new: cst.CSTNode | str, top: cst.CSTNode | None = None
    ) -> Edit:
        """An edit replacing ``node``'s text with ``new`` (a node is rendered by libcst)."""
        span = kernel.module.span(top, node) if top is not None else kernel.span(node)
        content = new if isinstance(new, str) else kernel.module.module.code_for_node(new)
        return Edit(span, content)

    @staticmethod
    def delete_lines(kernel: Kernel, node: cst.CSTNode) -> Edit:
        """An edit removing the whole lines ``node`` spans (e.g. a debug statement)."""
        span = kernel.span(node)
        return Edit(Span(span.line, 1, span.end_line + 1, 1), "")

    def finding_at(
        self,
        path: str,
        span: Span,
        message: str,
        kernel: str | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        return Finding(
            path=path,
            span=span,
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            category=self.category,
            message=message,
            kernel=kernel,
        )
