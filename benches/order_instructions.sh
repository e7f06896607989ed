#!/usr/bin/env bash
# Instructions per order round (src/orders.rs: placed, accepted, partly
# filled, cancelled, the cancel answered), counted by callgrind: N and 2N
# rounds, the difference over N (the set-up, a login, drops out). The same
# binary and input give the same count on any load, unlike time.
#
# Usage: benches/order_instructions.sh [N]   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-500}
cargo build --profile bench --locked -q -p tickwire-benches --example order_instructions
bin=target/release/examples/order_instructions

count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-8s %-11s %12s %16s\n' venue impl "instr/round" "less copy-only"
for venue in deribit binance; do
    copy=0
    for impl in copy-only tickwire serde_json; do
        a=$(count "$impl" "$venue" "$n")
        b=$(count "$impl" "$venue" $((2 * n)))
        per=$(( (b - a) / n ))
        [ "$impl" = copy-only ] && copy=$per
        printf '%-8s %-11s %12d %16d\n' "$venue" "$impl" "$per" $((per - copy))
    done
done
