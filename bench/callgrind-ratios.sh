#!/bin/sh
# callgrind-ratios.sh - instruction-count ratios of dsml-bench's kernels.
#
#   bench/callgrind-ratios.sh BUILD/bench/dsml-bench render testdata/render.jsonl
#   bench/callgrind-ratios.sh BUILD/bench/dsml-bench detect testdata/parse.jsonl --chunk 4
#   bench/callgrind-ratios.sh BUILD/bench/dsml-bench scale
#   bench/callgrind-ratios.sh BUILD/bench/dsml-bench tokens
#   bench/callgrind-ratios.sh BUILD/bench/dsml-bench session
#
# Runs dsml-bench --callgrind under valgrind: every kernel runs once (after
# one warm-up run) between client requests that dump its instruction count.
# Prints each kernel's count and the ratios the timed mode prints: the first
# kernel against the baselines (render, detect), 8x and 64x against 1x
# (scale), instructions per token and per byte of the one-shot parse
# (tokens), or 8x / 1x and 64x / 8x
# (session).  Counts do not depend on the machine's load, so they are the
# figures to compare before and after a change.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 DSML-BENCH COMMAND [ARGS...]" >&2
    exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$@" --callgrind \
    >"$dir/stdout" 2>"$dir/stderr" || { cat "$dir/stderr" >&2; exit 2; }
for n in $(ls "$dir" | sed -n 's/^cg\.out\.\([0-9]*\)$/\1/p' | sort -n); do
    f="$dir/cg.out.$n"
    name=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
    ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$f")
    [ -n "$name" ] && printf '%s\t%s\n' "$name" "$ir"
done | awk -F'\t' '
{
    split($1, p, "|"); label = p[1]; kernel = p[2];
    if (!(label in seen)) { seen[label] = 1; order[++nl] = label; }
    n = ++count[label]; names[label, n] = kernel; ir[label, n] = $2;
}
END {
    for (l = 1; l <= nl; l++) {
        label = order[l];
        printf "%s\n", label;
        for (k = 1; k <= count[label]; k++)
            printf "  %-34s %14.0f Ir\n", names[label, k], ir[label, k];
        if (label ~ /^tokens/) {
            # kernels "N tokens, ...": instructions per token; one token per
            # feed (the first three) against the whole buffer (the next
            # three), and the responder (the last three) against one token
            # per feed
            for (k = 1; k <= count[label]; k++) {
                split(names[label, k], w, " ");
                printf "  %-34s %10.1f Ir per token\n", names[label, k], ir[label, k] / w[1];
            }
            for (k = 1; k <= 3; k++)
                printf "  %s / %s: %.3f\n", names[label, k], names[label, k + 3], ir[label, k] / ir[label, k + 3];
            for (k = 1; k <= 3 && count[label] >= 9; k++)
                printf "  %s / %s: %.3f\n", names[label, k + 6], names[label, k], ir[label, k + 6] / ir[label, k];
            continue;
        }
        if (label ~ /^parse/) {
            # kernels "N bytes, ...": instructions a byte
            for (k = 1; k <= count[label]; k++) {
                split(names[label, k], w, " ");
                printf "  %-34s %10.2f Ir per byte\n", names[label, k], ir[label, k] / w[1];
            }
            continue;
        }
        if (label ~ /^session/) {
            # kernels "N turns KIND" (KIND empty for the one-shot render),
            # each kind at 1x, 8x and 64x in that order
            delete kir; delete kn;
            for (k = 1; k <= count[label]; k++) {
                kind = names[label, k]; sub(/^[0-9]+ turns ?/, "", kind);
                kir[kind, ++kn[kind]] = ir[label, k];
            }
            split("|kept blocks|reused renderer", kinds, "|");
            for (j = 1; j <= 3; j++) {
                kind = kinds[j]; what = kind == "" ? "render" : kind;
                printf "  %s, 8x / 1x: %.3f\n", what, kir[kind, 2] / kir[kind, 1];
                printf "  %s, 64x / 8x: %.3f\n", what, kir[kind, 3] / kir[kind, 2];
            }
            for (f = 1; f <= 3; f++)
                printf "  render / cJSON_Parse+Delete, size %d: %.3f\n", f, kir["", f] / kir["cJSON_Parse+Delete", f];
            continue;
        }
        for (k = 2; k <= count[label]; k++) {
            if (label ~ /^scale/)
                printf "  %s / %s: %.3f\n", names[label, k], names[label, 1], ir[label, k] / ir[label, 1];
            else
                printf "  %s / %s: %.3f\n", names[label, 1], names[label, k], ir[label, 1] / ir[label, k];
        }
    }
}'
