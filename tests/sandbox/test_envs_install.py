"""How suite environments are installed: uv given pip's own configuration (indexes, find-links, the CPU
torch wheel, constraints), pip as the fallback, the same content either way, .pyc files reused from the
project venv only for the very same source file, and one progress line per step on stderr."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import py_compile
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sandbox import config, envs, installer

ROOT = Path(__file__).resolve().parents[2]
PIN = "torch==2.13.0"


@pytest.fixture
def pip_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """pip configured by PIP_* variables alone (no configuration file of this machine)."""
    for name in list(os.environ):
        if name.startswith(("PIP_", "UV_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    installer.pip_options.cache_clear()
    yield monkeypatch
    installer.pip_options.cache_clear()


def test_pip_options_are_what_pip_config_says(pip_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip_env.setenv("PIP_INDEX_URL", "https://example.invalid/simple")
    pip_env.setenv("PIP_EXTRA_INDEX_URL", "file:///a/simple file:///b/simple")
    pip_env.setenv("PIP_FIND_LINKS", str(tmp_path))
    pip_env.setenv("PIP_CONSTRAINT", "/etc/c.txt")
    pip_env.setenv("PIP_DEFAULT_TIMEOUT", "180")
    options = installer.pip_options()
    assert options is not None
    assert options["index-url"] == "https://example.invalid/simple"
    assert options["extra-index-url"] == "file:///a/simple file:///b/simple"
    assert options["find-links"] == str(tmp_path)
    assert installer.uv_index_args(options) == [
        "--no-config",
        "--index-strategy",
        "unsafe-best-match",
        "--link-mode",
        "hardlink",
        "--index-url",
        "https://example.invalid/simple",
        "--extra-index-url",
        "file:///a/simple",
        "--extra-index-url",
        "file:///b/simple",
        "--find-links",
        str(tmp_path),
        "--constraint",
        "/etc/c.txt",
    ]
    assert installer.uv_environment(options) == {"UV_HTTP_TIMEOUT": "180"}


def test_an_install_section_and_a_variable_beat_global(pip_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nfind-links = /global\ncert = /ca.pem\n[install]\nfind-links = /install\n")
    pip_env.setenv("PIP_CONFIG_FILE", str(conf))
    options = installer.pip_options()  # this machine's own files are read too: only our keys are checked
    assert options is not None
    assert (options["find-links"], options["cert"]) == ("/install", "/ca.pem")
    installer.pip_options.cache_clear()
    pip_env.setenv("PIP_FIND_LINKS", "/variable")
    assert (installer.pip_options() or {})["find-links"] == "/variable"


def test_the_cpu_torch_wheel_of_a_find_links_folder_is_pinned(tmp_path: Path) -> None:
    options = {"find-links": f"/nowhere file://{tmp_path}"}
    assert installer.cpu_torch_pins((PIN, "numpy==2.4.6"), options, "cp311") == []
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert installer.cpu_torch_pins((PIN, "numpy==2.4.6"), options, "cp311") == ["torch==2.13.0+cpu"]
    assert installer.cpu_torch_pins((PIN,), options, "cp312") == []  # not for another Python
    assert installer.cpu_torch_pins(("torch==2.14.1",), options, "cp311") == []  # nor another version
    assert installer.cpu_torch_pins(("torch>=2",), options, "cp311") == []


def test_scripts_setup_translates_pip_config_as_envs_does(pip_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """scripts/setup cannot import sandbox.envs before the project is installed: its own copy of the
    translation must agree (the torch pin from pyproject's extras, pip's CA bundle and timeout)."""
    torch_pin = "torch==2.13.0"
    assert f'"{torch_pin}"' in (ROOT / "pyproject.toml").read_text()
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    (tmp_path / f"torch-2.13.0+cpu-{py}-{py}-manylinux_2_28_x86_64.whl").write_bytes(b"")
    pip_env.setenv("PIP_FIND_LINKS", str(tmp_path))
    pip_env.setenv("PIP_EXTRA_INDEX_URL", "file:///a/simple")
    pip_env.setenv("PIP_CERT", "/ca.pem")
    pip_env.setenv("PIP_DEFAULT_TIMEOUT", "60")
    script = ROOT / "scripts" / "setup"
    done = subprocess.run(
        ["bash", "-c", f'eval "$(sed -n "/^uv_args() {{/,/^}}/p" {script})"; uv_args "$0" "$0"', sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    options = installer.pip_options()
    assert options is not None
    expected = installer.uv_index_args(options) + installer.cpu_torch_pins((torch_pin,), options, py)
    assert [ln for ln in lines if not ln.startswith("env:")] == expected
    assert expected[-1] == "torch==2.13.0+cpu"
    assert dict(ln[4:].split("=", 1) for ln in lines if ln.startswith("env:")) == installer.uv_environment(options)


def test_no_uv_where_pip_cannot_tell_its_configuration(pip_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """uv alone would take PyPI's torch (a CUDA build): without pip's find-links it is not used."""
    (tmp_path / "uv").write_text("#!/bin/sh\n")
    (tmp_path / "uv").chmod(0o755)
    pip_env.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    pip_env.setattr(sys, "executable", "/nonexistent/python")
    assert installer.pip_options() is None
    assert installer.Installer.find().uv is None


def test_find_uv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setattr(installer.sysconfig, "get_path", lambda name: str(bin_dir))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv(installer.INSTALLER_ENV, raising=False)
    assert installer.find_uv() is None
    monkeypatch.setenv(installer.INSTALLER_ENV, "uv")
    with pytest.raises(FileNotFoundError):
        installer.find_uv()
    (bin_dir / "uv").write_text("#!/bin/sh\n")
    (bin_dir / "uv").chmod(0o755)
    assert installer.find_uv() == str(bin_dir / "uv")
    monkeypatch.setenv(installer.INSTALLER_ENV, "pip")
    assert installer.find_uv() is None


def test_bytecode_is_linked_only_for_the_same_source_file(tmp_path: Path) -> None:
    tag = sys.implementation.cache_tag
    host, site = tmp_path / "host" / "pkg", tmp_path / "site" / "pkg"
    host.mkdir(parents=True)
    site.mkdir(parents=True)
    for name in ("same.py", "copied.py"):
        (host / name).write_text(f"X = {name!r}\n")
        py_compile.compile(str(host / name), str(host / "__pycache__" / f"{name[:-3]}.{tag}.pyc"))
    os.link(host / "same.py", site / "same.py")
    (site / "copied.py").write_text("X = 'copied.py'\n")  # equal text, another file: compiled, not linked
    (tmp_path / "site" / "alone").mkdir()
    (tmp_path / "site" / "alone" / "m.py").write_text("")
    assert installer._link_bytecode(tmp_path / "site", tmp_path / "host", tag) == 1
    linked = site / "__pycache__" / f"same.{tag}.pyc"
    assert linked.samefile(host / "__pycache__" / f"same.{tag}.pyc")
    assert not (site / "__pycache__" / f"copied.{tag}.pyc").exists()
    assert installer._link_bytecode(tmp_path / "site", tmp_path / "host", tag) == 0  # already there
    # compileall finds the linked .pyc up to date (it would replace it, not write through the link)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tmp_path / "site")], check=True)
    assert linked.samefile(host / "__pycache__" / f"same.{tag}.pyc")
    assert (site / "__pycache__" / f"copied.{tag}.pyc").exists()


def _wheel(folder: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel (so that installs here need no index)."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
    files = {
        **files,
        f"{info}/METADATA": metadata + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    out = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as whl:
        for path, text in files.items():
            whl.writestr(path, text)
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return out


def _content(env: Path) -> tuple[dict[str, str], set[str], set[str]]:
    python = env / "bin" / "python"
    probe = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    dists = json.loads(
        subprocess.run([str(python), "-I", "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    site = next(env.glob("lib/python3*/site-packages"))
    installer_files = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}
    files = {str(p.relative_to(site)) for p in site.rglob("*") if p.is_file() and p.name not in installer_files}
    return dists, {f for f in files if not f.endswith(".pyc")}, {f for f in files if f.endswith(".pyc")}


def test_uv_and_pip_build_the_same_environment(
    pip_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if installer.find_uv() is None:
        pytest.skip("no uv beside this interpreter nor on PATH (scripts/setup installs it)")
    if not os.access(config.base_python(), os.X_OK):
        pytest.skip(f"no base interpreter {config.base_python()}")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    # 1.0 with a submodule and a dependency: the pin must win over the newer 2.0
    tiny = {"ef_tiny/__init__.py": "from ef_tiny.sub import VALUE\n", "ef_tiny/sub.py": "VALUE = 1\n"}
    _wheel(wheels, "ef_tiny", "1.0", tiny, requires=("ef-dep",))
    _wheel(wheels, "ef_tiny", "2.0", {"ef_tiny/__init__.py": "VALUE = 2\n"})
    _wheel(wheels, "ef_dep", "1.0", {"ef_dep.py": "DEP = 1\n"})
    pip_env.setenv("PIP_NO_INDEX", "1")
    pip_env.setenv("PIP_FIND_LINKS", str(wheels))
    pip_env.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    pip_env.setitem(envs.SUITES, "ef-test", envs.Suite("ef-test", ("ef-tiny==1.0",)))
    built = {}
    for tool in ("pip", "uv"):
        pip_env.setenv(config.HOME_ENV, str(tmp_path / tool))
        pip_env.setenv(installer.INSTALLER_ENV, tool)
        lines: list[str] = []
        envs.prepare("ef-test", log=lines.append)
        assert any(f"with {tool}" in ln and ln.endswith(" s") for ln in lines), lines
        assert lines[-1].startswith("suite ef-test: prepared in ")
        built[tool] = _content(tmp_path / tool / "envs" / "ef-test")
        assert envs.is_prepared("ef-test")
    assert built["uv"] == built["pip"]
    dists, files, pycs = built["uv"]
    assert dists == {"ef-tiny": "1.0", "ef-dep": "1.0"}
    assert {"ef_tiny/sub.py", "ef_dep.py"} <= files and len(pycs) == 3  # every module compiled, as pip does


def test_prepare_reports_its_steps_on_stderr(tmp_path: Path) -> None:
    env = {**os.environ, config.HOME_ENV: str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "prepare", "--suite", "base"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "sandbox prepare: suite base: venv from " in done.stderr
    assert "sandbox prepare: suite base: prepared in " in done.stderr
    assert "suite base" not in done.stdout
