#!/bin/sh
# callgrind-floor.sh - what a render spends reading its JSON before it
# writes a byte.
#
#   bench/callgrind-floor.sh BUILD/bench/dsml-bench [FILE.jsonl]
#
# Runs `dsml-bench render FILE --callgrind` (default testdata/render.jsonl)
# under callgrind with call chains kept apart, and prints the instruction
# counts of reading the case document itself (not the tool-call arguments
# read later):
#
#   reading the case           json_read_doc under render_entry:
#                              the one-pass reader (json_fast.c) that checks
#                              the text (UTF-8, \u0000, number grammar,
#                              depth) and builds the tree in an arena, or
#                              cJSON and the guided pass for what it hands on
#   freeing the case           json_free under render_entry
#
# beside the baseline kernel's cJSON_Parse and cJSON_Delete of the same
# texts, and the ratios of that floor and of the whole render to the
# baseline.  Counts do not depend on the machine's load.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 DSML-BENCH [FILE.jsonl]" >&2
    exit 2
fi
bench=$1
file=${2:-$(dirname "$0")/../testdata/render.jsonl}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --separate-callers=4 --callgrind-out-file="$dir/cg.out" \
    "$bench" render "$file" --callgrind >"$dir/stdout" 2>"$dir/stderr" ||
    { cat "$dir/stderr" >&2; exit 2; }
render=$(grep -l '|dsml_render_case$' "$dir"/cg.out.* | head -n 1)
base=$(grep -l '|cJSON_Parse+cJSON_Delete$' "$dir"/cg.out.* | head -n 1)
if [ -z "$render" ] || [ -z "$base" ]; then
    echo "$0: no render or baseline dump (a build without callgrind.h?)" >&2
    exit 2
fi

# The inclusive count of the first function whose call chain starts with $2.
ir() {
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
        awk -v chain="$2" '
            index($0, ":" chain) && !found { gsub(",", "", $1); print $1; found = 1 }
            END { if (!found) print 0 }'
}
total() { sed -n 's/^summary: \([0-9]*\).*/\1/p' "$1"; }

b_parse=$(ir "$base" "cJSON_ParseWithLengthOpts'cJSON_ParseWithLength'k_cjson")
b_delete=$(ir "$base" "cJSON_Delete'k_cjson")
r_total=$(total "$render")
r_read=$(ir "$render" "json_read_doc'render_entry")
r_free=$(ir "$render" "json_free'render_entry")

awk -v bp="$b_parse" -v bd="$b_delete" -v rt="$r_total" -v rr="$r_read" \
    -v rf="$r_free" -v file="$(basename "$file")" 'BEGIN {
    if (bp == 0 || rr == 0) {
        print "callgrind-floor.sh: a function was not found in the dumps" > "/dev/stderr";
        exit 2;
    }
    floor = rr + rf;
    printf "render %s, instructions\n", file;
    printf "  baseline cJSON_Parse             %14d Ir\n", bp;
    printf "  baseline cJSON_Delete            %14d Ir\n", bd;
    printf "  render: reading the case         %14d Ir\n", rr;
    printf "  render: freeing the case         %14d Ir\n", rf;
    printf "  render: everything else          %14d Ir\n", rt - floor;
    printf "  render, whole                    %14d Ir\n", rt;
    printf "  reading+freeing / cJSON_Parse+Delete  %6.3f\n", floor / (bp + bd);
    printf "  render / cJSON_Parse             %6.3f\n", rt / bp;
    printf "  render / cJSON_Parse+Delete      %6.3f\n", rt / (bp + bd);
}'
