#!/usr/bin/env python3
"""Generates harness/matrix/dsh.json, the DSH profile (`--client dsh`) fixture matrix.

The JSON file is the artifact the runner executes and the receipt binds; this script only
saves writing the canary-laden fixtures by hand. Edit here, run
`python3 harness/matrix/generate-dsh.py > harness/matrix/dsh.json`, commit both.
Output is deterministic (no clocks, no randomness), so a diff shows exactly what changed.
The helpers all three generators share (entries, canaries, facts, cases, output) are in
matrixlib.py.

Conventions (see README.md): project root /work/proj, HOME /home/node. The six DSH layers:
  dsh-project       /work/proj/.dsh/mcp.yml          (YAML managed block, insert[].config)
  dsh-project-json  /work/proj/.dsh/mcp.json         (mcpServers)
  cc-project        /work/proj/.mcp.json             (mcpServers)
  dsh-profile-user  /home/node/.dsh/profiles/web/mcp.json  (only with --dsh-profile web)
  dsh-user-yml      /home/node/.dsh/mcp.yml          (YAML managed block)
  dsh-user          /home/node/.dsh/mcp.json         (mcpServers)
Source order in /sources is the layer order; without --dsh-profile the profile layer is not
a source (it is in coverage.notExamined), so dsh-user-yml is 3 and dsh-user 4.
Every stdio server's command is the sentinel (directly, or through a canary-named symlink
to it); every sensitive field (command, args, env name and value, cwd, url, header name and
value, ${VAR} names, YAML outside the block) carries a registered canary.
"""

import json

import matrixlib
from matrixlib import (refused, HOME, MIB, ROOT, SENTINEL, canary, d, eq, fill, fifo, incomplete_kwargs, js, length, raw,
                       sentinel_link, sentinel_links, symlink, text)

BEGIN = "# >>> dsh-project-mcp-manager:mcp:begin"
END = "# <<< dsh-project-mcp-manager:mcp:end"

PATHS = {
    "dsh-project": ROOT + "/.dsh/mcp.yml",
    "dsh-project-json": ROOT + "/.dsh/mcp.json",
    "cc-project": ROOT + "/.mcp.json",
    "dsh-profile-user": HOME + "/.dsh/profiles/web/mcp.json",
    "dsh-user-yml": HOME + "/.dsh/mcp.yml",
    "dsh-user": HOME + "/.dsh/mcp.json",
}
YAML_LAYERS = {"dsh-project", "dsh-user-yml"}
# Server-name prefix per layer (names must match [A-Za-z0-9_-]{1,32}).
PREFIX = {"dsh-project": "dp", "dsh-project-json": "dpj", "cc-project": "cc",
          "dsh-profile-user": "prof", "dsh-user-yml": "duy", "dsh-user": "du"}
LAYERS = list(PATHS)
NO_PROFILE = [l for l in LAYERS if l != "dsh-profile-user"]


def tag(layer):
    return PREFIX[layer].upper()


def cmd_link(layer):
    """A canary-named symlink to the sentinel (`matrixlib.sentinel_link`)."""
    return sentinel_link("CANARY-CMD-%s-d5h1" % tag(layer))


def alpha(layer, name=None):
    t = tag(layer)
    return {
        "command": SENTINEL,
        "args": [canary("CANARY-ARG-%s-1-d5h1" % t), "--key=${%s}" % canary("CANARY_VAR_%s_d5h1" % t)],
        "env": {canary("CANARY_ENVNAME_%s_d5h1" % t): canary("CANARY-ENVVAL-%s-d5h1" % t)},
        "cwd": "/work/" + canary("CANARY-CWD-%s-d5h1" % t),
    }


def beta(layer):
    return {"command": cmd_link(layer), "args": [canary("CANARY-ARG-%s-2-d5h1" % tag(layer))]}


def remote(layer):
    t = tag(layer)
    return {
        "type": "http",
        "url": "https://%s/mcp?k=%s" % (canary("canary-url-%s-d5h1.invalid" % PREFIX[layer]), canary("CANARY-URLQ-%s-d5h1" % t)),
        "headers": {canary("X-Canary-Hdr-%s-d5h1" % PREFIX[layer]): "Bearer ${%s}" % canary("CANARY_TOKEN_%s_d5h1" % t)},
    }


def servers(layer):
    """Three servers per layer: stdio with the sentinel (1 ${VAR}), stdio through a
    canary-named symlink (0), remote http (1)."""
    p = PREFIX[layer]
    return {p + "-alpha": alpha(layer), p + "-beta": beta(layer), p + "-remote": remote(layer)}


def names(layer):
    p = PREFIX[layer]
    return [p + "-alpha", p + "-beta", p + "-remote"]


PLACEHOLDERS = {"alpha": 1, "beta": 0, "remote": 1}


def q(s):
    """A YAML double-quoted scalar (JSON string syntax is valid YAML here)."""
    return json.dumps(s)


def yaml_row(name, entry, disabled=None, extra_config=""):
    """One insert row in block style; values as flow/double-quoted YAML. The id names the
    row (`panel-mcp-<name>`, read before config.serverName); a row without a name gets an
    id that names nothing."""
    row_id = "panel-mcp-%s" % name if name is not None else "row-without-name"
    lines = ["    - id: %s" % q(row_id), "      name: '@deepseek-ai/dsh-mcp-client'"]
    if isinstance(disabled, str):
        lines.append("      disabled: %s" % disabled)
    elif disabled is not None:
        lines.append("      disabled: %s" % ("true" if disabled else "false"))
    lines.append("      config:")
    if name is not None:
        lines.append("        serverName: %s" % name)
    e = dict(entry)
    if e.get("type") == "http":
        del e["type"]
        lines.append("        transport: streamable-http")
    elif "command" in e:
        lines.append("        transport: stdio")
    for k, v in e.items():
        lines.append("        %s: %s" % (k, js(v) if not isinstance(v, str) else q(v)))
    if extra_config:
        lines.append(extra_config)
    return "\n".join(lines)


def yaml_file(rows, layer="dsh-project", block_extra="", before="", after=""):
    """A YAML file with content outside the block (carrying canaries: never read) and the
    managed block with an insert list of `rows` [(name, entry, disabled)]."""
    t = tag(layer)
    out = [
        "# %s: user content outside the managed block" % canary("CANARY-OUTSIDE-%s-d5h1" % t),
        "other: { token: %s }" % q(canary("CANARY-OUTSIDE-VALUE-%s-d5h1" % t)),
        before,
        BEGIN,
        "- insert:",
    ]
    out += [yaml_row(*r) for r in rows]
    if not rows:
        out[-1] = "- insert: []"
    out.append(block_extra)
    out.append(END)
    out.append(after)
    return "\n".join(l for l in out if l != "") + "\n"


def layer_file(layer, srv=None):
    """The standard content of one layer's file."""
    srv = servers(layer) if srv is None else srv
    if layer in YAML_LAYERS:
        return yaml_file([(n, e, None) for n, e in srv.items()], layer)
    return js({"mcpServers": srv})


def links(*layers):
    return sentinel_links(cmd_link(l) for l in layers)


def full_fixture(layers=NO_PROFILE):
    f = [d(ROOT)]
    for l in layers:
        f.append(text(PATHS[l], layer_file(l)))
    return f + links(*layers)


# ---- facts ----


def head(complete):
    return matrixlib.head("dsh", complete)


def order(profile):
    return LAYERS if profile else NO_PROFILE


def src(layer, state, reason=None, count=0, profile=False):
    i = order(profile).index(layer)
    return [
        eq("/sources/%d/scope" % i, layer),
        eq("/sources/%d/state" % i, state),
        eq("/sources/%d/reason" % i, reason),
        eq("/sources/%d/serverCount" % i, count),
        eq("/sources/%d/format" % i, "yaml" if layer in YAML_LAYERS else "json"),
    ]


def srv(i, name, scope, shadowed=None, active=True, valid=True, disabled=False, skipped=False, claims=None):
    if claims is None:
        claims = ["name", "normalized-name", "identity"] if (valid and not skipped and not shadowed) else []
    return [
        eq("/servers/%d/name" % i, name),
        eq("/servers/%d/scope" % i, scope),
        eq("/servers/%d/shadowedBy" % i, shadowed),
        eq("/servers/%d/active" % i, active),
        eq("/servers/%d/disabled" % i, disabled),
        eq("/servers/%d/skipped" % i, skipped),
        eq("/servers/%d/claims" % i, claims),
        eq("/servers/%d/shape/valid" % i, valid),
    ]


def by(scope, key, name):
    return {"scope": scope, "key": key, "name": name}


def rows(layers):
    """Fact rows for the standard server sets of `layers`, in source order."""
    facts, i = [], 0
    for l in layers:
        for n in names(l):
            facts += srv(i, n, l)
            facts.append(eq("/servers/%d/placeholderCount" % i, PLACEHOLDERS[n.rsplit("-", 1)[1]]))
            i += 1
    facts.append(length("/servers", i))
    return facts


NOT_EXAMINED = ["profile-patch-lines", "profile-name-resolution", "dsh-home-override",
                "environment-switches", "project-root-discovery", "effective-name-renaming",
                "env-expansion", "tool-filters", "instructions", "executable-identity"]

# Human output must never show these, whatever the case (beyond the canaries).
HUMAN_NEVER = [SENTINEL, "https://", "--key=", "Bearer", "@deepseek-ai", "process.env"]


def case(id, description, args, fixture, exit_code, json_facts=None, cwd=None, env=None, deadline=None, **text_facts):
    matrixlib.case("dsh-" + id, "dsh", description, args, fixture, exit_code, json_facts, cwd, env, deadline,
                   **text_facts)


DSH = ["--client", "dsh"]
J = [ROOT, "--json"] + DSH
PROFILE = ["--dsh-profile", "web"]


# ---- baseline ----

case("all-layers-json", "five layers present (no --dsh-profile): 15 rows, none shadowed, profile layer not examined",
     J, full_fixture(), 0,
     head(True) + [length("/sources", 5), length("/instructions", 0),
                   eq("/coverage/notExamined", ["dsh-profile-user"] + NOT_EXAMINED)]
     + sum((src(l, "present", count=3) for l in NO_PROFILE), [])
     + [eq("/sources/0/container", "managed block: insert[].config"), eq("/sources/2/container", "mcpServers")]
     + rows(NO_PROFILE)
     + [eq("/servers/0/shape/transport", "stdio"), eq("/servers/0/shape/argCount", 2), eq("/servers/0/shape/envCount", 1),
        eq("/servers/2/shape/transport", "http"), eq("/servers/2/shape/headerCount", 1), eq("/servers/2/launch", "remote")],
     stderr_empty=True)
case("all-layers-with-profile-json", "--dsh-profile web: all six layers in layer order, 18 rows",
     J + PROFILE, full_fixture(LAYERS), 0,
     head(True) + [length("/sources", 6), eq("/coverage/notExamined", NOT_EXAMINED),
                   eq("/sources/3/path", PATHS["dsh-profile-user"])]
     + sum((src(l, "present", count=3, profile=True) for l in LAYERS), [])
     + rows(LAYERS), stderr_empty=True)
case("all-layers-human", "human output names layers and servers, never commands, URLs, args, ${VAR} names or values",
     [ROOT] + DSH + PROFILE, full_fixture(LAYERS), 0,
     stdout_contains=["DSH inventory", "dsh-project", "dsh-project-json", "cc-project", "dsh-profile-user",
                      "dsh-user-yml", "dsh-user", "dp-alpha", "prof-beta", "du-remote", "complete",
                      "1 ${VAR} reference"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("nothing-configured", "no configuration anywhere: five sources missing, complete, exit 0",
     J, [d(ROOT)], 0,
     head(True) + sum((src(l, "missing") for l in NO_PROFILE), []) + [length("/servers", 0)], stderr_empty=True)
case("profile-named-but-missing", "--dsh-profile web with no profile file: dsh-profile-user missing, still complete",
     J + PROFILE, full_fixture(NO_PROFILE), 0,
     head(True) + src("dsh-profile-user", "missing", profile=True) + src("dsh-user", "present", count=3, profile=True))

# ---- shadowing ----

case("shadow-exact-name", "the same name in dsh-project and cc-project: the cc-project row is shadowed on name",
     J, [d(ROOT), text(PATHS["dsh-project"], layer_file("dsh-project", {"shared": alpha("dsh-project")})),
         text(PATHS["cc-project"], layer_file("cc-project", {"shared": beta("cc-project")})), *links("cc-project")], 0,
     head(True) + srv(0, "shared", "dsh-project")
     + srv(1, "shared", "cc-project", shadowed=by("dsh-project", "name", "shared"), active=False) + [length("/servers", 2)])
case("user-row-hidden-by-project-still-mounts", "the same name in dsh-project and dsh-user: DSH mounts user rows once per "
     "host (merged among the user layers) and only hides this one from the project's sessions: active, shadowedBy the project row",
     J, [d(ROOT), text(PATHS["dsh-project"], layer_file("dsh-project", {"shared": alpha("dsh-project")})),
         text(PATHS["dsh-user"], layer_file("dsh-user", {"shared": beta("dsh-user")})), *links("dsh-user")], 0,
     head(True) + srv(0, "shared", "dsh-project")
     + srv(1, "shared", "dsh-user", shadowed=by("dsh-project", "name", "shared"), active=True,
           claims=["name", "normalized-name", "identity"]) + [length("/servers", 2)])
case("user-rows-shadow-each-other", "the same name in dsh-user-yml and dsh-user: the user layers' own merge shadows the "
     "later row, which does not mount",
     J, [d(ROOT), text(PATHS["dsh-user-yml"], layer_file("dsh-user-yml", {"shared": alpha("dsh-user-yml")})),
         text(PATHS["dsh-user"], layer_file("dsh-user", {"shared": beta("dsh-user")})), *links("dsh-user")], 0,
     head(True) + srv(0, "shared", "dsh-user-yml")
     + srv(1, "shared", "dsh-user", shadowed=by("dsh-user-yml", "name", "shared"), active=False) + [length("/servers", 2)])
case("shadow-normalized-name", "unity-mcp (dsh-project-json) and unityMCP (cc-project) are one service: normalized-name",
     J, [d(ROOT), text(PATHS["dsh-project-json"], js({"mcpServers": {"unity-mcp": alpha("dsh-project-json")}})),
         text(PATHS["cc-project"], js({"mcpServers": {"unityMCP": beta("cc-project")}})), *links("cc-project")], 0,
     head(True) + srv(0, "unity-mcp", "dsh-project-json")
     + srv(1, "unityMCP", "cc-project", shadowed=by("dsh-project-json", "normalized-name", "unity-mcp"), active=False))
case("shadow-identity-stdio", "different names, same command + args (env differs): the later row is shadowed on identity",
     J, [d(ROOT),
         text(PATHS["dsh-project-json"], js({"mcpServers": {"first": alpha("cc-project")}})),
         text(PATHS["cc-project"], js({"mcpServers": {"second": dict(alpha("cc-project"), env={canary("CANARY_ENVNAME_OTHER_d5h1"): canary("CANARY-ENVVAL-OTHER-d5h1")})}}))],
     0, head(True) + srv(0, "first", "dsh-project-json")
     + srv(1, "second", "cc-project", shadowed=by("dsh-project-json", "identity", "first"), active=False))
case("shadow-identity-http", "different names, the same url (one as url, one as httpUrl): shadowed on identity",
     J, [d(ROOT),
         text(PATHS["dsh-project-json"], js({"mcpServers": {"web-a": remote("dsh-project-json")}})),
         text(PATHS["cc-project"], js({"mcpServers": {"web-b": {"type": "streamable-http", "httpUrl": remote("dsh-project-json")["url"]}}}))],
     0, head(True) + srv(0, "web-a", "dsh-project-json")
     + srv(1, "web-b", "cc-project", shadowed=by("dsh-project-json", "identity", "web-a"), active=False))
case("identity-is-raw-before-expansion", "the same server once with ${VAR} and once literal: different identities, both active",
     J, [d(ROOT),
         text(PATHS["cc-project"], js({"mcpServers": {"lit": {"command": SENTINEL, "args": [canary("CANARY-ARG-LIT-d5h1")]}}})),
         text(PATHS["dsh-user"], js({"mcpServers": {"var": {"command": SENTINEL, "args": ["${%s}" % canary("CANARY_VAR_LIT_d5h1")]}}}))],
     0, head(True) + srv(0, "lit", "cc-project") + srv(1, "var", "dsh-user") + [eq("/servers/1/placeholderCount", 1)])
case("identity-args-distinguish", "node a.js and node b.js (same command, different args) stay different services",
     J, [d(ROOT),
         text(PATHS["dsh-project-json"], js({"mcpServers": {"one": {"command": SENTINEL, "args": [canary("CANARY-ARG-A-JS-d5h1")]}}})),
         text(PATHS["cc-project"], js({"mcpServers": {"two": {"command": SENTINEL, "args": [canary("CANARY-ARG-B-JS-d5h1")]}}}))],
     0, head(True) + srv(0, "one", "dsh-project-json") + srv(1, "two", "cc-project"))
case("disabled-placeholder-holds-its-keys", "a disabled: true YAML row without a command holds name and normalized name: the .mcp.json rows are shadowed",
     J, [d(ROOT), text(PATHS["dsh-project"], yaml_file([("gitlab", {}, True)])),
         text(PATHS["cc-project"], js({"mcpServers": {"gitlab": alpha("cc-project"), "Git-Lab": beta("cc-project")}})), *links("cc-project")],
     0, head(True) + src("dsh-project", "present", count=1)
     + srv(0, "gitlab", "dsh-project", active=False, disabled=True, claims=["name", "normalized-name"])
     + [eq("/servers/0/shape/problems", [])]
     + srv(1, "Git-Lab", "cc-project", shadowed=by("dsh-project", "normalized-name", "gitlab"), active=False)
     + srv(2, "gitlab", "cc-project", shadowed=by("dsh-project", "name", "gitlab"), active=False))
case("enabled-false-claims-nothing", "an enabled: false row in .mcp.json is skipped and holds no key: the same-named user row surfaces",
     J, [d(ROOT), text(PATHS["cc-project"], js({"mcpServers": {"gitlab": dict(alpha("cc-project"), enabled=False)}})),
         text(PATHS["dsh-user"], js({"mcpServers": {"gitlab": beta("dsh-user")}})), *links("dsh-user")],
     0, head(True) + srv(0, "gitlab", "cc-project", active=False, skipped=True)
     + srv(1, "gitlab", "dsh-user"))
case("disabled-json-row-holds-keys", "disabled: true in a JSON layer holds its name and identity but is not active",
     J, [d(ROOT), text(PATHS["dsh-project-json"], js({"mcpServers": {"svc": dict(alpha("dsh-project-json"), disabled=True)}})),
         text(PATHS["cc-project"], js({"mcpServers": {"svc-copy": alpha("dsh-project-json")}}))],
     0, head(True) + srv(0, "svc", "dsh-project-json", active=False, disabled=True)
     + srv(1, "svc-copy", "cc-project", shadowed=by("dsh-project-json", "identity", "svc"), active=False))
case("json-disabled-placeholder-needs-a-command", "a JSON disabled: true entry without a command is an entry error in DSH "
     "(checked before disabled): it holds no key, and the same-named .mcp.json row mounts",
     J, [d(ROOT), text(PATHS["dsh-project-json"], js({"mcpServers": {"svc": {"disabled": True}}})),
         text(PATHS["cc-project"], js({"mcpServers": {"svc": alpha("cc-project")}}))],
     0, head(True) + srv(0, "svc", "dsh-project-json", active=False, valid=False, disabled=True)
     + [eq("/servers/0/shape/problems", ["missing-command"])] + srv(1, "svc", "cc-project"))
case("name-key-precedes-identity", "a row collides with an earlier row on identity and a later one on name: DSH names "
     "the name holder (name, then normalized name, then identity)",
     J, [d(ROOT),
         text(PATHS["dsh-project"], yaml_file([("early", alpha("dsh-project"), None)])),
         text(PATHS["dsh-project-json"], js({"mcpServers": {"late": beta("dsh-project-json")}})),
         text(PATHS["cc-project"], js({"mcpServers": {"late": alpha("dsh-project")}})), *links("dsh-project-json")],
     0, head(True) + srv(0, "early", "dsh-project") + srv(1, "late", "dsh-project-json")
     + srv(2, "late", "cc-project", shadowed=by("dsh-project-json", "name", "late"), active=False))
case("shadowed-rows-hold-nothing", "a shadowed row claims no keys: a third row sharing only its name is not shadowed",
     J, [d(ROOT),
         text(PATHS["dsh-project-json"], js({"mcpServers": {"a": alpha("dsh-project-json")}})),
         text(PATHS["cc-project"], js({"mcpServers": {"b": alpha("dsh-project-json")}})),
         text(PATHS["dsh-user"], js({"mcpServers": {"b": beta("dsh-user")}})), *links("dsh-user")],
     0, head(True) + srv(0, "a", "dsh-project-json")
     + srv(1, "b", "cc-project", shadowed=by("dsh-project-json", "identity", "a"), active=False)
     + srv(2, "b", "dsh-user"))
case("shadow-within-one-yaml-file", "two YAML rows with the same serverName: the second (document order) is shadowed by the first",
     J, [d(ROOT), text(PATHS["dsh-project"], yaml_file([("dup", alpha("dsh-project"), None), ("dup", beta("dsh-project"), None)])),
         *links("dsh-project")],
     0, head(True) + src("dsh-project", "present", count=2) + srv(0, "dup", "dsh-project")
     + srv(1, "dup", "dsh-project", shadowed=by("dsh-project", "name", "dup"), active=False))
case("shadow-human", "human output shows the shadowing row, layer and key",
     [ROOT] + DSH, [d(ROOT), text(PATHS["dsh-project"], layer_file("dsh-project", {"shared": alpha("dsh-project")})),
                    text(PATHS["cc-project"], layer_file("cc-project", {"shared": beta("cc-project")})), *links("cc-project")], 0,
     stdout_contains=["shadowed by: shared in dsh-project (same name)", "shadowed (not mounted)", "active"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("shadow-normalizes-to-nothing", "names `_` and `-` normalize to nothing: DSH registers no normalized-name key, both mount",
     J, [d(ROOT), text(PATHS["cc-project"], js({"mcpServers": {"_": alpha("cc-project"), "-": beta("cc-project")}})), *links("cc-project")],
     0, head(True) + srv(0, "-", "cc-project", claims=["name", "identity"]) + srv(1, "_", "cc-project", claims=["name", "identity"]))
case("json-array-index-names-first", "Object.entries walks array-index names first: \"7\" comes before \"alpha\" written "
     "above it and wins the shared identity",
     J, [d(ROOT), text(PATHS["cc-project"], '{"mcpServers":{"alpha":%s,"7":%s}}' % (js(alpha("cc-project")), js(alpha("cc-project"))))],
     0, head(True) + srv(0, "7", "cc-project")
     + srv(1, "alpha", "cc-project", shadowed=by("cc-project", "identity", "7"), active=False))
case("yaml-row-without-transport-holds-no-identity", "a YAML row without `transport` mounts as stdio but brings no identity "
     "(DSH reads config.transport literally): the .mcp.json row with the same command line mounts too",
     J, [d(ROOT), text(PATHS["dsh-project"], "%s\n- insert:\n    - id: \"panel-mcp-implicit\"\n      name: '@deepseek-ai/dsh-mcp-client'\n"
                                           "      config:\n        serverName: implicit\n        command: %s\n        args: %s\n%s\n"
                                           % (BEGIN, q(SENTINEL), js(alpha("cc-project")["args"]), END)),
         text(PATHS["cc-project"], js({"mcpServers": {"explicit": {"command": SENTINEL, "args": alpha("cc-project")["args"]}}}))],
     0, head(True) + srv(0, "implicit", "dsh-project", claims=["name", "normalized-name"]) + srv(1, "explicit", "cc-project"))
case("yaml-row-without-config-holds-its-name", "a YAML row named only by its panel id, with no config: it mounts nothing "
     "but DSH merges it before validating, so it still shadows the .mcp.json row of that name",
     J, [d(ROOT), text(PATHS["dsh-project"], "%s\n- insert:\n    - id: \"panel-mcp-taken\"\n      name: '@deepseek-ai/dsh-mcp-client'\n%s\n" % (BEGIN, END)),
         text(PATHS["cc-project"], js({"mcpServers": {"taken": alpha("cc-project")}}))],
     0, head(True) + srv(0, "taken", "dsh-project", active=False, valid=False, claims=["name", "normalized-name"])
     + [eq("/servers/0/shape/problems", ["missing-config"])]
     + srv(1, "taken", "cc-project", shadowed=by("dsh-project", "name", "taken"), active=False))
case("yaml-row-dsh-drops", "a YAML row with neither a string id nor a string name: DSH drops it; it is visible with a "
     "problem and holds nothing, so the same-named .mcp.json row mounts",
     J, [d(ROOT), text(PATHS["dsh-project"], "%s\n- insert:\n    - config: {serverName: dropped, command: %s}\n%s\n" % (BEGIN, q(SENTINEL), END)),
         text(PATHS["cc-project"], js({"mcpServers": {"dropped": alpha("cc-project")}}))],
     0, head(True) + srv(0, "dropped", "dsh-project", active=False, valid=False)
     + [eq("/servers/0/shape/problems", ["row-without-id-or-name"])] + srv(1, "dropped", "cc-project"))

# ---- the YAML managed block ----

LAYER3 = [text(PATHS["cc-project"], layer_file("cc-project")), text(PATHS["dsh-user"], layer_file("dsh-user")), *links("cc-project", "dsh-user")]


def yaml_case(id, description, body, state, reason, count=0, layer="dsh-project", deadline=None, extra=()):
    exit_code = 0 if state in ("present", "missing") else 1
    facts = head(exit_code == 0) + src(layer, state, reason, count=count) + src("cc-project", "present", count=3) \
        + src("dsh-user", "present", count=3) + list(extra)
    fixture = [d(ROOT), *LAYER3, *links(layer)] + (body if isinstance(body, list) else [text(PATHS[layer], body)])
    case(id, description, J, fixture, exit_code, facts, deadline=deadline, **incomplete_kwargs(exit_code))


js_tag = "        env: { %s: !!js process.env.%s }" % (q(canary("CANARY_JSENV_d5h1")), canary("CANARY_JSVAR_d5h1"))
yaml_case("yaml-unsupported-tag", "an !!js tag inside the block: dsh-project malformed (unsupported-tag), other layers visible",
          yaml_file([("tagged", beta("dsh-project"), None, js_tag)]), "malformed", "unsupported-tag",
          extra=[length("/servers", 6), eq("/servers/0/scope", "cc-project")])
yaml_case("yaml-user-unsupported-tag", "an !!js tag in ~/.dsh/mcp.yml: dsh-user-yml malformed, the project rows stay",
          yaml_file([("tagged", beta("dsh-user-yml"), None, js_tag)], layer="dsh-user-yml"), "malformed", "unsupported-tag",
          layer="dsh-user-yml")
yaml_case("yaml-tag-outside-block-ignored", "an !!js tag and broken YAML outside the markers are ignored",
          yaml_file([(n, e, None) for n, e in servers("dsh-project").items()],
                    before="weird: !!js %s\n  : : [" % canary("CANARY-JSOUT-d5h1"), after="tail: [unclosed"),
          "present", None, count=3, extra=[eq("/servers/0/name", "dp-alpha")])
yaml_case("yaml-no-block", "a mcp.yml without markers: present with no rows (outside content is not read)",
          "# %s\nservers: {a: {command: %s}}\n" % (canary("CANARY-NOBLOCK-d5h1"), SENTINEL), "present", None)
yaml_case("yaml-empty-block", "an empty managed block is not a YAML sequence: DSH fails the file (wrong-container-type)",
          "%s\n%s\n" % (BEGIN, END), "malformed", "wrong-container-type")
yaml_case("yaml-marker-inside-a-line", "markers are found by substring (as DSH's indexOf): a begin marker inside a quoted "
          "value opens the block, text before the end marker on its line is block text",
          "note: '%s' %s\n- insert:\n%s\n  # %s\n" % (BEGIN, canary("CANARY-BEGINLINE-d5h1"),
                                                   yaml_row("inline", alpha("dsh-project")), END),
          "present", None, count=1, extra=[eq("/servers/0/name", "inline"), eq("/servers/0/active", True)])
yaml_case("yaml-top-level-rows", "block entries without an insert sequence are rows themselves (flattenPatchRows); "
          "non-mapping entries are skipped",
          "%s\n%s\n- %s\n%s\n" % (BEGIN, yaml_row("bare", alpha("dsh-project")).replace("    - ", "- ", 1).replace("\n    ", "\n"),
                                    q(canary("CANARY-SCALAR-ENTRY-d5h1")), END),
          "present", None, count=1, extra=[eq("/servers/0/name", "bare"), eq("/servers/0/active", True)])
yaml_case("yaml-duplicate-key", "a duplicated mapping key inside the block: malformed (duplicate-key)",
          yaml_file([("dupkey", alpha("dsh-project"), None, "        command: %s" % q(SENTINEL))]),
          "malformed", "duplicate-key")
laughs = "\n".join(["        lol0: &l0 [%s]" % ", ".join([q(canary("CANARY-LOL-d5h1"))] * 9)]
                   + ["        lol%d: &l%d [%s]" % (i, i, ", ".join(["*l%d" % (i - 1)] * 9)) for i in range(1, 12)])
yaml_case("yaml-billion-laughs", "nested aliases (9^11 nodes if expanded) are refused quickly (alias-limit)",
          yaml_file([("laughs", alpha("dsh-project"), None, laughs)]), "malformed", "alias-limit", deadline=5000)
deep = "        deep: " + "[" * 300 + "]" * 300
yaml_case("yaml-too-deep", "300 nested flow sequences inside the block: malformed (too-deep)",
          yaml_file([("deep", alpha("dsh-project"), None, deep)]), "malformed", "too-deep")
yaml_case("yaml-merge-key", "a << merge key is not interpreted: malformed (unsupported-merge-key)",
          yaml_file([("merged", alpha("dsh-project"), None, "        base: &b {x: 1}\n        extra:\n          <<: *b")]),
          "malformed", "unsupported-merge-key")
yaml_case("yaml-unterminated-block", "a begin marker without its end marker: malformed (unterminated-block)",
          "%s\n- insert:\n    - config: {serverName: x, command: %s}\n" % (BEGIN, q(SENTINEL)), "malformed", "unterminated-block")
yaml_case("yaml-end-before-begin", "the end marker before the begin marker: malformed (unbalanced-markers)",
          "%s\n%s\n- insert: []\n" % (END, BEGIN), "malformed", "unbalanced-markers")
yaml_case("yaml-second-block-ignored", "two managed blocks: only the first begin and the first end count, as in DSH",
          yaml_file([("first", alpha("dsh-project"), None)]) + yaml_file([("second", beta("dsh-project"), None)]),
          "present", None, count=1, extra=[eq("/servers/0/name", "first")])
bad = yaml_file([(n, e, None) for n, e in servers("dsh-project").items()]).encode().replace(b"dp-alpha", b"dp-alph\xff", 1)
yaml_case("yaml-invalid-utf8", "a 0xFF byte inside the block: malformed (invalid-utf8)",
          [raw(PATHS["dsh-project"], bad)], "malformed", "invalid-utf8")
yaml_case("yaml-syntax", "an unclosed flow sequence inside the block: malformed (syntax)",
          yaml_file([("broken", alpha("dsh-project"), None, "        args2: [%s" % q(canary("CANARY-SYNTAX-d5h1")))]),
          "malformed", "syntax")
yaml_case("yaml-wrong-container", "the block is a mapping, not an insert list: malformed (wrong-container-type)",
          "%s\ninsert: {serverName: x, command: %s}\n%s\n" % (BEGIN, q(SENTINEL), END), "malformed", "wrong-container-type")
yaml_case("yaml-row-problems", "per-row problems: no serverName; a non-boolean disabled is dropped (the row mounts); "
          "env KEY: null is allowed",
          yaml_file([("ok-null-env", dict(beta("dsh-project"), env={canary("CANARY_DELETED_d5h1"): None}), None),
                     ("bad-disabled", dict(beta("dsh-project"), args=[canary("CANARY-ARG-BADDIS-d5h1")]), "yes"),
                     (None, alpha("dsh-project"), None)]),
          "present", None, count=3,
          extra=[eq("/servers/0/name", ""), eq("/servers/0/shape/problems", ["missing-name"]), eq("/servers/0/active", False),
                 eq("/servers/1/name", "bad-disabled"), eq("/servers/1/shape/problems", []),
                 eq("/servers/1/disabled", False), eq("/servers/1/active", True),
                 eq("/servers/1/claims", ["name", "normalized-name", "identity"]),
                 eq("/servers/2/name", "ok-null-env"), eq("/servers/2/shape/valid", True), eq("/servers/2/shape/envCount", 1),
                 eq("/servers/2/active", True), length("/servers", 9)])

# ---- the JSON dialect ----


def dialect_case(id, description, entry, problems, transport, valid=False, layer="dsh-project-json"):
    doc = {"mcpServers": {"subject": entry, **servers(layer)}}
    # "subject" sorts after the standard names (dpj-*).
    facts = head(True) + src(layer, "present", count=4) + srv(3, "subject", layer, active=valid, valid=valid) \
        + [eq("/servers/3/shape/problems", problems), eq("/servers/3/shape/transport", transport)] \
        + srv(0, names(layer)[0], layer)
    case(id, description, J, [d(ROOT), text(PATHS[layer], js(doc)), *links(layer)], 0, facts, stderr_empty=True)


dialect_case("json-sse-rejected", "type sse is rejected per entry (sse-unsupported); the other rows are fine",
             {"type": "sse", "url": "https://%s/sse" % canary("canary-sse-d5h1.invalid")}, ["sse-unsupported"], "sse")
dialect_case("json-url-httpurl-conflict", "url and httpUrl with different values: url-httpurl-conflict",
             {"url": "https://%s/a" % canary("canary-u1-d5h1.invalid"), "httpUrl": "https://%s/b" % canary("canary-u2-d5h1.invalid")},
             ["url-httpurl-conflict"], "http")
dialect_case("json-command-and-url-is-stdio", "command and url without type/transport: stdio (DSH infers http only "
             "without a command)",
             {"command": SENTINEL, "url": "https://%s/x" % canary("canary-cu-d5h1.invalid")}, [], "stdio", valid=True)
dialect_case("json-invalid-url", "a url Node's URL parser refuses (no scheme) is an entry error: invalid-url",
             {"url": "%s/mcp" % canary("canary-noscheme-d5h1.invalid")}, ["invalid-url"], "http")
dialect_case("json-transport-type-conflict", "type http and transport stdio disagree: transport-type-conflict",
             {"type": "http", "transport": "stdio", "command": SENTINEL, "url": "https://%s/y" % canary("canary-tt-d5h1.invalid")},
             ["transport-type-conflict"], "unknown")
dialect_case("json-url-only-is-http", "url without type/transport is streamable HTTP; unknown keys are tolerated",
             {"url": "https://%s/z" % canary("canary-uo-d5h1.invalid"), canary("CANARY-UNKNOWN-KEY-d5h1"): True},
             [], "http", valid=True)
case("json-invalid-name", "a name outside [A-Za-z0-9_-]{1,32} is an entry problem and holds no key",
     J, [d(ROOT), text(PATHS["cc-project"], js({"mcpServers": {"bad name": alpha("cc-project")}})),
         text(PATHS["dsh-user"], js({"mcpServers": {"copy": alpha("cc-project")}}))],
     0, head(True) + srv(0, "bad name", "cc-project", active=False, valid=False)
     + [eq("/servers/0/shape/problems", ["invalid-name"])] + srv(1, "copy", "dsh-user"))
case("placeholders-counted-never-named", "${VAR} references in every interpolated field are counted; names never printed",
     J + PROFILE, [d(ROOT), text(PATHS["dsh-profile-user"], js({"mcpServers": {"vars": {
         "command": SENTINEL, "args": ["${%s}" % canary("CANARY_V1_d5h1"), "x${%s}y${%s}" % (canary("CANARY_V2_d5h1"), canary("CANARY_V3_d5h1"))],
         "env": {"${%s}" % canary("CANARY_V4_d5h1"): "${%s}" % canary("CANARY_V5_d5h1")}, "cwd": "${%s}" % canary("CANARY_V6_d5h1")}}}))],
     0, head(True) + srv(0, "vars", "dsh-profile-user") + [eq("/servers/0/placeholderCount", 5)], stderr_empty=True)

# ---- file states (shared reader) ----


def state_case(layer, id, description, entries, state, reason, count=0):
    exit_code = 0 if state in ("present", "missing") else 1
    facts = head(exit_code == 0) + src(layer, state, reason, count=count)
    if state != "present":
        facts.append(length("/servers", 0))
    case("%s-%s" % (PREFIX[layer], id), description, J, [d(ROOT)] + entries + links(layer), exit_code, facts,
         **incomplete_kwargs(exit_code))


for layer in ["dsh-project", "dsh-project-json", "dsh-user"]:
    path = PATHS[layer]
    body = layer_file(layer)
    parent = path.rsplit("/", 1)[0]
    state_case(layer, "symlink-final", "the file is a symlink to a valid file: skipped, never followed",
               [text(parent + "/real-config", body), symlink(path, parent + "/real-config")],
               "symlink-skipped", "symlink")
    state_case(layer, "not-file-fifo", "the file is a FIFO: classified without being opened", [fifo(path)],
               "not-file", "fifo")
    state_case(layer, "too-large", "1 MiB + 1 byte: too-large", [fill(path, body, MIB + 1)], "too-large", "exceeds-read-limit")
    state_case(layer, "unreadable", "mode 0000: unreadable (permission-denied)", [text(path, body, "0000")],
               "unreadable", "permission-denied")
state_case("dsh-project", "exactly-1mib", "exactly 1 MiB of YAML (block, then padding) is read", [fill(PATHS["dsh-project"], layer_file("dsh-project"), MIB)],
           "present", None, count=3)
state_case("dsh-project", "dir-symlink", "the .dsh directory is a symlink: symlink-skipped (symlink-in-path)",
           [text("/work/elsewhere/mcp.yml", layer_file("dsh-project")), symlink(ROOT + "/.dsh", "/work/elsewhere")],
           "symlink-skipped", "symlink-in-path")
state_case("dsh-project-json", "comment", "a // comment in .dsh/mcp.json: strict JSON, malformed (comment)",
           [text(PATHS["dsh-project-json"], "// %s\n%s" % (canary("CANARY-COMMENT-d5h1"), layer_file("dsh-project-json")))],
           "malformed", "comment")
state_case("dsh-project-json", "duplicate-key", "a duplicated key in .dsh/mcp.json: malformed (duplicate-key)",
           [text(PATHS["dsh-project-json"], layer_file("dsh-project-json")[:-1] + ',"mcpServers":{}}')], "malformed", "duplicate-key")
state_case("dsh-user", "wrong-container", "mcpServers is an array: malformed (wrong-container-type)",
           [text(PATHS["dsh-user"], js({"mcpServers": [servers("dsh-user")]}))], "malformed", "wrong-container-type")
state_case("cc-project", "no-mcpservers", ".mcp.json without mcpServers: DSH fails the legacy file (wrong-container-type)",
           [text(PATHS["cc-project"], js({"other": {canary("CANARY-NOSERVERS-d5h1"): True}}))], "malformed", "wrong-container-type")
state_case("dsh-project-json", "no-mcpservers", ".dsh/mcp.json without mcpServers: an empty layer",
           [text(PATHS["dsh-project-json"], js({"other": {canary("CANARY-NOSERVERS-DPJ-d5h1"): True}}))], "present", None)
state_case("dsh-user", "mcpservers-null", "mcpServers: null is an empty layer",
           [text(PATHS["dsh-user"], js({"mcpServers": None}))], "present", None)

case("cc-project-broken-yml-unaffected", "a malformed .mcp.json never hides the project's YAML rows",
     J, [d(ROOT), text(PATHS["dsh-project"], layer_file("dsh-project")), text(PATHS["cc-project"], layer_file("cc-project")[:-5]),
         *links("dsh-project", "cc-project")], 1,
     head(False) + src("dsh-project", "present", count=3) + src("cc-project", "malformed", "syntax") + [length("/servers", 3)],
     stderr_contains=["cc-project source malformed (syntax)"])

# ---- HOME ----

case("home-empty", "HOME set to the empty string: user layers unreadable (home-not-set), project layers read",
     J, full_fixture(), 1,
     head(False) + src("dsh-project", "present", count=3) + src("dsh-user-yml", "unreadable", "home-not-set")
     + src("dsh-user", "unreadable", "home-not-set") + [eq("/sources/4/path", "~/.dsh/mcp.json"), length("/servers", 9)],
     env={"HOME": ""}, stderr_contains=["inventory incomplete"])

# ---- usage ----

for bad_name in ["..", "a/b", ".hidden", ""]:
    case("profile-name-refused-%s" % (bad_name.replace("/", "slash").replace(".", "dot") or "empty"),
         "--dsh-profile %r is refused (exit 2) before anything is read" % bad_name,
         J + ["--dsh-profile", bad_name], full_fixture(LAYERS), 2, refused("usage"), stderr_contains=["--dsh-profile"])
case("profile-needs-client-dsh", "--dsh-profile with the default client is a usage error (exit 2)",
     [ROOT, "--json", "--dsh-profile", "web"], full_fixture(LAYERS), 2, refused("usage"), stderr_contains=["--client dsh"])
case("root-missing", "a root that does not exist is refused (exit 1)", ["/work/nope", "--json"] + DSH, full_fixture(), 1,
     refused("invalid-root", "not-found", "/work/nope"), stderr_contains=["root does not exist"])
case("root-dot-with-cwd", ". selects the current directory", [".", "--json"] + DSH, full_fixture(), 0,
     head(True) + [eq("/root/requested", "."), eq("/root/canonical", ROOT), eq("/sources/0/path", PATHS["dsh-project"])]
     + rows(NO_PROFILE), cwd=ROOT)

matrixlib.write("dsh")
