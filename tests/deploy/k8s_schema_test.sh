#!/bin/sh
# Validates deploy/k8s/*.yaml against the Kubernetes OpenAPI schemas, offline: the npm package
# kubernetes-models ships them compiled (field types, required fields, enums). kubectl cannot do
# this without an API server.
#
#   k8s_schema_test.sh K8S_DIR TOOLS_DIR
#
# Exit 77 (skipped) only when npm itself is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
manifests=$1
tools=$2

sh "$here/npm_install.sh" "$tools" kubernetes-models@5.1.0 js-yaml@4.1.0 || exit $?
# Node resolves imports relative to the script, so run a copy that sits beside node_modules.
cp "$here/k8s_schema_check.mjs" "$tools/k8s_schema_check.mjs"
node "$tools/k8s_schema_check.mjs" "$manifests"/*.yaml
