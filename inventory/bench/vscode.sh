#!/usr/bin/env bash
# mcpscope --client vscode benchmark: figures, not a pass/fail test.
#
#   bash inventory/bench/vscode.sh          # needs hyperfine, GNU time, python3
#
# Builds the static release binary exactly as the image does, generates two trees under a temp
# dir, and measures one invocation with hyperfine (median wall time including process start,
# no shell) and GNU time (peak RSS):
#
#   A. every VS Code / Copilot source present: <root>/.vscode/mcp.json and <root>/.mcp.json
#      (JSONC with comments, trailing commas, a BOM), ~/.config/Code/User/mcp.json (JSONC) and
#      ~/.copilot/mcp-config.json (strict), same-name servers across origins, VS Code env
#      numbers/null, a root with a 6-deep ancestor chain and instruction files at several
#      levels and in home.  Target: median <= 3 ms.
#   B. a 1 MiB JSONC <root>/.vscode/mcp.json (exactly 1,048,576 bytes: the read limit, with a
#      comment per server) holding ~10,000 servers, plus a 5,000-server bare-map .mcp.json.
#      Reported for scale (no target of its own).
set -euo pipefail

# The tool check, the static build ($bin), $work, bench_header and bench_measure.
source "$(dirname "$0")/lib.sh"
bench_setup mcpscope-bench-vscode

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

# A: /tmp/mcpscope-bench-vscode.X/a/b/c/proj -> ancestors c, b, a, bench.X, /tmp, / (6).
root = os.path.join(work, "a/b/c/proj")
home = os.path.join(work, "home-a")
os.makedirs(root)
stdio = lambda i: {"type": "stdio", "command": "npx", "args": ["-y", f"pkg-{i}"], "env": {"TOKEN": "${input:tok}", "PORT": 8080 + i, "X": None}}
remote = lambda i: {"type": "http", "url": f"https://mcp{i}.example", "headers": {"Authorization": "Bearer ${input:tok}"}}
portable = lambda i: {"type": "local", "command": "uvx", "args": [f"pkg-{i}"], "env": {"TOKEN": "x"}, "tools": ["*"]}

def jsonc(doc):
    body = json.dumps(doc, indent=2)
    return "\ufeff// workspace servers\n/* generated */\n" + body[:-2] + ",\n}\n"

write(os.path.join(root, ".vscode/mcp.json"), jsonc({
    "inputs": [{"id": "tok", "type": "promptString", "password": True}],
    "servers": {f"vp-{i}": stdio(i) for i in range(4)} | {"shared": stdio(9), "vp-remote": remote(0)},
}))
write(os.path.join(root, ".mcp.json"), jsonc({"mcpServers": {f"cp-{i}": portable(i) for i in range(4)} | {"shared": portable(9)}}))
write(os.path.join(home, ".config/Code/User/mcp.json"), jsonc({"servers": {f"vu-{i}": stdio(i) for i in range(5)} | {"shared": remote(1)}}))
write(os.path.join(home, ".copilot/mcp-config.json"), json.dumps({"mcpServers": {f"cu-{i}": portable(i) for i in range(5)} | {"shared": portable(3)}}, indent=2))
for rel in ["a/b/c/proj/.github/copilot-instructions.md", "a/b/c/proj/AGENTS.md", "a/b/c/proj/.claude/CLAUDE.md",
            "a/b/AGENTS.md", "a/CLAUDE.md", "home-a/.copilot/copilot-instructions.md", "home-a/.codex/AGENTS.md"]:
    write(os.path.join(work, rel), "instructions\n")

# B: exactly 1 MiB JSONC .vscode/mcp.json and a bare-map .mcp.json.
root_b = os.path.join(work, "b/proj")
os.makedirs(root_b)
limit = 1 << 20
parts, size, i = [], 0, 0
head = "\ufeff// big workspace\n{\"servers\": {\n"
tail = "}}\n"
while True:
    entry = '// server %d\n"srv-%05d": {"command": "npx", "args": ["-y", "@s/srv-%05d"], "env": {"N": %d}},\n' % (i, i, i, i)
    if len((head + "".join(parts) + entry + tail).encode()) > limit - 64:
        break
    parts.append(entry)
    i += 1
# Close the servers object, pad with spaces to exactly the limit, close the root.
body = head + "".join(parts) + "}"
text = body + " " * (limit - len((body + "}\n").encode())) + "}\n"
assert len(text.encode()) == limit, len(text.encode())
write(os.path.join(root_b, ".vscode/mcp.json"), text)
write(os.path.join(root_b, ".mcp.json"), json.dumps({f"bare-{j:05}": {"command": "uvx", "args": [f"p{j}"]} for j in range(5000)}))
print("B: %d servers in the 1 MiB JSONC file" % i, file=sys.stderr)
PY

bench_header

cat >"$work/summary.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
states = ", ".join("%s=%s(%d)" % (s["origin"], s["state"], s["serverCount"]) for s in d["sources"])
found = sum(1 for i in d["instructions"] if i["state"] != "missing")
dup = sum(1 for s in d["servers"] if s["sameNameIn"])
print("  sources: %s | servers: %d (%d with sameNameIn) | instructions found: %d of %d"
      % (states, len(d["servers"]), dup, found, len(d["instructions"])))
PY

bench_measure "A: four origins, JSONC, 6-deep ancestors, human report" "$work/home-a" "$work/a/b/c/proj" --client vscode
bench_measure "A: four origins, JSONC, 6-deep ancestors, --json" "$work/home-a" "$work/a/b/c/proj" --client vscode --json
bench_measure "B: 1 MiB JSONC .vscode/mcp.json + 5,000-server bare map, --json" "$work/home-a" "$work/b/proj" --client vscode --json
bench_measure "B: 1 MiB JSONC .vscode/mcp.json + 5,000-server bare map, human report" "$work/home-a" "$work/b/proj" --client vscode
