#!/usr/bin/env python3
"""Generates harness/matrix/native-codex.json, the native matrix of Codex: scenarios run against
the real, pinned Codex (images/native.lock.json) in three modes — `codex mcp list --json`,
`codex mcp get --json NAME` and a headless `codex exec` against a loopback stand-in model
provider — with what it launched and listed in each, and what mcpscope should predict for every
declaration.

Every expectation here is what Codex 0.163.0 did when observed natively (docs/native-codex.md);
`python3 harness/native/observe.py check harness/matrix/native-codex.json --client BIN` re-runs
the client and fails on any difference. Edit here, run
`python3 harness/matrix/generate-native-codex.py > harness/matrix/native-codex.json`, commit
both. Output is deterministic. The schema is in docs/native-matrix.md.

Conventions: project root /work/proj, HOME /home/node (the Codex home is ~/.codex unless a
scenario sets CODEX_HOME); every stdio server's command is the sentinel with one argument
`--scopebox-tag=SCOPE/NAME`; every http server's URL is http://127.0.0.1:18500/SCOPE/NAME. Tags
name the declaration (scope of the file that declares it, as mcpscope's Codex profile names its
scopes: managed, project, ancestor, user, system).
"""

import json
import sys

from matrixlib import (HOME, ROOT, SCENARIOS, SENTINEL, NativeScenario, d, lst, raw, run, symlink,
                       text)

CLIENT_VERSION = "0.163.0"
HTTP_PORT = 18500
MODEL_PORT = 18431
CODEX_HOME = HOME + "/.codex"
USER_TOML = CODEX_HOME + "/config.toml"
PROJECT_TOML = ROOT + "/.codex/config.toml"
MANAGED_TOML = "/etc/codex/managed_config.toml"
SYSTEM_TOML = "/etc/codex/config.toml"
LINK = "/work/link"
PREDICTIONS = ("launch", "listed", "disabled", "shadowed", "not-read", "refused", "unknown")
PROMPT = "scopebox native reference: say nothing"
# The stand-in provider, given on the command line (a session flag: no config file is touched).
PROVIDER = ('model_providers.scopebox={name="scopebox",base_url="http://127.0.0.1:%d/v1",wire_api="responses"}'
            % MODEL_PORT)
# Codex's own work that is not an MCP server, switched off so that the only programs a session
# runs are the declared servers (observed on the host: a login-shell snapshot, a git ls-remote of
# the plugin marketplace, the apps and code-mode hosts).
OFF = ["shell_snapshot", "plugins", "remote_plugin", "apps", "code_mode_host"]

E, D = "enabled", "disabled"


def tag_of(scope, name):
    return "%s/%s" % (scope, name)


def toml_str(s):
    return json.dumps(s)  # a TOML basic string is a JSON string for these ASCII values


def stdio_lines(tag, extra=()):
    return ["command = %s" % toml_str(SENTINEL), "args = [%s]" % toml_str("--scopebox-tag=" + tag)] + list(extra)


def http_lines(tag, extra=()):
    return ["url = %s" % toml_str("http://127.0.0.1:%d/%s" % (HTTP_PORT, tag))] + list(extra)


def trust(path, level="trusted"):
    return '[projects.%s]\ntrust_level = "%s"\n' % (toml_str(path), level)


class Scenario(NativeScenario):
    """One fixture tree and its three runs; TOML files (`files`: path -> list of TOML text
    chunks, or bytes) are built from tables in order."""

    def server(self, scope, name, transport="stdio", path=None, extra=(), tag=None):
        tag = tag or tag_of(scope, name)
        if path is None:
            path = {"user": USER_TOML, "project": PROJECT_TOML, "managed": MANAGED_TOML,
                    "system": SYSTEM_TOML}[scope]
        lines = stdio_lines(tag, extra) if transport == "stdio" else http_lines(tag, extra)
        self.chunk(path, "[mcp_servers.%s]\n%s\n" % (name, "\n".join(lines)))
        return self.declare(tag, name, scope, transport, path)

    def chunk(self, path, chunk):
        self.files.setdefault(path, []).append(chunk)

    def predict(self, tag, list_, headless, get=None):
        """What mcpscope should say (`predictedLaunch`): `mcp list` contacts enabled http servers
        (OAuth discovery), `mcp get` contacts nothing, so `get` is given apart; by default it is
        `listed` where list says `launch`, else what list says."""
        if get is None:
            get = "listed" if list_ == "launch" else list_
        assert all(p in PREDICTIONS for p in (list_, get, headless)), (list_, get, headless)
        self.declaration(tag)["predicted"] = {"list": list_, "get": get, "headless": headless}

    def get(self, name, exit_code, launched, listed):
        r = run("get", exit_code, launched, [lst(*x) for x in listed])
        r["name"] = name
        self.runs.append(r)

    def headless(self, exit_code, launched):
        self.runs.append(run("headless", exit_code, launched, []))

    def project_loaded(self, p1):
        """The project file is read: its server `p1` is listed, shown by get, launched by exec."""
        self.predict(p1, "listed", "launch")
        self.list_(0, [], [("p1", p1, E)])
        self.get("p1", 0, [], [("p1", p1, E)])
        self.headless(1, [p1])
        self.done()

    def project_not_loaded(self, p1, u1):
        """The project file is not read: get finds no `p1`; only the user's `u1` is listed and
        launched."""
        self.predict(p1, "not-read", "not-read")
        self.predict(u1, "listed", "launch")
        self.list_(0, [], [("u1", u1, E)])
        self.get("p1", 1, [], [])
        self.headless(1, [u1])
        self.done()

    def fixture(self):
        entries = [d(ROOT)]
        entries += self.extra
        for path in sorted(self.files):
            v = self.files[path]
            entries.append(raw(path, v) if isinstance(v, bytes) else text(path, "\n".join(v)))
        return entries



def write():
    headless = ["exec", "--json", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only"]
    for f in OFF:
        headless += ["--disable", f]
    headless += ["-c", 'model_provider="scopebox"', "-c", PROVIDER, PROMPT]
    matrix = {
        "schemaVersion": 1,
        "kind": "native",
        "name": "native-codex",
        "client": {"id": "codex", "version": CLIENT_VERSION, "lock": "images/native.lock.json"},
        "environment": {"HOME": HOME, "PATH": "/scopebox/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"},
        "modelApi": {"port": MODEL_PORT, "status": 400},
        "listeners": [HTTP_PORT],
        "sentinel": SENTINEL,
        "tagArgPrefix": "--scopebox-tag=",
        # exec's OS detection tries these through PATH; the image holds neither (observed with
        # strace: three ENOENT attempts each per exec run, nothing else is tried). In the box
        # the kernel witness also sees the first PATH entry Codex prepends for itself, its
        # arg0 helper directory below $CODEX_HOME/tmp (a random name; Codex puts only links
        # to itself there): an attempt there first, then /scopebox/bin.
        "absentExecs": ["/scopebox/bin/getconf", "/scopebox/bin/lsb_release", "/scopebox/bin/git"]
        + [home + "/tmp/arg0-linux/*/" + program
           for home in (CODEX_HOME, HOME + "/alt")
           for program in ("getconf", "lsb_release", "git")],
        "modes": {
            "list": ["mcp", "list", "--json"],
            "get": ["mcp", "get", "--json", "{name}"],
            "headless": headless,
        },
        "defaults": {"cwd": ROOT, "root": ROOT, "deadlineS": 30},
        "scenarios": SCENARIOS,
    }
    json.dump(matrix, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


# ---- the user file ----

s = Scenario("user-stdio", "one stdio server in ~/.codex/config.toml: listed by mcp list/get (never run there), run "
             "by exec", ["list-runs-nothing", "exec-runs-enabled"])
u1 = s.server("user", "u1")
s.predict(u1, "listed", "launch")
s.list_(0, [], [("u1", u1, E)])
s.get("u1", 0, [], [("u1", u1, E)])
s.headless(1, [u1])
s.done()

s = Scenario("user-http", "one streamable-http server (url) in the user file: mcp list GETs its URL and its OAuth "
             "discovery paths, mcp get contacts nothing, exec connects (an MCP initialize POST)",
             ["http-connect-is-launch", "list-probes-http", "list-runs-nothing"])
h1 = s.server("user", "h1", "http")
s.predict(h1, "launch", "launch")
s.list_(0, [h1], [("h1", h1, E)])
s.get("h1", 0, [], [("h1", h1, E)])
s.headless(1, [h1])
s.done()

s = Scenario("get-unknown-name", "mcp get of a name no file declares: exit 1, nothing listed or run",
             ["get-unknown"])
u1 = s.server("user", "u1")
s.predict(u1, "listed", "launch")
s.list_(0, [], [("u1", u1, E)])
s.get("nope", 1, [], [])
s.headless(1, [u1])
s.done()

s = Scenario("user-disabled", "enabled = false on one of two user servers: listed disabled, not run by exec",
             ["enabled-false"])
u1 = s.server("user", "u1")
u2 = s.server("user", "u2", extra=["enabled = false"])
s.predict(u1, "listed", "launch"); s.predict(u2, "disabled", "disabled")
s.list_(0, [], [("u1", u1, E), ("u2", u2, D)])
s.get("u2", 0, [], [("u2", u2, D)])
s.headless(1, [u1])
s.done()

s = Scenario("user-http-disabled", "enabled = false on an http server: exec does not connect", ["enabled-false"])
h1 = s.server("user", "h1", "http", extra=["enabled = false"])
u1 = s.server("user", "u1")
s.predict(h1, "disabled", "disabled"); s.predict(u1, "listed", "launch")
s.list_(0, [], [("h1", h1, D), ("u1", u1, E)])
s.get("h1", 0, [], [("h1", h1, D)])
s.headless(1, [u1])
s.done()

s = Scenario("codex-home-env", "CODEX_HOME=/home/node/alt: its config.toml is the user file, ~/.codex/config.toml is "
             "not read", ["codex-home"])
s.env = {"CODEX_HOME": HOME + "/alt"}
a1 = s.server("user", "a1", path=HOME + "/alt/config.toml")
u1 = s.server("user", "u1", tag="user/u1-default-home")
s.predict(a1, "listed", "launch"); s.no_row(u1)
s.list_(0, [], [("a1", a1, E)])
s.get("a1", 0, [], [("a1", a1, E)])
s.headless(1, [a1])
s.done()

# ---- malformed user files ----

s = Scenario("user-syntax-error", "a TOML syntax error in the user file: Codex refuses to start in every mode",
             ["malformed-refuses"])
s.declare("user/u1", "u1", "user", "stdio", USER_TOML)
s.raw_file(USER_TOML, ("[mcp_servers.u1]\n%s\n[mcp_servers.u2\n" % "\n".join(stdio_lines("user/u1"))).encode())
s.no_row("user/u1")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

s = Scenario("user-duplicate-table", "[mcp_servers.u1] defined twice in the user file: Codex refuses to start",
             ["malformed-refuses", "duplicate-table"])
s.declare("user/u1", "u1", "user", "stdio", USER_TOML)
s.declare("user/u1.2", "u1", "user", "stdio", USER_TOML)
s.raw_file(USER_TOML, ("[mcp_servers.u1]\n%s\n[mcp_servers.u1]\n%s\n"
                       % ("\n".join(stdio_lines("user/u1")), "\n".join(stdio_lines("user/u1.2")))).encode())
s.no_row("user/u1"); s.no_row("user/u1.2")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

s = Scenario("user-duplicate-key", "args given twice in one server table: Codex refuses to start", ["malformed-refuses"])
s.declare("user/u1", "u1", "user", "stdio", USER_TOML)
s.raw_file(USER_TOML, ("[mcp_servers.u1]\n%s\nargs = [\"--scopebox-tag=user/u1.2\"]\n"
                       % "\n".join(stdio_lines("user/u1"))).encode())
s.no_row("user/u1")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

s = Scenario("user-invalid-shape", "a server with both command and url: Codex refuses the whole config",
             ["invalid-shape-refuses"])
bad = s.server("user", "bad", extra=['url = "http://127.0.0.1:%d/user/bad-url"' % HTTP_PORT])
u1 = s.server("user", "u1")
s.predict(bad, "refused", "refused"); s.predict(u1, "refused", "refused")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

s = Scenario("user-inline-bearer-token", "an http server with an inline bearer_token: refused like a bad shape",
             ["invalid-shape-refuses"])
h1 = s.server("user", "h1", "http", extra=['bearer_token = "not-a-token"'])
u1 = s.server("user", "u1")
s.predict(h1, "refused", "refused"); s.predict(u1, "refused", "refused")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

# ---- project files and trust ----

s = Scenario("project-untrusted", "<root>/.codex/config.toml of a project with no trust entry: not loaded by any mode",
             ["project-needs-trust"])
p1 = s.server("project", "p1")
u1 = s.server("user", "u1")
s.project_not_loaded(p1, u1)

s = Scenario("project-trusted", "the user file trusts /work/proj: the project file is loaded (list shows it, exec runs "
             "it)", ["project-needs-trust", "exec-runs-enabled"])
p1 = s.server("project", "p1")
s.chunk(USER_TOML, trust(ROOT))
s.project_loaded(p1)

s = Scenario("project-marked-untrusted", "trust_level = \"untrusted\" for /work/proj: the project file is not loaded",
             ["project-needs-trust"])
p1 = s.server("project", "p1")
u1 = s.server("user", "u1")
s.chunk(USER_TOML, trust(ROOT, "untrusted"))
s.project_not_loaded(p1, u1)

s = Scenario("project-trusted-by-system", "the trust entry is in /etc/codex/config.toml: honoured",
             ["project-needs-trust", "system-file"])
p1 = s.server("project", "p1")
s.chunk(SYSTEM_TOML, trust(ROOT))
s.project_loaded(p1)

s = Scenario("precedence-project-over-user", "the same name in a trusted project file and the user file: the project's "
             "table wins (its args fire)", ["precedence-project-over-user"])
p = s.server("project", "same")
u = s.server("user", "same")
s.chunk(USER_TOML, trust(ROOT))
s.predict(p, "listed", "launch"); s.predict(u, "shadowed", "shadowed")
s.list_(0, [], [("same", p, E)])
s.get("same", 0, [], [("same", p, E)])
s.headless(1, [p])
s.done()

s = Scenario("precedence-untrusted-project", "the same name in an untrusted project file and the user file: the user's "
             "runs", ["project-needs-trust"])
p = s.server("project", "same")
u = s.server("user", "same")
s.predict(p, "not-read", "not-read"); s.predict(u, "listed", "launch")
s.list_(0, [], [("same", u, E)])
s.get("same", 0, [], [("same", u, E)])
s.headless(1, [u])
s.done()

s = Scenario("project-disables-user-server", "a trusted project file sets only enabled = false for a user server: the "
             "tables merge, the server is disabled", ["field-merge", "enabled-false"])
u = s.server("user", "u1")
s.declare("project/u1", "u1", "project", "unknown", PROJECT_TOML)
s.chunk(PROJECT_TOML, "[mcp_servers.u1]\nenabled = false\n")
s.chunk(USER_TOML, trust(ROOT))
# The project's table wins (merged over the user's): it is the one mcpscope calls disabled.
s.predict(u, "shadowed", "shadowed"); s.predict("project/u1", "disabled", "disabled")
s.list_(0, [], [("u1", u, D)])
s.get("u1", 0, [], [("u1", u, D)])
s.headless(1, [])
s.done()

s = Scenario("project-syntax-error-untrusted", "a TOML syntax error in an untrusted project file: ignored, the user "
             "server runs", ["project-needs-trust", "malformed-refuses"])
s.declare("project/p1", "p1", "project", "stdio", PROJECT_TOML)
s.raw_file(PROJECT_TOML, ("[mcp_servers.p1]\n%s\n[mcp_servers\n" % "\n".join(stdio_lines("project/p1"))).encode())
u1 = s.server("user", "u1")
s.no_row("project/p1"); s.predict(u1, "listed", "launch")
s.list_(0, [], [("u1", u1, E)])
s.get("u1", 0, [], [("u1", u1, E)])
s.headless(1, [u1])
s.done()

s = Scenario("project-syntax-error-trusted", "a TOML syntax error in a trusted project file: Codex refuses to start",
             ["project-needs-trust", "malformed-refuses"])
s.declare("project/p1", "p1", "project", "stdio", PROJECT_TOML)
s.raw_file(PROJECT_TOML, ("[mcp_servers.p1]\n%s\n[mcp_servers\n" % "\n".join(stdio_lines("project/p1"))).encode())
u1 = s.server("user", "u1")
s.chunk(USER_TOML, trust(ROOT))
s.no_row("project/p1"); s.predict(u1, "refused", "refused")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

# ---- ancestors (project root marker .git) ----

SUB = ROOT + "/sub"


class SubScenario(Scenario):
    """cwd and root /work/proj/sub inside a git project /work/proj (a .git directory)."""

    def __init__(self, id, description, behaviours):
        super().__init__(id, description, behaviours)
        self.extra = [d(ROOT + "/.git"), text(ROOT + "/.git/HEAD", "ref: refs/heads/main\n"), d(SUB)]
        self.cwd = self.root = SUB


s = SubScenario("ancestor-trusted-root", "root /work/proj/sub in the git project /work/proj trusted by its root: the "
                "ancestor's and the sub-directory's .codex/config.toml both load", ["ancestor", "project-needs-trust"])
a1 = s.server("ancestor", "a1", path=PROJECT_TOML)
p1 = s.server("project", "p1", path=SUB + "/.codex/config.toml")
s.chunk(USER_TOML, trust(ROOT))
s.predict(a1, "listed", "launch"); s.predict(p1, "listed", "launch")
s.list_(0, [], [("a1", a1, E), ("p1", p1, E)])
s.get("a1", 0, [], [("a1", a1, E)])
s.headless(1, [a1, p1])
s.done()

s = SubScenario("ancestor-empty-git-dir", "the same, but /work/proj/.git is an empty directory: Codex does not take it "
                "for a project root, so neither level is trusted and nothing loads", ["ancestor", "project-needs-trust"])
s.extra = [d(ROOT + "/.git"), d(SUB)]
a1 = s.server("ancestor", "a1", path=PROJECT_TOML)
p1 = s.server("project", "p1", path=SUB + "/.codex/config.toml")
s.chunk(USER_TOML, trust(ROOT))
s.predict(a1, "listed", "launch"); s.predict(p1, "listed", "launch")
for t in (a1, p1):
    s.diverge(t, ["headless"], "prediction",
              "mcpscope takes any .git entry for the project root marker (the documented default); Codex 0.163.0 "
              "does not take an empty .git directory (a .git holding HEAD is one), so the root's trust does not apply")
s.list_(0, [], [])
s.get("a1", 1, [], [])
s.headless(1, [])
s.done()

# ---- managed and system files ----

s = Scenario("system-file", "a server in /etc/codex/config.toml: listed and run like a user server", ["system-file"])
s1 = s.server("system", "s1")
s.predict(s1, "listed", "launch")
s.list_(0, [], [("s1", s1, E)])
s.get("s1", 0, [], [("s1", s1, E)])
s.headless(1, [s1])
s.done()

s = Scenario("managed-file", "a server in /etc/codex/managed_config.toml beside a user server: both run (managed is a "
             "layer, not exclusive)", ["managed-file"])
m1 = s.server("managed", "m1")
u1 = s.server("user", "u1")
s.predict(m1, "listed", "launch"); s.predict(u1, "listed", "launch")
s.list_(0, [], [("m1", m1, E), ("u1", u1, E)])
s.get("m1", 0, [], [("m1", m1, E)])
s.headless(1, [m1, u1])
s.done()

s = Scenario("managed-over-user", "the same name in managed_config.toml and the user file: the managed table wins",
             ["managed-file", "precedence-managed"])
m = s.server("managed", "same")
u = s.server("user", "same")
s.predict(m, "listed", "launch"); s.predict(u, "shadowed", "shadowed")
s.list_(0, [], [("same", m, E)])
s.get("same", 0, [], [("same", m, E)])
s.headless(1, [m])
s.done()

s = Scenario("system-syntax-error", "a TOML syntax error in /etc/codex/config.toml: Codex refuses to start (\"failed "
             "to load bootstrap configuration\")", ["malformed-refuses", "system-file"])
s.declare("system/s1", "s1", "system", "stdio", SYSTEM_TOML)
s.raw_file(SYSTEM_TOML, ("[mcp_servers.s1]\n%s\n[mcp_servers\n" % "\n".join(stdio_lines("system/s1"))).encode())
u1 = s.server("user", "u1")
s.no_row("system/s1"); s.predict(u1, "refused", "refused")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

s = Scenario("managed-syntax-error", "a TOML syntax error in /etc/codex/managed_config.toml: Codex refuses to start",
             ["malformed-refuses", "managed-file"])
s.declare("managed/m1", "m1", "managed", "stdio", MANAGED_TOML)
s.raw_file(MANAGED_TOML, ("[mcp_servers.m1]\n%s\n[mcp_servers\n" % "\n".join(stdio_lines("managed/m1"))).encode())
u1 = s.server("user", "u1")
s.no_row("managed/m1"); s.predict(u1, "refused", "refused")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

# ---- the root through a symlink ----

s = Scenario("root-symlink-trust-realpath", "cwd /work/link -> /work/proj, trusted under the realpath: loaded",
             ["root-symlink"])
s.extra = [symlink(LINK, ROOT)]
s.cwd = s.root = LINK
s.env = {"PWD": LINK}
p1 = s.server("project", "p1")
s.chunk(USER_TOML, trust(ROOT))
s.project_loaded(p1)

s = Scenario("root-symlink-trust-link", "cwd /work/link -> /work/proj, trusted only under the link spelling",
             ["root-symlink"])
s.extra = [symlink(LINK, ROOT)]
s.cwd = s.root = LINK
s.env = {"PWD": LINK}
p1 = s.server("project", "p1")
u1 = s.server("user", "u1")
s.chunk(USER_TOML, trust(LINK))
s.project_not_loaded(p1, u1)

# ---- exec details ----

s = Scenario("required-server-fails", "required = true on a server that cannot start (the sentinel exits at once): "
             "exec still starts it and fails", ["required"])
u1 = s.server("user", "u1", extra=["required = true"])
s.predict(u1, "listed", "launch")
s.list_(0, [], [("u1", u1, E)])
s.get("u1", 0, [], [("u1", u1, E)])
s.headless(1, [u1])
s.done()

s = Scenario("http-bearer-env-unset", "an http server whose bearer_token_env_var names an unset variable: mcp list does "
             "not probe it (a bearer token, no OAuth discovery), exec does not connect", ["bearer-env"])
h1 = s.server("user", "h1", "http", extra=['bearer_token_env_var = "SCOPEBOX_UNSET_TOKEN"'])
u1 = s.server("user", "u1")
s.predict(h1, "listed", "unknown"); s.predict(u1, "listed", "launch")
s.list_(0, [], [("h1", h1, E), ("u1", u1, E)])
s.get("h1", 0, [], [("h1", h1, E)])
s.headless(1, [u1])
s.done()

s = Scenario("http-static-authorization", "an http server with a static Authorization header (http_headers): mcp list "
             "does not probe it, exec connects", ["http-headers", "http-connect-is-launch"])
h1 = s.server("user", "h1", "http", extra=['http_headers = { Authorization = "Bearer scopebox-not-a-token" }'])
s.predict(h1, "unknown", "launch", get="listed")
s.list_(0, [], [("h1", h1, E)])
s.get("h1", 0, [], [("h1", h1, E)])
s.headless(1, [h1])
s.done()

s = Scenario("http-env-header-unset", "an http server whose env_http_headers names an unset variable: mcp list probes it "
             "(no header to send), exec connects", ["http-headers", "list-probes-http"])
h1 = s.server("user", "h1", "http", extra=['env_http_headers = { Authorization = "SCOPEBOX_UNSET_HEADER" }'])
s.predict(h1, "unknown", "launch", get="listed")
s.list_(0, [h1], [("h1", h1, E)])
s.get("h1", 0, [], [("h1", h1, E)])
s.headless(1, [h1])
s.done()

s = Scenario("unknown-server-field", "an unknown field in a server table (and a startup timeout): accepted, the server "
             "runs", ["unknown-field"])
u1 = s.server("user", "u1", extra=["scopebox_unknown_field = 1", "startup_timeout_sec = 5"])
s.predict(u1, "listed", "launch")
s.list_(0, [], [("u1", u1, E)])
s.get("u1", 0, [], [("u1", u1, E)])
s.headless(1, [u1])
s.done()

s = Scenario("legacy-profile-key", "a top-level profile = \"p\" (the legacy profile selector) in the user file: "
             "Codex refuses to load its configuration in every mode", ["legacy-profile"])
s.declare("user/pp", "pp", "user", "stdio", USER_TOML)
s.chunk(USER_TOML, 'profile = "p"\n')
s.chunk(USER_TOML, "[profiles.p.mcp_servers.pp]\n%s\n" % "\n".join(stdio_lines("user/pp")))
u1 = s.server("user", "u1")
s.no_row("user/pp"); s.predict(u1, "listed", "launch")
s.diverge(u1, ["headless"], "prediction",
          "mcpscope does not examine profiles (coverage: profile-overlays) and reads no top-level key but "
          "mcp_servers and projects; Codex 0.163.0 refuses a legacy `profile` key outright")
s.list_(1, [], [])
s.get("u1", 1, [], [])
s.headless(1, [])
s.done()

if __name__ == "__main__":
    write()
