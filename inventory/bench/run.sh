#!/usr/bin/env bash
# mcpscope benchmark: figures, not a pass/fail test.
#
#   bash inventory/bench/run.sh            # needs hyperfine, GNU time, python3
#
# Builds the static release binary exactly as the image does, generates two
# trees under a temp dir, and measures one invocation with hyperfine
# (median wall time including process start, no shell) and GNU time (peak RSS):
#
#   A. all four Claude Code sources present (local + user in ~/.claude.json,
#      <root>/.mcp.json, managed-mcp.json), a root with a 6-deep ancestor
#      chain and instruction files at several levels.
#      Targets: median <= 3 ms, peak RSS <= 10 MiB.
#   B. a 1 MiB ~/.claude.json (exactly 1,048,576 bytes: the read limit) with
#      15,000 servers.  Target: <= 30 ms.
#
# The managed file lives at the fixed path /etc/claude-code, which the binary
# always uses (there is deliberately no override). When this script runs as
# root and `unshare` works, each measurement runs in a private mount
# namespace where a copy of /etc with claude-code/managed-mcp.json is
# bind-mounted over /etc: the host's /etc is never touched. Otherwise the
# managed source is measured as missing, and the script says so.
set -euo pipefail

# The tool check, the static build ($bin), $work, bench_header and bench_measure.
source "$(dirname "$0")/lib.sh"
bench_setup mcpscope-bench

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

# A: /tmp/mcpscope-bench.X/a/b/c/proj -> ancestors c, b, a, bench.X, /tmp, / (6).
root_a = os.path.join(work, "a/b/c/proj")
os.makedirs(root_a)
srv = lambda i: {"command": "npx", "args": ["-y", f"pkg-{i}"], "env": {"TOKEN": "x"}}
write(os.path.join(work, "home-a/.claude.json"), json.dumps({
    "numStartups": 42,
    "projects": {root_a: {"mcpServers": {f"local-{i}": srv(i) for i in range(3)}}},
    "mcpServers": {f"user-{i}": srv(i) for i in range(5)} | {"local-0": srv(9)},
}, indent=2))
write(os.path.join(root_a, ".mcp.json"), json.dumps(
    {"mcpServers": {f"project-{i}": srv(i) for i in range(5)} | {"local-1": srv(7)}}, indent=2))
write(os.path.join(work, "etc/claude-code/managed-mcp.json"), json.dumps(
    {"mcpServers": {"corp": {"type": "http", "url": "https://mcp.example"}}}))
write(os.path.join(work, "etc/claude-code/CLAUDE.md"), "managed\n")
for rel in ["a/b/c/proj/CLAUDE.md", "a/b/c/proj/.claude/CLAUDE.md", "a/b/AGENTS.md",
            "a/CLAUDE.md", "home-a/.claude/CLAUDE.md"]:
    write(os.path.join(work, rel), "instructions\n")

# B: exactly 1 MiB ~/.claude.json with 15,000 servers (local + user).
root_b = os.path.join(work, "b/proj")
os.makedirs(root_b)
def server(i):
    return {"command": "npx", "args": ["-y", f"@s/srv-{i:05}"]}
doc = {
    "projects": {root_b: {"mcpServers": {f"local-{i:05}": server(i) for i in range(5000)}}},
    "mcpServers": {f"user-{i:05}": server(i) for i in range(10000)},
}
text = json.dumps(doc, separators=(",", ":"))
limit = 1 << 20
assert len(text) < limit, len(text)
text = text[:-1] + ',"pad":"' + "x" * (limit - len(text) - len(',"pad":""')) + '"}'
assert len(text.encode()) == limit, len(text)
write(os.path.join(work, "home-b/.claude.json"), text)
PY

# Run "$@" with /etc/claude-code populated in a private mount namespace, if possible.
managed="missing (not root or no unshare: /etc/claude-code cannot be provided)"
wrap=()
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    cp -a /etc "$work/etc-copy"
    cp -a "$work/etc/claude-code" "$work/etc-copy/claude-code"
    wrap=(unshare -m --propagation private sh -c 'mount --bind "$0" /etc && exec "$@"' "$work/etc-copy")
    managed="present (private mount namespace)"
fi

bench_header "managed-mcp.json in scenario A: $managed"

cat >"$work/summary.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
states = ", ".join("%s=%s(%d)" % (s["scope"], s["state"], s["serverCount"]) for s in d["sources"])
found = sum(1 for i in d["instructions"] if i["state"] != "missing")
print("  sources: %s | servers: %d | instructions found: %d of %d"
      % (states, len(d["servers"]), found, len(d["instructions"])))
PY

bench_measure "A: four sources, 6-deep ancestors, human report" "$work/home-a" "$work/a/b/c/proj"
bench_measure "A: four sources, 6-deep ancestors, --json" "$work/home-a" "$work/a/b/c/proj" --json
bench_measure "B: 1 MiB ~/.claude.json, 15,000 servers, --json" "$work/home-b" "$work/b/proj" --json
bench_measure "B: 1 MiB ~/.claude.json, 15,000 servers, human report" "$work/home-b" "$work/b/proj"
