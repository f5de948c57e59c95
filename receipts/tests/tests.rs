//! Integration tests of scopebox-receipts, one binary (ripgrep style). Modules:
//!
//! - `synthetic`: a consistent synthetic bundle of N cases, the specimen that must verify;
//! - `util`: per-test temp dirs, the synthetic specimen, running the `scopebox-verify` binary;
//! - `verify_cli`: the binary's check list, `--json` document and documented exit codes;
//! - `candidate_archive`: the reference bundle's candidate archives read as packed; a PAX or
//!   GNU extension header, a link or a second gzip member in one is refused, the entry named;
//! - `archive_fuzz_regressions`: what the archive fuzz targets found, each input pinned;
//! - `bundle_safety`: symlinks, FIFOs, garbage and missing receipts never panic or pass;
//! - `selftest`: every mutation class is rejected, and digest-consistent ones by semantic checks;
//! - `signing`: keygen, sign, verify with the right and wrong key, envelope edits;
//! - `interop`: an independent DSSE/ed25519 implementation (Python `cryptography`) both ways;
//! - `reference`: the committed bundle from a real run verifies and every mutation is rejected;
//! - `hostile`: builders of issue 14's hostile bundles from a good one (shared with the bench);
//! - `native`: native bundles and native-only bundles verify; tampered native captures,
//!   forged judgements and pins are rejected by the named native checks;
//! - `hostile_bundles`: each hostile bundle is rejected or unreadable with a named check, with
//!   nothing written and no raw control byte on either stream;
//! - `report_snapshots`: what the binary prints for the reference bundle (human, `--json`, with
//!   and without its key), a rejected copy and a usage error, as reviewed snapshots.

mod archive_fuzz_regressions;
mod bundle_archive;
mod bundle_safety;
mod candidate_archive;
pub mod hostile;
mod hostile_bundles;
mod interop;
mod native;
mod reference;
mod report_snapshots;
mod selftest;
mod signing;
pub mod synthetic;
mod util;
mod verify_cli;

/// Copy a bundle directory (regular files only) for one mutation.
pub fn hostile_copy(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            hostile_copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
