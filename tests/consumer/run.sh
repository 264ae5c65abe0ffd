#!/usr/bin/env bash
# run.sh BUILD_DIR WORK_DIR - installs BUILD_DIR into a temporary prefix,
# moves the prefix (the package files must not depend on where they were
# installed), then builds consumer.c against it three ways and runs each:
#   1. find_package(dsml), target dsml::dsml (shared)
#   2. find_package(dsml), target dsml::dsml_static
#   3. pkg-config --cflags --libs dsml (shared), and --static with libdsml.a
# and runs the installed dsml-render, when there is one, on the example.
# The programs of examples/ (render, stream, quickstart) are built the same
# way, with find_package(dsml) and with pkg-config, and run on the sample
# inputs of examples/.
# Environment: CC, DSML_CONSUMER_FLAGS (compile and link flags, e.g. the
# sanitizers), CMAKE_COMMAND, DSML_CMAKE_GENERATOR.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
cmake=${CMAKE_COMMAND:-cmake}
cc=${CC:-cc}
flags=${DSML_CONSUMER_FLAGS:-}

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "== install to $work/staged, move to $work/prefix"
"$cmake" --install "$build" --prefix "$work/staged" >"$work/install.log"
mv "$work/staged" "$work/prefix"
prefix=$work/prefix
if grep -rqs "$work/staged" "$prefix"; then
  echo "installed files name the install prefix:" >&2
  grep -rls "$work/staged" "$prefix" >&2
  exit 1
fi
pc=$(find "$prefix" -name dsml.pc | head -n1)
[ -n "$pc" ] || { echo "dsml.pc not installed" >&2; exit 1; }
libdir=$(dirname "$(dirname "$pc")")

check() { # check NAME BINARY
  local out
  out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$2")
  printf '%s\n' "$out"
  case $out in
    *'<｜User｜>Hello<｜Assistant｜>'*) echo "ok: $1" ;;
    *) echo "FAIL: $1 did not print the prompt" >&2; exit 1 ;;
  esac
}

echo "== find_package(dsml)"
gen=()
[ -n "${DSML_CMAKE_GENERATOR:-}" ] && gen=(-G "$DSML_CMAKE_GENERATOR")
"$cmake" -S "$here" -B "$work/cmake-build" "${gen[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_BUILD_TYPE=Debug >"$work/cmake-configure.log" \
  || { cat "$work/cmake-configure.log"; exit 1; }
"$cmake" --build "$work/cmake-build"
check "find_package, dsml::dsml" "$work/cmake-build/consumer_shared"
if [ -x "$work/cmake-build/consumer_static" ]; then
  if readelf -d "$work/cmake-build/consumer_static" | grep -q 'libdsml\.so'; then
    echo "consumer_static links libdsml.so" >&2; exit 1
  fi
  check "find_package, dsml::dsml_static" "$work/cmake-build/consumer_static"
fi

examples=$here/../../examples
check_examples() { # check_examples HOW DIR: runs DIR/render, stream, quickstart
  local out
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out=$("$2/render" "$examples/request.json")
  case $out in
    *'<｜User｜>Is the main branch open on Sunday afternoons?<｜Assistant｜><think>') ;;
    *) echo "FAIL: render ($1) printed: $out" >&2; exit 1 ;;
  esac
  out=$("$2/stream" --chunk 3 "$examples/request.json" "$examples/reply.txt" 2>/dev/null)
  case $out in
    'data: {"id":"chatcmpl-'*'"delta":{"role":"assistant","reasoning_content":"The"}'*'"function":{"name":"opening_hours","arguments":"{\"branch\": \"main\", \"weekday\": \"sunday\"}"}'*'"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}'*'data: [DONE]') ;;
    *) echo "FAIL: stream ($1) printed: $out" >&2; exit 1 ;;
  esac
  out=$("$2/quickstart")
  case $out in
    *'<｜User｜>Hi!<｜Assistant｜><think>'*'content: help?') ;;
    *) echo "FAIL: quickstart ($1) printed: $out" >&2; exit 1 ;;
  esac
  echo "ok: examples ($1)"
}
check_examples "find_package" "$work/cmake-build"

echo "== pkg-config"
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --print-errors --exists dsml
# shellcheck disable=SC2046,SC2086
"$cc" $flags -o "$work/consumer_pc" "$here/consumer.c" $(pkg-config --cflags --libs dsml)
check "pkg-config" "$work/consumer_pc"
if [ -f "$libdir/libdsml.a" ]; then
  static_libs=$(pkg-config --static --libs dsml | sed "s|-ldsml\b|$libdir/libdsml.a|")
  # shellcheck disable=SC2046,SC2086
  "$cc" $flags -o "$work/consumer_pc_static" "$here/consumer.c" $(pkg-config --cflags dsml) $static_libs
  check "pkg-config --static" "$work/consumer_pc_static"
fi
mkdir -p "$work/pc-examples"
for name in render stream quickstart; do
  # shellcheck disable=SC2046,SC2086
  "$cc" $flags -o "$work/pc-examples/$name" "$examples/$name.c" $(pkg-config --cflags --libs dsml)
done
check_examples "pkg-config" "$work/pc-examples"
if [ -x "$prefix/bin/dsml-render" ]; then
  echo "== installed dsml-render (finds libdsml.so through its RUNPATH)"
  "$prefix/bin/dsml-render" "$here/../../examples/conversation.json" >"$work/render.out"
  grep -q 'lookup_order' "$work/render.out" || { echo "FAIL: dsml-render" >&2; exit 1; }
  echo "ok: dsml-render"
fi
echo "consumer: all builds ran"
