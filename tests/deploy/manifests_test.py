#!/usr/bin/env python3
"""Cross-checks the deployment files against each other and against the real server.

Static (always):
  * deploy/k8s: Deployment, headless Service, HPA, PDB and kustomization parse and agree: the
    container ports are the --port / --metrics_port the args pass, both gRPC probes use the
    native `grpc:` probe on the gRPC port (readiness names the tiling service), the scrape
    annotations name the metrics port, the Service is headless (clusterIP: None) and targets the
    named ports, HPA and PDB select the Deployment, resources are set, the UID is the image's.
  * Dockerfile: EXPOSE, CMD flags and the HEALTHCHECK port agree with the same ports.
  * compose: command, published ports, health check, health-based depends_on, the Prometheus
    target (service name and metrics port) and the Grafana mounts / datasource uid.
With the binaries (when built):
  * every flag used above is one tiling_server knows (`--help`), with the documented defaults;
  * tiling_server started with the Deployment's args (ports swapped for free ones) serves the
    gRPC health service: overall and for the service name readiness probes, and the image's
    HEALTHCHECK command (tilingctl health) succeeds against it;
  * SIGTERM ends it with exit code 0 (what the pod's termination relies on).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_testlib as lib  # noqa: E402

ROOT = lib.REPO_ROOT
DEPLOY = os.path.join(ROOT, "deploy")
GRPC_SERVICE_FALLBACK = "npu.tiling.v1.TilingService"

problems = []


def check(condition, message):
    if not condition:
        problems.append(message)
    return condition


def parse_flags(argv):
    """{'port': '50051', ...} from ['--port=50051', '--cache_size', '10', ...]."""
    flags = {}
    i = 0
    while i < len(argv):
        word = str(argv[i])
        if word.startswith("-"):
            name = word.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
            elif i + 1 < len(argv) and not str(argv[i + 1]).startswith("-"):
                value = str(argv[i + 1])
                i += 1
            else:
                value = "true"
            flags[name] = value
        i += 1
    return flags


def grpc_service_name():
    """package.Service from the proto, if the proto is there (else the documented name)."""
    for path in glob.glob(os.path.join(ROOT, "proto", "**", "*.proto"), recursive=True):
        with open(path) as f:
            text = f.read()
        package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        service = re.search(r"^\s*service\s+(TilingService)\b", text, re.M)
        if package and service:
            return "%s.%s" % (package.group(1), service.group(1))
    return GRPC_SERVICE_FALLBACK


# ---- Kubernetes ---------------------------------------------------------------------------------

def check_k8s(service_name):
    docs = {}
    files = sorted(glob.glob(os.path.join(DEPLOY, "k8s", "*.yaml")))
    for path in files:
        for doc in lib.load_yaml_all(path):
            docs.setdefault(doc.get("kind"), []).append((os.path.basename(path), doc))
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                 "Kustomization"):
        if not check(len(docs.get(kind, [])) == 1, "k8s: want exactly one %s" % kind):
            return None
    kustomization = docs["Kustomization"][0][1]
    listed = set(kustomization.get("resources", []))
    manifests = {os.path.basename(p) for p in files} - {"kustomization.yaml"}
    check(listed == manifests, "kustomization resources %s != manifests %s" %
          (sorted(listed), sorted(manifests)))

    deployment = docs["Deployment"][0][1]
    pod = deployment["spec"]["template"]
    pod_labels = pod["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    check(all(pod_labels.get(k) == v for k, v in selector.items()),
          "Deployment selector %s does not match pod labels %s" % (selector, pod_labels))
    containers = pod["spec"]["containers"]
    check(len(containers) == 1, "Deployment: expected one container")
    container = containers[0]
    flags = parse_flags(container.get("args", []) + container.get("command", [])[1:])
    grpc_port = int(flags.get("port", 50051))
    metrics_port = int(flags.get("metrics_port", 9464))
    check(flags.get("address", "0.0.0.0") in ("0.0.0.0", "[::]", "::"),
          "Deployment: --address must listen on all interfaces for probes and the Service")
    ports = {p.get("name"): p for p in container.get("ports", [])}
    check(ports.get("grpc", {}).get("containerPort") == grpc_port,
          "container port 'grpc' %s != --port %d" % (ports.get("grpc"), grpc_port))
    check(ports.get("metrics", {}).get("containerPort") == metrics_port,
          "container port 'metrics' %s != --metrics_port %d" % (ports.get("metrics"), metrics_port))

    for probe_name in ("readinessProbe", "livenessProbe"):
        probe = container.get(probe_name)
        if not check(probe is not None, "container has no %s" % probe_name):
            continue
        grpc_probe = probe.get("grpc")
        if not check(grpc_probe is not None, "%s is not a native grpc probe" % probe_name):
            continue
        port = grpc_probe.get("port")
        check(port == grpc_port or port == "grpc",
              "%s probes port %s, the server listens on %d" % (probe_name, port, grpc_port))
    readiness_service = (container.get("readinessProbe") or {}).get("grpc", {}).get("service")
    check(readiness_service == service_name,
          "readinessProbe.grpc.service %r != gRPC service %r" % (readiness_service, service_name))

    annotations = pod["metadata"].get("annotations", {})
    check(annotations.get("prometheus.io/scrape") == "true", "pod lacks prometheus.io/scrape")
    check(annotations.get("prometheus.io/port") == str(metrics_port),
          "prometheus.io/port %r != --metrics_port %d" %
          (annotations.get("prometheus.io/port"), metrics_port))
    check(annotations.get("prometheus.io/path", "/metrics") == "/metrics",
          "prometheus.io/path must be /metrics")

    resources = container.get("resources", {})
    for section in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            check(resource in resources.get(section, {}),
                  "container resources.%s.%s missing" % (section, resource))

    service = docs["Service"][0][1]
    check(service["spec"].get("clusterIP") == "None",
          "Service must be headless (clusterIP: None) for dns:/// + round_robin")
    check(all(pod_labels.get(k) == v for k, v in service["spec"]["selector"].items()),
          "Service selector does not match the pods")
    service_ports = {p["name"]: p for p in service["spec"]["ports"]}
    for name, number in (("grpc", grpc_port), ("metrics", metrics_port)):
        port = service_ports.get(name)
        if check(port is not None, "Service has no port named %s" % name):
            check(port["port"] == number, "Service port %s is %s, want %d" %
                  (name, port["port"], number))
            check(port.get("targetPort") in (name, number),
                  "Service port %s targets %r" % (name, port.get("targetPort")))

    hpa = docs["HorizontalPodAutoscaler"][0][1]
    target = hpa["spec"]["scaleTargetRef"]
    check(target["kind"] == "Deployment" and target["name"] == deployment["metadata"]["name"],
          "HPA scales %s, not the Deployment" % target)
    check(1 <= hpa["spec"].get("minReplicas", 1) <= hpa["spec"]["maxReplicas"],
          "HPA replica bounds are inconsistent")
    for metric in hpa["spec"].get("metrics", []):
        if metric.get("type") == "Resource":
            name = metric["resource"]["name"]
            check(name in resources.get("requests", {}),
                  "HPA scales on %s utilisation but the container requests no %s" % (name, name))

    pdb = docs["PodDisruptionBudget"][0][1]
    check(all(pod_labels.get(k) == v for k, v in pdb["spec"]["selector"]["matchLabels"].items()),
          "PDB selector does not match the pods")
    min_available = pdb["spec"].get("minAvailable")
    if isinstance(min_available, int):
        check(min_available < hpa["spec"].get("minReplicas", 1),
              "PDB minAvailable %d blocks every eviction at the HPA minimum" % min_available)

    # The kubelet kills the pod terminationGracePeriodSeconds after it starts stopping it: the
    # preStop sleep and the server's drain (--drain_seconds, default 5) must both fit.
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    pre_stop = ((container.get("lifecycle") or {}).get("preStop") or {}).get("exec", {})
    pre_stop_cmd = [str(w) for w in pre_stop.get("command", [])]
    sleep_s = float(pre_stop_cmd[1]) if pre_stop_cmd[:1] == ["sleep"] else 0.0
    drain_s = float(flags.get("drain_seconds", 5))
    check(grace > sleep_s + drain_s,
          "terminationGracePeriodSeconds %s <= preStop sleep %s + --drain_seconds %s" %
          (grace, sleep_s, drain_s))

    uid = (pod["spec"].get("securityContext") or {}).get("runAsUser")
    return {"grpc_port": grpc_port, "metrics_port": metrics_port, "flags": flags,
            "args": container.get("args", []), "uid": uid}


# ---- Dockerfile ---------------------------------------------------------------------------------

def check_dockerfile(k8s):
    instructions = lib.dockerfile_instructions(os.path.join(ROOT, "Dockerfile"))
    last = max(stage for stage, _, _ in instructions)
    runtime = [(kw, args) for stage, kw, args in instructions if stage == last]
    froms = [args for _, kw, args in instructions if kw == "FROM"]
    check(froms[0].startswith("debian:bookworm ") or froms[0] == "debian:bookworm",
          "build stage must be debian:bookworm, is %r" % froms[0])
    check(froms[-1].startswith("debian:bookworm-slim"),
          "runtime stage must be debian:bookworm-slim, is %r" % froms[-1])
    build_flags = " ".join(args for stage, kw, args in instructions if stage == 0 and kw == "RUN")
    if "scripts/build_release.sh" in build_flags:
        # The release script configures CMake itself.
        with open(os.path.join(ROOT, "scripts", "build_release.sh")) as f:
            build_flags += " " + f.read()
    for option in ("-DNPU_BUILD_TESTS=OFF", "-DNPU_BUILD_BENCH=OFF"):
        check(option in build_flags, "build stage does not configure with %s" % option)

    def one(keyword):
        values = [args for kw, args in runtime if kw == keyword]
        check(len(values) == 1, "runtime stage needs exactly one %s" % keyword)
        return values[0] if values else ""

    user = one("USER")
    check(user.split(":")[0] not in ("", "0", "root"), "runtime stage runs as root")
    if k8s and k8s["uid"] is not None:
        check(user.split(":")[0] == str(k8s["uid"]),
              "Dockerfile USER %s != Deployment runAsUser %s" % (user, k8s["uid"]))
    exposed = {int(p.split("/")[0]) for p in one("EXPOSE").split()}
    cmd = lib.exec_form(one("CMD")) or []
    entrypoint = lib.exec_form(one("ENTRYPOINT")) or []
    check(entrypoint[:1] == ["tiling_server"], "ENTRYPOINT %r is not tiling_server" % entrypoint)
    flags = parse_flags(cmd)
    grpc_port = int(flags.get("port", 50051))
    metrics_port = int(flags.get("metrics_port", 9464))
    check(exposed == {grpc_port, metrics_port},
          "EXPOSE %s != CMD ports {%d, %d}" % (sorted(exposed), grpc_port, metrics_port))
    if k8s:
        check((grpc_port, metrics_port) == (k8s["grpc_port"], k8s["metrics_port"]),
              "Dockerfile CMD ports differ from the Deployment's")
    healthcheck = one("HEALTHCHECK")
    health_cmd = lib.exec_form(healthcheck.split("CMD", 1)[1].strip()) if "CMD" in healthcheck \
        else None
    if check(health_cmd and health_cmd[:2] == ["tilingctl", "health"],
             "HEALTHCHECK must run `tilingctl health` in exec form, is %r" % healthcheck):
        target = parse_flags(health_cmd[2:]).get("server", "localhost:50051")
        check(target.rsplit(":", 1)[1] == str(grpc_port),
              "HEALTHCHECK probes %s, the server listens on %d" % (target, grpc_port))
    return {"cmd": cmd, "health_cmd": health_cmd}


# ---- compose, Prometheus, Grafana -----------------------------------------------------------------

def check_compose(k8s, service_name):
    compose_path = os.path.join(DEPLOY, "compose", "docker-compose.yml")
    compose_dir = os.path.dirname(compose_path)
    compose = lib.load_yaml(compose_path)
    services = compose.get("services", {})
    for name in ("tiling", "prometheus", "grafana"):
        check(name in services, "compose lacks service %r" % name)
    if problems:
        return None
    tiling = services["tiling"]
    flags = parse_flags(tiling.get("command", []))
    grpc_port = int(flags.get("port", 50051))
    metrics_port = int(flags.get("metrics_port", 9464))
    container_ports = {int(str(p).rsplit(":", 1)[-1].split("/")[0]) for p in tiling.get("ports", [])}
    check(container_ports == {grpc_port, metrics_port},
          "compose publishes %s, the command uses %d/%d" %
          (sorted(container_ports), grpc_port, metrics_port))
    test = tiling.get("healthcheck", {}).get("test", [])
    check(test[:3] == ["CMD", "tilingctl", "health"], "compose health check is %r" % test)
    target = parse_flags(test[3:]).get("server", "")
    check(target.endswith(":%d" % grpc_port), "compose health check probes %r" % target)
    prometheus = services["prometheus"]
    check((prometheus.get("depends_on") or {}).get("tiling", {}).get("condition") ==
          "service_healthy", "prometheus must depend on tiling being healthy")
    check((services["grafana"].get("depends_on") or {}).get("prometheus", {}).get("condition") ==
          "service_healthy", "grafana must depend on prometheus being healthy")

    mounts = {}
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source, dest = str(volume).split(":")[:2]
            if source.startswith("."):
                source = os.path.normpath(os.path.join(compose_dir, source))
                check(os.path.exists(source), "compose %s mounts missing %s" % (name, source))
            mounts[(name, dest)] = source
    config_flag = [a for a in prometheus.get("command", []) if a.startswith("--config.file=")]
    config_in_container = config_flag[0].split("=", 1)[1] if config_flag else \
        "/etc/prometheus/prometheus.yml"
    prometheus_config = mounts.get(("prometheus", config_in_container))
    check(prometheus_config == os.path.join(DEPLOY, "prometheus", "prometheus.yml"),
          "prometheus does not mount deploy/prometheus/prometheus.yml at %s" % config_in_container)

    # The scrape config must point at the compose service and its metrics port.
    config = lib.load_yaml(os.path.join(DEPLOY, "prometheus", "prometheus.yml"))
    targets = [t for job in config.get("scrape_configs", [])
               for static in job.get("static_configs", []) for t in static.get("targets", [])]
    check("tiling:%d" % metrics_port in targets,
          "prometheus.yml does not scrape tiling:%d (targets %s)" % (metrics_port, targets))

    # Grafana: provisioning mounted, the datasource uid is the one the dashboards use.
    provisioning = mounts.get(("grafana", "/etc/grafana/provisioning"))
    check(provisioning == os.path.join(DEPLOY, "grafana", "provisioning"),
          "grafana does not mount deploy/grafana/provisioning")
    datasources = lib.load_yaml(os.path.join(DEPLOY, "grafana", "provisioning", "datasources",
                                             "prometheus.yml"))["datasources"]
    uids = {d["uid"] for d in datasources if d["type"] == "prometheus"}
    for d in datasources:
        check(d["url"].startswith("http://prometheus:9090"),
              "datasource %s points at %s, not the compose prometheus" % (d["name"], d["url"]))
    providers = lib.load_yaml(os.path.join(DEPLOY, "grafana", "provisioning", "dashboards",
                                           "npu-tiling.yml"))["providers"]
    dashboard_dir = providers[0]["options"]["path"]
    check(mounts.get(("grafana", dashboard_dir)) == os.path.join(DEPLOY, "grafana", "dashboards"),
          "grafana does not mount deploy/grafana/dashboards at %s" % dashboard_dir)
    for path in glob.glob(os.path.join(DEPLOY, "grafana", "dashboards", "*.json")):
        with open(path) as f:
            dashboard = json.load(f)
        check(dashboard.get("uid"), "%s has no uid" % path)
        for panel in lib.dashboard_panels(dashboard):
            for item in [panel] + panel.get("targets", []):
                ds = item.get("datasource")
                if isinstance(ds, dict) and ds.get("type") == "prometheus":
                    check(ds.get("uid") in uids, "%s / %s uses datasource uid %r, provisioned: %s"
                          % (os.path.basename(path), panel.get("title"), ds.get("uid"), uids))
            for target in panel.get("targets", []):
                expr = target.get("expr", "")
                services_in_expr = re.findall(r'grpc_service="([^"]+)"', expr)
                check(all(s == service_name for s in services_in_expr),
                      "%s: %r filters on another gRPC service" % (panel.get("title"), expr))
    return {"flags": flags}


# ---- against the real binaries ---------------------------------------------------------------------

def health_check_grpcio(target, service):
    """grpc.health.v1.Health/Check through grpcio, without generated stubs."""
    import grpc
    request = service.encode()
    request = (b"\x0a" + bytes([len(request)]) + request) if request else b""
    with grpc.insecure_channel(target) as channel:
        check_rpc = channel.unary_unary("/grpc.health.v1.Health/Check",
                                        request_serializer=None, response_deserializer=None)
        try:
            response = check_rpc(request, timeout=10)
        except grpc.RpcError as error:
            return "rpc error %s" % error.code().name
    # HealthCheckResponse { ServingStatus status = 1; }  SERVING = 1
    return "SERVING" if response == b"\x08\x01" else "status bytes %r" % response


def check_binaries(server_bin, ctl_bin, k8s, docker, compose, service_name):
    help_result = subprocess.run([server_bin, "--help"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=60)
    help_text = help_result.stdout.decode("utf-8", "replace")
    used = set(k8s["flags"]) | set(parse_flags(docker["cmd"])) | set(compose["flags"])
    for flag in sorted(used):
        check(re.search(r"(^|[\s,\[])--?%s\b" % re.escape(flag), help_text, re.M),
              "tiling_server --help does not list --%s (used by the manifests)" % flag)
    # The image's EXPOSE and the docs assume these defaults (absl prints `default: VALUE;`).
    for flag, default in (("port", "50051"), ("metrics_port", "9464"), ("address", "0.0.0.0")):
        m = re.search(r"^\s*--?%s\b.*?default: \"?([^\";]*)\"?;" % re.escape(flag), help_text,
                      re.M | re.S)
        if check(m is not None, "tiling_server --help shows no default for --%s" % flag):
            check(m.group(1) == default,
                  "--%s defaults to %s, the deployment files assume %s" % (flag, m.group(1), default))

    # Start it as the Deployment does, on free ports, and probe it the way Kubernetes and
    # Docker will.
    args = []
    for name, value in k8s["flags"].items():
        if name in ("port", "metrics_port"):
            value = "0"
        elif name == "address":
            value = "127.0.0.1"
        args.append("--%s=%s" % (name, value))
    workdir = tempfile.mkdtemp(prefix="npu_deploy_manifests_")
    log_path = os.path.join(workdir, "server.log")
    proc = lib.spawn([server_bin] + args, log_path)
    ports = lib.wait_for(lambda: lib.parse_server_ports(lib.read_log(log_path)),
                         "tiling_server to print its ports", proc, log_path)
    target = "127.0.0.1:%d" % ports[0]
    try:
        import grpc  # noqa: F401  Debian: python3-grpcio
        for service in ("", service_name):
            status = health_check_grpcio(target, service)
            check(status == "SERVING", "health check for service %r: %s" % (service, status))
            print("health %-30r %s" % (service, status))
    except ImportError:
        problems.append("python3-grpcio is missing (%s): cannot check the readiness probe's "
                        "service name" % sys.executable)
    health_cmd = docker["health_cmd"]
    argv = [ctl_bin] + health_cmd[1:]
    argv = [a.replace("127.0.0.1:50051", target).replace("localhost:50051", target) for a in argv]
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    print("$ %s -> rc %d: %s" % (" ".join(argv), result.returncode,
                                  result.stdout.decode().strip()))
    check(result.returncode == 0, "the image's HEALTHCHECK command fails against a healthy server")
    code = lib.stop(proc)
    check(code == 0, "tiling_server exited with %s on SIGTERM (want 0)\n%s" %
          (code, lib.read_log(log_path)))
    if problems:
        print("server log kept in " + log_path)
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", help="tiling_server binary")
    parser.add_argument("--ctl", help="tilingctl binary")
    parser.add_argument("--require-binaries", action="store_true")
    args = parser.parse_args()

    service_name = grpc_service_name()
    k8s = check_k8s(service_name)
    docker = check_dockerfile(k8s)
    compose = check_compose(k8s, service_name)
    if k8s and compose:
        check((k8s["grpc_port"], k8s["metrics_port"]) ==
              (int(compose["flags"].get("port", 50051)),
               int(compose["flags"].get("metrics_port", 9464))),
              "compose and Kubernetes use different ports")

    built = args.server and args.ctl and os.path.isfile(args.server) and os.path.isfile(args.ctl)
    if built and not problems:
        check_binaries(args.server, args.ctl, k8s, docker, compose, service_name)
    elif not built and args.require_binaries:
        problems.append("binaries not built: %s %s" % (args.server, args.ctl))
    elif not built:
        print("NOTE: tiling_server / tilingctl not built; checked the files only")

    if problems:
        lib.fail("%d problem(s):\n  %s" % (len(problems), "\n  ".join(problems)))
    print("PASS")


if __name__ == "__main__":
    main()
