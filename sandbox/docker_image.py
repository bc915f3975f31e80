"""The docker level's image: its build context, generated from the sources the local levels use, and
an idempotent build (`edit-fidelity sandbox prepare --docker`).

Two digests are stamped on the image as labels: `code` covers what decides how a program runs (the
Dockerfile, the env builder, the suites' requirements, the coverage driver), so the backend uses an
image only when it matches this checkout; `context` adds the build inputs (base image, wheels, CA
bundle, index), so `prepare` skips a build whose inputs did not change. Nothing is ever pulled
except by `prepare` itself, for the base image the user named.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import coverage

from sandbox import envs

IMAGE = "edit-fidelity-sandbox:latest"
IMAGE_ENV = "EDIT_FIDELITY_DOCKER_IMAGE"  # another tag for the image (built and used under that name)
IMAGES_DIR = Path(__file__).parent / "images"
CODE_LABEL = "edit-fidelity.code"
CONTEXT_LABEL = "edit-fidelity.context"
SUITES_LABEL = "edit-fidelity.suites"
DEFAULT_SUITES = ("canitedit",)
DEFAULT_BASE = "debian:bookworm-slim"
DEFAULT_INDEX = "https://pypi.org/simple"
HOST_CA_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")
ROOT_IN_IMAGE = "/opt/edit-fidelity"


class ImageError(RuntimeError):
    """A build that cannot go on; the message says what to do."""


def image_name() -> str:
    return os.environ.get(IMAGE_ENV) or IMAGE


def suites_json(suites: tuple[str, ...]) -> bytes:
    spec = {
        "coverage": f"coverage=={coverage.__version__}",
        "unneeded_pth": list(envs.UNNEEDED_PTH),
        "suites": {
            name: {
                "requirements": list(envs.SUITES[name].requirements),
                "optional": list(envs.SUITES[name].optional),
                "imports": list(envs.SUITES[name].imports),
                "stub_sources": {m: envs.VLLM_STUB for m in envs.SUITES[name].stubs if m == "vllm"},
            }
            for name in ("base", *suites)
            if name in envs.SUITES
        },
    }
    return json.dumps(spec, indent=1, sort_keys=True).encode()


def code_files(suites: tuple[str, ...]) -> dict[str, bytes]:
    return {
        "Dockerfile": (IMAGES_DIR / "Dockerfile").read_bytes(),
        "build_envs.py": (IMAGES_DIR / "build_envs.py").read_bytes(),
        "suites.json": suites_json(suites),
        "covdriver.py": (Path(__file__).parent / "covdriver.py").read_bytes(),
    }


def _digest(parts: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(parts):
        h.update(name.encode() + b"\0" + hashlib.sha256(parts[name]).digest())
    return h.hexdigest()[:32]


def code_digest(suites: tuple[str, ...]) -> str:
    return _digest(code_files(tuple(sorted(suites))))


def host_ca_bundle() -> Path:
    for name in (os.environ.get("SSL_CERT_FILE") or "", os.environ.get("PIP_CERT") or "", *HOST_CA_FILES):
        if name and os.path.isfile(name):
            return Path(name)
    raise ImageError(
        "no CA bundle found on this host (looked at SSL_CERT_FILE, PIP_CERT and "
        f"{', '.join(HOST_CA_FILES)}); pip inside the image needs one"
    )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def default_wheel_dirs() -> list[Path]:
    """Local find-links directories of the host's pip configuration (where a CPU torch wheel lies)."""
    value = os.environ.get("PIP_FIND_LINKS", "")
    if not value:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.find-links"],
            capture_output=True,
            text=True,
            check=False,
        )
        value = done.stdout.strip() if done.returncode == 0 else ""
    dirs = [Path(v.removeprefix("file://")) for v in value.split()]
    return [d for d in dirs if d.is_dir()]


def wheels_for(suites: tuple[str, ...], dirs: list[Path]) -> list[Path]:
    """The wheels in `dirs` for projects the suites require (others would only bloat the context)."""
    wanted = {
        _norm(re.split(r"[=<>!~\[ ;]", r, maxsplit=1)[0])
        for s in suites
        for r in (*envs.SUITES[s].requirements, *envs.SUITES[s].optional)
    }
    found = []
    for d in dirs:
        for whl in sorted(d.glob("*.whl")):
            if _norm(whl.name.split("-", 1)[0]) in wanted:
                found.append(whl)
    return found


def _file_digest(path: Path) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


def write_context(out: Any, suites: tuple[str, ...], wheels: list[Path], ca: Path) -> None:
    """The build context as a tar stream into `out`."""
    with tarfile.open(fileobj=out, mode="w") as tar:
        members: dict[str, bytes] = {**code_files(suites), "host-ca.crt": ca.read_bytes()}
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
        folder = tarfile.TarInfo("wheels")
        folder.type, folder.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(folder)
        for whl in wheels:
            tar.add(str(whl), arcname=f"wheels/{whl.name}")


def context_digest(suites: tuple[str, ...], base: str, index_url: str, wheels: list[Path], ca: Path) -> str:
    parts = {**code_files(suites), "host-ca.crt": ca.read_bytes(), "base": base.encode(), "index": index_url.encode()}
    parts.update({f"wheels/{w.name}": _file_digest(w) for w in wheels})
    return _digest(parts)


def image_labels(client: Any, image: str) -> dict[str, str] | None:
    """The image's labels, or None when the engine has no such image (never pulls)."""
    import docker.errors

    try:
        return dict(client.images.get(image).labels or {})
    except docker.errors.ImageNotFound:
        return None


def unusable_reason(client: Any, image: str) -> str | None:
    """None when `image` is there and was built from this checkout's code, else why not (one line)."""
    labels = image_labels(client, image)
    fix = "run `edit-fidelity sandbox prepare --docker`"
    if labels is None:
        return f"engine answers but image {image} is not built: {fix}"
    suites = tuple(s for s in labels.get(SUITES_LABEL, "").split(",") if s in envs.SUITES)
    if labels.get(CODE_LABEL) != code_digest(suites):
        return f"image {image} was built from another version of sandbox/images or the suites: {fix}"
    return None


def prepare(
    client: Any,
    *,
    suites: tuple[str, ...] = DEFAULT_SUITES,
    base: str = DEFAULT_BASE,
    network: str | None = None,
    wheel_dirs: list[Path] | None = None,
    index_url: str | None = None,
    image: str | None = None,
    log: Callable[[str], object] = print,
) -> bool:
    """Build `image` unless one built from the same inputs is there; True when it built."""
    image = image or image_name()
    unknown = [s for s in suites if s not in envs.SUITES]
    if unknown:
        raise ImageError(f"unknown suite {unknown[0]!r}; known: {', '.join(envs.SUITES)}")
    suites = tuple(sorted(set(suites)))
    index_url = index_url or _default_index()
    wheels = wheels_for(suites, default_wheel_dirs() if wheel_dirs is None else wheel_dirs)
    ca = host_ca_bundle()
    digest = context_digest(suites, base, index_url, wheels, ca)
    labels = image_labels(client, image)
    if labels is not None and labels.get(CONTEXT_LABEL) == digest:
        log(f"image {image}: up to date (context {digest[:12]})")
        return False
    log(
        f"image {image}: building from {base} with suites {', '.join(suites) or 'none'}"
        + (f", wheels {', '.join(w.name for w in wheels)}" if wheels else "")
        + (f", network {network}" if network else "")
    )
    started = time.monotonic()
    with tempfile.TemporaryFile() as ctx:
        write_context(ctx, suites, wheels, ca)
        ctx.seek(0)
        stream = client.api.build(
            fileobj=ctx,
            custom_context=True,
            tag=image,
            rm=True,
            forcerm=True,
            decode=True,
            network_mode=network,
            buildargs={"BASE_IMAGE": base, "PIP_INDEX_URL": index_url},
            labels={CODE_LABEL: code_digest(suites), CONTEXT_LABEL: digest, SUITES_LABEL: ",".join(suites)},
        )
        tail: list[str] = []
        for chunk in stream:
            if "error" in chunk:
                detail = "".join(tail[-15:]) + str(chunk.get("error"))
                hint = (
                    ""
                    if "pull access denied" not in detail and "not found" not in detail
                    else f"\nthe base image {base} is not here and could not be pulled: without a registry make one "
                    "with debootstrap (see sandbox/README.md) and pass --base-image"
                )
                if "network" in detail and not network:
                    hint += "\nan engine without a default bridge (dockerd --bridge=none) needs --build-network host"
                raise ImageError(f"docker build failed:\n{detail.strip()}{hint}")
            text = chunk.get("stream", "")
            if text:
                tail.append(text)
                if text.startswith(("Step ", "suite ", "built ")):
                    log(f"  {text.strip()}")
    log(f"image {image}: built in {time.monotonic() - started:.0f} s")
    return True


def _default_index() -> str:
    value = os.environ.get("PIP_INDEX_URL", "")
    return value if value.startswith(("http://", "https://")) else DEFAULT_INDEX
