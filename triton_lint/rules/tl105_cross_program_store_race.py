"""TL105: programs of a grid axis all store to the same address."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.flag_launches import single_program_when_set
from triton_lint.model.kernel import Kernel, MemoryAccess, ModuleModel
from triton_lint.model.program_ids import ProgramIds
from triton_lint.model.provenance import Provenance
from triton_lint.model.structure import Structure
from triton_lint.rules.base import Rule


class CrossProgramStoreRace(Rule):
    code = "TL105"
    name = "cross-program-store-race"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "`tl.store` whose address is the same for every program of a grid axis"
    rationale = """\
Programs of a grid run in no particular order. When a kernel reads `tl.program_id(1)` but a
store's address (and mask) does not depend on it, every program along axis 1 writes the same
elements: the result is whichever program finished last, a split-K partial sum or a per-head
value silently lost. The same happens when a launch in the file gives the grid more than one
program on an axis the kernel never reads. Stores guarded by a condition on the axis
(`if pid_k == 0:`), stores whose value does not depend on the axis either (every program
writes the same bytes: redundant, not lost), atomics and single-program launches are not
reported; nor is a store under a constexpr flag (`if QUANT:`) that every launch turns on only
in a host branch giving the axis one program (`kwargs = {"QUANT": True}` beside `assert
ngroups == 1`, or a tile `next_power_of_2(n)` wide for a grid axis `cdiv(n, tile)`)."""
    fix = """\
Index the output by the axis (`out_ptr + pid_k * stride_k + offs`), accumulate with
`tl.atomic_add`, guard the store with `if pid_k == 0:`, or launch a grid of size 1 on that
axis."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def rowsum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))  # <- TL105


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    scale[(triton.cdiv(x.numel(), 1024), x.shape[0])](x, x.numel(), BLOCK=1024)  # <- TL105
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def rowsum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(x, axis=0))
    if chunk == 0:
        tl.store(out_ptr + row + n, 1.0)


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    scale[(triton.cdiv(x.numel(), 1024), 1)](x, x.numel(), BLOCK=1024)
"""

    def check(self, module: ModuleModel) -> Iterator[Finding]:
        for kernel in module.kernels:
            yield from self._stores(kernel)
            yield from self._launches(kernel)

    def _stores(self, kernel: Kernel) -> Iterator[Finding]:
        axes = kernel.facts(ProgramIds).kernel_pid_axes()
        if UNKNOWN in axes:
            return
        for access in kernel.accesses:
            if access.kind != "store":
                continue
            address: list[cst.BaseExpression] = []
            if access.via_descriptor:
                address.extend(a.value for a in access.call.args)
                if isinstance(access.call.func, cst.Attribute):
                    address.append(access.call.func.value)
            elif access.pointer is not None:
                address.append(access.pointer)
            if access.mask is not None:
                address.append(access.mask)
            address.extend(branch.test for branch in access.branches)
            address.extend(kernel.facts(Structure).early_exit_tests(access.call))
            depends: set[object] = set()
            for expr in address:
                depends |= kernel.facts(ProgramIds).pid_axes(expr)
            if UNKNOWN in depends:
                continue
            missing = [
                axis
                for axis in sorted(axes - depends)
                if not self._single_program(kernel, axis)
                and not self._gated_single(kernel, access.branches)
                and not _flag_single(kernel, access.branches, axis)
            ]
            if not missing or self._same_value(kernel, access, missing):
                continue
            axis = missing[0]
            yield self.finding(
                kernel,
                access.call,
                f"every program along grid axis {axis} (`tl.program_id({axis})`) stores to "
                "this same address: the last one to finish wins; index the output by that "
                f"axis, use an atomic, or guard the store with `if pid == 0:`",
            )

    @staticmethod
    def _same_value(kernel: Kernel, access: MemoryAccess, missing: list[int]) -> bool:
        """Every program along the missing axes stores the same value (it depends on none of
        them): a redundant write, not a race (e.g. a head-invariant row written by each
        head's program)."""
        if access.value is None:
            return False
        axes = kernel.facts(ProgramIds).pid_axes(access.value)
        return UNKNOWN not in axes and not axes & set(missing)

    @staticmethod
    def _single_program(kernel: Kernel, axis: int) -> bool:
        """Every launch in the file gives ``axis`` one program (``grid = (B, n, 1)``)."""
        launches = kernel.launches
        if not launches:
            return False
        for site in launches:
            if site.grid_dims is None:
                return False
            if (
                axis < len(site.grid_dims)
                and kernel.module.evaluate_at(site, site.grid_dims[axis]) != 1
            ):
                return False
        return True

    @staticmethod
    def _gated_single(kernel: Kernel, branches: tuple) -> bool:
        """The store sits under ``if SPLIT_K == 1:`` (a constexpr equal to 1): that path
        runs with a single program on the split axis."""
        for branch in branches:
            test = branch.test
            if (
                branch.arm == "body"
                and isinstance(test, cst.Comparison)
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)
                and kernel.facts(Provenance).is_compile_time(test.left)
                and isinstance(test.comparisons[0].comparator, cst.Integer)
                and test.comparisons[0].comparator.value == "1"
            ):
                return True
        return False

    def _launches(self, kernel: Kernel) -> Iterator[Finding]:
        if not any(a.kind == "store" for a in kernel.accesses):
            return
        axes = kernel.facts(ProgramIds).kernel_pid_axes()
        if UNKNOWN in axes:
            return
        for site in kernel.launches:
            if site.grid_dims is None:
                continue
            for axis, dim in enumerate(site.grid_dims):
                if axis in axes or axis > 2:
                    continue
                value = kernel.module.evaluate_at(site, dim)
                if value is UNKNOWN and isinstance(dim, (cst.Integer, cst.Name)):
                    continue  # a bare name may well be 1
                if value is not UNKNOWN and (not isinstance(value, int) or value <= 1):
                    continue
                yield self.finding(
                    kernel,
                    dim,
                    f"the grid has more than one program on axis {axis} but `{kernel.name}` "
                    f"never reads `tl.program_id({axis})`: those programs repeat the same work "
                    "and race on the same stores; launch a grid of 1 on that axis",
                    top=site.top,
                )
                break


def _flag_single(kernel: Kernel, branches: tuple, axis: int) -> bool:
    """The store sits under ``if QUANT:`` (a constexpr flag) and every launch that turns the
    flag on runs one program on ``axis`` (`triton_lint.model.flag_launches`)."""
    return any(
        branch.arm == "body"
        and isinstance(branch.test, cst.Name)
        and single_program_when_set(kernel, branch.test.value, axis)
        for branch in branches
    )
