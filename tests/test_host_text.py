"""The part of another file a kernel file's facts parse (`triton_lint.model.host_text`)."""

from __future__ import annotations

import textwrap

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


CALLER = textwrap.dedent(
    """\
    def check(m):
        if m > 512:
            raise ValueError(m)


    def caller(x, steps):
        \"\"\"A long caller.\"\"\"
        log = []
        n = x.shape[0]
        check(n)
        if n == 0:
            return None
        width = n * 2
        print("start")
        for step in range(steps):
            y = x + step
            log.append(step)
            if step > 8:
                continue
            launch_add(y, width)
            torch.cuda.synchronize()
        n = n + 1
        stats = sum(log)
        return x


    def launcher(x):
        n = x.shape[0]
        stats = n + 1
        kern[(n,)](x, n)
        return x
    """
)


def test_a_caller_keeps_only_the_statements_on_the_way_to_its_calls() -> None:
    text, blank = relevant_text(CALLER, frozenset({"launch_add", "launcher"}))
    before, after = CALLER.splitlines(), text.splitlines()
    assert len(after) == len(before)
    kept = {number for number, line in enumerate(after, 1) if line.strip()}
    assert {n for n in kept if after[n - 1] != before[n - 1]} == set()
    dropped = {before[n - 1].strip() for n in range(1, len(before) + 1) if n not in kept}
    # `log` is read by nothing kept; `n = n + 1` rebinds `n` (read by the call's
    # arguments), so it stays; a launching function is kept whole.
    assert dropped - {""} == {
        "log = []",
        'print("start")',
        "log.append(step)",
        "torch.cuda.synchronize()",
        "stats = sum(log)",
    }
    assert blank == set()
