"""TL208: an API the target Triton version removed or deprecated."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.api import ApiTable, Deprecation, load_table
from triton_lint.finding import Category, Finding, RelatedLocation, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.usage import Usage
from triton_lint.rules.base import Rule

# Deprecations that depend on argument values, not on using the API at all.
_VALUE_DEPENDENT = {("language", "dot", None), ("language", "where", "condition")}
_BLOCK_POINTERS = "block pointers"
_BLOCK_POINTER_NAMES = {"make_block_ptr", "advance"}
_BLOCK_POINTER_KEYWORDS = {"boundary_check", "padding_option"}


class RemovedApi(Rule):
    code = "TL208"
    name = "removed-api"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    groups_occurrences = True
    upstream_only = True
    summary = (
        "API that the target Triton version removed (error) or deprecated (warning when a "
        "later release removes it, else info)"
    )
    rationale = """\
Triton's kernel language changes between minor releases: block pointers (`tl.make_block_ptr`,
`tl.advance`) and `tl.load(boundary_check=, padding_option=)` are gone in 3.9, the
`tl._experimental_*descriptor*` functions in 3.4, and `tl.view`, `dot(allow_tf32=)`,
`reshape/cat(can_reorder=True)`, `softmax(keep_dims=)` and `propagate_nan=` on the builtin
`min`/`max` are deprecated. A kernel using a removed API fails to compile for every user on
the new release (error). A deprecated API still works: it is a warning where a later
release removes it (block pointers targeting 3.7 or 3.8: the upgrade to 3.9 breaks the
kernel), and information where every release still accepts it (`dot(allow_tf32=)` is
deprecated since 3.3, yet 3.9 compiles it without a warning). The facts come from tables
read from each release's own source; the target is the `target-version` setting, else the
installed triton's version (package metadata), else the newest known release. A kernel gets
one finding per API: block pointers (the constructor, `tl.advance`, `boundary_check=` and
`padding_option=`) are reported once, at their first use, with the other uses as related
locations."""
    fix = """\
Move to the replacement named in the message (tensor descriptors: `tl.make_tensor_descriptor`
and `desc.load([...])`; `tl.reshape(x, shape, can_reorder=True)` for `tl.view`;
`input_precision="tf32"` for `allow_tf32=True`), or pin `target-version` to the release you
support."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, out_ptr, M, N, sm, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (sm, 1), (pid * BM, 0), (BM, BN), (1, 0))  # <- TL208
    x = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * sm + rn[None, :], x, mask=mask)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [stride_m, 1], [BLOCK_M, BLOCK_N])
    x = src.load([pid * BLOCK_M, 0])
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * stride_m + rn[None, :], x, mask=mask)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        """One finding per API (block pointers count as one) and severity in a kernel: a kernel
        written with block pointers uses them on many lines for one root cause; the other
        uses are related locations."""
        groups: dict[tuple[str, Severity], list[Finding]] = {}
        for group, finding in self._uses(kernel):
            groups.setdefault((group, finding.severity), []).append(finding)
        for (group, _severity), found in groups.items():
            found.sort(key=lambda f: (f.span.line, f.span.column))
            first, rest = found[0], found[1:]
            if rest:
                more = f"{len(rest)} more use" + ("s" if len(rest) > 1 else "")
                first.message += f" ({more} of {group} in `{kernel.name}`: related locations)"
                first.related = tuple(RelatedLocation(f.path, f.span, f.message) for f in rest)
            yield first

    def _uses(self, kernel: Kernel) -> Iterator[tuple[str, Finding]]:
        """(group, finding) for every use; the group names the API the finding is about."""
        version = kernel.module.target_version
        table = load_table(version)
        for ref in kernel.facts(Usage).triton_refs:
            if not ref.path.startswith(TL + "."):
                continue
            name = ref.path[len(TL) + 1 :]
            module = "language"
            if name.startswith("math."):
                module, name = "math", name[5:]
            if "." in name:
                continue
            removed = table.removed_since(name, module)
            if removed is not None:
                yield (
                    _group(name),
                    self.finding(
                        kernel,
                        ref.node,
                        f"`{ref.text}` was removed in Triton {removed} (target {version})"
                        + _reason(table.deprecations(module, name)),
                    ),
                )
                continue
            deprecated = [
                d
                for d in table.deprecations(module, name)
                if d.param is None and (module, name, None) not in _VALUE_DEPENDENT
            ]
            if deprecated:
                severity, outlook = _outlook(table, module, name)
                yield (
                    _group(name),
                    self.finding(
                        kernel,
                        ref.node,
                        f"`{ref.text}` is deprecated since Triton {deprecated[0].since}: "
                        f"{_first_line(deprecated[0].message)}{outlook}",
                        severity=severity,
                    ),
                )
            if ref.call is not None:
                yield from self._keywords(kernel, table, module, name, ref.text, ref.call)
        yield from self._methods_and_builtins(kernel, table)

    def _keywords(
        self, kernel, table, module, name, text, call: cst.Call
    ) -> Iterator[tuple[str, Finding]]:
        removed = table.removed_params(module, name)
        for arg in call.args:
            if arg.keyword is None or _is_none(arg.value):
                continue
            keyword = arg.keyword.value
            if keyword in removed:
                yield (
                    _group(name, keyword),
                    self.finding(
                        kernel,
                        arg,
                        f"`{text}(..., {keyword}=)` was removed in Triton {removed[keyword]} "
                        f"(target {kernel.module.target_version})",
                    ),
                )
                continue
            for d in table.deprecations(module, name):
                if d.param == keyword and (module, name, keyword) not in _VALUE_DEPENDENT:
                    if keyword == "can_reorder" and _is_false(arg.value):
                        break
                    severity, outlook = _outlook(table, module, name, keyword)
                    yield (
                        _group(name, keyword),
                        self.finding(
                            kernel,
                            arg,
                            f"`{text}(..., {keyword}=)` is deprecated since Triton {d.since}: "
                            f"{_first_line(d.message)}{outlook}",
                            severity=severity,
                        ),
                    )
                    break

    def _methods_and_builtins(self, kernel: Kernel, table) -> Iterator[tuple[str, Finding]]:
        for call in kernel.calls:
            func = call.node.func
            if isinstance(func, cst.Attribute) and call.path is None:
                removed = table.removed_since(func.attr.value, "tensor")
                if removed is not None and Prov.BLOCK_PTR in kernel.facts(Provenance).of(
                    func.value
                ):
                    yield (
                        _BLOCK_POINTERS,
                        self.finding(
                            kernel,
                            func,
                            f"`.{func.attr.value}()` on a block pointer was removed in Triton "
                            f"{removed} (target {kernel.module.target_version})",
                        ),
                    )
            if isinstance(func, cst.Name) and func.value in ("min", "max"):
                if func.value in kernel.facts(Usage).local_names:
                    continue
                for arg in call.node.args:
                    if arg.keyword is None or arg.keyword.value != "propagate_nan":
                        continue
                    for d in table.deprecations("builtins", func.value):
                        if d.param == "propagate_nan":
                            severity, outlook = _outlook(
                                table, "builtins", func.value, "propagate_nan"
                            )
                            yield (
                                _group(func.value, "propagate_nan"),
                                self.finding(
                                    kernel,
                                    arg,
                                    f"`{func.value}(..., propagate_nan=)` is deprecated since "
                                    f"Triton {d.since}: use `tl.{func.value}imum`{outlook}",
                                    severity=severity,
                                ),
                            )
                            break


def _outlook(
    table: ApiTable, module: str, name: str, keyword: str | None = None
) -> tuple[Severity, str]:
    """A deprecated API breaks on upgrade only where a later release removes it (a warning);
    one that every tabled release still accepts works as written (info)."""
    later = table.removed_later(module, name, keyword)
    if later is not None:
        return Severity.WARNING, f"; Triton {later} removes it, so this breaks on upgrade"
    return (
        Severity.INFO,
        f" (info: Triton {table.version} still accepts it and no later release removes it)",
    )


def _group(name: str, keyword: str | None = None) -> str:
    """The API a use belongs to: block pointers are one API (the constructor, `advance`, and
    `boundary_check=`/`padding_option=` on their loads and stores)."""
    if name in _BLOCK_POINTER_NAMES or keyword in _BLOCK_POINTER_KEYWORDS:
        return _BLOCK_POINTERS
    return f"`tl.{name}(..., {keyword}=)`" if keyword else f"`tl.{name}`"


def _reason(deprecations: list[Deprecation]) -> str:
    for d in deprecations:
        if d.removed:
            return f": {_first_line(d.message)}"
    return ""


def _first_line(message: str) -> str:
    text = message.strip().removeprefix("*Deprecated.*").strip()
    return (text.splitlines() or [""])[0].rstrip(".")


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"
