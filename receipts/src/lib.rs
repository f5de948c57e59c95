//! scopebox-receipts: independent verification of receipt bundles (`scopebox-verify`), the
//! mutation self-test, DSSE envelopes and in-toto statements, and the two pure generators the
//! orchestrator and the verifier must share so the verifier can recompute rather than trust:
//! the candidate archive format (`archive`) and the evidence image (`image`). Both archive
//! readers (`archive`, `bundle_file`) read the strict `.tar.gz` of `strict_tar`. The formats
//! and the judge come from `scopebox-schema`; this crate recomputes every verdict from a
//! bundle's bytes with them. It must never depend on Docker, tokio, the orchestrator or the
//! harness: an auditor builds it alone.

pub mod archive;
pub mod attestation;
pub mod bundle_file;
pub mod dsse;
pub mod image;
pub mod input;
pub mod provenance;
pub mod selftest;
mod strict_tar;
pub mod verify;

// The schema modules under their old paths inside this crate (`crate::judge`, ...).
pub(crate) use scopebox_schema::{
    digest, evidence, judge, layout, matrix, platform, policy, receipt, strict_json,
};
