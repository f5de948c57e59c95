//! Fuzz target: bundle loading and verification. The synthetic one-case, one-platform specimen
//! is written and read once (a real `Bundle::read`); each input then replaces one of its files
//! (chosen by the first byte) and the whole verification runs in memory. Must never panic,
//! whatever the bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scopebox_receipts::verify::{verify_loaded, Bundle, VerifyOptions};
use std::sync::OnceLock;

#[path = "../../receipts/tests/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

fn base() -> &'static Bundle {
    static BASE: OnceLock<Bundle> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let bundle = dir.path().join("bundle");
        synthetic::write_bundle_for(
            &bundle,
            1,
            &[scopebox_schema::platform::Platform::LinuxAmd64],
            &[],
        )
        .expect("the specimen");
        Bundle::read(&bundle).expect("the specimen reads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let mut bundle = base().clone();
    // The receipt, the envelope, or one of the files the checks parse.
    let targets: Vec<String> = bundle
        .files
        .keys()
        .filter(|k| k.ends_with(".json") || k.ends_with("stdout"))
        .cloned()
        .collect();
    match which as usize % (targets.len() + 2) {
        0 => bundle.receipt_bytes = bytes.to_vec(),
        1 => bundle.envelope_bytes = Some(bytes.to_vec()),
        n => {
            bundle.files.insert(targets[n - 2].clone(), bytes.to_vec());
        }
    }
    let _ = verify_loaded(&bundle, &VerifyOptions::default());
});
