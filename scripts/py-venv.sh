#!/usr/bin/env bash
# Creates (once) the Python venv that holds the test peers nobody here wrote:
# kosoku (the Autobahn suite) and websockets (an interop server). Prints the
# venv's python. Versions are pinned so that runs compare.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-venv
if ! "$venv/bin/python" -c 'import kosoku, websockets' 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        kosoku==0.1.0 websockets==17.4 >&2
fi
echo "$PWD/$venv/bin/python"
