"""The kernel model: kernels in every decorator/alias form, params, provenance, launches."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from triton_lint.model.build import build_module_model
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.lane_values import classify
from triton_lint.model.layouts import Layouts
from triton_lint.model.masks import Masks
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.reductions import reductions
from triton_lint.model.signs import Signs


def model_of(source: str):
    source = textwrap.dedent(source)
    return build_module_model("m.py", source, cst.parse_module(source))


@pytest.mark.parametrize(
    "header, decorator",
    [
        ("import triton", "@triton.jit"),
        ("import triton", "@triton.jit(debug=True)"),
        ("from triton import jit", "@jit"),
        ("import triton as tr", "@tr.jit"),
        ("import triton.runtime.jit as rj", "@rj.jit"),
        ("from vllm.triton_utils import triton", "@triton.jit"),
        ("import triton", "@triton.autotune(configs=[], key=[])\n@triton.jit"),
        ("import triton", "@triton.heuristics({'EVEN': lambda a: True})\n@triton.jit"),
        ("import triton", "@staticmethod\n@triton.jit"),
    ],
)
def test_kernels_found_in_every_decorator_form(header, decorator):
    source = f"{header}\n\n{decorator}\ndef k(x_ptr):\n    pass\n"
    assert [k.name for k in model_of(source).kernels] == ["k"]


def test_non_kernels_are_ignored():
    model = model_of(
        """
        import triton
        import functools

        @functools.cache
        def host(x):
            return x

        @triton.autotune(configs=[], key=[])
        def not_jitted(x):
            return x

        def plain(x):
            return x
        """
    )
    assert model.kernels == []
    assert set(model.functions) == {"host", "not_jitted", "plain"}


@pytest.mark.parametrize(
    "imports, tl",
    [
        ("import triton.language as tl", "tl"),
        ("import triton.language as T", "T"),
        ("from triton import language as tl", "tl"),
        ("from triton import language", "language"),
        ("import triton.language", "triton.language"),
        ("from vllm.triton_utils import tl", "tl"),
    ],
)
def test_triton_language_aliases(imports, tl):
    model = model_of(
        f"""
        import triton
        {imports}

        @triton.jit
        def k(x_ptr, n, BLOCK: {tl}.constexpr):
            offs = {tl}.program_id(0) * BLOCK + {tl}.arange(0, BLOCK)
            x = {tl}.load(x_ptr + offs, mask=offs < n)
        """
    )
    kernel = model.kernels[0]
    assert kernel.params_by_name["BLOCK"].is_constexpr
    assert not kernel.params_by_name["n"].is_constexpr
    assert [a.op for a in kernel.accesses] == ["load"]
    assert kernel.accesses[0].mask is not None


def test_provenance_flags():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, idx_ptr, stride, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            wrapped = offs % n
            idx = tl.load(idx_ptr + offs, mask=offs < n)
            wide = idx.to(tl.int64)
            row = pid.to(tl.int64) * stride
            half = BLOCK // 2
            acc = 0
            for i in range(0, n, BLOCK):
                acc += i
        """
    )
    kernel = model.kernels[0]
    prov = kernel.facts(Provenance).of_name
    assert Prov.PROGRAM_ID in prov("pid") and Prov.ARANGE not in prov("pid")
    assert Prov.ARANGE in prov("offs") and Prov.PROGRAM_ID in prov("offs")
    assert Prov.WRAPPED in prov("wrapped") and Prov.ARANGE not in prov("wrapped")
    assert Prov.LOADED in prov("idx") and Prov.MASKED in prov("idx")
    assert Prov.WIDENED in prov("wide") and Prov.WIDENED not in prov("idx")
    assert Prov.WIDENED in prov("row") and Prov.RUNTIME in prov("row")
    assert kernel.facts(Provenance).is_compile_time(cst.parse_expression("half"))
    assert not kernel.facts(Provenance).is_compile_time(cst.parse_expression("row"))
    assert Prov.LOOP in prov("i")


def test_masks_positional_keyword_and_none():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n, B: tl.constexpr):
            o = tl.arange(0, B)
            a = tl.load(p + o, o < n, 0.0)
            b = tl.load(p + o, mask=None)
            tl.store(p + o, a + b, mask=o < n)
            tl.atomic_add(p + o, 1, o < n)
            tl.atomic_cas(p, 0, 1)
        """
    )
    accesses = model.kernels[0].accesses
    assert [(a.op, a.mask is not None, a.other is not None) for a in accesses] == [
        ("load", True, True),
        ("load", False, False),
        ("store", True, False),
        ("atomic_add", True, False),
        ("atomic_cas", False, False),
    ]


def test_a_one_lane_tile_at_a_loop_index_below_the_loop_bound_never_drops_a_lane():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, M, N, ONE: tl.constexpr = 1, W: tl.constexpr = 4):
            rows = tl.program_id(0) + tl.arange(0, 1)[:, None]
            cols = tl.arange(0, ONE)[None, :]
            for base in range(0, N, ONE):
                col = base + cols
                a = tl.load(p + col, mask=col < N and base < N)
                b = tl.load(p + col, mask=(col < N) & (rows < M))
                c = tl.load(p + col, mask=col < M)
                d = tl.load(p + base + tl.arange(0, W), mask=base + tl.arange(0, W) < N)
            for step in range(N, 0, -1):
                e = tl.load(p + step, mask=step + tl.arange(0, 1) < N)
        """
    )
    kernel = model.kernels[0]
    masks = kernel.facts(Masks)
    drops = [not masks.never_drops(a.mask) for a in kernel.accesses]
    # a: both conjuncts hold; b: the row term may fail; c: compared with another bound;
    # d: four lanes; e: the loop's bound is its start, not an upper bound
    assert drops == [False, True, True, True, True]
    assert masks.mask_axes(kernel.accesses[1].mask) == {0}


def test_launch_sites_grids_and_values():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.autotune(
            configs=[triton.Config({"BLOCK": b}) for b in [32, 64]],
            key=["n"],
            reset_to_zero=["out_ptr"],
        )
        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr = 1):
            pass

        def launch(x, out, n):
            grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), 4)
            k[grid](x, out, n, MODE=2)

        def launch2(x, out, n):
            k[(n, 1, 1)](x, out, n)
        """
    )
    kernel = model.kernels[0]
    assert kernel.autotune is not None
    assert kernel.autotune.key == ["n"] and kernel.autotune.reset_to_zero == ["out_ptr"]
    assert [c.env for c in kernel.autotune.configs] == [{"b": 32}, {"b": 64}]
    first, second = kernel.launches
    assert first.grid_dims is not None and len(first.grid_dims) == 2
    assert set(first.bound_arguments(kernel)) == {"x_ptr", "out_ptr", "n", "MODE"}
    assert second.grid_dims is not None and len(second.grid_dims) == 3
    values = {(s.origin, s.value) for s in kernel.value_sources("MODE")}
    assert values == {("default", 1), ("launch", 2)}
    assert sorted(s.value for s in kernel.value_sources("BLOCK")) == [32, 64]


def test_heuristic_values_are_the_constant_every_reachable_return_gives():
    model = model_of(
        """
        import triton
        import triton.language as tl

        def one(args):
            return 1
            return triton.next_power_of_2(args["N"])  # dead code after the return

        def one_or_64(args):
            if args["N"] > 4096:
                return 64
            return 1

        def computed(args):
            return triton.next_power_of_2(args["N"])

        @triton.heuristics(
            values={
                "A": one,
                "B": one_or_64,
                "C": computed,
                "D": lambda args: 8,
                "E": lambda args: args["N"] // 2,
                "F": imported_elsewhere,
            }
        )
        @triton.jit
        def k(x, N, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr,
              E: tl.constexpr, F: tl.constexpr):
            pass
        """
    )
    kernel = model.kernels[0]
    values = {name: kernel.value_sources(name)[0].value for name in "ABCDEF"}
    known = {name: value for name, value in values.items() if value is not UNKNOWN}
    assert known == {"A": 1, "D": 8}
    assert {s.origin for name in "ABCDEF" for s in kernel.value_sources(name)} == {"heuristics"}


def test_reassigned_grid_name_resolves_to_the_assignment_before_each_launch():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            pass

        def launch(x, n, flag):
            grid = (triton.cdiv(n, 64), 2)
            k[grid](x, BLOCK=64)
            grid = (n, 1, 1)
            if flag:
                k[grid](x, BLOCK=64)
            if flag:
                grid = (n,)
            k[grid](x, BLOCK=64)
            grid = (n, 2)
            for _ in range(2):
                k[grid](x, BLOCK=64)
                grid = (n, 3)
        """
    )
    kernel = model.kernels[0]
    dims = [site.grid_dims for site in kernel.launches]
    code = model.module.code_for_node
    assert [code(d) for d in dims[0] or []] == ["triton.cdiv(n, 64)", "2"]
    assert [code(d) for d in dims[1] or []] == ["n", "1", "1"]
    assert dims[2] is None  # bound in a branch: either tuple may reach the launch
    assert dims[3] is None  # rebound later in the loop: the next iteration sees (n, 3)


def test_launch_arguments_spread_from_tuples_and_dicts():
    model = model_of(
        """
        import triton

        @triton.jit
        def k(a, s0, s1, n, b, c, d):
            pass

        def launch(x, ix, n, extra):
            kwargs = dict(b=1, c=x)
            k[(1,)](x, *((ix.stride(0), ix.stride(1)) if ix is not None else (0, 0)), n, **kwargs)
            k[(1,)](x, *(2, 3), n, **{"b": 4, "d": 5})
            k[(1,)](x, *extra, n)
        """
    )
    kernel = model.kernels[0]
    code = model.module.code_for_node
    first, second, third = (site.bound_arguments(kernel) for site in kernel.launches)
    assert {k: code(v) for k, v in first.items()} == {
        "a": "x",
        "s0": "ix.stride(0)",
        "s1": "ix.stride(1)",
        "n": "n",
        "b": "1",
        "c": "x",
    }
    assert {k: code(v) for k, v in second.items()} == {
        "a": "x",
        "s0": "2",
        "s1": "3",
        "n": "n",
        "b": "4",
        "d": "5",
    }
    assert set(third) == {"a"}  # positions after an unknown `*extra` are unknown


def test_launch_host_definitions_follow_single_assignments_and_unpacking():
    model = model_of(
        """
        import triton
        import triton.language as tl

        LO, HI = -1.0, 1.0
        TABLE = {}

        @triton.jit
        def k(x_ptr, A: tl.constexpr, B: tl.constexpr):
            pass

        def launch(x, flag):
            pair = TABLE.get(x.dtype)
            a, b = pair
            c, d = (1, 2)
            g, *rest = x.stride()
            e = 1
            e = 2
            if flag:
                f = 3
            k[(1,)](x, A=a, B=b)
        """
    )
    site = model.kernels[0].launches[0]
    code = {name: model.module.code_for_node(v) for name, v in site.host_definitions.items()}
    assert code == {
        "pair": "TABLE.get(x.dtype)",
        "a": "pair[0]",
        "b": "pair[1]",
        "c": "1",
        "d": "2",
        "g": "x.stride()[0]",
        "rest": "x.stride()",
    }
    assert {"x", "flag", "pair", "a", "e", "f"} <= site.host_locals
    assert {"LO", "HI", "TABLE", "k", "launch", "triton", "tl"} <= model.module_names


def test_constexpr_branches_are_recorded():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n, B: tl.constexpr, EVEN: tl.constexpr):
            o = tl.arange(0, B)
            if EVEN:
                x = tl.load(p + o)
            else:
                x = tl.load(p + o, mask=o < n)
        """
    )
    kernel = model.kernels[0]
    first, second = kernel.accesses
    assert [b.arm for b in first.branches] == ["body"]
    assert [b.arm for b in second.branches] == ["orelse"]
    assert kernel.facts(Provenance).is_compile_time(first.branches[0].test)


def test_positions_are_absolute_lines_and_one_based_columns():
    model = model_of(
        """
        # leading comment
        import triton
        import triton.language as tl

        X = 1


        @triton.jit
        def k(p):
            tl.store(p, 1)
        """
    )
    kernel = model.kernels[0]
    span = kernel.span(kernel.accesses[0].call)
    assert (span.line, span.column, span.end_line, span.end_column) == (11, 5, 11, 19)


def test_lane_layouts_follow_2d_transposes():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, q, n, B: tl.constexpr):
            o = tl.arange(0, B)
            w = tl.load(p + o[:, None] * B + o[None, :], mask=o[:, None] < n)
            v = tl.load(q + o)
            t = w.T
            tl.sum(w, axis=0)
            tl.sum(w.T, axis=0)
            tl.sum(tl.trans(w), axis=0)
            tl.sum(tl.trans(w, 1, 0), axis=0)
            tl.sum(tl.trans(w, (0, 1)), axis=0)
            tl.sum(w.trans(), axis=0)
            tl.sum(w.permute(1, 0), axis=0)
            tl.sum(tl.permute(w, (1, 0)), axis=0)
            tl.sum(tl.permute(w, dims=(1, 0)), axis=0)
            tl.sum(t.T * 2.0, axis=0)
            tl.sum(tl.permute(w, (0, 2, 1)), axis=0)
            tl.sum(w + t, axis=0)
            tl.sum(v.T, axis=0)
        """
    )
    kernel = model.kernels[0]
    (load,) = [a for a in kernel.accesses if a.mask is not None]
    layouts = [
        set(kernel.facts(Layouts).lane_layouts(r.operands[0]).get(id(load.call), ()))
        for r in reductions(kernel)
    ]
    same, swapped = {"same"}, {"swapped"}
    assert layouts == [
        same,
        swapped,
        swapped,
        swapped,
        same,
        swapped,
        swapped,
        swapped,
        swapped,
        same,
        {"unknown"},
        {"same", "swapped"},
        set(),
    ]
    assert kernel.facts(Masks).mask_axes(load.mask) == {0}
    assert kernel.facts(Masks).mask_axes(load.mask, "swapped") == {1}
    assert kernel.facts(Masks).mask_axes(load.mask, "unknown") is None


def test_loop_target_kills_earlier_definitions_in_its_body():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n, B: tl.constexpr):
            off = tl.arange(0, B)[:, None]
            for off in range(0, n, B):
                tl.store(p + off, 1.0)
            tl.store(p + off, 2.0)
        """
    )
    kernel = model.kernels[0]
    inside, after = [a.pointer.right for a in kernel.accesses]
    assert [d.kind for d in kernel.facts(Reaching).reaching(inside)] == ["for"]
    assert sorted(d.kind for d in kernel.facts(Reaching).reaching(after)) == ["assign", "for"]


def test_back_edges_carry_a_definition_only_around_loops_that_do_not_reassign_first():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n, B: tl.constexpr):
            for i in range(n):
                x = 1.0
                for j in range(n):
                    tl.store(p + j, x)
                    x = 2.0
                x = 3.0
        """
    )
    kernel = model.kernels[0]
    [use] = [a.value for a in kernel.accesses]
    values = sorted(
        model.module.code_for_node(d.value) for d in kernel.facts(Reaching).reaching(use)
    )
    # 2.0 comes around the inner loop, which does not reassign `x` before the store; 3.0
    # would need the outer loop's back edge, but `x = 1.0` runs first on every iteration.
    assert values == ["1.0", "2.0"]


def test_a_later_assignment_in_the_same_or_an_enclosing_block_overwrites_an_earlier_one():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n, FLAG: tl.constexpr, OTHER: tl.constexpr):
            x = 0.0
            if FLAG:
                x = 1.0
                x = 2.0
            else:
                if OTHER:
                    x = 3.0
                x = 4.0
                if OTHER:
                    x = 5.0
            for i in range(n):
                y = 6.0
            tl.store(p, x)
        """
    )
    kernel = model.kernels[0]
    [use] = [a.value for a in kernel.accesses]
    values = sorted(
        model.module.code_for_node(d.value) for d in kernel.facts(Reaching).reaching(use)
    )
    # 1.0 is overwritten by 2.0 in its arm and 3.0 by 4.0 after its nested branch; 5.0 may
    # not run, so 4.0 reaches beside it (0.0 too: no single assignment overwrites it)
    assert values == ["0.0", "2.0", "4.0", "5.0"]


def test_a_jump_keeps_earlier_definitions_reaching():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, n):
            x = 0.0
            for i in range(n):
                x = 1.0
                if i > 2:
                    continue
                x = 2.0
            tl.store(p, x)
        """
    )
    kernel = model.kernels[0]
    [use] = [a.value for a in kernel.accesses]
    values = sorted(
        model.module.code_for_node(d.value) for d in kernel.facts(Reaching).reaching(use)
    )
    assert values == ["0.0", "1.0", "2.0"]


def test_definitions_in_the_other_arm_do_not_reach_and_provenance_follows_reaching():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, cu, T, VARLEN: tl.constexpr):
            i = tl.program_id(0)
            if VARLEN:
                T = tl.load(cu + i).to(tl.int64)
                tl.store(p + i, T)
            else:
                tl.store(p + i, T)
            tl.store(p + i, T)
            for j in range(3):
                if VARLEN:
                    x = 1
                else:
                    tl.store(p + j, x)
                    x = 2
        """
    )
    kernel = model.kernels[0]
    in_arm, other_arm, after, looped = [a.value for a in kernel.accesses if a.kind == "store"]
    reaching, prov = kernel.facts(Reaching), kernel.facts(Provenance).of
    assert reaching.reaching_with_entry(other_arm) == ([], True)  # the parameter only
    assert [d.kind for d in reaching.reaching(in_arm)] == ["assign"]
    assert reaching.reaching_with_entry(after)[1] is True  # the parameter, or the varlen value
    assert prov(other_arm) == Prov.RUNTIME
    assert Prov.LOADED in prov(in_arm) and Prov.WIDENED in prov(in_arm)
    assert Prov.LOADED in prov(after) and Prov.RUNTIME in prov(after)
    # around a loop, the other arm's value of the previous iteration does reach
    code = model.module.code_for_node
    assert sorted(code(d.value) for d in reaching.reaching(looped)) == ["1", "2"]


def test_provenance_of_nodes_outside_the_tree_is_not_confused_by_reused_ids():
    """Regression: the expression cache was keyed by id(); a freed node's id, reused by the
    next parsed node, returned the old node's flags (a flaky test_provenance_flags)."""
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, stride, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            row = pid.to(tl.int64) * stride
            half = BLOCK // 2
            tl.store(x_ptr + row, half)
        """
    )
    kernel = model.kernels[0]
    for _ in range(200):
        assert kernel.facts(Provenance).is_compile_time(cst.parse_expression("half"))
        assert not kernel.facts(Provenance).is_compile_time(cst.parse_expression("row"))


@pytest.mark.parametrize(
    "imports, wrapper",
    [
        ("import triton.language as tl", "tl.constexpr"),
        ("import triton.language as tl", "triton.language.constexpr"),
        ("from triton.language import constexpr", "constexpr"),
        ("from triton.language.core import constexpr as ce", "ce"),
    ],
)
def test_constant_values_read_through_constexpr_wrappers(imports, wrapper):
    model = model_of(
        f"""
        import triton
        {imports}

        NEG = {wrapper}(-1e30)

        @triton.jit
        def k(p):
            a = NEG
            b = {wrapper}(0.0)
            c = SOMETHING(1.0)
        """
    )
    kernel = model.kernels[0]
    values = [d[0].value for d in (kernel.definitions[n] for n in "abc")]
    assert [classify(kernel, value) for value in values] == ["-inf", "zero", "unknown"]


def test_non_negative_values_by_construction():
    model = model_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(p, q, n):
            x = tl.load(p)
            a = tl.abs(x)
            b = tl.sqrt(tl.sum(x * x))
            c = tl.maximum(x, 0.0).to(tl.float32)
            d = a + b * 2
            e = x - a
            f = tl.minimum(x, a)
            g = tl.exp(x) / (1 + tl.exp(x))
            tl.store(q, a + b + c + d + e + f + g)
        """
    )
    kernel = model.kernels[0]
    signs = kernel.facts(Signs)
    values = {
        d.name: d.value for ds in kernel.definitions.values() for d in ds if d.name in "abcdefg"
    }
    assert {name for name, value in values.items() if signs.non_negative(value)} == {
        "a",
        "b",
        "c",
        "d",
        "g",
    }


def test_helper_checks_come_only_from_the_path_that_reaches_the_launch():
    """A helper that raises runs before the launch only on the launch's own path: not in the
    ``if`` arm when the launch sits in its ``else``, nor in a ``try`` body whose ``except``
    launches."""
    from triton_lint.model.callers import helper_checks

    model = model_of(
        """
import triton

@triton.jit
def k(x, n):
    pass

def check(m):
    if m > 512:
        raise ValueError(m)

def launch(x, m, small):
    check(m + 1)
    if small:
        check(m + 2)
    else:
        k[(1,)](x, m)
    try:
        check(m + 3)
    except ValueError:
        k[(1,)](x, m)
"""
    )
    function = model.functions["launch"]
    first, second = model.kernels[0].launches
    code = model.module.code_for_node
    assert [code(t) for t in helper_checks(model, function, first.call)] == ["m + 1 > 512"]
    assert [code(t) for t in helper_checks(model, function, second.call)] == ["m + 1 > 512"]
