"""Output formats. Each reporter turns a `RunResult` into the text written to the output."""

from __future__ import annotations

from collections.abc import Callable

from triton_lint.reporters.github import render_github
from triton_lint.reporters.json_format import render_json
from triton_lint.reporters.json_lines import render_json_lines
from triton_lint.reporters.markdown import render_markdown
from triton_lint.reporters.sarif import render_sarif
from triton_lint.reporters.text import render_text
from triton_lint.run import RunResult

Reporter = Callable[[RunResult, bool], str]

#: format name -> render(result, statistics) -> text
REPORTERS: dict[str, Reporter] = {
    "text": render_text,
    "json": render_json,
    "json-lines": render_json_lines,
    "sarif": render_sarif,
    "github": render_github,
    "markdown": render_markdown,
}
