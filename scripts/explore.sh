#!/usr/bin/env bash
# `make explore`: notebooks/explore.ipynb served by Voila on the loopback address, quietly.
#   - the notebook is trusted first (in JUPYTER_DATA_DIR), so Voila does not warn "not trusted" on
#     every page load;
#   - the kernel talks to Voila over IPC sockets, not TCP on 127.0.0.1 (which ipykernel warns about
#     on every start: "running over TCP without encryption");
#   - the websocket ping timeout is the ping interval (30 s): jupyter_server's default, 3 intervals,
#     makes tornado print that it "cannot be longer than the websocket_ping_interval" per connection;
#   - the template "fldp" (scripts/jupyter/voila/templates/fldp) is Voila's lab template without
#     its links to a CDN, so the page asks nothing of the internet.
# Usage: scripts/explore.sh PYTHON PORT [more voila options]
set -euo pipefail
python="${1:?usage: scripts/explore.sh PYTHON PORT}"; port="${2:?usage: scripts/explore.sh PYTHON PORT}"; shift 2
here="$(cd "$(dirname "$0")" && pwd)"
app="$here/../notebooks/explore.ipynb"
export JUPYTER_PATH="$here/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
"$python" -m jupyter trust "$app" >/dev/null
exec "$python" -m voila "$app" --no-browser --Voila.ip=127.0.0.1 --port="$port" --template=fldp \
    --KernelManager.transport=ipc --Voila.tornado_settings="{'ws_ping_timeout': 30000}" "$@"
