//! File integrity: every file listed in `receipt.json` exists with its recorded sha256, no
//! unlisted file is present, nothing in the bundle is a symlink or special file, and every
//! file is one the bundle layout (schema 2) allows: the shared inputs, the blobs, and per
//! platform that ran its inputs, outer records and evidence tree. It never interprets file
//! contents.

use super::{Checks, Context};
use crate::digest::is_sha256_hex;
use crate::evidence::{
    ADVERSARIAL_CONTROLS, BOUNDARY_FILE, CASES_DIR, CONTROLS_DIR, CONTROLS_FILE, ERROR_FILE,
    NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_STDERR_FILE, NEGATIVE_CONTROL_STDOUT_FILE,
    NEGATIVE_CONTROL_WITNESS_FILE, POSITIVE_CONTROL_RECORD_FILE, POSITIVE_CONTROL_WITNESS_FILE,
    RECORD_FILE, STDERR_FILE, STDOUT_FILE, SUMMARY_FILE,
};
use scopebox_schema::witness::WITNESS_FILE;

use crate::receipt::{
    BLOBS_DIR, CONTAINER_INSPECT_FILE, ENVELOPE_FILE, EVIDENCE_DIR, EXECUTION_FILE,
    IMAGE_CONFIG_FILE, IMAGE_INSPECT_FILE, LAYER_MANIFEST_FILE, MATRIX_FILE, PACK_MANIFEST_FILE,
    POLICY_FILE, RECEIPT_FILE, RECIPE_FILE,
};
use scopebox_schema::native_capture::{
    CLIENT_RECORD_FILE, CLIENT_STDERR_FILE, CLIENT_STDOUT_FILE, CLIENT_WITNESS_FILE, HTTP_LOG_FILE,
    INDEX_FILE, NATIVE_DIR, SENTINEL_FILE,
};
use scopebox_schema::native_observe::run_dir;
use scopebox_schema::native_receipt::{
    NATIVE_EVIDENCE_DIR, NATIVE_LOCK_FILE, NATIVE_MATRIX_FILE, NATIVE_SECTION_FILE,
};
use std::collections::BTreeSet;

/// The fixed files every bundle holds at its top.
pub(crate) const FIXED_FILES: [&str; 3] = [MATRIX_FILE, POLICY_FILE, RECIPE_FILE];

/// Files a bundle may hold at its root besides the fixed ones (bundles written before them
/// lack them): the JUnit report.
pub(crate) const OPTIONAL_FILES: [&str; 1] = [crate::receipt::JUNIT_FILE];

/// The fixed files every platform directory holds besides its evidence tree.
pub(crate) const PLATFORM_FILES: [&str; 6] = [
    PACK_MANIFEST_FILE,
    IMAGE_CONFIG_FILE,
    LAYER_MANIFEST_FILE,
    CONTAINER_INSPECT_FILE,
    IMAGE_INSPECT_FILE,
    EXECUTION_FILE,
];

/// The fixed files the evidence tree may hold besides the cases, relative to `evidence/`. None
/// is required here: a run that stopped early lacks some, and the families that read them
/// (boundary, controls, cases, execution) name what is missing.
pub(crate) const EVIDENCE_FILES: [&str; 10] = [
    BOUNDARY_FILE,
    CONTROLS_FILE,
    POSITIVE_CONTROL_RECORD_FILE,
    NEGATIVE_CONTROL_RECORD_FILE,
    NEGATIVE_CONTROL_STDOUT_FILE,
    NEGATIVE_CONTROL_STDERR_FILE,
    POSITIVE_CONTROL_WITNESS_FILE,
    NEGATIVE_CONTROL_WITNESS_FILE,
    SUMMARY_FILE,
    ERROR_FILE,
];

/// The files of one run (a case, an adversarial control): its output, record, witness record.
const RUN_FILES: [&str; 4] = [STDOUT_FILE, STDERR_FILE, RECORD_FILE, WITNESS_FILE];

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let bundle = ctx.bundle;
    let receipt = ctx.receipt;

    let irregular: Vec<String> = bundle
        .irregular
        .iter()
        .map(|(path, kind)| format!("{path} is a {kind}"))
        .collect();
    checks.record(
        "files.kinds",
        "only directories and regular files, no symlinks or special files",
        irregular,
    );

    let mut listed = Vec::new();
    for (path, digest) in &receipt.files {
        if !is_safe_relative(path)
            || path == RECEIPT_FILE
            || path == ENVELOPE_FILE
            || path == crate::receipt::PROVENANCE_ENVELOPE_FILE
        {
            listed.push(format!("{path:?} is not a bundle file path"));
            continue;
        }
        if !is_sha256_hex(digest) {
            listed.push(format!(
                "{path}: recorded digest {digest:?} is not a sha256"
            ));
            continue;
        }
        match ctx.digest(path) {
            None => listed.push(format!("{path} is listed but absent")),
            Some(actual) if actual != digest => {
                listed.push(format!("{path}: sha256 {actual}, receipt says {digest}"))
            }
            Some(_) => {}
        }
    }
    checks.record(
        "files.digests",
        "every listed file is present with its recorded sha256",
        listed,
    );

    let mut unlisted: Vec<String> = bundle
        .files
        .keys()
        .filter(|path| !receipt.files.contains_key(*path))
        .map(|path| format!("{path} is present but not listed"))
        .collect();
    unlisted.extend(
        bundle
            .irregular
            .keys()
            .filter(|path| !receipt.files.contains_key(*path))
            .map(|path| format!("{path} is present but not listed")),
    );
    checks.record(
        "files.unlisted",
        "no file is present that receipt.json does not list",
        unlisted,
    );

    let mut layout = Vec::new();
    // Every container's directory with the cases it ran: the platform's own (shard 0, with the
    // platform's inputs) and each further shard's (`shards/<i>`: outer records and evidence).
    let mut platforms: Vec<(String, BTreeSet<&str>, bool)> = Vec::new();
    for run in &receipt.platforms {
        let count = run.shard_count();
        for index in 0..count {
            let ids = run
                .cases
                .iter()
                .enumerate()
                .filter(|(position, _)| position % count == index)
                .map(|(_, c)| c.id.as_str())
                .collect();
            platforms.push((run.shard_dir(index), ids, index == 0));
        }
    }
    let native = NativeLayout::of(ctx);
    for path in bundle.files.keys().chain(receipt.files.keys()) {
        if !allowed_in_bundle(path, &platforms) && !native.allows(path) {
            layout.push(format!("{path} is not part of the bundle layout"));
        }
    }
    let native_only = ctx.native.is_some() && receipt.platforms.is_empty();
    for fixed in FIXED_FILES {
        if native_only && fixed == MATRIX_FILE {
            continue;
        }
        if !bundle.files.contains_key(fixed) {
            layout.push(format!("{fixed} is missing"));
        }
    }
    for (dir, _, inputs) in &platforms {
        for fixed in PLATFORM_FILES {
            if !inputs && !fixed.starts_with("outer/") {
                continue;
            }
            let path = format!("{dir}/{fixed}");
            if !bundle.files.contains_key(&path) {
                layout.push(format!("{path} is missing"));
            }
        }
    }
    layout.sort();
    layout.dedup();
    checks.record(
        "files.layout",
        "the bundle holds exactly the files of the receipt-v2 layout",
        layout,
    );
}

/// The native part of the layout (`native_receipt`): the section, its two inputs, and below
/// each native platform directory the evidence tree of `native_capture`, run directories named
/// by the native matrix (by shape when it does not parse).
struct NativeLayout {
    present: bool,
    dirs: Vec<String>,
    /// The directories of every container but the first of a sharded native run
    /// (`<dir>/shards/<i>`): its container's records and boundary observation only.
    shard_dirs: Vec<String>,
    runs: Option<BTreeSet<String>>,
}

/// The files of a further container of a sharded native run, below its `shards/<i>/`.
const NATIVE_SHARD_FILES: [&str; 4] = [
    CONTAINER_INSPECT_FILE,
    IMAGE_INSPECT_FILE,
    EXECUTION_FILE,
    NATIVE_SHARD_BOUNDARY_FILE,
];

/// A further native container's boundary observation, below its `shards/<i>/`.
const NATIVE_SHARD_BOUNDARY_FILE: &str = "evidence/boundary.json";

/// The files of a native platform directory besides its evidence tree.
const NATIVE_PLATFORM_FILES: [&str; 5] = [
    IMAGE_CONFIG_FILE,
    LAYER_MANIFEST_FILE,
    CONTAINER_INSPECT_FILE,
    IMAGE_INSPECT_FILE,
    EXECUTION_FILE,
];

/// The files of one native run, relative to `native/<scenario>/<mode>/`.
const NATIVE_RUN_FILES: [&str; 10] = [
    CLIENT_RECORD_FILE,
    CLIENT_STDOUT_FILE,
    CLIENT_STDERR_FILE,
    CLIENT_WITNESS_FILE,
    SENTINEL_FILE,
    HTTP_LOG_FILE,
    "inventory/record.json",
    "inventory/stdout",
    "inventory/stderr",
    "inventory/witness.json",
];

impl NativeLayout {
    fn of(ctx: &Context) -> NativeLayout {
        let Some(native) = &ctx.native else {
            return NativeLayout {
                present: false,
                dirs: Vec::new(),
                shard_dirs: Vec::new(),
                runs: None,
            };
        };
        let platforms = native
            .section
            .as_ref()
            .map(|s| s.platforms.as_slice())
            .unwrap_or_default();
        NativeLayout {
            present: true,
            dirs: platforms.iter().map(|p| p.dir.clone()).collect(),
            shard_dirs: platforms
                .iter()
                .flat_map(|p| {
                    (1..p
                        .containers
                        .min(crate::verify::native::MAX_NATIVE_CONTAINERS))
                        .map(|i| p.shard_dir(i))
                })
                .collect(),
            runs: native.matrix.as_ref().ok().map(|m| {
                m.scenarios
                    .iter()
                    .flat_map(|s| s.runs.iter().map(move |r| run_dir(s, r)))
                    .collect()
            }),
        }
    }

    fn allows(&self, path: &str) -> bool {
        if !self.present {
            return false;
        }
        if [NATIVE_SECTION_FILE, NATIVE_MATRIX_FILE, NATIVE_LOCK_FILE].contains(&path) {
            return true;
        }
        if self.shard_dirs.iter().any(|d| {
            path.strip_prefix(d.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|r| NATIVE_SHARD_FILES.contains(&r))
        }) {
            return true;
        }
        let Some(in_dir) = self.dirs.iter().find_map(|d| {
            path.strip_prefix(d.as_str())
                .and_then(|r| r.strip_prefix('/'))
        }) else {
            return false;
        };
        // The native container's own records, as for a candidate platform (no pack manifest).
        if NATIVE_PLATFORM_FILES.contains(&in_dir) {
            return true;
        }
        let Some(rest) = in_dir
            .strip_prefix(NATIVE_EVIDENCE_DIR)
            .and_then(|r| r.strip_prefix('/'))
        else {
            return false;
        };
        if rest == INDEX_FILE || rest == BOUNDARY_FILE {
            return true;
        }
        let Some(run_rest) = rest
            .strip_prefix(NATIVE_DIR)
            .and_then(|r| r.strip_prefix('/'))
        else {
            return false;
        };
        let mut parts = run_rest.splitn(3, '/');
        let (Some(scenario), Some(mode), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let run = format!("{scenario}/{mode}");
        let known = match &self.runs {
            Some(runs) => runs.contains(&run),
            None => {
                !scenario.is_empty()
                    && scenario
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && ["list", "get", "headless"].contains(&mode)
            }
        };
        known && NATIVE_RUN_FILES.contains(&file)
    }
}

/// Relative, '/'-separated, no empty, `.` or `..` component.
fn is_safe_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// A path the v2 layout allows in a bundle of these containers (directory, case ids, whether
/// the directory also holds the platform's inputs).
fn allowed_in_bundle(path: &str, platforms: &[(String, BTreeSet<&str>, bool)]) -> bool {
    if FIXED_FILES.contains(&path) || OPTIONAL_FILES.contains(&path) {
        return true;
    }
    if let Some(name) = path
        .strip_prefix(BLOBS_DIR)
        .and_then(|r| r.strip_prefix('/'))
    {
        return is_sha256_hex(name);
    }
    platforms.iter().any(|(dir, case_ids, inputs)| {
        path.strip_prefix(dir.as_str())
            .and_then(|r| r.strip_prefix('/'))
            .is_some_and(|rest| {
                (*inputs || !rest.starts_with("inputs/")) && allowed_path(rest, case_ids)
            })
    })
}

/// A platform-relative path the layout allows, given the platform's case ids.
fn allowed_path(path: &str, case_ids: &BTreeSet<&str>) -> bool {
    if PLATFORM_FILES.contains(&path) {
        return true;
    }
    let Some(rest) = path
        .strip_prefix(EVIDENCE_DIR)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    if EVIDENCE_FILES.contains(&rest) {
        return true;
    }
    // Each hostile stand-in: its record, output and witness record, like a case.
    if let Some((name, file)) = rest
        .strip_prefix(CONTROLS_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.split_once('/'))
    {
        return ADVERSARIAL_CONTROLS.contains(&name) && RUN_FILES.contains(&file);
    }
    let Some(case_part) = rest
        .strip_prefix(CASES_DIR)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    match case_part.split_once('/') {
        Some((id, file)) => case_ids.contains(id) && RUN_FILES.contains(&file),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in ["", "/etc/passwd", "a/../b", "./a", "a//b", "a\\b"] {
            assert!(!is_safe_relative(bad), "{bad:?}");
        }
        assert!(is_safe_relative("evidence/cases/a/stdout"));
    }

    #[test]
    fn layout_allows_only_known_paths() {
        let ids: BTreeSet<&str> = ["one"].into();
        assert!(allowed_path("evidence/cases/one/stdout", &ids));
        assert!(allowed_path("evidence/cases/one/witness.json", &ids));
        assert!(allowed_path(
            "evidence/controls/memfd-exec/witness.json",
            &ids
        ));
        assert!(allowed_path(
            "evidence/controls/positive/witness.json",
            &ids
        ));
        assert!(!allowed_path("evidence/controls/other/witness.json", &ids));
        assert!(!allowed_path("evidence/controls/memfd-exec/extra", &ids));
        assert!(allowed_path("outer/execution.json", &ids));
        let platforms = [
            ("platforms/linux-arm64".to_string(), ids.clone(), true),
            (
                "platforms/linux-arm64/shards/1".to_string(),
                ["two"].into_iter().collect(),
                false,
            ),
        ];
        assert!(allowed_in_bundle(
            "platforms/linux-arm64/evidence/cases/one/stdout",
            &platforms
        ));
        // A shard's directory: its own cases and outer records, never inputs or another's case.
        assert!(allowed_in_bundle(
            "platforms/linux-arm64/shards/1/evidence/cases/two/stdout",
            &platforms
        ));
        assert!(allowed_in_bundle(
            "platforms/linux-arm64/shards/1/outer/execution.json",
            &platforms
        ));
        assert!(!allowed_in_bundle(
            "platforms/linux-arm64/shards/1/evidence/cases/one/stdout",
            &platforms
        ));
        assert!(!allowed_in_bundle(
            "platforms/linux-arm64/evidence/cases/two/stdout",
            &platforms
        ));
        assert!(!allowed_in_bundle(
            "platforms/linux-arm64/shards/1/inputs/image-config.json",
            &platforms
        ));
        assert!(!allowed_in_bundle(
            "platforms/linux-arm64/shards/2/outer/execution.json",
            &platforms
        ));
        assert!(!allowed_in_bundle(
            "platforms/linux-amd64/evidence/cases/one/stdout",
            &platforms
        ));
        assert!(allowed_in_bundle(
            &format!("inputs/blobs/{}", "a".repeat(64)),
            &platforms
        ));
        assert!(!allowed_in_bundle("inputs/blobs/abc", &platforms));
        assert!(allowed_in_bundle("inputs/image-recipe.json", &platforms));
        assert!(allowed_in_bundle("junit.xml", &platforms));
        assert!(!allowed_in_bundle("inputs/junit.xml", &platforms));
        assert!(!allowed_path("evidence/cases/two/stdout", &ids));
        assert!(!allowed_path("evidence/cases/one/extra", &ids));
        assert!(allowed_path("evidence/error.json", &ids));
        assert!(allowed_path("evidence/controls/negative/record.json", &ids));
        assert!(allowed_path("evidence/controls/negative/stdout", &ids));
        assert!(allowed_path("evidence/controls/positive/record.json", &ids));
        assert!(!allowed_path("evidence/controls/positive/stdout", &ids));
        assert!(!allowed_path("evidence/controls/other/record.json", &ids));
        assert!(allowed_path("evidence/cases/one/witness.json", &ids));
        assert!(!allowed_path("evidence/cases/two/witness.json", &ids));
        assert!(allowed_path(
            "evidence/controls/positive/witness.json",
            &ids
        ));
        assert!(allowed_path(
            "evidence/controls/negative/witness.json",
            &ids
        ));
        for file in ["record.json", "stdout", "stderr", "witness.json"] {
            assert!(allowed_path(
                &format!("evidence/controls/memfd-exec/{file}"),
                &ids
            ));
        }
        assert!(!allowed_path("evidence/controls/memfd-exec/notes", &ids));
        assert!(!allowed_path("evidence/controls/memfd-exec/x/stdout", &ids));
        assert!(!allowed_path("evidence/other.json", &ids));
        assert!(!allowed_path("notes.txt", &ids));
    }
}
