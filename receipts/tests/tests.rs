//! Integration tests of scopebox-receipts, one binary (ripgrep style). Modules:
//!
//! - `synthetic`: a consistent synthetic bundle of N cases, the specimen that must verify;
//! - `util`: per-test temp dirs, the synthetic specimen, running the `scopebox-verify` binary;
//! - `verify_cli`: the binary's check list, `--json` document and documented exit codes;
//! - `bundle_safety`: symlinks, FIFOs, garbage and missing receipts never panic or pass;
//! - `selftest`: every mutation class is rejected, and digest-consistent ones by semantic checks;
//! - `signing`: keygen, sign, verify with the right and wrong key, envelope edits;
//! - `interop`: an independent DSSE/ed25519 implementation (Python `cryptography`) both ways;
//! - `reference`: the committed bundle from a real run verifies and every mutation is rejected;
//! - `hostile`: builders of issue 14's hostile bundles from a good one (shared with the bench);
//! - `hostile_bundles`: each hostile bundle is rejected or unreadable with a named check, with
//!   nothing written and no raw control byte on either stream.

mod bundle_archive;
mod bundle_safety;
pub mod hostile;
mod hostile_bundles;
mod interop;
mod reference;
mod selftest;
mod signing;
pub mod synthetic;
mod util;
mod verify_cli;
