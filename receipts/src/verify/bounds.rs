//! `bundle.bounds`: the counts a bundle may carry, checked on the parsed receipt and matrix
//! before any other work (no digest computed, no layer regenerated, no case judged). A bundle
//! beyond them is rejected with this one check, so a hostile bundle costs its parse and no
//! more. The bounds sit far above what a real run writes (two platforms, four blobs, 342 cases,
//! a few dozen lifecycle events); the matrix's own bounds are the judge's
//! (`judge::bounds`, which the runner enforces too). Byte bounds are the reader's
//! (`bundle::MAX_FILE_BYTES`, `MAX_TOTAL_BYTES`, `MAX_ENTRIES`). This module only counts.

use crate::judge::{bounds::MAX_CASES, matrix_bound_failures};
use crate::matrix::Matrix;
use crate::platform::Platform;
use crate::receipt::Receipt;

pub(crate) const TITLE: &str =
    "the receipt and the matrix are within the verifier's bounds (counted before any check)";

/// Blobs a receipt may list (a run has at most a candidate per platform, a runner and a
/// sentinel per platform, and a witness per machine).
pub const MAX_BLOBS: usize = 64;
/// Recorded uses of one blob.
pub const MAX_BLOB_USES: usize = 64;
/// Files a receipt may list (as many as the reader accepts entries).
pub const MAX_LISTED_FILES: usize = super::bundle::MAX_ENTRIES;
/// Lifecycle events of one platform's execution.
pub const MAX_EVENTS: usize = 4_096;
/// Fixture observations in one case record (the walk before and the walk after, each).
pub const MAX_OBSERVATIONS: usize = 65_536;

/// Every bound the receipt (and the matrix, when it parsed) exceeds.
pub(crate) fn failures(receipt: &Receipt, matrix: Option<&Matrix>) -> Vec<String> {
    let mut failures = Vec::new();
    let mut over = |what: &str, count: usize, max: usize| {
        if count > max {
            failures.push(format!("{what}: {count}, more than {max}"));
        }
    };
    over(
        "platforms in the receipt",
        receipt.platforms.len(),
        Platform::ALL.len(),
    );
    over(
        "platforms not covered",
        receipt.not_covered.len(),
        Platform::ALL.len(),
    );
    over("blobs in the receipt", receipt.blobs.len(), MAX_BLOBS);
    for blob in &receipt.blobs {
        over("uses of one blob", blob.uses.len(), MAX_BLOB_USES);
    }
    over(
        "files listed in the receipt",
        receipt.files.len(),
        MAX_LISTED_FILES,
    );
    for run in receipt.platforms.iter().take(Platform::ALL.len()) {
        over("cases of one platform", run.cases.len(), MAX_CASES);
        over(
            "lifecycle events of one platform",
            run.execution.events.len(),
            MAX_EVENTS,
        );
        over(
            "containers (shards) of one platform",
            run.shard_count(),
            crate::evidence::MAX_SHARDS,
        );
        for shard in run.shards.iter().take(crate::evidence::MAX_SHARDS) {
            over(
                "lifecycle events of one shard",
                shard.execution.events.len(),
                MAX_EVENTS,
            );
        }
    }
    if let Some(matrix) = matrix {
        failures.extend(
            matrix_bound_failures(matrix)
                .into_iter()
                .map(|f| format!("matrix: {f}")),
        );
    }
    failures
}
