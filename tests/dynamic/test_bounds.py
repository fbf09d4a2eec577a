"""Compiled-in bounds checks: what the code generator emits and how records decode. Triton's
front end compiles for a GPU target without a GPU, so these run on any machine (the checks
themselves run in `test_gpu.py`)."""

from __future__ import annotations

import pytest

from triton_lint.dynamic.bounds_records import pack_meta, unpack_meta

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def add_unmasked_load(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
    tl.atomic_add(out_ptr + offs, x, mask=mask)


@triton.jit
def tile(p, offs):
    return tl.load(p + offs[:, None] * 4 + offs[None, :])


@triton.jit
def via_helper(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tile(x_ptr, offs)
    tl.store(o_ptr + offs[:, None] * 4 + offs[None, :], v)


@triton.jit
def descriptor(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    tl.store(o_ptr + tl.arange(0, BLOCK), d.load([0]))


@triton.jit
def descriptor_2d(x_ptr, o_ptr, m, n, BLOCK: tl.constexpr):
    d = tl.make_tensor_descriptor(
        base=x_ptr + 4, shape=[m, n], strides=[n, 1], block_shape=[BLOCK, BLOCK]
    )
    o = tl.make_tensor_descriptor(o_ptr, shape=[m, n], strides=[n, 1], block_shape=[BLOCK, BLOCK])
    o.store([0, BLOCK], d.load([BLOCK, 0]))
"""


def test_a_site_survives_packing() -> None:
    meta = pack_meta("/a/k.py", 1234, 17, "atomic_xchg", 2, 2, 5)
    assert meta > 0
    got = unpack_meta(meta)
    assert {k: got[k] for k in ("line", "col", "op", "size", "ndim", "home")} == {
        "line": 1234,
        "col": 17,
        "op": "atomic_xchg",
        "size": 2,
        "ndim": 2,
        "home": 5,
    }
    assert unpack_meta(pack_meta("/a/k.py", 3, 1, "load", 8, 0, None))["home"] is None


@pytest.fixture
def compiled(tmp_path, monkeypatch):
    """Compile kernels of KERNELS for sm_90 with the checks installed; restore `tl` after."""
    torch = pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from triton_lint.dynamic.bounds import BoundsChecker
    from triton_lint.dynamic.poison import Poisoner

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tl_bounds_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("tl_bounds_kernels")
    checker = BoundsChecker(torch.device("cpu"))
    poisoner = Poisoner(torch.device("cpu"))  # wraps the checked load, as in the CUDA backend
    checker.poisoner = poisoner

    def compile_(name: str, signature: dict[str, str], constants: dict[str, int]) -> str:
        src = ASTSource(getattr(module, name), signature, constants)
        return triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ttir"]

    try:
        yield checker, compile_, module
    finally:
        poisoner.uninstall()
        checker.uninstall()


def test_every_access_is_checked_against_its_own_parameter(compiled) -> None:
    checker, compile_, _module = compiled
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    ttir = compile_("add_unmasked_load", sig, {"BLOCK": 64})
    sites = [(s.line, s.col, s.function, s.home) for s in checker.sites]
    # x_ptr, y_ptr, out_ptr: parameters 0, 1, 2; the column is the call's.
    assert sites == [
        (10, 9, "add_unmasked_load", 0),
        (11, 9, "add_unmasked_load", 1),
        (12, 5, "add_unmasked_load", 2),
        (13, 5, "add_unmasked_load", 2),
    ]
    # One integer record counter per access (the kernel's own atomic is a float add).
    assert ttir.count("tt.atomic_rmw add") == 4
    assert ttir.count("tt.atomic_rmw fadd") == 1
    assert f"{checker.table.data_ptr()}_i64" in ttir
    assert f"{checker.records.data_ptr()}_i64" in ttir


def test_a_helper_access_is_checked_against_every_parameter(compiled) -> None:
    checker, compile_, _module = compiled
    compile_("via_helper", {"x_ptr": "*fp32", "o_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 4})
    by_function = {(s.function, s.home, s.nparams) for s in checker.sites}
    # The helper's pointer is its own parameter: no single kernel parameter to name.
    assert by_function == {("tile", None, 3), ("via_helper", 1, 3)}
    assert not checker.blind


def test_a_tensor_descriptor_access_is_checked_against_its_base(compiled) -> None:
    checker, compile_, _module = compiled
    sig = {"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    ttir = compile_("descriptor", sig, {"BLOCK": 16})
    assert not checker.blind
    # The descriptor's load (line 31, inside the store's call) is homed at its base, x_ptr.
    sites = sorted((s.line, s.col, s.home) for s in checker.sites)
    assert sites == [(31, 5, 1), (31, 43, 0)]
    assert ttir.count("tt.atomic_rmw add") == 2  # one record counter per checked access


def test_a_2d_descriptor_store_and_load_are_checked(compiled) -> None:
    checker, compile_, _module = compiled
    sig = {"x_ptr": "*fp32", "o_ptr": "*fp32", "m": "i32", "n": "i32", "BLOCK": "constexpr"}
    compile_("descriptor_2d", sig, {"BLOCK": 16})
    # `base=` names x_ptr (parameter 0); the store's descriptor is o_ptr's (parameter 1).
    assert sorted((s.line, s.home, s.function) for s in checker.sites) == [
        (40, 0, "descriptor_2d"),
        (40, 1, "descriptor_2d"),
    ]
    assert not checker.blind


def test_a_host_descriptor_larger_than_its_tensor_is_found_before_the_launch(compiled) -> None:
    torch = pytest.importorskip("torch")
    tensor_descriptor = pytest.importorskip("triton.tools.tensor_descriptor")
    checker, _compile, module = compiled
    x = torch.zeros(40)
    fits = tensor_descriptor.TensorDescriptor(x, [40], [1], [16])
    padded = tensor_descriptor.TensorDescriptor(x, [48], [1], [16])
    names = ["x_desc", "n"]
    checker.reset()
    checker.on_launch(module.descriptor, names, {"x_desc": fits, "n": 40}, ("/w.py", 9, "f"))
    assert checker.events(None) == []
    checker.on_launch(module.descriptor, names, {"x_desc": padded, "n": 40}, ("/w.py", 9, "f"))
    (ev,) = checker.events(None)
    assert (ev["arg"], ev["offsets"], ev["descriptor"]) == ("x_desc", [40, 47], True)
    # The kernel never loads through `x_desc` by that name: the launch is the site.
    assert ev["site"] == ev["launch"] == ("/w.py", 9, "f")
    assert "reaches element 47; the tensor holds 40" in ev["lands"]


def test_a_record_names_the_tensor_it_left_and_where_it_landed(compiled) -> None:
    torch = pytest.importorskip("torch")
    checker, _compile, module = compiled
    x, y, out = torch.zeros(100), torch.zeros(100), torch.zeros(100)
    names = ["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"]
    values = {"x_ptr": x, "y_ptr": y, "out_ptr": out, "n": 100, "BLOCK": 64}
    checker.reset()
    checker.on_launch(module.add_unmasked_load, names, values, ("/w.py", 9, "<module>"))
    # program 1, lane 36 of the load at line 10 (home x_ptr) read y's element 3
    meta = pack_meta(module.__file__, 10, 9, "load", 4, 1, 0)
    addr = y.data_ptr() + 3 * 4
    checker.records[8:14] = torch.tensor([meta, 1, 0, 36, addr, 0])
    checker.records[0] = 1
    (ev,) = checker.events(None)
    assert ev["site"] == (module.__file__, 10, "add_unmasked_load") and ev["column"] == 9
    assert (ev["arg"], ev["op"], ev["pid"], ev["lane"]) == ("x_ptr", "load", [1, 0, 0], [36])
    assert ev["offsets"] == [(addr - x.data_ptr()) // 4] and ev["lands"] == "inside `y_ptr`"
    assert ev["launch"] == ("/w.py", 9, "<module>")


def test_poison_is_a_table_on_the_device_not_a_recompilation(compiled) -> None:
    torch = pytest.importorskip("torch")
    checker, compile_, _module = compiled
    poisoner = checker.poisoner
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    ttir = compile_("add_unmasked_load", sig, {"BLOCK": 64})
    compile_("add_unmasked_load", sig, {"BLOCK": 128})  # the same site keeps its slot
    # Only the masked load without `other=` (line 11) reads a slot of the poison table.
    assert [(site[1], site[2]) for site in poisoner.sites] == [(11, "add_unmasked_load")]
    assert [index for index, _elt in poisoner.slots.values()] == [0]
    assert str(poisoner.table.data_ptr()) in ttir
    raw = poisoner.values(("inf", None))[:4]
    assert raw.view(torch.float32).item() == float("inf")
    assert not poisoner.values(("inf", frozenset({99}))).any()  # another line: left at zero
    with poisoner.active(("nan", frozenset({11}))):
        assert poisoner.table[:4].view(torch.float32).isnan().all()
    assert not poisoner.table.any()
