#!/usr/bin/env bash
# Build pi, then walk through a session over a sample directory: create a
# session, read, activate and use Glob/Grep, ask for permission from a second
# "terminal" and answer it, and show the audit. Everything lives in a temp
# dir; nothing outside it is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH" CGO_ENABLED=0
go build -o bin/pi . && echo "built $(pwd)/bin/pi"
PI="$(pwd)/bin/pi"
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
export PI_DATA_DIR="$demo/data" XDG_CONFIG_HOME="$demo/config"
mkdir -p "$demo/app/src" "$demo/outside"
printf 'package main\n\nfunc main() {\n\tprintln("hello") // TODO: greet by name\n}\n' > "$demo/app/src/main.go"
printf '# sample app\nRun it with go run ./src\n' > "$demo/app/README.md"
printf 'token=ghp_0123456789abcdefghijklmnopqrstuvwxyz01\n' > "$demo/outside/notes.txt"
run() { echo; echo "\$ pi $*"; "$PI" "$@"; }

echo; echo "\$ pi session create --workspace $demo/app"
export PI_SESSION=$("$PI" session create --workspace "$demo/app" -o json | sed -E 's/.*"id":"([^"]+)".*/\1/')
echo "PI_SESSION=$PI_SESSION"
run tool read README.md -o text
run tool glob '**/*.go' -o json || echo "(exit $?: Glob is on-demand in agent mode)"
run tool search Glob Grep -o text
run tool glob '**/*.go' -o text
run tool grep TODO --output-mode content -o text

echo; echo "# An explicit path outside the workspace needs a person's consent."
echo "# The call blocks; a second process lists the card and answers it."
"$PI" tool read "$demo/outside/notes.txt" -o json > "$demo/read.json" 2> "$demo/read.err" &
waiter=$!
for _ in $(seq 100); do
  req=$("$PI" permission list -o json | sed -nE 's/.*"requestId":"([^"]+)".*/\1/p')
  [ -n "$req" ] && break; sleep 0.05
done
run permission list -o text
run permission respond "$req" --decision allow-once -o text
wait "$waiter" || true
echo; echo "# the waiting call's result (the token is redacted in the audit preview, not in the file):"
cat "$demo/read.json"

echo; echo "# Edits are reviewed and can be rolled back by hand (hash-guarded)."
run session configure --permission-mode accept-edits -o text
run tool edit src/main.go --old 'println("hello")' --new 'println("hello, pi")' -o text
id=$("$PI" review list -o json | sed -E 's/.*"snapshotId":"([^"]+)".*/\1/')
run review show "$id" --patch -o text
run review rollback "$id" -o text
run tool read src/main.go -o text
run audit list -o text
