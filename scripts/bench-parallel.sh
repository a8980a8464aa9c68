#!/usr/bin/env bash
# 8 processes calling tools in parallel for D seconds against one store:
# calls/s, errors (must be 0), and audit rows == calls made.
# Usage: scripts/bench-parallel.sh [SECONDS] [PROCS]
source "$(dirname "$0")/lib.sh"
secs=${1:-10}; procs=${2:-8}
mkdir -p "$work/ws"; for i in $(seq 50); do echo "line $i TODO" > "$work/ws/f$i.txt"; done
worker() {
  local n=$1 calls=0 errs=0 end=$(( $(date +%s) + secs ))
  local s; s=$(new_session "$work/ws" --permission-mode auto)
  export PI_SESSION=$s
  "$PI" tool search Glob Grep >/dev/null; calls=$((calls+1))
  while [ "$(date +%s)" -lt "$end" ]; do
    case $((calls % 4)) in
      0) out=$("$PI" tool read f$((calls % 50 + 1)).txt) ;;
      1) out=$("$PI" tool grep TODO --output-mode count) ;;
      2) out=$("$PI" tool glob '*.txt' --limit 5) ;;
      3) out=$("$PI" tool write "out-$n.txt" --content "$calls") ;;
    esac
    calls=$((calls+1))
    case $out in *'"ok":true'*) ;; *) errs=$((errs+1)); echo "worker $n error: $out" >&2 ;; esac
  done
  echo "$calls $errs" > "$work/w$n"
}
start=$(date +%s.%N)
for n in $(seq "$procs"); do worker "$n" & done
wait
el=$(echo "$(date +%s.%N) - $start" | bc)
calls=0; errs=0
for n in $(seq "$procs"); do read -r c e < "$work/w$n"; calls=$((calls+c)); errs=$((errs+e)); done
rows=$("$PI" audit export --all | wc -l)
echo "$procs processes × ${secs}s: $calls calls, $(echo "scale=1; $calls/$el" | bc) calls/s, $errs errors, $rows audit rows (calls made: $calls)"
[ "$errs" = 0 ] && [ "$rows" = "$calls" ]
