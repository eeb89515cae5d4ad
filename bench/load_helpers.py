#!/usr/bin/python3
"""Helpers of bench/load_gettiling.sh: gRPC framing, h2load and /metrics parsing, the report.

  frame IN OUT              wraps one serialized message in a gRPC frame: 1 byte compressed flag
                            (0), 4 bytes big-endian length, then the message
  h2load LOG                prints the h2load summary as JSON (calls, seconds, req/s, failures)
  metrics URL OUT           saves grpc_server_handled_total by (method, code) from /metrics as JSON
  report --workdir DIR ...  checks the counters and RSS, prints the Markdown report

h2load reports a gRPC error as a success (it is HTTP 200 with grpc-status in the trailers), so the
report trusts only the server's own grpc_server_handled_total counters for GetTiling.
"""

import argparse
import json
import re
import struct
import sys
import urllib.request


def frame(args):
    with open(args.input, "rb") as f:
        body = f.read()
    with open(args.output, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(body)) + body)


def parse_h2load(path):
    with open(path) as f:
        text = f.read()
    finished = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", text)
    requests = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                         r"(\d+) failed, (\d+) errored, (\d+) timeout", text)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
    latency = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", text)
    if not (finished and requests and codes):
        raise SystemExit("cannot parse h2load output %s:\n%s" % (path, text))
    seconds = float(finished.group(1)) / (1000.0 if finished.group(2) == "ms" else 1.0)
    total, _, done, succeeded, failed, errored, timeout = map(int, requests.groups())
    return {
        "calls": total, "done": done, "succeeded": succeeded, "failed": failed,
        "errored": errored, "timeout": timeout, "status_2xx": int(codes.group(1)),
        "seconds": seconds, "req_per_s": float(finished.group(3)),
        "mean_latency": latency.group(3) if latency else "?",
    }


def server_cpu_seconds(h2load_log):
    """The server's CPU seconds (user + system) during one h2load run (see LOG.cpu)."""
    with open(h2load_log + ".cpu") as f:
        ticks, per_second = f.read().split()
    return int(ticks) / float(per_second)


def h2load(args):
    print(json.dumps(parse_h2load(args.log)))


def scrape_handled(url):
    """{"GetTiling": {"OK": 12.0, ...}, ...} from grpc_server_handled_total."""
    with urllib.request.urlopen(url, timeout=30) as r:
        text = r.read().decode()
    handled = {}
    for line in text.splitlines():
        if not line.startswith("grpc_server_handled_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line[:line.index("}")]))
        value = float(line.rsplit(" ", 1)[1])
        handled.setdefault(labels["grpc_method"], {})[labels["grpc_code"]] = value
    return handled


def metrics(args):
    with open(args.output, "w") as f:
        json.dump(scrape_handled(args.url), f)


def mib(kib):
    return kib / 1024.0


def report(args):
    with open(args.before) as f:
        before = json.load(f).get("GetTiling", {})
    with open(args.after) as f:
        after = json.load(f).get("GetTiling", {})
    delta = {code: after.get(code, 0) - before.get(code, 0) for code in after}

    runs = {"health": [], "compact": [], "full": []}
    for kind in runs:
        for r in range(1, args.rounds + 1):
            runs[kind].append(parse_h2load("%s/%s-%d.h2load" % (args.workdir, kind, r)))

    def total(kind, key):
        return sum(run[key] for run in runs[kind])

    rates = {kind: total(kind, "calls") / total(kind, "seconds") for kind in runs}
    # Server CPU per call is steadier than req/s on a shared machine: other processes slow the
    # wall clock, not the work the server does per call.
    cpu_us = {kind: 1e6 * sum(server_cpu_seconds("%s/%s-%d.h2load" % (args.workdir, kind, r))
                              for r in range(1, args.rounds + 1)) / total(kind, "calls")
              for kind in runs}
    ratio = {kind: rates[kind] / rates["health"] for kind in ("compact", "full")}
    sent = total("compact", "calls") + total("full", "calls")
    ok = delta.get("OK", 0)
    errors = {code: v for code, v in delta.items() if code != "OK" and v != 0}
    h2_failures = sum(total(kind, key) for kind in runs for key in ("failed", "errored", "timeout"))

    samples = []
    with open(args.rss) as f:
        for line in f:
            t, kib = line.split()
            samples.append((float(t), int(kib)))
    if not samples:
        raise SystemExit("no RSS samples")
    rss = [kib for _, kib in samples]
    # "Flat": the last quarter of the run holds no more than the first quarter plus a small
    # allowance for allocator slack (per-thread caches, the histogram buckets), i.e. memory does
    # not grow with the number of calls served.
    quarter = max(1, len(rss) // 4)
    first_q, last_q = max(rss[:quarter]), max(rss[-quarter:])
    growth_mib = mib(last_q - first_q)
    flat = growth_mib <= args.rss_allowance_mib

    checks = [
        ("server counted every GetTiling as OK (%d of %d sent)" % (ok, sent), ok == sent),
        ("no non-OK GetTiling codes on the server (%s)" % (errors or "none"), not errors),
        ("h2load saw no failed/errored/timed-out streams (%d)" % h2_failures, h2_failures == 0),
        ("RSS flat: last quarter max - first quarter max = %.1f MiB (allowance %.0f MiB)" %
         (growth_mib, args.rss_allowance_mib), flat),
        ("throughput ratio, compact view, %.3f >= %.2f" % (ratio["compact"], args.goal),
         ratio["compact"] >= args.goal),
        ("throughput ratio, full view, %.3f >= %.2f" % (ratio["full"], args.goal),
         ratio["full"] >= args.goal),
    ]

    out = []
    out.append("| RPC | calls | wall s | req/s | server CPU per call | mean latency per round |")
    out.append("| --- | ---: | ---: | ---: | ---: | --- |")
    cache = "cache off" if args.cache_size == 0 else "cache %d" % args.cache_size
    names = {"health": "grpc.health.v1.Health/Check (baseline)",
             "compact": "npu.tiling.v1.TilingService/GetTiling, compact view, " + cache,
             "full": "npu.tiling.v1.TilingService/GetTiling, full view, " + cache}
    for kind in runs:
        out.append("| %s | %d | %.1f | %.0f | %.1f µs | %s |" % (
            names[kind], total(kind, "calls"), total(kind, "seconds"), rates[kind], cpu_us[kind],
            ", ".join(run["mean_latency"] for run in runs[kind])))
    out.append("")
    out.append("Per round (req/s), health / compact / full: " + "; ".join(
        "%.0f / %.0f / %.0f" % (h["req_per_s"], c["req_per_s"], f["req_per_s"])
        for h, c, f in zip(runs["health"], runs["compact"], runs["full"])))
    out.append("")
    for kind in ("compact", "full"):
        per_round = sorted(c["req_per_s"] / h["req_per_s"]
                           for h, c in zip(runs["health"], runs[kind]))
        out.append("**Throughput ratio GetTiling (%s view) / Health = %.3f** (goal >= %.2f; per "
                   "round median %.3f, range %.3f-%.3f); server CPU per call GetTiling / Health "
                   "= %.2f." % (kind, ratio[kind], args.goal, per_round[len(per_round) // 2],
                                per_round[0], per_round[-1], cpu_us[kind] / cpu_us["health"]))
        out.append("")
    out.append("Server counters, grpc_server_handled_total{grpc_method=\"GetTiling\"} delta over "
               "the measured rounds: " +
               ", ".join("%s=%d" % (code, v) for code, v in sorted(delta.items()) if v) +
               " (all other codes 0); sent %d." % sent)
    out.append("")
    out.append("Server RSS, %d samples over %.0f s: start %.1f MiB, min %.1f, max %.1f, end %.1f MiB." % (
        len(samples), samples[-1][0] - samples[0][0], mib(rss[0]), mib(min(rss)), mib(max(rss)),
        mib(rss[-1])))
    out.append("")
    for what, passed in checks:
        out.append("- %s %s" % ("PASS" if passed else "FAIL", what))
    print("\n".join(out))
    # Throughput on a shared 2-core VM is noisy; only correctness and memory fail the run.
    hard = [passed for what, passed in checks if not what.startswith("throughput")]
    sys.exit(0 if all(hard) else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("frame")
    p.add_argument("input")
    p.add_argument("output")
    p.set_defaults(func=frame)
    p = sub.add_parser("h2load")
    p.add_argument("log")
    p.set_defaults(func=h2load)
    p = sub.add_parser("metrics")
    p.add_argument("url")
    p.add_argument("output")
    p.set_defaults(func=metrics)
    p = sub.add_parser("report")
    p.add_argument("--workdir", required=True)
    p.add_argument("--rounds", type=int, required=True)
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--rss", required=True)
    p.add_argument("--goal", type=float, default=0.9)
    p.add_argument("--cache_size", type=int, default=0)
    p.add_argument("--rss_allowance_mib", type=float, default=8.0)
    p.set_defaults(func=report)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
