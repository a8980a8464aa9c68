#!/usr/bin/env bash
# End-to-end wall time of `pi tool read` on a small file against the floor of
# any single-shot call: a minimal Go program that opens the same store and
# inserts one row (scripts/storefloor). Prints medians and the ratio.
# Usage: scripts/bench-call.sh [RUNS]
source "$(dirname "$0")/lib.sh"
runs=${1:-50}
go build -o bin/storefloor ./scripts/storefloor
mkdir -p "$work/ws" && echo "hello" > "$work/ws/small.txt"
export PI_SESSION=$(new_session "$work/ws")
bin/pi tool read small.txt | grep -q '"ok":true'
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
