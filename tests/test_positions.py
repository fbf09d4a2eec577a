"""Positions of nodes, generated one statement at a time, equal libcst's whole-module ones."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from triton_lint.model.positions import Positions
from triton_lint.model.tree import iter_nodes

TRICKY = """\
# a header comment
import triton
import triton.language as tl


def factory(flag):
    # kernels defined in a function, a class, under conditions
    @triton.jit
    # a comment between decorators
    @triton.heuristics({"B": lambda a: 4})
    def inner(p, n,
              B: tl.constexpr):  # a header over two lines
        o = tl.arange(0, B); m = o < n
        if B == 1: tl.store(p, 0)
        elif B == 2:
            tl.store(p + o, 1, mask=m)
        elif  B == 3: tl.store(p, 3)
        else: tl.store(p, 2)
        for i in range(4):
            x = tl.load(p + i)
        else:
            x = 0
        while n > 0:
            n -= 1
        try:
            v = tl.load(p)
        except Exception as e:  # handlers stay with their statement
            v = 0
        else:
            v = 1
        finally:
            v = 2
        with ctx() as c:
            s = "\u00e9\u00e9"; t = tl.load(p + len(s))
        match n:
            case 1:
                tl.store(p, n)
            case _:
                pass
        return inner

    return inner


class Holder:
\t@triton.jit
\tdef tabbed(p):
\t\tif True:
\t\t\ttl.store(p, 1)


def launch(x):
    inner = factory(True)
    inner[(1,)](
        x, 4,
        B=2)
"""


def _reference(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {
        node: (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)
        for node, r in ranges.items()
    }


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_node_has_the_whole_module_position(newline: str) -> None:
    text = TRICKY.replace("\n", newline)
    module = cst.parse_module(text)
    reference = _reference(module)
    positions = Positions(module, text)
    checked = 0
    for top in module.body:
        for node in iter_nodes(top):
            span = positions.span(top, node)
            assert (span.line, span.column, span.end_line, span.end_column) == reference[node], (
                type(node).__name__,
                module.code_for_node(node)[:40],
            )
            checked += 1
    assert checked > 400
    # Most statements were generated on their own, not the whole top-level statement.
    alone = [key for key in positions._ranges if key > 0]
    assert len(alone) > 20
