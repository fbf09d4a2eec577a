"""The language server (`triton-lint server`): diagnostics, quick fixes and rule docs in editors.

It needs the ``[lsp]`` extra (pygls); nothing else in the package imports it.
"""
