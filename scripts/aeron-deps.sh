#!/usr/bin/env bash
# Installs (once) what the `aeron` feature needs to build the Aeron C client
# and media driver from the sources rusteron ships: CMake >= 3.30 (Debian
# 12's is 3.25; PyPI's `cmake` wheel carries a newer binary, pinned below 4,
# whose policy changes the Aeron build was not measured with), and Debian's
# libclang-dev (bindgen), libbsd-dev and uuid-dev; iproute2 for the tests'
# network namespaces. Prints the CMake to build with (for CMAKE=...).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for pkg in libclang-dev libbsd-dev uuid-dev iproute2; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    # As root (CI), or through sudo.
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get install -y -q "${missing[@]}" >&2 \
        || { "${as_root[@]}" apt-get update -q >&2 && "${as_root[@]}" apt-get install -y -q "${missing[@]}" >&2; }
fi
venv=target/cmake-venv
if ! "$venv/bin/cmake" --version 2>/dev/null | grep -qE 'version 3\.(3[0-9]|[4-9][0-9])'; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "cmake>=3.30,<4" >&2
fi
echo "$PWD/$venv/bin/cmake"
