"""What the three matrix generators share (generate-claude-code.py, generate-vscode.py,
generate-dsh.py): the canary registry, the fixture entry builders, the canary-named symlinks
to the sentinel, the JSON fact builders, case assembly, and writing the matrix to stdout.

The profile-specific parts (server sets, source and row facts, the cases themselves) stay in
each generator. Everything here is deterministic (no clocks, no randomness, insertion-ordered
dicts), so each generator still reproduces its committed JSON byte for byte:
`python3 harness/matrix/generate-X.py | cmp - harness/matrix/X.json`.
"""

import base64
import json
import sys

SENTINEL = "/scopebox/bin/scopebox-sentinel"
ROOT = "/work/proj"
HOME = "/home/node"
MIB = 1024 * 1024

# Registered in first-use order; the matrix lists them in that order.
CANARIES = []
CASES = []


def canary(text):
    """Register `text` as a canary (once) and return it."""
    if text not in CANARIES:
        CANARIES.append(text)
    return text


def sentinel_link(name):
    """The path of a canary-named symlink to the sentinel (`name` is registered): the command
    string carries the canary and still executes the sentinel if anything runs it."""
    return "%s/bin/%s" % (HOME, canary(name))


def sentinel_links(paths):
    """Fixture symlinks to the sentinel at each of `paths`."""
    return [symlink(p, SENTINEL) for p in paths]


# ---- fixture entries ----


def text(path, value, mode=None):
    e = {"kind": "file", "path": path, "text": value}
    if mode:
        e["mode"] = mode
    return e


def raw(path, data, mode=None):
    e = {"kind": "file", "path": path, "base64": base64.b64encode(data).decode()}
    if mode:
        e["mode"] = mode
    return e


def fill(path, prefix, size):
    """`prefix`, then spaces up to exactly `size` bytes (valid JSON stays valid)."""
    return {"kind": "file", "path": path, "fill": {"prefix": prefix, "byte": 32, "size": size}}


def d(path, mode=None):
    e = {"kind": "dir", "path": path}
    if mode:
        e["mode"] = mode
    return e


def symlink(path, target):
    return {"kind": "symlink", "path": path, "target": target}


def fifo(path):
    return {"kind": "fifo", "path": path}


def js(v):
    """Compact JSON, as the fixtures are written."""
    return json.dumps(v, separators=(",", ":"))


# ---- facts ----


def eq(pointer, value):
    return {"pointer": pointer, "equals": value}


def length(pointer, n):
    return {"pointer": pointer, "length": n}


def absent(pointer):
    return {"pointer": pointer, "absent": True}


def head(client, complete):
    """The document header every inventory has."""
    return [eq("/schemaVersion", 1), eq("/client", client), eq("/tool/name", "mcpscope"),
            eq("/inventoryComplete", complete)]


def incomplete_kwargs(exit_code):
    """What stderr shows: exit 1 announces an incomplete inventory, exit 0 is silent."""
    return {"stderr_contains": ["inventory incomplete"]} if exit_code == 1 else {"stderr_empty": True}


# ---- cases ----

TEXT_KEYS = {"stdout_contains": "stdoutContains", "stdout_not_contains": "stdoutNotContains",
             "stderr_contains": "stderrContains", "stdout_empty": "stdoutEmpty", "stderr_empty": "stderrEmpty"}


def case(id, client, description, args, fixture, exit_code, json_facts=None, cwd=None, env=None, deadline=None,
         **text_facts):
    """Register one case; `text_facts` are the stdout/stderr expectations by their Python names."""
    c = {"id": id, "client": client, "description": description, "args": args}
    if cwd:
        c["cwd"] = cwd
    if env:
        c["env"] = env
    c["fixture"] = fixture
    expect = {"exitCode": exit_code}
    if json_facts:
        expect["json"] = json_facts
    for k, v in text_facts.items():
        expect[TEXT_KEYS[k]] = v
    c["expect"] = expect
    if deadline:
        c["deadlineMs"] = deadline
    CASES.append(c)


def write(name):
    """The matrix, as committed: one-space indent, UTF-8 as is, a final newline."""
    matrix = {"schemaVersion": 1, "name": name, "canaries": CANARIES, "cases": CASES}
    json.dump(matrix, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
