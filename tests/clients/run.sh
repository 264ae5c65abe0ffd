#!/usr/bin/env bash
# run.sh SERVER WORKDIR - the ctest entry of the client tests: makes sure the
# client libraries of package-lock.json are installed (npm ci), then runs
# run.mjs.  Exits 77 (ctest: skipped), saying why, when node or npm is
# missing, node is older than 18, or npm cannot reach its registry to
# install them; never passes without having run the clients.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
server=$1
work=$2

skip() {
  echo "SKIPPED: $*"
  exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed (scripts/install-deps test installs nodejs and npm)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || skip "node $(node --version) is older than 18, which the client libraries need"

cd "$here" || exit 1
mkdir -p "$work" || exit 1
# node_modules/.package-lock.json is what npm ci installed; it must match the
# lock file (npm ls fails on a missing or different package).
if [ ! -f node_modules/.package-lock.json ] || ! npm ls --all >/dev/null 2>&1; then
  command -v npm >/dev/null 2>&1 || skip "npm is not installed (scripts/install-deps test installs it)"
  echo "run.sh: installing the client libraries (npm ci)"
  if ! timeout 600 npm ci --no-audit --no-fund >"$work/npm.log" 2>&1; then
    cat "$work/npm.log"
    if ! ping=$(timeout 60 npm ping 2>&1); then
      why=$(printf '%s\n' "$ping" | grep -m 1 -E 'code|errno|reason' || printf '%s\n' "$ping" | tail -n 1)
      skip "npm cannot reach its registry ($(npm config get registry)) to install the client libraries: $why"
    fi
    echo "run.sh: npm ci failed although the registry answers" >&2
    exit 1
  fi
fi

exec node "$here/run.mjs" "$server" "$work"
