//! The full fixture: all four Claude Code sources present, same-name
//! declarations across scopes, malformed entries, instructions at the root,
//! two ancestors, user and managed levels; canary strings in every field
//! that must never be printed, and a sentinel command that would leave a
//! marker if anything ever ran it.

use crate::util::Tree;

/// Every planted canary contains this; no output may.
pub const CANARY: &str = "CANARY";

/// Where the sentinel would leave its marker if executed.
pub const SENTINEL_MARKER: &str = "SENTINEL-RAN";

/// The sentinel command: a script that creates the marker. Its path
/// contains the canary too, so printing the command is caught as well.
pub fn plant_sentinel(t: &Tree) -> String {
    let script = t.path("bin/CANARY-sentinel");
    t.write(
        "bin/CANARY-sentinel",
        format!("#!/bin/sh\ntouch '{}'\n", t.path(SENTINEL_MARKER).display()),
    );
    t.chmod("bin/CANARY-sentinel", 0o755);
    script.to_str().unwrap().to_owned()
}

/// Build the full fixture; returns the sentinel command path.
pub fn full(t: &Tree) -> String {
    let sentinel = plant_sentinel(t);
    let root = t.root();
    let root = root.to_str().unwrap();
    t.write(
        "home/.claude.json",
        format!(
            r#"{{
  "numStartups": 123456789012345678901234567890,
  "theme": "CANARY-root-field",
  "projects": {{
    "{root}": {{
      "allowedTools": ["CANARY-tool"],
      "mcpServers": {{
        "shared": {{"command": "{sentinel}", "args": ["CANARY-arg-local"], "env": {{"CANARY_ENV_NAME": "CANARY-env-value"}}}},
        "local-http": {{"type": "http", "url": "https://CANARY-url.example/mcp", "headers": {{"CANARY-Header": "CANARY-header-value"}}, "headersHelper": "CANARY-helper --print"}}
      }}
    }},
    "/elsewhere/CANARY-other-project": {{"mcpServers": {{"CANARY-other-server": {{"command": "x"}}}}}}
  }},
  "mcpServers": {{
    "shared": {{"command": "npx", "args": ["-y", "CANARY-pkg@1"], "env": {{"CANARY_TOKEN": "CANARY-secret"}}}},
    "user-docker": {{"command": "docker", "args": ["run", "-i", "--rm", "CANARY-image"]}},
    "user-ws": {{"type": "ws", "url": "wss://CANARY-ws.example"}}
  }}
}}
"#
        ),
    );
    t.write(
        &format!("{}/.mcp.json", crate::util::ROOT),
        format!(
            r#"{{
  "mcpServers": {{
    "shared": {{"command": "mcpm", "args": ["guard", "--", "{sentinel}", "CANARY-guarded-arg"]}},
    "project-script": {{"command": "node", "args": ["CANARY-script.js"], "env": {{"CANARY_A": "1", "CANARY_B": "2"}}}},
    "project-sse": {{"type": "sse", "url": "https://CANARY-sse.example/sse"}},
    "broken-string": "{sentinel} CANARY-inline-command",
    "broken-env": {{"command": "{sentinel}", "env": {{"CANARY_NUM": 1}}}},
    "broken-type": {{"type": "CANARY-type", "command": "{sentinel}"}}
  }},
  "CANARY-extra-root-field": true
}}
"#
        ),
    );
    t.write(
        "managed/managed-mcp.json",
        format!(
            r#"{{"mcpServers": {{
  "corp-gateway": {{"type": "sse", "url": "https://CANARY-managed.example"}},
  "shared": {{"command": "{sentinel}", "args": ["CANARY-managed-arg"]}}
}}}}
"#
        ),
    );
    // Instructions at every level; bodies carry canaries and are never read.
    for name in [
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        "AGENTS.md",
        ".claude/AGENTS.md",
    ] {
        t.write(
            &format!("{}/{name}", crate::util::ROOT),
            "CANARY instruction body\n",
        );
    }
    t.write("work/team/AGENTS.md", "CANARY team agents\n");
    t.write("work/CLAUDE.md", "CANARY work claude\n");
    t.write("CLAUDE.local.md", "CANARY tmp-level local\n");
    t.write("home/.claude/CLAUDE.md", "CANARY user instructions\n");
    t.write("managed/CLAUDE.md", "CANARY managed instructions\n");
    sentinel
}
