#!/usr/bin/env bash
# Creates (once) the Python venv that holds the test peers nobody here wrote:
# kosoku (the Autobahn suite), websockets (an interop server),
# hdrhistogram (HdrHistogram's Python port, reads our .hlog files) and ccxt
# (exchange clients; scripts/independent-clients.py). Prints the venv's
# python. Versions are pinned so that runs compare.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
ccxt=4.5.90
if ! "$venv/bin/python" -c "import kosoku, websockets, hdrh, ccxt.pro; assert ccxt.__version__ == '$ccxt'" \
    2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        kosoku==0.1.0 websockets==17.4 hdrhistogram==0.10.8 "ccxt==$ccxt" >&2
fi
echo "$PWD/$venv/bin/python"
