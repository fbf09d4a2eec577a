"""``triton-lint server``: a Language Server Protocol server over stdio (pygls).

Open Python documents are linted on open, on save and (debounced) on change, in a worker
process; a result is published only if the document has not changed since it was read.
Settings come from the same ``[tool.triton-lint]`` tables as the CLI, found from the
document's directory, and are re-read when a ``pyproject.toml`` changes.

Initialization options (all optional): ``debounceMs`` (default 150), the pause after an edit
before linting, and ``run``: ``"onType"`` (default) or ``"onSave"``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from triton_lint import __version__
from triton_lint.config import ConfigError, config_for_directory
from triton_lint.discovery import is_excluded
from triton_lint.finding import Finding
from triton_lint.fixes import fixable
from triton_lint.lsp.actions import FIX_ALL, quick_fixes, replacement, wants, workspace_edit
from triton_lint.lsp.diagnostics import rule_page, to_diagnostic
from triton_lint.lsp.positions import LineIndex
from triton_lint.lsp.project import EditorProject
from triton_lint.lsp.worker import LintWorker, WorkerFailed
from triton_lint.run import Runner, RunOptions
from triton_lint.selection import SelectionError
from triton_lint.target import TargetVersionError

#: A lint that takes longer than this is abandoned and its worker restarted.
LINT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class FileSettings:
    """What decides a document's findings: sent to the worker with its text."""

    display: str
    codes: tuple[str, ...]
    target: str


@dataclass
class Linted:
    """The findings published for one version of a document."""

    version: int | None
    text: str
    settings: FileSettings
    findings: list[Finding]
    diagnostics: list[types.Diagnostic]


@dataclass
class ServerOptions:
    debounce_s: float = 0.15
    on_type: bool = True

    @classmethod
    def parse(cls, options: Any) -> ServerOptions:
        """Options from ``initializationOptions``; values of the wrong type are ignored."""
        parsed = cls()
        if not isinstance(options, dict):
            return parsed
        debounce = options.get("debounceMs")
        if isinstance(debounce, int | float) and not isinstance(debounce, bool) and debounce >= 0:
            parsed.debounce_s = debounce / 1000
        if options.get("run") in ("onType", "onSave"):
            parsed.on_type = options["run"] == "onType"
        return parsed


class TritonLintServer(LanguageServer):
    """The server and its per-document state."""

    def __init__(self) -> None:
        super().__init__(
            "triton-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.options = ServerOptions()
        self.worker = LintWorker(LINT_TIMEOUT_S)
        self.runner = Runner(RunOptions())
        self.project = EditorProject(self.runner.config_for)
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.reported: set[str] = set()  # configuration errors already shown
        self.logged: dict[str, set[str]] = {}  # each document's warnings of its last lint

    # Documents ---------------------------------------------------------------------------

    def document(self, uri: str) -> TextDocument | None:
        """The open document (None once closed)."""
        return self.workspace.text_documents.get(uri)

    def index(self, text: str) -> LineIndex:
        return LineIndex(text, self.workspace.position_encoding or "utf-16")

    def settings_for(self, document: TextDocument) -> FileSettings | None:
        """The document's rules and target, from its configuration; None when it is not
        Python or its configuration excludes it."""
        if not _is_python(document):
            return None
        path = _path_of(document)
        try:
            config = self.runner.config_for(path.parent)
            if path.exists() and is_excluded(path, config):
                return None
            rules, target = self.runner.settings_for(path)
        except (ConfigError, SelectionError, TargetVersionError) as error:
            self.show_once(f"triton-lint: {error}; linting with the default settings")
            rules, target = Runner(RunOptions(isolated=True)).settings_for(path)
        return FileSettings(str(path), tuple(rule.code for rule in rules), target)

    def show_once(self, message: str) -> None:
        if message not in self.reported:
            self.reported.add(message)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=message)
            )

    def log(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def reload_settings(self) -> None:
        """Forget every cached configuration and lint the open documents again."""
        config_for_directory.cache_clear()
        self.runner = Runner(RunOptions())
        self.project = EditorProject(self.runner.config_for)
        self.reported.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)

    # Linting -----------------------------------------------------------------------------

    def relint_dependents(self, uri: str) -> None:
        """A file was saved: read the project again and lint the open documents whose
        diagnostics read it (a kernel file whose launch is in it, a launching file of it)."""
        saved = self.document(uri)
        if saved is None or not _is_python(saved):
            return
        self.project.forget()
        others = {
            _path_of(document): other
            for other, document in self.workspace.text_documents.items()
            if other != uri and _is_python(document)
        }
        for path in self.project.related(_path_of(saved), list(others)):
            self.schedule(others[path], 0)

    def schedule(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, replacing a lint still waiting or running."""
        previous = self.pending.get(uri)
        if previous is not None and not previous.done():
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self.lint(uri, delay))

    async def lint(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        document = self.document(uri)
        if document is None:
            return
        version, text = document.version, document.source
        settings = self.settings_for(document)
        if settings is None:
            self.publish(uri, version, text, None, [])
            return
        path = _path_of(document)
        try:
            result = await self.worker.call(
                "lint",
                settings.display,
                text,
                settings.codes,
                settings.target,
                self.project.context(path),
            )
            for kernel_file, kernel_text, context in self.project.launched_kernel_files(path, text):
                result.findings += await self.worker.call(
                    "lint_for",
                    kernel_file,
                    kernel_text,
                    settings.codes,
                    settings.target,
                    context,
                    settings.display,
                )
        except WorkerFailed as error:
            self.log(f"triton-lint: {settings.display}: {error}", types.MessageType.Error)
            return
        current = self.document(uri)
        if current is None or current.version != version:
            return  # stale: a newer lint is scheduled
        messages = [*result.warnings, *result.crashes]
        for message in messages:
            if message not in self.logged.get(uri, ()):  # once, not on every keystroke
                self.log(message)
        self.logged[uri] = set(messages)
        self.publish(uri, version, text, settings, result.findings)

    def publish(
        self,
        uri: str,
        version: int | None,
        text: str,
        settings: FileSettings | None,
        findings: list[Finding],
    ) -> None:
        index = self.index(text)
        diagnostics = [to_diagnostic(finding, index, uri) for finding in findings]
        if settings is None:
            self.linted.pop(uri, None)
        else:
            self.linted[uri] = Linted(version, text, settings, findings, diagnostics)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        )

    def current(self, uri: str) -> Linted | None:
        """The published results if the document has not changed since."""
        linted = self.linted.get(uri)
        document = self.document(uri)
        if linted is None or document is None or document.version != linted.version:
            return None
        return linted

    # Code actions and hover --------------------------------------------------------------

    def edit_for(
        self, uri: str, version: int | None
    ) -> Callable[[list[types.TextEdit]], types.WorkspaceEdit]:
        """Turns text edits of ``uri`` into the workspace edit this client accepts."""
        capabilities = self.client_capabilities.workspace
        versioned = bool(
            capabilities
            and capabilities.workspace_edit
            and capabilities.workspace_edit.document_changes
        )
        return lambda edits: workspace_edit(uri, version, edits, versioned)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        linted = self.current(uri)
        if linted is None:
            return []
        index = self.index(linted.text)
        start = index.location(params.range.start)
        end = index.location(params.range.end)
        only = params.context.only
        edit = self.edit_for(uri, linted.version)
        actions: list[types.CodeAction] = []
        if wants(only, types.CodeActionKind.QuickFix):
            asked = {(d.code, _key(d.range)) for d in params.context.diagnostics}
            for finding, diagnostic in zip(linted.findings, linted.diagnostics, strict=True):
                span = finding.span
                overlaps = (span.line, span.column) <= end and start <= (
                    span.end_line,
                    span.end_column,
                )
                if overlaps or (diagnostic.code, _key(diagnostic.range)) in asked:
                    actions.extend(quick_fixes(finding, diagnostic, linted.text, index, edit))
        safe_fixes = fixable(linted.findings, unsafe=False)
        if safe_fixes and wants(only, FIX_ALL, default=self.resolves_edits()):
            actions.append(
                types.CodeAction(
                    title="triton-lint: apply all safe fixes",
                    kind=FIX_ALL,
                    data={"uri": uri, "version": linted.version},
                )
            )
        return actions

    def resolves_edits(self) -> bool:
        """Whether the client asks for an action's edit only when it is chosen."""
        text_document = self.client_capabilities.text_document
        support = text_document.code_action if text_document else None
        resolve = support.resolve_support if support else None
        return bool(resolve and "edit" in resolve.properties)

    async def fix_all(self, action: types.CodeAction) -> types.CodeAction:
        """Fill in the fix-all action's edit: every safe fix, re-linted until stable."""
        data = action.data if isinstance(action.data, dict) else {}
        linted = self.current(str(data.get("uri")))
        if linted is None or linted.version != data.get("version"):
            return action  # the document changed: no edit
        settings = linted.settings
        try:
            fixed = await self.worker.call(
                "fix", settings.display, linted.text, settings.codes, settings.target, False
            )
        except WorkerFailed as error:
            self.log(f"triton-lint: {settings.display}: {error}", types.MessageType.Error)
            return action
        edits = replacement(linted.text, fixed, self.index(linted.text))
        action.edit = self.edit_for(str(data["uri"]), linted.version)(edits)
        return action

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        linted = self.current(params.text_document.uri)
        if linted is None:
            return None
        at = self.index(linted.text).location(params.position)
        codes: list[str] = []
        for finding in linted.findings:
            span = finding.span
            inside = (span.line, span.column) <= at < (span.end_line, span.end_column)
            if inside and finding.code not in codes:
                codes.append(finding.code)
        pages = [page for code in codes if (page := rule_page(code)) is not None]
        if not pages:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value="\n---\n\n".join(pages)
            )
        )


def _key(range_: types.Range) -> tuple[int, int, int, int]:
    return (range_.start.line, range_.start.character, range_.end.line, range_.end.character)


def _is_python(document: TextDocument) -> bool:
    """The editor says so; a client that sends no language id, the file name."""
    if document.language_id:
        return document.language_id == "python"
    return document.uri.endswith((".py", ".pyi"))


def _path_of(document: TextDocument) -> Path:
    """The document's file; an unsaved one is taken to sit in the working directory."""
    if urlparse(document.uri).scheme == "file" and document.path:
        return Path(document.path)
    return Path.cwd() / "untitled.py"


def build_server() -> TritonLintServer:
    """A server with every feature registered (tests drive it over stdio)."""
    server = TritonLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TritonLintServer, params: types.InitializeParams) -> None:
        ls.options = ServerOptions.parse(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TritonLintServer, params: types.InitializedParams) -> None:
        ls.worker.start()  # spawn and import now, not on the first keystroke
        watched = ls.client_capabilities.workspace
        watch = watched.did_change_watched_files if watched else None
        if watch is not None and watch.dynamic_registration:
            pyproject = types.FileSystemWatcher(glob_pattern="**/pyproject.toml")
            options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[pyproject])
            registration = types.Registration(
                id="triton-lint-config",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=options,
            )
            try:
                await ls.client_register_capability_async(
                    types.RegistrationParams(registrations=[registration])
                )
            except JsonRpcException as error:  # a client that claims the capability but errs
                ls.log(f"triton-lint: pyproject.toml changes will not be noticed: {error}")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TritonLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TritonLintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.options.on_type:
            ls.schedule(params.text_document.uri, ls.options.debounce_s)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TritonLintServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("/pyproject.toml"):
            ls.reload_settings()
            return
        ls.schedule(params.text_document.uri, 0)
        ls.relint_dependents(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TritonLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.linted.pop(uri, None)
        ls.logged.pop(uri, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: TritonLintServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.reload_settings()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True
        ),
    )
    async def code_action(
        ls: TritonLintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        actions = ls.code_actions(params)
        only = params.context.only
        if only is not None:  # asked for by kind (on save): fill the edit in now
            actions = [
                await ls.fix_all(action) if action.kind == FIX_ALL else action for action in actions
            ]
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(
        ls: TritonLintServer, action: types.CodeAction
    ) -> types.CodeAction:
        return await ls.fix_all(action) if action.kind == FIX_ALL else action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TritonLintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TritonLintServer, params: None) -> None:
        ls.worker.stop()

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client exits it."""
    build_server().start_io()
