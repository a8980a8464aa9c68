#!/usr/bin/env bash
# Permission wake-up latency: from the end of `pi permission respond` to the
# exit of the waiting call, median and p95 over N rounds; then the CPU time of
# a call that waited 30 s; then 8 sessions with concurrent requests answered
# in random order (every answer must reach its own waiter).
# Usage: scripts/bench-wake.sh [ROUNDS] [WAIT_SECONDS]
source "$(dirname "$0")/lib.sh"
rounds=${1:-50}; waitsec=${2:-30}
mkdir -p "$work/ws" "$work/out"; echo outside > "$work/out/o.txt"
sid() { new_session "$work/ws"; }
export PI_SESSION=$(sid)
pending() { "$PI" permission list "$@" | grep -o 'req_[a-z0-9]*' | head -1 || true; }
: > "$work/lat"
for i in $(seq "$rounds"); do
  ( "$PI" tool read "$work/out/o.txt" > "$work/r.json" 2>/dev/null; now > "$work/end" ) &
  w=$!
  req=""; while [ -z "$req" ]; do req=$(pending); done
  "$PI" permission respond "$req" --decision allow-once >/dev/null
  t0=$(now)
  wait $w
  grep -q '"ok":true' "$work/r.json" || { echo "round $i: waiter failed"; cat "$work/r.json"; exit 1; }
  echo "scale=2; ($(cat "$work/end")-$t0)/1000000" | bc >> "$work/lat"
done
sort -n "$work/lat" | awk '{a[NR]=$1} END {printf "wake-up latency over %d rounds: median %.1f ms, p95 %.1f ms, max %.1f ms\n", NR, a[int((NR+1)/2)], a[int(NR*0.95)], a[NR]}'

# CPU time of a call that waits WAIT_SECONDS before its answer.
( "$PI" tool read "$work/out/o.txt" > "$work/r.json" ) &
w=$!
req=""; while [ -z "$req" ]; do req=$(pending); done
pid=$(pgrep -f "bin/pi tool read $work/out/o.txt" | head -1)
sleep "$waitsec"
ticks=$(awk '{print $14+$15}' /proc/"$pid"/stat)
"$PI" permission respond "$req" --decision allow-once >/dev/null
wait $w
echo "CPU time of a call that waited ${waitsec}s: $(echo "scale=1; $ticks*1000/$(getconf CLK_TCK)" | bc) ms (user+sys, whole process incl. start-up)"

# 8 sessions, concurrent requests, answered in random order.
unset PI_SESSION
pids=()
for i in $(seq 8); do
  s=$(sid); echo "file $i" > "$work/out/f$i.txt"
  ( PI_SESSION=$s "$PI" tool read "$work/out/f$i.txt" > "$work/r$i.json" ) &
  pids+=($!)
done
until [ "$("$PI" permission list | grep -o 'req_[a-z0-9]*' | sort -u | wc -l)" -ge 8 ]; do sleep 0.02; done
for req in $("$PI" permission list | grep -o 'req_[a-z0-9]*' | sort -u | shuf); do
  "$PI" permission respond "$req" --decision allow-once >/dev/null
done
for p in "${pids[@]}"; do wait "$p"; done
ok=0
for i in $(seq 8); do grep -q "file $i" "$work/r$i.json" && ok=$((ok+1)); done
echo "8 sessions answered in random order: $ok/8 waiters got their own answer"
[ "$ok" = 8 ]
