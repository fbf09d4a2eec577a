"""Rule documentation rendered from the rule modules: `triton-lint rule`, `rules/CODE.md`."""

from __future__ import annotations

import re
from pathlib import Path

from triton_lint.dynamic.codes import CODES, DynamicCode
from triton_lint.rules import all_rules
from triton_lint.rules.base import Rule

_MARKER = re.compile(r"\s*# <- (TL\d{3})\s*$")


def example_expectations(source: str) -> tuple[str, set[tuple[int, str]]]:
    """Strip ``# <- CODE`` markers from an example; return the code and the marked (line, code)."""
    lines = []
    expected: set[tuple[int, str]] = set()
    for number, line in enumerate(source.splitlines(), 1):
        match = _MARKER.search(line)
        if match is not None:
            expected.add((number, match.group(1)))
            line = line[: match.start()]
        lines.append(line)
    return "\n".join(lines) + "\n", expected


def _fork_note(rule: Rule) -> str:
    if not rule.upstream_only:
        return ""
    return (
        "\n\nThe rule judges code against upstream Triton (its API, code generator and the "
        "CUDA/HIP launch limits), so it skips files under vendor-fork "
        "backend directories (`fork-backends` in the configuration: `_ascend`, `_kunlunxin`, "
        "`triton_ascend`, ...), which are written for a vendor's Triton fork."
    )


def render_rule(rule: Rule) -> str:
    """The Markdown page of one rule (ruff's rule docs are the model)."""
    default = "on" if rule.default_enabled else "off (enable with `--select " + rule.code + "`)"
    bad, _ = example_expectations(rule.bad)
    good, _ = example_expectations(rule.good)
    bad_marked = "\n".join(
        line + ("  # " + m.group(1) if (m := _MARKER.search(raw)) else "")
        for raw, line in zip(rule.bad.splitlines(), bad.splitlines(), strict=True)
    )
    return f"""# {rule.code} {rule.name}

{rule.summary}.

| | |
|---|---|
| Code | `{rule.code}` |
| Name | `{rule.name}` |
| Category | {rule.category.value} |
| Default severity | {rule.severity.value} |
| Enabled by default | {default} |

## Why it matters

{rule.rationale}{_fork_note(rule)}

## Example

```python
{bad_marked}
```

Use instead:

```python
{good.rstrip()}
```

## How to fix

{rule.fix}

Suppress a single finding with `# noqa: {rule.code}` on the reported line.
"""


def render_dynamic(code: DynamicCode) -> str:
    """The Markdown page of one dynamic (runtime or compile-only) check."""
    if code.mode == "--compile-only":
        kind = (
            "compile: reported by `triton-lint --compile-only` from compiling a stress case's "
            "launches per architecture, without a GPU"
        )
        witness = (
            "kernel, config (block sizes, `num_warps`,\n`num_stages`), architectures and, per "
            "architecture, registers, spilled bytes, shared\nmemory and its limit, and blocks "
            "per SM"
        )
    else:
        kind = "dynamic: reported by `triton-lint --dynamic` from a stress case run"
        witness = (
            "witness (stress case, dims, dtype, value\npattern and, where known, program id, "
            "lane and element offsets)"
        )
    return f"""# {code.code} {code.name}

{code.summary.rstrip(".")}.

| | |
|---|---|
| Code | `{code.code}` |
| Name | `{code.name}` |
| Category | {code.category.value} |
| Default severity | {code.severity.value} |
| Kind | {kind} |

## Why it matters

{code.rationale}

## How to fix

{code.fix}

The finding's message and `properties` carry the {witness}.
"""


def render_code(item: Rule | DynamicCode) -> str:
    return render_rule(item) if isinstance(item, Rule) else render_dynamic(item)


def rule_table() -> str:
    """The README's rule table."""
    rows = [
        "| Code | Name | Category | Severity | Default | Summary |",
        "|---|---|---|---|---|---|",
    ]
    for rule in all_rules():
        default = "on" if rule.default_enabled else "off"
        rows.append(
            f"| [{rule.code}](rules/{rule.code}.md) | `{rule.name}` | {rule.category.value} "
            f"| {rule.severity.value} | {default} | {rule.summary} |"
        )
    for code in CODES.values():
        rows.append(
            f"| [{code.code}](rules/{code.code}.md) | `{code.name}` | {code.category.value} "
            f"| {code.severity.value} | `{code.mode}` | {code.summary.rstrip('.')} |"
        )
    return "\n".join(rows) + "\n"


def write_rule_pages(directory: Path) -> list[Path]:
    """Regenerate ``rules/*.md``; stale pages of removed rules are deleted."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rule in all_rules():
        path = directory / f"{rule.code}.md"
        path.write_text(render_rule(rule), encoding="utf-8")
        written.append(path)
    for code in CODES.values():
        path = directory / f"{code.code}.md"
        path.write_text(render_dynamic(code), encoding="utf-8")
        written.append(path)
    for stale in set(directory.glob("TL*.md")) - set(written):
        stale.unlink()
    return written


_TABLE_START = "<!-- rules:start -->\n"
_TABLE_END = "<!-- rules:end -->"


def update_readme_table(readme: Path) -> None:
    """Replace the rule table between the README's ``rules:start``/``rules:end`` markers."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(_TABLE_START) + len(_TABLE_START)
    end = text.index(_TABLE_END)
    readme.write_text(text[:start] + rule_table() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    pages = write_rule_pages(root / "rules")
    update_readme_table(root / "README.md")
    print(f"wrote {len(pages)} rule pages and the README rule table")
