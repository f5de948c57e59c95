//! Where the servers of one parsed VS Code / Copilot file live: the wrapped
//! container (`servers` or `mcpServers`), the legacy bare map of
//! `<root>/.mcp.json`, or neither (a mixed file), plus whether root fields
//! were left uninterpreted. The rules are in `inventory/VSCODE.md`.
//!
//! This module only looks at root keys and container types. It must never
//! guess a bare map from an invalid wrapper, never merge two containers, and
//! never put a root field's name or value into the result (a boolean says
//! whether there were any).

use crate::json::{Object, Value};
use crate::model::{Reason, RootFields, Unavailable};

/// The VS Code container key.
pub const SERVERS: &str = "servers";
/// The portable container key.
pub const MCP_SERVERS: &str = "mcpServers";

/// `format` ids (see VSCODE.md).
pub const FORMAT_VSCODE: &str = "vscode-servers";
pub const FORMAT_PORTABLE: &str = "portable-mcpServers";
pub const FORMAT_BARE: &str = "bare-map";
/// `<root>/.mcp.json` before (or without) a parsed root object.
pub const FORMAT_UNDETERMINED: &str = "unknown";

/// `container` spellings.
pub const CONTAINER_TOP_LEVEL: &str = "(top level)";
pub const CONTAINER_UNDETERMINED: &str = "mcpServers | (top level)";

/// What a file's root object holds, as far as its origin reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A VS Code `mcp.json`: servers under `servers`.
    VsCode,
    /// `~/.copilot/mcp-config.json`: servers under `mcpServers`.
    Portable,
    /// `<root>/.mcp.json`: `mcpServers`, or a legacy bare server map.
    PortableOrBare,
}

/// The interpretation of one root object.
#[derive(Debug)]
pub struct Interpretation<'o, 'a> {
    pub format: &'static str,
    pub container: &'static str,
    pub root_fields: RootFields,
    /// The server entries: `Ok(None)` when the container is absent.
    pub entries: Result<Option<&'o Object<'a>>, Unavailable>,
}

/// Interpret a parsed root object.
///
/// - A root that names both `servers` and `mcpServers` is `mixed-container`
///   in every layout: two hosts would read two different server sets.
/// - In `.mcp.json`, an own `mcpServers` key always selects the wrapped
///   interpretation; when `mcpServers` is not an object the file is
///   `wrong-container-type`, never re-read as a bare map; when another root
///   key also holds an object (a possible bare-map declaration next to the
///   wrapper) the file is `mixed-container`.
/// - Without `mcpServers`, every key of `.mcp.json` is a server name,
///   considered on its own (a malformed value under `servers` is one
///   malformed server, not a broken file).
pub fn interpret<'o, 'a>(top: &'o Object<'a>, layout: Layout) -> Interpretation<'o, 'a> {
    let has_servers = top.get(SERVERS).is_some();
    let has_mcp = top.get(MCP_SERVERS).is_some();
    let (format, key) = match layout {
        Layout::VsCode => (FORMAT_VSCODE, SERVERS),
        Layout::Portable => (FORMAT_PORTABLE, MCP_SERVERS),
        Layout::PortableOrBare if has_mcp => (FORMAT_PORTABLE, MCP_SERVERS),
        Layout::PortableOrBare => {
            return Interpretation {
                format: FORMAT_BARE,
                container: CONTAINER_TOP_LEVEL,
                root_fields: RootFields::Known(false),
                entries: Ok(Some(top)),
            };
        }
    };
    let others = || top.iter().filter(move |(k, _)| *k != key);
    let mixed = (has_servers && has_mcp)
        || (layout == Layout::PortableOrBare
            && others().any(|(_, v)| matches!(v, Value::Object(_))));
    let root_fields = RootFields::Known(others().next().is_some());
    let entries = if mixed {
        Err(Unavailable::malformed(Reason::MixedContainer))
    } else {
        crate::profile::member_object(top, key)
    };
    Interpretation {
        format,
        container: key,
        root_fields,
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, Options};

    /// (format, container, root fields, entries: Ok(count) or Err(reason)).
    fn run(
        text: &str,
        layout: Layout,
    ) -> (
        &'static str,
        &'static str,
        RootFields,
        Result<usize, Reason>,
    ) {
        let v = parse(text.as_bytes(), &Options::JSONC).unwrap();
        let top = v.as_object().unwrap();
        let i = interpret(top, layout);
        let entries = match i.entries {
            Ok(Some(o)) => Ok(o.len()),
            Ok(None) => Ok(0),
            Err(u) => Err(u.reason.unwrap()),
        };
        (i.format, i.container, i.root_fields, entries)
    }

    const NO: RootFields = RootFields::Known(false);
    const YES: RootFields = RootFields::Known(true);

    #[test]
    fn vscode_files_read_servers_and_flag_other_root_fields() {
        let l = Layout::VsCode;
        assert_eq!(
            run(r#"{"servers":{"a":{},"b":1}}"#, l),
            (FORMAT_VSCODE, SERVERS, NO, Ok(2))
        );
        assert_eq!(
            run(r#"{"servers":{},"inputs":[]}"#, l),
            (FORMAT_VSCODE, SERVERS, YES, Ok(0))
        );
        assert_eq!(run(r#"{}"#, l), (FORMAT_VSCODE, SERVERS, NO, Ok(0)));
        // A portable container alone is not read as VS Code servers.
        assert_eq!(
            run(r#"{"mcpServers":{"a":{}}}"#, l),
            (FORMAT_VSCODE, SERVERS, YES, Ok(0))
        );
        assert_eq!(
            run(r#"{"servers":[]}"#, l),
            (FORMAT_VSCODE, SERVERS, NO, Err(Reason::WrongContainerType))
        );
        assert_eq!(
            run(r#"{"servers":{},"mcpServers":{}}"#, l),
            (FORMAT_VSCODE, SERVERS, YES, Err(Reason::MixedContainer))
        );
    }

    #[test]
    fn the_user_portable_file_reads_mcp_servers() {
        let l = Layout::Portable;
        assert_eq!(
            run(r#"{"mcpServers":{"a":{}}}"#, l),
            (FORMAT_PORTABLE, MCP_SERVERS, NO, Ok(1))
        );
        assert_eq!(
            run(r#"{"servers":{"a":{}}}"#, l),
            (FORMAT_PORTABLE, MCP_SERVERS, YES, Ok(0))
        );
        // Other objects beside the wrapper are only uninterpreted here.
        assert_eq!(
            run(r#"{"mcpServers":{},"x":{"command":"c"}}"#, l),
            (FORMAT_PORTABLE, MCP_SERVERS, YES, Ok(0))
        );
        assert_eq!(
            run(r#"{"mcpServers":{},"servers":{}}"#, l).3,
            Err(Reason::MixedContainer)
        );
    }

    #[test]
    fn an_own_mcp_servers_key_always_selects_the_wrapper() {
        let l = Layout::PortableOrBare;
        assert_eq!(
            run(r#"{"mcpServers":{"a":{}}}"#, l),
            (FORMAT_PORTABLE, MCP_SERVERS, NO, Ok(1))
        );
        assert_eq!(
            run(r#"{"mcpServers":{"a":{}},"$schema":"s","v":1,"l":[{}]}"#, l),
            (FORMAT_PORTABLE, MCP_SERVERS, YES, Ok(1))
        );
        // An invalid wrapper is never guessed to be a bare map.
        for bad in ["[]", "null", "1", "\"x\""] {
            assert_eq!(
                run(
                    &format!(r#"{{"mcpServers":{bad},"a":{{"command":"x"}}}}"#),
                    l
                )
                .3,
                Err(Reason::MixedContainer),
                "{bad} beside a server-looking object"
            );
            assert_eq!(
                run(&format!(r#"{{"mcpServers":{bad}}}"#), l),
                (
                    FORMAT_PORTABLE,
                    MCP_SERVERS,
                    NO,
                    Err(Reason::WrongContainerType)
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_wrapper_beside_other_objects_is_mixed() {
        let l = Layout::PortableOrBare;
        for text in [
            r#"{"mcpServers":{"a":{}},"b":{"command":"x"}}"#,
            r#"{"mcpServers":{},"servers":{"a":{}}}"#,
            r#"{"mcpServers":{},"servers":1}"#,
            r#"{"mcpServers":{},"settings":{}}"#,
        ] {
            assert_eq!(
                run(text, l),
                (
                    FORMAT_PORTABLE,
                    MCP_SERVERS,
                    YES,
                    Err(Reason::MixedContainer)
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn without_mcp_servers_every_key_is_a_server() {
        let l = Layout::PortableOrBare;
        assert_eq!(
            run(r#"{"a":{"command":"x"},"servers":1,"__proto__":{}}"#, l),
            (FORMAT_BARE, CONTAINER_TOP_LEVEL, NO, Ok(3))
        );
        assert_eq!(
            run(r#"{"servers":{"a":{}}}"#, l),
            (FORMAT_BARE, CONTAINER_TOP_LEVEL, NO, Ok(1))
        );
        assert_eq!(
            run(r#"{}"#, l),
            (FORMAT_BARE, CONTAINER_TOP_LEVEL, NO, Ok(0))
        );
    }
}
