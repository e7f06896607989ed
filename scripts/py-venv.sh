#!/usr/bin/env bash
# Creates (once) the Python venv that holds the test peers nobody here wrote:
# kosoku (the Autobahn suite), websockets (an interop server) and
# hdrhistogram (HdrHistogram's Python port, reads our .hlog files). Prints the
# venv's python. Versions are pinned so that runs compare.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if ! "$venv/bin/python" -c 'import kosoku, websockets, hdrh' 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        kosoku==0.1.0 websockets==17.4 hdrhistogram==0.10.8 >&2
fi
echo "$PWD/$venv/bin/python"
