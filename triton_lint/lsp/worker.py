"""The language server's lint worker: a child process, so linting never blocks the editor.

Requests go one at a time through a pipe. A worker that dies or overruns its time limit is
killed and a fresh one starts with the next request.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from triton_lint.workers import fix_source, lint_for, lint_source

_FUNCTIONS = {"lint": lint_source, "fix": fix_source, "lint_for": lint_for}


class WorkerFailed(Exception):
    """The worker died, overran its time limit or raised; the message says which."""


def _serve(connection: Connection) -> None:
    """The child's loop: answer ``(function, args)`` requests until the pipe closes."""
    os.dup2(2, 1)  # stdout carries the protocol in the parent: nothing may print there
    sys.stdout = sys.stderr
    while True:
        try:
            name, args = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            reply = (True, _FUNCTIONS[name](*args))
        except Exception as error:
            reply = (False, f"{type(error).__name__}: {error}")
        connection.send(reply)


class LintWorker:
    """One lint process, started on first use and restarted after a failure."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lock = asyncio.Lock()
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None

    def start(self) -> None:
        """Start the process if none is alive (spawned: the server runs reader threads)."""
        if self._process is not None and self._process.is_alive():
            return
        self.stop()
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(
            target=_serve, args=(child,), name="triton-lint-worker", daemon=True
        )
        process.start()
        child.close()
        self._process, self._connection = process, parent

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
        if self._process is not None:
            self._process.kill()
            self._process.join(timeout=5)
        self._process = self._connection = None

    async def call(self, name: str, *args: Any) -> Any:
        """Run ``name`` (``lint`` or ``fix``) in the worker and return its result.

        A caller that gives up (a newer edit cancelled it) does not stop the request: its
        reply is still read before the next request is sent, so requests never queue up in
        the pipe behind stale ones, and a caller waiting its turn that gives up sends nothing.
        """
        await self._lock.acquire()
        try:
            self.start()
            assert self._connection is not None
            self._connection.send((name, args))
        except BaseException:
            self._lock.release()
            raise
        reply = asyncio.get_running_loop().create_task(self._reply())
        reply.add_done_callback(self._release)
        return await asyncio.shield(reply)

    def _release(self, reply: asyncio.Task[Any]) -> None:
        self._lock.release()
        if not reply.cancelled():
            reply.exception()  # retrieved here too, for a caller that gave up

    async def _reply(self) -> Any:
        assert self._connection is not None and self._process is not None
        connection, process = self._connection, self._process
        loop = asyncio.get_running_loop()
        ready = await loop.run_in_executor(None, connection.poll, self.timeout)
        if not ready:
            self.stop()
            raise WorkerFailed(f"linting took longer than {self.timeout:g} s")
        try:
            ok, value = connection.recv()
        except (EOFError, OSError):
            process.join(timeout=5)
            self.stop()
            raise WorkerFailed(f"the lint worker died (exit code {process.exitcode})") from None
        if not ok:
            raise WorkerFailed(f"the lint worker raised {value}")
        return value
