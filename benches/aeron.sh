#!/usr/bin/env bash
# The feed's events leaving the process, three ways, in one run: the
# shared-memory ring, Aeron IPC (one media driver on the host), and Aeron UDP
# unicast between two network namespaces joined by a veth pair (the feed and
# the simulator in one, the subscriber and its media driver in the other).
# Each case: the simulator at RATE steps a second (binance-spot, 2 books),
# the feed (`run`) with that one sink, and `tickwire-feed subscribe --stats
# --busy` reading it; the subscriber's `delivered` stage is the feed's read
# of the message (read_end, TSC) to the subscriber's receive of the event,
# on the one TSC all namespaces share. Its last line gives events, seconds,
# losses and p50/p99/p99.9/max.
#
#   sudo benches/aeron.sh            # RATE=20000 SECS=20 by default
#
# Needs root (network namespaces) and the aeron feature's build tools
# (scripts/aeron-deps.sh installs them). Pinning: the simulator and the feed
# on core 0, the subscriber (and its media driver) on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${RATE:-20000}
secs=${SECS:-20}
# The cases to run, and how the subscriber polls (--busy spins; without
# it, it yields, then naps 100 us once idle for 1000 polls).
cases=${CASES:-shm ipc udp}
poll=${POLL---busy}
CMAKE=$(scripts/aeron-deps.sh)
export CMAKE
cargo build --release --locked -p tickwire-feed-cli --features aeron >&2
bin=$PWD/target/release/tickwire-feed
work=$(mktemp -d)
tag=$$
a=twba$tag b=twbb$tag net=$(( tag % 250 + 1 ))
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$a" 2>/dev/null || true
    ip netns del "$b" 2>/dev/null || true
    rm -rf "$work" /dev/shm/twbench-"$tag"-*
}
trap cleanup EXIT

ip netns add "$a"
ip netns add "$b"
ip -n "$a" link add veth0 type veth peer name veth1 netns "$b"
ip -n "$a" addr add "10.231.$net.1/24" dev veth0
ip -n "$b" addr add "10.231.$net.2/24" dev veth1
for ns in "$a" "$b"; do
    ip -n "$ns" link set lo up
done
ip -n "$a" link set veth0 up
ip -n "$b" link set veth1 up

# Waits for a line matching $2 in file $1 (at most 60 s).
wait_line() {
    for _ in $(seq 600); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

# case NAME SINK_TOML SUBSCRIBE_ARGS... : runs one case in namespace $a
# (the subscriber in $sub_ns), prints the subscriber's last line.
one_case() {
    local name=$1 sink=$2; shift 2
    local dir=$work/$name port=19443
    mkdir -p "$dir"
    ip netns exec "$a" taskset -c 0 "$bin" sim --listen "127.0.0.1:$port" --venues binance-spot \
        --rate "$rate" --ca-out "$dir/ca.pem" > "$dir/sim.log" 2>&1 &
    pids+=($!)
    wait_line "$dir/sim.log" "trust"
    cat > "$dir/feed.toml" <<TOML
[sinks]
$sink
[tls]
ca_file = "$dir/ca.pem"
[[thread]]
core = 0
venues = ["sim"]
[[venue]]
name = "sim"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:20", "ETHUSDT:2:4:20"]
endpoint = "wss://localhost:$port"
rest = "https://localhost:$port"
TOML
    if [ "$name" = shm ]; then
        ip netns exec "$a" "$bin" run --config "$dir/feed.toml" > "$dir/feed.log" 2>&1 &
        pids+=($!)
        wait_line "$dir/feed.log" "books valid 2/2"
        ip netns exec "$sub_ns" taskset -c 1 "$bin" subscribe "$@" --stats $poll \
            --duration "${secs}s" > /dev/null 2> "$dir/sub.log"
    else
        ip netns exec "$sub_ns" taskset -c 1 "$bin" subscribe "$@" --stats $poll \
            --duration "$(( secs + 5 ))s" > /dev/null 2> "$dir/sub.log" &
        local sub=$!
        pids+=($sub)
        wait_line "$dir/sub.log" "media driver in"
        ip netns exec "$a" "$bin" run --config "$dir/feed.toml" > "$dir/feed.log" 2>&1 &
        pids+=($!)
        wait "$sub"
    fi
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pids=()
    printf '%-10s %s\n' "$name" "$(tail -n 1 "$dir/sub.log")"
    grep -E "^ +[0-9.]+s " "$dir/sub.log" | tail -n 3 | sed "s/^/$name  /"
}

echo "rate $rate steps/s, $secs s a case, subscriber ${poll:-napping}, $(date -u +%F)"
for c in $cases; do case $c in
shm) sub_ns=$a one_case shm "shm = \"/dev/shm/twbench-$tag-ring\"" --shm "/dev/shm/twbench-$tag-ring" ;;
ipc) sub_ns=$a one_case ipc "[sinks.aeron]
channel = \"aeron:ipc\"
stream = 1001
driver = \"external\"
dir = \"/dev/shm/twbench-$tag-ipc\"" --aeron aeron:ipc --stream 1001 --embedded-driver --dir "/dev/shm/twbench-$tag-ipc" ;;
udp) sub_ns=$b one_case udp "[sinks.aeron]
channel = \"aeron:udp?endpoint=10.231.$net.2:40456\"
stream = 1001
dir = \"/dev/shm/twbench-$tag-udp-feed\"" --aeron "aeron:udp?endpoint=10.231.$net.2:40456" --stream 1001 \
    --embedded-driver --dir "/dev/shm/twbench-$tag-udp-sub" ;;
esac; done
