#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR (configured with -DHEADROOM_FUZZ=ON; `make fuzz` does it)
# for SECONDS each, two at a time, and prints per target the executions, exec/s, the final cov: and
# ft:, and the corpus size. Exits non-zero on any finding (crash, uncaught exception, sanitizer
# report, timeout, memory limit), printing the path of the input that caused it.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]      (default: every target)
#
# Seeds: the committed corpus (fuzz/corpus/<target>/), past findings (fuzz/regressions/<target>/),
# the project's own files of the format (GPU profiles, model configs, scenarios), and the real files
# in $HEADROOM_DATA (default ../shared/traces beside the checkout), all read-only. New corpus units
# go only into a temporary folder (FUZZ_WORK, default a fresh one under /tmp), removed at the end
# unless a target found something or FUZZ_KEEP=1. FUZZ_TIMEOUT (default 10) is the seconds one input
# may take before it counts as a hang: raise it on a machine so busy that a niced fuzzer waits
# seconds for a core.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if (($# < 2)); then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build="$(cd "$1" && pwd)"
seconds="$2"
shift 2
data="${HEADROOM_DATA:-$root/../shared/traces}"
work="${FUZZ_WORK:-$(mktemp -d /tmp/headroom-fuzz.XXXXXX)}"
mkdir -p "$work"

# Every fuzz target the build made (fuzz/CMakeLists.txt is their one list), so a new one is fuzzed too.
all=()
for bin in "$build"/fuzz/fuzz_*; do
  [[ -f "$bin" && -x "$bin" ]] && all+=("${bin##*/fuzz_}")
done
if ((${#all[@]} == 0)); then
  echo "no fuzz targets in $build/fuzz (build them first: make fuzz)" >&2
  exit 2
fi
targets=("${@:-${all[@]}}")

# Per target: -max_len (large enough for the real files where a whole file is one input), extra
# read-only seed folders of the project, and the real files used as seeds (-seed_inputs).
max_len() {
  case "$1" in
    # The smallest public snapshot pickle (73 KB, a state) fits whole; the two training histories
    # (0.5 and 1.3 MB) take seconds per run under ASan and are read as their first 80 KB (the
    # unpickler's opcodes, then a truncation error). Whole histories: the project's sample in the corpus.
    pickle) echo 80000 ;;
    snapshot_json) echo 65536 ;;     # likewise: the real JSON forms (72-140 KB) are cut, the sample is whole
    trace_*) echo 8192 ;;            # a trace is rows: the real files are read as their first 8 KiB
    *) echo 65536 ;;
  esac
}
project_seeds() {
  case "$1" in
    gpu_profile_yaml) echo "$root/sim/device/profiles" ;;
    hf_config) echo "$root/tests/model/configs" ;;
    scenario_yaml) echo "$root/scenarios" ;;
  esac
}
data_seeds() {
  local files=()
  case "$1" in
    pickle) files=("$data"/torch_snapshots/*.pickle) ;;
    snapshot_json) files=("$data"/torch_snapshots/*.segments.json) ;;
    trace_azure_csv) files=("$data"/azure2023_*.csv) ;;
    trace_vidur_csv) files=("$data"/vidur_splitwise_*.csv) ;;
    trace_mooncake_jsonl) files=("$data"/mooncake_*.jsonl) ;;
    trace_length_csv) files=("$data"/sharegpt_*.csv "$data"/vidur_arxiv_*.csv "$data"/etalon_bwb_*.csv) ;;
  esac
  local existing=()
  for f in "${files[@]}"; do [[ -f "$f" ]] && existing+=("$f"); done
  if ((${#existing[@]})); then (IFS=,; echo "${existing[*]}"); fi
}

run_one() {
  local t="$1" dir="$work/$1"
  local bin="$build/fuzz/fuzz_$t"
  mkdir -p "$dir/corpus"
  local args=(-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len="$(max_len "$t")"
              -print_final_stats=1 -artifact_prefix="$dir/")
  local seeds
  seeds="$(data_seeds "$t")"
  [[ -n "$seeds" ]] && args+=(-seed_inputs="$seeds")
  local dirs=("$dir/corpus" "$root/fuzz/corpus/$t")
  [[ -d "$root/fuzz/regressions/$t" ]] && dirs+=("$root/fuzz/regressions/$t")
  local extra
  extra="$(project_seeds "$t")"
  [[ -n "$extra" ]] && dirs+=("$extra")
  local rc=0
  "$bin" "${args[@]}" "${dirs[@]}" >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}

summary() {
  local t="$1" dir="$work/$1"
  local rc runs eps cov ft corp artifact
  rc="$(cat "$dir/rc")"
  runs="$(grep -oE 'stat::number_of_executed_units: +[0-9]+' "$dir/log" | awk '{print $2}' | tail -1)"
  eps="$(grep -oE 'stat::average_exec_per_sec: +[0-9]+' "$dir/log" | awk '{print $2}' | tail -1)"
  local last
  last="$(grep -E '^#[0-9]+' "$dir/log" | grep 'cov:' | tail -1 || true)"
  cov="$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")"
  corp="$(sed -n 's/.*corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")"
  artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$dir/log" | tail -1)"
  if [[ "$rc" == 0 ]]; then
    printf '%-22s %12s %8s %7s %7s %14s  ok\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
  else
    printf '%-22s %12s %8s %7s %7s %14s  FINDING (exit %s): %s\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-?}" \
      "${ft:-?}" "${corp:-?}" "$rc" "${artifact:-see $dir/log}"
    grep -E 'ERROR: |fuzz finding: |SUMMARY: |uncaught exception|what\(\)' "$dir/log" | head -5 | sed 's/^/    /'
  fi
}

for t in "${targets[@]}"; do
  if [[ ! -x "$build/fuzz/fuzz_$t" ]]; then
    echo "$build/fuzz/fuzz_$t: not built (configure with -DHEADROOM_FUZZ=ON and build it)" >&2
    exit 2
  fi
done

echo "fuzzing ${#targets[@]} targets for ${seconds} s each, two at a time (work folder $work)"
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= 2)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

printf '%-22s %12s %8s %7s %7s %14s  result\n' target executions exec/s cov ft corpus
failed=0
for t in "${targets[@]}"; do
  summary "$t"
  [[ "$(cat "$work/$t/rc")" == 0 ]] || failed=1
done
if ((failed)); then
  echo "findings: inputs and logs kept in $work (add each input to fuzz/regressions/<target>/ with its fix)"
  exit 1
fi
if [[ "${FUZZ_KEEP:-0}" != 1 && -z "${FUZZ_WORK:-}" ]]; then rm -rf "$work"; fi
echo "no findings"
