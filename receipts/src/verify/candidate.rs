//! The candidate, per platform: the pack manifest names the archive the receipt names; the
//! archive's bytes are in the bundle (`inputs/blobs/<sha256>`), so the pack manifest is
//! regenerated from them and must be the bundled one exactly; its runtime manifest digest is
//! recomputed from the per-file list, the list is well-formed (sorted, unique, sha256 digests,
//! the inventory binary present), and that binary is an ELF of this platform's machine (read
//! from its header). The image check ties the files to the layer.

use super::{Checks, PlatformContext};
use crate::archive;
use crate::digest::{is_sha256_hex, sha256_hex};
use crate::platform::elf_machine;
use crate::receipt::blob_path;
use crate::receipt::{PackManifest, PACK_MANIFEST_FILE};

/// The binary the runner executes, relative to the archive root.
pub(crate) const CANDIDATE_BIN_IN_ARCHIVE: &str = "bin/mcpscope";

pub(crate) fn check(p: &PlatformContext, checks: &mut Checks) {
    let inputs = &p.run.inputs;
    let pack = p.parse::<PackManifest>(PACK_MANIFEST_FILE);

    let mut archive_failures = Vec::new();
    match &pack {
        Err(e) => archive_failures.push(e.clone()),
        Ok(pack) => {
            if pack.schema_version != 1 {
                archive_failures.push(format!(
                    "pack manifest schemaVersion {}, expected 1",
                    pack.schema_version
                ));
            }
            if pack.archive != inputs.candidate_archive {
                archive_failures.push(format!(
                    "the pack manifest names archive {} sha256 {}, the receipt {} sha256 {}",
                    pack.archive.name,
                    pack.archive.sha256,
                    inputs.candidate_archive.name,
                    inputs.candidate_archive.sha256
                ));
            }
            if !is_sha256_hex(&pack.archive.sha256) {
                archive_failures.push("the archive digest is not a sha256".into());
            }
            if pack.archive_size == 0 || pack.archive.name.is_empty() {
                archive_failures.push("the archive has no name or is empty".into());
            }
        }
    }
    // The archive itself: regenerate the pack manifest from its bytes.
    match p.ctx.bytes(&blob_path(&inputs.candidate_archive.sha256)) {
        Err(e) => archive_failures.push(format!("the candidate archive's bytes: {e}")),
        Ok(bytes) => match p
            .ctx
            .archive(
                &inputs.candidate_archive.name,
                &inputs.candidate_archive.sha256,
                bytes,
            )
            .as_ref()
        {
            Err(e) => archive_failures.push(e.clone()),
            Ok(files) => {
                let regenerated = archive::manifest(&inputs.candidate_archive.name, bytes, files);
                if pack.as_ref().ok() != Some(&regenerated) {
                    archive_failures.push(format!(
                        "{} is not the manifest of the bundled archive's bytes",
                        p.path(PACK_MANIFEST_FILE)
                    ));
                }
                let bin = files.iter().find(|f| f.path == CANDIDATE_BIN_IN_ARCHIVE);
                let want = p.run.platform.elf_machine();
                match bin.map(|f| elf_machine(&f.bytes)) {
                    Some(Some(Ok(m))) if m == want => {}
                    Some(Some(Ok(m))) => archive_failures.push(format!(
                        "the archive's {CANDIDATE_BIN_IN_ARCHIVE} is an ELF for machine {m}, not {} ({want})",
                        p.run.platform.machine()
                    )),
                    Some(Some(Err(problem))) => archive_failures
                        .push(format!("the archive's {CANDIDATE_BIN_IN_ARCHIVE} is {problem}")),
                    Some(None) | None => archive_failures.push(format!(
                        "the archive's {CANDIDATE_BIN_IN_ARCHIVE} is not an ELF binary"
                    )),
                }
            }
        },
    }
    checks.record(
        "candidate.archive",
        "the pack manifest is the bundled archive's, which the receipt names, built for this platform",
        archive_failures,
    );

    let mut runtime_failures = Vec::new();
    match &pack {
        Err(e) => runtime_failures.push(e.clone()),
        Ok(pack) => {
            let recomputed = serde_json::to_vec(&pack.runtime)
                .map(|bytes| sha256_hex(&bytes))
                .unwrap_or_default();
            if recomputed != pack.runtime_manifest_sha256 {
                runtime_failures.push(format!(
                    "the runtime list hashes to {recomputed}, the pack manifest says {}",
                    pack.runtime_manifest_sha256
                ));
            }
            if inputs.runtime_manifest_sha256 != pack.runtime_manifest_sha256 {
                runtime_failures.push(format!(
                    "inputs.runtimeManifestSha256 {} differs from the pack manifest's {}",
                    inputs.runtime_manifest_sha256, pack.runtime_manifest_sha256
                ));
            }
            if !pack.runtime.windows(2).all(|w| w[0].path < w[1].path) {
                runtime_failures
                    .push("the runtime list is not sorted by path without repeats".into());
            }
            for file in &pack.runtime {
                if !is_sha256_hex(&file.sha256) {
                    runtime_failures.push(format!("{}: digest is not a sha256", file.path));
                }
                if file.path.starts_with('/')
                    || file.path.split('/').any(|p| p == ".." || p.is_empty())
                {
                    runtime_failures.push(format!("{:?} is not a safe archive path", file.path));
                }
            }
            if !pack
                .runtime
                .iter()
                .any(|f| f.path == CANDIDATE_BIN_IN_ARCHIVE)
            {
                runtime_failures.push(format!(
                    "the runtime list has no {CANDIDATE_BIN_IN_ARCHIVE}"
                ));
            }
        }
    }
    checks.record(
        "candidate.runtime",
        "the runtime manifest digest is recomputed from its file list",
        runtime_failures,
    );
}
