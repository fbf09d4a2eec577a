"""The language server, driven over stdio by a real LSP client (pytest-lsp).

Diagnostics are compared with the CLI's JSON for the same files; code actions are applied
to the text and the result is linted again; hover shows the rule's page.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, apply_edits

pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402
from pytest_lsp.client import (  # noqa: E402
    DEFAULT_CLIENT_FEATURES,
    default_converter,
    register_lsp_features,
)

FIXTURES = REPO / "fixtures"
SERVER = [sys.executable, "-m", "triton_lint", "server"]

pytestmark = pytest.mark.asyncio


class RecordingClient(LanguageClient):
    """A test client that keeps every publication (with its version), not only the last."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.shown: list[str] = []


def _publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
    client.published.append(params)
    client.diagnostics[params.uri] = params.diagnostics


def _register(client: RecordingClient, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def _show(client: RecordingClient, params: types.ShowMessageParams) -> None:
    client.shown.append(params.message)


def make_client() -> RecordingClient:
    client = RecordingClient()
    features = {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _publish,
        types.CLIENT_REGISTER_CAPABILITY: _register,
        types.WINDOW_SHOW_MESSAGE: _show,
    }
    register_lsp_features(client, features)
    return client


def server_fixture(editor: str, debounce_ms: int, run: str = "onType", env=None):
    """A fixture: a server started for ``editor``'s capabilities with these options."""

    @pytest_lsp.fixture(
        config=ClientServerConfig(server_command=SERVER, client_factory=make_client, server_env=env)
    )
    async def fixture(lsp_client: RecordingClient):
        await lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(editor),
                initialization_options={"debounceMs": debounce_ms, "run": run},
            )
        )
        yield
        await lsp_client.shutdown_session()

    return fixture


client = server_fixture("visual-studio-code", 0)
neovim = server_fixture("neovim", 0)
debounced = server_fixture("visual-studio-code", 300)
on_save = server_fixture("visual-studio-code", 0, run="onSave")
# torch and triton on this path end the process that imports them (exit code 97).
sentinel = server_fixture(
    "visual-studio-code",
    0,
    env={**os.environ, "PYTHONPATH": str(REPO / "tests" / "data" / "import_sentinels")},
)


# Helpers ---------------------------------------------------------------------------------


def open_document(
    client: RecordingClient, path: Path | str, text: str | None = None, language: str = "python"
) -> str:
    """Open ``path`` (or the URI ``path`` names, with ``text``) in the server; its URI."""
    uri = path if isinstance(path, str) else path.resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id=language,
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    return uri


def change_document(client: RecordingClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def published(
    client: RecordingClient, uri: str, version: int | None = 1
) -> list[types.Diagnostic]:
    """The diagnostics published for ``version`` of ``uri`` (waits for them)."""
    for _ in range(3000):
        for params in client.published:
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for {uri} version {version}")


def summary(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.code,
            d.severity,
            d.message,
        )
        for d in diagnostics
    )


def utf16_column(line: str, column: int) -> int:
    return len(line[: column - 1].encode("utf-16-le")) // 2


def edits_of(action: types.CodeAction) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None
    if edit.document_changes:
        return [e for change in edit.document_changes for e in change.edits]
    return [e for edits in (edit.changes or {}).values() for e in edits]


async def code_actions(
    client: RecordingClient,
    uri: str,
    line: int,
    only: list[str] | None = None,
    end_line: int | None = None,
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line + 1 if end_line is None else end_line, character=0),
            ),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return list(result or [])


def cli_json(*paths: Path, cwd: Path = REPO) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "triton_lint", "--format", "json", "--no-cache", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


# Diagnostics -----------------------------------------------------------------------------


async def test_diagnostics_are_the_clis_findings_on_every_fixture(client):
    files = sorted(FIXTURES.glob("TL*/**/*.py"))
    expected: dict[Path, list[tuple]] = {path: [] for path in files}
    for finding in cli_json(*files):
        path = Path(finding["path"])
        path = path if path.is_absolute() else REPO / path
        lines = path.read_text(encoding="utf-8").splitlines()
        expected[path].append(
            (
                finding["line"] - 1,
                utf16_column(lines[finding["line"] - 1], finding["column"]),
                finding["end_line"] - 1,
                utf16_column([*lines, ""][finding["end_line"] - 1], finding["end_column"]),
                finding["code"],
                {"error": 1, "warning": 2, "info": 3}[finding["severity"]],
                finding["message"],
            )
        )
    uris = {path: open_document(client, path) for path in files}
    assert sum(map(len, expected.values())) > 100
    for path, uri in uris.items():
        assert summary(await published(client, uri)) == sorted(expected[path]), path


async def test_diagnostic_fields_on_a_fixture(client):
    uri = open_document(client, FIXTURES / "TL401" / "bad_fixable.py")
    diagnostics = await published(client, uri)
    assert [
        (d.range.start.line, d.range.start.character, d.range.end.character, d.code)
        for d in diagnostics
    ] == [(11, 4, 27, "TL401"), (13, 8, 32, "TL401"), (14, 17, 44, "TL401"), (15, 4, 26, "TL401")]
    first = diagnostics[0]
    assert first.severity == types.DiagnosticSeverity.Warning
    assert first.source == "triton-lint"
    assert first.code_description.href.endswith("/rules/TL401.md")


async def test_positions_count_utf16_units(client, tmp_path):
    source = (FIXTURES / "TL101" / "bad.py").read_text(encoding="utf-8")
    path = tmp_path / "kernel.py"
    # A non-BMP character before the finding on its line: two UTF-16 units, one code point.
    line = next(i for i, text in enumerate(source.splitlines()) if "# <- TL101" in text)
    lines = source.splitlines(keepends=True)
    indent = len(lines[line]) - len(lines[line].lstrip())
    lines[line] = lines[line][:indent] + 's = "🙂"; ' + lines[line][indent:]
    text = "".join(lines)
    path.write_text(text, encoding="utf-8")
    (finding,) = [f for f in cli_json(path) if f["line"] == line + 1]
    uri = open_document(client, path)
    (diagnostic,) = [d for d in await published(client, uri) if d.range.start.line == line]
    # The code point column (the CLI's) plus the emoji's second UTF-16 unit.
    assert diagnostic.range.start.character == finding["column"] - 1 + 1
    assert diagnostic.range.start.character == utf16_column(lines[line], finding["column"])


async def test_syntax_error_gives_tl001_at_the_error(client, tmp_path):
    path = tmp_path / "broken.py"
    text = "import triton\n\n@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr +\n"
    uri = open_document(client, path, text)
    (diagnostic,) = await published(client, uri)
    assert diagnostic.code == "TL001"
    assert diagnostic.range.start.line == 4


async def test_files_without_kernels_and_other_languages_get_no_diagnostics(client, tmp_path):
    plain = open_document(client, tmp_path / "plain.py", "import triton\nx = 1\n")
    assert await published(client, plain) == []
    kernel = (FIXTURES / "TL101" / "bad.py").read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "notes.txt", kernel, language="plaintext")
    assert await published(client, uri) == []


async def test_configuration_and_noqa_are_read_and_reloaded(client, tmp_path):
    kernel = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    kernel = kernel.replace("# <- TL401", "", 1).replace(
        'tl.device_print("x", x)', 'tl.device_print("x", x)  # noqa: TL401', 1
    )
    path = tmp_path / "pkg" / "kernel.py"
    path.parent.mkdir()
    path.write_text(kernel, encoding="utf-8")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.triton-lint]\nignore = ["TL401"]\n', encoding="utf-8")
    uri = open_document(client, path)
    assert await published(client, uri) == []
    pyproject.write_text("[tool.triton-lint]\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await asyncio.sleep(0)
    for _ in range(3000):
        if len([p for p in client.published if p.uri == uri]) >= 2:
            break
        await asyncio.sleep(0.01)
    latest = [p for p in client.published if p.uri == uri][-1]
    # The noqa'd print stays silent; the other three come back with the configuration.
    assert sorted(d.range.start.line + 1 for d in latest.diagnostics) == [14, 15, 16]
    registered = [r.method for r in client.registrations]
    assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in registered


async def test_a_bad_configuration_is_shown_and_the_defaults_apply(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.triton-lint]\nselect = ["TL999"]\n', encoding="utf-8"
    )
    path = tmp_path / "kernel.py"
    shutil.copy(FIXTURES / "TL401" / "bad_fixable.py", path)
    uri = open_document(client, path)
    assert {d.code for d in await published(client, uri)} == {"TL401"}
    assert any("TL999" in message for message in client.shown)


async def test_excluded_files_get_no_diagnostics(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.triton-lint]\nexclude = ["vendored"]\n', encoding="utf-8"
    )
    path = tmp_path / "vendored" / "kernel.py"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "TL401" / "bad_fixable.py", path)
    uri = open_document(client, path)
    assert await published(client, uri) == []


# Not blocking, not stale -------------------------------------------------------------------


async def test_debounced_edits_publish_only_the_last_version(debounced, tmp_path):
    client = debounced
    path = tmp_path / "kernel.py"
    clean = (FIXTURES / "TL401" / "good.py").read_text(encoding="utf-8")
    uri = open_document(client, path, clean)
    assert await published(client, uri) == []
    bad = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    for version in range(2, 7):
        change_document(client, uri, version, clean if version < 6 else bad)
    diagnostics = await published(client, uri, 6)
    assert [p.version for p in client.published if p.uri == uri] == [1, 6]
    assert len(diagnostics) == 4


async def test_every_publication_matches_the_text_of_its_version(client, tmp_path):
    """Edits faster than the linter: results of an older text are never published for a
    newer version (debounce 0, so lints overlap edits)."""
    path = tmp_path / "kernel.py"
    bad = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    lines = bad.splitlines(keepends=True)
    prints = [i for i, line in enumerate(lines) if "# <- TL401" in line]
    texts = {}
    for version in range(1, 5):  # version v keeps the first v prints
        kept = set(prints[:version])
        texts[version] = "".join(
            line for i, line in enumerate(lines) if i not in prints or i in kept
        )
    uri = open_document(client, path, texts[1])
    for version in range(2, 5):
        change_document(client, uri, version, texts[version])
    await published(client, uri, 4)
    for params in client.published:
        if params.uri == uri:
            assert len(params.diagnostics) == params.version


async def test_run_on_save_lints_on_open_and_save_only(on_save, tmp_path):
    client = on_save
    clean = (FIXTURES / "TL401" / "good.py").read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "kernel.py", clean)
    assert await published(client, uri) == []
    bad = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    change_document(client, uri, 2, bad)
    await asyncio.sleep(0.5)
    assert [p.version for p in client.published if p.uri == uri] == [1]
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert len(await published(client, uri, 2)) == 4


async def test_a_warning_is_logged_once_not_on_every_edit(client, tmp_path):
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    text = text.replace("# show the input", "# noqa: show the input")
    uri = open_document(client, tmp_path / "kernel.py", text)
    await published(client, uri)
    for version in (2, 3):
        change_document(client, uri, version, text + "\n" * version)
        await published(client, uri, version)
    logged = [m.message for m in client.log_messages if "malformed" in m.message]
    assert len(logged) == 1 and "kernel.py:11:" in logged[0]


# Code actions ------------------------------------------------------------------------------


async def test_safe_fix_is_a_preferred_quick_fix_and_noqa_is_offered(client, tmp_path):
    path = tmp_path / "kernel.py"
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    uri = open_document(client, path, text)
    await published(client, uri)
    actions = await code_actions(client, uri, 11)
    titles = [a.title for a in actions]
    assert titles == [
        "TL401: Remove `tl.device_print`",
        "TL401: suppress on this line with `# noqa: TL401`",
        "triton-lint: apply all safe fixes",
    ]
    fix, noqa, _ = actions
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics[0].code == "TL401"
    fixed = apply_edits(text, edits_of(fix))
    assert fixed == text.replace('    tl.device_print("x", x)  # <- TL401\n', "")
    suppressed = apply_edits(text, edits_of(noqa))
    assert suppressed.splitlines()[11] == '    tl.device_print("x", x)  # <- TL401  # noqa: TL401'
    for edited, left in ((fixed, [13, 14, 15]), (suppressed, [14, 15, 16])):
        path.write_text(edited, encoding="utf-8")
        assert [f["line"] for f in cli_json(path)] == left


async def test_unsafe_fix_is_labelled_and_not_preferred(client):
    uri = open_document(client, FIXTURES / "TL104" / "bad_outer_stride.py")
    diagnostics = await published(client, uri)
    line = next(d.range.start.line for d in diagnostics if d.code == "TL104")
    actions = [a for a in await code_actions(client, uri, line) if "noqa" not in a.title]
    assert actions and all(a.title.endswith("(unsafe fix)") for a in actions)
    assert not any(a.is_preferred for a in actions)


async def test_noqa_extends_an_existing_directive(client, tmp_path):
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    text = text.replace(
        'tl.device_print("x", x)  # <- TL401', 'tl.device_print("x", x)  # noqa: TL101'
    )
    uri = open_document(client, tmp_path / "kernel.py", text)
    await published(client, uri)
    (noqa,) = [a for a in await code_actions(client, uri, 11) if "noqa" in a.title]
    edited = apply_edits(text, edits_of(noqa))
    assert edited.splitlines()[11] == '    tl.device_print("x", x)  # noqa: TL101, TL401'


async def test_fix_all_on_save_matches_the_cli_fix(client, tmp_path):
    source = FIXTURES / "TL401" / "bad_fixable.py"
    text = source.read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "open.py", text)
    await published(client, uri)
    (action,) = await code_actions(client, uri, 0, only=["source.fixAll"])
    assert action.kind == "source.fixAll.triton-lint"
    copy = tmp_path / "cli.py"
    copy.write_text(text, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "triton_lint", "--fix", "--no-cache", str(copy)],
        capture_output=True,
        check=False,
    )
    assert apply_edits(text, edits_of(action)) == copy.read_text(encoding="utf-8")
    assert copy.read_text(encoding="utf-8") != text


async def test_fix_all_is_resolved_lazily_when_the_client_can(client, tmp_path):
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "kernel.py", text)
    await published(client, uri)
    (action,) = [a for a in await code_actions(client, uri, 0) if a.kind.startswith("source")]
    assert action.edit is None
    resolved = await client.code_action_resolve_async(action)
    assert "device_print" not in apply_edits(text, edits_of(resolved))


async def test_actions_use_plain_changes_for_clients_without_document_changes(neovim, tmp_path):
    client = neovim
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "kernel.py", text)
    await published(client, uri)
    fix = (await code_actions(client, uri, 11))[0]
    assert fix.edit is not None and fix.edit.document_changes is None
    assert list(fix.edit.changes) == [uri]
    assert apply_edits(text, edits_of(fix)).count("device_print") == text.count("device_print") - 1


async def test_no_actions_for_a_document_changed_since_its_diagnostics(debounced, tmp_path):
    client = debounced
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    uri = open_document(client, tmp_path / "kernel.py", text)
    await published(client, uri)
    change_document(client, uri, 2, text + "\n")
    assert await code_actions(client, uri, 11) == []


# Hover -----------------------------------------------------------------------------------


async def test_hover_on_a_diagnostic_shows_the_rule_page(client, tmp_path):
    uri = open_document(client, FIXTURES / "TL401" / "bad_fixable.py")
    await published(client, uri)

    async def hover(line: int, character: int) -> types.Hover | None:
        return await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )

    shown = await hover(11, 10)
    assert shown is not None and shown.contents.kind == types.MarkupKind.Markdown
    page = shown.contents.value
    assert page.startswith("# TL401 debug-print")
    assert "## Why it matters" in page and "```python" in page
    assert page.rstrip().endswith(
        "(https://github.com/triton-lint/triton-lint/blob/main/rules/TL401.md)"
    )
    assert await hover(11, 2) is None  # before the finding's range
    assert await hover(0, 0) is None


# Isolation ---------------------------------------------------------------------------------


async def test_the_server_never_imports_torch_or_triton(sentinel):
    client = sentinel
    uri = open_document(client, FIXTURES / "TL401" / "bad_fixable.py")
    assert len(await published(client, uri)) == 4  # the worker linted a kernel file
    (action,) = await code_actions(client, uri, 0, only=["source.fixAll"])
    assert action.edit is not None  # and fixed it: both processes are still alive


async def test_an_unsaved_document_is_linted_with_the_working_directorys_settings(client):
    text = (FIXTURES / "TL401" / "bad_fixable.py").read_text(encoding="utf-8")
    uri = open_document(client, "untitled:Untitled-1", text)
    assert [d.range.start.line + 1 for d in await published(client, uri)] == [12, 14, 15, 16]


# The project ---------------------------------------------------------------------------------


async def test_a_launching_file_gets_its_launches_findings_and_saving_a_caller_relints_it(
    client, tmp_path
):
    case = tmp_path / "case"
    shutil.copytree(FIXTURES / "project" / "tl209_good", case)
    ops = case / "pkg" / "ops.py"
    layer = case / "pkg" / "layer.py"
    ops_uri = open_document(client, ops)
    assert await published(client, ops_uri) == []
    layer_uri = open_document(client, layer)
    await published(client, layer_uri)
    unbounded = layer.read_text().replace("    assert n <= 4096\n", "")
    layer.write_text(unbounded)
    change_document(client, layer_uri, 2, unbounded)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=layer_uri))
    )
    for _ in range(3000):
        publications = [p for p in client.published if p.uri == ops_uri]
        if len(publications) > 1:
            break
        await asyncio.sleep(0.01)
    codes = [(d.range.start.line + 1, d.code) for d in publications[-1].diagnostics]
    assert codes == [(8, "TL209")]
