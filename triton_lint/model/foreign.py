"""Launches of a file's kernels in the other files of the project, and what the callers of every
launching function establish at its launches (`triton_lint.model.callers`).

Runs when a rule first reads ``module.launches`` of a model built with a `ProjectContext`: the
files it names are parsed with libcst once per kernel file's lint (a launching file is small
next to the kernels), and their launches join the kernel's own as `LaunchSite`s whose
``module`` is the launching file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import libcst as cst

from triton_lint.model.callers import (
    CallerIndex,
    autograd_flag_tests,
    exit_tests,
    free_names,
    helper_checks,
    qualified_name,
)
from triton_lint.model.ctx_flags import flag_tests
from triton_lint.model.host_reads import relevant_read, whole_digest
from triton_lint.model.host_text import wanted_names
from triton_lint.model.kernel import LaunchSite, ModuleModel
from triton_lint.model.launches import find_launches_in
from triton_lint.model.parsing import parse_module
from triton_lint.model.project import ProjectContext
from triton_lint.source import decode

#: Builds the model of a file that only hosts launches (no kernel is walked).
HostBuilder = Callable[[str, str, cst.Module, str], ModuleModel]
#: Host models kept per process (least recently used dropped first).
MAX_SHARED_HOSTS = 64
#: A host model and the digest of what it read of its file (`triton_lint.model.host_reads`).
Host = tuple[ModuleModel | None, str]
_HOSTS: OrderedDict[tuple[str, str, bytes, frozenset[str]], Host] = OrderedDict()


def find_foreign_launches(model: ModuleModel, build_host: HostBuilder) -> None:
    """Add the project's launches of ``model``'s kernels and the caller facts of every launch."""
    project = model.project or ProjectContext()
    hosts: dict[str, Host] = {model.path: (model, "")}

    def host(path: str) -> ModuleModel | None:
        if path not in hosts:
            hosts[path] = _parse(path, project.sources.get(path), model, build_host)
        return hosts[path][0]

    for path in sorted(set(project.kernel_refs) | set(project.dispatch_refs)):
        launching = host(path)
        if launching is not None:
            names = project.kernel_refs.get(path, {})
            find_launches_in(launching, model, names, project.dispatch_refs.get(path, {}))
    callers = CallerIndex(model, host)
    model.memo[("caller index", 0)] = callers  # read later by `unit_batch` (same host files)
    for site in model.launches:
        _add_caller_facts(model, site, callers)
    model.reads = {
        path: _read(parsed, digest, project.sources[path])
        for path, (parsed, digest) in hosts.items()
        if path in project.sources
    }


def _read(host: ModuleModel | None, digest: str, data: bytes) -> str:
    """What the lint read of another file: its relevant part (``digest``), or all of it
    where an autograd flag's helper was parsed from the whole file (`ctx_flags`): that
    host's memo says so (it is shared, so an earlier lint's read counts too)."""
    if host is not None and any(key[0] == "returned helper" for key in host.memo):
        return whole_digest(data)
    return digest


def _add_caller_facts(model: ModuleModel, site: LaunchSite, callers: CallerIndex) -> None:
    host = site.module or model
    if site.function is None:
        return
    site.caller_guards.extend(helper_checks(host, site.function, site.call))
    # `if m >= 4096: return` before the launch: holding, not a guard of what it mentions
    site.caller_holding.extend(exit_tests(host, site.function, site.call))
    flags = autograd_flag_tests(host, site.function, site.call, site.top)
    site.caller_holding.extend(flags)
    site.caller_guards.extend(flags)
    name = qualified_name(host, site.function, site.top)
    if name is None:
        return
    implied = flag_tests(callers, (host.path, name), site, host)  # `if use_short:` in a helper
    site.caller_holding.extend(implied)
    site.caller_guards.extend(implied)
    facts = callers.facts((host.path, name), site.function)
    site.caller_holding.extend(facts.holding)
    site.caller_guards.extend(facts.guards)
    params = {p.name.value for p in _parameters(site.function)}
    values = {
        name: value
        for name, value in facts.values.items()
        if name not in site.host_definitions and (name in params or name not in site.host_locals)
    }
    merged = {**site.host_definitions, **values}
    values = {name: value for name, value in values.items() if not _cyclic(name, merged)}
    if values:
        site.host_definitions = {**site.host_definitions, **values}
        model.add_host_values(site, values)


def _cyclic(name: str, definitions: dict[str, cst.BaseExpression]) -> bool:
    """``name``'s definition reads ``name`` again through the definitions (a caller passing
    ``n`` for the parameter ``n``): readers that follow definitions would never stop."""
    seen: set[str] = set()
    pending = [name]
    while pending:
        for read in free_names(definitions[pending.pop()]):
            if read == name:
                return True
            if read in definitions and read not in seen:
                seen.add(read)
                pending.append(read)
    return False


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _parse(path: str, data: bytes | None, model: ModuleModel, build_host: HostBuilder) -> Host:
    """The host model of the part of another file this kernel file's facts read
    (`triton_lint.model.host_text`), shared by the kernel files one process lints that read
    the same part: host models are read, never changed, by the lints that share them."""
    if data is None or model.project is None:
        return None, ""
    names = model.project.host_names.get(path) or wanted_names(model.project, path)
    key = (path, model.target_version, data, names)
    if key in _HOSTS:
        _HOSTS.move_to_end(key)
        return _HOSTS[key]
    try:
        whole = decode(data)
    except (SyntaxError, UnicodeError, LookupError):
        _HOSTS[key] = (None, whole_digest(data))
        return _HOSTS[key]
    text, blank, digest = relevant_read(whole, names)
    try:
        module = parse_module(text)
    except (SyntaxError, UnicodeError, LookupError, cst.ParserSyntaxError, RecursionError):
        host = None
    else:
        host = build_host(path, text, module, model.target_version)
        host.module_names |= blank
    _HOSTS[key] = (host, digest)
    while len(_HOSTS) > MAX_SHARED_HOSTS:
        _HOSTS.popitem(last=False)
    return _HOSTS[key]
