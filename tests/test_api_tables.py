"""Facts about Triton's API, checked against the committed tables only (no network)."""

from __future__ import annotations

import importlib.metadata
import json
import sys

import pytest

from triton_lint.api import (
    DATA_DIR,
    MODULES,
    Signature,
    available_versions,
    load_table,
)
from triton_lint.api.installed import _plain_version, distribution_version

VERSIONS = ["3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9"]
INJECTED = {"_builder", "_semantic", "_generator"}


def test_every_minor_from_3_3_to_3_9_is_tabled():
    assert available_versions()[: len(VERSIONS)] == VERSIONS


def test_data_is_small():
    total = sum(p.stat().st_size for p in DATA_DIR.glob("*.json"))
    assert total < 1_000_000


def test_load_table_picks_nearest_lower_version():
    assert load_table("3.9.0").version == "3.9"
    assert load_table("3.4.2").version == "3.4"
    assert load_table("3.9.1+gitabcdef").version == "3.9"
    assert load_table(available_versions()[-1] + ".99").version == available_versions()[-1]
    with pytest.raises(ValueError, match=r"3\.3"):
        load_table("3.2.0")


def test_installed_version_does_not_import_triton():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from triton_lint.api import installed_triton_version\n"
        "v = installed_triton_version()\n"
        "assert v is None or isinstance(v, str), v\n"
        "assert 'triton' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_core_language_names(version):
    t = load_table(version)
    for name in [
        "load",
        "store",
        "program_id",
        "arange",
        "dot",
        "sum",
        "max",
        "where",
        "zeros",
        "full",
        "cdiv",
        "atomic_add",
        "float16",
        "bfloat16",
        "int32",
        "constexpr",
        "tensor",
        "static_range",
        "range",
        "math",
        "extra",
        "exp",
        "sqrt",
        "sigmoid",
        "softmax",
        "reshape",
        "trans",
        "make_block_ptr",
    ]:
        assert t.has_name("language", name), name
    assert t.kind("language", "float16") == "value"
    assert t.kind("language", "math") == "module"
    assert t.kind("language", "tensor") == "class"


@pytest.mark.parametrize("version", VERSIONS)
def test_hallucinated_names_do_not_exist(version):
    t = load_table(version)
    for name in ["relu", "async_copy", "warp_specialize", "pointer", "gelu", "matmul", "tanh"]:
        assert not t.has_name("language", name), name
    assert not t.has_name("math", "relu")
    assert not t.has_name("tensor", "numpy")


@pytest.mark.parametrize("version", VERSIONS)
def test_load_and_sum_keywords(version):
    t = load_table(version)
    load = t.signature("language", "load")
    for kw in ["mask", "other", "cache_modifier", "eviction_policy", "volatile"]:
        assert load.accepts_keyword(kw), kw
    assert not load.accepts_keyword("axis")
    total = t.signature("language", "sum")
    assert total.keyword_names[:3] == ["input", "axis", "keep_dims"]
    assert not total.accepts_keyword("mask")
    assert not total.var_kwargs


def test_block_pointers_removed_in_3_9():
    for v in VERSIONS[:-1]:
        t = load_table(v)
        assert t.signature("language", "load").accepts_keyword("boundary_check"), v
        assert t.has_name("language", "advance"), v
        assert t.removed_since("make_block_ptr") is None
    t = load_table("3.9")
    # make_block_ptr is still exported but raises; advance is no longer exported
    assert t.has_name("language", "make_block_ptr")
    assert t.removed_since("make_block_ptr") == "3.9"
    assert not t.has_name("language", "advance")
    assert t.removed_since("advance") == "3.9"
    assert t.removed_since("advance", module="tensor") == "3.9"
    assert t.removed_params("language", "load") == {
        "boundary_check": "3.9",
        "padding_option": "3.9",
    }
    assert not t.signature("language", "load").accepts_keyword("boundary_check")


def test_make_block_ptr_deprecated_3_7_and_3_8():
    for v in ["3.7", "3.8"]:
        (dep,) = load_table(v).deprecations("language", "make_block_ptr")
        assert dep.how == "warning" and dep.since == "3.7"
        assert "make_tensor_descriptor" in dep.message
    assert not load_table("3.6").deprecations("language", "make_block_ptr")


def test_experimental_descriptor_api_removed_in_3_4():
    assert load_table("3.3").has_name("language", "_experimental_descriptor_load")
    t = load_table("3.4")
    assert not t.has_name("language", "_experimental_descriptor_load")
    assert t.removed_since("_experimental_descriptor_load") == "3.4"
    assert t.has_name("language", "make_tensor_descriptor")
    assert load_table("3.9").removed_since("_experimental_descriptor_load") == "3.4"


def test_other_deprecations():
    (view,) = load_table("3.9").deprecations("language", "view")
    assert view.since == "3.3" and "reshape" in view.message
    reshape = load_table("3.9").deprecations("language", "reshape")
    assert {d.param for d in reshape} == {"can_reorder"}
    assert not load_table("3.8").deprecations("language", "reshape")
    assert any(d.param == "allow_tf32" for d in load_table("3.3").deprecations("language", "dot"))
    softmax = load_table("3.9").deprecations("language", "softmax")
    assert softmax and all(d.param == "keep_dims" for d in softmax)
    builtin_max = load_table("3.6").deprecations("builtins", "max")
    assert {d.param for d in builtin_max} == {"propagate_nan", None}
    assert not load_table("3.5").deprecations("builtins", "max")


@pytest.mark.parametrize("version", VERSIONS)
def test_tensor_members(version):
    t = load_table(version)
    for name in ["to", "reshape", "T", "dtype", "shape", "numel", "sum", "max", "store", "exp"]:
        assert t.has_name("tensor", name), name
    assert t.kind("tensor", "T") == "property"
    assert t.kind("tensor", "dtype") == "attribute"
    to = t.signature("tensor", "to")
    assert to.names == ["dtype", "fp_downcast_rounding", "bitcast"]
    assert t.signature("tensor", "reshape").var_args
    assert t.signature("tensor", "sum").names == ["axis", "keep_dims", "dtype"]


def test_tensor_sort_is_a_stub_after_3_3():
    assert load_table("3.3").has_name("tensor", "sort")
    t = load_table("3.4")
    assert t.is_stub("tensor", "sort") and not t.has_name("tensor", "sort")


@pytest.mark.parametrize("version", VERSIONS)
def test_math_and_libdevice(version):
    t = load_table(version)
    for name in ["exp", "exp2", "log", "sqrt", "rsqrt", "fma", "umulhi", "div_rn", "erf"]:
        assert t.has_name("math", name), name
    assert not t.has_name("math", "tanh")
    for name in ["exp", "tanh", "pow", "erf", "rsqrt", "fast_expf", "isnan", "round"]:
        assert t.has_name("libdevice", name), name
        assert t.has_name("libdevice_cuda", name), name
    assert t.signature("libdevice", "pow").names == ["arg0", "arg1"]
    assert t.signature("libdevice_cuda", "tanh").names == ["arg0"]
    assert t.has_name("libdevice_hip", "exp")
    assert not t.has_name("libdevice", "relu")


def test_fast_tanhf_added_in_3_5():
    assert not load_table("3.4").has_name("libdevice", "fast_tanhf")
    assert load_table("3.5").has_name("libdevice", "fast_tanhf")


def test_range_keywords():
    assert load_table("3.3").signature("language", "range").accepts_keyword("num_stages")
    assert not load_table("3.3").signature("language", "range").accepts_keyword("warp_specialize")
    assert load_table("3.9").signature("language", "range").accepts_keyword("warp_specialize")


@pytest.mark.parametrize("version", VERSIONS)
def test_injected_params_never_appear(version):
    with open(DATA_DIR / f"triton-{version}.json", encoding="utf-8") as f:
        data = json.load(f)
    for mod in data["modules"].values():
        for name, toks in mod["sigs"].items():
            sig = Signature.from_tokens(toks)
            assert not INJECTED & {p.name for p in sig.params}, name
            assert "self" not in sig.names, name
    t = load_table(version)
    for module in MODULES:
        for name in t.names(module):
            sig = t.signature(module, name)
            if sig is not None:
                assert not sig.accepts_keyword("_semantic") or sig.var_kwargs


def test_signature_parsing():
    sig = Signature.from_tokens(["a", "/", "b=", "*rest", "c", "d=", "**kw"])
    kinds = [(p.name, p.kind, p.has_default) for p in sig.params]
    assert kinds == [
        ("a", "POSITIONAL_ONLY", False),
        ("b", "POSITIONAL_OR_KEYWORD", True),
        ("rest", "VAR_POSITIONAL", False),
        ("c", "KEYWORD_ONLY", False),
        ("d", "KEYWORD_ONLY", True),
        ("kw", "VAR_KEYWORD", False),
    ]
    assert sig.accepts_keyword("anything")
    assert not Signature.from_tokens(["x", "*", "y="]).accepts_keyword("z")
    assert Signature.from_tokens(["x", "*", "y="]).max_positional == 1


def test_unknown_module_is_an_error():
    with pytest.raises(KeyError):
        load_table("3.9").has_name("tl", "load")


@pytest.mark.parametrize("name", ["triton", "libcst", "click", "Triton-Lint", "not-installed-x"])
def test_installed_version_is_importlib_metadata_s(name):
    """The version read from a ``.dist-info`` directly is the one importlib.metadata gives."""
    try:
        expected = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        expected = None
    assert distribution_version(name) == expected


def test_installed_version_of_unusual_layouts_matches_importlib_metadata(tmp_path, monkeypatch):
    """A first match that is not one plain ``.dist-info`` goes to importlib.metadata: an
    ``.egg-info``, two matches, a header past the first; and a plain one with odd spacing."""
    layouts = {
        "a": {
            "demo_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
        },
        "b": {
            "Demo.Pkg-2.0.egg-info/PKG-INFO": "Metadata-Version: 1.0\nName: demo\nVersion: 2.0\n"
        },
        "c": {"demo_pkg-3.0.dist-info/METADATA": "Name: demo\nversion:   3.0  \n"},
        "e": {
            "demo_pkg-3.0.dist-info/METADATA": "Name: demo\nVersion: 3.0\n",
            "demo_pkg-4.0.dist-info/METADATA": "Name: demo\nVersion: 4.0\n",
        },
        "d": {"demo_pkg-5.0.dist-info/METADATA": "Name: demo\n\nVersion: 5.0\n"},
    }
    routes = {"a": ("1.0",), "b": None, "c": ("3.0  ",), "d": None, "e": None}
    for layout, files in layouts.items():
        for relative, text in files.items():
            path = tmp_path / layout / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        monkeypatch.setattr(sys, "path", [str(tmp_path / layout), *sys.path])
        assert distribution_version("demo-pkg") == importlib.metadata.version("demo-pkg"), layout
        # the plain layouts are read directly, the others left to importlib.metadata
        assert _plain_version("demo-pkg") == routes[layout], layout
        monkeypatch.undo()
