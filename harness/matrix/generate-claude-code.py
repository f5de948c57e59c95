#!/usr/bin/env python3
"""Generates harness/matrix/claude-code.json, the Claude Code profile fixture matrix.

The JSON file is the artifact the runner executes and the receipt binds; this script only
saves writing ~50 canary-laden fixtures by hand. Edit here, run
`python3 harness/matrix/generate-claude-code.py > harness/matrix/claude-code.json`, commit both.
Output is deterministic (no clocks, no randomness), so a diff shows exactly what changed.
The helpers all three generators share (entries, canaries, facts, cases, output) are in
matrixlib.py.

Conventions (see README.md): project root /work/proj, HOME /home/node, ~/.claude.json holds
local + user servers, <root>/.mcp.json the project servers, /etc/claude-code/managed-mcp.json
the managed ones. Every stdio server's command is the sentinel (directly, or through a
canary-named symlink to it); every sensitive field carries a registered canary.
Source order in the claude-code profile: local, project, user, managed.
"""

import matrixlib
from matrixlib import (refused, HOME, MIB, ROOT, SENTINEL, absent, canary, d, eq, fill, fifo, js, length, raw, sentinel_link,
                       sentinel_links, symlink, text)

CLAUDE_JSON = HOME + "/.claude.json"
PROJECT_JSON = ROOT + "/.mcp.json"
MANAGED_JSON = "/etc/claude-code/managed-mcp.json"
SCOPE_INDEX = {"local": 0, "project": 1, "user": 2, "managed": 3}


def cmd_link(tag):
    """A canary-named symlink to the sentinel (`matrixlib.sentinel_link`)."""
    return sentinel_link("CANARY-CMD-%s-7f3a" % tag.upper())


def servers(tag, prefix=None):
    """Three servers with a canary in every sensitive field: a direct-sentinel stdio server
    (args, env name and value), a stdio server whose command is a canary-named symlink to the
    sentinel, and a remote server (URL, header name and value)."""
    t = tag.upper()
    p = prefix if prefix is not None else tag + "-"
    return {
        p + "alpha": {
            "command": SENTINEL,
            "args": [canary("CANARY-ARG-%s-1-c41d" % t), "--token=" + canary("CANARY-ARG-%s-2-c41d" % t)],
            "env": {canary("CANARY_ENVNAME_%s_e5a0" % t): canary("CANARY-ENVVAL-%s-e5a0" % t)},
        },
        p + "beta": {
            "command": cmd_link(tag),
            "args": [canary("CANARY-ARG-%s-3-c41d" % t)],
        },
        p + "remote": {
            "type": "http",
            "url": "https://%s/mcp?key=%s"
            % (canary("canary-url-%s-0b9e.invalid" % tag), canary("CANARY-URLQ-%s-0b9e" % t)),
            "headers": {canary("X-Canary-Hdrname-%s-3d7c" % tag): "Bearer " + canary("CANARY-HDRVAL-%s-3d7c" % t)},
        },
    }


def server_names(tag, prefix=None):
    p = prefix if prefix is not None else tag + "-"
    return sorted([p + "alpha", p + "beta", p + "remote"])


def links(*tags):
    return sentinel_links(cmd_link(t) for t in tags)


def claude_json(local=True, user=True, root_key=ROOT, extra=None):
    doc = {}
    if user:
        doc["mcpServers"] = servers("user")
    if local:
        doc["projects"] = {root_key: {"mcpServers": servers("local")}}
    # Unrelated host state that must never be printed either.
    doc["oauthAccount"] = {"emailAddress": canary("CANARY-OTHER-ACCOUNT-77aa")}
    if extra:
        doc.update(extra)
    return doc


def project_json():
    return {"mcpServers": servers("project")}


def managed_json():
    return {"mcpServers": servers("managed")}


# ---- facts ----


def head(complete):
    return matrixlib.head("claude-code", complete)


def src(scope, state, reason=None, count=0):
    i = SCOPE_INDEX[scope]
    return [
        eq("/sources/%d/scope" % i, scope),
        eq("/sources/%d/state" % i, state),
        eq("/sources/%d/reason" % i, reason),
        eq("/sources/%d/serverCount" % i, count),
    ]


def srv(i, name, scope, shadowed=(), excluded=(), valid=True):
    return [
        eq("/servers/%d/name" % i, name),
        eq("/servers/%d/scope" % i, scope),
        eq("/servers/%d/possibleShadowedBy" % i, list(shadowed)),
        eq("/servers/%d/possiblyExcludedBy" % i, list(excluded)),
        eq("/servers/%d/shape/valid" % i, valid),
    ]


def rows(scope_tags, excluded=()):
    """Fact rows for servers in source order, each scope's names sorted."""
    facts, i = [], 0
    for scope, tag in scope_tags:
        for name in server_names(tag):
            facts += srv(i, name, scope, excluded=excluded if scope != "managed" else ())
            i += 1
    facts.append(length("/servers", i))
    return facts


# Human output must never show these, whatever the case (beyond the canaries).
HUMAN_NEVER = [SENTINEL, "https://", "--token=", "Bearer"]


def case(id, description, args, fixture, exit_code, json_facts=None, cwd=None, env=None, **text_facts):
    matrixlib.case(id, "claude-code", description, args, fixture, exit_code, json_facts, cwd, env, **text_facts)


def full_fixture():
    return [
        d(ROOT),
        text(PROJECT_JSON, js(project_json())),
        text(CLAUDE_JSON, js(claude_json())),
        *links("local", "user", "project"),
    ]


def full_facts(complete=True):
    return (
        head(complete)
        + src("local", "present", count=3)
        + src("project", "present", count=3)
        + src("user", "present", count=3)
        + src("managed", "missing")
        + rows([("local", "local"), ("project", "project"), ("user", "user")])
    )


# ---- baseline: every scope present, both output modes, client spellings ----

case("all-scopes-json", "local, project and user servers present, managed missing; JSON facts by pointer",
     [ROOT, "--json"], full_fixture(), 0, full_facts(), stderr_empty=True)
case("client-claude-alias-json", "--client claude is the same profile as the default (same facts as all-scopes-json)",
     [ROOT, "--json", "--client", "claude"], full_fixture(), 0, full_facts(), stderr_empty=True)
case("client-claude-code-explicit-json", "--client claude-code is the default profile (same facts as all-scopes-json)",
     [ROOT, "--client", "claude-code", "--json"], full_fixture(), 0, full_facts(), stderr_empty=True)
case("all-scopes-human", "human output lists scopes and server names, never commands, URLs, args or header values",
     [ROOT], full_fixture(), 0,
     stdout_contains=["Claude Code inventory", "local", "project", "user", "managed", "local-alpha", "project-beta", "user-remote", "complete"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("client-claude-alias-human", "--client claude human output matches the default human facts",
     [ROOT, "--client", "claude"], full_fixture(), 0,
     stdout_contains=["Claude Code inventory", "local-alpha", "project-beta", "user-remote", "complete"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("nothing-configured-json", "no configuration anywhere: every source missing, inventory complete",
     [ROOT, "--json"], [d(ROOT)], 0,
     head(True) + src("local", "missing") + src("project", "missing") + src("user", "missing") + src("managed", "missing")
     + [length("/servers", 0), length("/sources", 4)], stderr_empty=True)

# ---- managed ----

managed_fixture = full_fixture() + [text(MANAGED_JSON, js(managed_json())), *links("managed")]
case("managed-present-json", "managed-mcp.json present: every local/project/user server possiblyExcludedBy managed",
     [ROOT, "--json"], managed_fixture, 0,
     head(True) + src("local", "present", count=3) + src("project", "present", count=3) + src("user", "present", count=3)
     + src("managed", "present", count=3)
     + rows([("local", "local"), ("project", "project"), ("user", "user"), ("managed", "managed")], excluded=["managed"]))
case("managed-present-human", "human output with managed servers present",
     [ROOT], managed_fixture, 0,
     stdout_contains=["managed-alpha", "managed-remote", "project-alpha"], stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("managed-empty-object-excludes", "an empty managed-mcp.json still excludes every other server",
     [ROOT, "--json"], [d(ROOT), text(PROJECT_JSON, js(project_json())), *links("project"), text(MANAGED_JSON, "{}")], 0,
     head(True) + src("project", "present", count=3) + src("managed", "present", count=0)
     + rows([("project", "project")], excluded=["managed"]))

case("managed-unreadable-still-excludes", "a managed-mcp.json that exists but cannot be read may still be honoured: other servers stay possiblyExcludedBy managed",
     [ROOT, "--json"], [d(ROOT), text(PROJECT_JSON, js(project_json())), *links("project", "managed"), text(MANAGED_JSON, js(managed_json()), "0000")], 1,
     head(False) + src("project", "present", count=3) + src("managed", "unreadable", "permission-denied")
     + rows([("project", "project")], excluded=["managed"]), stderr_contains=["inventory incomplete"])

# ---- shadowing across scopes ----

def shared(tag):
    """The full server set under names every scope shares (shared-alpha, -beta, -remote)."""
    return servers(tag, prefix="shared-")


SHARED = server_names("", prefix="shared-")


def shared_rows(scopes, excluded_for=()):
    """Rows for the shared names: per scope in source order, names sorted; a scope's rows are
    possibly shadowed by every higher shadow scope present (local > project > user)."""
    order = ["local", "project", "user"]
    facts, i = [], 0
    for scope in scopes:
        higher = [h for h in order if h in scopes and order.index(h) < order.index(scope)] if scope in order else []
        for name in SHARED:
            facts += srv(i, name, scope, shadowed=higher, excluded=["managed"] if scope in excluded_for else [])
            i += 1
    return facts + [length("/servers", i)]


case("shadowing-three-scopes", "the same names in local, project and user: possibleShadowedBy lists the higher scopes in order",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})),
      text(CLAUDE_JSON, js({"mcpServers": shared("user"), "projects": {ROOT: {"mcpServers": shared("local")}}})),
      *links("local", "project", "user")],
     0, head(True) + shared_rows(["local", "project", "user"]))
case("shadowing-project-over-user", "names in project and user only: the user rows are possibly shadowed by project",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})),
      text(CLAUDE_JSON, js({"mcpServers": shared("user")})), *links("project", "user")],
     0, head(True) + shared_rows(["project", "user"]))
case("shadowing-local-over-user", "names in local and user only: the user rows are possibly shadowed by local",
     [ROOT, "--json"],
     [d(ROOT), text(CLAUDE_JSON, js({"mcpServers": shared("user"), "projects": {ROOT: {"mcpServers": shared("local")}}})),
      *links("local", "user")],
     0, head(True) + shared_rows(["local", "user"]))
case("shadowing-managed-not-a-shadow-scope", "managed servers of the same names shadow nothing; they exclude instead",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})), text(MANAGED_JSON, js({"mcpServers": shared("managed")})),
      *links("project", "managed")],
     0, head(True) + shared_rows(["project", "managed"], excluded_for=["project"]))
case("shadowing-human", "human output names the shadowing scopes",
     [ROOT],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})),
      text(CLAUDE_JSON, js({"mcpServers": shared("user"), "projects": {ROOT: {"mcpServers": shared("local")}}})),
      *links("local", "project", "user")],
     0, stdout_contains=["shared-alpha", "possibly shadowed by: local, project"], stdout_not_contains=HUMAN_NEVER, stderr_empty=True)

# ---- local key lookup ----

ALIAS = "/work/alias"
case("local-key-explicit-spelling", "root given through a symlinked spelling; projects has only that spelling",
     [ALIAS, "--json"],
     [d(ROOT), symlink(ALIAS, ROOT),
      text(CLAUDE_JSON, js(claude_json(user=False, root_key=ALIAS))), *links("local")],
     0,
     head(True) + src("local", "present", count=3) + src("user", "present", count=0)
     + [eq("/root/requested", ALIAS), eq("/root/explicit", ALIAS), eq("/root/canonical", ROOT),
        eq("/sources/0/container", "projects[%s].mcpServers" % ALIAS)]
     + rows([("local", "local")]))
case("local-key-ambiguous", "entries under both the canonical root and the explicit spelling: local is malformed, user still read",
     [ALIAS, "--json"],
     [d(ROOT), symlink(ALIAS, ROOT),
      text(CLAUDE_JSON, js(claude_json(extra={"projects": {ROOT: {"mcpServers": servers("local")}, ALIAS: {"mcpServers": servers("other")}}}))),
      *links("local", "other", "user")],
     1,
     head(False) + src("local", "malformed", "ambiguous-project-key") + src("user", "present", count=3)
     + rows([("user", "user")]),
     stderr_contains=["inventory incomplete"])
case("local-other-project-keys-ignored", "servers under another project's key are never reported",
     [ROOT, "--json"],
     [d(ROOT), text(CLAUDE_JSON, js(claude_json(local=False, user=False, extra={"projects": {"/work/other": {"mcpServers": servers("other")}}}))),
      *links("other")],
     0, head(True) + src("local", "present", count=0) + src("user", "present", count=0) + [length("/servers", 0)])
case("local-projects-wrong-type", "projects is an array: local malformed (wrong-container-type), user still present",
     [ROOT, "--json"],
     [d(ROOT), text(CLAUDE_JSON, js({"mcpServers": servers("user"), "projects": [ROOT]})), *links("user")],
     1, head(False) + src("local", "malformed", "wrong-container-type") + src("user", "present", count=3) + rows([("user", "user")]))
case("user-mcpservers-wrong-type", "top-level mcpServers is an array: user malformed, local still present",
     [ROOT, "--json"],
     [d(ROOT), text(CLAUDE_JSON, js({"mcpServers": [servers("user")], "projects": {ROOT: {"mcpServers": servers("local")}}})), *links("user", "local")],
     1, head(False) + src("local", "present", count=3) + src("user", "malformed", "wrong-container-type") + rows([("local", "local")]))
case("malformed-entry-stays-visible", "a server entry with wrong field types is listed by name with shape.valid false",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": {"broken": {"command": 42, "args": canary("CANARY-ARG-BROKEN-c41d")}, **servers("project")}})), *links("project")],
     0,
     head(True) + src("project", "present", count=4) + srv(0, "broken", "project", valid=False)
     + srv(1, "project-alpha", "project") + [length("/servers", 4)])

# ---- every file state for every source file ----
#
# ~/.claude.json carries both local and user: a file-level state applies to both sources.

FILES = {
    "claude-json": (CLAUDE_JSON, lambda: claude_json(), ["local", "user"], ["local", "user"]),
    "project": (PROJECT_JSON, project_json, ["project"], ["project"]),
    "managed": (MANAGED_JSON, managed_json, ["managed"], ["managed"]),
}


def state_case(file_id, state_id, description, entries, state, reason, exit_code):
    path, doc, scopes, tags = FILES[file_id]
    fixture = [d(ROOT)] + entries + links(*tags)
    facts = head(state in ("present", "missing"))
    for s in scopes:
        facts += src(s, state, reason, count=3 if state == "present" else 0)
    if state != "present":
        facts.append(length("/servers", 0))
    case("%s-%s" % (file_id, state_id), description, [ROOT, "--json"], fixture, exit_code, facts,
         **matrixlib.incomplete_kwargs(exit_code))


for fid, (path, doc, scopes, tags) in FILES.items():
    body = js(doc())
    parent = path.rsplit("/", 1)[0]
    real = parent + "/real-" + path.rsplit("/", 1)[1].lstrip(".")
    state_case(fid, "unreadable", "mode 0000: unreadable (permission-denied)", [text(path, body, "0000")], "unreadable", "permission-denied", 1)
    state_case(fid, "malformed-syntax", "truncated JSON", [text(path, body[:-7])], "malformed", "syntax", 1)
    dup = body[:-1] + "," + js("mcpServers")[0:] + ":{}}"
    state_case(fid, "malformed-duplicate-key", "a duplicated top-level key", [text(path, dup)], "malformed", "duplicate-key", 1)
    bad = body.encode().replace(b"alpha", b"alph\xff", 1)
    state_case(fid, "malformed-invalid-utf8", "a 0xFF byte inside a server name", [raw(path, bad)], "malformed", "invalid-utf8", 1)
    state_case(fid, "malformed-bom", "a UTF-8 byte order mark before strict JSON", [raw(path, b"\xef\xbb\xbf" + body.encode())], "malformed", "byte-order-mark", 1)
    state_case(fid, "malformed-comment", "a // comment (strict JSON only)", [text(path, "// " + canary("CANARY-COMMENT-%s-19fe" % fid.upper()) + "\n" + body)], "malformed", "comment", 1)
    state_case(fid, "malformed-trailing-comma", "a trailing comma", [text(path, body[:-1] + ",}")], "malformed", "trailing-comma", 1)
    state_case(fid, "malformed-wrong-container", "the top level is an array", [text(path, "[" + body + "]")], "malformed", "wrong-container-type", 1)
    state_case(fid, "symlink-final", "the file is a symlink to a valid file: skipped, never followed",
               [text(real, body), symlink(path, real)], "symlink-skipped", "symlink", 1)
    state_case(fid, "symlink-dangling", "the file is a dangling symlink", [symlink(path, parent + "/nowhere.json")], "symlink-skipped", "symlink", 1)
    state_case(fid, "not-file-fifo", "the file is a FIFO: classified without being opened", [fifo(path)], "not-file", "fifo", 1)
    state_case(fid, "not-file-directory", "the file is a directory", [d(path)], "not-file", "directory", 1)
    state_case(fid, "too-large", "1 MiB + 1 byte (valid JSON padded with spaces)", [fill(path, body, MIB + 1)], "too-large", "exceeds-read-limit", 1)
    state_case(fid, "exactly-1mib", "exactly 1 MiB of valid JSON is read", [fill(path, body, MIB)], "present", None, 0)

# ---- HOME ----

case("home-through-symlink", "HOME itself may resolve through a symlink (the base is trusted)",
     [ROOT, "--json"],
     [d(ROOT), d(HOME + "/real"), symlink(HOME + "/alias", HOME + "/real"),
      text(HOME + "/real/.claude.json", js(claude_json())), *links("local", "user")],
     0, head(True) + src("local", "present", count=3) + src("user", "present", count=3)
     + [eq("/sources/0/path", HOME + "/alias/.claude.json")] + rows([("local", "local"), ("user", "user")]),
     env={"HOME": HOME + "/alias"})
case("home-empty", "HOME set to the empty string: local and user are unreadable (home-not-set)",
     [ROOT, "--json"], [d(ROOT), text(CLAUDE_JSON, js(claude_json())), *links("local", "user")], 1,
     head(False) + src("local", "unreadable", "home-not-set") + src("user", "unreadable", "home-not-set") + [length("/servers", 0)],
     env={"HOME": ""})

# ---- instructions ----

DEEP = "/work/a/b/c/proj"
LEVEL_NAMES = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude/AGENTS.md"]


def instr(i, scope, name, state):
    return [eq("/instructions/%d/scope" % i, scope), eq("/instructions/%d/name" % i, name), eq("/instructions/%d/state" % i, state)]


def body(label):
    return "# instructions\n" + canary("CANARY-INSTR-%s-5e11" % label) + "\n"


# Levels nearest first: /work/a/b/c/proj, /work/a/b/c, /work/a/b, /work/a, /work, / (5 names each),
# then user ~/.claude/CLAUDE.md, then managed CLAUDE.md.
case("instructions-ancestors-json", "CLAUDE.md/AGENTS.md at the root and at two ancestor levels, user and managed: metadata only",
     [DEEP, "--json"],
     [d(DEEP), text(DEEP + "/AGENTS.md", body("ROOT-AGENTS")), text(DEEP + "/.claude/CLAUDE.md", body("ROOT-DOTCLAUDE")),
      text("/work/a/b/CLAUDE.md", body("ANCESTOR-B")), text("/work/a/CLAUDE.md", body("ANCESTOR-A")),
      text("/work/a/CLAUDE.local.md", body("ANCESTOR-A-LOCAL")),
      text(HOME + "/.claude/CLAUDE.md", body("USER")), text("/etc/claude-code/CLAUDE.md", body("MANAGED"))],
     0,
     head(True) + [length("/instructions", 32)]
     + instr(0, "project", "CLAUDE.md", "missing") + instr(1, "project", ".claude/CLAUDE.md", "present")
     + instr(3, "project", "AGENTS.md", "present")
     + instr(5, "ancestor", "CLAUDE.md", "missing")
     + instr(10, "ancestor", "CLAUDE.md", "present") + instr(15, "ancestor", "CLAUDE.md", "present")
     + instr(17, "ancestor", "CLAUDE.local.md", "present") + instr(20, "ancestor", "CLAUDE.md", "missing")
     + instr(30, "user", ".claude/CLAUDE.md", "present") + instr(31, "managed", "CLAUDE.md", "present")
     + [eq("/instructions/10/path", "/work/a/b/CLAUDE.md"), eq("/instructions/3/bytes", len(body("ROOT-AGENTS")))],
     stderr_empty=True)
case("instructions-ancestors-human", "human output counts instruction candidates and never prints their bodies",
     [DEEP],
     [d(DEEP), text(DEEP + "/AGENTS.md", body("ROOT-AGENTS")), text("/work/a/b/CLAUDE.md", body("ANCESTOR-B")),
      text("/work/a/CLAUDE.md", body("ANCESTOR-A"))],
     0, stdout_contains=["Instructions", "/work/a/b/CLAUDE.md", "/work/a/CLAUDE.md"], stdout_not_contains=HUMAN_NEVER + ["# instructions"])
case("instructions-unreadable-and-symlinked", "an unreadable CLAUDE.md, a symlinked AGENTS.md and a symlinked .claude dir",
     [ROOT, "--json"],
     [d(ROOT), text(ROOT + "/CLAUDE.md", body("DENIED"), "0000"),
      text("/work/elsewhere/AGENTS.md", body("LINKED")), symlink(ROOT + "/AGENTS.md", "/work/elsewhere/AGENTS.md"),
      text("/work/elsewhere/.claude/CLAUDE.md", body("LINKED-DIR")), symlink(ROOT + "/.claude", "/work/elsewhere/.claude")],
     0,
     head(True) + instr(0, "project", "CLAUDE.md", "unreadable") + instr(1, "project", ".claude/CLAUDE.md", "symlink-skipped")
     + instr(3, "project", "AGENTS.md", "symlink-skipped"))


# ---- what launches: approval, trust and policy keys; approval and predictedLaunch ----
#
# The rules observed on the native Claude Code 2.1.327 (docs/native-claude-code.md), one case
# per rule. Every settings file also carries unrelated keys with canaries: mcpscope reads the
# approval, trust and policy keys only, so none may ever show.

USER_SETTINGS = HOME + "/.claude/settings.json"
PROJECT_SETTINGS = ROOT + "/.claude/settings.json"
LOCAL_SETTINGS = ROOT + "/.claude/settings.local.json"
MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
VALIDATED = "2.1.327"


def settings(tag, **keys):
    """A settings document: `keys` plus unrelated values that carry canaries."""
    t = tag.upper()
    doc = {"env": {"API_TOKEN": canary("CANARY-SETTINGS-ENV-%s-91c2" % t)},
           "apiKeyHelper": canary("/home/node/bin/CANARY-SETTINGS-HELPER-%s-91c2" % t),
           "permissions": {"allow": ["Bash(" + canary("CANARY-SETTINGS-PERM-%s-91c2" % t) + ")"]}}
    doc.update(keys)
    return doc


def trusted(**keys):
    """~/.claude.json with local and user servers and `keys` under projects[ROOT]."""
    doc = claude_json()
    doc["projects"][ROOT].update(keys)
    return doc


def launch_fixture(*extra, claude=None):
    return [d(ROOT), text(PROJECT_JSON, js(project_json())),
            text(CLAUDE_JSON, js(claude if claude is not None else claude_json())),
            *links("local", "user", "project"), *extra]


def predicted(list_, headless, validated=True):
    return {"list": list_, "headless": headless, "validatedAgainst": VALIDATED if validated else None}


def launch_rows(entries):
    """Facts on rows in output order: (scope, name, list, headless, approval, validated);
    approval is (state, by) for project rows, None for the others (the field is absent)."""
    facts = []
    for i, (scope, name, list_, headless, approval, validated) in enumerate(entries):
        facts += [eq("/servers/%d/name" % i, name), eq("/servers/%d/scope" % i, scope),
                  eq("/servers/%d/predictedLaunch" % i, predicted(list_, headless, validated))]
        if approval is None:
            facts.append(absent("/servers/%d/approval" % i))
        else:
            facts.append(eq("/servers/%d/approval" % i, {"state": approval[0], "by": approval[1]}))
    facts.append(length("/servers", len(entries)))
    return facts


def launch_case(id, description, fixture, project, local=("launch", "launch"), user=("launch", "launch"),
                exit_code=0, complete=True, validated=True, overrides=None):
    """The full server set (local, project, user): `project` maps each project name to
    (list, headless, approval); local and user rows share one prediction unless `overrides`
    ({(scope, name): (list, headless)}) says otherwise."""
    overrides = overrides or {}
    entries = []
    for scope, tag in (("local", "local"), ("project", "project"), ("user", "user")):
        for name in server_names(tag):
            if scope == "project":
                list_, headless, approval = project[name]
            else:
                list_, headless = overrides.get((scope, name), local if scope == "local" else user)
                approval = None
            entries.append((scope, name, list_, headless, approval, validated))
    case(id, description, [ROOT, "--json"], fixture, exit_code, head(complete) + launch_rows(entries),
         **matrixlib.incomplete_kwargs(exit_code))


def same(state_by, list_, headless):
    """Every project row alike."""
    return {n: (list_, headless, state_by) for n in server_names("project")}


PENDING = ("pending", None)
A, B, R = server_names("project")  # project-alpha, project-beta, project-remote

launch_case("launch-pending-by-default", "no approval anywhere: mcp list shows project servers pending, a headless "
            "session runs them anyway; user and local servers run in both",
            launch_fixture(), same(PENDING, "pending", "launch"))
case("launch-human-plain-words", "the human report says plainly what runs where",
     [ROOT], launch_fixture(), 0,
     stdout_contains=["approval: pending (no file approves or rejects it)",
                      "launches: mcp list/get shows it pending approval and does not run it; "
                      "runs in headless sessions without approval",
                      "launches: runs in mcp list/get (health check) and in headless sessions\n",
                      "  launches: what `claude mcp list`/`mcp get` and a headless `claude -p` session would do"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
launch_case("launch-user-settings-approve-without-trust", "~/.claude/settings.json enabledMcpjsonServers approves "
            "without trust; a bare string counts as a one-element list",
            launch_fixture(text(USER_SETTINGS, js(settings("user", enabledMcpjsonServers=A)))),
            {A: ("launch", "launch", ("approved", USER_SETTINGS)), B: ("pending", "launch", PENDING),
             R: ("pending", "launch", PENDING)})
launch_case("launch-user-settings-enable-all", "~/.claude/settings.json enableAllProjectMcpServers approves every "
            "project server without trust",
            launch_fixture(text(USER_SETTINGS, js(settings("user", enableAllProjectMcpServers=True)))),
            same(("approved", USER_SETTINGS), "launch", "launch"))
launch_case("launch-project-settings-need-trust", "<root>/.claude/settings.json enableAllProjectMcpServers without "
            "trust changes nothing",
            launch_fixture(text(PROJECT_SETTINGS, js(settings("project", enableAllProjectMcpServers=True)))),
            same(PENDING, "pending", "launch"))
launch_case("launch-project-settings-trusted", "<root>/.claude/settings.json approves once projects[root]."
            "hasTrustDialogAccepted is true",
            launch_fixture(text(PROJECT_SETTINGS, js(settings("project", enabledMcpjsonServers=[B]))),
                           claude=trusted(hasTrustDialogAccepted=True)),
            {A: ("pending", "launch", PENDING), B: ("launch", "launch", ("approved", PROJECT_SETTINGS)),
             R: ("pending", "launch", PENDING)})
launch_case("launch-local-settings-trusted", "<root>/.claude/settings.local.json approves with trust",
            launch_fixture(text(LOCAL_SETTINGS, js(settings("local", enabledMcpjsonServers=[R]))),
                           claude=trusted(hasTrustDialogAccepted=True)),
            {A: ("pending", "launch", PENDING), B: ("pending", "launch", PENDING),
             R: ("launch", "launch", ("approved", LOCAL_SETTINGS))})
launch_case("launch-claude-json-needs-trust", "projects[root].enabledMcpjsonServers in ~/.claude.json is not honoured "
            "without hasTrustDialogAccepted: true",
            launch_fixture(claude=trusted(enabledMcpjsonServers=[A], hasTrustDialogAccepted=False)),
            same(PENDING, "pending", "launch"))
launch_case("launch-claude-json-trusted", "projects[root].enabledMcpjsonServers approves with trust",
            launch_fixture(claude=trusted(enabledMcpjsonServers=[A], hasTrustDialogAccepted=True)),
            {A: ("launch", "launch", ("approved", CLAUDE_JSON)), B: ("pending", "launch", PENDING),
             R: ("pending", "launch", PENDING)})
launch_case("launch-rejection-wins-without-trust", "disabledMcpjsonServers in <root>/.claude/settings.local.json "
            "rejects without trust, over enableAllProjectMcpServers in ~/.claude/settings.json",
            launch_fixture(text(USER_SETTINGS, js(settings("user", enableAllProjectMcpServers=True))),
                           text(LOCAL_SETTINGS, js(settings("local", disabledMcpjsonServers=[A])))),
            {A: ("rejected", "rejected", ("rejected", LOCAL_SETTINGS)),
             B: ("launch", "launch", ("approved", USER_SETTINGS)), R: ("launch", "launch", ("approved", USER_SETTINGS))})
launch_case("launch-managed-settings-approve-and-deny", "managed-settings.json approves project-alpha and its "
            "deniedMcpServers drops project-beta by serverName (not loaded in any mode)",
            launch_fixture(text(MANAGED_SETTINGS, js(settings("managed", enabledMcpjsonServers=[A],
                                                              deniedMcpServers=[{"serverName": B}])))),
            {A: ("launch", "launch", ("approved", MANAGED_SETTINGS)), B: ("excluded", "excluded", PENDING),
             R: ("pending", "launch", PENDING)})
case("launch-managed-allow-list", "managed-settings.json allowedMcpServers keeps only the servers it names "
     "(rule not yet observed natively: validatedAgainst null on the rows it drops)",
     [ROOT, "--json"],
     launch_fixture(text(MANAGED_SETTINGS, js(settings("managed", allowedMcpServers=[{"serverName": "user-alpha"}])))),
     0, head(True) + launch_rows(
         [("local", n, "excluded", "excluded", None, False) for n in server_names("local")]
         + [("project", n, "excluded", "excluded", PENDING, False) for n in server_names("project")]
         + [("user", "user-alpha", "launch", "launch", None, True)]
         + [("user", n, "excluded", "excluded", None, False) for n in server_names("user")[1:]]),
     stderr_empty=True)
launch_case("launch-deny-entry-not-by-name", "a deniedMcpServers entry by command is never read: every row it might "
            "match is unknown, and its value never shows",
            launch_fixture(text(MANAGED_SETTINGS, js(settings("managed", deniedMcpServers=[
                {"serverCommand": [canary("CANARY-SETTINGS-DENYCMD-4b0e")]}])))),
            same(PENDING, "unknown", "unknown"), local=("unknown", "unknown"), user=("unknown", "unknown"),
            validated=False)
launch_case("launch-disabled-mcp-servers", "projects[root].disabledMcpServers turns user and local servers off for "
            "this project (listed disabled, never run)",
            launch_fixture(claude=trusted(disabledMcpServers=["user-alpha", "local-beta"])),
            same(PENDING, "pending", "launch"),
            overrides={("user", "user-alpha"): ("rejected", "rejected"),
                       ("local", "local-beta"): ("rejected", "rejected")})
case("launch-pending-project-vs-user", "one name in project (pending) and user: mcp list runs the user one, a "
     "headless session the project one",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})),
      text(CLAUDE_JSON, js({"mcpServers": shared("user")})), *links("project", "user")],
     0, head(True) + launch_rows(
         [("project", n, "shadowed", "launch", PENDING, True) for n in sorted(shared("project"))]
         + [("user", n, "launch", "shadowed", None, True) for n in sorted(shared("user"))]),
     stderr_empty=True)
case("launch-local-wins-everywhere", "one name in local, project (approved) and user: the local one runs in every mode, "
     "the others are shadowed in both",
     [ROOT, "--json"],
     [d(ROOT), text(PROJECT_JSON, js({"mcpServers": shared("project")})),
      text(CLAUDE_JSON, js({"mcpServers": shared("user"), "projects": {ROOT: {"mcpServers": shared("local")}}})),
      text(USER_SETTINGS, js(settings("user", enableAllProjectMcpServers=True))),
      *links("local", "project", "user")],
     0, head(True) + launch_rows(
         [("local", n, "launch", "launch", None, True) for n in sorted(shared("local"))]
         + [("project", n, "shadowed", "shadowed", ("approved", USER_SETTINGS), True) for n in sorted(shared("project"))]
         + [("user", n, "shadowed", "shadowed", None, True) for n in sorted(shared("user"))]),
     stderr_empty=True)
launch_case("launch-managed-mcp-empty-excludes", "an empty managed-mcp.json ({}) makes every other row excluded in "
            "every mode, approved or not",
            launch_fixture(text(MANAGED_JSON, "{}"), text(USER_SETTINGS, js(settings("user", enabledMcpjsonServers=[A])))),
            {A: ("excluded", "excluded", ("approved", USER_SETTINGS)), B: ("excluded", "excluded", PENDING),
             R: ("excluded", "excluded", PENDING)},
            local=("excluded", "excluded"), user=("excluded", "excluded"))
launch_case("launch-managed-mcp-malformed-excludes", "a managed-mcp.json with a trailing comma still makes the "
            "client load nothing else: every row excluded in every mode",
            launch_fixture(raw(MANAGED_JSON, (js(managed_json())[:-1] + ",}").encode()), *links("managed")),
            same(PENDING, "excluded", "excluded"), local=("excluded", "excluded"), user=("excluded", "excluded"),
            exit_code=1, complete=False)
case("launch-symlink-key-not-read", "root through a symlink: local rows under the symlinked spelling are never read by "
     "the client (not-read), and trust or approvals under it do not count",
     [ALIAS, "--json"],
     [d(ROOT), symlink(ALIAS, ROOT), text(PROJECT_JSON, js(project_json())),
      text(CLAUDE_JSON, js(claude_json(user=False, root_key=ALIAS,
                                       extra={"projects": {ALIAS: {"mcpServers": servers("local"),
                                                                   "hasTrustDialogAccepted": True,
                                                                   "enabledMcpjsonServers": [A]}}}))),
      *links("local", "project")],
     0, head(True) + launch_rows(
         [("local", n, "not-read", "not-read", None, True) for n in server_names("local")]
         + [("project", n, "pending", "launch", PENDING, True) for n in server_names("project")]),
     stderr_empty=True)
launch_case("launch-malformed-settings-unknown", "a settings file with a trailing comma (the client ignores it; "
            "mcpscope cannot read it): approvals it could decide are unknown, the inventory stays complete",
            launch_fixture(raw(USER_SETTINGS, (js(settings("user", enabledMcpjsonServers=[A]))[:-1] + ",}").encode())),
            same(("unknown", USER_SETTINGS), "unknown", "unknown"))
launch_case("launch-settings-symlink-not-followed", "<root>/.claude/settings.local.json is a symlink (to a file that "
            "would approve everything): never followed, approvals unknown",
            launch_fixture(text(HOME + "/elsewhere.json", js(settings("elsewhere", enableAllProjectMcpServers=True))),
                           symlink(LOCAL_SETTINGS, HOME + "/elsewhere.json"),
                           claude=trusted(hasTrustDialogAccepted=True)),
            same(("unknown", LOCAL_SETTINGS), "unknown", "unknown"))
launch_case("launch-settings-fifo-no-hang", "<root>/.claude/settings.json is a FIFO: never opened (no hang), "
            "approvals unknown",
            launch_fixture(fifo(PROJECT_SETTINGS)),
            same(("unknown", PROJECT_SETTINGS), "unknown", "unknown"))

# ---- roots ----

case("root-empty-string", "an empty root argument is refused (exit 1); --json answers with the refusal",
     ["", "--json"], full_fixture(), 1, refused("invalid-root", "empty", ""),
     stderr_contains=["the root argument is empty"])
case("root-missing-path", "a root that does not exist is refused (exit 1)",
     ["/work/nope", "--json"], full_fixture(), 1, refused("invalid-root", "not-found", "/work/nope"),
     stderr_contains=["root does not exist"])
case("root-is-a-file", "a root that is a file is refused (exit 1)",
     [PROJECT_JSON, "--json"], full_fixture(), 1, refused("invalid-root", "not-directory", PROJECT_JSON),
     stderr_contains=["root is not a directory"])
case("root-dot-with-cwd", ". selects the current directory",
     [".", "--json"], full_fixture(), 0,
     full_facts() + [eq("/root/requested", "."), eq("/root/explicit", ROOT), eq("/root/canonical", ROOT)], cwd=ROOT)
case("root-relative-with-cwd", "a relative root is resolved against the current directory",
     ["proj", "--json"], full_fixture(), 0,
     full_facts() + [eq("/root/requested", "proj"), eq("/root/canonical", ROOT)], cwd="/work")

# ---- usage errors ----

case("client-unknown", "an unknown client is a usage error (exit 2) before anything is read",
     [ROOT, "--client", "kursor", "--json"], full_fixture(), 2, refused("usage"), stderr_contains=["kursor", "cursor"])
case("flag-unknown", "an unknown flag is a usage error (exit 2); without --json nothing on stdout",
     [ROOT, "--frobnicate"], full_fixture(), 2, stdout_empty=True)
case("root-argument-missing", "no root argument is a usage error (exit 2)",
     ["--json"], full_fixture(), 2, refused("usage"))

matrixlib.write("claude-code")
