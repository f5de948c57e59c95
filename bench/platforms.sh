#!/usr/bin/env bash
# Platform benchmark: figures, not a pass/fail test.
#
#   bash bench/platforms.sh [RUNS]     # needs the Docker engine, python3; arm64 needs .ci/setup-emulation
#   SCOPEBOX_BIN=path/to/scopebox bash bench/platforms.sh [RUNS]   # measure that binary, build nothing
#
# Side by side, in one invocation, on the same engine, RUNS rounds of every kind (medians):
#   floor-amd64 / floor-arm64  a no-op container with the evidence boundary (the policy's flags,
#                              a fresh named volume at /evidence, an init), created, started,
#                              waited for and removed with its volume: the least a run can cost
#   amd64, arm64, both         warm `scopebox run --platform …` on the shipped matrix
#   amd64-2-cases              the same amd64 run on a matrix of the shipped one's first two cases
#                              (one a container): what an evidence run costs besides its cases
# each with its wall time and the machine's busy CPU time meanwhile (every process, every core),
# and, per run kind, where the time went (medians, ms): the orchestrator's phases (`--json`
# `phasesMs`: engine/probe, build, image, sweep, inputs, containers, evidence, write, archive, verify),
# per container the lifecycle (create, start, in-box run, export, inspect+remove: from
# outer/execution.json) and the runner's own phases inside (its `phases` line: canaries,
# boundary, controls, cases, and cpu: the CPU time of the runner and the candidates it reaped).
# The load average is printed at the start and after each round: the machine may be shared. It
# builds scopebox (release) once first, and one warm-up run fills the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
# SCOPEBOX_BIN: an already built scopebox to measure instead (nothing is built then).
bin=${SCOPEBOX_BIN:-target/release/scopebox}
[ -n "${SCOPEBOX_BIN:-}" ] || cargo build --quiet --release -p scopebox
work=$(mktemp -d /tmp/scopebox-bench.XXXXXX)
cleanup() {
  rm -rf "$work"
  docker volume rm -f "scopebox-bench-$$-amd64" "scopebox-bench-$$-arm64" >/dev/null 2>&1 || true
  docker image rm scopebox-bench-noop:amd64 scopebox-bench-noop:arm64 >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The no-op images: one static ELF per architecture that exits 0 (the orchestrator's probe).
python3 - "$work" <<'PY'
import os, struct, sys
work = sys.argv[1]
codes = {"amd64": (62, bytes([0x31, 0xff, 0xb8, 0x3c, 0, 0, 0, 0x0f, 0x05])),
         "arm64": (183, bytes([0, 0, 0x80, 0xd2, 0xa8, 0x0b, 0x80, 0xd2, 1, 0, 0, 0xd4]))}
for arch, (machine, code) in codes.items():
    base, at = 0x400000, 120
    size = at + len(code)
    ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8) + struct.pack(
        "<HHIQQQIHHHHHH", 2, machine, 1, base + at, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    os.makedirs(f"{work}/{arch}", exist_ok=True)
    with open(f"{work}/{arch}/noop", "wb") as f:
        f.write(ehdr + phdr + code)
    os.chmod(f"{work}/{arch}/noop", 0o755)
PY
# A docker-archive per architecture (`docker import` cannot set one on this engine).
python3 - "$work" <<'PY'
import hashlib, io, json, sys, tarfile
work = sys.argv[1]
for arch in ("amd64", "arm64"):
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.USTAR_FORMAT) as t:
        t.add(f"{work}/{arch}/noop", arcname="noop")
    layer = layer.getvalue()
    diff = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({"architecture": arch, "os": "linux",
                         "config": {"Entrypoint": ["/noop"], "User": "1000:1000"},
                         "rootfs": {"type": "layers", "diff_ids": [diff]}}).encode()
    cid = hashlib.sha256(config).hexdigest()
    manifest = json.dumps([{"Config": f"{cid}.json", "RepoTags": [f"scopebox-bench-noop:{arch}"],
                            "Layers": ["layer/layer.tar"]}]).encode()
    with tarfile.open(f"{work}/{arch}.tar", "w") as t:
        for name, data in ((f"{cid}.json", config), ("layer/layer.tar", layer), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
PY
for arch in amd64 arm64; do docker load -q -i "$work/$arch.tar" >/dev/null; done
# The first two cases of the first shipped matrix, with its canaries: every step of a run, no
# more than one case in each of its two containers.
python3 - "$work/two-cases.json" harness/matrix/claude-code.json <<'PY'
import json, sys
matrix = json.load(open(sys.argv[2]))
matrix["name"] += "-first-two-cases"
matrix["cases"] = matrix["cases"][:2]
json.dump(matrix, open(sys.argv[1], "w"))
PY

# Every tmpfs of the boundary policy, as `docker run` flags (the policy grows with the clients).
mapfile -t policy_tmpfs < <(python3 -c '
import json
for target, options in json.load(open("images/boundary-policy.json"))["tmpfs"].items():
    print("--tmpfs"); print(f"{target}:{options}")')
floor() {
  local arch=$1 vol="scopebox-bench-$$-$arch"
  docker volume create "$vol" >/dev/null
  docker run --rm --platform "linux/$arch" --network none --read-only --user 1000:1000 \
    --cap-drop ALL --security-opt no-new-privileges --init --pids-limit 256 \
    --memory 2147483648 --memory-swap 2147483648 --cpus 2 \
    "${policy_tmpfs[@]}" -v "$vol:/evidence" "scopebox-bench-noop:$arch" >/dev/null
  docker volume rm "$vol" >/dev/null
}
run() {
  local out="$work/bundle-$RANDOM$RANDOM"
  "$bin" run --json --out "$out" "$@" >"$work/last.json" 2>"$work/last.err" || { cat "$work/last.err" >&2; exit 1; }
  if [ -n "${phases:-}" ]; then
    python3 - "$out" "$work/last.json" "$work/last.err" >>"$phases" <<'PY'
import glob, json, re, sys
out, summary, err = sys.argv[1:]
row = {"orchestrator": json.load(open(summary)).get("phasesMs", {})}
for path in sorted(glob.glob(f"{out}/platforms/*/outer/execution.json") + glob.glob(f"{out}/platforms/*/shards/*/outer/execution.json")):
    at = {e["event"]: e["atMs"] for e in json.load(open(path))["events"]}
    name = path[len(out) + len("/platforms/"):-len("/outer/execution.json")]
    row[name] = {"create": at["container-created"] - at["volume-created"],
                 "start": at["started"] - at["container-created"],
                 "in-box": at["exited"] - at["started"],
                 "export": at["evidence-exported"] - at["exited"],
                 "inspect+remove": at["volume-removed"] - at["evidence-exported"],
                 "sweep": at["swept"] - at["volume-removed"]}
for line in open(err, errors="replace"):
    m = re.search(r"^(?:\[([^\]]+)\] +)?runner: phases (.*)$", line.strip())
    if m:
        key = "runner " + (m.group(1) or "")
        row.setdefault(key.strip(), {}).update({k: int(v) / 1000 for k, v in re.findall(r"(\S+)=(\d+)us", m.group(2))})
print(json.dumps(row))
PY
  fi
  # Bundles are kept until the end: on an ext4 without a journal (this VM's), creating files
  # within ~30 s of deleting many makes the allocator skip every recently freed inode one by
  # one, and the next run's evidence extraction would pay for this run's deletion.
}
# The machine's busy CPU so far, in ms (every core: user, nice, system, irq, softirq; not the
# time the hypervisor stole).
busy_ms() {
  awk -v hz="$(getconf CLK_TCK)" 'NR == 1 { print int(($2 + $3 + $4 + $7 + $8) * 1000 / hz) }' /proc/stat
}
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
declare -A wall_ms cpu_ms walls cpus
measure_once() { # name, command...: one run, its wall and CPU kept under its name
  local name=$1; shift
  local s e b0 b1
  phases="$work/phases-$name.jsonl"
  b0=$(busy_ms); s=$(date +%s%N); "$@"; e=$(date +%s%N); b1=$(busy_ms)
  walls[$name]+="$(( (e - s) / 1000000 )) "
  cpus[$name]+="$(( b1 - b0 )) "
  phases=
}
report() { # name
  local name=$1
  wall_ms[$name]=$(printf '%s\n' ${walls[$name]} | median)
  cpu_ms[$name]=$(printf '%s\n' ${cpus[$name]} | median)
  # CPU: what every process on the machine used meanwhile (the engine's, qemu's, ours): on a
  # machine whose cores a run keeps busy, a second platform's run costs its CPU, not its wall.
  printf '%-12s median %6d ms   CPU %6d ms   (runs: %s)\n' "$name" \
    "${wall_ms[$name]}" "${cpu_ms[$name]}" "${walls[$name]% }"
  if [ -s "$work/phases-$name.jsonl" ]; then
    python3 - "$work/phases-$name.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for part in rows[0]:
    keys = rows[0][part].keys()
    cells = [f"{k} {statistics.median_low([r[part][k] for r in rows if part in r and k in r[part]]):g}" for k in keys]
    print(f"    {part:<22} " + ", ".join(cells))
PY
  fi
}

run --platform linux/amd64 # warm-up: builds, loads images
run
echo "scopebox platforms benchmark, $runs rounds, $(nproc) cores, engine $(docker info -f '{{.ServerVersion}} {{.Architecture}}'), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Round by round, every kind once per round: these VMs drift by tens of percent within minutes,
# and a kind measured in a block of its own would carry its minutes' drift into the ratios.
for round in $(seq "$runs"); do
  measure_once floor-amd64 floor amd64
  measure_once floor-arm64 floor arm64
  measure_once amd64 run --platform linux/amd64
  measure_once amd64-2-cases run --platform linux/amd64 --matrix "$work/two-cases.json"
  measure_once arm64 run --platform linux/arm64
  measure_once both run
  echo "round $round of $runs done, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
for kind in floor-amd64 floor-arm64 amd64 amd64-2-cases arm64 both; do report "$kind"; done
# The shipped matrix's cases (every file harness/matrix/shipped.json lists).
shipped_cases=$(python3 -c '
import json
names = json.load(open("harness/matrix/shipped.json"))["matrices"]
print(sum(len(json.load(open("harness/matrix/" + n))["cases"]) for n in names))')
# The issue's targets, from the medians above.
awk -v fa="${wall_ms[floor-amd64]}" -v a="${wall_ms[amd64]}" -v r="${wall_ms[arm64]}" \
  -v b="${wall_ms[both]}" -v ca="${cpu_ms[amd64]}" -v cr="${cpu_ms[arm64]}" -v cb="${cpu_ms[both]}" \
  -v t="${wall_ms[amd64-2-cases]}" -v others="$(( shipped_cases - 2 ))" 'BEGIN {
  slower = a > r ? a : r
  printf "amd64 / floor %.2fx (target <= 3)   arm64 %.2f s (target <= 10)   both / slower %.3f (target <= 1.10)\n",
    a / fa, r / 1000, b / slower
  printf "CPU: both - arm64 = %d ms, what amd64 adds to a two-platform run (amd64 alone: %d ms)\n", cb - cr, ca
  printf "amd64 with 2 cases / floor %.2fx: what an evidence run costs besides its cases; the %d others add %d ms\n",
    t / fa, others, a - t
}'
