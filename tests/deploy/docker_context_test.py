#!/usr/bin/env python3
"""Checks that the Docker build context (.dockerignore applied) is enough to build the image.

Without a Docker daemon, the closest honest check: copy the tree as `docker build` would send it
(.dockerignore applied, Docker's pattern rules: paths relative to the context root, `*` within one
path segment, `**` across segments, `!` re-includes, last match wins), then run the build stage's
CMake configure on the copy with the same options and check that the generated build produces
the two files the runtime stage copies out of it (bin/tiling_server, bin/tilingctl). When the
build stage runs scripts/build_release.sh instead, its --configure-only mode does that configure.
Also checks the context leaves out .git and build trees.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_testlib as lib  # noqa: E402


def pattern_regex(pattern):
    pattern = pattern.strip("/")
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return re.compile(out + r"\Z")


def load_dockerignore(path):
    rules = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            rules.append((negate, pattern_regex(os.path.normpath(line.lstrip("!")))))
    return rules


def excluded(relpath, rules):
    """Docker semantics: a pattern matching a parent directory excludes everything below it."""
    parts = relpath.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    result = False
    for negate, regex in rules:
        if any(regex.match(p) for p in prefixes):
            result = not negate
    return result


def copy_context(root, rules, dest):
    copied = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        for name in filenames:
            rel = os.path.join(rel_dir, name) if rel_dir else name
            if excluded(rel, rules):
                continue
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(dirpath, name), target)
            copied.append(rel)
        # Descend only where something could be re-included or is not excluded.
        if not any(negate for negate, _ in rules):
            dirnames[:] = [d for d in dirnames
                           if not excluded(os.path.join(rel_dir, d) if rel_dir else d, rules)]
    return copied


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--generator", default="Ninja")
    args = parser.parse_args()

    root = lib.REPO_ROOT
    rules = load_dockerignore(os.path.join(root, ".dockerignore"))
    problems = []
    for path in (".git", "build", "build-dep/CMakeCache.txt", "build_asan/x"):
        if not excluded(path, rules):
            problems.append(".dockerignore sends %s to the Docker daemon" % path)

    instructions = lib.dockerfile_instructions(os.path.join(root, "Dockerfile"))
    build_runs = " ".join(a for stage, kw, a in instructions if stage == 0 and kw == "RUN")
    # The build stage either configures CMake itself or runs the release script, whose
    # --configure-only mode configures the same way without building.
    configure = re.search(r"cmake\s+-S\s+(\S+)\s+-B\s+(\S+)(.*?)(?:&&|$)", build_runs)
    release = re.search(r"scripts/build_release\.sh((?:\s+--?[\w-]+)*)\s+(/\S+)", build_runs)
    if configure:
        build_dir = configure.group(2)
        options = [o for o in configure.group(3).split() if o.startswith("-D")]
    elif release:
        build_dir = release.group(2)
        script_options = release.group(1).split()
    else:
        lib.fail("the Dockerfile's build stage neither runs `cmake -S SRC -B BUILD ...` nor "
                 "`scripts/build_release.sh BUILD`")
    copies = [a for stage, kw, a in instructions if kw == "COPY" and a.startswith("--from=")]
    wanted = []
    for copy in copies:
        for source in copy.split()[1:-1]:
            if source.startswith(build_dir + "/"):
                wanted.append(source[len(build_dir) + 1:])
    if not wanted:
        problems.append("the runtime stage copies nothing out of the build tree %s" % build_dir)

    workdir = tempfile.mkdtemp(prefix="npu_docker_context_")
    try:
        context = os.path.join(workdir, "src")
        files = copy_context(root, rules, context)
        print("build context: %d files" % len(files))
        build = os.path.join(workdir, "build")
        if configure:
            argv = [args.cmake, "-S", context, "-B", build, "-G", args.generator] + options
        else:
            argv = ["sh", os.path.join(context, "scripts", "build_release.sh")] + \
                script_options + ["--configure-only", build]
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = result.stdout.decode("utf-8", "replace")
        if result.returncode != 0:
            lib.fail("configuring the build context failed (%s):\n%s" % (" ".join(argv), output))
        print("configure OK: %s" % " ".join(argv[1:] if configure is None else options))
        generated = ""
        for name in ("build.ninja", "Makefile"):
            if os.path.exists(os.path.join(build, name)):
                with open(os.path.join(build, name)) as f:
                    generated = f.read()
        for output_path in wanted:
            if not re.search(r"^build %s[:\s]" % re.escape(output_path), generated, re.M) and \
                    "/" + output_path not in generated:
                problems.append("the image build would not produce %s (COPY --from=build needs it)"
                                % output_path)
            else:
                print("produces %s" % output_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if problems:
        lib.fail("\n  ".join(problems))
    print("PASS")


if __name__ == "__main__":
    main()
