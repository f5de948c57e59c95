//! The shipped matrix manifest, `harness/matrix/shipped.json`, compiled in: which matrix files
//! make up the shipped matrix (in order) and which client ids a case may name. It is the one
//! list of clients outside the inventory: the judge reads it here, the orchestrator reads its
//! matrix files from it, and an inventory test checks that the inventory's registry ids (and
//! `all`) are exactly its `clients`, so neither side can drift. It must never be edited to
//! disagree with the registry.

use serde::Deserialize;
use std::sync::OnceLock;

/// The manifest's bytes as committed.
pub const MANIFEST: &str = include_str!("../../harness/matrix/shipped.json");

/// Where the shipped matrix files live, relative to the workspace root.
pub const MATRIX_DIR: &str = "harness/matrix";

/// `harness/matrix/shipped.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    /// Matrix file names below [`MATRIX_DIR`], in the order they are joined.
    pub matrices: Vec<String>,
    /// Client ids a case may name: the inventory's profiles, then `all`.
    pub clients: Vec<String>,
}

/// The compiled-in manifest (validated by this crate's tests; a broken one is a build defect).
pub fn manifest() -> &'static Manifest {
    static M: OnceLock<Manifest> = OnceLock::new();
    M.get_or_init(|| serde_json::from_str(MANIFEST).expect("harness/matrix/shipped.json is valid"))
}

/// Client ids a case may name.
pub fn clients() -> &'static [String] {
    &manifest().clients
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_parses_and_lists_unique_kebab_ids_ending_with_all() {
        let m = manifest();
        assert_eq!(m.schema_version, 1);
        assert!(!m.matrices.is_empty());
        assert!(m
            .matrices
            .iter()
            .all(|f| f.ends_with(".json") && !f.contains('/')));
        let mut ids = m.clients.clone();
        assert_eq!(ids.last().map(String::as_str), Some("all"));
        assert!(ids
            .iter()
            .all(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), m.clients.len(), "duplicate client ids");
    }

    #[test]
    fn every_listed_matrix_file_exists() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(MATRIX_DIR);
        for f in &manifest().matrices {
            assert!(dir.join(f).is_file(), "{f} is listed but missing");
        }
    }
}
