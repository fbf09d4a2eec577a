"""TL210: a ``tl.*``/``tl.math.*``/``libdevice.*`` name or keyword that does not exist."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.api import ApiTable, available_versions, load_table
from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL
from triton_lint.model.tree import iter_nodes
from triton_lint.model.usage import Usage
from triton_lint.rules._unused import unused_as_information
from triton_lint.rules.base import Rule
from triton_lint.target import minor

_LIBDEVICE = ("libdevice", "libdevice_cuda", "libdevice_hip")
#: Extensions of vendor forks of Triton (Triton-Ascend, Cambricon's): kernels written for
#: those backends use them on purpose, so they are not reported as invented names.
_FORK_EXTENSIONS = {"extract_slice", "insert_slice", "masked_select", "empty", "care_padding"}


class UnknownApi(Rule):
    code = "TL210"
    name = "unknown-api"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    upstream_only = True
    summary = "`tl.*`, `tl.math.*` or `libdevice.*` name, or keyword argument, that does not exist"
    rationale = """\
Model-written and ported kernels call functions Triton never had (`tl.relu`, `tl.async_copy`,
`tl.pointer`, `tl.math.tanh` after libdevice moved out of `tl.math`) or pass keywords a
function does not take (`tl.sum(x, mask=m)`). Python does not notice; the kernel fails with
`AttributeError` or `TypeError` at its first launch, often only on a GPU runner. The names
and signatures are read from the target Triton version's own source (the `target-version`
setting, else the installed triton), so an API added later is reported with the version that
introduced it. In a jit function that nothing in the indexed project launches or calls (a
left-over helper whose only namesakes are other files' own copies), the error waits for a
caller, and the finding is information."""
    fix = """\
Use the real API: `tl.maximum(x, 0)` for `relu`, `tl.where(m, x, 0)` before `tl.sum` instead
of `mask=`, `tl.pointer_type(tl.float16)` for `tl.pointer`, `libdevice.tanh` from
`triton.language.extra` for `tl.math.tanh`; or raise `target-version` if you require a newer
Triton."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def relu_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.relu(x)  # <- TL210
    tl.store(out_ptr, tl.sum(y, axis=0, mask=mask))  # <- TL210
"""
    good = """\
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def relu_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = libdevice.tanh(tl.maximum(x, 0.0)).to(tl.float32)
    tl.store(out_ptr, tl.sum(tl.where(mask, y, 0.0), axis=0))
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        yield from unused_as_information(kernel, self._findings(kernel))

    def _findings(self, kernel: Kernel) -> Iterator[Finding]:
        if _version_gated(kernel):
            return  # `if TRITON3: ... else: <the pre-3.0 kernel>`: written for another Triton
        version = kernel.module.target_version
        table = load_table(version)
        aliases = kernel.module.aliases
        for ref in kernel.facts(Usage).triton_refs:
            if not ref.path.startswith(TL + ".") or "." not in ref.text:
                continue  # a bare imported name fails at import time, often behind a fallback
            head = ref.text.split(".")[0]
            head_path = aliases.resolve(cst.Name(head)) or ""
            if head_path.endswith(".libdevice") and ref.text.count(".") == 1:
                leaf = ref.text.split(".")[1]
                if not any(table.has_name(m, leaf) for m in _LIBDEVICE):
                    yield self.finding(
                        kernel,
                        ref.node,
                        f"`{ref.text}` does not exist in Triton {version}'s libdevice",
                    )
                continue
            parts = ref.path[len(TL) + 1 :].split(".")
            module, name = "language", parts[0]
            if parts[0] == "math" and len(parts) == 2:
                module, name = "math", parts[1]
            elif len(parts) > 1:
                continue  # tl.extra.*, tl.core.*, attributes of real objects
            if name in _FORK_EXTENSIONS:
                continue
            if not table.has_name(module, name) and table.kind(module, name) is None:
                if table.removed_since(name, module) is not None:
                    continue  # TL208
                yield self.finding(kernel, ref.node, _unknown(ref.text, module, name, version))
                continue
            if ref.call is not None:
                yield from self._arguments(kernel, table, module, name, ref.text, ref.call)

    def _arguments(
        self, kernel: Kernel, table: ApiTable, module: str, name: str, text: str, call: cst.Call
    ) -> Iterator[Finding]:
        signature = table.signature(module, name)
        if signature is None or table.kind(module, name) == "class":
            return
        removed = table.removed_params(module, name)
        if not signature.var_kwargs:
            for arg in call.args:
                if arg.keyword is None or arg.star:
                    continue
                keyword = arg.keyword.value
                if signature.accepts_keyword(keyword) or keyword in removed:
                    continue
                if keyword in _FORK_EXTENSIONS:
                    continue
                yield self.finding(
                    kernel,
                    arg,
                    f"`{text}` takes no keyword `{keyword}` in Triton "
                    f"{kernel.module.target_version} (parameters: {signature})",
                )
        limit = signature.max_positional
        positional = [a for a in call.args if a.keyword is None]
        if limit is not None and not any(a.star for a in positional) and len(positional) > limit:
            yield self.finding(
                kernel,
                positional[limit],
                f"`{text}` takes at most {limit} positional arguments {signature}",
            )


def _unknown(text: str, module: str, name: str, version: str) -> str:
    for later in available_versions():
        if minor(later) > minor(version) and load_table(later).has_name(module, name):
            return f"`{text}` does not exist in Triton {version} (added in {later})"
    return f"`{text}` does not exist in Triton {version}"


def _version_gated(kernel: Kernel) -> bool:
    """The kernel is defined in an arm of a module-level ``if`` on the installed Triton's
    version (``if TRITON3:`` with ``TRITON3 = version.parse(triton.__version__) >= ...``):
    the file picks the definition written for the Triton it runs on."""
    top = kernel.top
    if not isinstance(top, cst.If):
        return False
    code = kernel.module.module.code_for_node
    texts = [code(top.test)]
    for node in iter_nodes(top.test):
        if isinstance(node, cst.Name) and node.value in kernel.module.globals:
            value = kernel.module.globals[node.value].value
            if value is not None:
                texts.append(code(value))
    return any("version" in text.lower() for text in texts)
