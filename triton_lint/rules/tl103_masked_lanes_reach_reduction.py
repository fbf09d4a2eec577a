"""TL103: masked-off lanes of a load reach a reduction or `tl.dot` with a non-neutral value."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Applicability, Category, Finding, Fix, Severity
from triton_lint.model.kernel import Kernel, MemoryAccess
from triton_lint.model.lanes import MaskedLanes
from triton_lint.model.layouts import Layouts
from triton_lint.model.masks import Masks
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reductions import NEUTRAL, NEUTRAL_TEXT, Reduction, reductions
from triton_lint.model.shifts import LogSumExpShifts
from triton_lint.rules.base import Rule

_DESCRIBE = {
    "undef": "undefined values",
    "zero": "0",
    "absmin": "0",
    "one": "1",
    "-inf": "-inf",
    "+inf": "+inf",
    "shifted": "a non-zero value",
    "nan": "NaN",
}
_FILLS = ("zero", "-inf", "+inf")
_FILL_TEXT = {"zero": "0.0", "-inf": '-float("inf")', "+inf": 'float("inf")'}


class MaskedLanesReachReduction(Rule):
    code = "TL103"
    name = "masked-lanes-reach-reduction"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = (
        "Masked-off lanes reach a reduction or `tl.dot` holding a value that is not neutral for "
        "it (info where only the backends' implicit 0 fill makes it work, or the max is only "
        "a log-sum-exp shift)"
    )
    rationale = """\
A masked `tl.load` leaves its masked-off lanes undefined unless `other=` fills them, and the
lanes still exist: `tl.sum`, `tl.max`, `tl.argmax`, `tl.cumsum`, `tl.reduce` and `tl.dot`
combine them with the real ones. The fill must be neutral for what the value reaches (0 for a
sum or a dot, `-inf` for a max, `+inf` for a min), and it must stay neutral through the
arithmetic in between: `x - mean` turns a 0 fill into `-mean`, `x * x` turns a `-inf` fill into
`+inf`, `exp` turns a 0 fill into 1. The result is a wrong norm, softmax or loss only for
sizes that are not a multiple of the block. Lanes masked only along an axis the reduction keeps
(rows of a row-wise sum, the M/N edges of a `tl.dot`) are not reported: they are discarded by
the masked store. Axes follow 2-D transposes (`w.T`, `tl.trans(w)`, `tl.permute(w, (1, 0))`):
an [N, K] tile masked along N is fine as the right operand `w.T`, one masked along K is not.
A `tl.dot` carries the masked rows of its left operand and the masked columns of its right one
into its result: key columns past the sequence end become score columns, which a softmax's
`tl.max` and `tl.sum` then combine unless they are re-masked (`tl.where(mask, qk, -inf)`, or
`qk += tl.where(mask, 0, -inf)`, also under a runtime `if` that only partial tiles take, or
`tl.where(cond, -1e6, qk)` whose `cond` compares the lanes with the load's own bound and grows
true the way the load cuts them off: `T - kv + row - col < 1` against `kv + col < T`).
A mask term that holds for every lane drops nothing: a tile of one lane at the index of a loop
bounded by the same size (`base + tl.arange(0, BLOCK) < N` in `for base in range(0, N, BLOCK)`
with `BLOCK` 1 wherever it is set, also by a `@triton.heuristics` function that returns 1).
A 0 fill is neutral for the max of values that cannot be negative: an integer 0 (lengths,
counts, indices), a buffer that the last earlier launch of the host function filled with
values >= 0 (a first-stage kernel's `tl.max(tl.abs(x))` partial norms), or the 0 that `exp`
makes of a `-inf` fill, also once scaled by a value >= 0 (`p / tl.sum(p)`).
Only a value that is the same in every lane shifts a 0 fill (`x - mean`, `x - m[:, None]`): a
per-lane term (`g - p * tl.sum(g, axis=1)[:, None]`, a column sum `tl.sum(w[:, None] * tile,
axis=0)` of a tile masked the same way) may be 0 there too, so it is not reported. The scales
of `tl.dot_scaled` multiply their matrices' values (a 127 scale fill is 2**0 times a 0 value):
only the two matrices are its operands.
Two tiers. An error where the lanes reach the reduction with a value that is not neutral even
if they held 0: a non-neutral `other=`, or a load without `other=` whose 0 becomes non-neutral
on the way (`x - mean`, `exp(x)`, `1 - x`, the `tl.max` of values that can be negative).
Information where only the language's "undefined" makes it wrong: a load without `other=` whose
raw lanes, or products of them, reach a sum or a dot. Every backend fills those lanes with 0
(the NVIDIA and AMD lowerings, the interpreter), so the code works today, but it relies on a
fill the language does not promise; `other=0.0` makes it explicit. Information too where an
`other=0.0` reaches only a `tl.max` used as the shift of a log-sum-exp: subtracted inside the
argument of `exp`/`exp2` (or a helper under that name), added back to a `log` result, or
carried into a running max (`tl.maximum(m_prev, m)`) used the same way (`exp(m_prev - m)`).
The 0 can raise the maximum, but the shift cancels: only underflow, when every real value is
far below 0, changes the result. A maximum that is also stored, compared or returned stays an
error."""
    fix = """\
Give the load the neutral `other=` of the reduction it feeds (`other=0.0` before `tl.sum` or
`tl.dot`, `other=-float("inf")` before `tl.max`, `other=float("inf")` before `tl.min`), or
re-mask after the arithmetic: `tl.sum(tl.where(mask, x - mean, 0.0))`. The fix that adds the
`other=` is safe when a single fill is neutral for every reduction the load reaches."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def rms(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)  # <- TL103
    total = tl.sum(x * x, axis=0)
    tl.store(y_ptr, total)


@triton.jit
def variance(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = x - mean
    tl.store(y_ptr, tl.sum(d * d, axis=0) / n)  # <- TL103
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def rms(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    total = tl.sum(x * x, axis=0)
    tl.store(y_ptr, total)


@triton.jit
def variance(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(offs < n, x - mean, 0.0)
    tl.store(y_ptr, tl.sum(d * d, axis=0) / n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        per_load: dict[int, list[tuple[Reduction, int, frozenset[str]]]] = {}
        for reduction in reductions(kernel):
            for index, operand in enumerate(reduction.operands):
                for load_id, values in kernel.facts(MaskedLanes).masked_lanes(operand).items():
                    access = kernel.access_by_id(load_id)
                    if access is None or not self._relevant(kernel, access, reduction, index):
                        continue
                    bad = values - NEUTRAL[reduction.kind] - {"unknown"}
                    if bad:
                        per_load.setdefault(load_id, []).append((reduction, index, frozenset(bad)))
        reported: set[tuple[int, int]] = set()
        for load_id, hits in per_load.items():
            access = kernel.access_by_id(load_id)
            assert access is not None
            fill = kernel.facts(MaskedLanes).load_fill(access)
            shifts = [h for h in hits if _zero_shifts_max(kernel, fill, h[0], h[2])]
            if len(shifts) == len(hits):
                yield self._shift_info(kernel, access, shifts[0][0])
                continue
            hits = [h for h in hits if h not in shifts]
            direct = [(r, v) for r, _, v in hits if fill == "undef" or v == {fill}]
            if direct:
                reduction, _ = direct[0]
                key = (id(access.call), 0)
                if key in reported:
                    continue
                reported.add(key)
                zero_fill_works = _backend_fill_neutral(kernel, access, hits)
                yield self._at_load(kernel, access, fill, reduction, zero_fill_works)
                continue
            for reduction, _, values in hits:
                key = (id(reduction.call), load_id)
                if key in reported:
                    continue
                reported.add(key)
                yield self._at_reduction(kernel, access, fill, reduction, values)

    def _relevant(
        self, kernel: Kernel, access: MemoryAccess, reduction: Reduction, index: int
    ) -> bool:
        """Masked lanes matter only on the axes the reduction combines, and only where the
        mask can drop a lane."""
        assert access.mask is not None
        if kernel.facts(Masks).never_drops(access.mask):
            return False
        flags = kernel.facts(Provenance).of(access.mask)
        if not flags & (Prov.ARANGE | Prov.WRAPPED | Prov.TENSOR | Prov.LOADED) and (
            kernel.is_entry_point or not kernel.facts(Masks).mask_axes(access.mask)
        ):
            # a scalar mask: the whole program's result is discarded (a helper's parameters
            # are its caller's tensors, so there a mask broadcast along an axis is lanes)
            return False
        if reduction.op in ("cumsum", "cumprod", "associative_scan"):
            reverse = next(
                (
                    a.value
                    for a in reduction.call.args
                    if a.keyword and a.keyword.value == "reverse"
                ),
                None,
            )
            if reverse is None and kernel.facts(Masks).is_tail_mask(access.mask):
                return False  # a forward scan never carries tail lanes into valid ones
        # where the masked lanes sit in the operand: a transpose on the way (`w.T`,
        # `tl.trans(w)`) moves a mask along axis 0 of the load to axis 1 of the operand
        layouts = kernel.facts(Layouts).lane_layouts(reduction.operands[index]).get(id(access.call))
        for layout in sorted(layouts or {"same"}):
            axes = kernel.facts(Masks).mask_axes(access.mask, layout)
            if axes is None or _combines(reduction, index, axes):
                return True
        return False

    def _shift_info(self, kernel: Kernel, access: MemoryAccess, reduction: Reduction) -> Finding:
        fix = self._fill_fix(kernel, access)
        message = (
            "`other=` fills masked-off lanes with 0, which is not neutral for `tl.max` (line "
            f"{kernel.span(reduction.call).line}) (info: the maximum is only the shift of a "
            "log-sum-exp, which cancels: the fill changes the result only by underflow; pass "
            "`other=-float('inf')` to make it exact)"
        )
        return self.finding(
            kernel,
            access.call,
            message,
            severity=Severity.INFO,
            fix=fix[1] if fix is not None and fix[0] == "-inf" else None,
        )

    def _at_load(
        self,
        kernel: Kernel,
        access: MemoryAccess,
        fill: str,
        reduction: Reduction,
        zero_fill_works: bool = False,
    ) -> Finding:
        op = f"tl.{reduction.op}"
        if zero_fill_works:
            fix = self._fill_fix(kernel, access)
            text = _FILL_TEXT[fix[0]] if fix is not None else "0.0"
            message = (
                f"masked load without `other=` reaches `{op}` (line "
                f"{kernel.span(reduction.call).line}) (info: the backends fill masked-off lanes "
                "with 0, which is neutral here, but the language leaves them undefined and does "
                f"not promise that fill); add `other={text}` to make it explicit"
            )
            return self.finding(
                kernel,
                access.call,
                message,
                severity=Severity.INFO,
                fix=fix[1] if fix else None,
            )
        if fill == "undef":
            message = (
                f"masked load without `other=` reaches `{op}` (line "
                f"{kernel.span(reduction.call).line}): masked-off lanes are undefined and are "
                "combined with the real ones, and even the 0 the backends fill them with is not "
                "neutral by the time it reaches the reduction"
            )
        else:
            message = (
                f"`other=` fills masked-off lanes with {_DESCRIBE.get(fill, fill)}, which is not "
                f"neutral for `{op}` (line {kernel.span(reduction.call).line})"
            )
        fix = self._fill_fix(kernel, access)
        if fix is not None:
            message += f"; pass `other={_FILL_TEXT[fix[0]]}`"
        else:
            message += "; pass a neutral `other=` or re-mask with `tl.where` before reducing"
        return self.finding(kernel, access.call, message, fix=fix[1] if fix else None)

    def _at_reduction(
        self,
        kernel: Kernel,
        access: MemoryAccess,
        fill: str,
        reduction: Reduction,
        values: frozenset[str],
    ) -> Finding:
        became = " or ".join(sorted(_DESCRIBE.get(v, v) for v in values))
        neutral = NEUTRAL_TEXT.get(reduction.kind, "a neutral value")
        line = kernel.span(access.call).line
        message = (
            f"masked-off lanes of the load on line {line} (filled with "
            f"{_DESCRIBE.get(fill, fill)}) hold {became} after the arithmetic before "
            f"`tl.{reduction.op}`; re-mask first: `tl.where(mask, value, {neutral})`"
        )
        return self.finding(kernel, reduction.call, message)

    def _fill_fix(self, kernel: Kernel, access: MemoryAccess) -> tuple[str, Fix] | None:
        """The one fill neutral for every reduction this load reaches, as a safe fix."""
        reached: list[tuple[Reduction, int]] = []
        for reduction in reductions(kernel):
            for index, operand in enumerate(reduction.operands):
                if id(access.call) in kernel.facts(MaskedLanes).masked_lanes(
                    operand
                ) and self._relevant(kernel, access, reduction, index):
                    reached.append((reduction, index))
        good = []
        for fill in _FILLS:
            ok = True
            for reduction, index in reached:
                values = kernel.facts(MaskedLanes).lanes_with_fill(
                    reduction.operands[index], access.call, fill
                )
                if values - NEUTRAL[reduction.kind]:
                    ok = False
                    break
            if ok:
                good.append(fill)
        if len(good) != 1 or not reached:
            return None
        fill = good[0]
        text = _FILL_TEXT[fill]
        call = access.call
        if access.other is not None:
            edit = self.replace_node(kernel, access.other, text)
        else:
            new_arg = cst.Arg(
                keyword=cst.Name("other"),
                value=cst.parse_expression(text),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
            args = list(call.args)
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = last.with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
            edit = self.replace_node(kernel, call, call.with_changes(args=[*args, new_arg]))
        fix = Fix(Applicability.SAFE, f"Fill masked-off lanes with `other={text}`", (edit,))
        return fill, fix


def _zero_shifts_max(
    kernel: Kernel, fill: str, reduction: Reduction, values: frozenset[str]
) -> bool:
    """A 0 fill that reaches a `tl.max` used only as the shift of a log-sum-exp: it can
    raise the maximum, which cancels (`exp(x - m)` ... `log(s) + m`)."""
    return (
        fill == "zero"
        and values == {"zero"}
        and reduction.op == "max"
        and kernel.facts(LogSumExpShifts).only_shift(reduction.call)
    )


def _combines(reduction: Reduction, index: int, axes: set[int]) -> bool:
    """The reduction combines lanes along one of ``axes`` of its operand ``index``."""
    if reduction.kind == "dot":
        return (1 if index == 0 else 0) in axes  # the K axis of a @ b
    if isinstance(reduction.axis, int):
        return reduction.axis in axes or (reduction.axis == -1 and 1 in axes)
    return True


def _backend_fill_neutral(
    kernel: Kernel, access: MemoryAccess, hits: list[tuple[Reduction, int, frozenset[str]]]
) -> bool:
    """A load without ``other=`` whose lanes would be neutral for every reduction they
    reach if they held the 0 every backend fills them with. A value the model cannot
    follow (a 0 added into a loop's accumulator) passes for a sum or a dot, as everywhere
    in this rule, but not for a max or a min: a 0 score hidden by an opaque `tl.where` of
    two dots that reaches a softmax's `tl.max` stays an error."""
    lanes = kernel.facts(MaskedLanes)
    zero = lanes.backend_fill(access)
    return zero is not None and not any(
        lanes.lanes_with_fill(reduction.operands[index], access.call, zero)
        - NEUTRAL[reduction.kind]
        - ({"unknown"} if reduction.kind in ("sum", "dot") else set())
        for reduction, index, _ in hits
    )
