"""Build the suite environments inside the sandbox image (runs under the image's python3 at build time).

Standard library only. Reads suites.json, generated from sandbox/envs.py by sandbox/docker_image.py,
and lays out ROOT as the local levels lay out the sandbox home: envs/NAME (venvs without pip or
setuptools' start-up .pth), site/coverage (the coverage.py the driver imports). Usage: build_envs.py ROOT
"""

import json
import os
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))


def pip(python: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            os.path.join(HERE, "pip", "bin", "pip"),
            "--python",
            python,
            "install",
            "-q",
            "--no-cache-dir",
            "--find-links",
            os.path.join(HERE, "wheels"),
            *args,
        ],
        check=False,
        capture_output=True,
        text=True,
    )


def must(done: subprocess.CompletedProcess, what: str) -> None:
    if done.returncode != 0:
        sys.exit(f"{what} failed:\n{done.stderr[-3000:]}")


def build_suite(root: str, name: str, suite: dict, unneeded_pth: list) -> None:
    target = os.path.join(root, "envs", name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True)
    python = os.path.join(target, "bin", "python")
    if suite["requirements"]:
        print(f"suite {name}: {len(suite['requirements'])} requirements", flush=True)
        must(pip(python, *suite["requirements"]), f"suite {name}")
    missing = {}
    if suite["optional"]:
        pins = os.path.join(target, "constraints.txt")
        with open(pins, "w") as fh:
            fh.write("\n".join(suite["requirements"]) + "\n")
        for req in suite["optional"]:
            done = pip(python, "-c", pins, req)
            if done.returncode != 0:
                lines = [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")]
                missing[req] = f"pip install failed: {(lines or ['no message'])[-1][:300]}"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for pth in unneeded_pth:
        path = os.path.join(site, pth)
        if os.path.exists(path):
            os.unlink(path)
    for module, source in suite["stub_sources"].items():
        os.makedirs(os.path.join(site, module), exist_ok=True)
        with open(os.path.join(site, module, "__init__.py"), "w") as fh:
            fh.write(source)
    if suite["imports"]:
        probe = (
            "import importlib, json, sys\nfailed = {}\nfor n in sys.argv[1:]:\n    try:\n"
            "        importlib.import_module(n)\n    except BaseException as e:\n"
            "        failed[n] = f'{type(e).__name__}: {e}'[:300]\nprint(json.dumps(failed))\n"
        )
        done = subprocess.run(
            [python, "-c", probe, *suite["imports"]],
            capture_output=True,
            text=True,
            env={**os.environ, "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        try:
            missing.update(json.loads(done.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            missing.update(dict.fromkeys(suite["imports"], f"import probe failed: {done.stderr[-300:]}"))
    with open(os.path.join(target, ".edit-fidelity-missing.json"), "w") as fh:
        json.dump(missing, fh, indent=1, sort_keys=True)


def main() -> None:
    root = sys.argv[1]
    with open(os.path.join(HERE, "suites.json")) as fh:
        spec = json.load(fh)
    # A pip of its own for the build only (ensurepip ships with Debian's python3-venv); removed after.
    subprocess.run([sys.executable, "-m", "venv", os.path.join(HERE, "pip")], check=True)
    site = os.path.join(root, "site")
    done = subprocess.run(
        [
            os.path.join(HERE, "pip", "bin", "pip"),
            "install",
            "-q",
            "--no-cache-dir",
            "--target",
            site,
            spec["coverage"],
        ],
        capture_output=True,
        text=True,
    )
    must(done, "coverage")
    for name, suite in spec["suites"].items():
        build_suite(root, name, suite, spec["unneeded_pth"])
    subprocess.run(["chmod", "-R", "a+rX", root], check=True)
    print(f"built {', '.join(spec['suites'])} under {root} ({sysconfig.get_python_version()})", flush=True)


if __name__ == "__main__":
    main()
