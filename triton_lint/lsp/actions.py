"""Code actions: each finding's fix, a ``# noqa`` for its line, and fix-all for the file."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from triton_lint.finding import Applicability, Finding, Span
from triton_lint.fingerprint import split_lines
from triton_lint.fixes import in_newlines, newline_of
from triton_lint.lsp.diagnostics import SOURCE
from triton_lint.lsp.positions import LineIndex
from triton_lint.suppression import noqa_edit

#: The kind editors run on save (VS Code's ``editor.codeActionsOnSave``), as ruff names its own.
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"


def wants(only: list[str] | None, kind: str, default: bool = True) -> bool:
    """Whether a request restricted to ``only`` kinds (None: any) admits ``kind``."""
    if only is None:
        return default
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    """Edits of one document, tied to its version when the client supports that."""
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)]
        )
    return types.WorkspaceEdit(changes={uri: edits})


def quick_fixes(
    finding: Finding,
    diagnostic: types.Diagnostic,
    text: str,
    index: LineIndex,
    edit: Callable[[list[types.TextEdit]], types.WorkspaceEdit],
) -> list[types.CodeAction]:
    """The finding's own fix (preferred when safe, labelled when unsafe) and its ``# noqa``.

    ``edit`` turns a list of text edits into the workspace edit the client accepts.
    """
    actions: list[types.CodeAction] = []
    fix = finding.fix
    if fix is not None and fix.edits:
        safe = fix.applicability is Applicability.SAFE
        newline = newline_of(text)
        edits = [
            types.TextEdit(
                range=index.range(change.span),
                new_text=in_newlines(change.content, newline),
            )
            for change in fix.edits
        ]
        actions.append(
            types.CodeAction(
                title=f"{finding.code}: {fix.message}" + ("" if safe else " (unsafe fix)"),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=safe,
                edit=edit(edits),
            )
        )
    noqa = noqa_edit(text, finding.line, finding.code)
    if noqa is not None:
        start, end, content = noqa
        span = Span(finding.line, start, finding.line, end)
        actions.append(
            types.CodeAction(
                title=f"{finding.code}: suppress on this line with `# noqa: {finding.code}`",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=edit([types.TextEdit(range=index.range(span), new_text=content)]),
            )
        )
    return actions


def replacement(before: str, after: str, index: LineIndex) -> list[types.TextEdit]:
    """One edit that turns ``before`` into ``after``: the lines between their common prefix
    and suffix (fix-all replaces those, so the cursor outside them stays put)."""
    if before == after:
        return []
    old, new = split_lines(before), split_lines(after)
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - prefix
        and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
    ):
        suffix += 1
    end_line = len(old) - suffix  # 0-based line after the replaced ones
    if end_line < len(old) or not old or before.endswith(("\n", "\r")):
        end = types.Position(line=end_line, character=0)
    else:
        end = index.position(len(old), len(index.lines[-1]) + 1)
    return [
        types.TextEdit(
            range=types.Range(start=types.Position(line=prefix, character=0), end=end),
            new_text="".join(new[prefix : len(new) - suffix]),
        )
    ]
