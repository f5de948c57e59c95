#!/usr/bin/env python3
"""Observes a real, pinned native client (Claude Code or Codex) on this host, scenario by scenario,
and checks a native matrix (harness/matrix/native-claude-code.json, native-codex.json) against what
it actually did. The matrix's `client.id` says which client it is and how its output is read.

What it owns: laying out each scenario's fixture at the box's own paths, running the native client
in one mode (`mcp list`, `mcp get NAME`, headless: Claude Code's `-p`, Codex's `exec`), and
recording what it launched and listed.
What it must never do: execute anything a fixture names except our own tagged sentinel, touch the
network (every run is in a fresh network namespace with only `lo`), or leave anything behind on
the host.

How one run is isolated (Linux, root): `unshare --mount --net --propagation private` starts a
child of this script in a private mount and network namespace. There it brings `lo` up, chroots
into a copy-on-write overlay of the host's root filesystem (its upper layer on a private tmpfs)
and mounts fresh tmpfs over the box's fixture roots (`/work`, `/home/node`, `/etc/claude-code`,
`/etc/codex`),
its private `/tmp` and `/scopebox` (where the sentinel lives), lays the fixture out, starts the
loopback listeners (a stand-in for the model API that answers HTTP 400 at once, and an MCP HTTP
listener that logs every request and answers 404), then runs the client as uid/gid 1000 with the
box's environment. So the exact bytes of the matrix run here as they will in the box — no path is
rebased — and nothing on the host is written, not even a mount point: the host's own
`/etc/claude-code` or `/etc/codex` (present or not, touched by others or not) is never seen.

Witness on the host: every stdio server's command is the sentinel (`scopebox-sentinel`, built
from this repository), whose arguments carry the declaration's tag (`--scopebox-tag=SCOPE/NAME`);
it appends its argv to `/tmp/scopebox-sentinel/fired`. Every http server's URL is
`http://127.0.0.1:PORT/SCOPE/NAME`, so a request to that path is that declaration connecting.

Commands:
  observe.py check MATRIX --client BIN [--sentinel BIN] [--mcpscope BIN] [--repeat N]
                  [--scenario ID]... [--out FILE]
      run every scenario and mode, compare with the matrix's expectations (exit 0 only if every
      one holds) and print a table with the client's median wall time per run.
  observe.py probe MATRIX ... : the same runs, printing the observations only (for exploring).
"""

import argparse
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# The box's fixed places (harness layout and boundary policy).
FIXTURE_ROOTS = ["/work", "/home/node", "/etc/claude-code", "/etc/codex"]
PRIVATE_MOUNTS = FIXTURE_ROOTS + ["/tmp", "/scopebox"]
SENTINEL_PATH = "/scopebox/bin/scopebox-sentinel"
SENTINEL_MARKER = "/tmp/scopebox-sentinel/fired"
BOX_UID = 1000
TAG_RE = re.compile(r"--scopebox-tag=([A-Za-z0-9._/-]+)")
STATUS_WORDS = [
    ("connected", "connected"),
    ("failed", "failed"),
    ("pending approval", "pending"),
    ("needs authentication", "needs-auth"),
    ("disabled", "disabled"),
    ("rejected", "rejected"),
]
CLAUDE_CODE, CODEX = "claude-code", "codex"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- outer: one run per namespace


def run_in_namespace(scratch, job):
    """Run one job (scenario + mode) in a private mount+net namespace; return its raw record."""
    job_path = os.path.join(scratch, "job.json")
    out_path = os.path.join(scratch, "result.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    if os.path.exists(out_path):
        os.unlink(out_path)
    # The copy taken at start: editing this script while a check runs cannot change the runs.
    cmd = ["unshare", "--mount", "--net", "--propagation", "private", "--",
           sys.executable, os.path.join(scratch, "observe.py"), "inner", job_path, out_path]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=job["deadlineS"] + 30)
    if proc.returncode != 0 or not os.path.exists(out_path):
        raise RuntimeError("namespace run failed (exit %d, result %s): %s" % (
            proc.returncode, "written" if os.path.exists(out_path) else "missing",
            proc.stderr.decode(errors="replace")))
    with open(out_path) as f:
        return json.load(f)


# ---------------------------------------------------------------- inner: inside the namespace


def enter_private_root():
    """Inside the fresh namespaces: bring `lo` up, then chroot into a copy-on-write overlay of the
    host's root filesystem (upper layer on a private tmpfs), so the box's paths can be created and
    mounted over without touching the host — not even an empty mount point."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    stage = "/tmp"
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0700", "scopebox-stage", stage], check=True)
    for d in ("upper", "work", "root"):
        os.mkdir(os.path.join(stage, d))
    root = os.path.join(stage, "root")
    subprocess.run(["mount", "-t", "overlay", "scopebox-root", "-o",
                    "lowerdir=/,upperdir=%s/upper,workdir=%s/work" % (stage, stage), root], check=True)
    for sub in ("/proc", "/dev", "/sys"):
        subprocess.run(["mount", "--rbind", sub, root + sub], check=True)
    os.chroot(root)
    os.chdir("/")
    for p in PRIVATE_MOUNTS:
        os.makedirs(p, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=256m", "scopebox-native", p], check=True)
    os.chmod("/tmp", 0o1777)
    for p in FIXTURE_ROOTS:
        os.chown(p, BOX_UID, BOX_UID)


def lay_out(fixture):
    """Write the fixture entries (the matrix's Entry kinds), owned by uid 1000, modes last."""
    import base64
    modes = []
    for e in fixture:
        path = e["path"]
        parent = os.path.dirname(path)
        make_parents(parent)
        kind = e["kind"]
        if kind == "dir":
            os.makedirs(path, exist_ok=True)
            os.chown(path, BOX_UID, BOX_UID)
            modes.append((path, int(e.get("mode", "0755"), 8)))
        elif kind == "file":
            if "text" in e:
                data = e["text"].encode()
            else:
                data = base64.b64decode(e["base64"])
            with open(path, "wb") as f:
                f.write(data)
            os.chown(path, BOX_UID, BOX_UID)
            modes.append((path, int(e.get("mode", "0644"), 8)))
        elif kind == "symlink":
            os.symlink(e["target"], path)
            os.lchown(path, BOX_UID, BOX_UID)
        else:
            raise ValueError("unsupported fixture kind %r" % kind)
    for path, mode in sorted(modes, key=lambda m: -m[0].count("/")):
        os.chmod(path, mode)


def make_parents(path):
    if os.path.isdir(path):
        return
    make_parents(os.path.dirname(path))
    os.mkdir(path, 0o755)
    os.chown(path, BOX_UID, BOX_UID)


class Listener(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port, role, status, log):
        self.role, self.status, self.log = role, status, log
        super().__init__(("127.0.0.1", port), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else b""
        s = self.server
        s.log.append({"t": time.monotonic(), "role": s.role, "port": s.server_port,
                      "method": self.command, "path": self.path, "bodyBytes": len(body)})
        if s.role == "model-api":
            payload = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                              "message": "scopebox stand-in: no model here"}}).encode()
        else:
            payload = b'{"error":"scopebox listener: not an MCP server"}'
        self.send_response(s.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_HEAD = handle_any

    def log_message(self, *args):
        pass


def start_listeners(job):
    log = []
    servers = [Listener(job["modelApi"]["port"], "model-api", job["modelApi"]["status"], log)]
    for port in job["listeners"]:
        servers.append(Listener(port, "mcp-http", 404, log))
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    return servers, log


def digest_tree(roots):
    """path -> kind/digest of everything under the roots (to see what the client wrote)."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in sorted(dirnames + filenames):
                p = os.path.join(dirpath, name)
                if os.path.islink(p):
                    out[p] = "symlink:" + os.readlink(p)
                elif os.path.isdir(p):
                    out[p] = "dir"
                else:
                    with open(p, "rb") as f:
                        out[p] = "file:" + sha256(f.read())
    return out


def inner(job_path, out_path):
    with open(job_path) as f:
        job = json.load(f)
    # Opened before the chroot: the result goes to the host's scratch directory.
    result_file = open(out_path, "w")
    enter_private_root()
    os.makedirs("/scopebox/bin")
    shutil.copy(job["sentinel"], SENTINEL_PATH)
    os.chmod(SENTINEL_PATH, 0o755)
    lay_out(job["fixture"])
    before = digest_tree(FIXTURE_ROOTS)
    servers, http_log = start_listeners(job)
    env = dict(job["env"])
    inventory = None
    if job.get("mcpscope"):
        p = subprocess.run([job["mcpscope"], job["root"], "--json", "--client", job["clientId"]], cwd=job["cwd"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, user=BOX_UID, group=BOX_UID,
                           extra_groups=[], timeout=30)
        inventory = {"exitCode": p.returncode, "stdout": p.stdout.decode(errors="replace"),
                     "stderr": p.stderr.decode(errors="replace")}
    argv = [job["client"]] + job["args"]
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=job["cwd"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, user=BOX_UID, group=BOX_UID, extra_groups=[],
                            start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=job["deadlineS"])
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    elapsed = time.monotonic() - start
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything the client left running
    except ProcessLookupError:
        pass
    time.sleep(0.05)
    for s in servers:
        s.shutdown()
    fired = []
    if os.path.exists(SENTINEL_MARKER):
        with open(SENTINEL_MARKER, errors="replace") as f:
            fired = [line.rstrip("\n") for line in f]
    after = digest_tree(FIXTURE_ROOTS)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    record = {
        "exitCode": proc.returncode, "timedOut": timed_out, "seconds": round(elapsed, 4),
        "stdout": stdout.decode(errors="replace"), "stderr": stderr.decode(errors="replace"),
        "sentinel": fired,
        "http": [{k: v for k, v in e.items() if k != "t"} for e in http_log],
        "changedPaths": changed,
        "inventory": inventory,
    }
    with result_file:
        json.dump(record, result_file)


# ---------------------------------------------------------------- reading what the client did


def launched_tags(record, http_port_set):
    """The tags that fired (stdio sentinels) or connected (http paths), sorted, unique, with counts."""
    counts = {}
    for line in record["sentinel"]:
        m = TAG_RE.search(line)
        tag = m.group(1) if m else "<untagged>"
        counts[tag] = counts.get(tag, 0) + 1
    for e in record["http"]:
        if e["role"] == "mcp-http" and e["port"] in http_port_set:
            tag = request_tag(e["path"])
            if tag is not None:
                counts[tag] = counts.get(tag, 0) + 1
    return counts


WELL_KNOWN = re.compile(r"^(?:/\.well-known/[^/]+)?(?P<tag>/.*?)?(?:/\.well-known/[^/]+)?$")


def request_tag(path):
    """The declaration a request to an MCP listener is for: its path without the query, less an
    OAuth discovery prefix (`/.well-known/oauth-protected-resource/TAG`, as RFC 9728/8414 put
    the resource's path after the well-known name) or suffix (`/TAG/.well-known/...`). A bare
    `/.well-known/NAME` names the origin only (every server shares the listener): None, not a
    launch of any one declaration (it is still in the raw record)."""
    p = path.split("?", 1)[0]
    m = WELL_KNOWN.match(p)
    tag = (m.group("tag") or "") if m else p
    tag = tag.strip("/")
    return tag or None


def normalize_status(text):
    t = text.lower()
    for word, status in STATUS_WORDS:
        if word in t:
            return status
    return "other:" + text.strip()


LIST_LINE = re.compile(r"^(?P<name>[^\s:][^:]*): (?P<target>.*) - (?P<status>\S+ .*)$")
GET_FIELD = re.compile(r"^  (?P<key>[A-Za-z ]+): (?P<value>.*)$")


def tag_in(text):
    m = TAG_RE.search(text)
    if m:
        return m.group(1)
    m = re.search(r"https?://127\.0\.0\.1:\d+/([A-Za-z0-9._/-]+)", text)
    return m.group(1) if m else None


def listed_servers(mode, record, client=CLAUDE_CODE):
    """What the client showed: Claude Code's list and get from their text, headless from
    system/init; Codex's from `--json` (below)."""
    if client == CODEX:
        return codex_listed(mode, record)
    out = []
    if mode == "list":
        for line in record["stdout"].splitlines():
            m = LIST_LINE.match(line)
            if m:
                out.append({"name": m.group("name"), "tag": tag_in(m.group("target")),
                            "status": normalize_status(m.group("status"))})
    elif mode == "get":
        lines = record["stdout"].splitlines()
        if lines and lines[0].endswith(":") and not lines[0].startswith(" "):
            entry = {"name": lines[0][:-1], "tag": None, "status": None, "scope": None}
            for line in lines[1:]:
                m = GET_FIELD.match(line)
                if not m:
                    continue
                key, value = m.group("key"), m.group("value")
                if key == "Status":
                    entry["status"] = normalize_status(value)
                elif key == "Scope":
                    entry["scope"] = value
                elif key in ("Args", "URL", "Command") and entry["tag"] is None:
                    entry["tag"] = tag_in(value)
            out.append(entry)
    elif mode == "headless":
        first = record["stdout"].splitlines()[:1]
        if first:
            try:
                init = json.loads(first[0])
            except ValueError:
                init = {}
            if init.get("type") == "system" and init.get("subtype") == "init":
                for s in init.get("mcp_servers", []):
                    out.append({"name": s.get("name"), "source": s.get("source"), "status": s.get("status")})
    return out


def codex_entry(e):
    """One server of `codex mcp list --json` / `mcp get --json`: name, tag (from the stdio
    args or the http URL) and status (`enabled`, or `disabled` with its reason)."""
    t = e.get("transport") or {}
    target = " ".join(t.get("args") or []) if t.get("type") == "stdio" else (t.get("url") or "")
    status = "enabled" if e.get("enabled") else "disabled"
    if not e.get("enabled") and e.get("disabled_reason"):
        status = "disabled:" + str(e["disabled_reason"])
    return {"name": e.get("name"), "tag": tag_in(target), "status": status}


def codex_listed(mode, record):
    """Codex: `mcp list --json` is an array of servers, `mcp get --json NAME` one object (nothing
    on stdout when the name is unknown); `exec --json` lists no servers (its events name none),
    so the headless listing is always empty and only the launched set speaks."""
    if mode == "headless":
        return []
    try:
        doc = json.loads(record["stdout"]) if record["stdout"].strip() else None
    except ValueError:
        return [{"name": "<stdout is not JSON>", "tag": None, "status": "other:unparsed"}]
    if doc is None:
        return []
    items = doc if isinstance(doc, list) else [doc]
    return [codex_entry(e) for e in items if isinstance(e, dict)]


# ---------------------------------------------------------------- the matrix


def mode_args(matrix, run):
    if "args" in run:
        return run["args"]
    return [a.replace("{name}", run.get("name", "")) for a in matrix["modes"][run["mode"]]]


def jobs_of(matrix, scenario, tools):
    env = dict(matrix["environment"])
    env.update(scenario.get("env", {}))
    for run in scenario["runs"]:
        yield run, {
            "client": tools["client"], "clientId": matrix["client"]["id"], "sentinel": tools["sentinel"],
            "mcpscope": tools.get("mcpscope"),
            "args": mode_args(matrix, run), "env": env,
            "cwd": scenario.get("cwd", matrix["defaults"]["cwd"]),
            "root": scenario.get("root", matrix["defaults"]["root"]),
            "fixture": scenario["fixture"], "modelApi": matrix["modelApi"],
            "listeners": matrix["listeners"], "deadlineS": matrix["defaults"]["deadlineS"],
        }


def predicted_launch(scenario, run):
    """The launched set the matrix's per-declaration predictions imply for this run's mode, and
    the tags whose prediction is "unknown" (no claim either way). `get NAME` launches what the
    `get` prediction says of that name (Codex), else what `list` would launch of it (Claude Code)."""
    mode = run["mode"]
    tags, unknown = set(), set()
    for d in scenario["declarations"]:
        p = d.get("predicted")
        if not p:
            continue
        if mode == "get":
            if d["name"] != run.get("name"):
                continue
            p = p.get("get", p["list"])
        else:
            p = p[mode]
        if p == "launch":
            tags.add(d["tag"])
        elif p == "unknown":
            unknown.add(d["tag"])
    return tags, unknown


HEADLESS_SOURCE_SCOPE = {"enterprise": "managed"}


def compare(matrix, scenario, run, record):
    """The problems with one run: the client's facts against the expectations, then the
    differential rules against the predictions (what the wave-2 judge does with mcpscope's real
    inventory): no launched or listed server without a row, and the launched set equal to what the
    predictions imply — each exception a named divergence that really diverges."""
    problems = []
    mode = run["mode"]
    expect = run["expect"]
    launched = launched_tags(record, set(matrix["listeners"]))
    listed = listed_servers(mode, record, matrix["client"]["id"])
    if record["timedOut"]:
        problems.append("timed out")
    if record["exitCode"] != expect["exitCode"]:
        problems.append("exit %s, expected %s" % (record["exitCode"], expect["exitCode"]))
    if sorted(launched) != sorted(expect["launched"]):
        problems.append("launched %s, expected %s" % (sorted(launched), sorted(expect["launched"])))
    if listed != expect["listed"]:
        problems.append("listed %s, expected %s" % (json.dumps(listed), json.dumps(expect["listed"])))
    decls = {d["tag"]: d for d in scenario["declarations"]}
    rows = {t for t, d in decls.items() if d.get("predicted")}
    named = [d for d in scenario.get("divergences", []) if mode in d["modes"]]
    missed_ok = {d["tag"] for d in named if d["kind"] == "missed"}
    for tag in sorted(launched):
        if tag not in decls:
            problems.append("launched %s, which no declaration has" % tag)
        elif tag not in rows and tag not in missed_ok:
            problems.append("launched %s, which has no inventory row and no named divergence" % tag)
    for entry in listed:
        if "tag" in entry:
            candidates = {entry["tag"]} if entry["tag"] else set()
        else:
            scope = HEADLESS_SOURCE_SCOPE.get(entry["source"], entry["source"])
            candidates = {t for t, d in decls.items() if d["name"] == entry["name"] and d["scope"] == scope}
        if not candidates & (rows | missed_ok):
            problems.append("listed %s, which has no inventory row and no named divergence" % json.dumps(entry))
    predicted, unknown = predicted_launch(scenario, run)
    diverging = {d["tag"] for d in named}
    actual = set(launched)
    wrong = (predicted ^ actual) - diverging - unknown
    if wrong:
        problems.append("predictions imply %s, client launched %s (unexplained: %s)"
                        % (sorted(predicted), sorted(actual), sorted(wrong)))
    stale = {t for t in diverging if (t in predicted) == (t in actual)}
    if stale:
        problems.append("named divergence(s) %s did not diverge" % sorted(stale))
    return problems, launched, listed


def inventory_misses(scenario, run, record, launched, listed):
    """With `--mcpscope`: the launched or listed declarations the real inventory of the same tree
    has no row for (matched by scope and name), less the named `missed` divergences — the
    differential judge's hard rule, previewed against today's mcpscope. Reported, not judged."""
    inv = record.get("inventory")
    if not inv:
        return None
    try:
        doc = json.loads(inv["stdout"])
    except ValueError:
        return ["inventory output is not JSON (exit %s)" % inv["exitCode"]]
    rows = {(s.get("scope"), s.get("name")) for s in doc.get("servers", [])}
    decls = {d["tag"]: d for d in scenario["declarations"]}
    named = {d["tag"] for d in scenario.get("divergences", [])
             if run["mode"] in d["modes"] and d["kind"] == "missed"}
    def covered(tag):
        d = decls.get(tag)
        return d is not None and ((d["scope"], d["name"]) in rows or tag in named)

    out = []
    for tag in sorted(launched):
        if not covered(tag):
            out.append("mcpscope has no row for launched %s" % tag)
    for e in listed:
        if e.get("tag"):
            candidates = {e["tag"]}
        else:
            scope = HEADLESS_SOURCE_SCOPE.get(e.get("source"), e.get("source"))
            candidates = {t for t, d in decls.items() if d["name"] == e["name"] and d["scope"] == scope}
        if not any(covered(t) for t in candidates):
            out.append("mcpscope has no row for listed %s" % json.dumps(e))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("check", "probe"):
        p = sub.add_parser(name)
        p.add_argument("matrix")
        p.add_argument("--client", "--claude", dest="client", required=True,
                       help="the native client binary (from `scopebox native fetch`)")
        p.add_argument("--sentinel", help="scopebox-sentinel binary [default: build it with cargo]")
        p.add_argument("--mcpscope", help="also run this mcpscope on each tree (recorded, not judged)")
        p.add_argument("--repeat", type=int, default=1, help="runs per scenario and mode (timing: median)")
        p.add_argument("--scenario", action="append", help="only these scenario ids")
        p.add_argument("--out", help="write every raw record and verdict here (JSON)")
    i = sub.add_parser("inner")
    i.add_argument("job")
    i.add_argument("out")
    args = ap.parse_args()
    if args.command == "inner":
        inner(args.job, args.out)
        return 0
    return outer(args)


def build_sentinel():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run(["cargo", "build", "-q", "-p", "scopebox-harness", "--bin", "scopebox-sentinel"], cwd=repo,
                   check=True)
    return os.path.join(repo, "target", "debug", "scopebox-sentinel")


def outer(args):
    if os.geteuid() != 0:
        print("observe: needs root (private mount and network namespaces, uid 1000 runs)", file=sys.stderr)
        return 2
    with open(args.matrix, "rb") as f:
        matrix_bytes = f.read()
    matrix = json.loads(matrix_bytes)
    scratch = tempfile.mkdtemp(prefix="scopebox-native-observe-", dir="/var/tmp")
    tools = {}
    # Everything the namespace needs must live outside the private mounts.
    # uid 1000 must reach them too: a world-readable scratch directory, hard links where possible.
    os.chmod(scratch, 0o755)
    shutil.copy(os.path.abspath(__file__), os.path.join(scratch, "observe.py"))
    for key, path in (("client", args.client), ("sentinel", args.sentinel or build_sentinel()),
                      ("mcpscope", args.mcpscope)):
        if path:
            dest = os.path.join(scratch, key)
            try:
                os.link(path, dest)
            except OSError:
                shutil.copy(path, dest)
            if os.stat(dest).st_mode & 0o005 != 0o005:
                # A copy (a hard link to a read-only cache entry already has r-x for all).
                os.chmod(dest, 0o755)
            tools[key] = dest
    results, failures, total = [], 0, 0
    try:
        for scenario in matrix["scenarios"]:
            if args.scenario and scenario["id"] not in args.scenario:
                continue
            for run, job in jobs_of(matrix, scenario, tools):
                records = [run_in_namespace(scratch, job) for _ in range(args.repeat)]
                seconds = statistics.median(r["seconds"] for r in records)
                label = run["mode"] + (" " + run["name"] if run["mode"] == "get" else "")
                total += 1
                if args.command == "check":
                    problems = []
                    for r in records:
                        p, launched, listed = compare(matrix, scenario, run, r)
                        problems += [x for x in p if x not in problems]
                    ok = not problems
                    failures += 0 if ok else 1
                    misses = inventory_misses(scenario, run, records[0], launched, listed)
                    note = "" if not misses else "  [inventory: %s]" % "; ".join(misses)
                    print("%-4s %-44s %-16s %6.3fs %s%s" % ("ok" if ok else "FAIL", scenario["id"], label, seconds,
                                                            "; ".join(problems), note))
                else:
                    r = records[0]
                    launched = launched_tags(r, set(matrix["listeners"]))
                    listed = listed_servers(run["mode"], r, matrix["client"]["id"])
                    declared = {e["path"] for e in scenario["fixture"]}
                    print("%-44s %-16s exit=%s %6.3fs launched=%s listed=%s rewrote=%s" % (
                        scenario["id"], label, r["exitCode"], seconds, json.dumps(launched), json.dumps(listed),
                        [p for p in r["changedPaths"] if p in declared]))
                    if r["exitCode"] not in (0, 1) or (run["mode"] != "headless" and r["stderr"].strip()):
                        print("    stderr: " + r["stderr"].strip()[:600].replace("\n", "\n    "))
                    ok = True
                results.append({"scenario": scenario["id"], "mode": run["mode"], "name": run.get("name"),
                                "ok": ok, "medianSeconds": seconds, "seconds": [r["seconds"] for r in records],
                                "records": records})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"matrixSha256": sha256(matrix_bytes), "clientSha256": file_sha256(args.client),
                       "results": results}, f, indent=1)
    if args.command == "check":
        print("%d of %d runs as the matrix says" % (total - failures, total))
    return 1 if failures else 0


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


if __name__ == "__main__":
    sys.exit(main())
