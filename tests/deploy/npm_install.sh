#!/bin/sh
# Installs pinned npm packages into a tools folder of the build tree, once.
#
#   npm_install.sh DIR PACKAGE@VERSION...
#
# Nothing goes to the system or $HOME: the npm cache lives in DIR too. A lock keeps parallel
# ctest runs from installing at the same time; a stamp file lists what was installed, so a changed
# pin reinstalls. Exits 77 (ctest: skipped) when npm is missing.
set -eu
dir=$1
shift
if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: npm not found; install Node.js and npm to run this check ($*)"
  exit 77
fi
mkdir -p "$dir"
(
  flock 9
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$*" ]; then
    echo "installing $* into $dir"
    npm install --prefix "$dir" --cache "$dir/npm-cache" --no-audit --no-fund --no-save \
      --loglevel=error "$@"
    echo "$*" > "$dir/.installed"
  fi
) 9>"$dir/.install.lock"
