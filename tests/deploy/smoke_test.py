#!/usr/bin/env python3
"""Runs the compose topology natively and checks that every dashboard query returns data.

  real tiling_server (free ports)  <-- scraped by --  real Prometheus (repo scrape config, targets
  rewritten to the server, 1 s interval)  <-- queried by -- promtool query instant, once per
  PromQL expression of deploy/grafana/dashboards/*.json

Traffic comes from tilingctl: GetTiling with fresh shapes every round (cache misses, decisions),
the CANN conformance cases every round (cache hits from round 2 on), an invalid request (a non-OK
code for the error panels), ListPlatforms and two Execute calls (numerics and timing-only, for the
emulator panels), spread over several scrapes so that every counter has at least two samples that
differ. A query that returns nothing, or only NaN, fails the test:
Grafana would show "No data" for it. So does a rate() query whose values are all zero: every
counter got traffic, so zero means the query does not see it (the server pre-creates its series
at zero, so an empty-vs-zero check alone would pass without any traffic).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_testlib as lib  # noqa: E402

SCRAPE_INTERVAL_S = 1
ROUNDS = 4
# The service's metrics port in the repo config; targets on it are pointed at the test server.
SERVICE_METRICS_PORT = 9464
PROMETHEUS_PORT = 9090


def rewrite_scrape_config(source, dest, metrics_target, prometheus_target):
    """Copies the repo's Prometheus config with the compose targets replaced by local ones."""
    config = lib.load_yaml(source)
    config.setdefault("global", {})
    config["global"]["scrape_interval"] = "%ds" % SCRAPE_INTERVAL_S
    config["global"]["evaluation_interval"] = "%ds" % SCRAPE_INTERVAL_S
    service_jobs = []
    for job in config.get("scrape_configs", []):
        job["scrape_interval"] = "%ds" % SCRAPE_INTERVAL_S
        for static in job.get("static_configs", []):
            targets = []
            for target in static.get("targets", []):
                port = int(target.rsplit(":", 1)[1])
                if port == SERVICE_METRICS_PORT:
                    targets.append(metrics_target)
                    service_jobs.append(job["job_name"])
                elif port == PROMETHEUS_PORT:
                    targets.append(prometheus_target)
                else:
                    lib.fail("%s: don't know what to point target %r at" % (source, target))
            static["targets"] = targets
    if not service_jobs:
        lib.fail("%s has no static target on port %d (the service's metrics port)" %
                 (source, SERVICE_METRICS_PORT))
    import yaml
    with open(dest, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    return sorted(set(service_jobs))


def http_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read().decode())


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def start_prometheus(prometheus_bin, config_path, workdir):
    """Starts Prometheus on a free port (retrying if someone grabbed it); returns (proc, url)."""
    for attempt in range(3):
        port = lib.free_port()
        log_path = os.path.join(workdir, "prometheus-%d.log" % attempt)
        proc = lib.spawn([prometheus_bin,
                          "--config.file=" + config_path,
                          "--storage.tsdb.path=" + os.path.join(workdir, "tsdb-%d" % attempt),
                          "--web.listen-address=127.0.0.1:%d" % port,
                          "--log.level=warn"], log_path)
        url = "http://127.0.0.1:%d" % port
        while proc.poll() is None and not http_ok(url + "/-/ready"):
            time.sleep(0.2)
        if proc.poll() is None:
            return proc, url, log_path
        print("prometheus failed to start on port %d, retrying:\n%s" % (port, lib.read_log(log_path)))
    lib.fail("could not start prometheus")


def scrape_state(prom_url, jobs):
    """{scrapeUrl: (health, lastScrape, lastError)} for the service's targets."""
    data = http_json(prom_url + "/api/v1/targets?state=active")["data"]["activeTargets"]
    return {t["scrapeUrl"]: (t["health"], t["lastScrape"], t.get("lastError", ""))
            for t in data if t["labels"].get("job") in jobs}


def wait_for_scrapes(prom_url, jobs, count, prom_proc, prom_log):
    """Waits until every service target has been scraped `count` more times, successfully."""
    seen = {}

    def done():
        state = scrape_state(prom_url, jobs)
        if not state:
            return False
        for url, (health, last, _) in state.items():
            history = seen.setdefault(url, [])
            if health == "up" and (not history or history[-1] != last):
                history.append(last)
        return all(len(seen.get(url, [])) > count for url in state)

    lib.wait_for(done, "%d successful scrapes of %s" % (count, jobs), prom_proc, prom_log)


class Ctl:
    """Runs tilingctl against the test server; every call is logged."""

    def __init__(self, ctl_bin, target, workdir):
        self.ctl_bin = ctl_bin
        self.target = target
        self.log = open(os.path.join(workdir, "tilingctl.log"), "a")

    def run(self, args, expect_ok=True):
        argv = [self.ctl_bin] + args[:1] + ["--server", self.target] + args[1:]
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                timeout=300)
        output = result.stdout.decode("utf-8", "replace")
        self.log.write("$ %s\n%s\n[rc=%d]\n" % (" ".join(argv), output, result.returncode))
        self.log.flush()
        if expect_ok and result.returncode != 0:
            lib.fail("%s failed (rc=%d):\n%s" % (" ".join(argv), result.returncode, output))
        if not expect_ok and result.returncode == 0:
            lib.fail("%s was expected to fail:\n%s" % (" ".join(argv), output))
        return output


def drive_traffic(ctl, cases, round_index):
    # Fresh shapes each round: cache misses, so decisions and decision time move every round.
    for i, (m, n, k) in enumerate([(1024, 1024, 1024), (4096, 1280, 8192), (256, 7168, 2048)]):
        scale = round_index * 3 + i + 1
        ctl.run(["tile", "--m", str(m + 16 * scale), "--n", str(n), "--k", str(k)])
    # Identical requests every round: cache hits from the second round on.
    ctl.run(["conform", cases])
    ctl.run(["platforms"])
    # A malformed request: INVALID_ARGUMENT feeds the error panels.
    ctl.run(["tile", "--m", "0", "--n", "128", "--k", "128"], expect_ok=False)
    # Execute every round: numerics on a small fresh shape and a timing-only prediction of a large
    # one, so the emulator's panels (queue depth, predicted cube utilization) have data and move.
    ctl.run(["execute", "--m", str(256 + 16 * round_index), "--n", "256", "--k", "512",
             "--seed", str(round_index)])
    ctl.run(["execute", "--m", "4096", "--n", "4096", "--k", "4096", "--timing-only"])
    # A whole model, emulated, at a fresh sequence length: the graph panels.
    ctl.run(["graph", os.path.join(lib.REPO_ROOT, "tests/data/onnx/encoder_llama3_8b.onnx"),
             "batch=1", "seq=%d" % (128 + 64 * round_index), "--emulate"])


def evaluate(promtool_bin, prom_url, queries, eval_time):
    failures = []
    for title, ref, raw, expr in queries:
        if "$" in expr:
            failures.append("%s/%s: unresolved Grafana variable in %r" % (title, ref, raw))
            continue
        result = subprocess.run([promtool_bin, "query", "instant", "-o", "json",
                                 "--time=%s" % eval_time, prom_url, expr],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        out = result.stdout.decode().strip()
        err = result.stderr.decode().strip()
        if result.returncode != 0:
            failures.append("%s/%s: promtool failed (%s): %s" % (title, ref, err or out, expr))
            continue
        samples = json.loads(out) if out else []
        if isinstance(samples, dict):  # scalar / string results
            samples = [samples]
        values = []
        for sample in samples:
            value = sample.get("value") or (sample.get("values") or [[None, "NaN"]])[-1]
            values.append(value[1] if isinstance(value, list) else value)
        real = [v for v in values if v not in ("NaN", "+Inf", "-Inf")]
        status = "ok" if real else ("NaN only" if values else "EMPTY")
        # The server pre-creates its series at zero, so "some value" alone would also pass with
        # no traffic at all. Every counter got traffic, so a rate must have moved somewhere.
        if real and "rate(" in expr and not any(float(v) > 0 for v in real):
            status = "all zero"
        largest = max((float(v) for v in real), default=None)
        print("[%-8s] %s / %s: %d series, largest %s\n           %s" %
              (status, title, ref, len(values), largest, expr))
        if status != "ok":
            failures.append("%s/%s returned %s: %s" % (title, ref, status, expr))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True, help="tiling_server binary")
    parser.add_argument("--ctl", required=True, help="tilingctl binary")
    parser.add_argument("--prometheus", required=True)
    parser.add_argument("--promtool", required=True)
    parser.add_argument("--cases", required=True, help="conformance cases.json")
    parser.add_argument("--scrape-config",
                        default=os.path.join(lib.REPO_ROOT, "deploy/prometheus/prometheus.yml"))
    parser.add_argument("--dashboards",
                        default=os.path.join(lib.REPO_ROOT, "deploy/grafana/dashboards"))
    parser.add_argument("--keep", action="store_true", help="keep the temp dir for debugging")
    args = parser.parse_args()

    for name in ("server", "ctl", "prometheus", "promtool"):
        path = getattr(args, name)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            lib.fail("--%s %s is not an executable file" % (name, path))

    queries = []
    dashboard_files = sorted(glob.glob(os.path.join(args.dashboards, "*.json")))
    if not dashboard_files:
        lib.fail("no dashboards in " + args.dashboards)
    for path in dashboard_files:
        with open(path) as f:
            dashboard = json.load(f)
        for panel in lib.dashboard_panels(dashboard):
            if panel.get("type") not in ("row", "text") and not panel.get("targets"):
                lib.fail("%s: panel %r has no query" % (path, panel.get("title")))
        queries += lib.dashboard_queries(dashboard)
    if not queries:
        lib.fail("the dashboards hold no PromQL expression")

    workdir = tempfile.mkdtemp(prefix="npu_deploy_smoke_")
    print("work dir: " + workdir)
    passed = False
    try:
        server, grpc_port, metrics_port, server_log = lib.start_server(args.server, workdir)
        print("tiling_server: grpc 127.0.0.1:%d, metrics 127.0.0.1:%d" % (grpc_port, metrics_port))

        config_path = os.path.join(workdir, "prometheus.yml")
        # The Prometheus port is only known after start; its self-scrape target is irrelevant here.
        jobs = rewrite_scrape_config(args.scrape_config, config_path,
                                     "127.0.0.1:%d" % metrics_port, "127.0.0.1:%d" % lib.free_port())
        check = subprocess.run([args.promtool, "check", "config", config_path],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if check.returncode != 0:
            lib.fail("rewritten config invalid:\n" + check.stdout.decode())
        prom, prom_url, prom_log = start_prometheus(args.prometheus, config_path, workdir)
        print("prometheus: %s, service jobs %s" % (prom_url, jobs))
        wait_for_scrapes(prom_url, jobs, 1, prom, prom_log)

        ctl = Ctl(args.ctl, "127.0.0.1:%d" % grpc_port, workdir)
        for round_index in range(ROUNDS):
            drive_traffic(ctl, args.cases, round_index)
            wait_for_scrapes(prom_url, jobs, 1, prom, prom_log)
        # Two more scrapes after the last traffic, as the dashboard would see it.
        wait_for_scrapes(prom_url, jobs, 2, prom, prom_log)
        if server.poll() is not None:
            lib.fail("tiling_server died:\n" + lib.read_log(server_log))

        eval_time = "%.3f" % time.time()
        failures = evaluate(args.promtool, prom_url, queries, eval_time)

        code = lib.stop(server)
        if code != 0:
            failures.append("tiling_server exited with %s after SIGTERM (want 0)" % code)
        lib.stop(prom)
        if failures:
            print("\nserver log:\n" + lib.read_log(server_log)[-4000:])
            lib.fail("%d of %d dashboard queries failed:\n  %s" %
                     (len(failures), len(queries), "\n  ".join(failures)))
        print("PASS: all %d dashboard queries return data" % len(queries))
        passed = True
    finally:
        if passed and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print("logs kept in " + workdir)


if __name__ == "__main__":
    main()
