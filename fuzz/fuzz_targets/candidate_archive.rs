//! Fuzz target: the candidate archive reader (`archive::read_archive`, in memory) on hostile
//! `.tar.gz` bytes, shaped by `archive_input`. Must never panic, hang or grow without bound;
//! and when it accepts an archive, an ordinary extractor (PAX and GNU long names applied, every
//! gzip member read) must see exactly its files, by the same paths, modes and bytes, and
//! nothing else but empty 0755 directories.

#![no_main]

mod archive_input;

use libfuzzer_sys::fuzz_target;
use scopebox_receipts::archive::read_archive;

fuzz_target!(|data: &[u8]| {
    let Some(archive) = archive_input::archive_of(data) else {
        return;
    };
    let Ok(files) = read_archive("fuzz.tar.gz", &archive) else {
        return;
    };
    let mut extracted =
        archive_input::extracted(&archive).expect("the extractor reads an accepted archive");
    for file in &files {
        let entry = extracted
            .remove(file.path.as_bytes())
            .unwrap_or_else(|| panic!("{}: read, but not extracted", file.path));
        assert_eq!(
            (entry.kind, entry.mode, &entry.bytes),
            (b'0', file.mode, &file.bytes),
            "{}",
            file.path
        );
    }
    for (path, entry) in &extracted {
        let shown = String::from_utf8_lossy(path);
        assert!(path.ends_with(b"/"), "{shown}: extracted, but not read");
        assert_eq!((entry.kind, entry.mode), (b'5', 0o755), "{shown}");
        assert!(entry.bytes.is_empty(), "{shown}");
    }
});
