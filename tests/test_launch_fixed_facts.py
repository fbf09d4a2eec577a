"""Model facts that read the launches: constexprs every launch fixes (and the `if` arms they
make dead), lanes that only cover the tiles before the program's own, and what is the same in
every lane (a reduction along one axis of a tile is not)."""

from __future__ import annotations

import textwrap

import libcst as cst

from triton_lint.model.build import build_module_model
from triton_lint.model.earlier_tiles import ceil_division, earlier_tiles_only
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.fixed_constexprs import FixedConstexprs
from triton_lint.model.lanes import is_broadcast
from triton_lint.model.reductions import reductions
from triton_lint.model.tree import iter_nodes

FLAGGED = """
import triton
import triton.language as tl


@triton.jit
def scan(x_ptr, out_ptr, n, CAUSAL: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x * 2.0
    if CAUSAL:
        y = tl.where(offs < n, y, 0.0)
    tl.store(out_ptr + offs, y, mask=offs < n)


def run(x, out, n):
    scan[(1,)](x, out, n, CAUSAL=True, BLOCK=64)
"""


def _kernel(source: str, name: str | None = None):
    text = textwrap.dedent(source)
    module = build_module_model("k.py", text, cst.parse_module(text))
    return next(k for k in module.kernels if name is None or k.name == name)


def _last_use(kernel, name: str) -> cst.Name:
    return [n for n in iter_nodes(kernel.node) if isinstance(n, cst.Name) and n.value == name][-1]


def test_a_constexpr_every_launch_fixes_selects_its_arm():
    kernel = _kernel(FLAGGED)
    fixed = kernel.facts(FixedConstexprs)
    assert fixed.value("CAUSAL") is True and fixed.value("BLOCK") == 64
    branch = next(n for n in iter_nodes(kernel.node) if isinstance(n, cst.If))
    assert fixed.taken_arm(branch) == "body"
    use = _last_use(kernel, "y")  # `tl.store(..., y, ...)`: only the `where` reaches it
    assert [d.value.func.attr.value for d in fixed.reaching(use)] == ["where"]


def test_two_launch_values_a_default_or_no_launch_fix_nothing():
    both = FLAGGED + "    scan[(1,)](x, out, n, CAUSAL=False, BLOCK=64)\n"
    kernel = _kernel(both)
    fixed = kernel.facts(FixedConstexprs)
    assert fixed.value("CAUSAL") is UNKNOWN and fixed.value("BLOCK") == 64
    assert len(fixed.reaching(_last_use(kernel, "y"))) == 2
    unlaunched = _kernel(FLAGGED.split("def run")[0])
    assert unlaunched.facts(FixedConstexprs).value("CAUSAL") is UNKNOWN
    defaulted = FLAGGED.replace(
        "CAUSAL: tl.constexpr, BLOCK: tl.constexpr", "BLOCK: tl.constexpr, CAUSAL: tl.constexpr = 1"
    )
    defaulted = defaulted.replace("CAUSAL=True, ", "")
    assert _kernel(defaulted).facts(FixedConstexprs).value("CAUSAL") is UNKNOWN


EARLIER = """
import triton
import triton.language as tl


@triton.jit
def causal(k_ptr, u_ptr, out_ptr, T, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, pid * BLOCK, BLOCK):
        k = tl.load(k_ptr + start + r, mask=start + r < T, other=0.0)
        acc += k * tl.load(u_ptr + start + r)
    tl.store(out_ptr + pid * BLOCK + r, acc, mask=pid * BLOCK + r < T)


def run(k, u, out, T):
    causal[(GRID,)](k, u, out, T, BLOCK=64)
"""


def test_lanes_before_the_own_tile_are_whole_when_the_grid_covers_the_bound():
    def check(grid: str) -> bool:
        kernel = _kernel(EARLIER.replace("GRID", grid))
        unmasked = next(a for a in kernel.accesses if a.kind == "load" and a.mask is None)
        return earlier_tiles_only(kernel, unmasked, frozenset({"start"}), frozenset({"T"}))

    assert check("triton.cdiv(T, 64)")
    assert check("(T + 64 - 1) // 64")
    assert not check("triton.cdiv(S, 64)")  # another extent than the mask's bound
    assert not check("triton.cdiv(T, 32)")  # another tile than the loop's step
    assert not check("T")
    kernel = _kernel(
        EARLIER.replace("GRID", "triton.cdiv(T, 64)").replace("start + r)", "start + r + 1)")
    )
    unmasked = next(a for a in kernel.accesses if a.kind == "load" and a.mask is None)
    assert not earlier_tiles_only(kernel, unmasked, frozenset({"start"}), frozenset({"T"}))


def test_ceil_division_parts():
    for text, parts in (("triton.cdiv(n, B)", ("n", "B")), ("(n + B - 1) // B", ("n", "B"))):
        numerator, denominator = ceil_division(cst.parse_expression(text))
        module = cst.Module([])
        assert (module.code_for_node(numerator), module.code_for_node(denominator)) == parts
    assert ceil_division(cst.parse_expression("n // B")) is None


def test_a_reduction_along_one_axis_of_a_tile_is_per_lane_until_expanded():
    kernel = _kernel(
        """
        import triton
        import triton.language as tl


        @triton.jit
        def mix(x_ptr, w_ptr, n, R: tl.constexpr, B: tl.constexpr):
            offs = tl.arange(0, B)
            rows = tl.arange(0, R)
            tile = tl.load(x_ptr + rows[:, None] * B + offs[None, :])
            w = tl.load(w_ptr + offs)
            column = tl.sum(tile, axis=0)
            row = tl.sum(tile, axis=1)[:, None]
            total = tl.sum(w, axis=0) / n
            scaled = w * total
        """
    )
    values = {d.name: d.value for definitions in kernel.definitions.values() for d in definitions}
    assert not is_broadcast(kernel, values["column"], 4)
    assert is_broadcast(kernel, values["row"], 4)
    assert is_broadcast(kernel, values["total"], 4)
    assert not is_broadcast(kernel, values["scaled"], 4)  # a per-lane tensor times a scalar


def test_dot_scaled_reduces_its_two_matrices_not_a_scale():
    kernel = _kernel(
        """
        import triton
        import triton.language as tl


        @triton.jit
        def mx(a, a_s, b, b_s, c):
            acc = tl.dot_scaled(a, a_s, "e4m3", b, b_s, "e4m3")
            tl.store(c, acc)
        """
    )
    (found,) = reductions(kernel)
    assert [kernel.code(operand) for operand in found.operands] == ["a", "b"]
