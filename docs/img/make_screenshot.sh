#!/usr/bin/env bash
# Render a trace (default: the committed example, traces/examples/mlp_step.json.gz, made by
# traces/examples/make_mlp_trace.py) in speedscope (offline, served from localhost) with
# headless Chromium and save docs/img/trace_speedscope.png. Not run by the test suite; needs
#   apt-get install -y chromium      and      npm (speedscope is installed into a temp folder).
# Usage: bash docs/img/make_screenshot.sh [TRACE.json|TRACE.json.gz] [OUT.png]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${2:-$here/trace_speedscope.png}")"
work="$(mktemp -d)"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trace="${1:-$here/../../traces/examples/mlp_step.json.gz}"

npm install --silent --no-audit --no-fund --prefix "$work/npm" speedscope >/dev/null
cp -r "$work/npm/node_modules/speedscope/dist/release" "$work/site"
# speedscope fetches the profile over http as plain JSON (unpack .gz), and appends each event's
# args to its name ("gradkit::mm {\"External id\":3,...}"): drop args so the names stay legible
python3 -c 'import gzip, json, sys
opener = gzip.open if open(sys.argv[1], "rb").read(2) == b"\x1f\x8b" else open
with opener(sys.argv[1], "rt") as f:
    data = json.load(f)
for event in data["traceEvents"]:
    if event.get("ph") == "X":
        event.pop("args", None)
json.dump(data, open(sys.argv[2], "w"))' "$trace" "$work/site/trace.json"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do  # wait until the server answers
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" \
    2>/dev/null && break
  sleep 0.1
done

url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/trace.json"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --window-size=1400,${HEIGHT:-300} \
  --virtual-time-budget=15000 --screenshot="$out" "$url" 2>/dev/null
echo "wrote $out ($(stat -c %s "$out") bytes)"
