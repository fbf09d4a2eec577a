"""Facts across files: kernels launched from another file, bounds and values set by the
callers of the launching function, single-file runs that read the rest of the project, and a
results cache that re-lints a kernel's file when a file its findings read changes.

Each case under ``fixtures/project/`` is a small package (a kernel file, a launching file, the
callers in a third file, a ``pyproject.toml`` marking the project root); ``# <- CODE`` marks
every finding of a run over the package, and a run over each file alone gives exactly the
marks of that file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.project_files import project_index
from triton_lint.docs import example_expectations
from triton_lint.engine import lint_text
from triton_lint.project.modules import ModuleNames
from triton_lint.rules import rules_by_code
from triton_lint.run import RunOptions, lint_paths
from triton_lint.selection import Layer

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "project"
CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir())


def _run(paths: list[Path], cache: Path | None = None) -> set[tuple[str, int, str]]:
    options = RunOptions(cli_layer=Layer(select=["ALL"]), jobs=1, cache_dir=cache)
    result = lint_paths(paths, options)
    assert not result.crashes
    return {(Path(f.path).name, f.line, f.code) for f in result.findings}


def _marks(case: Path) -> dict[Path, set[tuple[str, int, str]]]:
    return {
        path: {(path.name, line, code) for line, code in example_expectations(path.read_text())[1]}
        for path in sorted(case.rglob("*.py"))
    }


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_a_run_over_the_package_gives_the_marked_findings(case):
    marks = _marks(case)
    assert _run([case]) == set().union(*marks.values())


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_each_file_alone_reads_the_project_and_reports_only_itself(case):
    for path, expected in _marks(case).items():
        assert _run([path]) == expected, path


def test_every_bad_case_has_a_finding_and_a_good_twin():
    names = {p.name for p in CASE_DIRS}
    for name in names:
        if name.endswith("_bad"):
            assert name.replace("_bad", "_good") in names
            assert any(_marks(CASES / name).values())


def test_a_launch_in_another_file_points_at_what_it_sizes():
    options = RunOptions(cli_layer=Layer(select=["TL201"]), jobs=1)
    result = lint_paths([CASES / "tl201_bad" / "attn" / "api.py"], options)
    (finding,) = result.findings
    (related,) = finding.related
    assert Path(related.path).name == "kernels.py"
    assert related.span.line == 8  # cols = tl.arange(0, HEAD_DIM)


def test_editing_a_caller_relints_the_kernel_file(tmp_path):
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_good", case)
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    layer = case / "pkg" / "layer.py"
    layer.write_text(layer.read_text().replace("    assert n <= 4096\n", ""))
    assert _run([case], cache) == {("ops.py", 8, "TL209")}
    assert _run([case / "pkg" / "ops.py"], cache) == {("ops.py", 8, "TL209")}


KERNELS = "import triton\n\n@triton.jit\ndef kern(x):\n    pass\n"


@pytest.mark.parametrize(
    ("launcher", "text"),
    [
        (
            "src/pkg/ops.py",
            "import triton\nfrom .kernels import kern\ndef op(x):\n    kern[(1,)](x)\n",
        ),
        (
            "src/pkg/ops.py",
            "import triton\nimport pkg.kernels as K\ndef op(x):\n    K.kern[(1,)](x)\n",
        ),
        (
            "src/pkg/sub/ops.py",
            "import triton\nfrom ..kernels import kern as k\ndef op(x):\n    k[(1,)](x)\n",
        ),
        (
            "src/pkg/sub/ops.py",
            "import triton\nfrom pkg import kern\ndef op(x):\n    kern[(1,)](x)\n",
        ),
        (
            "src/pkg/ops.py",
            "import triton\nfrom . import kernels\ndef op(x):\n"
            "    torch.library.wrap_triton(kernels.kern)[(1,)](x)\n",
        ),
    ],
)
def test_the_index_resolves_launches_through_imports(tmp_path, launcher, text):
    files = {
        "src/pkg/__init__.py": "from .kernels import kern  # triton\n",
        "src/pkg/sub/__init__.py": "",
        "src/pkg/kernels.py": KERNELS,
        launcher: text,
    }
    index = project_index(tmp_path, files)
    context = index.context_for("src/pkg/kernels.py")
    assert context is not None
    (refs,) = context.kernel_refs.values()
    assert set(refs.values()) == {"kern"}
    assert list(context.kernel_refs) == [launcher]


def test_the_index_follows_callers_two_levels_and_no_further(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS + "\ndef op(x):\n    kern[(1,)](x)\n",
        "pkg/a.py": "# triton\nfrom pkg.kernels import op\ndef one(x):\n    op(x)\n",
        "pkg/b.py": "# triton\nfrom pkg.a import one\ndef two(x):\n    one(x)\n",
        "pkg/c.py": "# triton\nfrom pkg.b import two\ndef three(x):\n    two(x)\n",
    }
    context = project_index(tmp_path, files).context_for("pkg/kernels.py")
    assert context is not None
    assert set(context.callers) == {("pkg/kernels.py", "op"), ("pkg/a.py", "one")}
    assert set(context.sources) == {"pkg/a.py", "pkg/b.py"}


def test_a_function_called_from_many_places_has_unknown_callers(tmp_path):
    callers = "".join(f"def f{i}(x):\n    op(x)\n" for i in range(12))
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS + "\ndef op(x):\n    kern[(1,)](x)\n",
        "pkg/a.py": "# triton\nfrom pkg.kernels import op\n" + callers,
    }
    context = project_index(tmp_path, files).context_for("pkg/kernels.py")
    assert context is not None
    assert ("pkg/kernels.py", "op") in context.unbounded


def test_a_caller_passing_a_name_for_the_same_parameter_is_no_cycle(tmp_path):
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_good", case)
    layer = case / "pkg" / "layer.py"
    text = layer.read_text()
    for old, new in [
        ("n = x.shape[0]", "num_tokens = x.shape[0]"),
        ("n <= 4096", "num_tokens <= 4096"),
        ("b, n)", "b, num_tokens)"),
    ]:
        assert old in text, old  # the renaming must happen, or this reruns tl209_good
        text = text.replace(old, new)
    layer.write_text(text)
    assert _run([case]) == set()


def test_files_sharing_a_module_name_read_only_themselves(tmp_path):
    """Two copies of a script (`a/kernels.py`, `b/kernels.py`, no packages) import as the same
    name: neither is taken for the other, and each keeps its own launches."""
    own = KERNELS + "\ndef op(x):\n    kern[(1,)](x)\n"
    files = {
        "a/kernels.py": own,
        "b/kernels.py": own,
        "c/ops.py": "import triton\nfrom kernels import kern\ndef op(x):\n    kern[(1,)](x)\n",
    }
    index = project_index(tmp_path, files)
    for display in ("a/kernels.py", "b/kernels.py"):
        assert index.launchers[display] == {(display, "op")}
        context = index.context_for(display)
        assert context is None or not (context.kernel_refs or context.sources)


@pytest.mark.parametrize(
    "edit",
    [
        ("        N, T = x.shape\n        dx", "        N, T = dout.shape\n        dx"),
        (
            "        ctx.use_short = use_short\n",
            "        ctx.use_short = use_short\n"
            "        if N > 1:\n"
            "            ctx.use_short = False\n",
        ),
        ("        ctx.save_for_backward(x)\n", "        ctx.save_for_backward(out)\n"),
    ],
    ids=["backward-size-from-another-tensor", "flag-set-twice", "another-tensor-saved"],
)
def test_an_autograd_flag_bounds_the_backward_only_where_both_methods_agree(tmp_path, edit):
    """``T`` in the backward must be the forward's ``T``: read from the same saved tensor,
    through a flag the forward sets once; otherwise the bound is unknown at the launch."""
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_ctx_good", case)
    ops = case / "chunk" / "ops.py"
    old, new = edit
    assert old in ops.read_text()
    ops.write_text(ops.read_text().replace(old, new, 1))
    assert _run([case]) == {("ops.py", 24 + new.count("\n") - old.count("\n"), "TL209")}


def test_the_index_finds_the_launches_of_a_kernel_a_dispatch_helper_returns(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS,
        "pkg/ops.py": "import triton\nfrom pkg.kernels import kern\n"
        "def pick(n):\n    return kern\ndef op(x, n):\n    k = pick(n)\n    k[(n,)](x)\n",
    }
    index = project_index(tmp_path, files)
    assert index.launchers["pkg/kernels.py"] == {("pkg/ops.py", "op")}
    context = index.context_for("pkg/kernels.py")
    assert context is not None
    assert context.kernel_refs == {"pkg/ops.py": {"kern": "kern"}}


def test_the_index_finds_the_calls_of_a_dispatch_helper_beside_the_kernels(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS + "\ndef pick(n):\n    return kern\n",
        "pkg/ops.py": "import triton\nimport pkg.kernels as K\n"
        "def op(x, n):\n    K.pick(n)[(n,)](x)\n",
    }
    index = project_index(tmp_path, files)
    assert index.launchers["pkg/kernels.py"] == {("pkg/ops.py", "op")}
    context = index.context_for("pkg/kernels.py")
    assert context is not None
    assert context.dispatch_refs == {"pkg/ops.py": {"K.pick": "pick"}}
    assert set(context.sources) == {"pkg/ops.py"}


DISPATCH = """import triton
import triton.language as tl


@triton.jit
def short_rows(x_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(x_ptr + row * stride + cols, 0.0, mask=cols < n_cols)


@triton.jit
def long_rows(x_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(x_ptr + row * stride + cols, 0.0, mask=cols < n_cols)


def pick(n):
    PICK


def zero(x):
    n, d = x.shape
    pick(n)[(n,)](x, x.stride(0), d, BLOCK=triton.next_power_of_2(d))
"""


@pytest.mark.parametrize(
    ("pick", "expected"),
    [
        ("if n <= 1536:\n        return short_rows\n    return long_rows", {16}),
        ("if n > 1536:\n        return long_rows\n    else:\n        return short_rows", {16}),
        ("if n <= 1536 or d > 1:\n        return short_rows\n    return long_rows", {9, 16}),
        ("for _ in range(1):\n        return short_rows\n    return long_rows", {9, 16}),
        (
            "if n <= 1536:\n        return short_rows\n"
            "    if n <= 2048:\n        return short_rows\n    return long_rows",
            {9, 16},
        ),
    ],
    ids=["return-after-if", "else", "test-reads-another-name", "loop", "two-paths"],
)
def test_a_dispatch_helper_bounds_each_kernel_by_its_own_return_path(tmp_path, pick, expected):
    """One file (no project): the short kernel launches only under the helper's test."""
    path = tmp_path / "rows.py"
    path.write_text(DISPATCH.replace("PICK", pick))
    assert _run([path]) == {("rows.py", line, "TL104") for line in expected}


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("ops.py", "        use_short = False\n", "        use_short = True\n"),
        ("ops.py", "    use_short = T <= 4096\n", "    use_short = T <= 4096\n    T = T + N\n"),
        ("ops.py", "    return y, N, T, use_short\n", "    return y, N, N, use_short\n"),
        ("layer.py", "ctx.N, ctx.T, use_short", "ctx.N, ctx.N, use_short"),
        ("layer.py", "        ctx.T = T\n", "        ctx.T = T\n        ctx.T = x.shape[1]\n"),
    ],
    ids=[
        "flag-set-true",
        "size-changed-after",
        "other-size-returned",
        "other-size-passed",
        "saved-twice",
    ],
)
def test_a_flag_returned_by_a_helper_bounds_the_launch_only_along_the_whole_chain(
    tmp_path, path, old, new
):
    """``use_short = T <= 4096`` in the helper reaches ``if use_short:`` in the launching
    function only when each step keeps it: a later ``False`` only, the same ``T`` returned,
    saved once on ``ctx`` and passed for ``T``."""
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_ctx_helper_good", case)
    edited = case / "shift" / path
    assert old in edited.read_text()
    edited.write_text(edited.read_text().replace(old, new, 1))
    line = 26 + (new.count("\n") - old.count("\n") if path == "ops.py" else 0)
    assert _run([case]) == {("ops.py", line, "TL209")}


def test_a_host_bound_on_the_grid_quiets_a_product_of_one_size_only(tmp_path):
    """32 programs times one row stride stay small; 32 programs times ``N * M`` span 32
    whole matrices and can pass 2**31."""
    path = tmp_path / "split.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def rows(x_ptr, stride):\n"
        "    z = tl.program_id(0)\n"
        "    tl.store(x_ptr + z * stride, 0.0)\n\n\n@triton.jit\n"
        "def slabs(x_ptr, N, M):\n"
        "    z = tl.program_id(0)\n"
        "    tl.store(x_ptr + z * N * M, 0.0)\n\n\n"
        "def run(x, splits):\n"
        "    assert splits <= 32\n"
        "    rows[(splits,)](x, x.stride(0))\n"
        "    slabs[(splits,)](x, x.shape[1], x.shape[2])\n"
    )
    assert _run([path]) == {("split.py", 14, "TL104")}


def _linted(monkeypatch) -> list[str]:
    """The files each run lints (not taken from the cache), recorded."""
    import triton_lint.run as run

    linted: list[str] = []
    lint_jobs = run.lint_jobs

    def recording(jobs, workers):
        linted.extend(Path(job.display).name for job in jobs)
        return lint_jobs(jobs, workers)

    monkeypatch.setattr(run, "lint_jobs", recording)
    return linted


def test_an_edit_the_kernel_files_lint_did_not_read_relints_nothing(tmp_path, monkeypatch):
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_good", case)
    layer = case / "pkg" / "layer.py"
    layer.write_text(layer.read_text() + "\n\ndef describe(x):\n    return x.shape\n")
    cache = tmp_path / "cache"
    linted = _linted(monkeypatch)
    assert _run([case], cache) == set()
    assert _run([layer], cache) == set()
    assert linted == ["kernels.py", "kernels.py"]  # as a directory's file, and for layer.py
    layer.write_text(layer.read_text().replace("return x.shape", "return tuple(x.shape)  # x"))
    linted.clear()
    assert _run([case], cache) == set()
    assert _run([layer], cache) == set()
    assert linted == []


def test_an_edit_where_the_lint_read_relints_the_kernel_file(tmp_path, monkeypatch):
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_good", case)
    cache = tmp_path / "cache"
    linted = _linted(monkeypatch)
    assert _run([case], cache) == set()
    ops, layer = case / "pkg" / "ops.py", case / "pkg" / "layer.py"
    steps = [
        (ops, "num_tokens)](", "70000)](", {("ops.py", 8, "TL209")}),  # a launch argument
        (ops, "70000)](", "num_tokens)](", set()),  # and back: the entry was replaced
        (layer, "n <= 4096", "n <= 100000", {("ops.py", 8, "TL209")}),  # a caller's bound
        (ops, "BLOCK=256)", "BLOCK=256)  # noqa: TL209", set()),  # a suppression there
    ]
    for path, old, new, expected in steps:
        path.write_text(path.read_text().replace(old, new))
        linted.clear()
        assert _run([case], cache) == expected, new
        assert linted == ["kernels.py"], new


def test_a_helper_read_from_the_whole_launching_file_is_part_of_what_the_cache_checks(
    tmp_path, monkeypatch
):
    """``shift_fwd`` is left out of the part of ``ops.py`` parsed for launches, but the
    autograd flag it returns is read from it (`ctx_flags`): editing it re-lints the kernels."""
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl209_ctx_helper_good", case)
    cache = tmp_path / "cache"
    linted = _linted(monkeypatch)
    assert _run([case], cache) == set()
    ops = case / "shift" / "ops.py"
    ops.write_text(
        ops.read_text().replace("        use_short = False\n", "        use_short = True\n")
    )
    linted.clear()
    assert _run([case], cache) == {("ops.py", 26, "TL209")}
    assert linted == ["kernels.py"]


def test_a_kernel_never_launched_in_the_project_is_information():
    """TL203 and TL502 findings of a kernel the indexed project never launches nor names
    elsewhere are info with a note saying so; a launched kernel's finding, and one of a kernel
    another file names (launched through a table), stay warnings. Linted alone, outside a
    project run, the same file knows nothing of launches and keeps the warnings."""
    kernels = CASES / "tl203_unlaunched_bad" / "norm" / "kernels.py"
    options = RunOptions(cli_layer=Layer(select=["TL203", "TL502"]), jobs=1)
    for paths in ([CASES / "tl203_unlaunched_bad"], [kernels]):
        found = {
            (f.line, f.code, f.severity.value, "no launch of this kernel was found" in f.message)
            for f in lint_paths(paths, options).findings
        }
        assert found == {
            (10, "TL203", "warning", False),  # launched from ops.py with N=x.shape[0]
            (19, "TL203", "info", True),
            (29, "TL502", "info", True),
            (41, "TL203", "warning", False),  # named in ops.py's table of kernels
        }
    alone = lint_text(str(kernels), kernels.read_text(), [rules_by_code()["TL203"]], "3.9")
    # alone, `N` has no launch to judge it by (a one-letter size), `n_rows` says what it is
    assert [(f.line, f.severity.value) for f in alone.findings] == [
        (19, "warning"),
        (41, "warning"),
    ]


OPS_WITH_HELPER = """import triton

from gate.kernels import gate_rows_kernel


def gate_supported(x, rows):
    return x.is_contiguous() and 0 < rows <= 132


def gate_rows(x, y, m):
    n = x.shape[1]
    warps = 4 if gate_supported(x, m) else 8
    gate_rows_kernel[(m,)](x, y, x.stride(0), n, BLOCK=triton.next_power_of_2(n), num_warps=warps)
    return y
"""


def test_editing_an_imported_predicate_helper_relints_the_kernel_file(tmp_path, monkeypatch):
    """``model.py`` calls the launching function under ``K.gate_supported(x, M)``, a helper
    of ``ops.py`` kept in the part of it the lint parses (``gate_rows`` names it): its bound
    on the grid is part of what the kernel file's lint read, so editing it re-lints that file."""
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl104_imported_predicate_good", case)
    ops, model = case / "gate" / "ops.py", case / "gate" / "model.py"
    ops.write_text(OPS_WITH_HELPER)
    model.write_text(model.read_text().replace("import kernels as K", "import ops as K"))
    cache = tmp_path / "cache"
    linted = _linted(monkeypatch)
    assert _run([case], cache) == set()
    ops.write_text(OPS_WITH_HELPER.replace("0 < rows <= 132", "rows >= 132"))
    linted.clear()
    assert _run([case], cache) == {("kernels.py", 9, "TL104")}
    assert linted == ["kernels.py"]


def test_module_names_follow_the_packages_above_each_file(tmp_path):
    for package in ("src/pkg", "src/pkg/ops"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    names = ModuleNames()
    assert names(tmp_path / "src" / "pkg" / "ops" / "matmul.py") == ("pkg.ops.matmul", False)
    assert names(tmp_path / "src" / "pkg" / "ops" / "__init__.py") == ("pkg.ops", True)
    assert names(tmp_path / "src" / "pkg" / "kernels.py") == ("pkg.kernels", False)
    assert names(tmp_path / "src" / "script.py") == ("script", False)
