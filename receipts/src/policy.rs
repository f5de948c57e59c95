//! The boundary policy (`images/boundary-policy.json`): what every evidence container must be
//! confined by. The orchestrator turns it into a container create request; the verifier checks
//! it against the raw `docker inspect` document and against the runner's inner observations.
//! Checks live here so both sides judge with one set of rules.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BoundaryPolicy {
    /// Always 1.
    pub schema_version: u32,
    /// "none".
    pub network_mode: String,
    pub read_only_root: bool,
    /// "1000:1000".
    pub user: String,
    /// ["ALL"].
    pub cap_drop: Vec<String>,
    /// "no-new-privileges" must be among the security options.
    pub no_new_privileges: bool,
    pub init: bool,
    pub pids_limit: i64,
    pub memory_bytes: i64,
    /// Memory + swap; equal to `memory_bytes` (no swap).
    pub memory_swap_bytes: i64,
    pub nano_cpus: i64,
    /// Mount point → tmpfs options, e.g. "rw,noexec,nosuid,size=64m,uid=1000,gid=1000".
    pub tmpfs: BTreeMap<String, String>,
    /// Mount point of the one named volume.
    pub evidence_volume: String,
}
