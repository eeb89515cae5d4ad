#!/bin/sh
# Lints the Dockerfile with dockerfilelint (npm; hadolint is not installable here).
#
#   dockerfilelint_test.sh DOCKERFILE TOOLS_DIR
#
# The linter is installed once into TOOLS_DIR (the build tree, not the system, not $HOME) with a
# pinned version, under a lock so that parallel ctest runs do not race. A deliberately bad
# Dockerfile must fail the linter first, so a broken install cannot pass vacuously.
# Exit 77 (skipped) only when npm itself is missing.
set -eu

dockerfile=$1
tools=$2
version=1.8.0

if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: npm not found; install Node.js/npm to lint the Dockerfile (dockerfilelint@$version)"
  exit 77
fi

mkdir -p "$tools"
lint="$tools/node_modules/.bin/dockerfilelint"
(
  flock 9
  if [ ! -x "$lint" ] || ! grep -q "\"version\": \"$version\"" \
      "$tools/node_modules/dockerfilelint/package.json" 2>/dev/null; then
    echo "installing dockerfilelint@$version into $tools"
    npm install --prefix "$tools" --cache "$tools/npm-cache" --no-audit --no-fund \
      --no-save --loglevel=error "dockerfilelint@$version"
  fi
) 9>"$tools/.install.lock"

bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
printf 'FROM debian\nMAINTAINER someone\nRUN apt-get install g++\n' > "$bad/Dockerfile"
if "$lint" "$bad/Dockerfile" >/dev/null 2>&1; then
  echo "FAIL: dockerfilelint accepted a bad Dockerfile; the linter install is broken" >&2
  exit 1
fi

"$lint" "$dockerfile"
