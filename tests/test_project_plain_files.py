"""Files that never name Triton: the project index reads one only when its imports name a
kernel module, a launching function (also through a package's ``__init__``) or a module that
defines one, so callers in plain Python files are seen and the rest of a monorepo is not
outlined."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from tests.project_files import project_index
from triton_lint.project import filefacts
from triton_lint.project.filefacts import import_words
from triton_lint.project.index import ProjectIndex
from triton_lint.run import RunOptions, lint_paths
from triton_lint.selection import Layer

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "project"

KERNELS = (
    "import triton\n\n@triton.jit\ndef kern(x):\n    pass\n\n\ndef op(x):\n    kern[(1,)](x)\n"
)


def _run(paths: list[Path], cache: Path) -> set[tuple[str, int, str]]:
    options = RunOptions(cli_layer=Layer(select=["ALL"]), jobs=1, cache_dir=cache)
    result = lint_paths(paths, options)
    assert not result.crashes
    return {(Path(f.path).name, f.line, f.code) for f in result.findings}


def _callers(index: ProjectIndex) -> dict[tuple[str, str], dict[str, tuple[str, ...]]]:
    context = index.context_for("pkg/kernels.py")
    assert context is not None
    return context.callers


def test_a_plain_file_importing_a_launching_function_is_a_caller(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS,
        "pkg/layer.py": "from pkg.kernels import op\n\ndef forward(x):\n    op(x)\n",
        "pkg/other.py": "from pkg import layer\n\ndef unrelated(x):\n    return x\n",
    }
    index = project_index(tmp_path, files)
    assert _callers(index) == {("pkg/kernels.py", "op"): {"pkg/layer.py": ("op",)}}
    assert "pkg/other.py" not in index.files  # imports a caller's module, calls nothing of it


def test_a_plain_file_launching_a_kernel_is_read(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS,
        "pkg/api.py": "from . import kernels as K\n\ndef run(x):\n    K.kern[(2,)](x)\n",
    }
    context = project_index(tmp_path, files).context_for("pkg/kernels.py")
    assert context is not None
    assert context.kernel_refs == {"pkg/api.py": {"K.kern": "kern"}}


def test_a_launching_function_re_exported_by_a_plain_init_is_followed(tmp_path):
    files = {
        "pkg/__init__.py": "from pkg.kernels import op\n",
        "pkg/kernels.py": KERNELS,
        "app/__init__.py": "",
        "app/model.py": "import pkg\nfrom pkg import op\n\ndef step(x):\n    op(x)\n",
    }
    index = project_index(tmp_path, files)
    assert _callers(index) == {("pkg/kernels.py", "op"): {"app/model.py": ("op",)}}
    assert "pkg/__init__.py" in index.files


def test_plain_files_that_import_other_names_of_a_kernel_module_are_not_read(tmp_path):
    """A class or constant of a kernel module, a comment naming the launcher, a module that
    merely shares the kernel module's last name: none of them is a caller."""
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": KERNELS + "\nclass Norm:\n    pass\n",
        "pkg/norm.py": "from pkg.kernels import Norm\n\ndef make():\n    return Norm()\n",
        "pkg/note.py": "# op(x) is in kernels.py\nimport os\n",
        "other/kernels.py": "def op(x):\n    return x\n",
        "other/use.py": "from other.kernels import op\n\ndef f(x):\n    op(x)\n",
    }
    index = project_index(tmp_path, files)
    assert _callers(index) == {}
    assert not {"pkg/norm.py", "pkg/note.py", "other/use.py"} & set(index.files)


def test_editing_a_plain_caller_relints_the_kernel_file(tmp_path):
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl203_plain_caller_good", case)
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    model = case / "split" / "model.py"
    model.write_text(model.read_text().replace("S = 512", "S = x.shape[-1] // 4"))
    assert _run([case], cache) == {("kernels.py", 6, "TL203")}
    assert _run([case / "split" / "kernels.py"], cache) == {("kernels.py", 6, "TL203")}


def test_a_warm_run_scans_only_the_files_whose_stat_signature_changed(tmp_path, monkeypatch):
    """The byte facts of every file (names Triton, may hold kernels, its import words) are
    kept by (path, size, mtime): a warm run scans none of the unchanged files again, and an
    edited plain file is scanned again and, importing the launching function now, is a
    caller whose value reaches the kernel."""
    case = tmp_path / "case"
    shutil.copytree(CASES / "tl203_plain_caller_good", case)
    other = case / "split" / "other.py"
    other.write_text("import torch\n\n\ndef mean(x):\n    return x.mean(-1)\n")
    old = time.time() - 3600
    for path in case.rglob("*"):
        os.utime(path, (old, old))
    scanned: list[bytes] = []

    def counted(data: bytes) -> set[str]:
        scanned.append(data)
        return import_words(data)

    monkeypatch.setattr(filefacts, "import_words", counted)
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    # __init__.py, model.py and other.py never name Triton; the two that do are read for
    # the import words a later edit of them changes (`project.incremental`)
    assert len(scanned) == 5
    scanned.clear()
    assert _run([case], cache) == set()
    assert scanned == []
    other.write_text(
        "from split import split_sum\n\n\ndef pooled(x):\n"
        "    return split_sum(x, S=x.shape[-1] // 4)\n"
    )
    os.utime(other, (old + 10, old + 10))  # written long before the run: its facts are kept
    assert _run([case], cache) == {("kernels.py", 6, "TL203")}
    assert scanned == [other.read_bytes()]
    scanned.clear()
    assert _run([case], cache) == {("kernels.py", 6, "TL203")}
    assert scanned == []


def test_a_file_written_as_the_run_starts_is_not_kept_by_its_signature(tmp_path):
    """A write in the same clock tick as the read could keep the signature for other bytes."""
    path = tmp_path / "plain.py"
    path.write_text("import os\n")
    since = time.time_ns()
    key, facts = filefacts.file_facts(path, path.read_bytes(), {}, since)
    assert key is None and facts.words() == {"import", "os"}
    os.utime(path, (time.time() - 60, time.time() - 60))
    entries: dict = {}
    key, facts = filefacts.file_facts(path, path.read_bytes(), entries, since)
    assert (
        key is not None and facts.words() == {"import", "os"} and entries[key] == {"w": "import os"}
    )
