//! Fuzz target: the bundle archive reader (`bundle_file::read_archive_from`, the in-memory
//! entry point of `read_archive`) on hostile `.tar.gz` bytes, shaped by `archive_input`. Must
//! never panic, hang or grow without bound; and when it accepts an archive whose entries are
//! all regular, an ordinary extractor (PAX and GNU long names applied, every gzip member read)
//! must see exactly the files it read, by the same paths and with the same bytes.

#![no_main]

mod archive_input;

use libfuzzer_sys::fuzz_target;
use scopebox_receipts::bundle_file::read_archive_from;
use scopebox_schema::receipt::{ENVELOPE_FILE, PROVENANCE_ENVELOPE_FILE, RECEIPT_FILE};
use std::collections::BTreeMap;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some(archive) = archive_input::archive_of(data) else {
        return;
    };
    let Ok(bundle) = read_archive_from(Path::new("fuzz.tar.gz"), archive.as_slice()) else {
        return;
    };
    let extracted =
        archive_input::extracted(&archive).expect("the extractor reads an accepted archive");
    let mut files: BTreeMap<&str, &[u8]> = bundle
        .files
        .iter()
        .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
        .collect();
    files.insert(RECEIPT_FILE, &bundle.receipt_bytes);
    for (path, bytes) in [
        (ENVELOPE_FILE, &bundle.envelope_bytes),
        (PROVENANCE_ENVELOPE_FILE, &bundle.provenance_envelope_bytes),
    ] {
        if let Some(bytes) = bytes {
            files.insert(path, bytes);
        }
    }
    // Every file the reader took is the extractor's file at that path.
    for (path, bytes) in &files {
        let entry = extracted
            .get(path.as_bytes())
            .unwrap_or_else(|| panic!("{path}: read, but not extracted"));
        assert_eq!(entry.kind, b'0', "{path}");
        assert_eq!(&entry.bytes, bytes, "{path}");
    }
    // With nothing irregular (which the verifier rejects), nothing else is extracted either.
    if bundle.irregular.is_empty() {
        let paths: Vec<&[u8]> = extracted.keys().map(Vec::as_slice).collect();
        let read: Vec<&[u8]> = files.keys().map(|p| p.as_bytes()).collect();
        assert_eq!(paths, read);
    }
});
