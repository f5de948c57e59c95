#!/usr/bin/env python3
"""Generates harness/matrix/native-claude-code.json, the native matrix: scenarios run against the
real, pinned Claude Code (images/native.lock.json) in three modes, with what it launched and
listed in each, and what mcpscope should predict for every declaration.

Every expectation here is what Claude Code 2.1.327 did when observed natively
(docs/native-claude-code.md); `python3 harness/native/observe.py check` re-runs the client and
fails on any difference. Edit here, run
`python3 harness/matrix/generate-native-claude-code.py > harness/matrix/native-claude-code.json`,
commit both. Output is deterministic. The schema is in docs/native-matrix.md.

Conventions: project root /work/proj, HOME /home/node; every stdio server's command is the
sentinel with one argument `--scopebox-tag=SCOPE/NAME`; every http server's URL is
http://127.0.0.1:18500/SCOPE/NAME. Tags name the declaration (scope of the file that declares
it), so a fired tag says exactly which declaration ran.
"""

import json
import sys

from matrixlib import (HOME, ROOT, SCENARIOS, SENTINEL, NativeScenario, d, js, lst, raw, run,
                       symlink, text)

CLIENT_VERSION = "2.1.327"
HTTP_PORT = 18500
MODEL_PORT = 18431
CLAUDE_JSON = HOME + "/.claude.json"
USER_SETTINGS = HOME + "/.claude/settings.json"
PROJECT_JSON = ROOT + "/.mcp.json"
PROJECT_SETTINGS = ROOT + "/.claude/settings.json"
LOCAL_SETTINGS = ROOT + "/.claude/settings.local.json"
MANAGED_MCP = "/etc/claude-code/managed-mcp.json"
MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
LINK = "/work/link"
SCOPES = ("local", "project", "user", "managed")
PREDICTIONS = ("launch", "pending", "rejected", "shadowed", "excluded", "not-read", "unknown")


# How a scenario spoils a JSON document's text (compact JSON in, bytes out).
MALFORMATIONS = {
    "trailing-comma": lambda t: (t[:-1] + ",}").encode(),
    "bom": lambda t: b"\xef\xbb\xbf" + t.encode(),
    "line-comment": lambda t: ("// scopebox\n" + t).encode(),
    "truncated": lambda t: t[:-1].encode(),
}


def tag_of(scope, name, n=None):
    return "%s/%s" % (scope, name) + (".%d" % n if n else "")


def stdio(tag):
    return {"command": SENTINEL, "args": ["--scopebox-tag=" + tag]}


def http(tag):
    return {"type": "http", "url": "http://127.0.0.1:%d/%s" % (HTTP_PORT, tag)}


class Scenario(NativeScenario):
    """One fixture tree and its three runs (`files`: path -> dict, a JSON document built up, or
    bytes). Declarations are registered as servers are added."""

    def __init__(self, id, description, behaviours):
        super().__init__(id, description, behaviours)
        self.malformed = {}  # path -> how its JSON text is spoiled (MALFORMATIONS)

    # -- declarations --
    def server(self, scope, name, transport="stdio", path=None, container=None, n=None):
        """Declare `name` in `scope`'s default file (or `path`, under `container` keys)."""
        tag = tag_of(scope, name, n)
        entry = stdio(tag) if transport == "stdio" else http(tag)
        if path is None:
            path, container = {
                "local": (CLAUDE_JSON, ["projects", self.root_key(), "mcpServers"]),
                "project": (PROJECT_JSON, ["mcpServers"]),
                "user": (CLAUDE_JSON, ["mcpServers"]),
                "managed": (MANAGED_MCP, ["mcpServers"]),
            }[scope]
        doc = self.files.setdefault(path, {})
        for k in container:
            doc = doc.setdefault(k, {})
        doc[name] = entry
        return self.declare(tag, name, scope, transport, path)

    def root_key(self):
        return ROOT

    def set(self, path, keys, value):
        doc = self.files.setdefault(path, {})
        for k in keys[:-1]:
            doc = doc.setdefault(k, {})
        doc[keys[-1]] = value

    def predict(self, tag, list_, headless, approval=None):
        """What mcpscope should say about one declaration (`predictedLaunch`, `approval`)."""
        assert list_ in PREDICTIONS and headless in PREDICTIONS, (list_, headless)
        dcl = self.declaration(tag)
        dcl["predicted"] = {"list": list_, "headless": headless}
        if approval:
            dcl["approval"] = {"state": approval[0], "by": approval[1]}

    # -- runs (list_ is NativeScenario's) --

    def get(self, name, exit_code, launched, listed):
        r = run("get", exit_code, launched, [gt(*x) for x in listed])
        r["name"] = name
        self.runs.append(r)

    def headless(self, exit_code, launched, listed):
        self.runs.append(run("headless", exit_code, launched, [hl(*x) for x in listed]))

    def malform(self, path, how):
        assert how in MALFORMATIONS, how
        self.malformed[path] = how

    def fixture(self):
        entries = [d(ROOT)]
        entries += self.extra
        for path in sorted(self.files):
            v = self.files[path]
            if isinstance(v, bytes):
                entries.append(raw(path, v))
            elif path in self.malformed:
                entries.append(raw(path, MALFORMATIONS[self.malformed[path]](js(v))))
            else:
                entries.append(text(path, js(v)))
        return entries



def gt(name, tag, status, scope):
    return {"name": name, "tag": tag, "status": status, "scope": scope}


def hl(name, source, status):
    return {"name": name, "source": source, "status": status}


def write():
    matrix = {
        "schemaVersion": 1,
        "kind": "native",
        "name": "native-claude-code",
        "client": {"id": "claude-code", "version": CLIENT_VERSION, "lock": "images/native.lock.json"},
        "environment": {
            "HOME": HOME, "PATH": "/scopebox/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % MODEL_PORT,
            "ANTHROPIC_API_KEY": "sk-ant-scopebox-stand-in-not-a-key",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        },
        "modelApi": {"port": MODEL_PORT, "status": 400},
        "listeners": [HTTP_PORT],
        "sentinel": SENTINEL,
        "tagArgPrefix": "--scopebox-tag=",
        "modes": {
            "list": ["mcp", "list"],
            "get": ["mcp", "get", "{name}"],
            "headless": ["-p", "scopebox native reference: say nothing", "--output-format", "stream-json",
                         "--verbose"],
        },
        "defaults": {"cwd": ROOT, "root": ROOT, "deadlineS": 30},
        "scenarios": SCENARIOS,
    }
    json.dump(matrix, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


# Scopes as the client labels them in `mcp get` and in system/init.
GET_SCOPE = {
    "local": "Local config (private to you in this project)",
    "project": "Project config (shared via .mcp.json)",
    "user": "User config (available in all your projects)",
}



# ================================================================ scenarios
#
# Status words: F failed (the sentinel exits at once, so every launched server "fails to
# connect"), P pending approval, D disabled. Runs: s.list_(exit, launched, [(name, tag, status)]),
# s.get(NAME, exit, launched, [(name, tag, status, scope label)]),
# s.headless(exit, launched, [(name, source, status)]) — the headless listing is system/init.

F, P, D = "failed", "pending", "disabled"
LOCAL, PROJECT, USER = GET_SCOPE["local"], GET_SCOPE["project"], GET_SCOPE["user"]
ENTERPRISE = "Enterprise config (managed by your organization)"
PENDING = ("pending", None)


def approved(by):
    return ("approved", by)


def rejected(by):
    return ("rejected", by)


# ---- baseline: what each mode runs without any approval ----

s = Scenario("baseline-stdio-all-scopes", "one stdio server in each of local, project, user; no approvals",
             ["list-runs-user-local", "list-pending-project", "get-pending-not-run", "headless-runs-unapproved"])
l1, p1, u1 = s.server("local", "l1"), s.server("project", "p1"), s.server("user", "u1")
s.predict(l1, "launch", "launch"); s.predict(p1, "pending", "launch", PENDING); s.predict(u1, "launch", "launch")
s.list_(0, [l1, u1], [("u1", u1, F), ("p1", p1, P), ("l1", l1, F)])
s.get("p1", 0, [], [("p1", p1, P, PROJECT)])
s.headless(1, [l1, p1, u1], [("u1", "user", F), ("p1", "project", F), ("l1", "local", F)])
s.done()

s = Scenario("baseline-http-all-scopes", "one http server in each of local, project, user; no approvals",
             ["http-connect-is-launch", "list-runs-user-local", "list-pending-project", "headless-runs-unapproved"])
lh, ph, uh = s.server("local", "lh", "http"), s.server("project", "ph", "http"), s.server("user", "uh", "http")
s.predict(lh, "launch", "launch"); s.predict(ph, "pending", "launch", PENDING); s.predict(uh, "launch", "launch")
s.list_(0, [lh, uh], [("uh", uh, F), ("ph", ph, P), ("lh", lh, F)])
s.get("ph", 0, [], [("ph", ph, P, PROJECT)])
s.headless(1, [lh, ph, uh], [("uh", "user", F), ("ph", "project", F), ("lh", "local", F)])
s.done()

s = Scenario("get-user-server", "mcp get of a user server health-checks that server only", ["get-runs-one"])
l1, p1, u1 = s.server("local", "l1"), s.server("project", "p1"), s.server("user", "u1")
s.predict(l1, "launch", "launch"); s.predict(p1, "pending", "launch", PENDING); s.predict(u1, "launch", "launch")
s.list_(0, [l1, u1], [("u1", u1, F), ("p1", p1, P), ("l1", l1, F)])
s.get("u1", 0, [u1], [("u1", u1, F, USER)])
s.headless(1, [l1, p1, u1], [("u1", "user", F), ("p1", "project", F), ("l1", "local", F)])
s.done()

s = Scenario("get-unknown-name", "mcp get of a name nobody declares: exit 1, nothing runs", ["get-unknown"])
l1, u1 = s.server("local", "l1"), s.server("user", "u1")
s.predict(l1, "launch", "launch"); s.predict(u1, "launch", "launch")
s.list_(0, [l1, u1], [("u1", u1, F), ("l1", l1, F)])
s.get("nobody", 1, [], [])
s.headless(1, [l1, u1], [("u1", "user", F), ("l1", "local", F)])
s.done()

# ---- precedence for one name declared in several scopes ----

s = Scenario("precedence-local-project-user", "the same name in local, project (unapproved) and user: local wins everywhere",
             ["precedence-local-first"])
l, p, u = s.server("local", "same"), s.server("project", "same"), s.server("user", "same")
s.predict(l, "launch", "launch"); s.predict(p, "shadowed", "shadowed", PENDING); s.predict(u, "shadowed", "shadowed")
s.list_(0, [l], [("same", l, F)])
s.get("same", 0, [l], [("same", l, F, LOCAL)])
s.headless(1, [l], [("same", "local", F)])
s.done()

s = Scenario("precedence-project-user", "the same name in project (unapproved) and user: list/get show and run the "
             "user one, a headless session runs the project one", ["precedence-pending-project"])
p, u = s.server("project", "same"), s.server("user", "same")
s.predict(p, "shadowed", "launch", PENDING); s.predict(u, "launch", "shadowed")
s.list_(0, [u], [("same", u, F)])
s.get("same", 0, [u], [("same", u, F, USER)])
s.headless(1, [p], [("same", "project", F)])
s.done()

s = Scenario("precedence-project-approved-user", "the same name in project (approved) and user: project wins everywhere",
             ["precedence-project-over-user"])
p, u = s.server("project", "same"), s.server("user", "same")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["same"])
s.predict(p, "launch", "launch", approved(USER_SETTINGS)); s.predict(u, "shadowed", "shadowed")
s.list_(0, [p], [("same", p, F)])
s.get("same", 0, [p], [("same", p, F, PROJECT)])
s.headless(1, [p], [("same", "project", F)])
s.done()

s = Scenario("precedence-project-rejected-user", "the same name in project (rejected) and user: the user one runs everywhere",
             ["precedence-rejected-project", "reject"])
p, u = s.server("project", "same"), s.server("user", "same")
s.set(USER_SETTINGS, ["disabledMcpjsonServers"], ["same"])
s.predict(p, "rejected", "rejected", rejected(USER_SETTINGS)); s.predict(u, "launch", "launch")
s.list_(0, [u], [("same", u, F)])
s.get("same", 0, [u], [("same", u, F, USER)])
s.headless(1, [u], [("same", "user", F)])
s.done()

s = Scenario("precedence-local-project-approved", "the same name in local and project (approved): local wins everywhere",
             ["precedence-local-first"])
l, p = s.server("local", "same"), s.server("project", "same")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["same"])
s.predict(l, "launch", "launch"); s.predict(p, "shadowed", "shadowed", approved(USER_SETTINGS))
s.list_(0, [l], [("same", l, F)])
s.get("same", 0, [l], [("same", l, F, LOCAL)])
s.headless(1, [l], [("same", "local", F)])
s.done()

s = Scenario("precedence-local-user", "the same name in local and user: local wins everywhere", ["precedence-local-first"])
l, u = s.server("local", "same"), s.server("user", "same")
s.predict(l, "launch", "launch"); s.predict(u, "shadowed", "shadowed")
s.list_(0, [l], [("same", l, F)])
s.get("same", 0, [l], [("same", l, F, LOCAL)])
s.headless(1, [l], [("same", "local", F)])
s.done()

s = Scenario("project-disabled-user-local", "projects[root].disabledMcpServers [u1, l1] in ~/.claude.json disables a user "
             "and a local server for this project (listed as disabled, never run)", ["disabled-for-project"])
u1, u2, l1 = s.server("user", "u1"), s.server("user", "u2"), s.server("local", "l1")
s.set(CLAUDE_JSON, ["projects", ROOT, "disabledMcpServers"], ["u1", "l1"])
# mcpscope reads projects[root].disabledMcpServers (names only; docs/contract-additions.md).
s.predict(u1, "rejected", "rejected"); s.predict(u2, "launch", "launch"); s.predict(l1, "rejected", "rejected")
s.list_(0, [u2], [("u1", u1, D), ("u2", u2, F), ("l1", l1, D)])
s.get("u1", 0, [], [("u1", u1, D, USER)])
s.headless(1, [u2], [("u1", "user", D), ("u2", "user", F), ("l1", "local", D)])
s.done()

# ---- approval of .mcp.json servers: p1 named, p2 not ----

def approval(id, description, behaviours, settings, one, rule):
    """p1 and p2 in .mcp.json; `settings` [(path, keys, value)]; `rule` is what the client did:
    'pending' (nothing approved), 'one' (p1 approved by `one`), 'all' (both approved by `one`),
    'reject' (p1 rejected by `one`, p2 pending), 'reject-all' (p1 rejected, p2 approved, by `one`)."""
    s = Scenario(id, description, behaviours)
    p1, p2 = s.server("project", "p1"), s.server("project", "p2")
    for path, keys, value in settings:
        s.set(path, keys, value)
    if rule == "pending":
        s.predict(p1, "pending", "launch", PENDING); s.predict(p2, "pending", "launch", PENDING)
        s.list_(0, [], [("p1", p1, P), ("p2", p2, P)])
        s.get("p1", 0, [], [("p1", p1, P, PROJECT)])
        s.headless(1, [p1, p2], [("p1", "project", F), ("p2", "project", F)])
    elif rule == "one":
        s.predict(p1, "launch", "launch", approved(one)); s.predict(p2, "pending", "launch", PENDING)
        s.list_(0, [p1], [("p1", p1, F), ("p2", p2, P)])
        s.get("p1", 0, [p1], [("p1", p1, F, PROJECT)])
        s.headless(1, [p1, p2], [("p1", "project", F), ("p2", "project", F)])
    elif rule == "all":
        s.predict(p1, "launch", "launch", approved(one)); s.predict(p2, "launch", "launch", approved(one))
        s.list_(0, [p1, p2], [("p1", p1, F), ("p2", p2, F)])
        s.get("p1", 0, [p1], [("p1", p1, F, PROJECT)])
        s.headless(1, [p1, p2], [("p1", "project", F), ("p2", "project", F)])
    elif rule == "reject":
        s.predict(p1, "rejected", "rejected", rejected(one)); s.predict(p2, "pending", "launch", PENDING)
        s.list_(0, [], [("p2", p2, P)])
        s.get("p1", 0, [], [("p1", p1, D, PROJECT)])
        s.headless(1, [p2], [("p2", "project", F)])
    elif rule == "reject-all":
        s.predict(p1, "rejected", "rejected", rejected(one)); s.predict(p2, "launch", "launch", approved(one))
        s.list_(0, [p2], [("p2", p2, F)])
        s.get("p1", 0, [], [("p1", p1, D, PROJECT)])
        s.headless(1, [p2], [("p2", "project", F)])
    else:
        raise ValueError(rule)
    return s


TRUST = (CLAUDE_JSON, ["projects", ROOT, "hasTrustDialogAccepted"], True)
NO_TRUST = (CLAUDE_JSON, ["projects", ROOT, "hasTrustDialogAccepted"], False)
ENABLE_P1 = ["enabledMcpjsonServers"], ["p1"]
DISABLE_P1 = ["disabledMcpjsonServers"], ["p1"]
ENABLE_ALL = ["enableAllProjectMcpServers"], True
PROJECT_KEY = ["projects", ROOT]

approval("approve-user-settings-enabled", "~/.claude/settings.json enabledMcpjsonServers [p1] approves p1 (no trust needed)",
         ["approve-user-settings"], [(USER_SETTINGS, *ENABLE_P1)], USER_SETTINGS, "one").done()
approval("approve-user-settings-enabled-string", "~/.claude/settings.json enabledMcpjsonServers \"p1\" (a name string, not "
         "a list) approves p1 as [\"p1\"] would", ["approve-user-settings"],
         [(USER_SETTINGS, ["enabledMcpjsonServers"], "p1")], USER_SETTINGS, "one").done()
approval("approve-user-settings-enable-all", "~/.claude/settings.json enableAllProjectMcpServers approves every .mcp.json "
         "server", ["approve-user-settings", "enable-all"], [(USER_SETTINGS, *ENABLE_ALL)], USER_SETTINGS, "all").done()
approval("approve-managed-settings-enabled", "/etc/claude-code/managed-settings.json enabledMcpjsonServers [p1] approves p1",
         ["approve-managed-settings"], [(MANAGED_SETTINGS, *ENABLE_P1)], MANAGED_SETTINGS, "one").done()
approval("approve-project-settings-untrusted", "<root>/.claude/settings.json enabledMcpjsonServers [p1] without trust: "
         "not honoured", ["approve-project-settings-needs-trust"], [(PROJECT_SETTINGS, *ENABLE_P1)], None, "pending").done()
approval("approve-project-settings-enable-all-untrusted", "<root>/.claude/settings.json enableAllProjectMcpServers "
         "without trust: not honoured", ["approve-project-settings-needs-trust", "enable-all"],
         [(PROJECT_SETTINGS, *ENABLE_ALL)], None, "pending").done()
approval("approve-project-settings-trusted", "<root>/.claude/settings.json enabledMcpjsonServers [p1] with "
         "projects[root].hasTrustDialogAccepted: approves p1", ["approve-project-settings-needs-trust", "trust"],
         [(PROJECT_SETTINGS, *ENABLE_P1), TRUST], PROJECT_SETTINGS, "one").done()
approval("approve-local-settings-untrusted", "<root>/.claude/settings.local.json enabledMcpjsonServers [p1] without trust: "
         "not honoured", ["approve-local-settings-needs-trust"], [(LOCAL_SETTINGS, *ENABLE_P1)], None, "pending").done()
approval("approve-local-settings-trusted", "<root>/.claude/settings.local.json enabledMcpjsonServers [p1] with trust: "
         "approves p1", ["approve-local-settings-needs-trust", "trust"], [(LOCAL_SETTINGS, *ENABLE_P1), TRUST],
         LOCAL_SETTINGS, "one").done()
approval("approve-local-settings-enable-all-trusted", "<root>/.claude/settings.local.json enableAllProjectMcpServers with "
         "trust: approves both", ["approve-local-settings-needs-trust", "trust", "enable-all"],
         [(LOCAL_SETTINGS, *ENABLE_ALL), TRUST], LOCAL_SETTINGS, "all").done()
approval("approve-claude-json-trusted", "~/.claude.json projects[root].enabledMcpjsonServers [p1] with "
         "hasTrustDialogAccepted: true approves p1", ["approve-claude-json-needs-trust", "trust"],
         [(CLAUDE_JSON, PROJECT_KEY + ENABLE_P1[0], ENABLE_P1[1]), TRUST], CLAUDE_JSON, "one").done()
approval("approve-claude-json-untrusted", "~/.claude.json projects[root].enabledMcpjsonServers [p1] with "
         "hasTrustDialogAccepted: false: not honoured", ["approve-claude-json-needs-trust"],
         [(CLAUDE_JSON, PROJECT_KEY + ENABLE_P1[0], ENABLE_P1[1]), NO_TRUST], None, "pending").done()
approval("approve-claude-json-no-trust-key", "~/.claude.json projects[root].enabledMcpjsonServers [p1] without a trust "
         "key: not honoured", ["approve-claude-json-needs-trust"],
         [(CLAUDE_JSON, PROJECT_KEY + ENABLE_P1[0], ENABLE_P1[1])], None, "pending").done()
approval("approve-claude-json-enable-all-trusted", "~/.claude.json projects[root].enableAllProjectMcpServers with trust "
         "approves both", ["approve-claude-json-needs-trust", "trust", "enable-all"],
         [(CLAUDE_JSON, PROJECT_KEY + ENABLE_ALL[0], ENABLE_ALL[1]), TRUST], CLAUDE_JSON, "all").done()
approval("reject-user-settings", "~/.claude/settings.json disabledMcpjsonServers [p1]: p1 unlisted by list, disabled in "
         "get, not run headless", ["reject"], [(USER_SETTINGS, *DISABLE_P1)], USER_SETTINGS, "reject").done()
approval("reject-project-settings", "<root>/.claude/settings.json disabledMcpjsonServers [p1] rejects without trust",
         ["reject", "reject-needs-no-trust"], [(PROJECT_SETTINGS, *DISABLE_P1)], PROJECT_SETTINGS, "reject").done()
approval("reject-local-settings", "<root>/.claude/settings.local.json disabledMcpjsonServers [p1] rejects without trust",
         ["reject", "reject-needs-no-trust"], [(LOCAL_SETTINGS, *DISABLE_P1)], LOCAL_SETTINGS, "reject").done()
approval("reject-managed-settings", "/etc/claude-code/managed-settings.json disabledMcpjsonServers [p1]",
         ["reject", "approve-managed-settings"], [(MANAGED_SETTINGS, *DISABLE_P1)], MANAGED_SETTINGS, "reject").done()
approval("reject-claude-json-untrusted", "~/.claude.json projects[root].disabledMcpjsonServers [p1] rejects without trust",
         ["reject", "reject-needs-no-trust"], [(CLAUDE_JSON, PROJECT_KEY + DISABLE_P1[0], DISABLE_P1[1])], CLAUDE_JSON,
         "reject").done()
approval("reject-wins-over-enable-all", "~/.claude/settings.json enableAllProjectMcpServers and disabledMcpjsonServers "
         "[p1]: the rejection wins", ["reject", "enable-all"],
         [(USER_SETTINGS, *ENABLE_ALL), (USER_SETTINGS, *DISABLE_P1)], USER_SETTINGS, "reject-all").done()

s = Scenario("reject-managed-denied-servers", "/etc/claude-code/managed-settings.json deniedMcpServers [{serverName: p1}]: "
             "p1 is gone from every mode (get: no such server)", ["managed-settings-deny-list"])
p1, p2 = s.server("project", "p1"), s.server("project", "p2")
s.set(MANAGED_SETTINGS, ["deniedMcpServers"], [{"serverName": "p1"}])
# mcpscope reads the managed deny list's serverName entries (docs/contract-additions.md): the
# server is not loaded at all, whatever its (pending) approval.
s.predict(p1, "excluded", "excluded", PENDING); s.predict(p2, "pending", "launch", PENDING)
s.list_(0, [], [("p2", p2, P)])
s.get("p1", 1, [], [])
s.headless(1, [p2], [("p2", "project", F)])
s.done()

# ---- managed-mcp.json is exclusive ----

s = Scenario("managed-exclusive", "managed-mcp.json with m1, and servers in local, project (approved), user: only m1 "
             "exists for the client", ["managed-exclusive"])
m1, l1, p1, u1 = s.server("managed", "m1"), s.server("local", "l1"), s.server("project", "p1"), s.server("user", "u1")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["p1"])
s.predict(m1, "launch", "launch"); s.predict(l1, "excluded", "excluded")
s.predict(p1, "excluded", "excluded", approved(USER_SETTINGS)); s.predict(u1, "excluded", "excluded")
s.list_(0, [m1], [("m1", m1, F)])
s.get("m1", 0, [m1], [("m1", m1, F, ENTERPRISE)])
s.headless(1, [m1], [("m1", "enterprise", F)])
s.done()

s = Scenario("managed-empty", "managed-mcp.json {\"mcpServers\": {}} excludes every other server; get of a user server: "
             "no such server", ["managed-exclusive"])
l1, p1, u1 = s.server("local", "l1"), s.server("project", "p1"), s.server("user", "u1")
s.set(MANAGED_MCP, ["mcpServers"], {})
s.predict(l1, "excluded", "excluded"); s.predict(p1, "excluded", "excluded", PENDING); s.predict(u1, "excluded", "excluded")
s.list_(0, [], [])
s.get("u1", 1, [], [])
s.headless(1, [], [])
s.done()

s = Scenario("managed-malformed", "managed-mcp.json with a trailing comma: its m1 is not loaded, and it still excludes "
             "every other server", ["managed-exclusive", "malformed"])
m1, l1, u1 = s.server("managed", "m1"), s.server("local", "l1"), s.server("user", "u1")
s.malform(MANAGED_MCP, "trailing-comma")
s.no_row(m1); s.predict(l1, "excluded", "excluded"); s.predict(u1, "excluded", "excluded")
s.list_(0, [], [])
s.get("u1", 1, [], [])
s.headless(1, [], [])
s.done()

# ---- malformed files ----

for how, ignored in (("trailing-comma", True), ("line-comment", True), ("bom", False)):
    s = Scenario("malformed-project-" + how, ".mcp.json (approving p1 in ~/.claude/settings.json) spoiled by a %s: %s"
                 % (how.replace("-", " "), "the client ignores the whole file" if ignored else "the client reads it"),
                 ["malformed", "malformed-project-" + how])
    p1, u1 = s.server("project", "p1"), s.server("user", "u1")
    s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["p1"])
    s.malform(PROJECT_JSON, how)
    s.no_row(p1); s.predict(u1, "launch", "launch")
    if ignored:
        s.list_(0, [u1], [("u1", u1, F)])
        s.get("p1", 1, [], [])
        s.headless(1, [u1], [("u1", "user", F)])
    else:
        s.diverge(p1, ["list", "get", "headless"], "missed",
                  "mcpscope reads .mcp.json as strict JSON and reports a leading BOM as malformed (the source is "
                  "incomplete, exit 1) on purpose; the client strips the BOM and runs p1")
        s.list_(0, [p1, u1], [("u1", u1, F), ("p1", p1, F)])
        s.get("p1", 0, [p1], [("p1", p1, F, PROJECT)])
        s.headless(1, [p1, u1], [("u1", "user", F), ("p1", "project", F)])
    s.done()

s = Scenario("malformed-claude-json-trailing-comma", "~/.claude.json with a trailing comma: the client refuses to start "
             "(exit 1, backs the file up) and runs nothing in any mode", ["malformed", "malformed-claude-json"])
l1, u1, p1 = s.server("local", "l1"), s.server("user", "u1"), s.server("project", "p1")
s.malform(CLAUDE_JSON, "trailing-comma")
s.no_row(l1); s.no_row(u1); s.predict(p1, "unknown", "unknown", ("unknown", CLAUDE_JSON))
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [], [])
s.done()

s = Scenario("malformed-claude-json-bom", "~/.claude.json with a leading BOM: the client reads it", ["malformed"])
l1, u1, p1 = s.server("local", "l1"), s.server("user", "u1"), s.server("project", "p1")
s.malform(CLAUDE_JSON, "bom")
s.no_row(l1); s.no_row(u1); s.predict(p1, "unknown", "unknown", ("unknown", CLAUDE_JSON))
for t, modes in ((l1, ["list", "headless"]), (u1, ["list", "get", "headless"])):
    s.diverge(t, modes, "missed", "mcpscope reads ~/.claude.json as strict JSON and reports a leading BOM as malformed "
              "(incomplete, exit 1) on purpose; the client strips the BOM")
s.list_(0, [l1, u1], [("u1", u1, F), ("p1", p1, P), ("l1", l1, F)])
s.get("u1", 0, [u1], [("u1", u1, F, USER)])
s.headless(1, [l1, p1, u1], [("u1", "user", F), ("p1", "project", F), ("l1", "local", F)])
s.done()

s = Scenario("malformed-user-settings-trailing-comma", "~/.claude/settings.json approving p1 has a trailing comma: the "
             "client ignores the file, p1 stays pending", ["malformed", "approve-user-settings"])
p1 = s.server("project", "p1")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["p1"])
s.malform(USER_SETTINGS, "trailing-comma")
s.predict(p1, "unknown", "unknown", ("unknown", USER_SETTINGS))
s.list_(0, [], [("p1", p1, P)])
s.get("p1", 0, [], [("p1", p1, P, PROJECT)])
s.headless(1, [p1], [("p1", "project", F)])
s.done()

s = Scenario("duplicate-key-project", ".mcp.json declares dup twice: the client takes the last value", ["duplicate-key"])
s.server("project", "dup", n=1)
dup1, dup2 = tag_of("project", "dup", 1), tag_of("project", "dup", 2)
s.decls.append({"tag": dup2, "name": "dup", "scope": "project", "transport": "stdio", "file": PROJECT_JSON})
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["dup"])
s.raw_file(PROJECT_JSON, ('{"mcpServers":{"dup":%s,"dup":%s}}' % (js(stdio(dup1)), js(stdio(dup2)))).encode())
s.no_row(dup1); s.no_row(dup2)
s.diverge(dup2, ["list", "get", "headless"], "missed",
          "mcpscope reports a duplicate key as malformed (incomplete, exit 1) on purpose: which value a client takes is "
          "parser-defined; this client takes the last")
s.list_(0, [dup2], [("dup", dup2, F)])
s.get("dup", 0, [dup2], [("dup", dup2, F, PROJECT)])
s.headless(1, [dup2], [("dup", "project", F)])
s.done()

s = Scenario("duplicate-key-claude-json-mcpservers", "~/.claude.json has two top-level mcpServers keys: the last wins",
             ["duplicate-key"])
u1, u2 = "user/u1", "user/u2"
s.decls += [{"tag": u1, "name": "u1", "scope": "user", "transport": "stdio", "file": CLAUDE_JSON},
            {"tag": u2, "name": "u2", "scope": "user", "transport": "stdio", "file": CLAUDE_JSON}]
s.raw_file(CLAUDE_JSON, ('{"mcpServers":{"u1":%s},"mcpServers":{"u2":%s}}' % (js(stdio(u1)), js(stdio(u2)))).encode())
s.no_row(u1); s.no_row(u2)
s.diverge(u2, ["list", "get", "headless"], "missed",
          "mcpscope reports a duplicate key as malformed (incomplete, exit 1) on purpose; this client takes the last")
s.list_(0, [u2], [("u2", u2, F)])
s.get("u2", 0, [u2], [("u2", u2, F, USER)])
s.headless(1, [u2], [("u2", "user", F)])
s.done()

s = Scenario("wrong-container-project-array", ".mcp.json mcpServers is an array: no project server exists for the client",
             ["wrong-container"])
s.decls.append({"tag": "project/p1", "name": "p1", "scope": "project", "transport": "stdio", "file": PROJECT_JSON})
s.set(PROJECT_JSON, ["mcpServers"], [dict(stdio("project/p1"), name="p1")])
s.set(USER_SETTINGS, ["enableAllProjectMcpServers"], True)
u1 = s.server("user", "u1")
s.no_row("project/p1"); s.predict(u1, "launch", "launch")
s.list_(0, [u1], [("u1", u1, F)])
s.get("p1", 1, [], [])
s.headless(1, [u1], [("u1", "user", F)])
s.done()

s = Scenario("wrong-container-project-top-array", ".mcp.json is a JSON array: no project server exists for the client",
             ["wrong-container"])
s.decls.append({"tag": "project/p1", "name": "p1", "scope": "project", "transport": "stdio", "file": PROJECT_JSON})
s.raw_file(PROJECT_JSON, js([{"mcpServers": {"p1": stdio("project/p1")}}]).encode())
s.set(USER_SETTINGS, ["enableAllProjectMcpServers"], True)
u1 = s.server("user", "u1")
s.no_row("project/p1"); s.predict(u1, "launch", "launch")
s.list_(0, [u1], [("u1", u1, F)])
s.get("p1", 1, [], [])
s.headless(1, [u1], [("u1", "user", F)])
s.done()

s = Scenario("wrong-container-local-array", "~/.claude.json projects[root].mcpServers is an array: no local server, the "
             "user server still runs", ["wrong-container"])
s.decls.append({"tag": "local/l1", "name": "l1", "scope": "local", "transport": "stdio", "file": CLAUDE_JSON})
s.set(CLAUDE_JSON, ["projects", ROOT, "mcpServers"], [dict(stdio("local/l1"), name="l1")])
u1 = s.server("user", "u1")
s.no_row("local/l1"); s.predict(u1, "launch", "launch")
s.list_(0, [u1], [("u1", u1, F)])
s.get("u1", 0, [u1], [("u1", u1, F, USER)])
s.headless(1, [u1], [("u1", "user", F)])
s.done()

# ---- the root through a symlink: the client keys projects[] by the realpath ----


class LinkScenario(Scenario):
    """cwd /work/link (a symlink to /work/proj) with PWD=/work/link, as a shell leaves it; mcpscope
    is given /work/link as the root (explicit spelling /work/link, canonical /work/proj)."""

    def __init__(self, id, description, behaviours, key):
        super().__init__(id, description, behaviours)
        self.key = key
        self.extra = [symlink(LINK, ROOT)]
        self.cwd = self.root = LINK
        self.env = {"PWD": LINK}

    def root_key(self):
        return self.key


s = LinkScenario("root-symlink-realpath-key", "cwd through /work/link, local servers under the realpath key /work/proj: "
                 "read", ["root-symlink"], ROOT)
l1, u1 = s.server("local", "l1"), s.server("user", "u1")
s.predict(l1, "launch", "launch"); s.predict(u1, "launch", "launch")
s.list_(0, [l1, u1], [("u1", u1, F), ("l1", l1, F)])
s.get("l1", 0, [l1], [("l1", l1, F, LOCAL)])
s.headless(1, [l1, u1], [("u1", "user", F), ("l1", "local", F)])
s.done()

s = LinkScenario("root-symlink-link-key", "cwd through /work/link, local servers under the spelling /work/link: never "
                 "read (the client uses the realpath, whatever PWD says)", ["root-symlink"], LINK)
l1, u1 = s.server("local", "l1"), s.server("user", "u1")
# mcpscope finds l1 under the explicit spelling and says the client never reads it.
s.predict(l1, "not-read", "not-read"); s.predict(u1, "launch", "launch")
s.list_(0, [u1], [("u1", u1, F)])
s.get("l1", 1, [], [])
s.headless(1, [u1], [("u1", "user", F)])
s.done()

s = LinkScenario("root-symlink-trust-on-link-key", "cwd through /work/link; projects[/work/link] approves p1 with trust: "
                 "not honoured (the realpath key decides)", ["root-symlink", "approve-claude-json-needs-trust"], LINK)
p1, p2 = s.server("project", "p1"), s.server("project", "p2")
s.set(CLAUDE_JSON, ["projects", LINK, "enabledMcpjsonServers"], ["p1"])
s.set(CLAUDE_JSON, ["projects", LINK, "hasTrustDialogAccepted"], True)
s.predict(p1, "pending", "launch", PENDING); s.predict(p2, "pending", "launch", PENDING)
s.list_(0, [], [("p1", p1, P), ("p2", p2, P)])
s.get("p1", 0, [], [("p1", p1, P, PROJECT)])
s.headless(1, [p1, p2], [("p1", "project", F), ("p2", "project", F)])
s.done()

# ---- http ----

s = Scenario("http-project-approved", "an approved and an unapproved http server in .mcp.json: list connects to the "
             "approved one, headless to both", ["http-connect-is-launch", "approve-user-settings"])
ph1, ph2 = s.server("project", "ph1", "http"), s.server("project", "ph2", "http")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["ph1"])
s.predict(ph1, "launch", "launch", approved(USER_SETTINGS)); s.predict(ph2, "pending", "launch", PENDING)
s.list_(0, [ph1], [("ph1", ph1, F), ("ph2", ph2, P)])
s.get("ph1", 0, [ph1], [("ph1", ph1, F, PROJECT)])
s.headless(1, [ph1, ph2], [("ph1", "project", F), ("ph2", "project", F)])
s.done()

s = Scenario("http-precedence-local-over-project", "an http server in local and an approved stdio server of the same name "
             "in .mcp.json: local (http) wins", ["http-connect-is-launch", "precedence-local-first"])
l, p = s.server("local", "same", "http"), s.server("project", "same")
s.set(USER_SETTINGS, ["enabledMcpjsonServers"], ["same"])
s.predict(l, "launch", "launch"); s.predict(p, "shadowed", "shadowed", approved(USER_SETTINGS))
s.list_(0, [l], [("same", l, F)])
s.get("same", 0, [l], [("same", l, F, LOCAL)])
s.headless(1, [l], [("same", "local", F)])
s.done()

if __name__ == "__main__":
    write()
