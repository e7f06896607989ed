#!/usr/bin/env bash
# A ring reader in another process, across a feed restart, as an operator
# runs them: `tickwire-feed sim` (its own process), `tickwire-feed run
# --config examples/sim.toml` writing the shared-memory ring, and the
# shm_reader example reading it. The feed is stopped and started again
# while the reader reads: the reader must say it reattached and go on
# reading the new ring's events. Every wait is for a condition, with a
# deadline. Needs the release binary and examples built; run from the
# repository's root.
set -euo pipefail

bin=target/release/tickwire-feed
reader_bin=target/release/examples/shm_reader
out=target/ci-ring
rm -rf "$out"
mkdir -p "$out"
ring="$out/ring"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# until_true DEADLINE_S WHAT COMMAND...: runs COMMAND until it succeeds.
until_true() {
    local deadline=$(( $(date +%s) + $1 )) what=$2
    shift 2
    until "$@"; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "ring-reader: no $what within the deadline"
            tail -n 20 "$out"/*.log
            exit 1
        fi
        sleep 0.2
    done
}
lines_at_least() { [ "$(grep -c "$2" "$1" 2>/dev/null || true)" -ge "$3" ]; }
# An event line of the reader names its venue (the configuration's
# `name`, `sim` in examples/sim.toml) and symbol from the ring's table:
# `sim BTCUSDT trade 60001.07 x 7.96372 sell #5019874`.
event='^sim [A-Z]'

# A port the system picks (no fixed port to collide with on a shared
# host), read back from the simulator's line.
"$bin" sim --listen 127.0.0.1:0 --rate 2000 --ca-out "$out/sim-ca.pem" > "$out/sim.log" 2>&1 &
pids+=($!)
until_true 60 "simulator listening" grep -q 'wss://localhost:[0-9]' "$out/sim.log"
port=$(grep -o 'wss://localhost:[0-9]*' "$out/sim.log" | head -n 1 | cut -d: -f3)

start_feed() {
    TICKWIRE_FEED_SINKS_SHM="$ring" \
    TICKWIRE_FEED_TLS_CA_FILE="$out/sim-ca.pem" \
    TICKWIRE_FEED_VENUE_SIM_ENDPOINT="wss://localhost:$port" \
    TICKWIRE_FEED_VENUE_SIM_REST="https://localhost:$port" \
        "$bin" run --config examples/sim.toml > "$out/feed-$1.log" 2>&1 &
    feed=$!
    pids+=("$feed")
}

start_feed 1
until_true 60 "ring" test -s "$ring"
"$reader_bin" "$ring" --seconds 600 > "$out/reader.log" 2>&1 &
pids+=($!)
until_true 60 "events read from the first feed" lines_at_least "$out/reader.log" "$event" 200

kill -TERM "$feed"
wait "$feed" || { echo "the first feed did not stop cleanly"; tail "$out/feed-1.log"; exit 1; }
start_feed 2
until_true 60 "reattach" grep -q '^reattached: ' "$out/reader.log"
before=$(grep -c "$event" "$out/reader.log")
until_true 60 "events read from the restarted feed" \
    lines_at_least "$out/reader.log" "$event" $(( before + 200 ))
grep -m 1 '^reattached: ' "$out/reader.log"
echo "ring-reader: $(grep -c "$event" "$out/reader.log") events read across a feed restart"
