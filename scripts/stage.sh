#!/usr/bin/env bash
# One stage of `make run` / `make test` (configure, build): runs the command with its output in LOG
# and prints one line, the stage's name, its wall time and "ok". When the command fails, the log is
# printed in full below the line (less the progress lines: Ninja's "[12/175] Building ...", Make's
# "[ 42%] Building ..."), so every compiler error shows as the compiler wrote it.
#
#   scripts/stage.sh NAME LOG COMMAND [ARG...]
set -uo pipefail
if (($# < 3)); then
  echo "usage: $0 NAME LOG COMMAND [ARG...]" >&2
  exit 2
fi
name="$1" log="$2"
shift 2
mkdir -p "$(dirname "$log")"
start=$(date +%s)
printf '%-44s ' "$name"
"$@" >"$log" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
if ((rc == 0)); then
  printf 'ok    %4d s\n' "$elapsed"
  exit 0
fi
printf 'FAILED after %d s (exit %d); the log (%s) without progress lines:\n' "$elapsed" "$rc" "$log"
grep -vE '^\[ *[0-9]+(%|/[0-9]+)\] (Building|Linking|Built target|Generating|Embedding|Catalogue)|^Consolidate compiler generated dependencies' "$log"
exit "$rc"
