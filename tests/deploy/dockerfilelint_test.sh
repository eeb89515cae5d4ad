#!/bin/sh
# Lints the Dockerfile with dockerfilelint (npm; hadolint is not installable here).
#
#   dockerfilelint_test.sh DOCKERFILE TOOLS_DIR
#
# The linter is installed, pinned, into TOOLS_DIR (see npm_install.sh). A deliberately bad
# Dockerfile must fail the linter first, so a broken install cannot pass vacuously.
# Exit 77 (skipped) only when npm itself is missing.
set -eu
here=$(dirname "$0")
dockerfile=$1
tools=$2

sh "$here/npm_install.sh" "$tools" dockerfilelint@1.8.0 || exit $?
lint="$tools/node_modules/.bin/dockerfilelint"

bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
printf 'FROM debian\nMAINTAINER someone\nRUN apt-get install g++\n' > "$bad/Dockerfile"
if "$lint" "$bad/Dockerfile" >/dev/null 2>&1; then
  echo "FAIL: dockerfilelint accepted a bad Dockerfile; the linter install is broken" >&2
  exit 1
fi

"$lint" "$dockerfile"
