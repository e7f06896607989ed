#!/usr/bin/env bash
# Judged by a client we did not write: nautilus_trader's Binance adapter
# (`nautilus-binance`, its own WebSocket client and SBE decoders, pinned in
# scripts/sbe-judge/Cargo.lock) reads the simulated binance-spot-sbe as it
# reads stream-sbe.binance.com. ccxt has no SBE client; this one trusts only
# the public CAs, so the simulator serves plain ws:// here (`--plain`).
# The judge must be refused without a key, then decode every frame of
# `@trade`, `@bestBidAsk`, `@depth` and `@depth20` with values that hold
# together (scripts/sbe-judge/src/main.rs says what it checks).
#
# `scripts/sbe-judge.sh build` only builds the judge (a few minutes: the
# nautilus crates; .ci/run starts it early, in the background); without an
# argument it builds if needed and judges. Needs the release tickwire-feed.
set -euo pipefail
cd "$(dirname "$0")/.."

target=target/sbe-judge
build() {
    # The dev profile: it builds in about half the release build's time,
    # and the judge reads a thousand steps a second with room to spare.
    cargo build --locked --manifest-path scripts/sbe-judge/Cargo.toml --target-dir "$target"
}
if [ "${1:-}" = build ]; then
    build
    exit 0
fi
build
bin=${TICKWIRE_FEED_BIN:-target/release/tickwire-feed}
out=target/ci-sbe-judge
rm -rf "$out"
mkdir -p "$out"
sim=
cleanup() { if [ -n "$sim" ]; then kill "$sim" 2>/dev/null || true; fi; }
trap cleanup EXIT
"$bin" sim --venues binance-spot-sbe --plain --listen 127.0.0.1:0 --rate 1000 \
    > "$out/sim.log" 2>&1 &
sim=$!
# The simulator's line names its port once it listens (a deadline, not a
# sleep standing in for it).
deadline=$(( $(date +%s) + 60 ))
port=
until [ -n "$port" ]; do
    kill -0 "$sim" 2>/dev/null || { cat "$out/sim.log"; echo "sbe-judge: the simulator exited"; exit 1; }
    port=$(sed -nE 's|^binance-spot-sbe: .* ws://localhost:([0-9]+) .*|\1|p' "$out/sim.log")
    if [ -z "$port" ] && [ "$(date +%s)" -ge "$deadline" ]; then
        cat "$out/sim.log"; echo "sbe-judge: the simulator did not listen"; exit 1
    fi
    [ -n "$port" ] || sleep 0.2
done
# 500 of each template, 120 s at most (a busy machine included).
timeout 180 "$target/debug/tickwire-sbe-judge" "ws://127.0.0.1:$port/ws" BTCUSDT 500 120 \
    | tee "$out/judge.log"
