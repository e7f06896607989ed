#!/usr/bin/env bash
# Judged by clients we did not write: `tickwire-feed sim --venues all` in
# the background, then scripts/independent-clients.py, in which ccxt
# (ccxt.pro, the version scripts/py-venv.sh pins) keeps order books on
# every simulated venue and pings, over TLS on loopback. Fails on any
# client error, a bad book, or a client the simulator had to drop. Every
# wait is for a condition, with a deadline. Needs the release binary;
# run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${TICKWIRE_FEED_BIN:-target/release/tickwire-feed}
out=target/ci-independent-clients
rm -rf "$out"
mkdir -p "$out"
python=${TICKWIRE_PYTHON:-$(scripts/py-venv.sh)}
"$python" -c 'import ccxt.pro' \
    || { echo "independent-clients: no ccxt in $python (scripts/py-venv.sh installs it)"; exit 1; }

sim=
cleanup() { if [ -n "$sim" ]; then kill "$sim" 2>/dev/null || true; fi; }
trap cleanup EXIT

# until_true DEADLINE_S WHAT COMMAND...: runs COMMAND until it succeeds.
until_true() {
    local deadline=$(( $(date +%s) + $1 )) what=$2
    shift 2
    until "$@"; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "independent-clients: no $what within the deadline"
            tail -n 20 "$out/sim.log"
            exit 1
        fi
        sleep 0.2
    done
}

# Ports the system picks (consecutive ones could collide on a shared
# host), read back from the simulator's lines; 1000 market steps a second
# in all, which a Python client keeps up with on a busy machine.
"$bin" sim --venues all --listen 127.0.0.1:0 --rate 1000 --ca-out "$out/sim-ca.pem" \
    > "$out/sim.log" 2>&1 &
sim=$!
# The `trust` line comes once every venue listens.
until_true 60 "simulator listening" grep -q '^trust ' "$out/sim.log"
venues=()
while read -r name port; do
    # ccxt has no client for Binance's SBE streams: not judged here.
    [ "$name" = binance-spot-sbe ] && continue
    venues+=(--venue "$name=$port")
done < <(sed -nE 's|^([a-z-]+): .* wss://localhost:([0-9]+) .*|\1 \2|p' "$out/sim.log")
# Two words (`--venue name=port`) a venue.
[ "${#venues[@]}" -eq 20 ] || { cat "$out/sim.log"; echo "independent-clients: expected the 10 JSON venues"; exit 1; }

status=0
# 120 s a venue at most (they run at once); a hung client is a failure.
# `timeout`: a client whose close never completes must not hang CI.
timeout 600 "$python" scripts/independent-clients.py --ca "$out/sim-ca.pem" "${venues[@]}" \
    --updates 200 --deadline 120 2>&1 | tee "$out/clients.log" || status=$?

# The simulator's own account: stopped cleanly, no client dropped for
# not keeping up.
kill -TERM "$sim" 2>/dev/null \
    || { tail -n 40 "$out/sim.log"; echo "independent-clients: the simulator was gone already"; exit 1; }
# Exited: gone, or a zombie until `wait` (which would not time out).
exited() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
until_true 60 "simulator stop" exited "$sim"
stopped=0
wait "$sim" || stopped=$?
sim=
grep ' simulator stopped: ' "$out/sim.log" || true
if [ "$stopped" -ne 0 ]; then
    echo "independent-clients: the simulator exited with $stopped"; exit 1
fi
# Every venue's account, each with no client dropped for not keeping up
# and none closed by the venue (too fast, over a budget).
accounts=$(grep -c ' simulator stopped: ' "$out/sim.log" || true)
# Every simulator (binance-spot-sbe's too, unvisited here) gives one.
[ "$accounts" -eq 11 ] \
    || { echo "independent-clients: $accounts of 11 simulators gave their account"; exit 1; }
if grep ' simulator stopped: ' "$out/sim.log" | grep -v ', 0 dropped, 0 closed by the venue)' | grep -q .; then
    echo "independent-clients: the simulator dropped or closed a client"; exit 1
fi
exit "$status"
