//! What the archive fuzz targets (`fuzz/fuzz_targets/{bundle,candidate}_archive.rs`) found,
//! each input pinned as found (minimized, in `tests/fuzz-regressions/`) and named after what it
//! showed: an archive a strict reader took that an ordinary extractor reads otherwise, or not
//! at all.

use scopebox_receipts::archive;
use scopebox_receipts::bundle_file::{read_archive_from, write_archive};
use scopebox_receipts::verify::bundle::BundleErrorKind;
use std::collections::BTreeMap;
use std::path::Path;

/// Why the bundle archive `gz` is malformed (it must be).
fn malformed(gz: &[u8]) -> String {
    match read_archive_from(Path::new("t"), gz) {
        Err(BundleErrorKind::Archive(what)) => what,
        other => panic!("not refused as malformed: {other:?}"),
    }
}

/// Whether an ordinary extractor (the tar crate, extensions applied) reads every entry of `gz`
/// with its mode.
fn extractor_reads_every_mode(gz: &[u8]) -> bool {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(gz));
    tar.entries()
        .unwrap()
        .all(|entry| entry.unwrap().header().mode().is_ok())
}

/// `gz` (one gzip member) with the mode field of tar entry `index` (from 0) set to `mode`, its
/// checksum fixed.
fn with_mode(gz: &[u8], index: usize, mode: &[u8; 8]) -> Vec<u8> {
    let mut tar = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut tar).unwrap();
    let mut at = 0;
    for _ in 0..index {
        let header = tar::Header::from_byte_slice(&tar[at..at + 512]);
        at += 512 + header.entry_size().unwrap().next_multiple_of(512) as usize;
    }
    let mut header = tar::Header::from_byte_slice(&tar[at..at + 512]).clone();
    header.as_old_mut().mode = *mode;
    header.set_cksum();
    tar[at..at + 512].copy_from_slice(header.as_bytes());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_bundle_archive_entry_whose_mode_field_is_not_octal_is_refused() {
    // The fuzzer's input: a receipt whose mode field reads `0000648`, which the bundle reader
    // took and the tar crate's extractor refuses ("numeric field was not a number").
    let found = include_bytes!("fuzz-regressions/bundle-mode-not-octal.tar.gz");
    assert!(!extractor_reads_every_mode(found));
    assert_eq!(
        malformed(found),
        "entry 1 (receipt.json) is a regular file whose mode field is not 7 octal digits; a \
         bundle archive holds regular files in ustar headers only"
    );
    // As it was found: a written archive, one header's mode field changed (`0210182`).
    let files = BTreeMap::from([
        ("inputs/matrix.json".to_string(), b"[]".to_vec()),
        ("receipt.json".to_string(), b"{}".to_vec()),
    ]);
    let written = write_archive(&files, Vec::new()).unwrap();
    assert!(extractor_reads_every_mode(&written));
    read_archive_from(Path::new("t"), written.as_slice()).unwrap();
    let changed = with_mode(&written, 0, b"0210182\0");
    assert!(!extractor_reads_every_mode(&changed));
    assert!(malformed(&changed).starts_with(
        "entry 1 (inputs/matrix.json) is a regular file whose mode field is not 7 octal digits"
    ));
    // A candidate archive with the same header is refused with the same words.
    let problem = archive::read_archive("found", found).unwrap_err().problem;
    assert!(
        problem.starts_with(
            "entry 1 (receipt.json) is a regular file whose mode field is not 7 octal digits"
        ),
        "{problem}"
    );
}
