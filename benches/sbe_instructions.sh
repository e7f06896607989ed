#!/usr/bin/env bash
# Instructions per message of the `sbe` bench's replays (the recorded spot
# BTCUSDT day-slice through `binance::Adapter`, in JSON as recorded and in
# SBE; or, with `simulated`, the plain demo's simulated market in both),
# counted by callgrind: N and 2N replays of one set on one side at
# book depth 20, the difference over N replays and the set's messages (the
# set-up, reading and converting the recording, drops out). The same binary
# and input give the same count on any load, unlike time (the simulated
# market's wall-clock stamps and the set-up's hash maps aside, which move
# a count by a few instructions at most).
#
# Usage: benches/sbe_instructions.sh [N [recorded|simulated]]
#        (needs valgrind, and ../shared/samples for the recorded day)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2}
market=${2:-recorded}
case "$market" in
    recorded | simulated) ;;
    *) echo "sbe_instructions: the market is recorded or simulated, not $market"; exit 1 ;;
esac
command -v valgrind > /dev/null || { echo "sbe_instructions: needs valgrind (apt install valgrind)"; exit 1; }
[ "$market" = simulated ] || [ -d ../shared/samples/binance ] \
    || { echo "sbe_instructions: needs the recordings in ../shared/samples/binance"; exit 1; }
# The bench's own path, as cargo says it (the simulator's tests build an
# `sbe-*` of their own in the same directory).
bin=$(cargo bench --locked -q -p tickwire-benches --bench sbe --no-run --message-format=json \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -n "$bin" ] || { echo "the sbe bench did not build"; exit 1; }
cd benches

count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "the $market market, book depth 20, instructions a message"
printf '%-8s %10s %12s %12s %8s\n' set messages "JSON instr" "SBE instr" "JSON/SBE"
for set in whole depth trades best; do
    msgs=$("$bin" 1 0 "$set" json "$market" | sed -n 's/^\([0-9]*\) messages.*/\1/p')
    per=()
    for side in json sbe; do
        a=$(count "$n" 0 "$set" "$side" "$market")
        b=$(count $((2 * n)) 0 "$set" "$side" "$market")
        per+=($(( (b - a) / (n * msgs) )))
    done
    printf '%-8s %10d %12d %12d %7s\n' "$set" "$msgs" "${per[0]}" "${per[1]}" \
        "$(awk -v j="${per[0]}" -v s="${per[1]}" 'BEGIN { printf "%.1fx", j / s }')"
done
