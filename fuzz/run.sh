#!/usr/bin/env bash
# fuzz/run.sh: run every cargo-fuzz target for a fixed budget, at the lowest CPU priority,
# from the committed seed corpus (fuzz/corpus/<target>, read only) into a scratch corpus
# (target/fuzz-corpus/<target>, grown by libFuzzer). Prints executions, exec/s and crashes per
# target; a crash's input lands in fuzz/artifacts/<target>/ and must become a regression test
# in the normal test suite. Not part of CI (the fuzz crate is its own workspace).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 120 s, every target)
#
# Needs a nightly toolchain and cargo-fuzz: `cargo install cargo-fuzz --locked`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
budget="${1:-120}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(bundle bundle_archive candidate_archive strict_json strict_json_differential dsse_envelope mcpscope_json dsh_yaml toml)
fi
cd "$here"
nice -n 19 cargo +nightly fuzz build --release >/dev/null 2>&1 || \
  for t in "${targets[@]}"; do nice -n 19 cargo +nightly fuzz build --release "$t"; done
logs="$here/../target/fuzz-logs"
mkdir -p "$logs"
printf '%-26s %12s %10s %8s\n' target executions exec/s crashes
status=0
for t in "${targets[@]}"; do
  scratch="$here/../target/fuzz-corpus/$t"
  mkdir -p "$scratch" "$here/artifacts/$t"
  set +e
  nice -n 19 cargo +nightly fuzz run --release "$t" "$scratch" "$here/corpus/$t" -- \
    -max_total_time="$budget" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    >"$logs/$t.log" 2>&1
  code=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  crashes=$(find "$here/artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  printf '%-26s %12s %10s %8s\n' "$t" "${runs:-?}" "${rate:-?}" "$crashes"
  if [ "$code" -ne 0 ] || [ "$crashes" -ne 0 ]; then status=1; fi
done
exit $status
