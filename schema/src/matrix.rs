//! The fixture matrix: data that says, per case, which fixture tree to lay out, how to invoke
//! the candidate, and what must hold afterwards. The runner executes it inside the container;
//! the verifier re-judges every case from the raw captures with the same rules (`judge`).
//! This module only describes and judges; it never touches the filesystem or runs anything.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole matrix file (`harness/matrix/*.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Matrix {
    /// Always 1.
    pub schema_version: u32,
    pub name: String,
    /// Strings planted in sensitive fields (commands, args, env/header names and values, URLs,
    /// instruction bodies). None may appear in any case's stdout or stderr.
    pub canaries: Vec<String>,
    pub cases: Vec<Case>,
}

impl Matrix {
    /// A matrix parsed from JSON. Not generic on purpose: serde's code for a matrix is built
    /// here, at the schema's opt-level, instead of in each caller — the orchestrator and the
    /// verifier build at opt-level 0 (the workspace's `Cargo.toml`), and the 1.3 MB shipped
    /// matrix took them ~25 ms longer to parse with serde's code built there.
    pub fn from_json(bytes: &[u8]) -> serde_json::Result<Matrix> {
        serde_json::from_slice(bytes)
    }

    /// `from_json` after `strict_json::check` (no duplicate key, bounded nesting).
    pub fn from_strict_json(bytes: &[u8]) -> Result<Matrix, crate::strict_json::StrictJsonError> {
        crate::strict_json::from_slice(bytes)
    }

    /// The matrix as pretty JSON, with a final newline (built here, as `from_json`).
    pub fn to_pretty_json(&self) -> Vec<u8> {
        let mut bytes =
            serde_json::to_vec_pretty(self).expect("a matrix always serializes to JSON");
        bytes.push(b'\n');
        bytes
    }
}

/// One invocation of the candidate over one fixture tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    /// Unique, `[a-z0-9-]+`; also the case's directory name under `/evidence/cases/`.
    pub id: String,
    /// `claude-code`, `vscode` or `dsh`: the profile the case exercises (informative; `args` carry the flag).
    pub client: String,
    pub description: String,
    /// argv after the program name, e.g. `["/work/proj", "--json"]`.
    pub args: Vec<String>,
    /// Working directory; default `/work`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment over the base (`HOME=/home/node`, `PATH=/scopebox/bin`, `LANG=C.UTF-8`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Laid out in order, below the fixture roots only.
    #[serde(default)]
    pub fixture: Vec<FixtureEntry>,
    pub expect: Expectations,
    /// A deliberate fault the runner injects (see `Fault`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// Per-case deadline for the candidate process; default `DEFAULT_CASE_DEADLINE_MS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

pub const DEFAULT_CASE_DEADLINE_MS: u64 = 10_000;

/// Faults a case may declare, to test the harness itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The runner stops making progress at this case (it blocks forever), so only the outer
    /// deadline can end the run. Used by `harness/matrix/faults/stall.json`.
    Stall,
}

/// One node of a fixture tree. Paths are absolute and below one of `layout::FIXTURE_ROOTS`.
/// Parent directories are created (mode 0755) as needed. Modes are octal strings ("0644").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum FixtureEntry {
    File {
        path: String,
        #[serde(flatten)]
        content: FileContent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
    },
    Dir {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
    },
    Symlink {
        path: String,
        target: String,
    },
    Fifo {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
    },
}

/// A file's bytes: exactly one of the forms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum FileContent {
    /// UTF-8 text, written as is.
    Text(String),
    /// Arbitrary bytes (invalid UTF-8, BOMs, NULs), standard base64.
    Base64(String),
    /// `prefix`, then `byte` repeated until the file is `size` bytes long (oversized files).
    Fill { prefix: String, byte: u8, size: u64 },
}

/// What must hold after the case ran, besides the invariants every case has (`Invariant`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expectations {
    pub exit_code: i32,
    /// stdout must parse as one JSON document and meet every fact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<JsonFact>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdout_contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stdout_not_contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_empty: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_empty: Option<bool>,
}

/// A fact about the JSON on stdout at an RFC 6901 pointer. Exactly one check is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JsonFact {
    pub pointer: String,
    /// `"equals": null` means "the value is JSON null" (not "no check"), so a present key
    /// always deserializes to `Some`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub equals: Option<serde_json::Value>,
    /// The value is an array (or object) of this many elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<usize>,
    /// `true`: nothing at the pointer; `false`: something at the pointer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<bool>,
}

/// A key that is present yields `Some`, even when its value is `null` (absent keys get the
/// field's `default`, `None`).
fn present_value<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped matrix's parts read back exactly as serde_json reads them; the pretty form
    /// is serde_json's with a final newline and parses back to the same matrix; a duplicate key
    /// is refused by the strict parse only.
    #[test]
    fn a_matrix_reads_and_writes_as_serde_json_does() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../harness/matrix");
        for name in ["claude-code.json", "vscode.json"] {
            let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
            let matrix = Matrix::from_json(&bytes).unwrap();
            assert_eq!(
                matrix,
                serde_json::from_slice::<Matrix>(&bytes).unwrap(),
                "{name}"
            );
            assert_eq!(Matrix::from_strict_json(&bytes).unwrap(), matrix, "{name}");
            let pretty = matrix.to_pretty_json();
            let mut want = serde_json::to_vec_pretty(&matrix).unwrap();
            want.push(b'\n');
            assert_eq!(pretty, want, "{name}");
            assert_eq!(Matrix::from_json(&pretty).unwrap(), matrix, "{name}");
        }
        let twice = br#"{"schemaVersion":1,"name":"a","name":"b","canaries":[],"cases":[]}"#;
        assert!(Matrix::from_strict_json(twice).is_err());
        assert!(Matrix::from_json(b"{}").is_err(), "fields are required");
    }

    #[test]
    fn fixture_entries_parse_in_each_form() {
        let entries: Vec<FixtureEntry> = serde_json::from_str(
            r#"[{"kind":"file","path":"/work/p/.mcp.json","text":"{}","mode":"0644"},
                {"kind":"file","path":"/work/p/b","base64":"AAE="},
                {"kind":"file","path":"/work/p/c","fill":{"prefix":"{","byte":32,"size":10}},
                {"kind":"dir","path":"/work/d"},
                {"kind":"symlink","path":"/work/l","target":"/work/d"},
                {"kind":"fifo","path":"/work/f"}]"#,
        )
        .unwrap();
        assert_eq!(entries.len(), 6);
        assert!(
            matches!(&entries[1], FixtureEntry::File { content: FileContent::Base64(b), .. } if b == "AAE=")
        );
        let bad: Result<FixtureEntry, _> =
            serde_json::from_str(r#"{"kind":"dir","path":"/work/d","colour":"red"}"#);
        assert!(bad.is_err(), "unknown fields must be refused");
    }

    #[test]
    fn equals_null_is_a_check_for_null_not_no_check() {
        let f: JsonFact = serde_json::from_str(r#"{"pointer":"/a","equals":null}"#).unwrap();
        assert_eq!(f.equals, Some(serde_json::Value::Null));
        let g: JsonFact = serde_json::from_str(r#"{"pointer":"/a","absent":true}"#).unwrap();
        assert_eq!(g.equals, None);
        let back: JsonFact = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
}
