"""Shared helpers for the deployment tests in tests/deploy.

Process handling for the tests that start real binaries (every child runs in its own session and
the whole process group is killed on exit, also on SIGTERM from a ctest timeout), free ports,
the tiling_server's printed-port parsing, and small parsers for the Dockerfile and the dashboard.
Standard library only, plus PyYAML (Debian python3-yaml) where YAML is read.
"""

import atexit
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

SKIP = 77  # ctest SKIP_RETURN_CODE

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

_children = []


def _kill_children():
    for proc in reversed(_children):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
    for proc in reversed(_children):
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def _on_signal(signum, _frame):
    _kill_children()
    sys.exit(128 + signum)


atexit.register(_kill_children)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def skip(message):
    print("SKIPPED: " + message)
    sys.exit(SKIP)


def spawn(argv, log_path, **kwargs):
    """Starts argv in a new process group with stdout+stderr going to log_path."""
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, **kwargs)
    _children.append(proc)
    return proc


def stop(proc, timeout=20):
    """SIGTERM, then wait; returns the exit code (SIGKILL after timeout)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def free_port():
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def read_log(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def wait_for(predicate, what, proc=None, log_path=None, timeout=120, interval=0.2):
    """Polls predicate() until it returns a true value. The timeout only guards against hangs."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            fail("%s: process exited with %s before that.\n%s" %
                 (what, proc.returncode, read_log(log_path) if log_path else ""))
        if time.monotonic() > deadline:
            fail("gave up waiting for %s.\n%s" % (what, read_log(log_path) if log_path else ""))
        time.sleep(interval)


_GRPC_PORT_RE = re.compile(r"listening on\s+\S*:(\d+)", re.IGNORECASE)
_PORT_RE = re.compile(r":(\d{1,5})\b")


def parse_server_ports(log_text):
    """Returns (grpc_port, metrics_port) once both are printed, else None.

    The server prints "listening on <addr>:<port>" for gRPC and a line naming "metrics" with the
    bound port for the Prometheus exposer.
    """
    grpc_port = metrics_port = None
    for line in log_text.splitlines():
        if "metrics" in line.lower():
            m = _PORT_RE.search(line)
            if m and int(m.group(1)) > 0:
                metrics_port = int(m.group(1))
            continue
        m = _GRPC_PORT_RE.search(line)
        if m and int(m.group(1)) > 0:
            grpc_port = int(m.group(1))
    if grpc_port and metrics_port:
        return grpc_port, metrics_port
    return None


def start_server(server_bin, workdir, extra_args=()):
    """Starts tiling_server on free ports; returns (proc, grpc_port, metrics_port, log_path)."""
    log_path = os.path.join(workdir, "tiling_server.log")
    argv = [server_bin, "--address=127.0.0.1", "--port=0", "--metrics_port=0"] + list(extra_args)
    proc = spawn(argv, log_path)
    ports = wait_for(lambda: parse_server_ports(read_log(log_path)),
                     "tiling_server to print its ports", proc, log_path)
    return proc, ports[0], ports[1], log_path


def load_yaml(path):
    try:
        import yaml  # Debian: python3-yaml
    except ImportError:
        skip("PyYAML is missing (apt-get install python3-yaml) for %s" % sys.executable)
    with open(path) as f:
        return yaml.safe_load(f)


def load_yaml_all(path):
    import yaml
    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


# ---- Dockerfile ---------------------------------------------------------------------------------

def dockerfile_instructions(path):
    """Parses a Dockerfile into [(stage_index, INSTRUCTION, args)] with continuations joined."""
    instructions = []
    stage = -1
    pending = ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if pending and line.lstrip().startswith("#"):
                continue  # comment lines inside a continuation are dropped by Docker
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            full = (pending + line).strip()
            pending = ""
            keyword, _, args = full.partition(" ")
            keyword = keyword.upper()
            if keyword == "FROM":
                stage += 1
            instructions.append((stage, keyword, args.strip()))
    return instructions


def apt_install_packages(run_args):
    """Package names of every `apt-get install` in one RUN command (options dropped)."""
    packages = []
    for command in re.split(r"&&|;|\|\|", run_args):
        words = command.split()
        if "apt-get" not in words or "install" not in words:
            continue
        after = words[words.index("install") + 1:]
        packages += [w for w in after if not w.startswith("-") and "=" not in w[:1]]
    return packages


def exec_form(args):
    """The list of an exec-form (JSON array) instruction argument, else None."""
    try:
        value = json.loads(args)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


# ---- Grafana dashboard --------------------------------------------------------------------------

GRAFANA_MACROS = {
    "$__rate_interval": "1m",
    "${__rate_interval}": "1m",
    "$__interval": "15s",
    "${__interval}": "15s",
    "$__range": "5m",
    "${__range}": "5m",
}


def dashboard_panels(dashboard):
    """Every panel, including those nested in collapsed rows."""
    for panel in dashboard.get("panels", []):
        yield panel
        for nested in panel.get("panels", []) or []:
            yield nested


def dashboard_queries(dashboard, macros=None):
    """[(panel title, refId, raw expr, expr with Grafana macros substituted)]."""
    macros = GRAFANA_MACROS if macros is None else macros
    queries = []
    for panel in dashboard_panels(dashboard):
        for target in panel.get("targets", []) or []:
            expr = target.get("expr")
            if not expr:
                continue
            resolved = expr
            for macro in sorted(macros, key=len, reverse=True):
                resolved = resolved.replace(macro, macros[macro])
            queries.append((panel.get("title", "?"), target.get("refId", "?"), expr, resolved))
    return queries

