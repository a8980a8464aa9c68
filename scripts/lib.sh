# Shared set-up of the bench scripts (sourced, not run): strict mode, repo
# root, a fresh build of pi, a temp data dir that is removed on exit, and
# small helpers. Sets PI, work, PI_DATA_DIR, XDG_CONFIG_HOME, PI_OUTPUT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/usr/local/go/bin:$PATH" CGO_ENABLED=0
go build -o bin/pi .
PI=$(pwd)/bin/pi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PI_DATA_DIR=$work/data XDG_CONFIG_HOME=$work/config PI_OUTPUT=json
now() { date +%s%N; }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# new_session DIR [flags…] prints the id of a new session over DIR.
new_session() { "$PI" session create --workspace "$@" | sed -E 's/.*"id":"([^"]+)".*/\1/'; }
