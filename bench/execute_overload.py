#!/usr/bin/python3
"""Execute under overload, and a deadline shorter than an emulation, on the real tiling_server.

  bench/execute_overload.py --server build/bin/tiling_server [--size 2048] [--calls 8]

overload   The server runs with --execute_threads=1 --max_execute_queue=2. --calls concurrent
           Execute calls of a --size^3 float16 problem (numerics on, seeded operands) arrive
           together: 1 runs, 2 wait, the rest must be refused with RESOURCE_EXHAUSTED at once.
           Meanwhile the health service must stay SERVING and GetTiling must answer; its latency
           is measured while the emulations run. Then every call is cancelled.
deadline   One Execute of the same problem with a 300 ms deadline. The client gets
           DEADLINE_EXCEEDED; the script samples the server's CPU time (/proc/PID/stat) every
           10 ms and reports how long after the deadline the server stopped burning CPU, and how
           much CPU it used after the deadline.

Prints a Markdown summary (the bench/RESULTS.md format). Exits non-zero when a contract is
broken (a refusal that is not RESOURCE_EXHAUSTED, a NOT_SERVING health, a GetTiling error, a
deadline that is not DEADLINE_EXCEEDED, an emulation still running 5 s after its deadline).
Needs /usr/bin/python3 with Debian's python3-grpcio and python3-protobuf, and protoc.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")


def load_proto_module():
    out = tempfile.mkdtemp(prefix="npu_bench_pb_")
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out=" + out,
                    "npu/tiling/v1/tiling_service.proto"], check=True)
    sys.path.insert(0, out)
    from npu.tiling.v1 import tiling_service_pb2
    return tiling_service_pb2


def start_server(binary, extra):
    log = tempfile.NamedTemporaryFile(prefix="npu_bench_server_", suffix=".log", delete=False)
    proc = subprocess.Popen([binary, "--address=127.0.0.1", "--port=0", "--metrics_port=-1"] +
                            extra, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(log.name) as f:
            match = re.search(r"^listening on \S+:(\d+)$", f.read(), re.M)
        if match:
            return proc, "127.0.0.1:" + match.group(1), log.name
        if proc.poll() is not None:
            sys.exit("server exited: " + open(log.name).read())
        time.sleep(0.05)
    sys.exit("server printed no port")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def stubs(grpc, pb, target):
    channel = grpc.insecure_channel(target)
    execute = channel.unary_unary("/npu.tiling.v1.TilingService/Execute",
                                  request_serializer=pb.ExecuteRequest.SerializeToString,
                                  response_deserializer=pb.ExecuteResponse.FromString)
    tiling = channel.unary_unary("/npu.tiling.v1.TilingService/GetTiling",
                                 request_serializer=pb.TilingRequest.SerializeToString,
                                 response_deserializer=pb.TilingResponse.FromString)
    health = channel.unary_unary("/grpc.health.v1.Health/Check",
                                 request_serializer=lambda b: b, response_deserializer=lambda b: b)
    return channel, execute, tiling, health


def problem(pb, message, size):
    p = message.problem
    p.m = p.n = p.k = size
    p.dtype_a = p.dtype_b = p.dtype_c = pb.DATA_TYPE_FLOAT16


def overload(args, grpc, pb, failures):
    proc, target, log = start_server(args.server, ["--execute_threads=1", "--max_execute_queue=2"])
    channel, execute, tiling, health = stubs(grpc, pb, target)
    request = pb.ExecuteRequest(id="long", seed=1, threads=1)
    problem(pb, request, args.size)
    start = time.monotonic()
    futures = [execute.future(request, timeout=600) for _ in range(args.calls)]
    refusals = []  # (code, seconds after the burst)
    accepted = []
    for future in futures:
        def done(f, t0=start):
            code = f.code()
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                refusals.append((code, time.monotonic() - t0, f.details()))
        future.add_done_callback(done)
    time.sleep(1.0)  # let the refusals arrive; the accepted runs take seconds
    refused = len(refusals)
    still_running = sum(1 for f in futures if not f.done())

    # While 1 emulation runs and 2 wait: health and GetTiling.
    serving = health(b"", timeout=10) == b"\x08\x01"
    latencies = []
    errors = 0
    get = pb.TilingRequest()
    problem(pb, get, 1024)
    for i in range(args.tiling_calls):
        get.problem.m = 1024 + 16 * (i % 64)
        t0 = time.perf_counter()
        try:
            tiling(get, timeout=10)
        except grpc.RpcError:
            errors += 1
        latencies.append(time.perf_counter() - t0)
    serving_after = health(b"", timeout=10) == b"\x08\x01"
    running_during = sum(1 for f in futures if not f.done())
    for future in futures:
        future.cancel()
    channel.close()
    proc.terminate()
    proc.wait(timeout=60)

    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1e3
    worst_refusal_ms = max(t for _, t, _ in refusals) * 1e3 if refusals else float("nan")
    out = [
        "Overload: `--execute_threads=1 --max_execute_queue=2`, %d concurrent Execute calls of a "
        "%d^3 float16 problem (numerics on)." % (args.calls, args.size),
        "",
        "- refused with RESOURCE_EXHAUSTED: %d of %d (expected %d), the last one %.1f ms after "
        "the burst; message: \"%s\"" % (refused, args.calls, args.calls - 3, worst_refusal_ms,
                                        refusals[0][2] if refusals else "-"),
        "- still running or queued after 1 s: %d (expected 3)" % still_running,
        "- health while saturated: %s before and %s after the GetTiling calls" % (
            "SERVING" if serving else "NOT SERVING", "SERVING" if serving_after else "NOT SERVING"),
        "- GetTiling while the emulation worker is busy: %d calls, %d errors, latency p50 %.2f ms, "
        "p99 %.2f ms (Executes still in flight at the end: %d)" % (
            len(latencies), errors, p50, p99, running_during),
    ]
    if refused != args.calls - 3 or still_running != 3:
        failures.append("overload: %d refused, %d in flight" % (refused, still_running))
    if not (serving and serving_after):
        failures.append("overload: health not SERVING")
    if errors:
        failures.append("overload: %d GetTiling errors" % errors)
    return out


def deadline(args, grpc, pb, failures):
    proc, target, log = start_server(args.server, ["--execute_threads=1"])
    channel, execute, _, _ = stubs(grpc, pb, target)
    request = pb.ExecuteRequest(id="deadline", seed=1, threads=1)
    problem(pb, request, args.size)
    idle_before = cpu_seconds(proc.pid)
    samples = []  # (seconds since the call started, server CPU seconds)
    stop = threading.Event()

    def sample():
        t0 = time.monotonic()
        while not stop.is_set():
            samples.append((time.monotonic() - t0, cpu_seconds(proc.pid)))
            time.sleep(0.01)
    sampler = threading.Thread(target=sample)
    sampler.start()
    deadline_s = args.deadline_ms / 1e3
    code = None
    try:
        execute(request, timeout=deadline_s)
        code = grpc.StatusCode.OK
    except grpc.RpcError as e:
        code = e.code()
    time.sleep(5.0)
    stop.set()
    sampler.join()
    channel.close()
    proc.terminate()
    proc.wait(timeout=60)

    # The server is "busy" while it gains more than 20% of a core between samples.
    busy_until = 0.0
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if t1 > t0 and (c1 - c0) / (t1 - t0) > 0.2:
            busy_until = t1
    at_deadline = min(samples, key=lambda s: abs(s[0] - deadline_s))[1]
    after_deadline_cpu = samples[-1][1] - at_deadline
    stopped_after_ms = max(0.0, busy_until - deadline_s) * 1e3
    out = [
        "Deadline: one Execute of the same problem with a %d ms deadline, `--execute_threads=1`; "
        "server CPU sampled every 10 ms for 5 s." % args.deadline_ms,
        "",
        "- client status: %s" % code.name,
        "- the server stopped using CPU %.0f ms after the deadline (last 10 ms window above 20%% "
        "of a core); CPU used after the deadline: %.3f s; CPU before the call: %.2f s, at the "
        "deadline: %.2f s" % (stopped_after_ms, after_deadline_cpu, idle_before, at_deadline),
    ]
    if code != grpc.StatusCode.DEADLINE_EXCEEDED:
        failures.append("deadline: status %s" % code.name)
    if busy_until >= samples[-1][0] - 0.5:
        failures.append("deadline: the server was still busy 5 s after the deadline")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "bin", "tiling_server"))
    parser.add_argument("--size", type=int, default=2048, help="m = n = k of the long run")
    parser.add_argument("--calls", type=int, default=8, help="concurrent Execute calls")
    parser.add_argument("--tiling_calls", type=int, default=2000)
    parser.add_argument("--deadline_ms", type=int, default=300)
    args = parser.parse_args()
    import grpc
    pb = load_proto_module()
    failures = []
    print("\n".join(overload(args, grpc, pb, failures)))
    print()
    print("\n".join(deadline(args, grpc, pb, failures)))
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
