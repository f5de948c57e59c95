#!/usr/bin/env python3
"""Generates harness/matrix/clients.json: the fourteen clients beyond Claude Code, VS Code and DSH
(--client codex, cursor, gemini-cli, windsurf, claude-desktop, kiro, amazon-q, opencode, zed,
continue, cline, roo-code, goose, crush), --client all, and --fail-on.

The JSON file is what the runner executes and the receipt binds; this script only saves writing
the canary-laden fixtures by hand. Edit here, run
`python3 harness/matrix/generate-clients.py > harness/matrix/clients.json`, commit both. Output is
deterministic. Shared helpers are in matrixlib.py.

Conventions: project root /work/proj (no .git anywhere, so Codex's project is the root alone and
OpenCode walks every ancestor up to /), HOME /home/node. Every client's every file carries three
servers `<tag>-alpha` (command = the sentinel; args, env names and values are canaries),
`<tag>-beta` (command = a canary-named symlink to the sentinel) and `<tag>-remote` (URL host and
query, header name and value are canaries), written in the client's own format: JSON, JSONC with
canary comments, TOML, or YAML. Per client: every file present (JSON and human), nothing
configured, malformed with its line, too large, a final symlink, and a same-name case; then what
is particular to the client (Codex trust and duplicate tables, Gemini folder trust, Continue's
block directory, OpenCode's ancestor and json/jsonc order, Crush's data directory and levels, ...). The profiles' rules are in
inventory/CLIENTS.md.
"""

import json

import matrixlib
from matrixlib import HOME, MIB, ROOT, SENTINEL, absent, canary, d, eq, fill, js, length, raw, sentinel_link, symlink, text

HUMAN_NEVER = [SENTINEL, "https://", "Bearer"]


def link(tag):
    return sentinel_link("CANARY-CLI-CMD-%s-a7c2" % tag.upper())


def c(kind, tag, n):
    """A canary of `kind` for `tag`, registered."""
    return canary("CANARY-CLI-%s-%s-%d-a7c2" % (kind, tag.upper(), n))


def url(tag):
    return "https://%s/mcp?key=%s" % (canary("canary-cli-host-%s-a7c2.invalid" % tag), c("URLQ", tag, 1))


def header_name(tag):
    return canary("X-Canary-Cli-Hdr-%s-a7c2" % tag)


def env_name(tag):
    return canary("CANARY_CLI_ENVNAME_%s_A7C2" % tag.upper())


# ---- the server sets, per entry grammar ----


def portable(tag, remote_key="url", remote_type=None, remote=True, name=None):
    """mcpServers-family entries (Cursor, Windsurf, Claude Desktop, Kiro, Amazon Q, Gemini CLI,
    Cline, Roo Code)."""
    p = name or tag
    out = {
        p + "-alpha": {"command": SENTINEL, "args": [c("ARG", tag, 1), "--token=" + c("ARG", tag, 2)],
                       "env": {env_name(tag): c("ENVVAL", tag, 1)}},
        p + "-beta": {"command": link(tag), "args": [c("ARG", tag, 3)]},
    }
    if remote:
        r = {remote_key: url(tag), "headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}}
        if remote_type:
            r["type"] = remote_type
        out[p + "-remote"] = r
    return out


def opencode_servers(tag):
    return {
        tag + "-alpha": {"type": "local", "command": [SENTINEL, c("ARG", tag, 1), "--token=" + c("ARG", tag, 2)],
                         "environment": {env_name(tag): c("ENVVAL", tag, 1)}, "enabled": True},
        tag + "-beta": {"type": "local", "command": [link(tag), c("ARG", tag, 3)]},
        tag + "-remote": {"type": "remote", "url": url(tag),
                          "headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}},
    }


def zed_servers(tag):
    return {
        tag + "-alpha": {"command": SENTINEL, "args": [c("ARG", tag, 1)], "env": {env_name(tag): c("ENVVAL", tag, 1)}},
        # The older nested form.
        tag + "-beta": {"source": "custom", "command": {"path": link(tag), "args": [c("ARG", tag, 3)], "env": {}}},
        tag + "-remote": {"url": url(tag), "headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}},
    }


def goose_servers(tag):
    return {
        tag + "-alpha": {"type": "stdio", "name": tag + "-alpha", "cmd": SENTINEL, "args": [c("ARG", tag, 1)],
                         "envs": {env_name(tag): c("ENVVAL", tag, 1)}, "enabled": True},
        tag + "-beta": {"type": "stdio", "name": tag + "-beta", "cmd": link(tag), "args": [c("ARG", tag, 3)],
                        "enabled": True},
        tag + "-remote": {"type": "streamable_http", "name": tag + "-remote", "uri": url(tag),
                          "headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}, "enabled": True},
    }


def continue_servers(tag):
    return [
        {"name": tag + "-alpha", "command": SENTINEL, "args": [c("ARG", tag, 1)], "env": {env_name(tag): c("ENVVAL", tag, 1)}},
        {"name": tag + "-beta", "command": link(tag), "args": [c("ARG", tag, 3)]},
        {"name": tag + "-remote", "type": "streamable-http", "url": url(tag),
         "requestOptions": {"headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}}},
    ]


def crush_servers(tag):
    """Crush's `mcp` entries: the transport is always named in `type`."""
    return {
        tag + "-alpha": {"type": "stdio", "command": SENTINEL, "args": [c("ARG", tag, 1), "--token=" + c("ARG", tag, 2)],
                         "env": {env_name(tag): c("ENVVAL", tag, 1)}},
        tag + "-beta": {"type": "stdio", "command": link(tag), "args": [c("ARG", tag, 3)]},
        tag + "-remote": {"type": "http", "url": url(tag), "headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)},
                          "oauth_client_secret": c("OAUTHSECRET", tag, 1)},
    }


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (json.dumps(k), toml_value(x)) for k, x in v.items()) + " }"
    raise TypeError(v)


def codex_servers(tag):
    return {
        tag + "-alpha": {"command": SENTINEL, "args": [c("ARG", tag, 1), "--token=" + c("ARG", tag, 2)],
                         "env": {env_name(tag): c("ENVVAL", tag, 1)}, "env_vars": [canary("CANARY_CLI_ENVVAR_%s_A7C2" % tag.upper())]},
        tag + "-beta": {"command": link(tag), "args": [c("ARG", tag, 3)]},
        tag + "-remote": {"url": url(tag), "bearer_token_env_var": canary("CANARY_CLI_BEARERVAR_%s_A7C2" % tag.upper()),
                          "http_headers": {header_name(tag): "Bearer " + c("HDRVAL", tag, 1)}},
    }


def toml_doc(servers, extra=""):
    out = "# " + canary("CANARY-CLI-TOMLCOMMENT-a7c2") + "\n" + extra
    for name, table in servers.items():
        out += "\n[mcp_servers.%s]\n" % json.dumps(name)
        for k, v in table.items():
            out += "%s = %s\n" % (k, toml_value(v))
    return out


def yaml_doc(key, value, comment=True):
    """YAML: a comment line (a canary), then `key: <JSON flow>` (JSON is YAML)."""
    head = "# %s\n" % canary("CANARY-CLI-YAMLCOMMENT-a7c2") if comment else ""
    return head + "name: local\nversion: 0.0.1\nschema: v1\n%s: %s\n" % (key, js(value))


def jsonc_doc(key, servers):
    """JSONC: a comment (a canary) and trailing commas."""
    body = js({key: servers})
    return "// %s\n%s" % (canary("CANARY-CLI-JSONCCOMMENT-a7c2"), body[:-2] + ",},}\n")


# ---- clients: their files (report order), formats and rules ----


class Client:
    def __init__(self, id, title, files, write, relation, switch=False, remote_valid=True, trusted=None):
        self.id = id
        self.title = title
        # [(scope, path, parser, container)] in source order.
        self.files = files
        self.write = write  # (scope index, tag) -> file text
        self.relation = relation  # "possibleShadowedBy" or "sameNameIn"
        self.switch = switch
        self.remote_valid = remote_valid
        self.trusted = trusted or {}  # scope index -> trusted value when every file is present

    def tag(self, i):
        return "%s%d" % (self.id.replace("-", "")[:4], i)


def mcp_json(remote_key="url", remote_type=None, remote=True):
    return lambda i, tag: js({"mcpServers": portable(tag, remote_key, remote_type, remote)})


CLIENTS = [
    Client("codex", "Codex", [
        ("managed", "/etc/codex/managed_config.toml", "toml", "mcp_servers"),
        ("project", ROOT + "/.codex/config.toml", "toml", "mcp_servers"),
        ("user", HOME + "/.codex/config.toml", "toml", "mcp_servers"),
        ("system", "/etc/codex/config.toml", "toml", "mcp_servers"),
    ], lambda i, tag: toml_doc(codex_servers(tag), '[projects."%s"]\ntrust_level = "trusted"\n' % ROOT if i == 2 else ""),
        "possibleShadowedBy", switch=True, trusted={1: True}),
    Client("cursor", "Cursor", [
        ("project", ROOT + "/.cursor/mcp.json", "json", "mcpServers"),
        ("global", HOME + "/.cursor/mcp.json", "json", "mcpServers"),
    ], mcp_json(), "sameNameIn"),
    Client("gemini-cli", "Gemini CLI", [
        ("system", "/etc/gemini-cli/settings.json", "json-with-comments", "mcpServers"),
        ("workspace", ROOT + "/.gemini/settings.json", "json-with-comments", "mcpServers"),
        ("user", HOME + "/.gemini/settings.json", "json-with-comments", "mcpServers"),
        ("system-defaults", "/etc/gemini-cli/system-defaults.json", "json-with-comments", "mcpServers"),
        ("trusted-folders", HOME + "/.gemini/trustedFolders.json", "json-with-comments", "(trust rules)"),
    ], lambda i, tag: "// %s\n" % canary("CANARY-CLI-GEMCOMMENT-a7c2") + js({"mcpServers": portable(tag, "httpUrl")}),
        "possibleShadowedBy", trusted={1: "unknown"}),
    Client("windsurf", "Windsurf", [
        ("user", HOME + "/.codeium/windsurf/mcp_config.json", "json", "mcpServers"),
    ], mcp_json("serverUrl"), "sameNameIn", switch=True),
    Client("claude-desktop", "Claude Desktop", [
        ("user", HOME + "/.config/Claude/claude_desktop_config.json", "json", "mcpServers"),
    ], mcp_json(), "sameNameIn", remote_valid=False),
    Client("kiro", "Kiro", [
        ("workspace", ROOT + "/.kiro/settings/mcp.json", "json", "mcpServers"),
        ("user", HOME + "/.kiro/settings/mcp.json", "json", "mcpServers"),
    ], mcp_json(), "possibleShadowedBy", switch=True),
    Client("amazon-q", "Amazon Q Developer", [
        ("workspace", ROOT + "/.amazonq/mcp.json", "json", "mcpServers"),
        ("global", HOME + "/.aws/amazonq/mcp.json", "json", "mcpServers"),
    ], mcp_json("url", "http"), "possibleShadowedBy", switch=True),
    Client("opencode", "OpenCode", [
        ("project-jsonc", ROOT + "/opencode.jsonc", "jsonc", "mcp"),
        ("project-json", ROOT + "/opencode.json", "jsonc", "mcp"),
        ("ancestor-jsonc", "/work/opencode.jsonc", "jsonc", "mcp"),
        ("ancestor-json", "/work/opencode.json", "jsonc", "mcp"),
        ("ancestor-jsonc", "/opencode.jsonc", "jsonc", "mcp"),
        ("ancestor-json", "/opencode.json", "jsonc", "mcp"),
        ("global-jsonc", HOME + "/.config/opencode/opencode.jsonc", "jsonc", "mcp"),
        ("global-json", HOME + "/.config/opencode/opencode.json", "jsonc", "mcp"),
        ("global-config-json", HOME + "/.config/opencode/config.json", "jsonc", "mcp"),
    ], lambda i, tag: jsonc_doc("mcp", opencode_servers(tag)), "possibleShadowedBy", switch=True),
    Client("zed", "Zed", [
        ("project", ROOT + "/.zed/settings.json", "jsonc", "context_servers"),
        ("user", HOME + "/.config/zed/settings.json", "jsonc", "context_servers"),
    ], lambda i, tag: jsonc_doc("context_servers", zed_servers(tag)), "possibleShadowedBy", switch=True),
    Client("continue", "Continue", [
        ("user", HOME + "/.continue/config.yaml", "yaml", "mcpServers[].name"),
        ("workspace-blocks", ROOT + "/.continue/mcpServers", "(directory)", "(files)"),
        ("workspace-block", ROOT + "/.continue/mcpServers/tools.yaml", "yaml", "mcpServers[].name"),
    ], lambda i, tag: yaml_doc("mcpServers", continue_servers(tag)), "sameNameIn"),
    Client("cline", "Cline", [
        ("user", HOME + "/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
         "json", "mcpServers"),
    ], mcp_json("url", "streamableHttp"), "sameNameIn", switch=True),
    Client("roo-code", "Roo Code", [
        ("project", ROOT + "/.roo/mcp.json", "json", "mcpServers"),
        ("global", HOME + "/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
         "json", "mcpServers"),
    ], mcp_json("url", "streamable-http"), "possibleShadowedBy", switch=True),
    Client("goose", "goose", [
        ("user", HOME + "/.config/goose/config.yaml", "yaml", "extensions"),
    ], lambda i, tag: yaml_doc("extensions", goose_servers(tag)), "sameNameIn", switch=True),
    # No .git: the root is Crush's only project level.
    Client("crush", "Crush", [
        ("workspace", ROOT + "/.crush/crush.json", "json", "mcp"),
        ("project", ROOT + "/crush.json", "json", "mcp"),
        ("project-dotfile", ROOT + "/.crush.json", "json", "mcp"),
        ("data", HOME + "/.local/share/crush/crush.json", "json", "mcp"),
        ("global", HOME + "/.config/crush/crush.json", "json", "mcp"),
        ("system", "/etc/crush/crush.json", "json", "mcp"),
    ], lambda i, tag: js({"mcp": crush_servers(tag)}), "possibleShadowedBy", switch=True),
]

BY_ID = {cl.id: cl for cl in CLIENTS}
# Sources that hold no servers: the Continue block directory, Gemini CLI's trust rules.
DIRECTORY_SCOPES = {"workspace-blocks", "trusted-folders"}
# A file position that exists in the container only when its directory does (/ is read-only), or
# whose directory is no fixture root (/etc/crush).
UNWRITABLE = {"/opencode.jsonc", "/opencode.json", "/etc/crush/crush.json"}


def args(cl, human=False):
    a = [ROOT, "--client", cl.id]
    return a if human else a + ["--json"]


def file_fixtures(cl, indexes=None):
    """Every server file of `cl` (or those in `indexes`) with its three servers."""
    out = []
    for i, (scope, path, parser, container) in enumerate(cl.files):
        if scope in DIRECTORY_SCOPES or path in UNWRITABLE:
            continue
        if indexes is not None and i not in indexes:
            continue
        out.append(text(path, cl.write(i, cl.tag(i))))
    return out


def links_for(cl, indexes):
    return matrixlib.sentinel_links(link(cl.tag(i)) for i in indexes)


def server_indexes(cl):
    return [i for i, f in enumerate(cl.files) if f[0] not in DIRECTORY_SCOPES and f[1] not in UNWRITABLE]


def src(i, scope, state, count=0, reason=None, parser=None, trusted=None):
    facts = [eq("/sources/%d/scope" % i, scope), eq("/sources/%d/state" % i, state),
             eq("/sources/%d/reason" % i, reason), eq("/sources/%d/serverCount" % i, count)]
    if parser:
        facts.append(eq("/sources/%d/parser" % i, parser))
    if trusted is not None:
        facts.append(eq("/sources/%d/trusted" % i, trusted))
    return facts


def rows_for(cl, indexes, start=0):
    """Facts for the three rows of each file in `indexes`, in source order, names sorted."""
    facts, n = [], start
    for i in indexes:
        scope = cl.files[i][0]
        tag = cl.tag(i)
        for name, transport, launch in [(tag + "-alpha", "stdio", "executable"), (tag + "-beta", "stdio", "executable"),
                                        (tag + "-remote", "http", "remote")]:
            valid = cl.remote_valid or not name.endswith("remote")
            p = "/servers/%d" % n
            facts += [eq(p + "/name", name), eq(p + "/scope", scope), eq(p + "/configured", True),
                      eq(p + "/shape/valid", valid), eq(p + "/" + cl.relation, [])]
            if valid:
                facts.append(eq(p + "/launch", launch))
            if cl.switch:
                facts.append(eq(p + "/enabled", True))
            n += 1
    return facts, n


def head(cl, complete, blocks=False):
    """The header facts; Continue lists its block file only when the block directory has it."""
    n = len(cl.files)
    if cl.id == "continue" and not blocks:
        n -= 1
    return matrixlib.head(cl.id, complete) + [length("/sources", n)]


def full_sources(cl, present_count=3):
    facts = []
    writable = server_indexes(cl)
    for i, (scope, path, parser, container) in enumerate(cl.files):
        if scope == "workspace-blocks":
            facts += src(i, scope, "present")
        elif scope in DIRECTORY_SCOPES:
            facts += src(i, scope, "missing")
        elif i in writable:
            facts += src(i, scope, "present", present_count, parser=parser, trusted=cl.trusted.get(i))
        else:
            facts += src(i, scope, "missing", parser=parser)
    return facts


def case(id, cl_id, description, a, fixture, exit_code, facts=None, env=None, **txt):
    matrixlib.case(id, cl_id, description, a, fixture, exit_code, facts, env=env, **txt)


def incomplete():
    return matrixlib.incomplete_kwargs(1)


# ---- per client ----

for cl in CLIENTS:
    idx = server_indexes(cl)
    first = idx[0]
    first_scope, first_path, first_parser, _ = cl.files[first]
    rows, n = rows_for(cl, idx)
    full = [d(ROOT)] + file_fixtures(cl) + links_for(cl, idx)

    case("%s-all-present-json" % cl.id, cl.id,
         "%s: every fixed file present with three servers each, sources in precedence order, rows by source then name" % cl.title,
         args(cl), full, 0, head(cl, True, blocks=True) + full_sources(cl) + rows + [length("/servers", n)], stderr_empty=True)
    case("%s-all-present-human" % cl.id, cl.id,
         "%s human report: title, scopes and server names; never a command, URL or header" % cl.title,
         args(cl, human=True), full, 0,
         stdout_contains=["%s inventory" % cl.title, "complete", cl.tag(first) + "-alpha", cl.tag(idx[-1]) + "-remote",
                          "Legend"],
         stdout_not_contains=HUMAN_NEVER + ["(none: source missing)"], stderr_empty=True)
    nothing = head(cl, True) + [length("/servers", 0)]
    for i, (scope, path, parser, container) in enumerate(cl.files):
        if scope != "workspace-block":
            nothing += src(i, scope, "missing")
    case("%s-nothing-configured" % cl.id, cl.id, "%s: no file exists: every source missing, inventory complete" % cl.title,
         args(cl), [d(ROOT)], 0, nothing, stderr_empty=True)

    # Every broken file stops the parser on its second line.
    b = c("BROKEN", cl.tag(first), 1)
    broken = {"json": '{"mcpServers": {\n  "x": {"command": "' + b + '",,\n}}\n',
              "jsonc": '{"x": {\n  "y": {"command": ["' + b + '"],,\n}}\n',
              "json-with-comments": '{\n  "mcpServers": {"x": {"command": "' + b + '",}}\n}\n',
              "toml": '[mcp_servers.x]\ncommand = "' + b + '\n',
              "yaml": 'mcpServers: []\n\tx: "' + b + '"\n'}[first_parser]
    reason = {"json": "syntax", "jsonc": "syntax", "json-with-comments": "trailing-comma", "toml": "syntax", "yaml": "syntax"}[first_parser]
    case("%s-malformed" % cl.id, cl.id,
         "%s: the first file does not parse: malformed (%s) with the line it stopped at; nothing in it printed" % (cl.title, reason),
         args(cl), [d(ROOT), text(first_path, broken)], 1,
         head(cl, False) + src(first, first_scope, "malformed", reason=reason)
         + [eq("/sources/%d/position/line" % first, 2), length("/servers", 0)],
         **incomplete())
    case("%s-malformed-human" % cl.id, cl.id,
         "%s human report of a malformed file: the reason and 'stopped at line N', never the file's text" % cl.title,
         args(cl, human=True), [d(ROOT), text(first_path, broken)], 1,
         stdout_contains=["malformed (%s)" % reason, "stopped at line", "Legend", "malformed: the file does not parse"],
         **incomplete())
    case("%s-too-large" % cl.id, cl.id, "%s: the first file is 1 MiB + 1 byte: too-large, never parsed" % cl.title,
         args(cl), [d(ROOT), fill(first_path, cl.write(first, "big"), MIB + 1)], 1,
         head(cl, False) + src(first, first_scope, "too-large", reason="exceeds-read-limit") + [length("/servers", 0)],
         **incomplete())
    target = ROOT + "/elsewhere.cfg"
    case("%s-symlink" % cl.id, cl.id, "%s: the first file is a symlink to a real config: symlink-skipped, never followed" % cl.title,
         args(cl), [d(ROOT), text(target, cl.write(first, cl.tag(first))), symlink(first_path, target)], 1,
         head(cl, False) + src(first, first_scope, "symlink-skipped", reason="symlink") + [length("/servers", 0)],
         **incomplete())

# ---- same name in two scopes (or twice in one file) ----


def shared(cl, i, body):
    """One server named `shared` in file `i`, in the client's format."""
    if cl.id == "codex":
        return toml_doc({"shared": body})
    if cl.id == "opencode":
        return js({"mcp": {"shared": {"type": "local", "command": [SENTINEL, c("SHARED", cl.tag(i), 1)]}}})
    if cl.id == "zed":
        return js({"context_servers": {"shared": body}})
    if cl.id == "continue":
        return yaml_doc("mcpServers", [dict(name="shared", **body)])
    if cl.id == "goose":
        return yaml_doc("extensions", {"shared": {"type": "stdio", "cmd": SENTINEL, "args": body["args"], "enabled": True}})
    if cl.id == "crush":
        return js({"mcp": {"shared": dict(type="stdio", **body)}})
    return js({"mcpServers": {"shared": body}})


for cl in CLIENTS:
    idx = server_indexes(cl)
    body = lambda i: {"command": SENTINEL, "args": [c("SHARED", cl.tag(i), 1)]}
    if len(idx) >= 2:
        hi, lo = idx[0], idx[1]
        if cl.id == "opencode":
            hi, lo = lo, hi  # the root's opencode.json outranks its opencode.jsonc
        fixture = [d(ROOT), text(cl.files[hi][1], shared(cl, hi, body(hi))), text(cl.files[lo][1], shared(cl, lo, body(lo)))]
        rel_hi = [] if cl.relation == "possibleShadowedBy" else [cl.files[lo][0]]
        rel_lo = [cl.files[hi][0]]
        what = "the higher scope wins (possibleShadowedBy)" if cl.relation == "possibleShadowedBy" else \
            "no documented winner: both rows name the other (sameNameIn)"
        case("%s-same-name-two-scopes" % cl.id, cl.id, "%s: `shared` in %s and %s: %s" % (cl.title, cl.files[hi][0], cl.files[lo][0], what),
             args(cl), fixture, 0,
             head(cl, True, blocks=True) + [length("/servers", 2)]
             + sum(([eq("/servers/%d/name" % r, "shared"), eq("/servers/%d/scope" % r, cl.files[i][0]),
                     eq("/servers/%d/%s" % (r, cl.relation), rel)]
                    for r, (i, rel) in enumerate(sorted([(hi, rel_hi), (lo, rel_lo)]))), []),
             stderr_empty=True)
    else:
        path = cl.files[idx[0]][1]
        if cl.id == "goose":
            dup = "extensions:\n  shared: {type: stdio, cmd: x}\n  shared: {type: stdio, cmd: y}\n"
        else:
            dup = '{"mcpServers": {"shared": {"command": "x"},\n "shared": {"command": "' + c("DUP", cl.tag(0), 1) + '"}}}'
        case("%s-same-name-duplicate-key" % cl.id, cl.id,
             "%s has one file: a name given twice is a duplicate key, the file malformed, never last-wins" % cl.title,
             args(cl), [d(ROOT), text(path, dup)], 1,
             head(cl, False) + src(0, cl.files[0][0], "malformed", reason="duplicate-key")
             + [eq("/sources/0/position/line", 2 if cl.id != "goose" else 3), length("/servers", 0)], **incomplete())

# ---- Codex ----

CX = BY_ID["codex"]
USER_TOML = HOME + "/.codex/config.toml"
PROJECT_TOML = ROOT + "/.codex/config.toml"
project_only = toml_doc(codex_servers("cxp"))
trust = lambda level: '[projects."%s"]\ntrust_level = "%s"\n' % (ROOT, level)
for label, user_text, want in [
    ("trusted", trust("trusted"), True),
    ("untrusted", trust("untrusted"), False),
    ("not-listed", '[projects."/work/other"]\ntrust_level = "trusted"\n', False),
]:
    case("codex-project-%s" % label, "codex",
         "Codex reads <root>/.codex/config.toml only for a trusted project: here %s, so trusted is %s; the file is read and listed either way" % (label, json.dumps(want)),
         args(CX), [d(ROOT), text(USER_TOML, user_text), text(PROJECT_TOML, project_only),
                    *matrixlib.sentinel_links([link("cxp")])], 0,
         head(CX, True) + src(1, "project", "present", 3, trusted=want) + src(2, "user", "present", 0)
         + [length("/servers", 3), eq("/servers/0/scope", "project")], stderr_empty=True)
case("codex-project-trust-unknown", "codex",
     "the user config.toml is malformed: Codex refuses to start, and trust cannot be known (\"unknown\")",
     args(CX), [d(ROOT), text(USER_TOML, "[projects\n"), text(PROJECT_TOML, project_only), *matrixlib.sentinel_links([link("cxp")])], 1,
     head(CX, False) + src(1, "project", "present", 3, trusted="unknown") + src(2, "user", "malformed", reason="syntax"),
     **incomplete())
case("codex-untrusted-human", "codex",
     "human report marks an untrusted project file: the client does not load it",
     args(CX, human=True), [d(ROOT), text(PROJECT_TOML, project_only), *matrixlib.sentinel_links([link("cxp")])], 0,
     stdout_contains=["trusted: no", "not trusted: the client does not load this file", "cxp-alpha"], stderr_empty=True)
case("codex-duplicate-table", "codex",
     "a [mcp_servers.x] table defined twice: Codex refuses to start; the user file is malformed (duplicate-key) at that line",
     args(CX), [d(ROOT), text(USER_TOML, '[mcp_servers.x]\ncommand = "a"\n\n[mcp_servers.x]\ncommand = "' + c("DUPTABLE", "cx", 1) + '"\n')], 1,
     head(CX, False) + src(2, "user", "malformed", reason="duplicate-key") + [eq("/sources/2/position/line", 4)],
     **incomplete())
case("codex-duplicate-key", "codex", "a key given twice in one table: malformed (duplicate-key)",
     args(CX), [d(ROOT), text(USER_TOML, '[mcp_servers.x]\ncommand = "a"\ncommand = "' + c("DUPKEY", "cx", 1) + '"\n')], 1,
     head(CX, False) + src(2, "user", "malformed", reason="duplicate-key") + [eq("/sources/2/position/line", 3)],
     **incomplete())
case("codex-home-override", "codex", "CODEX_HOME moves the user file; ~/.codex is then not read",
     args(CX), [d(ROOT), text(HOME + "/alt-codex/config.toml", toml_doc(codex_servers("cxh"))),
                text(USER_TOML, toml_doc(codex_servers("cxignored"))), *matrixlib.sentinel_links([link("cxh"), link("cxignored")])], 0,
     head(CX, True) + src(2, "user", "present", 3) + [eq("/sources/2/path", HOME + "/alt-codex/config.toml"),
                                                      length("/servers", 3), eq("/servers/0/name", "cxh-alpha")],
     env={"CODEX_HOME": HOME + "/alt-codex"}, stderr_empty=True)
case("codex-bearer-token-and-conflicts", "codex",
     "entries Codex refuses stay visible as invalid rows: an inline bearer_token, a url beside command, no transport",
     args(CX), [d(ROOT), text(USER_TOML, toml_doc({
         "tok": {"url": "https://x.invalid/mcp", "bearer_token": c("BEARERTOKEN", "cx", 1)},
         "both": {"command": SENTINEL, "url": url("cxb")},
         "none": {"args": [c("ARG", "cxn", 1)]},
         "off": {"command": SENTINEL, "enabled": False}}))], 0,
     head(CX, True) + [length("/servers", 4),
                       eq("/servers/0/name", "both"), eq("/servers/0/shape/problems", ["http-field-on-stdio-server"]),
                       eq("/servers/1/name", "none"), eq("/servers/1/shape/problems", ["missing-command"]),
                       eq("/servers/2/name", "off"), eq("/servers/2/enabled", False), eq("/servers/2/shape/valid", True),
                       eq("/servers/3/name", "tok"), eq("/servers/3/shape/problems", ["bearer-token-not-supported"])],
     stderr_empty=True)
case("codex-managed-and-system", "codex",
     "managed_config.toml outranks everything, config.toml in /etc/codex is lowest: a name in both is shadowed by managed",
     args(CX), [d(ROOT), text("/etc/codex/managed_config.toml", toml_doc({"corp": {"command": SENTINEL}})),
                text("/etc/codex/config.toml", toml_doc({"corp": {"command": SENTINEL, "args": [c("ARG", "cxs", 1)]}}))], 0,
     head(CX, True) + src(0, "managed", "present", 1) + src(3, "system", "present", 1)
     + [eq("/servers/0/scope", "managed"), eq("/servers/0/possibleShadowedBy", []),
        eq("/servers/1/scope", "system"), eq("/servers/1/possibleShadowedBy", ["managed"])], stderr_empty=True)

# ---- Gemini CLI ----

GM = BY_ID["gemini-cli"]
G_WS = ROOT + "/.gemini/settings.json"
G_USER = HOME + "/.gemini/settings.json"
G_TRUST = HOME + "/.gemini/trustedFolders.json"
ws = js({"mcpServers": portable("gmw", "httpUrl")})
for label, fixture, want in [
    ("trust-folder", [text(G_TRUST, js({ROOT: "TRUST_FOLDER"}))], True),
    ("trust-parent", [text(G_TRUST, js({ROOT + "/child": "TRUST_PARENT"}))], True),
    ("do-not-trust", [text(G_TRUST, js({"/work": "TRUST_FOLDER", ROOT: "DO_NOT_TRUST"}))], False),
    ("no-rule", [], "unknown"),
    ("folder-trust-off", [text(G_USER, js({"security": {"folderTrust": {"enabled": False}}}))], True),
]:
    case("gemini-cli-workspace-%s" % label, "gemini-cli",
         "Gemini CLI folder trust for the workspace file (%s): trusted is %s; the file is read either way" % (label, json.dumps(want)),
         args(GM), [d(ROOT), text(G_WS, ws), *matrixlib.sentinel_links([link("gmw")])] + fixture, 0,
         matrixlib.head("gemini-cli", True) + src(1, "workspace", "present", 3, trusted=want)
         + [eq("/sources/4/scope", "trusted-folders"), length("/servers", 3)], stderr_empty=True)
case("gemini-cli-invalid-trust-level", "gemini-cli",
     "a trustedFolders.json value that is not a trust level stops Gemini CLI: that source is malformed (invalid-trust-level)",
     args(GM), [d(ROOT), text(G_TRUST, js({ROOT: "MAYBE"}))], 1,
     matrixlib.head("gemini-cli", False) + src(4, "trusted-folders", "malformed", reason="invalid-trust-level")
     + [eq("/sources/1/trusted", "unknown")], **incomplete())
case("gemini-cli-comments-ok-bom-not", "gemini-cli",
     "settings files strip comments, then parse strict JSON: a comment is fine, a BOM is not",
     args(GM), [d(ROOT), text(G_WS, "\ufeff" + ws), text(G_USER, "/* %s */\n%s" % (canary("CANARY-CLI-GEMBLOCK-a7c2"), js({"mcpServers": {}})))], 1,
     matrixlib.head("gemini-cli", False) + src(1, "workspace", "malformed", reason="byte-order-mark") + src(2, "user", "present", 0),
     **incomplete())
case("gemini-cli-system-overrides-workspace", "gemini-cli",
     "a name in the system settings and the workspace: the system file wins (possibleShadowedBy)",
     args(GM), [d(ROOT), text("/etc/gemini-cli/settings.json", js({"mcpServers": {"s": {"command": SENTINEL}}})),
                text(G_WS, js({"mcpServers": {"s": {"command": SENTINEL, "args": [c("ARG", "gms", 1)]}}}))], 0,
     matrixlib.head("gemini-cli", True) + [eq("/servers/0/scope", "system"), eq("/servers/1/scope", "workspace"),
                                           eq("/servers/1/possibleShadowedBy", ["system"])], stderr_empty=True)

# ---- Continue ----

CO = BY_ID["continue"]
BLOCKS = ROOT + "/.continue/mcpServers"
case("continue-block-directory", "continue",
     "every *.yaml/*.yml/*.json file in .continue/mcpServers is a block source, in name order; other files are ignored",
     args(CO), [d(ROOT), text(BLOCKS + "/b.yaml", yaml_doc("mcpServers", continue_servers("cob"))),
                text(BLOCKS + "/a.json", js({"mcpServers": portable("coa")})),
                text(BLOCKS + "/notes.txt", c("NOTES", "co", 1)),
                *matrixlib.sentinel_links([link("cob"), link("coa")])], 0,
     matrixlib.head("continue", True) + [length("/sources", 4)] + src(1, "workspace-blocks", "present")
     + src(2, "workspace-block", "present", 3, parser="json") + [eq("/sources/2/path", BLOCKS + "/a.json")]
     + src(3, "workspace-block", "present", 3, parser="yaml") + [eq("/sources/3/path", BLOCKS + "/b.yaml"), length("/servers", 6)],
     stderr_empty=True)
case("continue-block-directory-symlink", "continue",
     "a symlinked .continue/mcpServers directory is never listed: symlink-skipped",
     args(CO), [d(ROOT), d("/work/real-blocks"), text("/work/real-blocks/x.yaml", yaml_doc("mcpServers", continue_servers("cos"))),
                d(ROOT + "/.continue"), symlink(BLOCKS, "/work/real-blocks")], 1,
     matrixlib.head("continue", False) + [length("/sources", 2)] + src(1, "workspace-blocks", "symlink-skipped", reason="symlink"),
     **incomplete())
case("continue-yaml-tag-refused", "continue",
     "YAML tags beyond the core schema are refused, never evaluated: unsupported-tag",
     args(CO), [d(ROOT), text(HOME + "/.continue/config.yaml", "mcpServers:\n  - name: x\n    command: !!js/function '%s'\n" % c("JSTAG", "co", 1))], 1,
     matrixlib.head("continue", False) + src(0, "user", "malformed", reason="unsupported-tag"), **incomplete())
case("continue-unnamed-entry", "continue",
     "an mcpServers list entry without a name is an invalid row (missing-name)",
     args(CO), [d(ROOT), text(HOME + "/.continue/config.yaml", yaml_doc("mcpServers", [{"command": SENTINEL}]))], 0,
     matrixlib.head("continue", True) + [length("/servers", 1), eq("/servers/0/name", ""),
                                         eq("/servers/0/shape/problems", ["missing-name"])], stderr_empty=True)

# ---- OpenCode ----

OC = BY_ID["opencode"]
case("opencode-json-beats-jsonc-and-ancestors", "opencode",
     "OpenCode merges every opencode.jsonc (outermost first), then every opencode.json: the root's opencode.json wins a name over the root's jsonc and an ancestor's json",
     args(OC), [d(ROOT),
                text(ROOT + "/opencode.jsonc", js({"mcp": {"s": {"type": "local", "command": [SENTINEL, c("ARG", "ocj", 1)]}}})),
                text(ROOT + "/opencode.json", js({"mcp": {"s": {"type": "local", "command": [SENTINEL]}}})),
                text("/work/opencode.json", js({"mcp": {"s": {"type": "remote", "url": url("oca")}}}))], 0,
     matrixlib.head("opencode", True) + [length("/servers", 3),
                                         eq("/servers/0/scope", "project-jsonc"), eq("/servers/0/possibleShadowedBy", ["project-json", "ancestor-json"]),
                                         eq("/servers/1/scope", "project-json"), eq("/servers/1/possibleShadowedBy", []),
                                         eq("/servers/2/scope", "ancestor-json"), eq("/servers/2/possibleShadowedBy", ["project-json"])],
     stderr_empty=True)
case("opencode-unknown-field", "opencode",
     "OpenCode's schema allows no other field: an `args` beside a local command is unknown-field; enabled: false switches a server off",
     args(OC), [d(ROOT), text(ROOT + "/opencode.json", js({"mcp": {
         "a": {"type": "local", "command": [SENTINEL], "args": [c("ARG", "ocu", 1)]},
         "b": {"type": "local", "command": [SENTINEL], "enabled": False}}}))], 0,
     matrixlib.head("opencode", True) + [eq("/servers/0/shape/problems", ["unknown-field"]),
                                         eq("/servers/1/enabled", False), eq("/servers/1/shape/valid", True)],
     stderr_empty=True)

# ---- Zed, goose, Claude Desktop, Amazon Q ----

case("zed-extension-server", "zed",
     "a context server an extension provides: no configured command, launch unknown, valid",
     args(BY_ID["zed"]), [d(ROOT), text(HOME + "/.config/zed/settings.json",
                                        js({"context_servers": {"ext": {"source": "extension", "enabled": True,
                                                                         "settings": {"token": c("EXTSETTING", "zed", 1)}}}}))], 0,
     matrixlib.head("zed", True) + [eq("/servers/0/launch", "unknown"), eq("/servers/0/shape/valid", True)], stderr_empty=True)
case("goose-builtin-and-disabled", "goose",
     "goose built-in extensions have no command (launch unknown); enabled: false is reported",
     args(BY_ID["goose"]), [d(ROOT), text(HOME + "/.config/goose/config.yaml",
                                          yaml_doc("extensions", {"developer": {"type": "builtin", "name": "developer", "enabled": True},
                                                                  "off": {"type": "stdio", "cmd": SENTINEL, "enabled": False}}))], 0,
     matrixlib.head("goose", True) + [eq("/servers/0/name", "developer"), eq("/servers/0/launch", "unknown"),
                                      eq("/servers/1/enabled", False)], stderr_empty=True)
case("amazon-q-comment-is-malformed", "amazon-q",
     "Amazon Q reads strict JSON (a comment makes it discard the file): malformed (comment)",
     args(BY_ID["amazon-q"]), [d(ROOT), text(HOME + "/.aws/amazonq/mcp.json", "// %s\n{}" % canary("CANARY-CLI-QCOMMENT-a7c2"))], 1,
     matrixlib.head("amazon-q", False) + src(1, "global", "malformed", reason="comment"), **incomplete())
case("claude-desktop-remote-entry-invalid", "claude-desktop",
     "Claude Desktop's file holds local servers only: an entry with just a url is missing-command",
     args(BY_ID["claude-desktop"]), [d(ROOT), text(HOME + "/.config/Claude/claude_desktop_config.json",
                                                   js({"mcpServers": {"r": {"url": url("cdr")}}}))], 0,
     matrixlib.head("claude-desktop", True) + [eq("/servers/0/shape/problems", ["missing-command"])], stderr_empty=True)

# ---- Crush ----

CR = BY_ID["crush"]
CR_WS = ROOT + "/.crush/crush.json"
CR_JSON = ROOT + "/crush.json"
CR_DOT = ROOT + "/.crush.json"
one_crush = lambda name, tag: js({"mcp": {name: {"type": "stdio", "command": SENTINEL, "args": [c("ARG", tag, 1)]}}})
case("crush-json-outranks-dotfile", "crush",
     "Crush 0.87.0 merges a directory's .crush.json before its crush.json: the root's crush.json wins a name over its .crush.json (possibleShadowedBy)",
     args(CR), [d(ROOT), text(CR_JSON, one_crush("s", "crj")), text(CR_DOT, one_crush("s", "crd"))], 0,
     matrixlib.head("crush", True) + src(1, "project", "present", 1) + src(2, "project-dotfile", "present", 1)
     + [length("/servers", 2), eq("/servers/0/scope", "project"), eq("/servers/0/possibleShadowedBy", []),
        eq("/servers/1/scope", "project-dotfile"), eq("/servers/1/possibleShadowedBy", ["project"])], stderr_empty=True)
case("crush-workspace-outranks-everything", "crush",
     "the data directory's crush.json (<root>/.crush) is merged last: it wins a name over the root's and the user's files",
     args(CR), [d(ROOT), text(CR_WS, one_crush("s", "crw")), text(CR_DOT, one_crush("s", "crp")),
                text(HOME + "/.config/crush/crush.json", one_crush("s", "crg"))], 0,
     matrixlib.head("crush", True) + [length("/servers", 3), eq("/servers/0/scope", "workspace"), eq("/servers/0/possibleShadowedBy", []),
                                      eq("/servers/1/possibleShadowedBy", ["workspace"]),
                                      eq("/servers/2/scope", "global"), eq("/servers/2/possibleShadowedBy", ["workspace", "project-dotfile"])],
     stderr_empty=True)
case("crush-no-git-root-alone", "crush",
     "without a .git Crush's project is the root alone: a crush.json in /work is not read (not even listed)",
     args(CR), [d(ROOT), text("/work/crush.json", one_crush("up", "cru"))], 0,
     matrixlib.head("crush", True) + [length("/sources", 6), length("/servers", 0)], stderr_empty=True)
case("crush-ancestor-levels-to-git", "crush",
     "with /work/.git, /work is a project level: its crush.json and .crush.json are ancestor sources, nearer levels win",
     args(CR), [d(ROOT), d("/work/.git"), text("/work/crush.json", one_crush("s", "cra")), text(CR_JSON, one_crush("s", "crr"))], 0,
     matrixlib.head("crush", True) + [length("/sources", 8)] + src(3, "ancestor", "present", 1) + src(4, "ancestor-dotfile", "missing")
     + [eq("/sources/3/path", "/work/crush.json"), eq("/sources/4/path", "/work/.crush.json"),
        eq("/servers/1/scope", "ancestor"), eq("/servers/1/possibleShadowedBy", ["project"])], stderr_empty=True)
case("crush-workspace-in-ancestor-crush-dir", "crush",
     "Crush's data directory is the nearest .crush up to the .git level: /work/.crush/crush.json is the workspace file",
     args(CR), [d(ROOT), d("/work/.git"), text("/work/.crush/crush.json", one_crush("w", "crx"))], 0,
     matrixlib.head("crush", True) + src(0, "workspace", "present", 1) + [eq("/sources/0/path", "/work/.crush/crush.json")],
     stderr_empty=True)
case("crush-type-required", "crush",
     "Crush starts no server without a type: a command alone is missing-type; a stored oauth_token alone is a valid row of unknown launch; disabled: true is reported",
     args(CR), [d(ROOT), text(HOME + "/.local/share/crush/crush.json", js({"mcp": {
         "a": {"command": SENTINEL, "args": [c("ARG", "crt", 1)]},
         "b": {"oauth_token": {"access_token": c("TOKEN", "crt", 1)}},
         "c": {"type": "sse", "url": url("crt"), "disabled": True}}}))], 0,
     matrixlib.head("crush", True) + [length("/servers", 3), eq("/servers/0/shape/problems", ["missing-type"]),
                                      eq("/servers/1/shape/valid", True), eq("/servers/1/launch", "unknown"),
                                      eq("/servers/2/shape/transport", "sse"), eq("/servers/2/enabled", False)], stderr_empty=True)
case("crush-zero-length-and-comment", "crush",
     "Crush skips a zero-length file (present, nothing declared) and refuses a comment (strict JSON): malformed (comment)",
     args(CR), [d(ROOT), text(CR_JSON, ""), text(CR_DOT, "// %s\n{}" % canary("CANARY-CLI-CRUSHCOMMENT-a7c2"))], 1,
     matrixlib.head("crush", False) + src(1, "project", "present") + src(2, "project-dotfile", "malformed", reason="comment"),
     **incomplete())
case("fail-on-project-server-crush-ancestor", "crush",
     "--fail-on project-server: a root below the repository's top counts the servers Crush reads from the levels above it (up to the nearest .git): exit 3",
     args(CR) + ["--fail-on", "project-server"],
     [d(ROOT), d("/work/.git"), text("/work/.crush.json", js({"mcp": crush_servers("cra")})), *matrixlib.sentinel_links([link("cra")])], 3,
     [eq("/sources/4/scope", "ancestor-dotfile"), eq("/failOn/met", ["project-server"])],
     stderr_contains=["--fail-on met: project-server"])

# ---- --client all ----

ALL = [ROOT, "--client", "all", "--json"]
every = [d(ROOT)]
links = []
for cl in CLIENTS:
    every += file_fixtures(cl)
    links += [link(cl.tag(i)) for i in server_indexes(cl)]
every += matrixlib.sentinel_links(links)
summary_facts = [length("/clients", 17)]
client_ids = ["claude-code", "vscode", "dsh"] + [cl.id for cl in CLIENTS]
for n, cid in enumerate(client_ids):
    count = 3 * len(server_indexes(BY_ID[cid])) if cid in BY_ID else 0
    summary_facts += [eq("/clients/%d/client" % n, cid), eq("/clients/%d/serverCount" % n, count),
                      eq("/clients/%d/brokenSources" % n, 0)]
case("all-every-client-present", "all",
     "--client all on a tree with every new client's files: one document, client all, seventeen summaries in registry order",
     ALL, every, 0, [eq("/schemaVersion", 1), eq("/client", "all"), eq("/inventoryComplete", True),
                     eq("/sources/0/client", "claude-code"), eq("/servers/0/client", "codex")] + summary_facts,
     stderr_empty=True)
case("all-every-client-human", "all",
     "--client all human report: a section per client and one summary line per client",
     [ROOT, "--client", "all"], every, 0,
     stdout_contains=["all 17 clients' inventory", "== Codex (--client codex) ==", "== goose (--client goose) ==",
                      "== Crush (--client crush) ==",
                      "nothing configured: no fixed file exists", "Summary (one line per client", "  codex           12 servers · 0 sources broken",
                      "  claude-code     0 servers · 0 sources broken"],
     stdout_not_contains=HUMAN_NEVER, stderr_empty=True)
case("all-nothing-configured", "all", "--client all with nothing configured: complete, no servers",
     ALL, [d(ROOT)], 0, [eq("/client", "all"), eq("/inventoryComplete", True), length("/servers", 0), length("/clients", 17)],
     stderr_empty=True)
case("all-one-client-broken", "all",
     "--client all: one broken file makes the whole document incomplete (exit 1); its client's summary counts it",
     ALL, [d(ROOT), text(ROOT + "/.cursor/mcp.json", "{,}")], 1,
     [eq("/inventoryComplete", False), eq("/clients/4/client", "cursor"), eq("/clients/4/brokenSources", 1),
      eq("/clients/4/inventoryComplete", False), eq("/clients/0/inventoryComplete", True)],
     stderr_contains=["inventory incomplete: cursor project source malformed (syntax)"])
case("all-shared-mcp-json", "all",
     "<root>/.mcp.json is read once per profile that names it: Claude Code (project), VS Code (copilot-project) and DSH (cc-project)",
     ALL, [d(ROOT), text(ROOT + "/.mcp.json", js({"mcpServers": portable("shr")})), *matrixlib.sentinel_links([link("shr")])], 0,
     [eq("/clients/0/serverCount", 3), eq("/clients/1/serverCount", 3), eq("/clients/2/serverCount", 3),
      eq("/clients/3/serverCount", 0)], stderr_empty=True)

# ---- --fail-on, and clap's echo ----

one_server = [d(ROOT), text(ROOT + "/.cursor/mcp.json", js({"mcpServers": {"x": {"command": SENTINEL}}}))]
case("fail-on-any-server", "cursor", "--fail-on any-server: a declared server exits 3, the JSON says which condition held",
     args(BY_ID["cursor"]) + ["--fail-on", "any-server"], one_server, 3,
     [eq("/failOn/conditions", ["any-server"]), eq("/failOn/met", ["any-server"])],
     stderr_contains=["--fail-on met: any-server (1 server)"])
case("fail-on-project-server-user-only", "cursor", "--fail-on project-server: a server only in the home directory does not count",
     args(BY_ID["cursor"]) + ["--fail-on", "project-server"],
     [d(ROOT), text(HOME + "/.cursor/mcp.json", js({"mcpServers": {"x": {"command": SENTINEL}}}))], 0,
     [eq("/failOn/met", [])], stderr_empty=True)
case("fail-on-invalid-entry", "kiro", "--fail-on invalid-entry,project-server: an invalid declaration exits 3",
     args(BY_ID["kiro"]) + ["--fail-on", "invalid-entry,project-server"],
     [d(ROOT), text(ROOT + "/.kiro/settings/mcp.json", js({"mcpServers": {"bad": {"command": 7}}}))], 3,
     [eq("/failOn/conditions", ["invalid-entry", "project-server"]), eq("/failOn/met", ["invalid-entry", "project-server"])],
     stderr_contains=["invalid-entry (1 invalid entry)"])
case("fail-on-none-reports-only", "cursor", "--fail-on none: an incomplete inventory still exits 0 (report only)",
     args(BY_ID["cursor"]) + ["--fail-on", "none"], [d(ROOT), text(ROOT + "/.cursor/mcp.json", "{")], 0,
     [eq("/inventoryComplete", False), eq("/failOn/conditions", []), eq("/failOn/met", [])],
     stderr_contains=["inventory incomplete"])
case("fail-on-incomplete-outranks", "cursor", "incomplete and any-server both hold: exit 1 (a partial answer first)",
     args(BY_ID["cursor"]) + ["--fail-on", "any-server,incomplete"],
     one_server + [text(HOME + "/.cursor/mcp.json", "{")], 1, [eq("/failOn/met", ["incomplete", "any-server"])],
     stderr_contains=["inventory incomplete", "--fail-on met: any-server"])
case("fail-on-project-server-fails-closed", "cursor",
     "--fail-on project-server: a project file mcpscope cannot inventory (duplicate keys, which the client would load, last one winning) leaves the condition undecided: exit 1, never a pass",
     args(BY_ID["cursor"]) + ["--fail-on", "project-server"],
     [d(ROOT), text(ROOT + "/.cursor/mcp.json",
                    '{"mcpServers":{"x":{"command":"' + SENTINEL + '"}},"mcpServers":{"x":{"command":"' + SENTINEL + '"}}}')], 1,
     [eq("/failOn/met", []), eq("/failOn/undecided", ["project-server"])],
     stderr_contains=["--fail-on cannot rule out: project-server (1 source could not be inventoried)"])
case("fail-on-project-server-ancestor-level", "codex",
     "--fail-on project-server: a root below the repository's top still counts the servers Codex reads from the levels above it (up to the nearest .git): exit 3",
     args(BY_ID["codex"]) + ["--fail-on", "project-server"],
     [d(ROOT), d("/work/.git"), text("/work/.codex/config.toml", toml_doc(codex_servers("cxa")))], 3,
     [eq("/sources/2/scope", "ancestor"), eq("/sources/2/path", "/work/.codex/config.toml"),
      eq("/failOn/met", ["project-server"])],
     stderr_contains=["--fail-on met: project-server"])
case("codex-toml-past-node-bound", "codex",
     "a project config.toml whose tokens would build more than 131,072 nodes (a declared server, then 200,000 `[`) is too-large/too-many-nodes, never parsed (else it would be malformed/too-deep): nothing listed, exit 1, project-server undecided",
     args(BY_ID["codex"]) + ["--fail-on", "project-server"],
     [d(ROOT), {"kind": "file", "path": ROOT + "/.codex/config.toml",
                "fill": {"prefix": "[mcp_servers.cxn]\ncommand = \"" + SENTINEL + "\"\nz = ", "byte": ord("["), "size": 200_000}}], 1,
     [eq("/inventoryComplete", False), eq("/sources/1/scope", "project"), eq("/sources/1/state", "too-large"),
      eq("/sources/1/reason", "too-many-nodes"), absent("/sources/1/position"), length("/servers", 0),
      eq("/failOn/met", []), eq("/failOn/undecided", ["project-server"])],
     stderr_contains=["project source too-large (too-many-nodes)"])
DEEP_ROOT = "/work/" + "/".join("l%02d" % i for i in range(1, 65))
case("fail-on-project-server-past-64-levels", "codex",
     "a root 64 levels below the repository's top: Codex's walk has 65 project levels, mcpscope reads 64 (the root and 63 ancestors) and lists the top's as one source not read (too-large/too-many-entries) instead of its server: exit 1, project-server undecided, never a pass",
     [DEEP_ROOT, "--client", "codex", "--json", "--fail-on", "project-server"],
     [d(DEEP_ROOT), d("/work/.git"), text("/work/.codex/config.toml", toml_doc(codex_servers("cxt")))], 1,
     [eq("/inventoryComplete", False), length("/sources", 68), eq("/sources/1/scope", "project"),
      eq("/sources/64/scope", "ancestor"), eq("/sources/64/state", "missing"),
      eq("/sources/64/path", "/work/l01/.codex/config.toml"),
      eq("/sources/65/scope", "ancestor"), eq("/sources/65/state", "too-large"),
      eq("/sources/65/reason", "too-many-entries"), eq("/sources/65/path", "/work/.codex/config.toml"),
      length("/servers", 0), eq("/failOn/met", []), eq("/failOn/undecided", ["project-server"])],
     stderr_contains=["ancestor source too-large (too-many-entries)",
                      "--fail-on cannot rule out: project-server"])
case("fail-on-unknown-condition", "cursor", "an unknown --fail-on value is a usage error before anything is read",
     ["/work/missing", "--fail-on", "sometimes"], [d(ROOT)], 2, stdout_empty=True, stderr_contains=["invalid value 'sometimes'"])
case("client-value-escaped", "cursor", "clap's echo of a bad --client value is escaped for the terminal (no raw ESC)",
     [ROOT, "--client", "cur\u001b[2Jsor"], [d(ROOT)], 2, stdout_empty=True,
     stderr_contains=["invalid value 'cur\\u{1b}[2Jsor'"])

matrixlib.write("clients")
