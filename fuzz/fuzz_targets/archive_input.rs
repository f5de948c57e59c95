//! The input shapes of the two `.tar.gz` reader targets (`bundle_archive`, `candidate_archive`)
//! and the extractor they are checked against. The first byte picks how the rest becomes the
//! archive: as the `.gz` itself (the gzip framing mutated: members, trailers, trailing bytes),
//! or gzip-compressed here as the writers compress (so the mutations land in the tar stream),
//! with or without the end-of-archive marker appended. Never reads or writes a file.

use std::collections::BTreeMap;
use std::io::{Read, Write};

/// The two zero blocks that end a tar stream.
const END_MARKER: [u8; 1024] = [0; 1024];

/// The `.tar.gz` bytes `data` stands for (its first byte the shape, the rest the bytes).
pub fn archive_of(data: &[u8]) -> Option<Vec<u8>> {
    let (&shape, rest) = data.split_first()?;
    Some(match shape % 3 {
        0 => rest.to_vec(),
        1 => gzip(&[rest]),
        _ => gzip(&[rest, &END_MARKER]),
    })
}

/// One gzip member of `parts`, its header as both writers give it (no time, no name).
fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::fast());
    for part in parts {
        gz.write_all(part)
            .expect("compressing into memory cannot fail");
    }
    gz.finish().expect("compressing into memory cannot fail")
}

/// One entry as an ordinary extractor sees it: the tar crate with its extensions applied (PAX
/// and GNU long names), every gzip member read, nothing checked beyond what it checks itself.
#[derive(Debug, PartialEq, Eq)]
pub struct Extracted {
    /// The type byte of the entry (after its extension headers).
    pub kind: u8,
    pub mode: u32,
    pub bytes: Vec<u8>,
}

/// What the extractor takes from `archive` (only ever called on one a strict reader accepted,
/// so within the readers' bounds), by path as extracting would leave it: a later entry for a
/// path replaces an earlier one. `None` when the extractor fails on it.
pub fn extracted(archive: &[u8]) -> Option<BTreeMap<Vec<u8>, Extracted>> {
    let mut tar = tar::Archive::new(flate2::read::MultiGzDecoder::new(archive));
    let mut out = BTreeMap::new();
    for entry in tar.entries().ok()? {
        let mut entry = entry.ok()?;
        let path = entry.path_bytes().into_owned();
        let kind = entry.header().entry_type().as_byte();
        let mode = entry.header().mode().ok()?;
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).ok()?;
        out.insert(path, Extracted { kind, mode, bytes });
    }
    Some(out)
}
