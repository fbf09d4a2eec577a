"""The prefilter: every file that holds a kernel is parsed; files that cannot are not."""

from __future__ import annotations

import libcst as cst
import pytest

from triton_lint.engine import may_define_kernels, may_hold_kernels
from triton_lint.model.build import build_module_model

KERNEL_FORMS = [
    ("import triton", "@triton.jit"),
    ("import triton", "@triton.jit(debug=True)"),
    ("import triton", "@ triton . jit"),
    ("from triton import jit", "@jit"),
    ("from triton import jit as J", "@J"),
    ("from triton import jit as triton_jit", "@triton_jit"),
    ("import triton as tr", "@tr.jit"),
    ("import triton.runtime.jit as rj", "@rj.jit"),
    ("import triton", "@triton.runtime.jit.jit"),
    ("import triton", "@triton.autotune(configs=[], key=[])\n@triton.jit"),
    ("import triton", "@staticmethod\n@triton.jit"),
    ("import triton", "class Ops:\n    @triton.jit"),
]


@pytest.mark.parametrize("header, decorator", KERNEL_FORMS)
def test_every_kernel_form_passes_the_prefilter(header: str, decorator: str) -> None:
    indent = "    " if decorator.startswith("class") else ""
    source = f"{header}\n\n{decorator}\n{indent}def k(x_ptr):\n{indent}    pass\n"
    model = build_module_model("m.py", source, cst.parse_module(source))
    assert [kernel.name for kernel in model.kernels] == ["k"]  # the model agrees it is one
    assert may_hold_kernels(source.encode())
    assert may_define_kernels(source)


@pytest.mark.parametrize(
    "source",
    [
        "import triton\nimport torch\n\ndef host(x):\n    return triton.cdiv(x, 2)\n",
        "import torch\n\n@torch.jit.script\ndef f(x):\n    return x  # triton\n",
        "import torch\n\n@torch.jit.ignore\ndef f(x):\n    return x  # triton\n",
        "import triton\nKERNEL = 'uses @triton.jit'  # jit in a string, mid-line\n",
        "import triton\nf = torch.jit.trace(model, x)\n",
    ],
)
def test_files_that_cannot_hold_a_kernel_are_not_parsed(source: str) -> None:
    assert not may_define_kernels(source)


def test_the_byte_prefilter_needs_both_words() -> None:
    assert not may_hold_kernels(b"import triton\n")
    assert not may_hold_kernels(b"@jit\ndef f(): pass\n")
    assert may_hold_kernels(b"import triton\n@jit\ndef f(): pass\n")
