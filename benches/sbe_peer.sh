#!/usr/bin/env bash
# The `sbe` bench's markets through tickwire's adapter and through
# nautilus_trader's own Binance SBE pipeline
# (scripts/sbe-judge/src/bin/tickwire-sbe-peer.rs: its decoder, its parse
# into its model's types, its order book), the two taking turns, ROUNDS
# times, on one core: the simulated market (the plain demo's, 40,000
# steps, two instruments), then the recorded day when ../shared/samples is
# there. Each market is written once by the bench (`sbe 1 0 dump FILE
# MARKET`, with every level tickwire's books show at its end, depth 500);
# the peer must end with the same levels before it times anything.
# nautilus-binance is LGPL-3.0: built apart, in target/sbe-judge, linked
# into nothing of tickwire's; with the bench's own profile (`peer`: fat LTO,
# one codegen unit), about ten minutes the first time.
#
# Usage: benches/sbe_peer.sh [RUNS [ROUNDS]]   (RUNS timed replays a set
#        and side at the least, default 7; ROUNDS of the two taking turns,
#        default 3)
#        benches/sbe_peer.sh count [N]         (instructions a message
#        instead, by callgrind: N and 2N untimed replays of each set on
#        each side, the difference over N replays and the set's messages,
#        so that the set-up drops out; default 2; tickwire at book depth
#        20; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
count=
if [ "${1:-}" = count ]; then
    count=${2:-2}
    command -v valgrind > /dev/null || { echo "sbe_peer: count needs valgrind"; exit 1; }
else
    runs=${1:-7}
    rounds=${2:-3}
fi
bin=$(cargo bench --locked -q -p tickwire-benches --bench sbe --no-run --message-format=json \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -n "$bin" ] || { echo "sbe_peer: the sbe bench did not build"; exit 1; }
cargo build --locked --profile peer -q --manifest-path scripts/sbe-judge/Cargo.toml \
    --target-dir target/sbe-judge --bin tickwire-sbe-peer
peer=$PWD/target/sbe-judge/peer/tickwire-sbe-peer
# The bench reads ../shared/samples from its own folder, as cargo runs it.
cd benches
# On one core (the last), as the other benches are run, when there are two.
pin=()
if command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ]; then
    pin=(taskset -c "$(( $(nproc) - 1 ))")
fi
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for market in simulated recorded; do
    file=$PWD/../target/sbe-peer-$market.bin
    rm -f "$file"
    "$bin" 1 0 dump "$file" "$market" | tail -n 1
    [ -f "$file" ] || continue
    if [ -n "$count" ]; then
        echo "the $market market, instructions a message (tickwire at book depth 20)"
        printf '%-8s %10s %14s %16s %8s\n' set messages "tickwire SBE" "nautilus_trader" ratio
        for set in whole depth trades best; do
            msgs=$("$peer" "$file" count 1 "$set" | sed -n 's/^\([0-9]*\) messages.*/\1/p')
            a=$(instructions "$bin" "$count" 0 "$set" sbe "$market")
            b=$(instructions "$bin" $((2 * count)) 0 "$set" sbe "$market")
            c=$(instructions "$peer" "$file" count "$count" "$set")
            d=$(instructions "$peer" "$file" count $((2 * count)) "$set")
            t=$(( (b - a) / (count * msgs) ))
            n=$(( (d - c) / (count * msgs) ))
            printf '%-8s %10d %14d %16d %7s\n' "$set" "$msgs" "$t" "$n" \
                "$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.1fx", n / t }')"
        done
        continue
    fi
    for round in $(seq "$rounds"); do
        echo "the $market market, round $round"
        "${pin[@]}" "$bin" "$runs" 0 all "$market" | sed -n 's/^book depth /  tickwire, book depth /p'
        "${pin[@]}" "$peer" "$file" "$runs" | sed 's/^/  /'
    done
done
