"""LSP handlers, one module per method or command."""

from __future__ import annotations

from server.lsp.handlers import (
    analyze_necessity,
    apply_proposal,
    check_change,
    code_action,
    code_lens,
    compare_backends,
    hover,
    lifecycle,
    locate_bug,
    misc_commands,
    request_edit,
    sync,
)

MODULES = (
    lifecycle,
    sync,
    hover,
    code_lens,
    code_action,
    request_edit,
    apply_proposal,
    compare_backends,
    check_change,
    misc_commands,
    analyze_necessity,
    locate_bug,
)


def register_all(ls) -> None:
    for module in MODULES:
        module.register(ls)
