//! The bound inputs: every file under `inputs/blobs/` is named by its own sha256, listed once in
//! the receipt's `blobs` with its size, and the uses the receipt records for it are exactly the
//! ones its platforms' inputs imply (each platform's candidate archive, runner, sentinel and
//! witnesses — nothing more, nothing less); the recipe is the one the receipt names. What the
//! blobs are made into is the image check's business (`image.regenerated`).

use super::{Checks, Context};
use crate::digest::is_sha256_hex;
use crate::layout;
use crate::receipt::{blob_path, BlobRole, BlobUse, BLOBS_DIR, RECIPE_FILE};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let receipt = ctx.receipt;
    let mut failures = Vec::new();

    // The files: each named by its digest and listed.
    let prefix = format!("{BLOBS_DIR}/");
    let listed: BTreeMap<&str, &crate::receipt::Blob> = receipt
        .blobs
        .iter()
        .map(|b| (b.sha256.as_str(), b))
        .collect();
    if listed.len() != receipt.blobs.len() {
        failures.push("the receipt lists a blob twice".into());
    }
    if !receipt.blobs.windows(2).all(|w| w[0].sha256 < w[1].sha256) {
        failures.push("the receipt's blobs are not sorted by sha256".into());
    }
    for (path, bytes) in &ctx.bundle.files {
        let Some(name) = path.strip_prefix(&prefix) else {
            continue;
        };
        let actual = ctx.digest(path).unwrap_or_default();
        if name != actual {
            failures.push(format!("{path} holds bytes whose sha256 is {actual}"));
        }
        match listed.get(name) {
            None => failures.push(format!("{path} is not in the receipt's blobs")),
            Some(b) if b.size != bytes.len() as u64 => failures.push(format!(
                "{path} is {} bytes, the receipt says {}",
                bytes.len(),
                b.size
            )),
            Some(_) => {}
        }
    }
    for blob in &receipt.blobs {
        if !is_sha256_hex(&blob.sha256) {
            failures.push(format!("blob {:?} is not named by a sha256", blob.sha256));
        } else if !ctx.bundle.files.contains_key(&blob_path(&blob.sha256)) {
            failures.push(format!("{} is listed but absent", blob_path(&blob.sha256)));
        }
    }

    // The uses: recomputed from the platforms' inputs.
    let mut implied: BTreeMap<&str, BTreeSet<BlobUse>> = BTreeMap::new();
    for run in &receipt.platforms {
        let i = &run.inputs;
        let mut add = |sha: &'_ str, role, machine: Option<&str>, name: String| {
            // Keyed by the receipt's own strings; an unknown digest is reported below.
            let key = receipt
                .blobs
                .iter()
                .find(|b| b.sha256 == sha)
                .map(|b| b.sha256.as_str())
                .unwrap_or("");
            implied.entry(key).or_default().insert(BlobUse {
                role,
                platform: run.platform,
                machine: machine.map(str::to_string),
                name,
            });
            if key.is_empty() {
                failures.push(format!(
                    "the {} inputs name blob {sha}, which the receipt's blobs do not list",
                    run.platform
                ));
            }
        };
        add(
            &i.candidate_archive.sha256,
            BlobRole::CandidateArchive,
            None,
            i.candidate_archive.name.clone(),
        );
        add(
            &i.runner_sha256,
            BlobRole::Runner,
            None,
            layout::RUNNER_BIN.to_string(),
        );
        add(
            &i.sentinel_sha256,
            BlobRole::Sentinel,
            None,
            layout::SENTINEL_BIN.to_string(),
        );
        for (machine, sha) in &i.witness_sha256 {
            add(
                sha,
                BlobRole::Witness,
                Some(machine),
                layout::witness_bin(machine),
            );
        }
    }
    implied.remove("");
    for blob in &receipt.blobs {
        let recorded: BTreeSet<BlobUse> = blob.uses.iter().cloned().collect();
        let want = implied.remove(blob.sha256.as_str()).unwrap_or_default();
        if recorded.len() != blob.uses.len() {
            failures.push(format!("blob {} lists a use twice", blob.sha256));
        }
        if recorded != want {
            failures.push(format!(
                "blob {} is recorded as {}, the platforms' inputs make it {}",
                blob.sha256,
                uses_text(&recorded),
                uses_text(&want)
            ));
        }
    }
    checks.record(
        "blobs.bound",
        "every bundled blob is named by its sha256 and used exactly as the platforms' inputs say",
        failures,
    );

    let mut recipe_failures = Vec::new();
    match ctx.digest(RECIPE_FILE) {
        None => recipe_failures.push(format!("{RECIPE_FILE} is missing")),
        Some(d) if d != receipt.recipe_sha256 => recipe_failures.push(format!(
            "{RECIPE_FILE} has sha256 {d}, recipeSha256 says {}",
            receipt.recipe_sha256
        )),
        Some(_) => {}
    }
    checks.record(
        "blobs.recipe",
        "the bundled image recipe is the one the receipt names",
        recipe_failures,
    );
}

fn uses_text(uses: &BTreeSet<BlobUse>) -> String {
    if uses.is_empty() {
        return "unused".into();
    }
    uses.iter()
        .map(|u| format!("{:?} of {} ({})", u.role, u.platform, u.name))
        .collect::<Vec<_>>()
        .join(", ")
}
