#!/usr/bin/env bash
# mcpscope --client dsh benchmark: figures, not a pass/fail test.
#
#   bash inventory/bench/dsh.sh            # needs hyperfine, GNU time, python3
#
# Builds the static release binary exactly as the image does, generates trees under a temp
# dir, and measures one invocation with hyperfine (median wall time including process start,
# no shell) and GNU time (peak RSS):
#
#   A. all six DSH layers present (--dsh-profile web): both YAML managed blocks with content
#      outside the markers, three JSON layers, 30 rows with shadowing on every key,
#      disabled/skipped rows and ${VAR} references.  Target: median <= 3 ms.
#   B. a 1 MiB <root>/.dsh/mcp.yml managed block (exactly 1,048,576 bytes) with ~4,000 rows.
#   C. a billion-laughs block (9^11 nodes if expanded): refused by the alias bound.
#   D. a 1 MiB ~/.dsh/mcp.json with ~19,800 servers colliding in pairs on the normalized name.
set -euo pipefail

# The tool check, the static build ($bin), $work, bench_header and bench_measure.
source "$(dirname "$0")/lib.sh"
bench_setup mcpscope-bench-dsh
# Case C is refused (exit 1): it is measured all the same.
allow_failure=1

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
BEGIN = "# >>> dsh-project-mcp-manager:mcp:begin"
END = "# <<< dsh-project-mcp-manager:mcp:end"

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def yml(rows, outside=True):
    out = []
    if outside:
        out += ["# user content outside the block", "other: {keep: [1, 2, 3]}"]
    out += [BEGIN, "- insert:"]
    for name, cfg, disabled in rows:
        out.append("    - id: panel-mcp-%s" % name)
        out.append("      name: '@deepseek-ai/dsh-mcp-client'")
        if disabled:
            out.append("      disabled: true")
        out.append("      config:")
        out.append("        serverName: %s" % name)
        for k, v in cfg.items():
            out.append("        %s: %s" % (k, json.dumps(v)))
    out.append(END)
    return "\n".join(out) + "\n"

stdio = lambda i, tag: {"transport": "stdio", "command": "npx", "args": ["-y", "@scope/%s-%d" % (tag, i)],
                        "env": {"TOKEN": "${TOKEN_%d}" % i}, "cwd": "."}
http = lambda i, tag: {"url": "https://%s-%d.example/mcp" % (tag, i), "headers": {"Authorization": "Bearer ${T}"}}

# A: six layers, five rows each, with collisions across layers.
root = os.path.join(work, "a/proj")
home = os.path.join(work, "home-a")
write(os.path.join(root, ".dsh/mcp.yml"), yml(
    [("gitlab", stdio(0, "p"), False), ("sentry", {"transport": "streamable-http", **http(0, "p")}, False),
     ("unity-mcp", {}, True), ("p3", stdio(3, "p"), False), ("p4", stdio(4, "p"), False)]))
def jlayer(tag, extra):
    servers = {"%s-%d" % (tag, i): (stdio(i, tag) if i % 2 else http(i, tag)) for i in range(5 - len(extra))}
    servers.update(extra)
    return json.dumps({"mcpServers": servers}, indent=2)
write(os.path.join(root, ".dsh/mcp.json"), jlayer("pj", {"gitlab": {"command": "x"}}))
write(os.path.join(root, ".mcp.json"), jlayer("cc", {"unityMCP": {"command": "node", "args": ["u.js"]},
                                                     "off": {"command": "y", "enabled": False}}))
write(os.path.join(home, ".dsh/profiles/web/mcp.json"), jlayer("prof", {"sentry-2": {"type": "http", "url": "https://p-0.example/mcp"}}))
write(os.path.join(home, ".dsh/mcp.yml"), yml([("u%d" % i, stdio(i, "u"), False) for i in range(4)] + [("gitlab", stdio(9, "u"), False)]))
write(os.path.join(home, ".dsh/mcp.json"), jlayer("du", {"solo": {"command": "npx", "args": ["-y", "@scope/p-3"]}}))

# B: exactly 1 MiB of YAML block (rows until the limit, then padding after the end marker).
root_b = os.path.join(work, "b/proj")
rows = []
size = len(yml([], outside=False))
while True:
    row = ("srv-%05d" % len(rows), stdio(len(rows), "b"), False)
    grow = len(yml([row], outside=False)) - len(yml([], outside=False))
    if size + grow > (1 << 20):
        break
    rows.append(row)
    size += grow
text = yml(rows, outside=False)
text += " " * ((1 << 20) - len(text))
assert len(text.encode()) == 1 << 20, len(text)
write(os.path.join(root_b, ".dsh/mcp.yml"), text)
print("B rows:", len(rows), file=sys.stderr)

# C: billion laughs.
root_c = os.path.join(work, "c/proj")
laughs = ["        l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
laughs += ["        l%d: &l%d [%s]" % (k, k, ", ".join(["*l%d" % (k - 1)] * 9)) for k in range(1, 12)]
write(os.path.join(root_c, ".dsh/mcp.yml"), "\n".join([BEGIN, "- insert:", "    - config:",
      "        serverName: lol", "        command: x"] + laughs + [END]) + "\n")

# D: 1 MiB ~/.dsh/mcp.json, names colliding on the normalized name (a-1, A_1, ...).
home_d = os.path.join(work, "home-d")
root_d = os.path.join(work, "d/proj")
os.makedirs(root_d)
servers = {}
size = len('{"mcpServers":{}}') + len(',"pad":""')
n = 0
while True:
    name = ("s%d" % (n // 2)) + ("-x" if n % 2 else "X")
    entry = {"command": "npx", "args": ["-y", "pkg-%d" % n]}
    grow = len(json.dumps({name: entry}, separators=(",", ":"))) - 2 + (1 if servers else 0)
    if size + grow > (1 << 20):
        break
    servers[name] = entry
    size += grow
    n += 1
doc = json.dumps({"mcpServers": servers}, separators=(",", ":"))
doc = doc[:-1] + ',"pad":"' + "x" * ((1 << 20) - len(doc) - len(',"pad":""')) + '"}'
assert len(doc.encode()) == 1 << 20
write(os.path.join(home_d, ".dsh/mcp.json"), doc)
print("D servers:", len(servers), file=sys.stderr)
PY

bench_header

cat >"$work/summary.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
states = ", ".join("%s=%s%s(%d)" % (s["scope"], s["state"], "/" + s["reason"] if s["reason"] else "", s["serverCount"]) for s in d["sources"])
active = sum(1 for v in d["servers"] if v.get("active"))
shadowed = sum(1 for v in d["servers"] if v.get("shadowedBy"))
print("  sources: %s\n  servers: %d (active %d, shadowed %d)" % (states, len(d["servers"]), active, shadowed))
PY

bench_measure "A: six layers, human report" "$work/home-a" "$work/a/proj" --client dsh --dsh-profile web
bench_measure "A: six layers, --json" "$work/home-a" "$work/a/proj" --client dsh --dsh-profile web --json
bench_measure "B: 1 MiB YAML managed block, --json" "$work/home-a" "$work/b/proj" --client dsh --json
bench_measure "C: billion laughs (refused: alias-limit), --json" "$work/home-a" "$work/c/proj" --client dsh --json
bench_measure "D: 1 MiB ~/.dsh/mcp.json, normalized-name collisions, --json" "$work/home-d" "$work/d/proj" --client dsh --json
