#!/usr/bin/env bash
# The scale benchmark (docs/workloads.md and docs/development.md): generates traces of 1, 2, 5 and 10 million requests (Poisson
# at 50/s, prompts of 512 and outputs of 64 tokens on average, seed 1) into $HEADROOM_SCALE_DIR
# (default /tmp/headroom-scale; about 45 MB per million requests, plus the runs' requests.csv),
# replays each with scenarios/scale-10m.yaml under /usr/bin/time -v, and prints requests, wall
# seconds, requests per second and peak RSS. Peak RSS should not grow with the trace's length.
#   scripts/bench_scale.sh [BUILD_DIR] [REQUESTS...]     e.g. scripts/bench_scale.sh build 1000000
set -euo pipefail
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 2000000 5000000 10000000)
dir=${HEADROOM_SCALE_DIR:-/tmp/headroom-scale}
root=$(cd "$(dirname "$0")/.." && pwd)
headroom=$(cd "$build" && pwd)/headroom
mkdir -p "$dir"
printf '%-10s %10s %12s %14s\n' requests wall_s requests/s peak_rss_MiB
for n in "${sizes[@]}"; do
  trace=$dir/trace-$n.csv
  if [ ! -f "$trace" ]; then
    "$headroom" generate-trace --requests "$n" --rate 50 --seed 1 --input-mean 512 --output-mean 64 -o "$trace" >/dev/null
  fi
  sed -e "s|/tmp/headroom-scale/trace-10000000.csv|$trace|" -e "s|^name: scale-10m|name: scale-$n|" \
    "$root/scenarios/scale-10m.yaml" >"$dir/scale-$n.yaml"
  /usr/bin/time -v -o "$dir/time-$n.txt" "$headroom" run "$dir/scale-$n.yaml" -o "$dir/out-$n" --no-progress \
    >"$dir/run-$n.log"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$dir/time-$n.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time-$n.txt")
  awk -v n="$n" -v w="$wall" -v r="$rss_kb" 'BEGIN {printf "%-10d %10.1f %12.0f %14.1f\n", n, w, n / w, r / 1024}'
done
