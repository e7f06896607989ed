#!/usr/bin/env bash
# Runs the Autobahn WebSocket conformance suite against tickwire-net, both
# roles, with kosoku (a Rust port of the Autobahn case files, from PyPI):
#   client role: kosoku's fuzzing server  <- examples/autobahn_client.rs
#   server role: kosoku's fuzzing client  -> examples/autobahn_server.rs
# and fails unless every case outside 12.* and 13.* (permessage-deflate,
# which tickwire does not offer) is OK or INFORMATIONAL, close behaviour
# included: NON-STRICT and FAILED both fail. Prints the counts by behaviour.
#
# Usage: scripts/autobahn.sh            (reports go to target/autobahn/)
set -euo pipefail
cd "$(dirname "$0")/.."

out=target/autobahn
client_port=${AUTOBAHN_CLIENT_PORT:-9001}
server_port=${AUTOBAHN_SERVER_PORT:-9002}

python=$(scripts/py-venv.sh)
kosoku="$(dirname "$python")/kosoku"
cargo build --release --locked -p tickwire-net --example autobahn_client --example autobahn_server

rm -rf "$out"
mkdir -p "$out/client" "$out/server"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_for_port() {
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}

echo "== client role: kosoku fuzzingserver on 127.0.0.1:$client_port"
"$kosoku" -m fuzzingserver "127.0.0.1:$client_port" -o "$out/client" > "$out/fuzzingserver.log" 2>&1 &
pids+=($!)
wait_for_port "$client_port"
target/release/examples/autobahn_client "ws://127.0.0.1:$client_port" tickwire > "$out/client.log"
tail -n 1 "$out/client.log"

echo "== server role: kosoku fuzzingclient against 127.0.0.1:$server_port"
target/release/examples/autobahn_server "127.0.0.1:$server_port" > "$out/server.log" 2>&1 &
pids+=($!)
wait_for_port "$server_port"
# kosoku exits non-zero when any case is not OK (the 216 compression cases
# are UNIMPLEMENTED); the verdict is the check below.
"$kosoku" -m fuzzingclient -o "$out/server" "ws://127.0.0.1:$server_port" > "$out/fuzzingclient.log" 2>&1 || true

python3 - "$out/client/index.json" "$out/server/index.json" <<'PY'
import collections, json, sys

failed = False
for role, path in zip(("client", "server"), sys.argv[1:]):
    with open(path) as f:
        report = json.load(f)
    for agent, cases in report.items():
        counts = collections.Counter()
        bad = []
        for case, r in sorted(cases.items()):
            behavior, close = r["behavior"], r.get("behaviorClose")
            counts[behavior] += 1
            if case.split(".")[0] in ("12", "13"):
                continue  # permessage-deflate: not offered
            if behavior not in ("OK", "INFORMATIONAL") or close not in ("OK", "INFORMATIONAL"):
                bad.append(f"{case}: {behavior} / close {close}")
        summary = ", ".join(f"{n} {b}" for b, n in sorted(counts.items()))
        print(f"{role} role ({agent}): {len(cases)} cases: {summary}")
        for line in bad:
            print(f"  NOT OK {line}")
        failed |= bool(bad)
sys.exit(1 if failed else 0)
PY
