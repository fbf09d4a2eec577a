"""A warm run keeps the last run's project index when its edited files give the index's
questions the answers they gave before (`triton_lint.project.views`), and builds it again when
one answer changes: in both cases every kernel file's context is the one a fresh index gives."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import triton_lint.project.run as project_run
import triton_lint.project.snapshot as project_run_snapshot
from triton_lint.project.filefacts import FileFacts
from triton_lint.project.modules import ModuleNames
from triton_lint.project.project_file import ProjectFile
from triton_lint.project.store import Store
from triton_lint.project.view_layers import layer_holds
from triton_lint.project.views import view

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def add_bias(x_ptr, b_ptr, D, BLOCK: tl.constexpr):\n"
        "    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    row = tl.program_id(1).to(tl.int64)\n"
        "    x = tl.load(x_ptr + row * D + cols, mask=cols < D)\n"
        "    tl.store(x_ptr + row * D + cols, x + 1, mask=cols < D)\n"
    ),
    "pkg/ops.py": (
        "import torch\nimport triton\n\nfrom .kernels import add_bias\n\n\n"
        "def add_bias_rows(x, b, num_tokens):\n"
        "    D = x.shape[1]\n"
        "    add_bias[(triton.cdiv(D, 256), num_tokens)](x, b, D, BLOCK=256)\n\n\n"
        "class BiasFn(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x, b):\n"
        "        add_bias[(1, x.shape[0])](x, b, x.shape[1], BLOCK=256)\n"
        "        return x\n\n\n"
        "bias_fn = BiasFn.apply\n"
    ),
    "pkg/model.py": (  # names an alias another file's edit adds: the universe grows
        "from pkg import ops\n\n\ndef block(x, b):\n"
        "    return ops.bias_fn(x, b)  # not bias_rows, old_rows\n"
    ),
    "pkg/layer.py": (
        "from pkg import ops\nfrom pkg.ops import add_bias_rows as old_rows\n\n\n"
        "def apply_bias(x, b):\n    n = x.shape[0]\n    assert n <= 4096\n"
        "    ops.add_bias_rows(x, b, n)\n\n\n"
        "def apply_bias_all(x, b):\n    n = x.shape[0]\n    return n\n"
    ),
    "pkg/api.py": "from pkg import ops\n\n\ndef run(x, b):\n    layer.apply_bias(x, b)\n",
    "pkg/cli.py": "from pkg import layer\n\n\ndef main(x, b):\n    return x\n",
    "pkg/serve.py": "from pkg import layer\n\n\ndef serve(x, b):\n    layer.apply_bias(x, b)\n",
    "pkg/tool.py": "import torch\n\n\ndef tool(x, b):\n    return x\n",  # no index reads it
}

#: (file, text replaced, replacement, what the warm run does: keeps the last record, brings it
#: up to date in the edit's terms (`project.incremental`) or builds the index again)
EDITS = {
    "a statement in a caller's body": (
        "pkg/layer.py",
        "    assert n <= 4096\n",
        "    assert n <= 2048\n    scale = 1.0\n",
        "kept",
    ),
    "a kernel's body": ("pkg/kernels.py", "x + 1", "x * 2 + 1", "kept"),
    "a top-level constant no file names": (
        "pkg/kernels.py",
        "\n\n@triton.jit",
        "\nEPS = 1e-6\n\n\n@triton.jit",
        "kept",
    ),
    "a comment in the launching file": ("pkg/ops.py", "    D =", "    # columns\n    D =", "kept"),
    "the call moved to another function": (
        "pkg/layer.py",
        "    ops.add_bias_rows(x, b, n)\n\n\ndef apply_bias_all(x, b):\n    n = x.shape[0]\n",
        "\n\ndef apply_bias_all(x, b):\n    n = x.shape[0]\n    ops.add_bias_rows(x, b, n)\n",
        "updated",
    ),
    "the kernel named once more (the census's count)": (
        "pkg/ops.py",
        "    D =",
        "    # add_bias reads one row\n    D =",
        "updated",
    ),
    "an import under another name": (
        "pkg/layer.py",
        "from pkg import ops\n",
        "from pkg import ops\nfrom pkg import ops as bias_ops\n",
        "updated",
    ),
    "a launching function imported under a name another file writes (the universe)": (
        "pkg/layer.py",
        "from pkg import ops\n",
        "from pkg import ops\nfrom pkg.ops import add_bias_rows as bias_rows\n",
        "updated",
    ),
    "an alias another file writes dropped (the universe shrinks)": (
        "pkg/layer.py",
        "from pkg.ops import add_bias_rows as old_rows\n",
        "",
        "updated",
    ),
    "the kernel imported from another module (the outline)": (
        "pkg/ops.py",
        "from .kernels import add_bias",
        "from .kernels_v2 import add_bias",
        "updated",
    ),
    "the kernel named in a string of another file (its words)": (
        "pkg/layer.py",
        "    return n\n",
        '    kind = "add_bias"\n    return n\n',
        "updated",
    ),
    "a file that never names Triton stops importing the callers (its byte facts)": (
        "pkg/serve.py",
        "from pkg import layer\n",
        "import pkg\n",
        "updated",
    ),
    "an autograd function's base changed (what its forward runs by)": (
        "pkg/ops.py",
        "class BiasFn(torch.autograd.Function):",
        "class BiasFn(torch.nn.Module):",
        "updated",
    ),
    "a file that never names Triton calls a caller (a name looked for in its bytes)": (
        "pkg/cli.py",
        "    return x\n",
        "    layer.apply_bias(x, b)\n    return x\n",
        "updated",
    ),
    "a file no index read imports and calls a caller (a partial index wakes it)": (
        "pkg/tool.py",
        "import torch\n\n\ndef tool(x, b):\n    return x\n",
        "import torch\nfrom pkg import layer, ops\n\n\ndef tool(x, b):\n"
        "    layer.apply_bias(x, b)\n    return x\n",
        "updated",
    ),
    "a file that never names Triton imports a caller's module (its byte facts)": (
        "pkg/api.py",
        "from pkg import ops\n",
        "from pkg import layer\n",
        "updated",
    ),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _contexts(store: Store | None) -> tuple[project_run.RunIndex, dict]:
    files = {path: path.read_bytes() for path in sorted(Path("pkg").glob("*.py"))}
    index = project_run.project_index(files, [], store, time.time_ns())
    return index, {path: index.context_for(path) for path in index.kernel_files()}


def _age(root: Path) -> None:
    """Old enough for the files' stat signatures to be trusted (`filefacts.RACY_NS`)."""
    then = time.time() - 60
    for path in root.rglob("*.py"):
        os.utime(path, (then, then))


def _outcome(run: project_run.RunIndex) -> str:
    if run._index is not None:
        return "built"
    return "updated" if run._updated_in_place else "kept"


def _views_hold(store: Store, run: project_run.RunIndex) -> None:
    """Every file answers every question kept for it as the kept answers say: the whole
    build's (or those an update asked it afresh) and each layer's."""
    (record,) = [v for k, v in store.entries.items() if k.startswith("x:")]
    views = store.new_views or store.views()
    files = {**views["files"], **record["replaced"]}
    universe = frozenset(views["universe"])
    for display, (_, asks, digest, words) in files.items():
        path, data = run.files[display]
        module = ModuleNames()(path)
        facts = FileFacts(data)
        entry = ProjectFile(display, path, data, *module)
        spec = json.loads(asks)
        assert (digest, words) == view(spec, facts, entry if spec["entry"] else None, universe)
        outlined = words is not None
        assert all(
            layer_holds(layer, display, facts, entry, outlined) for layer in record["layers"]
        )


def _warm(store: Store) -> tuple[project_run.RunIndex, dict, Store]:
    """A warm run over the files as they are, with what ``store``'s last run kept."""
    views = store.new_views or store.views()
    again_store = Store(dict(store.entries), load_views=lambda: views)
    again, after = _contexts(again_store)
    return again, after, again_store


def _first_run(tmp_path: Path, monkeypatch, files: dict[str, str]) -> tuple[Store, dict]:
    """A cold run over ``files`` (old enough to be kept by signature), remembered."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, files)
    _age(tmp_path)
    store = Store()
    first, contexts = _contexts(store)
    first.remember()
    return store, contexts


def _edit(root: Path, edit: str) -> None:
    name, old, new, _ = {**EDITS, **FOLLOWING}[edit]
    text = (root / name).read_text()
    assert old in text
    (root / name).write_text(text.replace(old, new))


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_keeps_updates_or_rebuilds_the_index_and_the_contexts_are_fresh(
    tmp_path, monkeypatch, edit
):
    store, before = _first_run(tmp_path, monkeypatch, PROJECT)
    _edit(tmp_path, edit)
    again, after, again_store = _warm(store)
    _, fresh = _contexts(None)
    assert after == fresh
    assert _outcome(again) == EDITS[edit][3]
    if _outcome(again) != "kept":  # what changed reaches the kernel file's context
        assert fresh != before
        again.remember()
        _views_hold(again_store, again)
        third, unchanged, _ = _warm(again_store)  # the next run reads the record as kept
        assert (_outcome(third), unchanged) == ("kept", fresh)


#: Edits that follow another (their text is not in the project before it).
FOLLOWING = {
    "that file calls a launching function too (its words among the partial index's names)": (
        "pkg/tool.py",
        "    layer.apply_bias(x, b)\n",
        "    layer.apply_bias(x, b)\n    ops.add_bias_rows(x, b, 4)\n",
        "updated",
    ),
}

#: Pairs of edits one after the other, each run warm from the last.
CHAINS = [
    (
        "a file no index read imports and calls a caller (a partial index wakes it)",
        "that file calls a launching function too (its words among the partial index's names)",
    ),
    ("the call moved to another function", "the kernel named once more (the census's count)"),
    ("an import under another name", "the kernel named in a string of another file (its words)"),
    (
        "a file that never names Triton calls a caller (a name looked for in its bytes)",
        "an alias another file writes dropped (the universe shrinks)",
    ),
    (
        "a launching function imported under a name another file writes (the universe)",
        "the call moved to another function",
    ),
    ("the kernel imported from another module (the outline)", "a kernel's body"),
]


@pytest.mark.parametrize("chain", CHAINS)
def test_edits_one_after_another_keep_the_contexts_fresh(tmp_path, monkeypatch, chain):
    store, _ = _first_run(tmp_path, monkeypatch, PROJECT)
    outcomes = []
    for edit in chain:
        _edit(tmp_path, edit)
        _age(tmp_path)
        run, after, store = _warm(store)
        assert after == _contexts(None)[1]
        outcomes.append(_outcome(run))
        run.remember()
        _views_hold(store, run)
    assert outcomes == [{**EDITS, **FOLLOWING}[edit][3] for edit in chain]


def test_an_edit_that_changes_no_answer_is_remembered_by_its_signature(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, PROJECT)
    store = Store()
    first, _ = _contexts(store)
    first.remember()
    layer = tmp_path / "pkg" / "layer.py"
    layer.write_text(layer.read_text().replace("4096", "2048"))
    _age(tmp_path)
    views = store.new_views
    store = Store(dict(store.entries), load_views=lambda: views)
    again, _ = _contexts(store)
    again.remember()
    (record,) = [v for k, v in store.entries.items() if k.startswith("x:")]
    assert again._index is None
    assert len(record["stats"]) == len(PROJECT)
    assert all(stat is not None for stat in record["stats"])  # the next run reads none again


def test_views_written_by_another_build_are_not_read(tmp_path, monkeypatch):
    """Runs sharing a cache write the record and the views apart: an edit is checked only
    against the views of the build that wrote the record."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, PROJECT)
    store = Store()
    first, _ = _contexts(store)
    first.remember()
    other = {**store.new_views, "token": "another build"}
    layer = tmp_path / "pkg" / "layer.py"
    layer.write_text(layer.read_text().replace("4096", "2048"))  # changes no answer
    again, _ = _contexts(Store(dict(store.entries), load_views=lambda: other))
    assert again._index is not None
    views = store.new_views
    kept, _ = _contexts(Store(dict(store.entries), load_views=lambda: views))
    assert kept._index is None


def test_edits_past_the_layer_limit_consolidate_and_keep_the_contexts_fresh(tmp_path, monkeypatch):
    """Each update adds a layer of views; past `MAX_LAYERS` they become one, and every
    later check still reads all the questions asked."""
    monkeypatch.setattr(project_run_snapshot, "MAX_LAYERS", 2)
    store, _ = _first_run(tmp_path, monkeypatch, PROJECT)
    name, old, new, _ = EDITS["the call moved to another function"]
    names: set[str] = set()
    asked: set[tuple[str, str]] = set()
    for turn in range(5):
        text = (tmp_path / name).read_text()
        before, after_text = (old, new) if turn % 2 == 0 else (new, old)
        (tmp_path / name).write_text(text.replace(before, after_text))
        _age(tmp_path)
        run, after, store = _warm(store)
        assert (_outcome(run), after) == ("updated", _contexts(None)[1])
        run.remember()
        _views_hold(store, run)
        (record,) = [v for k, v in store.entries.items() if k.startswith("x:")]
        assert len(record["layers"]) <= 2
        layers = record["layers"]
        names |= set(layers[-1]["universe"])
        asked |= {(d, a) for d, pairs in layers[-1]["asks"].items() for a, _ in pairs}
        assert names == {name for layer in layers for name in layer["universe"]}
        assert asked == {(d, a) for layer in layers for d, p in layer["asks"].items() for a, _ in p}


#: A second kernel file, and a file that never names Triton which imports its launching
#: function (so a whole build wakes it for that kernel) and calls another kernel's through
#: a package, which no import of it names.
SECOND_KERNEL = {
    "pkg/other.py": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def scale(x_ptr, N, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < N) * 2, mask=offs < N)\n"
        "\n\ndef other_fn(x):\n    scale[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)\n"
    ),
    "pkg/tools.py": (
        "import pkg\nfrom pkg.other import other_fn\n\n\ndef tool(x, b):\n"
        "    other_fn(x)\n    pkg.ops.add_bias_rows(x, b, 8)\n"
    ),
}


def test_a_file_another_kernel_woke_is_read_as_a_whole_build_reads_it(tmp_path, monkeypatch):
    """An edit that reaches only `kernels.py`: a partial index that follows it alone would
    never wake `tools.py`, which a whole build wakes for `other.py`'s kernel and then finds
    calling `add_bias_rows`. Reading it as that build did finds the call: the whole index is
    built again, and the contexts are fresh."""
    store, before = _first_run(tmp_path, monkeypatch, {**PROJECT, **SECOND_KERNEL})
    assert any("pkg/tools.py" in c.sources for c in before.values() if c is not None)
    _edit(tmp_path, "the kernel named once more (the census's count)")
    again, after, _ = _warm(store)
    assert (_outcome(again), after) == ("built", _contexts(None)[1])
