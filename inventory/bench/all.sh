#!/usr/bin/env bash
# mcpscope --client all, side by side with snyk-agent-scan inspect: figures, not a pass/fail test.
#
#   bash inventory/bench/all.sh [SNYK_AGENT_SCAN]   # needs hyperfine, GNU time, python3
#
# Builds the static release binary exactly as the image does and a scratch tree with every
# client's files present (project and home: two or three servers each, 80 in all, every stdio
# command a sentinel script that leaves a marker if anything runs it), then measures:
#
#   A. mcpscope <root> --client all (terminal report and --json): median wall time including
#      process start (hyperfine -N), peak RSS.  Target: median <= 5 ms.
#   B. snyk-agent-scan inspect --json with HOME = the scratch home (0.6.9 from PyPI; give the
#      executable, default `snyk-agent-scan` on PATH). It reads only home-directory configs and
#      takes no project root. It runs with stdin from /dev/null (so its consent prompt to start
#      servers is declined), without --dangerously-run-mcp-servers, in a private network
#      namespace when `unshare -n` works (no network at all), and the sentinel marker is checked
#      afterwards: the script stops if anything was executed.
#
# The system files of Codex and Gemini CLI (/etc/codex, /etc/gemini-cli) are not planted: the
# binary reads the fixed paths, which this script never touches.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup mcpscope-bench-all
scan=${1:-snyk-agent-scan}
command -v "$scan" >/dev/null || { echo "missing $scan (python3 -m venv v && v/bin/pip install snyk-agent-scan==0.6.9)" >&2; exit 2; }

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
home, root = work + "/home", work + "/proj"
marker = work + "/SENTINEL-RAN"
sentinel = work + "/bin/sentinel"
os.makedirs(work + "/bin")
with open(sentinel, "w") as f:
    f.write("#!/bin/sh\ntouch '%s'\n" % marker)
os.chmod(sentinel, 0o755)

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def servers(tag, url_key="url"):
    return {tag + "-a": {"command": sentinel, "args": ["--x"], "env": {"K": "v"}},
            tag + "-b": {"command": sentinel},
            tag + "-r": {url_key: "https://example.invalid/mcp", "headers": {"H": "v"}}}

code_user = ".config/Code/User/globalStorage"
for path, key, tag, url_key in [
    (root + "/.mcp.json", "mcpServers", "cc", "url"),
    (home + "/.claude.json", "mcpServers", "ccu", "url"),
    (root + "/.vscode/mcp.json", "servers", "vs", "url"),
    (home + "/.config/Code/User/mcp.json", "servers", "vsu", "url"),
    (root + "/.cursor/mcp.json", "mcpServers", "cu", "url"),
    (home + "/.cursor/mcp.json", "mcpServers", "cuu", "url"),
    (root + "/.gemini/settings.json", "mcpServers", "ge", "httpUrl"),
    (home + "/.gemini/settings.json", "mcpServers", "geu", "httpUrl"),
    (home + "/.codeium/windsurf/mcp_config.json", "mcpServers", "ws", "serverUrl"),
    (home + "/.config/Claude/claude_desktop_config.json", "mcpServers", "cd", "url"),
    (root + "/.kiro/settings/mcp.json", "mcpServers", "ki", "url"),
    (home + "/.kiro/settings/mcp.json", "mcpServers", "kiu", "url"),
    (root + "/.amazonq/mcp.json", "mcpServers", "aq", "url"),
    (home + "/.aws/amazonq/mcp.json", "mcpServers", "aqu", "url"),
    (home + "/" + code_user + "/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "mcpServers", "cl", "url"),
    (root + "/.roo/mcp.json", "mcpServers", "ro", "url"),
    (home + "/" + code_user + "/rooveterinaryinc.roo-cline/settings/mcp_settings.json", "mcpServers", "rou", "url"),
    (root + "/.zed/settings.json", "context_servers", "ze", "url"),
    (home + "/.config/zed/settings.json", "context_servers", "zeu", "url"),
]:
    write(path, json.dumps({key: servers(tag, url_key)}, indent=2))
write(home + "/.codex/config.toml", '[projects."%s"]\ntrust_level = "trusted"\n' % root
      + "".join('[mcp_servers.cx-%d]\ncommand = "%s"\nargs = ["--x"]\n' % (i, sentinel) for i in range(3)))
write(root + "/.codex/config.toml", "".join('[mcp_servers.cxp-%d]\ncommand = "%s"\n' % (i, sentinel) for i in range(2)))
oc = {"mcp": {"oc-%d" % i: {"type": "local", "command": [sentinel, "--x"]} for i in range(3)}}
write(root + "/opencode.json", json.dumps(oc))
write(home + "/.config/opencode/opencode.json", json.dumps(oc))
write(home + "/.continue/config.yaml", "name: b\nmcpServers:\n" + "".join(
    "  - name: co-%d\n    command: %s\n" % (i, sentinel) for i in range(3)))
write(root + "/.continue/mcpServers/b.yaml", "mcpServers:\n  - name: cob\n    command: %s\n" % sentinel)
write(home + "/.config/goose/config.yaml", "extensions:\n" + "".join(
    "  go-%d:\n    type: stdio\n    cmd: %s\n    enabled: true\n" % (i, sentinel) for i in range(3)))
for rel in ["CLAUDE.md", "AGENTS.md", "GEMINI.md"]:
    write(root + "/" + rel, "x\n")

with open(work + "/summary.py", "w") as f:
    f.write('''import json, sys
d = json.load(sys.stdin)
srv = d["servers"]
bad = [s for s in d["sources"] if s["state"] not in ("present", "missing")]
print("  inventory: client %s, %d sources (%d present), %d servers, %d broken, complete=%s"
      % (d["client"], len(d["sources"]), sum(s["state"] == "present" for s in d["sources"]),
         len(srv), len(bad), d["inventoryComplete"]))
''')
PY

root="$work/proj"
home="$work/home"
bench_header "tree: $(find "$work" -type f | wc -l) files, every client's project and home files present"
bench_measure "A. mcpscope --client all (terminal report)" "$home" "$root" --client all
bench_measure "A. mcpscope --client all --json" "$home" "$root" --client all --json
[ -e "$work/SENTINEL-RAN" ] && { echo "mcpscope executed a configured command" >&2; exit 1; }

isolate=()
if unshare -n true 2>/dev/null; then
    isolate=(unshare -n)
fi
echo "== B. $scan inspect --json (HOME=scratch home, stdin /dev/null, ${isolate[*]:-network not isolated})"
"$scan" --help >/dev/null 2>&1 || true
HOME="$home" "${isolate[@]}" "$scan" inspect --json </dev/null >"$work/snyk.json" 2>"$work/snyk.err" || true
python3 - "$work/snyk.json" "$work/snyk.err" <<'PY' || echo "  (no JSON on stdout; stderr: $(head -c 300 "$work/snyk.err"))"
import json, sys
d = json.load(open(sys.argv[1]))  # {client dir: {client, servers: [...], error}}
servers = sum(len(e.get("servers") or []) for e in d.values())
declined = sum(1 for e in d.values() for s in e.get("servers") or []
               if (s.get("error") or {}).get("category") == "user_declined")
print("  snyk-agent-scan: %d clients, %d servers (%d not started: consent declined)" % (len(d), servers, declined))
for e in sorted(d.values(), key=lambda e: e["client"]):
    print("    %-16s %2d servers%s" % (e["client"], len(e.get("servers") or []),
                                       "  error: " + e["error"]["category"] if e.get("error") else ""))
err = open(sys.argv[2]).read()
print("  its stderr shows command strings: %s" % ("command:" in err))
PY
[ -e "$work/SENTINEL-RAN" ] && { echo "snyk-agent-scan executed a configured command: stopping" >&2; exit 1; }
# hyperfine gives every run /dev/null as stdin: the consent prompt is declined each time.
HOME="$home" "${isolate[@]}" hyperfine -N --warmup 2 --runs "${SNYK_RUNS:-15}" --style none -i \
    --export-json "$work/h.json" "$scan inspect --json" >/dev/null
python3 "$work/median.py" "$work/h.json"
[ -e "$work/SENTINEL-RAN" ] && { echo "snyk-agent-scan executed a configured command" >&2; exit 1; }
echo "  sentinel marker: absent (nothing was executed)"
