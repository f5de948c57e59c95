"""What the matrix generators share (generate-claude-code.py, generate-vscode.py,
generate-dsh.py, and for the native matrices generate-native-claude-code.py and
generate-native-codex.py): the canary registry, the fixture entry builders, the canary-named symlinks
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


def refused(code, reason=None, root=None):
    """The document `--json` prints for a refused invocation: a usage error or an invalid root."""
    facts = [eq("/schemaVersion", 1), eq("/tool/name", "mcpscope"), eq("/error/code", code),
             eq("/error/reason", reason), absent("/inventoryComplete")]
    if root is not None:
        facts.append(eq("/error/root", root))
    return facts


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


# ---- the native matrices (generate-native-claude-code.py, generate-native-codex.py) ----

SCENARIOS = []


class NativeScenario:
    """What both native generators' scenarios share: one fixture tree, its declarations (each
    with mcpscope's prediction), the three runs (list, get, headless) and any documented
    divergences. Each generator's subclass adds how servers are written and predicted, and its
    `fixture()`; `done()` checks the scenario and appends it to `SCENARIOS`."""

    def __init__(self, id, description, behaviours):
        self.id, self.description, self.behaviours = id, description, behaviours
        self.decls = []
        self.files = {}  # path -> what the subclass builds the file from, or bytes (as is)
        self.extra = []  # other fixture entries (dirs, symlinks)
        self.cwd = ROOT
        self.root = ROOT
        self.env = {}
        self.runs = []
        self.divergences = []

    def declare(self, tag, name, scope, transport, path):
        """Register a declaration (the subclass's `server` writes its file)."""
        self.decls.append({"tag": tag, "name": name, "scope": scope, "transport": transport, "file": path})
        return tag

    def declaration(self, tag):
        for dcl in self.decls:
            if dcl["tag"] == tag:
                return dcl
        raise KeyError(tag)

    def raw_file(self, path, data):
        self.files[path] = data

    def no_row(self, tag):
        """mcpscope has no row for this declaration."""
        self.declaration(tag)["predicted"] = None

    def diverge(self, tag, modes, kind, reason):
        self.divergences.append({"tag": tag, "modes": modes, "kind": kind, "reason": reason})

    def list_(self, exit_code, launched, listed):
        self.runs.append(run("list", exit_code, launched, [lst(*x) for x in listed]))

    def done(self):
        for dcl in self.decls:
            assert "predicted" in dcl, "%s: no prediction for %s" % (self.id, dcl["tag"])
        assert [r["mode"] for r in self.runs] == ["list", "get", "headless"], self.id
        s = {"id": self.id, "description": self.description, "behaviours": self.behaviours}
        if self.cwd != ROOT:
            s["cwd"] = self.cwd
        if self.root != ROOT:
            s["root"] = self.root
        if self.env:
            s["env"] = self.env
        s["fixture"] = self.fixture()
        s["declarations"] = self.decls
        s["runs"] = self.runs
        if self.divergences:
            s["divergences"] = self.divergences
        SCENARIOS.append(s)


def run(mode, exit_code, launched, listed):
    """One native run's expectation: `mode` list, get or headless."""
    return {"mode": mode, "expect": {"exitCode": exit_code, "launched": sorted(launched), "listed": listed}}


def lst(name, tag, status):
    """A row a native run is expected to list."""
    return {"name": name, "tag": tag, "status": status}
