#!/usr/bin/env python3
"""Checks the Dockerfile's runtime-stage apt packages against what the binaries really load.

For every binary copied into the image (tiling_server, tilingctl):
  * `ldd` lists the shared libraries it loads; `dpkg -S` maps each to its Debian package;
  * packages already in debian:bookworm-slim (bookworm_slim_packages.txt) are ignored.
Then:
  1. the packages owning a library the binary links directly (DT_NEEDED, `readelf -d`) must be
     exactly the runtime stage's apt-get install list: nothing missing, nothing extra;
  2. every other library ldd reports (pulled in indirectly) must come from a package in the
     dependency closure of that list, so apt installs it too.
Package dependencies are read from the local dpkg database (this machine is bookworm too).
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_testlib as lib  # noqa: E402


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def ldd_libraries(binary):
    """{soname: resolved path} of everything the dynamic loader maps for binary."""
    result = run(["ldd", binary])
    if result.returncode != 0:
        lib.fail("ldd %s failed: %s" % (binary, result.stderr))
    libraries = {}
    for line in result.stdout.splitlines():
        line = line.strip()
        if "not found" in line:
            lib.fail("%s: unresolved library: %s" % (binary, line))
        m = re.match(r"(\S+) => (\S+) \(0x", line)
        if m:
            libraries[m.group(1)] = m.group(2)
            continue
        m = re.match(r"(/\S+) \(0x", line)  # the loader itself
        if m:
            libraries[os.path.basename(m.group(1))] = m.group(1)
    return libraries


def needed_sonames(binary):
    result = run(["readelf", "-d", binary])
    if result.returncode != 0:
        lib.fail("readelf -d %s failed: %s" % (binary, result.stderr))
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", result.stdout)


_owner_cache = {}


def owning_package(path):
    """Debian package that ships path (tries the usrmerge aliases dpkg may know it by)."""
    if path in _owner_cache:
        return _owner_cache[path]
    candidates = [path, os.path.realpath(path)]
    for c in list(candidates):
        if c.startswith("/usr/"):
            candidates.append(c[len("/usr"):])
        else:
            candidates.append("/usr" + c)
    owner = None
    for candidate in candidates:
        result = run(["dpkg-query", "-S", candidate])
        if result.returncode == 0:
            # "libfoo1:amd64: /usr/lib/..." (diversions print extra lines; take the owner)
            for line in result.stdout.splitlines():
                if ": " in line and not line.startswith("diversion"):
                    owner = line.split(": ", 1)[0].split(",")[0].strip().split(":")[0]
                    break
        if owner:
            break
    _owner_cache[path] = owner
    return owner


def depends_closure(packages):
    """Installed packages reachable from `packages` through Depends / Pre-Depends."""
    seen = set()
    todo = list(packages)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        result = run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package])
        if result.returncode != 0:
            continue  # virtual or not installed here
        for clause in result.stdout.split(","):
            alternatives = [a.strip() for a in clause.split("|") if a.strip()]
            for alternative in alternatives:
                name = re.split(r"[\s(]", alternative, 1)[0].split(":")[0]
                if name:
                    todo.append(name)
    return seen


def runtime_apt_packages(dockerfile):
    instructions = lib.dockerfile_instructions(dockerfile)
    last_stage = max(stage for stage, _, _ in instructions)
    packages = []
    for stage, keyword, args in instructions:
        if stage == last_stage and keyword == "RUN":
            packages += lib.apt_install_packages(args)
    if not packages:
        lib.fail("%s: no apt-get install in the runtime (last) stage" % dockerfile)
    return packages


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dockerfile", default=os.path.join(lib.REPO_ROOT, "Dockerfile"))
    parser.add_argument("--base-packages", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "bookworm_slim_packages.txt"))
    parser.add_argument("--require-binaries", action="store_true",
                        help="fail (instead of skip) when a binary is missing")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()

    missing = [b for b in args.binaries if not os.path.isfile(b)]
    if missing:
        message = "not built: %s (build the service targets first)" % ", ".join(missing)
        lib.fail(message) if args.require_binaries else lib.skip(message)
    for tool in ("ldd", "readelf", "dpkg-query"):
        if run(["sh", "-c", "command -v " + tool]).returncode != 0:
            lib.skip("%s is not available" % tool)

    with open(args.base_packages) as f:
        base = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    listed = runtime_apt_packages(args.dockerfile)
    listed_set = set(listed)
    duplicates = sorted({p for p in listed if listed.count(p) > 1})

    direct = {}    # package -> sonames, linked directly by some binary
    indirect = {}  # package -> sonames, loaded through another library
    unowned = []
    for binary in args.binaries:
        libraries = ldd_libraries(binary)
        needed = set(needed_sonames(binary))
        for soname, path in sorted(libraries.items()):
            package = owning_package(path)
            if package is None:
                unowned.append("%s: %s => %s" % (os.path.basename(binary), soname, path))
                continue
            if package in base:
                continue
            bucket = direct if soname in needed else indirect
            bucket.setdefault(package, set()).add(soname)
        print("%s: %d libraries loaded, %d linked directly" %
              (binary, len(libraries), len(needed)))

    closure = depends_closure(listed_set)
    problems = []
    if duplicates:
        problems.append("listed twice: %s" % ", ".join(duplicates))
    if unowned:
        problems.append("libraries no Debian package ships (the image would lack them):\n    " +
                        "\n    ".join(unowned))
    for package in sorted(set(direct) - listed_set):
        problems.append("missing from the runtime stage: %s (provides %s)" %
                        (package, ", ".join(sorted(direct[package]))))
    for package in sorted(listed_set - set(direct)):
        reason = ("only loaded indirectly, apt pulls it anyway" if package in indirect else
                  "no binary loads a library from it")
        problems.append("not needed in the runtime stage: %s (%s)" % (package, reason))
    for package in sorted(set(indirect) - closure - set(direct)):
        problems.append("%s (provides %s) is loaded but not a dependency of the listed packages" %
                        (package, ", ".join(sorted(indirect[package]))))

    print("runtime stage installs: %s" % " ".join(sorted(listed_set)))
    print("linked directly:        %s" % " ".join(sorted(direct)))
    print("loaded indirectly:      %s" % " ".join(sorted(indirect)))
    if problems:
        lib.fail("Dockerfile runtime packages do not match the binaries:\n  " +
                 "\n  ".join(problems))
    print("PASS")


if __name__ == "__main__":
    main()
