#!/usr/bin/env bash
# Instructions per frame_decode iteration, counted by callgrind. Unlike wall
# time on a shared machine, the count repeats exactly for the same binary and
# input. Each <impl>/<case> runs N and 2N iterations; the difference divided by
# N removes set-up costs. "decode" subtracts copy-only, the copy of the batch
# into the input buffer that every implementation's iteration starts with.
#
# Usage: benches/instructions.sh [N]   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
cargo build --profile bench --locked -q -p tickwire-benches --example instructions
bin=target/release/examples/instructions

count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

impls="copy-only tickwire nexus-web tungstenite sockudo-ws yawc websocket-sans-io"
declare -A messages=([text_128]=64 [binary_16k]=4 [fragmented_4x100]=16 [masked_text_128]=64)
printf '%-18s %-18s %14s %14s %16s\n' case impl "instr/iter" "instr/message" "decode/message"
for case in text_128 binary_16k fragmented_4x100 masked_text_128; do
    copy=0
    for impl in $impls; do
        if ! "$bin" "$impl" "$case" 1 2>/dev/null; then
            continue
        fi
        a=$(count "$impl" "$case" "$n")
        b=$(count "$impl" "$case" $((2 * n)))
        per_iter=$(( (b - a) / n ))
        [ "$impl" = copy-only ] && copy=$per_iter
        m=${messages[$case]}
        printf '%-18s %-18s %14d %14d %16d\n' "$case" "$impl" "$per_iter" $((per_iter / m)) $(((per_iter - copy) / m))
    done
done
