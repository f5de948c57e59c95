#!/usr/bin/env python3
"""Runs a candidate matrix's cases against a local mcpscope binary with the box's own paths
(/work, /home/node, /etc/claude-code, ...), without Docker: in a private mount and network
namespace over a copy-on-write overlay of the host root (harness/native/observe.py's isolation;
nothing on the host is written), as uid 1000, checking what the judge checks per case (exit
code, JSON facts, text facts, canaries, the sentinel marker). A quick check for cases whose
facts spell container paths (project keys, approval files), which the rebased host tests skip;
the judge of record is still scopebox_schema::judge in the box. Root only:

  python3 harness/matrix/check-in-namespace.py MATRIX MCPSCOPE [ID-PREFIX]
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native"))
import observe  # noqa: E402

FIXTURE_ROOTS = ["/work", "/home/node", "/etc/claude-code", "/etc/codex", "/etc/gemini-cli"]


def pointer(doc, p):
    if p == "":
        return True, doc
    cur = doc
    for tok in p.split("/")[1:]:
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict):
            if tok not in cur:
                return False, None
            cur = cur[tok]
        elif isinstance(cur, list):
            if not tok.isdigit() or int(tok) >= len(cur):
                return False, None
            cur = cur[int(tok)]
        else:
            return False, None
    return True, cur


def clear():
    for r in FIXTURE_ROOTS:
        subprocess.run(["sh", "-c", "chmod -R u+rwx %s 2>/dev/null; rm -rf %s/* %s/.[!.]* 2>/dev/null; true" % (r, r, r)])


def lay_out(fixture):
    modes = []
    for e in fixture:
        path = e["path"]
        observe.make_parents(os.path.dirname(path))
        k = e["kind"]
        if k == "dir":
            os.makedirs(path, exist_ok=True)
            modes.append((path, int(e.get("mode", "0755"), 8)))
        elif k == "file":
            if "text" in e:
                data = e["text"].encode()
            elif "base64" in e:
                data = base64.b64decode(e["base64"])
            else:
                f = e["fill"]
                data = f["prefix"].encode()
                data += bytes([f["byte"]]) * (f["size"] - len(data))
            with open(path, "wb") as fh:
                fh.write(data)
            modes.append((path, int(e.get("mode", "0644"), 8)))
        elif k == "symlink":
            os.symlink(e["target"], path)
        elif k == "fifo":
            os.mkfifo(path)
            modes.append((path, int(e.get("mode", "0644"), 8)))
    for path, mode in sorted(modes, key=lambda m: -m[0].count("/")):
        os.chmod(path, mode)
    for r in FIXTURE_ROOTS:
        subprocess.run(["chown", "-R", "-h", "1000:1000", r])


def check(case, canaries, binary):
    clear()
    lay_out(case["fixture"])
    env = {"HOME": "/home/node", "PATH": "/scopebox/bin", "LANG": "C.UTF-8"}
    env.update(case.get("env", {}))

    def drop():
        os.setgid(1000)
        os.setuid(1000)

    p = subprocess.run([binary] + case["args"], cwd=case.get("cwd", "/work"), env=env, preexec_fn=drop,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, stdin=subprocess.DEVNULL)
    ex, out, err = case["expect"], p.stdout, p.stderr
    bad = []
    if p.returncode != ex["exitCode"]:
        bad.append("exit %d != %d" % (p.returncode, ex["exitCode"]))
    if ex.get("json"):
        try:
            doc = json.loads(out)
        except ValueError:
            bad.append("stdout is not JSON")
            doc = None
        for f in ex["json"] if doc is not None else []:
            found, v = pointer(doc, f["pointer"])
            if "equals" in f and (not found or v != f["equals"]):
                bad.append("%s = %r, want %r" % (f["pointer"], v if found else "<absent>", f["equals"]))
            if "length" in f and (not found or len(v) != f["length"]):
                bad.append("%s length %r, want %d" % (f["pointer"], len(v) if found else None, f["length"]))
            if "absent" in f and found == f["absent"]:
                bad.append("%s absent=%s, want %s" % (f["pointer"], not found, f["absent"]))
    for s in ex.get("stdoutContains", []):
        if s.encode() not in out:
            bad.append("stdout lacks %r" % s)
    for s in ex.get("stdoutNotContains", []):
        if s.encode() in out:
            bad.append("stdout has %r" % s)
    for s in ex.get("stderrContains", []):
        if s.encode() not in err:
            bad.append("stderr lacks %r" % s)
    if ex.get("stdoutEmpty") and out:
        bad.append("stdout not empty")
    if ex.get("stderrEmpty") and err:
        bad.append("stderr not empty: %r" % err[:200])
    for c in canaries:
        if c.encode() in out or c.encode() in err:
            bad.append("canary %s leaked" % c)
    if os.path.exists("/tmp/scopebox-sentinel/fired"):
        bad.append("sentinel fired")
    return bad


def main():
    if sys.argv[1] == "inner":
        job = json.load(open(sys.argv[2]))
        binary_bytes = open(job["binary"], "rb").read()
        result_file = open(sys.argv[3], "w")
        observe.enter_private_root()
        for r in ["/etc/codex", "/etc/gemini-cli"]:
            os.makedirs(r, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "scopebox-native", r], check=True)
        os.makedirs("/scopebox/bin", exist_ok=True)
        with open("/scopebox/bin/mcpscope-under-check", "wb") as f:
            f.write(binary_bytes)
        os.chmod("/scopebox/bin/mcpscope-under-check", 0o755)
        m = job["m"]
        results = {}
        for case in m["cases"]:
            if not case["id"].startswith(job["prefix"]):
                continue
            results[case["id"]] = check(case, m["canaries"], "/scopebox/bin/mcpscope-under-check")
        json.dump(results, result_file)
        result_file.close()
        return
    matrix, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    prefix = sys.argv[3] if len(sys.argv) > 3 else ""
    job = {"m": json.load(open(matrix)), "binary": binary, "prefix": prefix}
    scratch = tempfile.mkdtemp(prefix="scopebox-matrix-check.")
    json.dump(job, open(scratch + "/job.json", "w"))
    outp = scratch + "/result.json"
    if os.path.exists(outp):
        os.unlink(outp)
    proc = subprocess.run(["unshare", "--mount", "--net", "--propagation", "private", "--", sys.executable,
                           os.path.abspath(__file__), "inner", scratch + "/job.json", outp],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not os.path.exists(outp):
        print(proc.stderr.decode())
        shutil.rmtree(scratch)
        sys.exit(2)
    res = json.load(open(outp))
    shutil.rmtree(scratch)
    failed = {k: v for k, v in res.items() if v}
    for k, v in failed.items():
        print("FAIL", k)
        for b in v:
            print("   ", b)
    print("%d cases, %d failed" % (len(res), len(failed)))
    sys.exit(1 if failed else 0)


main()
