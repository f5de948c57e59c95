//! The candidate archive (`mcpscope-<ver>-<machine>-linux.tar.gz`, as `scopebox pack` writes
//! it): the reference bundle's two real archives are read as packed, byte for byte the tar
//! stream `archive::write_archive` gives; each hostile variant built from their real bytes (a
//! PAX path renaming the binary, a PAX global header, a GNU long name, a symlink, a hard link,
//! a second gzip member) is refused with the entry named; and the verifier reports such an
//! archive under `candidate.archive`, its name escaped on the terminal and exact in `--json`.

use crate::hostile::raw_controls;
use crate::util::{specimen, tempdir, verify_bin};
use scopebox_receipts::archive::{self, ArchiveFile, ARCHIVE_BIN};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-bundle")
}

/// A platform's candidate archive as a bundle holds it: its name, its blob's bytes, and the
/// platform's directory (where its pack manifest is).
struct Candidate {
    name: String,
    bytes: Vec<u8>,
    dir: String,
    blob: PathBuf,
}

fn candidates_of(bundle: &Path) -> Vec<Candidate> {
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("receipt.json")).unwrap()).unwrap();
    receipt["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|platform| {
            let archive = &platform["inputs"]["candidateArchive"];
            let blob = bundle.join(format!(
                "inputs/blobs/{}",
                archive["sha256"].as_str().unwrap()
            ));
            Candidate {
                name: archive["name"].as_str().unwrap().to_string(),
                bytes: std::fs::read(&blob).unwrap(),
                dir: platform["dir"].as_str().unwrap().to_string(),
                blob,
            }
        })
        .collect()
}

/// The platform a bundle directory `platforms/<os>-<arch>` names, as check ids give it.
fn platform_of(dir: &str) -> &str {
    dir.rsplit('/').next().unwrap_or(dir)
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut tar)
        .unwrap();
    tar
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// The entries of a tar stream as it sits: each one's header block and its data in whole
/// blocks, up to the end-of-archive marker (which must follow, and nothing after it).
fn entries_of(tar: &[u8]) -> Vec<Vec<u8>> {
    let mut entries = Vec::new();
    let mut at = 0;
    while tar[at..at + 512].iter().any(|&b| b != 0) {
        let header = tar::Header::from_byte_slice(&tar[at..at + 512]);
        let end = at + 512 + (header.entry_size().unwrap() as usize).next_multiple_of(512);
        entries.push(tar[at..end].to_vec());
        at = end;
    }
    assert_eq!(&tar[at..], &[0; 1024], "the marker ends the stream");
    entries
}

/// The gzip'd tar stream of `entries` and its end-of-archive marker.
fn archive_of(entries: &[Vec<u8>]) -> Vec<u8> {
    gzip(&[entries.concat(), vec![0; 1024]].concat())
}

/// `entry` (a header block and its data) with its header's name field set to `name`.
fn renamed(entry: &[u8], name: &str) -> Vec<u8> {
    let mut header = tar::Header::new_old();
    header.as_mut_bytes().copy_from_slice(&entry[..512]);
    let field = &mut header.as_old_mut().name;
    field.fill(0);
    field[..name.len()].copy_from_slice(name.as_bytes());
    header.set_cksum();
    [header.as_bytes().as_slice(), &entry[512..]].concat()
}

/// An entry of `kind` named `name` in a ustar header, as a hostile archiver would add one:
/// `data` its contents, `link` its link name.
fn ustar_entry(kind: tar::EntryType, name: &str, link: &str, data: &[u8]) -> Vec<u8> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o755);
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
    header.set_cksum();
    let mut bytes = [header.as_bytes().as_slice(), data].concat();
    bytes.resize(bytes.len().next_multiple_of(512), 0);
    bytes
}

/// A PAX header (`XHeader` or `XGlobalHeader`) named `name` holding the one record `record`.
fn pax(kind: tar::EntryType, name: &str, record: &str) -> Vec<u8> {
    let body = format!(" {record}\n");
    let mut length = body.len() + 1;
    while format!("{length}{body}").len() != length {
        length += 1;
    }
    ustar_entry(kind, name, "", format!("{length}{body}").as_bytes())
}

/// A GNU long name for `path`, as GNU tar and the tar crate's builder write one.
fn gnu_long_name(path: &str) -> Vec<u8> {
    let data = [path.as_bytes(), b"\0"].concat();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::GNULongName);
    header.set_size(data.len() as u64);
    header.as_old_mut().name[..13].copy_from_slice(b"././@LongLink");
    header.set_cksum();
    let mut bytes = [header.as_bytes().as_slice(), &data].concat();
    bytes.resize(bytes.len().next_multiple_of(512), 0);
    bytes
}

/// Why `archive` (named `name`) is refused: it must be.
fn refusal(name: &str, archive: &[u8]) -> String {
    match archive::read_archive(name, archive) {
        Ok(files) => panic!(
            "accepted: {:?}",
            files.iter().map(|f| &f.path).collect::<Vec<_>>()
        ),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_reference_candidate_archives_are_read_as_packed() {
    let candidates = candidates_of(&reference());
    assert_eq!(candidates.len(), 2);
    for candidate in &candidates {
        let files = archive::read_archive(&candidate.name, &candidate.bytes).unwrap();
        assert_eq!(
            files
                .iter()
                .map(|f| (f.path.as_str(), f.mode))
                .collect::<Vec<_>>(),
            [(ARCHIVE_BIN, 0o755)]
        );
        // The pack manifest regenerates from what was read, and the writer gives the same tar
        // stream: the reader takes exactly the format `scopebox pack` writes.
        let bundled: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                reference().join(format!("{}/inputs/pack-manifest.json", candidate.dir)),
            )
            .unwrap(),
        )
        .unwrap();
        let regenerated = archive::manifest(&candidate.name, &candidate.bytes, &files);
        assert_eq!(serde_json::to_value(&regenerated).unwrap(), bundled);
        assert_eq!(
            gunzip(&archive::write_archive(&files)),
            gunzip(&candidate.bytes)
        );
    }
}

#[test]
fn hostile_entries_in_a_real_candidate_archive_are_refused_and_named() {
    use tar::EntryType::*;
    let candidate = candidates_of(&reference()).remove(0);
    let entries = entries_of(&gunzip(&candidate.bytes));
    // As packed: the directory `bin/`, then the binary.
    assert_eq!(entries.len(), 2);
    let [dir, bin] = [entries[0].clone(), entries[1].clone()];
    assert_eq!(
        archive::read_archive(&candidate.name, &archive_of(&[dir.clone(), bin.clone()]))
            .unwrap()
            .len(),
        1
    );
    let cases: [(&str, Vec<Vec<u8>>, &str); 5] = [
        (
            // A reader honouring PAX sees bin/mcpscope, one ignoring it bin/decoy.
            "a PAX path renaming the binary",
            vec![
                dir.clone(),
                pax(XHeader, "bin/PaxHeaders/mcpscope", "path=bin/mcpscope"),
                renamed(&bin, "bin/decoy"),
            ],
            "entry 2 (bin/PaxHeaders/mcpscope) is a PAX extended header (type 'x')",
        ),
        (
            "a PAX global header",
            vec![
                pax(XGlobalHeader, "pax_global_header", "path=bin/mcpscope"),
                dir.clone(),
                bin.clone(),
            ],
            "entry 1 (pax_global_header) is a PAX global header (type 'g')",
        ),
        (
            // A reader of GNU long names sees bin/mcpscope, another ././@LongLink and bin/decoy.
            "a GNU long name",
            vec![
                dir.clone(),
                gnu_long_name(ARCHIVE_BIN),
                renamed(&bin, "bin/decoy"),
            ],
            "entry 2 (././@LongLink) is a GNU long name (type 'L')",
        ),
        (
            "a symlink",
            vec![
                dir.clone(),
                bin.clone(),
                ustar_entry(Symlink, "bin/sh", "mcpscope", b""),
            ],
            "entry 3 (bin/sh) is a symlink (type '2')",
        ),
        (
            "a hard link",
            vec![
                dir.clone(),
                bin.clone(),
                ustar_entry(Link, "bin/mcpscope-again", ARCHIVE_BIN, b""),
            ],
            "entry 3 (bin/mcpscope-again) is a hard link (type '1')",
        ),
    ];
    for (what, entries, named) in cases {
        let error = refusal(&candidate.name, &archive_of(&entries));
        assert!(
            error.starts_with(&format!(
                "read candidate archive {}: {named}; a candidate archive holds",
                candidate.name
            )),
            "{what}: {error}"
        );
    }
}

#[test]
fn a_second_gzip_member_replacing_the_binary_is_refused() {
    let candidate = candidates_of(&reference()).remove(0);
    let tar = gunzip(&candidate.bytes);
    // The packed tar stream cut before its marker, then a member holding another binary: an
    // extractor reading every member (`tar xzf`) ends with that one.
    let entries = entries_of(&tar);
    let mut archive = gzip(&entries.concat());
    archive.extend(archive::write_archive(&[ArchiveFile {
        path: ARCHIVE_BIN.to_string(),
        mode: 0o755,
        bytes: b"\x7fELF another binary".to_vec(),
    }]));
    let error = refusal(&candidate.name, &archive);
    assert!(
        error.contains("bytes follow the gzip stream (another gzip member or trailing data)"),
        "{error}"
    );
}

#[test]
fn the_verifier_names_a_hostile_candidate_entry_escaped_under_candidate_archive() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let candidate = candidates_of(&bundle).remove(0);
    let mut entries = entries_of(&gunzip(&candidate.bytes));
    let at = entries
        .iter()
        .position(|e| e.starts_with(ARCHIVE_BIN.as_bytes()))
        .unwrap();
    let bin = entries.remove(at);
    entries.insert(at, renamed(&bin, "bin/decoy"));
    let name = "bin/\u{1b}[2J\u{9b}31m";
    entries.insert(at, pax(tar::EntryType::XHeader, name, "path=bin/mcpscope"));
    std::fs::write(&candidate.blob, archive_of(&entries)).unwrap();
    let b = bundle.to_str().unwrap();

    let json = verify_bin(&[b, "--json"]);
    assert_eq!(json.code, 1, "{}{}", json.stdout, json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == format!("{}/candidate.archive", platform_of(&candidate.dir)))
        .unwrap_or_else(|| panic!("no candidate.archive for {}: {doc}", candidate.dir));
    assert_eq!(check["ok"], false, "{check}");
    let named = format!(
        "entry {} ({name}) is a PAX extended header (type 'x')",
        at + 1
    );
    assert!(
        check["reason"]
            .as_str()
            .unwrap_or_default()
            .contains(&named),
        "{check}"
    );

    let human = verify_bin(&[b]);
    assert_eq!(human.code, 1, "{}{}", human.stdout, human.stderr);
    assert!(
        human
            .stdout
            .contains("bin/\\u{1b}[2J\\u{9b}31m) is a PAX extended header"),
        "{}",
        human.stdout
    );
    assert_eq!(
        raw_controls(human.stdout.as_bytes()),
        Vec::<String>::new(),
        "{}",
        human.stdout
    );
}
