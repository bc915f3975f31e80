"""`edit-fidelity serve`: the language server on stdio (default) or TCP."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}") from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"port out of range: {number}")
    return host or "127.0.0.1", number


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        description="Run the edit-fidelity language server. Settings come from the client "
        "(initializationOptions and workspace/configuration, section editFidelity); API keys only from "
        "the environment variables the settings name.",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (the default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", type=_host_port, help="listen on a TCP socket instead")
    # vscode-languageclient may add this for stdio servers; the LSP `processId` covers it
    p.add_argument("--clientProcessId", help=argparse.SUPPRESS)
    p.add_argument("--log-file", metavar="PATH", help="write the server log here (stdout is the protocol)")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument(
        "--offline",
        action="store_true",
        help="local models: use only the Hugging Face cache, never download (HF_HUB_OFFLINE=1)",
    )
    p.set_defaults(handler=run)


class _RefusalsAreNotErrors(logging.Filter):
    """pygls logs a traceback for every error answer; a refused request (bad arguments, a stale
    version) is the protocol working, so only unexpected errors reach the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        from pygls.exceptions import JsonRpcException, JsonRpcInternalError

        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcException) or isinstance(exc, JsonRpcInternalError)


def _fail(message: str) -> int:
    print(f"edit-fidelity serve: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    handler: logging.Handler
    if args.log_file:
        try:
            handler = logging.FileHandler(args.log_file, encoding="utf-8")
        except OSError as exc:
            return _fail(f"--log-file {args.log_file}: {exc.strerror or exc}; name a file in a writable folder")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_RefusalsAreNotErrors())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level)
    # pygls logs every message body at INFO: keep its chatter (and any document text) out of the log
    logging.getLogger("pygls").setLevel(max(logging.WARNING, getattr(logging, args.log_level)))
    # httpx logs request URLs at INFO; never headers, but keep it quiet anyway
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)

    if args.offline:  # the local backend's worker inherits it
        os.environ["HF_HUB_OFFLINE"] = "1"
    from server.lsp import create_server

    server = create_server()
    if args.tcp:
        host, port = args.tcp
        try:
            server.start_tcp(host, port)
        except OSError as exc:  # raised by the bind, before any client: a port in use, an unknown host
            # asyncio wraps the bind error with the address in strerror: the errno's own text is enough
            reason = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror or str(exc)
            if exc.errno == errno.EADDRINUSE:
                reason = "the address is already in use; choose another port or stop the process holding it"
            return _fail(f"cannot listen on {host}:{port}: {reason}")
    else:
        server.start_io()
    return 0
