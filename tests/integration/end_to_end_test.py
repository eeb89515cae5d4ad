#!/usr/bin/python3
"""End-to-end checks of the real tiling_server binary.

  service     starts build/bin/tiling_server on free ports (--port 0, --metrics_port 0) and checks:
              a second server on the same port fails to start (no SO_REUSEPORT split);
              `tilingctl conform` passes every case of the golden file over the network;
              tilingctl tile / batch / platforms / health; tilingctl execute with .npy operands
              written here and --tiling from an edited `tile --json`; the external reflection client
              scripts/grpc_reflect.py (list, describe, call GetTiling); the standard health
              service from Python grpcio; /metrics; SIGTERM exits 0.
  advise      starts the server with ADVISE caps (--max_advisory_ms, --max_advise_candidates) and
              checks `tilingctl advise`: the ranked table (CANN's choice marked, not-offered reasons),
              --json (sorted candidates, caps echoed, recommendation verified), `tile --mode advise`
              as an alias, the same answer again from the cache, CANN answers without advice,
              invalid options as INVALID_ARGUMENT naming the field, and npu_advise_total on /metrics.
  prometheus  starts the server and a real Prometheus (Debian package) scraping it every second,
              drives GetTiling calls, and waits until grpc_server_handled_total has moved, read
              through the Prometheus HTTP API and `promtool query instant`.

Run with /usr/bin/python3: Debian's python3-grpcio is only visible to that interpreter. Exits 77
(ctest: skipped) when a required tool is missing, naming the package to install. Waits are
bounded only to avoid hangs; nothing asserts on elapsed time.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SKIP = 77
SERVICE = "npu.tiling.v1.TilingService"
HANG_GUARD_S = 120

_children = []


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def skip(message):
    print("SKIPPED: " + message)
    sys.exit(SKIP)


def check(condition, message):
    if not condition:
        fail(message)
    print("ok: " + message)


def spawn(argv, log_path):
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    _children.append(proc)
    return proc


def stop(proc, timeout=HANG_GUARD_S):
    """SIGTERM and wait; returns the exit code (SIGKILL if it hangs)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def kill_children():
    for proc in _children:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def wait_for(predicate, what, proc=None, log_path=None):
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            fail("%s: process exited with %s first\n%s" %
                 (what, proc.returncode, read(log_path) if log_path else ""))
        if time.monotonic() > deadline:
            fail("gave up waiting for %s\n%s" % (what, read(log_path) if log_path else ""))
        time.sleep(0.1)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(server_bin, workdir, name="server", extra=()):
    """Starts tiling_server on free ports; returns (proc, grpc_port, metrics_port, log)."""
    log_path = os.path.join(workdir, name + ".log")
    proc = spawn([server_bin, "--address=127.0.0.1", "--port=0", "--metrics_port=0"] + list(extra),
                 log_path)

    def ports():
        text = read(log_path)
        grpc_port = re.search(r"^listening on \S+:(\d+)$", text, re.M)
        metrics_port = re.search(r"^metrics on \S+:(\d+)$", text, re.M)
        if grpc_port and metrics_port:
            return int(grpc_port.group(1)), int(metrics_port.group(1))
        return None

    grpc_port, metrics_port = wait_for(ports, "tiling_server to print its ports", proc, log_path)
    return proc, grpc_port, metrics_port, log_path


def run(argv, expect_rc=0):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=HANG_GUARD_S)
    out = result.stdout.decode("utf-8", "replace")
    err = result.stderr.decode("utf-8", "replace")
    if expect_rc is not None and result.returncode != expect_rc:
        fail("%s: rc %d, want %d\nstdout:\n%s\nstderr:\n%s" %
             (" ".join(argv), result.returncode, expect_rc, out, err))
    return out


# ---- .npy files by hand (no numpy here) --------------------------------------------------------

def write_npy(path, descr, shape, values, pack):
    """Writes a C-order .npy file (version 1.0) the way numpy.save does."""
    import struct
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("ascii"))
        f.write(b"".join(struct.pack(pack, v) for v in values))


def read_npy(path):
    """Returns (descr, shape, raw data) of a version 1.0 .npy file."""
    import ast
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        fail("%s: not a version 1.0 .npy file" % path)
    (length,) = struct.unpack("<H", data[8:10])
    header = ast.literal_eval(data[10:10 + length].decode("ascii"))
    return header["descr"], header["shape"], data[10 + length:]


def bf16_bits(value):
    """The bfloat16 bits of `value` (exact for the small dyadic values used here)."""
    import struct
    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def execute_checks(args, target, workdir):
    """tilingctl execute against the real server: .npy operands, C back, --tiling edits."""
    import struct
    m, n, k = 48, 40, 72
    # Small dyadic values: every product and sum is exact in fp32, so C equals the reference.
    a = [((i * 7) % 13 - 6) / 8.0 for i in range(m * k)]
    b = [((i * 5) % 11 - 5) / 16.0 for i in range(k * n)]
    bias = [(j % 5 - 2) / 4.0 for j in range(n)]
    a_path, b_path = os.path.join(workdir, "A.npy"), os.path.join(workdir, "B.npy")
    bias_path, c_path = os.path.join(workdir, "bias.npy"), os.path.join(workdir, "C.npy")
    write_npy(a_path, "<f2", (m, k), a, "<e")
    write_npy(b_path, "<f2", (k, n), b, "<e")
    write_npy(bias_path, "<f2", (n,), bias, "<e")

    out = json.loads(run([args.ctl, "execute", "--server", target, "--a", a_path, "--b", b_path,
                          "--bias", bias_path, "--out", c_path, "--json"]))
    timing = out["timing"]
    check(out["inputSource"] == "INPUT_SOURCE_INLINE" and out["accuracy"]["passed"] and
          int(timing["predictedCycles"]) > 0 and timing["predictedTimeUs"] > 0 and
          0 < timing["cubeUtilization"] <= 1 and timing["boundResource"] and
          len(timing["cores"]) == timing["aicCores"] + timing["aivCores"],
          "tilingctl execute --json: inline .npy operands, timing report with "
          "predictedCycles / predictedTimeUs / cubeUtilization at its top level")
    check("c" not in out or not out["c"].get("data"), "C goes to --out, not to the terminal")
    descr, shape, data = read_npy(c_path)
    c = struct.unpack("<%de" % (m * n), data)
    ref = [sum(a[i * k + p] * b[p * n + j] for p in range(k)) + bias[j]
           for i in range(m) for j in range(n)]
    check(descr == "<f2" and tuple(shape) == (m, n) and list(c) == ref,
          "--out C.npy: float16 (%d, %d), equal to the exact reference" % (m, n))

    text = run([args.ctl, "execute", "--server", target, "--a", a_path, "--b", b_path])
    check("accuracy vs fp64 reference: PASS" in text and "AIC 0" in text and "MTE2" in text,
          "tilingctl execute prints the error report and the per-core table")

    # bfloat16 operands travel as uint16 arrays.
    write_npy(a_path, "<u2", (m, k), [bf16_bits(v) for v in a], "<H")
    write_npy(b_path, "<u2", (k, n), [bf16_bits(v) for v in b], "<H")
    out = json.loads(run([args.ctl, "execute", "--server", target, "--dtype", "bfloat16",
                          "--a", a_path, "--b", b_path, "--out", c_path, "--json"]))
    descr, shape, data = read_npy(c_path)
    check(out["accuracy"]["passed"] and descr == "<u2" and
          out["tiling"]["platform"]["name"] == "ascend950pr",
          "bfloat16 as uint16 .npy in and out (--dtype bfloat16)")
    err = subprocess.run([args.ctl, "execute", "--server", target, "--a", a_path, "--b", b_path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD_S)
    check(err.returncode == 2 and b"needs float16 ('<f2')" in err.stderr,
          "a uint16 .npy for a float16 operand is refused with a clear message")
    with open(a_path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\x00{'descr'")
    err = subprocess.run([args.ctl, "execute", "--server", target, "--a", a_path, "--b", b_path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD_S)
    check(err.returncode == 2 and b"not a valid .npy file" in err.stderr,
          "a malformed .npy file is a usage error naming the problem")

    # --tiling: `tile --json` edited by hand ("what if baseM were 128?").
    shape_flags = ["--m", "256", "--n", "7168", "--k", "2048"]
    tile = json.loads(run([args.ctl, "tile", "--server", target, "--json", "--notrace"] +
                          shape_flags))
    base_m = [f for f in tile["fields"] if f["name"] == "baseM"][0]
    check(base_m["value"] == "256", "the engine's baseM for 256x7168x2048 is 256")
    engine = json.loads(run([args.ctl, "execute", "--server", target, "--timing-only", "--json"] +
                            shape_flags))
    base_m["value"] = "128"
    tiling_path = os.path.join(workdir, "tiling.json")
    with open(tiling_path, "w") as f:
        json.dump(tile, f, indent=1)
    edited = json.loads(run([args.ctl, "execute", "--server", target, "--timing-only", "--json",
                             "--tiling", tiling_path] + shape_flags))
    check(edited["explicitTiling"] and
          [f["value"] for f in edited["tiling"]["fields"] if f["name"] == "baseM"] == ["128"] and
          edited["timing"]["predictedCycles"] != engine["timing"]["predictedCycles"],
          "--tiling with baseM edited to 128 runs as given: %s cycles vs the engine's %s" %
          (edited["timing"]["predictedCycles"], engine["timing"]["predictedCycles"]))
    base_m["value"] = "100"
    with open(tiling_path, "w") as f:
        json.dump(tile, f)
    err = subprocess.run([args.ctl, "execute", "--server", target, "--timing-only",
                          "--tiling", tiling_path] + shape_flags,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD_S)
    check(err.returncode == 1 and b"INVALID_ARGUMENT" in err.stderr and
          b"tiling.fields[baseM]: 100 must be a positive multiple of 16" in err.stderr,
          "an invalid edit is INVALID_ARGUMENT naming tiling.fields[baseM]")

    out = json.loads(run([args.ctl, "execute", "--local", "--m", "64", "--n", "64", "--k", "64",
                          "--seed", "5", "--json"]))
    check(out["accuracy"]["passed"] and out["seed"] == "5", "tilingctl execute --local --seed")


# ---- health over Python grpcio ---------------------------------------------------------------

def health_checker(workdir):
    """Returns check(target, service) -> "SERVING" | ... | "NOT_FOUND".

    Uses stubs generated from Debian's grpc-proto health.proto when it is installed, otherwise
    encodes the two one-field messages by hand (HealthCheckRequest{string service = 1},
    HealthCheckResponse{ServingStatus status = 1})."""
    import grpc
    proto_dir = "/usr/share/grpc-proto"
    health_proto = os.path.join(proto_dir, "grpc/health/v1/health.proto")
    gen = os.path.join(workdir, "health_gen")
    names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
    if os.path.exists(health_proto) and shutil.which("protoc") and \
            os.path.exists("/usr/bin/grpc_python_plugin"):
        os.makedirs(gen, exist_ok=True)
        subprocess.run(["protoc", "-I", os.path.dirname(health_proto), "--python_out=" + gen,
                        "--grpc_out=" + gen,
                        "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin", "health.proto"],
                       check=True)
        sys.path.insert(0, gen)
        import health_pb2
        import health_pb2_grpc

        def check_generated(target, service):
            with grpc.insecure_channel(target) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                try:
                    response = stub.Check(health_pb2.HealthCheckRequest(service=service),
                                          timeout=10)
                except grpc.RpcError as e:
                    return e.code().name
                return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
        print("health: stubs generated from " + health_proto)
        return check_generated

    def check_raw(target, service):
        encoded = service.encode()
        request = (b"\x0a" + bytes([len(encoded)]) + encoded) if encoded else b""
        with grpc.insecure_channel(target) as channel:
            call = channel.unary_unary("/grpc.health.v1.Health/Check",
                                       request_serializer=lambda b: b,
                                       response_deserializer=lambda b: b)
            try:
                response = call(request, timeout=10)
            except grpc.RpcError as e:
                return e.code().name
        status = response[1] if len(response) >= 2 and response[0] == 0x08 else 0
        return names.get(status, "UNKNOWN")
    print("health: grpc-proto not installed; using hand-encoded messages")
    return check_raw


# ---- the two parts ---------------------------------------------------------------------------

def service_part(args, workdir):
    try:
        import grpc  # noqa: F401  Debian python3-grpcio
    except ImportError:
        skip("python3-grpcio is missing for %s (apt-get install python3-grpcio)" % sys.executable)
    with open(args.cases) as f:
        case_count = len(json.load(f)["cases"])

    # A short drain: the health Watch at the end stays open until cancelled.
    server, port, metrics_port, log_path = start_server(args.server, workdir,
                                                        extra=["--drain_seconds=1"])
    target = "127.0.0.1:%d" % port
    print("tiling_server on %s, metrics on %d" % (target, metrics_port))

    # A busy port is a startup error, not a second listener sharing connections.
    second_log = os.path.join(workdir, "second.log")
    second = spawn([args.server, "--address=127.0.0.1", "--port=%d" % port, "--metrics_port=0"],
                   second_log)
    try:
        second.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        fail("a second server on busy port %d kept running" % port)
    check(second.returncode == 1 and "cannot serve on" in read(second_log),
          "a second server on the busy port exits 1: %s" %
          [l for l in read(second_log).splitlines() if "cannot serve" in l])

    out = run([args.ctl, "conform", args.cases, "--server", target])
    lines = out.strip().splitlines()
    check(lines[-1] == "%d passed, 0 failed" % case_count,
          "tilingctl conform over the network: %r" % lines[-1])
    check(len(lines) == case_count + 1 and all(l.startswith("PASS ") for l in lines[:-1]),
          "one PASS line per case")

    out = run([args.ctl, "conform", args.cases, "--local"])
    check(out.strip().splitlines()[-1] == "%d passed, 0 failed" % case_count,
          "tilingctl conform --local (in-process service)")

    tile = json.loads(run([args.ctl, "tile", "--server", target, "--m", "4096", "--n", "1280",
                           "--k", "8192", "--dtype", "float16", "--trans-b",
                           "--format-b", "FRACTAL_NZ", "--json"]))
    check(tile["tilingKey"] == "4162" and tile["blockDim"] == 32 and
          tile["strategy"] == "BASIC_STREAM_K", "tilingctl tile --json gives key 4162")
    run([args.ctl, "tile", "--server", target, "--m", "0", "--n", "8", "--k", "8"], expect_rc=1)

    batch_file = os.path.join(workdir, "batch.json")
    with open(batch_file, "w") as f:
        json.dump([
            {"id": "streamk", "problem": {"m": 4096, "n": 1280, "k": 8192,
                                          "dtypeA": "DATA_TYPE_FLOAT16",
                                          "dtypeB": "DATA_TYPE_FLOAT16",
                                          "dtypeC": "DATA_TYPE_FLOAT16", "transB": True,
                                          "formatB": "FORMAT_FRACTAL_NZ"}},
            {"m": 1024, "n": 1024, "k": 1024, "dtype_a": "DATA_TYPE_FLOAT16",
             "dtype_b": "DATA_TYPE_FLOAT16", "dtype_c": "DATA_TYPE_FLOAT16"},
            {"m": 0, "n": 8, "k": 8, "dtype_a": "DATA_TYPE_FLOAT16",
             "dtype_b": "DATA_TYPE_FLOAT16", "dtype_c": "DATA_TYPE_FLOAT16"},
        ], f)
    items = [json.loads(line) for line in
             run([args.ctl, "batch", batch_file, "--server", target, "--json"],
                 expect_rc=1).splitlines()]
    check([item["id"] for item in items] == ["streamk", "1", "2"],
          "tilingctl batch answers every item in order")
    check(items[0]["tilingKey"] == "4162" and items[2]["status"]["codeName"] == "INVALID_ARGUMENT",
          "a bad batch item carries its own status")

    platforms = json.loads(run([args.ctl, "platforms", "--server", target, "--json"]))
    check(platforms["defaultPlatform"] == "ascend950pr", "tilingctl platforms")
    check([(p["name"], p["npuArch"]) for p in platforms["platforms"]] ==
          [("ascend950pr", "DAV_3510"), ("ascend910b1", "DAV_2201")],
          "tilingctl platforms lists both profiles with their architecture")
    err = subprocess.run([args.ctl, "tile", "--server", target, "--m", "64", "--n", "64", "--k",
                          "64", "--platform", "ascend910b1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD_S)
    check(err.returncode == 1 and b"FAILED_PRECONDITION" in err.stderr and
          b"applies to DAV_3510 only" in err.stderr,
          "CANN's tiling on the A2 profile is FAILED_PRECONDITION")
    check("SERVING" in run([args.ctl, "health", "--server", target]), "tilingctl health")
    execute_checks(args, target, workdir)

    reflect = [sys.executable, args.reflect, target]
    services = run(reflect + ["list"]).split()
    check({SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"}
          <= set(services), "reflection lists %s" % services)
    methods = run(reflect + ["describe", SERVICE]).strip().splitlines()
    check(len(methods) == 5 and
          any(m.startswith("rpc GetTiling(npu.tiling.v1.TilingRequest)") for m in methods) and
          any("GetTilingBatch" in m for m in methods) and
          any("ListPlatforms" in m for m in methods) and
          any(m.startswith("rpc Execute(npu.tiling.v1.ExecuteRequest)") for m in methods) and
          any(m.startswith("rpc GetGraphTiling(npu.tiling.v1.GraphTilingRequest)")
              for m in methods),
          "reflection describes the 5 RPCs")
    call = json.loads(run(reflect + [
        "call", "/%s/GetTiling" % SERVICE,
        json.dumps({"id": "reflect", "problem": {"m": 4096, "n": 1280, "k": 8192,
                                                 "dtype_a": "DATA_TYPE_FLOAT16",
                                                 "dtype_b": "DATA_TYPE_FLOAT16",
                                                 "dtype_c": "DATA_TYPE_FLOAT16",
                                                 "trans_b": True,
                                                 "format_b": "FORMAT_FRACTAL_NZ"}})]))
    check(call["id"] == "reflect" and call["tilingKey"] == "4162",
          "GetTiling through the reflection client")

    health = health_checker(workdir)
    check(health(target, "") == "SERVING", "grpcio health: server SERVING")
    check(health(target, SERVICE) == "SERVING", "grpcio health: %s SERVING" % SERVICE)
    check(health(target, "no.such.Service") == "NOT_FOUND", "grpcio health: unknown NOT_FOUND")

    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
        metrics = r.read().decode()
    handled = re.search(r'^grpc_server_handled_total\{grpc_code="OK",grpc_method="GetTiling",'
                        r'grpc_service="%s",grpc_type="unary"\} (\S+)$' % re.escape(SERVICE),
                        metrics, re.M)
    check(handled and float(handled.group(1)) >= case_count + 2,
          "/metrics counts the GetTiling calls (%s)" % (handled.group(1) if handled else None))
    executed = re.search(r'^npu_execute_total\{result="OK"\} (\S+)$', metrics, re.M)
    check(executed and float(executed.group(1)) >= 5,
          "/metrics counts the Execute calls (%s)" % (executed.group(1) if executed else None))

    # SIGTERM: a health Watch that is open (itself an in-flight call) sees NOT_SERVING before the
    # server drains and exits 0.
    import grpc
    with grpc.insecure_channel(target) as channel:
        watch = channel.unary_stream("/grpc.health.v1.Health/Watch",
                                     request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
        encoded = SERVICE.encode()
        updates = watch(b"\x0a" + bytes([len(encoded)]) + encoded, timeout=HANG_GUARD_S)
        check(next(updates) == b"\x08\x01", "health Watch starts SERVING")
        os.killpg(server.pid, signal.SIGTERM)
        check(next(updates) == b"\x08\x02", "health Watch turns NOT_SERVING on SIGTERM")
        try:
            for _ in updates:
                pass
        except grpc.RpcError:
            pass  # the drain deadline cancels the watch
    code = stop(server)
    check(code == 0, "SIGTERM: tiling_server exits 0 (got %s)" % code)
    check("stopped" in read(log_path), "the server logged a clean stop")


def advise_part(args, workdir):
    server, port, metrics_port, _ = start_server(
        args.server, workdir, extra=["--max_advisory_ms=60000", "--max_advise_candidates=3"])
    target = "127.0.0.1:%d" % port
    # bench/ADVISE_SWEEP.md: the block search beats CANN's BASIC_ASWT 1.5x here, and BASIC_ASWT
    # has three more variants, so the cap of 3 candidates ranks some out.
    shape = ["--m", "4097", "--n", "777", "--k", "1999", "--dtype", "float16"]

    table = run([args.ctl, "advise", "--server", target] + shape)
    row = re.compile(r"^\d+\*?\s+\S+\s+[\d.]+\s+[\d.]+x ")
    rows = [line for line in table.splitlines() if row.match(line)]
    check(table.startswith("CANN's choice: BASIC_ASWT") and "rank  candidate" in table and
          len(rows) == 3 and sum(1 for r in rows if re.match(r"^\d+\*", r)) == 1,
          "advise: ranked table of 3 candidates, CANN's choice marked once")
    check(rows[0].startswith("1 ") and "BASIC_ASWT/base_" in rows[0] and "PASSED" in rows[0],
          "advise: the block-search variant ranks first and passed its numerics check")
    check("\nnot offered\n" in table and "beyond max_candidates=3" in table and
          "BASIC_STREAM_K" in table, "advise: not-offered reasons (capped, strategies that cannot "
          "apply)")

    advice_json = json.loads(run([args.ctl, "advise", "--server", target, "--json"] + shape))
    advice = advice_json["advice"]
    cycles = [int(c["predictedCycles"]) for c in advice["candidates"]]
    cann = [c for c in advice["candidates"] if c["isCannChoice"]]
    check(cycles == sorted(cycles) and len(cann) == 1 and
          cann[0]["tiling"]["tilingKey"] == advice_json["tilingKey"] and
          cann[0]["speedupVsCann"] == 1 and advice["candidates"][0]["speedupVsCann"] > 1,
          "advise --json: sorted by predicted cycles, CANN's choice present with speed-up 1")
    check(advice["maxCandidates"] == 3 and advice["maxAdvisoryMs"] == 60000 and
          advice["verification"]["worstErrorRatio"] <= 1 and not advice["budgetExhausted"],
          "advise --json: the server's caps are echoed; the recommendation verified")
    check(advice_json["fromCache"], "advise --json: the same advice again comes from the cache")

    alias = json.loads(run([args.ctl, "tile", "--mode", "advise", "--server", target, "--json"] +
                           shape))
    alias["advice"].pop("fromCache", None)
    check(alias["advice"] == advice, "tile --mode advise: the same advice as advise")

    unverified = json.loads(run([args.ctl, "advise", "--server", target, "--json", "--no-verify",
                                 "--max-candidates", "2", "--budget-ms", "100000"] + shape))
    check(not unverified["advice"]["verifyRecommendation"] and
          "verification" not in unverified["advice"] and
          len(unverified["advice"]["candidates"]) == 2 and
          unverified["advice"]["maxAdvisoryMs"] == 60000,
          "advise --no-verify --max-candidates 2: nothing verified, two candidates, budget capped")

    plain = json.loads(run([args.ctl, "tile", "--server", target, "--json"] + shape))
    check("advice" not in plain and plain["strategy"] == advice_json["strategy"] and
          plain["rawWords"] == advice_json["rawWords"],
          "tile: CANN's answer without advice, the same decision as ADVISE's")

    run([args.ctl, "advise", "--server", target, "--max-candidates", "65"] + shape, expect_rc=1)
    err = subprocess.run([args.ctl, "advise", "--server", target, "--max-candidates", "65"] + shape,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=HANG_GUARD_S).stderr.decode()
    check("INVALID_ARGUMENT" in err and "advise.max_candidates" in err,
          "advise --max-candidates 65: INVALID_ARGUMENT naming advise.max_candidates")
    run([args.ctl, "advise", "--server", target, "--strategy", "BASIC_ASWT"] + shape, expect_rc=2)

    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
        metrics = r.read().decode()
    advised = re.search(r'^npu_advise_total\{result="OK"\} (\S+)$', metrics, re.M)
    invalid = re.search(r'^npu_advise_total\{result="InvalidArgument"\} (\S+)$', metrics, re.M)
    runs = re.search(r'^npu_advise_seconds_count (\S+)$', metrics, re.M)
    check(advised and float(advised.group(1)) == 4 and invalid and
          float(invalid.group(1)) == 2 and runs and float(runs.group(1)) == 2,
          "/metrics: 4 advice answers (2 advisor runs, 2 from the cache), 2 invalid")
    check(stop(server) == 0, "SIGTERM: tiling_server exits 0")


def prometheus_part(args, workdir):
    for tool in ("prometheus", "promtool"):
        if not getattr(args, tool) or not os.access(getattr(args, tool), os.X_OK):
            skip("%s is missing (apt-get install prometheus)" % tool)
    server, port, metrics_port, _ = start_server(args.server, workdir)
    target = "127.0.0.1:%d" % port

    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                "scrape_configs:\n"
                "  - job_name: tiling\n"
                "    static_configs: [{targets: ['127.0.0.1:%d']}]\n" % metrics_port)
    run([args.promtool, "check", "config", config])

    prom_url = None
    for attempt in range(3):  # the free port may be taken between probe and bind
        prom_port = free_port()
        prom_log = os.path.join(workdir, "prometheus-%d.log" % attempt)
        prom = spawn([args.prometheus, "--config.file=" + config,
                      "--storage.tsdb.path=" + os.path.join(workdir, "tsdb-%d" % attempt),
                      "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
                     prom_log)
        url = "http://127.0.0.1:%d" % prom_port

        def ready():
            if prom.poll() is not None:
                return "exited"
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=5) as r:
                    return "ready" if r.status == 200 else None
            except OSError:
                return None
        if wait_for(ready, "prometheus to get ready") == "ready":
            prom_url = url
            break
    if prom_url is None:
        fail("prometheus did not start")

    query = ('grpc_server_handled_total{job="tiling",grpc_method="GetTiling",grpc_code="OK",'
             'grpc_service="%s"}' % SERVICE)

    def scraped_value():
        with urllib.request.urlopen(prom_url + "/api/v1/query?query=" +
                                    urllib.parse.quote(query), timeout=10) as r:
            result = json.loads(r.read().decode())["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    before = wait_for(lambda: (scraped_value(),) if scraped_value() is not None else None,
                      "the first scrape of the server", prom, prom_log)[0]
    calls = 5
    for i in range(calls):
        run([args.ctl, "tile", "--server", target, "--m", str(512 + 16 * i), "--n", "512",
             "--k", "512"])
    after = wait_for(lambda: (lambda v: v if v is not None and v >= before + calls else None)(
        scraped_value()), "grpc_server_handled_total to move by %d" % calls, prom, prom_log)
    check(after >= before + calls,
          "Prometheus saw grpc_server_handled_total{GetTiling,OK} go %g -> %g" % (before, after))
    out = run([args.promtool, "query", "instant", prom_url, "sum(%s)" % query])
    value = re.search(r"=>\s*(\S+)", out)
    check(value and float(value.group(1)) >= before + calls,
          "promtool query instant: %s" % out.strip())
    check(stop(server) == 0, "SIGTERM: tiling_server exits 0")
    stop(prom)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["service", "advise", "prometheus"])
    parser.add_argument("--server", required=True, help="tiling_server binary")
    parser.add_argument("--ctl", required=True, help="tilingctl binary")
    parser.add_argument("--reflect", required=True, help="scripts/grpc_reflect.py")
    parser.add_argument("--cases", required=True, help="cann950-tiling-cases/1 file")
    parser.add_argument("--prometheus", default=shutil.which("prometheus"))
    parser.add_argument("--promtool", default=shutil.which("promtool"))
    parser.add_argument("--keep", action="store_true", help="keep the work dir")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="npu_e2e_%s_" % args.part)
    ok = False
    try:
        {"service": service_part, "advise": advise_part,
         "prometheus": prometheus_part}[args.part](args, workdir)
        ok = True
        print("PASS")
    finally:
        kill_children()
        if ok and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("logs kept in " + workdir)


if __name__ == "__main__":
    main()
