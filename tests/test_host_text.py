"""The part of another file a kernel file's facts parse (`triton_lint.model.host_text`)."""

from __future__ import annotations

import textwrap

from triton_lint.model.host_reads import relevant_read
from triton_lint.model.host_text import relevant_text

SOURCE = textwrap.dedent(
    """\
    import torch
    LIMIT = 4096


    def get_config(m):
        if m > 512:
            raise ValueError(m)
        return 64


    def unrelated(x):
        return x + 1


    class Ops:
        def run(self, x):
            cfg = get_config(x.shape[0])
            return launch_add(x, cfg)

        def other(self, x):
            return x * 2


    class Fn(torch.autograd.Function):
        def forward(ctx, x):
            ctx.short = x.shape[1] <= LIMIT
            return x

        def backward(ctx, dy):
            return launch_add(dy, 1)


    class Unused:
        def get(self):
            return 1
    """
)


def test_only_the_statements_a_launch_or_call_needs_are_kept_in_place() -> None:
    text, blank = relevant_text(SOURCE, frozenset({"launch_add"}))
    before, after = SOURCE.splitlines(), text.splitlines()
    assert len(after) == len(before)  # every kept line stays on its line
    kept = {number for number, line in enumerate(after, 1) if line.strip()}
    assert {n for n in kept if after[n - 1] != before[n - 1]} == set()
    lines = dict(enumerate(before, 1))
    dropped = {lines[n].strip() for n in set(lines) - kept if lines[n].strip()}
    assert dropped == {
        "def unrelated(x):",
        "return x + 1",
        "def other(self, x):",
        "return x * 2",
        "class Unused:",
        "def get(self):",
        "return 1",
    }
    assert blank == {"unrelated", "Unused"}  # module-level names the model still knows


def test_a_file_that_does_not_parse_is_left_to_libcst() -> None:
    broken = "def f(:\n    launch_add(x)\n"
    assert relevant_text(broken, frozenset({"launch_add"})) == (broken, set())


def test_assignments_no_kept_line_reads_are_blank_and_move_no_digest() -> None:
    source = SOURCE + "SCALE = LIMIT // 2\n_cache = {}\nout = launch_add(1, 2)\n"
    text, blank = relevant_text(source, frozenset({"launch_add"}))
    kept = {line.strip() for line in text.splitlines() if line.strip()}
    assert "LIMIT = 4096" in kept  # read by the autograd forward
    assert "out = launch_add(1, 2)" in kept  # a call of the launching function
    assert not {"SCALE = LIMIT // 2", "_cache = {}"} & kept
    assert blank == {"unrelated", "Unused"}
    digest = relevant_read(SOURCE, frozenset({"launch_add"}))[2]
    appended = relevant_read(SOURCE + "_edit = 1\n", frozenset({"launch_add"}))[2]
    assert appended == digest
    read = relevant_read(SOURCE + "LIMIT = 8192\n", frozenset({"launch_add"}))[2]
    assert read != digest  # a kept line reads LIMIT
