#!/usr/bin/env bash
# Platform benchmark: figures, not a pass/fail test.
#
#   bash bench/platforms.sh [RUNS]     # needs the Docker engine, python3; arm64 needs .ci/setup-emulation
#
# Side by side, in one invocation, on the same engine, RUNS times each (median reported):
#   floor-amd64 / floor-arm64  a no-op container with the evidence boundary (the policy's flags,
#                              a fresh named volume at /evidence, an init), created, started,
#                              waited for and removed with its volume: the least a run can cost
#   amd64, arm64, both         warm `scopebox run --platform …` on the shipped matrix
# It builds scopebox (release) once first, and one warm-up run fills the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --quiet --release -p scopebox
bin=target/release/scopebox
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

floor() {
  local arch=$1 vol="scopebox-bench-$$-$arch"
  docker volume create "$vol" >/dev/null
  docker run --rm --platform "linux/$arch" --network none --read-only --user 1000:1000 \
    --cap-drop ALL --security-opt no-new-privileges --init --pids-limit 256 \
    --memory 2147483648 --memory-swap 2147483648 --cpus 2 \
    --tmpfs /etc/claude-code:rw,noexec,nosuid,size=8m,uid=1000,gid=1000 \
    --tmpfs /home/node:rw,noexec,nosuid,size=64m,uid=1000,gid=1000 \
    --tmpfs /tmp:rw,noexec,nosuid,size=64m,uid=1000,gid=1000 \
    --tmpfs /work:rw,noexec,nosuid,size=64m,uid=1000,gid=1000 \
    -v "$vol:/evidence" "scopebox-bench-noop:$arch" >/dev/null
  docker volume rm "$vol" >/dev/null
}
run() {
  local out="$work/bundle-$RANDOM$RANDOM"
  "$bin" run --out "$out" "$@" >/dev/null 2>"$work/last.err" || { cat "$work/last.err" >&2; exit 1; }
  rm -rf "$out"
}
measure() { # name, command...
  local name=$1; shift
  local times=()
  for _ in $(seq "$runs"); do
    local s e
    s=$(date +%s%N); "$@"; e=$(date +%s%N)
    times+=($(( (e - s) / 1000000 )))
  done
  printf '%-12s median %6d ms   (runs: %s)\n' "$name" \
    "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" "${times[*]}"
}

run --platform linux/amd64 # warm-up: builds, loads images
run
echo "scopebox platforms benchmark, $runs runs each, $(nproc) cores, engine $(docker info -f '{{.ServerVersion}} {{.Architecture}}')"
measure floor-amd64 floor amd64
measure floor-arm64 floor arm64
measure amd64 run --platform linux/amd64
measure arm64 run --platform linux/arm64
measure both run
