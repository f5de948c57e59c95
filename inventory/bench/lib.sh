# Setup and measurement shared by the mcpscope benchmarks (run.sh, vscode.sh, dsh.sh): sourced
# by them, never run on its own. Figures, not a pass/fail test.
#
#   bench_setup NAME      checks for hyperfine, GNU time and python3 (exit 2 with the apt-get
#                         line when one is missing), builds the static binary (profile `static`) exactly as
#                         the image does ($bin), makes a temp dir /tmp/NAME.XXXXXX ($work,
#                         removed on exit), and sets $repo and $runs (RUNS, default 300)
#   bench_header [LINE…]  prints the binary, any LINEs, and the runs per measurement
#   bench_measure LABEL HOME ROOT [ARGS…]
#                         one invocation of `$bin ROOT ARGS…` with HOME: the inventory summary
#                         (its --json output through $work/summary.py, which the caller writes),
#                         the median wall time (hyperfine -N: one exec per run, no shell,
#                         including process start) and the peak RSS (GNU time, 20 runs)
#
# A caller may set, before measuring: `wrap` (an array: a command prefix every run goes
# through, e.g. a private mount namespace) and `allow_failure=1` (the binary may exit non-zero,
# as for input it refuses; otherwise a failure ends the script).

bench_setup() { # name
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    runs=${RUNS:-300}
    wrap=()
    allow_failure=0
    for tool in hyperfine /usr/bin/time python3; do
        command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y hyperfine time python3)" >&2; exit 2; }
    done
    (cd "$repo" && RUSTFLAGS='-C target-feature=+crt-static' CARGO_TARGET_DIR="$repo/target/static" \
        cargo build --quiet --profile static --target x86_64-unknown-linux-gnu -p mcpscope)
    bin="$repo/target/static/x86_64-unknown-linux-gnu/static/mcpscope"
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    cat >"$work/median.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("  wall: median %.2f ms, mean %.2f ms, min %.2f ms, max %.2f ms"
      % (r["median"] * 1e3, r["mean"] * 1e3, r["min"] * 1e3, r["max"] * 1e3))
PY
}

bench_header() { # [line...]
    echo "binary: $bin ($(stat -c %s "$bin") bytes, static)"
    local line
    for line in "$@"; do
        echo "$line"
    done
    echo "runs per measurement: $runs"
    echo
}

# Succeeds when a non-zero exit of the binary is expected (allow_failure=1).
bench_failure_allowed() {
    [ "$allow_failure" = 1 ]
}

bench_measure() { # label home root [args...]
    local label=$1 home=$2 root=$3; shift 3
    echo "== $label"
    local json=(--json) ignore=()
    [[ " $* " == *" --json "* ]] && json=()
    bench_failure_allowed && ignore=(-i)
    { HOME="$home" "${wrap[@]}" "$bin" "$root" "${json[@]}" "$@" || bench_failure_allowed; } \
        | python3 "$work/summary.py"
    # hyperfine runs inside the wrap and passes HOME on; -N: no shell, so each timed run is
    # exactly one exec of the binary.
    HOME="$home" "${wrap[@]}" hyperfine -N --warmup 20 --runs "$runs" --style none "${ignore[@]}" \
        --export-json "$work/h.json" "$bin $root $*" >/dev/null
    python3 "$work/median.py" "$work/h.json"
    local rss=()
    for _ in $(seq 20); do
        rss+=("$({ HOME="$home" "${wrap[@]}" /usr/bin/time -f '%M' "$bin" "$root" "$@" 2>&1 >/dev/null \
            || bench_failure_allowed; } | tail -n1)")
    done
    printf '%s\n' "${rss[@]}" | sort -n | awk '{a[NR]=$1} END {printf "  peak RSS: median %.2f MiB, max %.2f MiB (20 runs)\n", a[int((NR+1)/2)]/1024, a[NR]/1024}'
}
