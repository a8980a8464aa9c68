#!/usr/bin/env bash
# Mutations: wall time of Write and Edit on a 1 KB and a 50 MB file against
# cp of the same file; store + snapshot bytes per 1,000 edits of a 100 KB
# file; `pi scratch sweep` over 10,000 session dirs.
# Usage: scripts/bench-mutations.sh [RUNS]
source "$(dirname "$0")/lib.sh"
runs=${1:-10}
mkdir -p "$work/ws"
export PI_SESSION=$(new_session "$work/ws" --permission-mode auto)
ms() { echo "scale=2; ($2-$1)/1000000" | bc; }

head -c 1024 /dev/urandom | base64 -w 100 | head -c 1024 > "$work/src1k"
head -c 37500000 /dev/urandom | base64 -w 100 > "$work/src50m"   # ~50 MB of text lines
for size in 1k 50m; do
  src=$work/src$size
  : > "$work/w"; : > "$work/e"; : > "$work/c"
  for i in $(seq "$runs"); do
    s=$(now); "$PI" tool write "f$size.txt" < "$src" > "$work/out.json"; e=$(now); ms "$s" "$e" >> "$work/w"
    grep -q '"ok":true' "$work/out.json" || { cat "$work/out.json"; exit 1; }
    old=$(head -c 40 "$work/ws/f$size.txt")
    s=$(now); "$PI" tool edit "f$size.txt" --old "$old" --new "EDITED-$i-${old:10}" > "$work/out.json"; e=$(now); ms "$s" "$e" >> "$work/e"
    grep -q '"ok":true' "$work/out.json" || { head -c 600 "$work/out.json"; exit 1; }
    s=$(now); cp "$src" "$work/cp-$size"; sync -f "$work/cp-$size"; e=$(now); ms "$s" "$e" >> "$work/c"
  done
  w=$(med < "$work/w"); ed=$(med < "$work/e"); c=$(med < "$work/c")
  printf '%-4s write %8.1f ms  edit %8.1f ms  cp+sync %7.1f ms  write/cp %5.1fx  edit/cp %5.1fx\n' \
    "$size" "$w" "$ed" "$c" "$(echo "$w/$c" | bc -l)" "$(echo "$ed/$c" | bc -l)"
done

# Store and snapshot bytes per 1,000 edits of a 100 KB file.
"$PI" session delete "$PI_SESSION" >/dev/null
export PI_SESSION=$(new_session "$work/ws" --permission-mode auto)
seq 1 14000 | sed "s/^/line /" > "$work/h.full"; head -c 102400 "$work/h.full" > "$work/ws/h.txt"
db0=$(du -sb "$PI_DATA_DIR"/pi.db* | awk '{s+=$1} END {print s}')
s=$(now)
for i in $(seq 1000); do
  "$PI" tool edit h.txt --old "line $((i+1000))
" --new "line $((i+1000)) edited
" >/dev/null
done
e=$(now)
"$PI" audit list --limit 1 >/dev/null
db1=$(du -sb "$PI_DATA_DIR"/pi.db* | awk '{s+=$1} END {print s}')
snap=$(du -sb "$PI_DATA_DIR/snapshots/$PI_SESSION" | awk '{print $1}')
echo "1000 edits of a 100 KB file: $(ms "$s" "$e") ms total; store +$(( (db1-db0)/1024 )) KiB, snapshots $(( snap/1024 )) KiB ($(( (db1-db0+snap)/1000/1024 )) KiB per edit)"

# pi scratch sweep over 10,000 session dirs (9,000 orphans, 1,000 live-but-stale).
mkdir -p "$PI_DATA_DIR/scratch"
for i in $(seq 10000); do mkdir -p "$PI_DATA_DIR/scratch/ses_orphan$i/tool-output"; echo x > "$PI_DATA_DIR/scratch/ses_orphan$i/tool-output/a.log"; done
s=$(now); "$PI" scratch sweep --dry-run > "$work/dry.json"; e=$(now)
echo "sweep --dry-run over 10,000 dirs: $(ms "$s" "$e") ms, $(grep -o 'ses_orphan' "$work/dry.json" | wc -l) would be removed"
s=$(now); "$PI" scratch sweep > "$work/sweep.json"; e=$(now)
echo "sweep over 10,000 dirs: $(ms "$s" "$e") ms, $(ls "$PI_DATA_DIR/scratch" | wc -l) dirs left"
