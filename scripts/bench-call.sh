#!/usr/bin/env bash
# End-to-end wall time of `pi tool read` on a small file against the floor of
# any single-shot call: a minimal Go program that opens the same store and
# inserts one row (scripts/storefloor). Prints medians and the ratio.
# Usage: scripts/bench-call.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH" CGO_ENABLED=0
runs=${1:-50}
go build -o bin/pi . && go build -o bin/storefloor ./scripts/storefloor
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PI_DATA_DIR=$work/data XDG_CONFIG_HOME=$work/config PI_OUTPUT=json
mkdir -p "$work/ws" && echo "hello" > "$work/ws/small.txt"
export PI_SESSION=$(bin/pi session create --workspace "$work/ws" | sed -E 's/.*"id":"([^"]+)".*/\1/')
bin/pi tool read small.txt | grep -q '"ok":true'
now() { date +%s%N; }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p95() { sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.95)]}'; }
: > "$work/pi.ms"; : > "$work/floor.ms"
for _ in $(seq "$runs"); do
  s=$(now); bin/pi tool read small.txt >/dev/null; e=$(now); echo "scale=3; ($e-$s)/1000000" | bc >> "$work/pi.ms"
  s=$(now); bin/storefloor "$PI_DATA_DIR" >/dev/null; e=$(now); echo "scale=3; ($e-$s)/1000000" | bc >> "$work/floor.ms"
done
pm=$(med < "$work/pi.ms"); fm=$(med < "$work/floor.ms")
printf 'pi tool read:  median %s ms, p95 %s ms\n' "$pm" "$(p95 < "$work/pi.ms")"
printf 'store floor:   median %s ms, p95 %s ms\n' "$fm" "$(p95 < "$work/floor.ms")"
printf 'ratio pi/floor: %.2f\n' "$(echo "$pm/$fm" | bc -l)"
