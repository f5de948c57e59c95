#!/usr/bin/env python3
"""Generates harness/matrix/vscode.json, the VS Code / Copilot profile (--client vscode)
fixture matrix.

The JSON file is the artifact the runner executes and the receipt binds; this script only
saves writing the canary-laden fixtures by hand. Edit here, run
`python3 harness/matrix/generate-vscode.py > harness/matrix/vscode.json`, commit both.
Output is deterministic (no clocks, no randomness), so a diff shows exactly what changed.
The helpers all three generators share (entries, canaries, facts, cases, output) are in
matrixlib.py.

Conventions (as in generate-claude-code.py): project root /work/proj, HOME /home/node. The four
origins, in source order: vscode-project (/work/proj/.vscode/mcp.json, JSONC, `servers`),
copilot-project (/work/proj/.mcp.json, JSONC, `mcpServers` or a bare map), vscode-user
(/home/node/.config/Code/User/mcp.json, JSONC, `servers`), copilot-user
(/home/node/.copilot/mcp-config.json, strict JSON, `mcpServers`). Every stdio server's command
is the sentinel (directly, or through a canary-named symlink to it); every sensitive field
(args, env names and values, URLs, header names and values, `${input:...}` placeholders,
comments, root fields, instruction bodies) carries a registered canary. The profile's rules are
in inventory/VSCODE.md.
"""

import matrixlib
from matrixlib import (refused, HOME, MIB, ROOT, SENTINEL, absent, canary, d, eq, fill, fifo, js, length, raw, sentinel_link,
                       sentinel_links, symlink, text)

VSCODE_PROJECT = ROOT + "/.vscode/mcp.json"
COPILOT_PROJECT = ROOT + "/.mcp.json"
VSCODE_USER = HOME + "/.config/Code/User/mcp.json"
COPILOT_USER = HOME + "/.copilot/mcp-config.json"
CLAUDE_JSON = HOME + "/.claude.json"

ORIGINS = ["vscode-project", "copilot-project", "vscode-user", "copilot-user"]
INDEX = {o: i for i, o in enumerate(ORIGINS)}
FILES = {
    "vscode-project": VSCODE_PROJECT,
    "copilot-project": COPILOT_PROJECT,
    "vscode-user": VSCODE_USER,
    "copilot-user": COPILOT_USER,
}
CONTAINER = {"vscode-project": "servers", "copilot-project": "mcpServers", "vscode-user": "servers", "copilot-user": "mcpServers"}
FORMAT = {"vscode-project": "vscode-servers", "copilot-project": "portable-mcpServers", "vscode-user": "vscode-servers", "copilot-user": "portable-mcpServers"}
PARSER = {"vscode-project": "jsonc", "copilot-project": "jsonc", "vscode-user": "jsonc", "copilot-user": "json"}
TAG = {"vscode-project": "vp", "copilot-project": "cp", "vscode-user": "vu", "copilot-user": "cu"}


def cmd_link(tag):
    """A canary-named symlink to the sentinel (`matrixlib.sentinel_link`)."""
    return sentinel_link("CANARY-VSC-CMD-%s-41be" % tag.upper())


def links(*tags):
    return sentinel_links(cmd_link(t) for t in tags)


def servers(origin, prefix=None):
    """Three servers with a canary in every sensitive field: a direct-sentinel stdio server
    (args, env name and value), a stdio server whose command is a canary-named symlink to the
    sentinel, and a remote server (URL, header name and value). Entry grammar follows the
    origin: VS Code entries use `type: stdio` and a `${input:...}` placeholder, portable ones
    `type: local` and `tools`."""
    tag = TAG[origin]
    t = tag.upper()
    p = prefix if prefix is not None else tag + "-"
    vscode = origin.startswith("vscode")
    alpha = {
        "type": "stdio" if vscode else "local",
        "command": SENTINEL,
        "args": [canary("CANARY-VSC-ARG-%s-1-9d2c" % t), "--token=" + canary("CANARY-VSC-ARG-%s-2-9d2c" % t)],
        "env": {canary("CANARY_VSC_ENVNAME_%s_71f0" % t): canary("CANARY-VSC-ENVVAL-%s-71f0" % t)},
    }
    beta = {"command": cmd_link(tag), "args": [canary("CANARY-VSC-ARG-%s-3-9d2c" % t)]}
    remote = {
        "type": "http",
        "url": "https://%s/mcp?key=%s" % (canary("canary-vsc-url-%s-5a61.invalid" % tag), canary("CANARY-VSC-URLQ-%s-5a61" % t)),
        "headers": {canary("X-Canary-Vsc-Hdrname-%s-c0d9" % tag): "Bearer " + canary("CANARY-VSC-HDRVAL-%s-c0d9" % t)},
    }
    if vscode:
        remote["headers"][canary("X-Canary-Vsc-Input-%s-c0d9" % tag)] = "${input:%s}" % canary("canary-vsc-input-%s-88e1" % tag)
    else:
        alpha["tools"] = ["*"]
    return {p + "alpha": alpha, p + "beta": beta, p + "remote": remote}


def names(origin, prefix=None):
    tag = TAG[origin]
    p = prefix if prefix is not None else tag + "-"
    return sorted([p + "alpha", p + "beta", p + "remote"])


def document(origin, body=None, extra=None):
    """The origin's file as a JSON document: its container around `body` (default: its three
    servers), plus extra root fields."""
    doc = {CONTAINER[origin]: servers(origin) if body is None else body}
    if extra:
        doc.update(extra)
    return doc


def jsonc(origin):
    """The origin's servers written with every JSONC relaxation: a BOM, line and block comments
    (carrying canaries) and trailing commas."""
    doc = js(document(origin))
    text = "\ufeff// " + canary("CANARY-VSC-COMMENT-%s-3b7a" % TAG[origin].upper()) + "\n"
    text += "/* " + canary("CANARY-VSC-BLOCK-%s-3b7a" % TAG[origin].upper()) + " */" + doc[:-2] + ",},}\n"
    return text


# ---- facts ----


def head(complete, client="vscode"):
    return matrixlib.head(client, complete) + [length("/sources", 4)]


def src(origin, state, reason=None, count=0, fmt=None, root_fields=None, container=None):
    """Facts about one source. `fmt`/`container` default to the origin's fixed ones (for
    copilot-project: `unknown` / `mcpServers | (top level)` unless the file was interpreted);
    `root_fields` defaults to false for present/missing and "unknown" otherwise."""
    i = INDEX[origin]
    if fmt is None:
        if origin == "copilot-project" and state != "present" and reason not in ("wrong-container-type", "mixed-container"):
            fmt = "unknown"
        else:
            fmt = FORMAT[origin]
    if container is None:
        container = {"unknown": "mcpServers | (top level)", "bare-map": "(top level)"}.get(fmt, CONTAINER[origin])
    if root_fields is None:
        root_fields = False if state in ("present", "missing") else "unknown"
    return [
        eq("/sources/%d/scope" % i, origin),
        eq("/sources/%d/origin" % i, origin),
        eq("/sources/%d/state" % i, state),
        eq("/sources/%d/reason" % i, reason),
        eq("/sources/%d/serverCount" % i, count),
        eq("/sources/%d/format" % i, fmt),
        eq("/sources/%d/container" % i, container),
        eq("/sources/%d/parser" % i, PARSER[origin]),
        eq("/sources/%d/uninterpretedRootFields" % i, root_fields),
    ]


def srv(i, name, origin, same=(), valid=True, guard=None, fmt=None):
    facts = [
        eq("/servers/%d/name" % i, name),
        eq("/servers/%d/scope" % i, origin),
        eq("/servers/%d/origin" % i, origin),
        eq("/servers/%d/format" % i, fmt or FORMAT[origin]),
        eq("/servers/%d/configured" % i, True),
        eq("/servers/%d/sameNameIn" % i, list(same)),
        eq("/servers/%d/shape/valid" % i, valid),
        absent("/servers/%d/possibleShadowedBy" % i),
    ]
    if guard:
        facts.append(eq("/servers/%d/guardForm" % i, guard))
    return facts


def rows(origins):
    """Fact rows for each origin's three standard servers in source order, names sorted, with
    the guard forms the classifier gives them (sentinel direct, symlinked command direct,
    remote unknown)."""
    facts, i = [], 0
    for origin in origins:
        for name in names(origin):
            guard = "unknown" if name.endswith("remote") else "direct"
            facts += srv(i, name, origin, guard=guard)
            i += 1
    facts.append(length("/servers", i))
    return facts


def full_fixture():
    return [d(ROOT)] + [text(FILES[o], js(document(o))) for o in ORIGINS] + links(*TAG.values())


def full_facts():
    return head(True) + sum((src(o, "present", count=3) for o in ORIGINS), []) + rows(ORIGINS)


ARGS = [ROOT, "--client", "vscode", "--json"]
HUMAN_ARGS = [ROOT, "--client", "vscode"]
# Human output must never show these, whatever the case (beyond the canaries).
HUMAN_NEVER = [SENTINEL, "https://", "--token=", "Bearer", "${input:"]


def case(id, description, args, fixture, exit_code, json_facts=None, cwd=None, env=None, client="vscode", **txt):
    matrixlib.case("vscode-" + id, client, description, args, fixture, exit_code, json_facts, cwd, env, **txt)


def incomplete():
    return matrixlib.incomplete_kwargs(1)


# ---- all four origins, both output formats ----

case("all-origins-json", "every origin present (strict JSON bodies): sources in origin order, rows by origin then name",
     ARGS, full_fixture(), 0, full_facts(), stderr_empty=True)
case("all-origins-human", "human output: origins, formats, parsers and server names; never commands, URLs, args, headers or placeholders",
     HUMAN_ARGS, full_fixture(), 0,
     stdout_contains=["VS Code / Copilot inventory", "vscode-project", "copilot-project", "vscode-user", "copilot-user",
                      "format vscode-servers · parser jsonc", "format portable-mcpServers · parser json ",
                      "vp-alpha", "cp-beta", "vu-remote", "cu-alpha", "complete"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("nothing-configured", "no configuration anywhere: every origin missing, inventory complete",
     ARGS, [d(ROOT)], 0,
     head(True) + sum((src(o, "missing") for o in ORIGINS), []) + [length("/servers", 0)], stderr_empty=True)

# ---- JSONC where enabled, strict where not ----

for origin in ["vscode-project", "copilot-project", "vscode-user"]:
    case("jsonc-%s" % origin, "%s accepts a BOM, comments and trailing commas (JSONC); comments never printed" % origin,
         ARGS, [d(ROOT), text(FILES[origin], jsonc(origin)), *links(TAG[origin])], 0,
         head(True) + src(origin, "present", count=3) + rows([origin]), stderr_empty=True)

user_doc = js(document("copilot-user"))
strict_ok = [d(ROOT), text(VSCODE_PROJECT, js(document("vscode-project"))), *links("vp", "cu")]
for label, body, reason in [
    ("comment", "// " + canary("CANARY-VSC-COMMENT-CU-3b7a") + "\n" + user_doc, "comment"),
    ("trailing-comma", user_doc[:-2] + ",}}", "trailing-comma"),
    ("bom", "\ufeff" + user_doc, "byte-order-mark"),
]:
    case("strict-copilot-user-%s" % label,
         "copilot-user is strict JSON: a %s is malformed (%s); the vscode-project servers stay visible" % (label, reason),
         ARGS, strict_ok + [text(COPILOT_USER, body)], 1,
         head(False) + src("copilot-user", "malformed", reason) + src("vscode-project", "present", count=3) + rows(["vscode-project"]),
         **incomplete())

# ---- copilot-project: bare map, wrapper, mixed ----

bare = servers("copilot-project", prefix="bare-")
case("bare-map", "a legacy bare server map in .mcp.json: every key is a server (format bare-map, container top level)",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js(bare)), *links("cp")], 0,
     head(True) + src("copilot-project", "present", count=3, fmt="bare-map")
     + sum((srv(i, n, "copilot-project", fmt="bare-map") for i, n in enumerate(names("copilot-project", "bare-"))), [])
     + [length("/servers", 3)], stderr_empty=True)
neighbour = dict(bare)
neighbour["servers"] = canary("CANARY-VSC-MALFORMED-SERVERS-e2f4")
case("bare-map-malformed-servers-neighbour",
     "regression: a malformed server named `servers` in a bare map is one invalid row; its neighbours stay visible",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js(neighbour)), *links("cp")], 0,
     head(True) + src("copilot-project", "present", count=4, fmt="bare-map")
     + srv(0, "bare-alpha", "copilot-project", fmt="bare-map") + srv(1, "bare-beta", "copilot-project", fmt="bare-map")
     + srv(2, "bare-remote", "copilot-project", fmt="bare-map")
     + srv(3, "servers", "copilot-project", valid=False, guard="unknown", fmt="bare-map")
     + [eq("/servers/3/shape/problems", ["entry-not-object"]), length("/servers", 4)], stderr_empty=True)
case("bare-map-servers-object-is-one-server",
     "a bare map whose only key is `servers` (a VS Code container in the wrong file) is one server named servers",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js({"servers": servers("copilot-project")})), *links("cp")], 0,
     head(True) + src("copilot-project", "present", count=1, fmt="bare-map")
     + srv(0, "servers", "copilot-project", valid=False, guard="unknown", fmt="bare-map") + [length("/servers", 1)],
     stderr_empty=True)
case("wrapper-with-extra-root-fields",
     "an own mcpServers key selects the wrapped interpretation; other non-object root fields are only flagged",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js(document("copilot-project", extra={
         "$schema": canary("CANARY-VSC-ROOTFIELD-0c1e"), canary("CANARY-VSC-ROOTNAME-0c1e"): [1, 2]}))), *links("cp")], 0,
     head(True) + src("copilot-project", "present", count=3, root_fields=True) + rows(["copilot-project"]), stderr_empty=True)
case("invalid-wrapper-not-guessed",
     "mcpServers is an array beside string fields: wrong-container-type, never re-read as a bare map",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js({"mcpServers": [servers("copilot-project")], "cp-alpha": canary("CANARY-VSC-NOTASERVER-6d0b")})), *links("cp")], 1,
     head(False) + src("copilot-project", "malformed", "wrong-container-type", root_fields=True) + [length("/servers", 0)],
     **incomplete())
case("mixed-wrapper-and-bare-declaration",
     "mcpServers beside a server-looking object: mixed-container, incomplete; other origins stay visible",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js(dict(document("copilot-project"), **servers("copilot-project", prefix="loose-")))),
            text(VSCODE_USER, js(document("vscode-user"))), *links("cp", "vu")], 1,
     head(False) + src("copilot-project", "malformed", "mixed-container", root_fields=True)
     + src("vscode-user", "present", count=3) + rows(["vscode-user"]),
     **incomplete())
case("mixed-servers-and-mcpservers-vscode-project",
     "a .vscode/mcp.json naming both servers and mcpServers is mixed-container; other origins stay visible",
     ARGS, [d(ROOT), text(VSCODE_PROJECT, js(document("vscode-project", extra={"mcpServers": servers("vscode-project", prefix="p-")}))),
            text(COPILOT_USER, js(document("copilot-user"))), *links("vp", "cu")], 1,
     head(False) + src("vscode-project", "malformed", "mixed-container", root_fields=True)
     + src("copilot-user", "present", count=3) + rows(["copilot-user"]),
     **incomplete())
case("lone-foreign-container",
     "mcpServers in a VS Code file (and servers in the Copilot user file) is an uninterpreted root field, not servers",
     ARGS, [d(ROOT), text(VSCODE_PROJECT, js({"mcpServers": servers("vscode-project")})),
            text(COPILOT_USER, js({"servers": servers("copilot-user")})), *links("vp", "cu")], 0,
     head(True) + src("vscode-project", "present", root_fields=True) + src("copilot-user", "present", root_fields=True)
     + [length("/servers", 0)], stderr_empty=True)

# ---- file states, across the origins ----

case("duplicate-key-vscode-project", "a duplicated top-level key is malformed even in JSONC; root fields unknown",
     ARGS, [d(ROOT), text(VSCODE_PROJECT, js(document("vscode-project"))[:-1] + ',"servers":{}}'), *links("vp")], 1,
     head(False) + src("vscode-project", "malformed", "duplicate-key") + [length("/servers", 0)], **incomplete())
cu = js(document("copilot-user"))
case("duplicate-server-name-copilot-user", "the same server name twice in mcpServers is malformed (duplicate-key)",
     ARGS, [d(ROOT), text(COPILOT_USER, cu[:-2] + ',"cu-alpha":{"command":"%s"}}}' % SENTINEL), *links("cu")], 1,
     head(False) + src("copilot-user", "malformed", "duplicate-key") + [length("/servers", 0)], **incomplete())
case("invalid-utf8-vscode-user", "a 0xFF byte inside a server name: malformed (invalid-utf8)",
     ARGS, [d(ROOT), raw(VSCODE_USER, js(document("vscode-user")).encode().replace(b"alpha", b"alph\xff", 1)), *links("vu")], 1,
     head(False) + src("vscode-user", "malformed", "invalid-utf8") + [length("/servers", 0)], **incomplete())
case("syntax-copilot-project", "truncated JSONC in .mcp.json: malformed (syntax), format undetermined",
     ARGS, [d(ROOT), text(COPILOT_PROJECT, js(document("copilot-project"))[:-9]), *links("cp")], 1,
     head(False) + src("copilot-project", "malformed", "syntax") + [length("/servers", 0)], **incomplete())
case("symlink-final-vscode-project", "the file is a symlink to a valid file: skipped, never followed",
     ARGS, [d(ROOT), text("/work/elsewhere/mcp.json", js(document("vscode-project"))),
            symlink(VSCODE_PROJECT, "/work/elsewhere/mcp.json"), *links("vp")], 1,
     head(False) + src("vscode-project", "symlink-skipped", "symlink") + [length("/servers", 0)], **incomplete())
case("symlinked-config-dir-vscode-user", "~/.config is a symlink (dotfiles): every component below HOME is no-follow",
     ARGS, [d(ROOT), text(HOME + "/dotfiles/config/Code/User/mcp.json", js(document("vscode-user"))),
            symlink(HOME + "/.config", HOME + "/dotfiles/config"), *links("vu")], 1,
     head(False) + src("vscode-user", "symlink-skipped", "symlink-in-path") + [length("/servers", 0)], **incomplete())
case("dangling-symlink-copilot-user", "a dangling symlink at ~/.copilot/mcp-config.json is skipped",
     ARGS, [d(ROOT), symlink(COPILOT_USER, HOME + "/.copilot/nowhere.json")], 1,
     head(False) + src("copilot-user", "symlink-skipped", "symlink") + [length("/servers", 0)], **incomplete())
for origin in ["copilot-project", "vscode-user"]:
    case("unreadable-%s" % origin, "mode 0000 (uid 1000 in the container): unreadable (permission-denied)",
         ARGS, [d(ROOT), text(FILES[origin], js(document(origin)), "0000"), *links(TAG[origin])], 1,
         head(False) + src(origin, "unreadable", "permission-denied") + [length("/servers", 0)], **incomplete())
case("fifo-vscode-project", "the file is a FIFO: classified without being opened, never blocks",
     ARGS, [d(ROOT), fifo(VSCODE_PROJECT)], 1,
     head(False) + src("vscode-project", "not-file", "fifo") + [length("/servers", 0)], **incomplete())
case("directory-copilot-user", "the file is a directory: not-file",
     ARGS, [d(ROOT), d(COPILOT_USER)], 1,
     head(False) + src("copilot-user", "not-file", "directory") + [length("/servers", 0)], **incomplete())
case("too-large-copilot-user", "1 MiB + 1 byte (valid JSON padded with spaces): too-large",
     ARGS, [d(ROOT), fill(COPILOT_USER, js(document("copilot-user")), MIB + 1), *links("cu")], 1,
     head(False) + src("copilot-user", "too-large", "exceeds-read-limit") + [length("/servers", 0)], **incomplete())
case("exactly-1mib-vscode-project", "exactly 1 MiB of valid JSONC is read",
     ARGS, [d(ROOT), fill(VSCODE_PROJECT, js(document("vscode-project")), MIB), *links("vp")], 0,
     head(True) + src("vscode-project", "present", count=3) + rows(["vscode-project"]), stderr_empty=True)

# ---- rows ----

shared = {o: {"shared": servers(o)[TAG[o] + "-alpha"]} for o in ORIGINS}
case("same-name-in-every-origin", "one name in all four origins: sameNameIn lists the other three, no winner",
     ARGS, [d(ROOT)] + [text(FILES[o], js(document(o, body=shared[o]))) for o in ORIGINS], 0,
     head(True) + sum((srv(i, "shared", o, same=[x for x in ORIGINS if x != o]) for i, o in enumerate(ORIGINS)), [])
     + [length("/servers", 4)], stderr_empty=True)
env_body = {
    "env-numbers": {"command": SENTINEL, "env": {canary("CANARY_VSC_PORT_a4d3"): 8080, canary("CANARY_VSC_NULL_a4d3"): None}},
    "env-infinite": {"command": SENTINEL, "env": {canary("CANARY_VSC_INF_a4d3"): 1e400}},
}
case("vscode-env-numbers-and-null",
     "VS Code env values may be finite numbers or null (valid shape, guard form unknown); 1e400 is not finite",
     ARGS, [d(ROOT), text(VSCODE_PROJECT, js({"servers": env_body}).replace("Infinity", "1e400"))], 0,
     head(True) + src("vscode-project", "present", count=2)
     + srv(0, "env-infinite", "vscode-project", valid=False, guard="unknown")
     + [eq("/servers/0/shape/problems", ["env-value-not-string-number-or-null"])]
     + srv(1, "env-numbers", "vscode-project", valid=True, guard="unknown")
     + [eq("/servers/1/launch", "executable"), eq("/servers/1/shape/envCount", 2), length("/servers", 2)],
     stderr_empty=True)

# ---- instructions ----

DEEP = "/work/a/b/proj"


def body(label):
    return "# instructions\n" + canary("CANARY-VSC-INSTR-%s-f17c" % label) + "\n"


def instr(i, scope, name, state):
    return [eq("/instructions/%d/scope" % i, scope), eq("/instructions/%d/name" % i, name),
            eq("/instructions/%d/state" % i, state), eq("/instructions/%d/applicability" % i, "unknown")]


# Levels nearest first: /work/a/b/proj, /work/a/b, /work/a, /work, / (4 names each), then 3 user.
case("instructions-levels-and-user",
     "copilot-instructions/AGENTS/CLAUDE candidates at the root, ancestors and home: metadata only",
     [DEEP, "--client", "vscode", "--json"],
     [d(DEEP), text(DEEP + "/.github/copilot-instructions.md", body("ROOT-COPILOT")), text(DEEP + "/AGENTS.md", body("ROOT-AGENTS")),
      text("/work/a/b/CLAUDE.md", body("ANCESTOR-B")), text("/work/a/.claude/CLAUDE.md", body("ANCESTOR-A")),
      text(HOME + "/.copilot/copilot-instructions.md", body("USER-COPILOT")), text(HOME + "/.codex/AGENTS.md", body("USER-CODEX"))],
     0,
     head(True) + [length("/instructions", 23)]
     + instr(0, "project", ".github/copilot-instructions.md", "present") + instr(1, "project", "AGENTS.md", "present")
     + instr(2, "project", "CLAUDE.md", "missing") + instr(6, "ancestor", "CLAUDE.md", "present")
     + instr(11, "ancestor", ".claude/CLAUDE.md", "present") + instr(16, "ancestor", ".github/copilot-instructions.md", "missing")
     + instr(20, "user", ".copilot/copilot-instructions.md", "present") + instr(21, "user", ".claude/CLAUDE.md", "missing")
     + instr(22, "user", ".codex/AGENTS.md", "present")
     + [eq("/instructions/6/path", "/work/a/b/CLAUDE.md"), eq("/instructions/1/bytes", len(body("ROOT-AGENTS")))],
     stderr_empty=True)

# ---- environment overrides that are not honoured ----

case("xdg-and-copilot-home-not-honoured",
     "XDG_CONFIG_HOME and COPILOT_HOME are not discovered: the default candidates stay missing",
     ARGS, [d(ROOT), text(HOME + "/xdg/Code/User/mcp.json", js(document("vscode-user"))),
            text(HOME + "/cophome/mcp-config.json", js(document("copilot-user"))), *links("vu", "cu")], 0,
     head(True) + src("vscode-user", "missing") + src("copilot-user", "missing") + [length("/servers", 0)]
     + [eq("/sources/2/path", VSCODE_USER), eq("/sources/3/path", COPILOT_USER)],
     env={"XDG_CONFIG_HOME": HOME + "/xdg", "COPILOT_HOME": HOME + "/cophome"}, stderr_empty=True)
case("home-empty", "HOME set to the empty string: both user origins unreadable (home-not-set), project origins read",
     ARGS, full_fixture(), 1,
     head(False) + src("vscode-user", "unreadable", "home-not-set") + src("copilot-user", "unreadable", "home-not-set")
     + src("vscode-project", "present", count=3) + rows(["vscode-project", "copilot-project"]),
     env={"HOME": ""}, **incomplete())
case("human-incomplete", "human output of an incomplete inventory names the source state, prints no contents",
     HUMAN_ARGS, [d(ROOT), text(COPILOT_PROJECT, js(dict(document("copilot-project"), loose=servers("copilot-project")["cp-alpha"]))),
                  text(VSCODE_PROJECT, jsonc("vscode-project")), *links("cp", "vp")], 1,
     stdout_contains=["inventory  incomplete: copilot-project malformed (mixed-container)",
                      "(none observed: source malformed)", "uninterpreted root fields: yes", "vp-alpha"],
     stdout_not_contains=HUMAN_NEVER, stderr_contains=["copilot-project source malformed (mixed-container)"])

# ---- the Claude Code default is unchanged ----

claude_doc = {"mcpServers": servers("copilot-project", prefix="user-"),
              "projects": {ROOT: {"mcpServers": servers("copilot-project", prefix="local-")}}}
claude_fixture = full_fixture() + [text(CLAUDE_JSON, js(claude_doc))]
for label, args in [("explicit", [ROOT, "--client", "claude-code", "--json"]), ("default", [ROOT, "--json"])]:
    case("claude-%s-unchanged" % label,
         "with every VS Code file present, the %s Claude Code output has only its own sources and fields" % label,
         args, claude_fixture, 0,
         head(True, client="claude-code")
         + [eq("/sources/%d/scope" % i, s) for i, s in enumerate(["local", "project", "user", "managed"])]
         + [absent("/sources/0/origin"), absent("/sources/1/format"), absent("/sources/1/uninterpretedRootFields"),
            eq("/sources/1/state", "present"), eq("/sources/1/serverCount", 3),
            eq("/servers/0/name", "local-alpha"), eq("/servers/0/possibleShadowedBy", []),
            absent("/servers/0/sameNameIn"), absent("/servers/0/origin"), length("/servers", 9)],
         client="claude-code", stderr_empty=True)
case("claude-strict-on-jsonc-project-file",
     "a JSONC .mcp.json is present for copilot-project but malformed (comment) for the default Claude Code profile",
     [ROOT, "--json"], [d(ROOT), text(COPILOT_PROJECT, jsonc("copilot-project")), *links("cp")], 1,
     head(False, client="claude-code") + [eq("/sources/1/scope", "project"), eq("/sources/1/state", "malformed"),
                                          eq("/sources/1/reason", "byte-order-mark"), length("/servers", 0)],
     client="claude-code", **incomplete())

# ---- usage and roots ----

case("root-empty-string", "an empty root argument is refused (exit 1) for this profile too",
     ["", "--client", "vscode", "--json"], full_fixture(), 1, refused("invalid-root", "empty", ""),
     stderr_contains=["the root argument is empty"])
case("client-misspelled", "client ids are exact: VSCode is a usage error (exit 2) before anything is read",
     [ROOT, "--client", "VSCode", "--json"], full_fixture(), 2, refused("usage"), stderr_contains=["VSCode"])

matrixlib.write("vscode")
