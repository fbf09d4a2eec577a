"""The language server's parts on their own: positions, edits, options, the lint worker's
recovery, and the CLI's message when the extra is missing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound

from tests.conftest import apply_edits
from triton_lint.cli import cli
from triton_lint.finding import Span
from triton_lint.lsp.actions import replacement, wants
from triton_lint.lsp.positions import LineIndex
from triton_lint.lsp.server import ServerOptions, build_server
from triton_lint.lsp.worker import LintWorker, WorkerFailed

KERNEL = (
    Path(__file__).resolve().parent.parent / "fixtures" / "TL401" / "bad_fixable.py"
).read_text(encoding="utf-8")


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 11), ("utf-8", 14), ("utf-32", 10)])
def test_columns_in_the_negotiated_encoding(encoding, character):
    index = LineIndex('s = "é🙂"; x\n', encoding)
    # `x` is code point 11 (1-based); before it, é is 1/1/2 units and the emoji 1/2/4
    # (UTF-32/16/8), the other eight characters one each.
    assert index.position(1, 11) == types.Position(line=0, character=character)
    assert index.location(types.Position(line=0, character=character)) == (1, 11)


def test_lines_end_only_where_python_ends_them():
    index = LineIndex("a = 1\x0c\r\nb = 2\rc\n")  # a form feed is not a line end
    assert index.lines == ["a = 1\x0c", "b = 2", "c"]
    assert index.range(Span(3, 1, 3, 2)) == types.Range(
        start=types.Position(line=2, character=0), end=types.Position(line=2, character=1)
    )
    assert index.position(9, 4) == types.Position(line=3, character=0)  # past the end


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("a\nb\nc\n", "a\nc\n"),
        ("a\nb\nc", "a\nB\nc"),
        ("a\nb", "a\nb\nc"),
        ("a\r\nb\r\n", "x\r\nb\r\n"),
        ("", "a\n"),
        ("same\n", "same\n"),
    ],
)
def test_fix_all_replacement_turns_the_text_into_the_fixed_one(before, after):
    edits = replacement(before, after, LineIndex(before))
    result = apply_edits(before, edits)
    assert result == after
    assert len(edits) == (before != after)


def test_kinds_a_request_admits():
    assert wants(None, "quickfix")
    assert not wants(None, "source.fixAll.triton-lint", default=False)
    assert wants(["source.fixAll"], "source.fixAll.triton-lint")
    assert wants(["source"], "source.fixAll.triton-lint")
    assert not wants(["quickfix"], "source.fixAll.triton-lint")
    assert not wants(["source.fixAll.triton"], "source.fixAll.triton-lint")


def test_initialization_options():
    assert ServerOptions.parse(None) == ServerOptions()
    assert ServerOptions.parse({"debounceMs": 40, "run": "onSave"}) == ServerOptions(0.04, False)
    # Wrong types and values are ignored, not fatal.
    assert ServerOptions.parse({"debounceMs": "fast", "run": "always"}) == ServerOptions()
    assert ServerOptions.parse({"debounceMs": -1}) == ServerOptions()
    assert ServerOptions.parse({"debounceMs": True}) == ServerOptions()


def with_worker(timeout: float, scenario: Callable[[LintWorker], Awaitable[None]]) -> None:
    """Run ``scenario`` against a fresh worker and stop the worker afterwards."""

    async def run() -> None:
        worker = LintWorker(timeout)
        try:
            await scenario(worker)
        finally:
            worker.stop()

    asyncio.run(run())


def test_worker_lints_and_recovers_from_a_killed_process():
    async def scenario(worker: LintWorker) -> None:
        first = await worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9")
        assert [f.line for f in first.findings] == [12, 14, 15, 16]
        worker._process.kill()  # killed for memory, say
        with pytest.raises(WorkerFailed, match="died"):
            await worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9")
        again = await worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9")
        assert [f.line for f in again.findings] == [12, 14, 15, 16]

    with_worker(60, scenario)


def test_worker_over_its_time_limit_is_replaced():
    async def scenario(worker: LintWorker) -> None:
        with pytest.raises(WorkerFailed, match="longer than"):
            await worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9")
        worker.timeout = 60
        result = await worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9")
        assert len(result.findings) == 4

    with_worker(1e-6, scenario)


def test_a_reply_its_caller_abandoned_is_not_taken_for_the_next():
    async def scenario(worker: LintWorker) -> None:
        abandoned = asyncio.ensure_future(worker.call("lint", "k.py", KERNEL, ("TL401",), "3.9"))
        await asyncio.sleep(0.05)
        abandoned.cancel()
        clean = KERNEL.replace("tl.device_print", "pass  #").replace("print(", "str(")
        clean = clean.replace("tl.static_print", "str")
        result = await worker.call("lint", "k.py", clean, ("TL401",), "3.9")
        assert result.findings == []

    with_worker(60, scenario)


def test_worker_reports_a_raising_request():
    async def scenario(worker: LintWorker) -> None:
        with pytest.raises(WorkerFailed, match="raised"):
            await worker.call("lint", "k.py", KERNEL, ("TL401",))  # target missing

    with_worker(60, scenario)


def test_server_command_without_the_extra_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    monkeypatch.delitem(sys.modules, "triton_lint.lsp.server", raising=False)
    result = CliRunner().invoke(cli, ["server"])
    assert result.exit_code == 2
    assert "pip install 'triton-lint[lsp]'" in result.output


def test_a_client_that_refuses_the_file_watcher_is_logged_not_fatal(monkeypatch):
    """A client that claims dynamic registration but answers with an error (as pytest-lsp's
    own client does): the server logs that configuration changes go unnoticed and goes on."""
    server = build_server()
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            )
        )
    )
    monkeypatch.setattr(type(server), "client_capabilities", property(lambda _: capabilities))
    monkeypatch.setattr(server.worker, "start", lambda: None)
    logged: list[str] = []
    monkeypatch.setattr(server, "log", lambda message, *_: logged.append(message))

    async def refuse(params):
        raise JsonRpcMethodNotFound.of("client/registerCapability")

    monkeypatch.setattr(server, "client_register_capability_async", refuse)
    initialized = server.protocol.fm.features[types.INITIALIZED]
    asyncio.run(initialized(types.InitializedParams()))
    assert len(logged) == 1 and "pyproject.toml changes will not be noticed" in logged[0]
