#!/usr/bin/env bash
# Whole-process Grep against ripgrep on the Go source tree: the same patterns,
# the same set of matching files, and the wall-time ratio pi/rg.
# Usage: scripts/bench-grep.sh [RUNS]   (needs rg; hyperfine is used if present)
source "$(dirname "$0")/lib.sh"
runs=${1:-10}
command -v rg >/dev/null || { echo "bench-grep: ripgrep (rg) is not installed (apt-get install ripgrep)" >&2; exit 2; }
tree=$(go env GOROOT)/src
export PI_SESSION=$(new_session "$tree")
"$PI" tool search Grep >/dev/null

cases=(literal case-insensitive regex-with-literal files-with-matches)
now() { date +%s.%N; }
printf '%-20s %8s %8s %7s %s\n' case pi_ms rg_ms ratio same_files
for name in "${cases[@]}"; do
  case $name in
    literal) piargs=(tool grep 'func NewReader' --output-mode files --head-limit 2000); rgargs=(-l -F 'func NewReader') ;;
    case-insensitive) piargs=(tool grep 'errunexpectedeof' -i --output-mode files --head-limit 2000); rgargs=(-l -i 'errunexpectedeof') ;;
    regex-with-literal) piargs=(tool grep 'func \w+Error\(' --output-mode files --head-limit 2000); rgargs=(-l 'func \w+Error\(') ;;
    files-with-matches) piargs=(tool grep 'context\.Context' --output-mode files --head-limit 2000); rgargs=(-l 'context\.Context') ;;
  esac
  # correctness: same set of files
  "$PI" "${piargs[@]}" -o text | sort > "$work/pi.txt" || true
  (cd "$tree" && rg --hidden "${rgargs[@]}" | sed 's|^\./||' | sort) > "$work/rg.txt" || true
  same=yes; cmp -s "$work/pi.txt" "$work/rg.txt" || same="no ($(wc -l <"$work/pi.txt") vs $(wc -l <"$work/rg.txt"))"
  # timing: best-of and median of N
  ti=(); tr_=()
  for _ in $(seq "$runs"); do
    s=$(now); "$PI" "${piargs[@]}" >/dev/null; e=$(now); ti+=("$(echo "($e-$s)*1000" | bc)")
    s=$(now); (cd "$tree" && rg --hidden "${rgargs[@]}" >/dev/null); e=$(now); tr_+=("$(echo "($e-$s)*1000" | bc)")
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  pm=$(med "${ti[@]}"); rm_=$(med "${tr_[@]}")
  printf '%-20s %8.1f %8.1f %7.2f %s\n' "$name" "$pm" "$rm_" "$(echo "$pm/$rm_" | bc -l)" "$same"
done
