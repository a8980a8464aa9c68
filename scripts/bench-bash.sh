#!/usr/bin/env bash
# Bash: overhead of `pi tool bash -- true` over `bash -lc true` (median of
# N); peak RSS and throughput while a command writes 1 GiB to stdout; time
# from the timeout to the return for a tree that ignores SIGTERM.
# Usage: scripts/bench-bash.sh [RUNS]
source "$(dirname "$0")/lib.sh"
runs=${1:-20}
mkdir -p "$work/ws"
export PI_SESSION=$(new_session "$work/ws" --permission-mode auto)
"$PI" tool bash -- true >/dev/null   # warm the login-PATH cache
: > "$work/p"; : > "$work/b"
for _ in $(seq "$runs"); do
  s=$(now); "$PI" tool bash -- true >/dev/null; e=$(now); echo $(( (e-s)/1000 )) >> "$work/p"
  s=$(now); bash -lc true; e=$(now); echo $(( (e-s)/1000 )) >> "$work/b"
done
p=$(med < "$work/p"); b=$(med < "$work/b")
echo "pi tool bash -- true: median $((p/1000)).$(( (p%1000)/100 )) ms; bash -lc true: median $((b/1000)).$(( (b%1000)/100 )) ms; overhead $(( (p-b)/1000 )) ms"

if [ -x /usr/bin/time ]; then
  s=$(now)
  /usr/bin/time -f "%M" -o "$work/rss" "$PI" tool bash --timeout 300 -- 'head -c 1073741824 /dev/zero | tr "\0" "x" | fold -w 100' > "$work/flood.json"
  e=$(now)
  secs=$(echo "scale=3; ($e-$s)/1000000000" | bc)
  echo "1 GiB on stdout: ${secs}s ($(echo "scale=0; 1024/$secs" | bc) MiB/s), peak RSS $(( $(cat "$work/rss")/1024 )) MiB, envelope $(wc -c < "$work/flood.json") bytes, spill $(ls -la "$PI_DATA_DIR"/scratch/*/tool-output/ | awk 'NR>3 {print $5}' | sort -n | tail -1) bytes"
else
  echo "(no /usr/bin/time: apt-get install time for the RSS figure)"
fi

s=$(now)
"$PI" tool bash --timeout 1 -- 'trap "" TERM; (trap "" TERM; sleep 1000) & sleep 1000' > "$work/t.json" || true
e=$(now)
grep -o '"errorCode":"[A-Z_]*"' "$work/t.json"
echo "SIGTERM-ignoring tree under --timeout 1: returned after $(( (e-s)/1000000 )) ms (timeout 1000 ms + grace)"
