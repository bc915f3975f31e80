"""Hostile programs, run for real in every language where they apply: each must be contained, the
host unaffected, and no process may outlive its run."""

from __future__ import annotations

import os
import secrets
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox import ExecResult, Limits, Sandbox, envs

TIMEOUT = 1.0  # CPU seconds, for the kinds that must be stopped by a time limit
ENDS_ALONE_TIMEOUT = 10.0  # kinds that end by themselves (a limit or an error) get room to do so
MUST_TIME_OUT = {"fork_bomb", "infinite_loop", "sleep", "ignore_sigterm"}
SLEEPERS = {"sleep", "ignore_sigterm"}  # use no CPU: only the wall-clock ceiling (5 x TIMEOUT) stops them
WIDE = 30.0  # the other kinds' ceiling factor: a loaded machine must not starve them into a re-run
MEMORY_MB = 256
OUTPUT_LIMIT = 50_000


@dataclass
class Host:
    """What the hostile programs aim at, made by the test on the host."""

    port: int
    secret: str
    secret_files: list[Path]
    writable_dir: Path  # world-writable host dir: only the namespaces keep programs out of it
    accepted: list[bytes]


@pytest.fixture
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    token = "SECRET-" + secrets.token_hex(8)
    exposed = tmp_path_factory.mktemp("home")  # a world-readable "home" on the host
    for parent in (exposed, *exposed.parents):
        if str(parent).startswith("/tmp/"):
            os.chmod(parent, 0o755)
    files = [exposed / "secret.txt"]
    root_secret = Path("/root") / f".ef-sandbox-secret-{secrets.token_hex(4)}"
    if os.geteuid() == 0:
        files.append(root_secret)
    for f in files:
        f.write_text(token)
        os.chmod(f, 0o644)
    writable = tmp_path_factory.mktemp("open")
    os.chmod(writable, 0o777)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    accepted: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(1)
            try:
                accepted.append(b"connected:" + conn.recv(100))
            except OSError:
                accepted.append(b"connected")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield Host(listener.getsockname()[1], token, files, writable, accepted)
    stop.set()
    thread.join()
    listener.close()
    root_secret.unlink(missing_ok=True)


PY = {
    "fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "memory_hog": "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))\n",
    "infinite_loop": "while True:\n    pass\n",
    "sleep": "import time\ntime.sleep(120)\n",
    "output_flood": "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
    "write_outside": (
        "import sys\nfor p in sys.argv[1:] or {targets!r}:\n    try:\n        open(p, 'w').write('pwned')\n"
        "        print('WROTE', p)\n    except OSError as e:\n        print('denied', p, e)\n"
    ),
    "read_outside": (
        "for p in {secrets!r}:\n    try:\n        print(open(p).read())\n    except OSError as e:\n"
        "        print('denied', p, e)\n"
    ),
    "network": (
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\ns.sendall(b'pwned')\n"
        "print('CONNECTED')\n"
    ),
    "daemon": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        os.close(1); os.close(2)\n        time.sleep(60)\n    os._exit(0)\nos.wait()\nprint('parent left')\n"
    ),
    "ignore_sigterm": (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    time.sleep(1)\n"
    ),
    "segfault": "import ctypes\nctypes.string_at(0)\n",
}
JS = {
    "fork_bomb": (
        "const {{spawn}} = require('child_process');\n"
        "while (true) {{ try {{ spawn('/bin/sleep', ['60']); }} catch (e) {{}} }}\n"
    ),
    "memory_hog": "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1.5));\n",
    "infinite_loop": "while (true) {{}}\n",
    "sleep": "setTimeout(() => {{}}, 120000);\n",
    "output_flood": "const s = 'x'.repeat(65536);\nwhile (true) process.stdout.write(s);\n",
    "write_outside": (
        "const fs = require('fs');\nfor (const p of {targets_js}) {{\n  try {{ fs.writeFileSync(p, 'pwned');"
        " console.log('WROTE', p); }} catch (e) {{ console.log('denied', p, e.code); }}\n}}\n"
    ),
    "read_outside": (
        "const fs = require('fs');\nfor (const p of {secrets_js}) {{\n  try {{ console.log(fs.readFileSync(p, 'utf8'));"
        " }} catch (e) {{ console.log('denied', p, e.code); }}\n}}\n"
    ),
    "network": (
        "const net = require('net');\nconst c = net.connect({port}, '127.0.0.1', () => {{ c.write('pwned');"
        " console.log('CONNECTED'); c.end(); }});\nc.on('error', e => {{ console.error(e.code); process.exit(1); }});\n"
    ),
    "daemon": (
        "const {{spawn}} = require('child_process');\n"
        "spawn('/bin/sleep', ['60'], {{detached: true, stdio: 'ignore'}}).unref();\nconsole.log('parent left');\n"
    ),
    "ignore_sigterm": "process.on('SIGTERM', () => {{}});\nsetInterval(() => {{}}, 1000);\n",
    "segfault": "process.kill(process.pid, 'SIGSEGV');\n",
}
CPP_HEAD = (
    "#include <cstdio>\n#include <cstring>\n#include <csignal>\n#include <new>\n#include <vector>\n"
    "#include <unistd.h>\n#include <sys/socket.h>\n#include <netinet/in.h>\n#include <arpa/inet.h>\n"
)
CPP = {
    "fork_bomb": "int main() {{ while (true) fork(); }}\n",
    "memory_hog": (
        "int main() {{ std::vector<char*> v; while (true) {{ char* p = new char[10000000];"
        " std::memset(p, 1, 10000000); v.push_back(p); }} }}\n"
    ),
    "infinite_loop": "int main() {{ volatile unsigned long n = 0; while (true) n++; }}\n",
    "sleep": "int main() {{ sleep(120); }}\n",
    "output_flood": (
        "int main() {{ static char b[65536]; std::memset(b, 'x', sizeof b);"
        " while (true) fwrite(b, 1, sizeof b, stdout); }}\n"
    ),
    "write_outside": (
        'int main() {{ const char* ps[] = {targets_c}; for (const char* p : ps) {{ FILE* f = fopen(p, "w");'
        ' if (f) {{ fputs("pwned", f); fclose(f); printf("WROTE %s\\n", p); }}'
        ' else printf("denied %s\\n", p); }} }}\n'
    ),
    "read_outside": (
        'int main() {{ const char* ps[] = {secrets_c}; for (const char* p : ps) {{ FILE* f = fopen(p, "r");'
        ' if (!f) {{ printf("denied %s\\n", p); continue; }} char b[256] = {{0}}; fread(b, 1, 255, f);'
        ' printf("%s\\n", b); fclose(f); }} }}\n'
    ),
    "network": (
        "int main() {{ int s = socket(AF_INET, SOCK_STREAM, 0); sockaddr_in a{{}}; a.sin_family = AF_INET;"
        ' a.sin_port = htons({port}); inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);'
        ' if (connect(s, (sockaddr*)&a, sizeof a) != 0) {{ perror("connect"); return 1; }}'
        ' write(s, "pwned", 5); puts("CONNECTED"); }}\n'
    ),
    "daemon": (
        "int main() {{ if (fork() == 0) {{ setsid(); if (fork() == 0) {{ close(1); close(2); sleep(60); }} _exit(0); }}"
        ' sleep(0); puts("parent left"); }}\n'
    ),
    "ignore_sigterm": "int main() {{ signal(SIGTERM, SIG_IGN); while (true) sleep(1); }}\n",
    "segfault": "int main() {{ volatile int* p = nullptr; return *p; }}\n",
}
SOURCES = {"python": ("main.py", PY), "javascript": ("main.js", JS), "cpp": ("main.cpp", CPP)}
KINDS = list(PY)


def _targets(host: Host) -> list[str]:
    lib = str(envs.lib_dir() / "pwned")
    return ["/usr/ef_pwned", "/etc/ef_pwned", str(host.writable_dir / "pwned"), lib, "/root/ef_pwned"]


def _render(kind: str, language: str, host: Host) -> tuple[str, str]:
    entry, table = SOURCES[language]
    targets = _targets(host)
    secret_paths = [str(p) for p in host.secret_files]
    quote = lambda xs: "{" + ", ".join(f'"{x}"' for x in xs) + "}"  # noqa: E731
    source = table[kind].format(
        port=host.port,
        targets=targets,
        secrets=secret_paths,
        targets_js=repr(targets),
        secrets_js=repr(secret_paths),
        targets_c=quote(targets),
        secrets_c=quote(secret_paths),
    )
    if language == "cpp":
        source = CPP_HEAD + source
    return entry, source


def _host_is_fine(host: Host) -> None:
    for path in _targets(host):
        assert not Path(path).exists(), f"a sandboxed program wrote {path} on the host"
    assert host.accepted == [], "a sandboxed program reached the host's 127.0.0.1 listener"
    assert subprocess.run(["/bin/true"], timeout=5).returncode == 0  # the host can still fork


NET_ERRORS = ("Connection refused", "ECONNREFUSED", "Network is unreachable", "ENETUNREACH")
Leftovers = Callable[[Sandbox], list[str]]


def _timeout(kind: str) -> float:
    return TIMEOUT if kind in MUST_TIME_OUT else ENDS_ALONE_TIMEOUT


def _wall_factor(kind: str) -> float | None:
    return None if kind in SLEEPERS else WIDE


def _denied(res: ExecResult) -> int:
    return sum(line.startswith("denied ") for line in res.stdout.splitlines())


def check_contained(kind: str, res: ExecResult, host: Host, box: Sandbox, leftovers: Leftovers) -> None:
    """The expected outcome of each hostile kind, on any isolating level."""
    out = res.stdout + res.stderr
    assert res.status != "error", res.error
    # Killing a full slot of fork-bomb processes takes a few seconds on 2 cores (~10 ms each).
    slack = 5.0 if kind == "fork_bomb" else 1.0
    assert res.wall_s < res.wall_limit_s + slack, f"run took {res.wall_s} s"
    if kind in SLEEPERS:  # stopped at the ceiling, and not mistaken for a starved program
        assert res.wall_s >= res.wall_limit_s == 5 * TIMEOUT and res.starved_runs == 0, res
    elif kind == "infinite_loop":  # stopped by its CPU budget (checked on tick-sampled CPU time)
        assert res.cpu_s >= 0.8 * res.cpu_limit_s and res.cpu_limit_s == TIMEOUT, res
    if kind in MUST_TIME_OUT:
        # A fork bomb may also die on its own when every fork fails; it must never succeed.
        allowed = {"timeout", "failed"} if kind == "fork_bomb" else {"timeout"}
        assert res.status in allowed, (res.status, out[-500:])
    elif kind == "memory_hog":
        assert res.status == "memory", (res.status, out[-500:])
    elif kind == "output_flood":
        assert res.status == "output_limit", res.status
        assert res.truncated and len(res.stdout) + len(res.stderr) <= OUTPUT_LIMIT
    elif kind == "write_outside":
        assert "WROTE" not in out and _denied(res) == len(_targets(host)), out
    elif kind == "read_outside":
        assert host.secret not in out, "a secret outside the work dir was read"
        assert _denied(res) == len(host.secret_files), out
    elif kind == "network":
        assert res.status == "failed" and "CONNECTED" not in out, (res.status, out)
        assert any(m in out for m in NET_ERRORS), out
    elif kind == "daemon":
        assert res.status == "ok" and "parent left" in res.stdout, (res.status, out)
    elif kind == "segfault":
        assert res.status == "failed" and res.signal == 11, (res.status, res.signal, res.exit_code)
    _host_is_fine(host)
    assert leftovers(box) == [], "a process outlived its run"


@pytest.mark.parametrize("language", list(SOURCES))
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_program_is_contained_by_bwrap(
    bwrap_box: Sandbox, host: Host, kind: str, language: str, leftovers: Leftovers
) -> None:
    entry, source = _render(kind, language, host)
    res = bwrap_box.run(
        {entry: source},
        timeout_s=_timeout(kind),
        wall_factor=_wall_factor(kind),
        memory_mb=MEMORY_MB,
        output_limit=OUTPUT_LIMIT,
    )
    assert res.isolation == "bwrap" and res.isolated
    check_contained(kind, res, host, bwrap_box, leftovers)


# Where `none` gives no protection by design (it is only limits): a world-writable or world-readable
# host path and the loopback network. The uid switch still guards /root, /usr and /etc.
NOT_CONTAINED_BY_NONE = {"write_outside", "read_outside", "network"}


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_python_on_weaker_levels(any_box: Sandbox, host: Host, kind: str, leftovers: Leftovers) -> None:
    if any_box.level == "none" and kind in NOT_CONTAINED_BY_NONE:
        pytest.skip("level none is not isolation; only limits, timeouts and the uid switch apply")
    entry, source = _render(kind, "python", host)
    res = any_box.run(
        {entry: source},
        timeout_s=_timeout(kind),
        wall_factor=_wall_factor(kind),
        memory_mb=MEMORY_MB,
        output_limit=OUTPUT_LIMIT,
    )
    assert res.isolation == any_box.level and res.isolated == (any_box.level != "none")
    check_contained(kind, res, host, any_box, leftovers)


def test_none_level_still_guards_root_and_system_dirs(any_box: Sandbox, host: Host, leftovers: Leftovers) -> None:
    if any_box.level != "none":
        pytest.skip("checks the none level only")
    code = (
        "import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'w').write('x'); print('WROTE', p)\n"
        "    except OSError:\n        print('denied')\nprint(open(sys.argv[0]).read()[:0])\n"
    )
    res = any_box.run(
        {"w.py": code}, command=["python", "w.py", "/usr/ef_pwned", "/etc/ef_pwned", "/root/ef_pwned"], timeout_s=5
    )
    assert res.status == "ok" and "WROTE" not in res.stdout and res.stdout.count("denied") == 3
    secret = next(p for p in host.secret_files if str(p).startswith("/root/")) if os.geteuid() == 0 else None
    if secret:
        res = any_box.run({"r.py": f"print(open({str(secret)!r}).read())"}, timeout_s=5)
        assert res.status == "failed" and host.secret not in res.stdout
    assert leftovers(any_box) == []


def test_fork_bomb_leaves_other_slots_and_host_working(bwrap_box: Sandbox, leftovers: Leftovers) -> None:
    """Process limits are per slot uid: a bomb in one slot cannot starve the other, nor the host."""
    bomb: list[ExecResult] = []
    # 10 CPU-seconds for all its processes together: several seconds of both cores.
    thread = threading.Thread(target=lambda: bomb.append(bwrap_box.run({"b.py": PY["fork_bomb"]}, timeout_s=10.0)))
    thread.start()
    time.sleep(1.0)  # the bomb is at its process limit by now
    other = bwrap_box.run(
        {"ok.py": "import subprocess\nprint(subprocess.run(['echo', 'fine'], capture_output=True, text=True).stdout)"},
        timeout_s=5,
    )
    host_ok = subprocess.run(["/bin/echo", "host"], capture_output=True, text=True, timeout=5)
    thread.join()
    assert other.status == "ok" and "fine" in other.stdout, other
    assert host_ok.stdout.strip() == "host"
    assert bomb[0].status in ("timeout", "failed")
    assert leftovers(bwrap_box) == []


def test_work_dir_is_private_and_removed(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run(
        {"p.py": "import os\nprint(os.getcwd(), os.getuid(), sorted(os.listdir('.')))\nprint(os.listdir('/'))"},
        timeout_s=5,
    )
    assert res.status == "ok"
    cwd, uid, *_ = res.stdout.split()
    assert cwd == "/work" and int(uid) in bwrap_box.uids and int(uid) != 0
    assert "root" not in res.stdout.splitlines()[1] and "home" not in res.stdout.splitlines()[1]
    work_root = Path(envs.config.home()) / "work"
    for uid in bwrap_box.uids:  # every run's dir is gone; the slot dirs stay, traversable only
        assert list((work_root / f"u{uid}").iterdir()) == []
        assert stat.S_IMODE((work_root / f"u{uid}").stat().st_mode) == 0o711
    assert stat.S_IMODE(work_root.stat().st_mode) == 0o711


def test_filling_the_disk_stops_at_the_slot_work_tmpfs(leftovers: Leftovers) -> None:
    """Many files, each under RLIMIT_FSIZE: only the slot's own work tmpfs fills up."""
    if os.geteuid() != 0:
        pytest.skip("the per-slot work tmpfs needs root")
    box = Sandbox("bwrap", workers=1, limits=Limits(work_mb=48))
    code = (
        "import os\nn = 0\ntry:\n    while True:\n        with open(f'f{n}', 'wb') as fh:\n"
        "            fh.write(b'x' * (8 << 20))\n        n += 1\nexcept OSError as e:\n"
        "    print(n, e.errno == 28)\n"
    )
    try:
        res = box.run({"fill.py": code}, timeout_s=20)
        written, enospc = res.stdout.split()
        assert res.status == "ok" and enospc == "True" and int(written) < 6, res
        again = box.run({"ok.py": "open('small', 'w').write('fine'); print(open('small').read())"})
        assert again.status == "ok" and again.stdout == "fine\n"  # the full work dir was cleaned up
        assert leftovers(box) == []
    finally:
        box.close()
