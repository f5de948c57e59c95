//! A receipt bundle as one file: a deterministic `.tar.gz` of the bundle directory
//! (`scopebox run --archive FILE`), and reading one back into the same in-memory `Bundle` a
//! directory gives, with the same bounds (file size, total size, entry count, depth) — never
//! extracting anything to disk. Entry order is by path, every header has mtime 0, owner 0:0,
//! mode 0644, and no directory entries; gzip's header carries no name and no time, so the same
//! bundle always gives the same bytes; a path too long for a ustar header (a long case id) goes
//! in a GNU long name just before its file, as the tar crate's builder writes one. Reading
//! takes exactly that and nothing else: regular files in ustar headers, and such long names
//! (no PAX header, link, directory, device, FIFO, sparse file or other header format: a
//! malformed archive, the entry named); within it, an unsafe or non-UTF-8 name and a path given
//! twice are recorded as irregular, so `files.kinds` rejects them as it does on a directory.
//! The framing is as strict: one gzip member and nothing after it, one tar stream ending with
//! its end-of-archive marker and nothing after that but a record's zero padding — so no
//! extractor sees an entry, or a name, the reader did not. The framing and the header checks
//! are `strict_tar`'s, which the candidate archive's reader shares; which entries a bundle
//! archive holds is this module's.

use crate::receipt::{ENVELOPE_FILE, PROVENANCE_ENVELOPE_FILE, RECEIPT_FILE};
use crate::strict_tar::{self, fits_ustar, ArchiveContents, TarRefusal};
use crate::verify::bundle::{
    Bundle, BundleError, BundleErrorKind, MAX_DEPTH, MAX_ENTRIES, MAX_FILE_BYTES, MAX_TOTAL_BYTES,
};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

pub use crate::strict_tar::TAR_RECORD;

/// The tar stream may exceed the files' bytes by its headers and padding: at most this many
/// bytes per file on average (a 512-byte header, up to 511 bytes of padding, and a GNU long
/// name's header and path when it has one).
const TAR_OVERHEAD_PER_ENTRY: u64 = 4096;

/// Write the bundle `files` (path → bytes, every file of the bundle) as a deterministic
/// `.tar.gz` to `out`.
pub fn write_archive<W: Write>(files: &BTreeMap<String, Vec<u8>>, out: W) -> std::io::Result<W> {
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for (path, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, path, bytes.as_slice())?;
    }
    tar.into_inner()?.finish()
}

/// Every regular file below `dir` (as the bounded directory reader sees it), receipt and
/// envelope included, ready for [`write_archive`].
pub fn files_of_dir(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, BundleError> {
    let bundle = Bundle::read(dir)?;
    if let Some((path, kind)) = bundle.irregular.iter().next() {
        return Err(BundleError::new(
            dir,
            BundleErrorKind::Io(std::io::Error::other(format!(
                "{path} is a {kind}; a bundle archive holds regular files only"
            ))),
        ));
    }
    let mut files = bundle.files;
    files.insert(RECEIPT_FILE.to_string(), bundle.receipt_bytes);
    if let Some(envelope) = bundle.envelope_bytes {
        files.insert(ENVELOPE_FILE.to_string(), envelope);
    }
    if let Some(envelope) = bundle.provenance_envelope_bytes {
        files.insert(PROVENANCE_ENVELOPE_FILE.to_string(), envelope);
    }
    Ok(files)
}

/// Read a bundle archive at `path` into memory under the directory reader's bounds.
pub fn read_archive(path: &Path) -> Result<Bundle, BundleError> {
    let err = |kind| BundleError::new(path, kind);
    let file = std::fs::File::open(path).map_err(|e| err(e.into()))?;
    read_archive_from(path, file).map_err(err)
}

/// [`read_archive`] over any reader (`label` names it in the bundle's `root`).
///
/// The archive must be exactly what [`write_archive`] writes, as far as its format goes: one
/// gzip member (its CRC and length checked) and nothing after it; inside, one tar stream of
/// the entries the writer gives (regular files in ustar headers, a GNU long name before one
/// whose path needs it: `Found`'s `ArchiveContents`) whose last entry is followed by the
/// end-of-archive marker (two zero blocks) and at most one record of zero padding (tar's
/// default record, [`TAR_RECORD`]), in whole blocks — the framing `strict_tar` reads, shared
/// with the candidate archive's reader. Anything else — a second gzip member, bytes after the
/// gzip stream, a PAX header, a link, a tar stream cut before its marker, an entry or any
/// other byte after the marker — is refused as malformed: an extractor (`tar xzf` reads every
/// member, and honours PAX paths) could see files, or names, the verifier did not.
pub fn read_archive_from<R: Read>(label: &Path, reader: R) -> Result<Bundle, BundleErrorKind> {
    let limit = MAX_TOTAL_BYTES + TAR_OVERHEAD_PER_ENTRY * MAX_ENTRIES as u64;
    let mut found = Found::default();
    strict_tar::read_tar_gz(reader, limit, "a bundle archive", &mut found)?;
    let Found {
        mut files,
        irregular,
        receipt_is_dir,
        ..
    } = found;
    match irregular.get(RECEIPT_FILE) {
        Some(&"duplicate-entry") => return Err(BundleErrorKind::ReceiptTwice),
        Some(kind) => return Err(BundleErrorKind::ReceiptNotAFile(kind)),
        None => {}
    }
    let Some(receipt_bytes) = files.remove(RECEIPT_FILE) else {
        return Err(if receipt_is_dir {
            BundleErrorKind::ReceiptIsADirectory
        } else {
            BundleErrorKind::NoReceipt
        });
    };
    let envelope_bytes = files.remove(ENVELOPE_FILE);
    let provenance_envelope_bytes = files.remove(PROVENANCE_ENVELOPE_FILE);
    Ok(Bundle {
        root: label.to_path_buf(),
        receipt_bytes,
        envelope_bytes,
        provenance_envelope_bytes,
        files,
        irregular,
    })
}

impl From<TarRefusal> for BundleErrorKind {
    fn from(refusal: TarRefusal) -> BundleErrorKind {
        match refusal {
            TarRefusal::Malformed(what) => BundleErrorKind::Archive(what),
            TarRefusal::Io(error) => BundleErrorKind::Io(error),
            TarRefusal::TooLarge => BundleErrorKind::TooLarge,
        }
    }
}

/// The entries of an archive, as read.
#[derive(Default)]
struct Found {
    files: BTreeMap<String, Vec<u8>>,
    irregular: BTreeMap<String, &'static str>,
    /// An entry names `receipt.json` as a directory (or something below it).
    receipt_is_dir: bool,
    /// The files read so far (a GNU long name goes with its file), and their bytes.
    count: usize,
    total: u64,
    /// The GNU long name just read (its entry number and the path), for the file after it.
    long: Option<(usize, Vec<u8>)>,
}

/// Every entry of the tar stream, under the directory reader's bounds.
///
/// The headers are read raw (the tar crate applies no extension), and each must be one
/// [`write_archive`] writes: a regular file (type `0`) in a ustar header whose size and mode
/// fields are plain octal, or, just before a file whose path no ustar header holds, a GNU long
/// name as the tar crate's builder writes one ([`long_name`]). Anything else — a PAX header
/// (`x`, `g`), a GNU long link name, a sparse file, a link, a directory, a device, a FIFO,
/// another header format, a mode an extractor cannot read, a checksum that fails — is
/// malformed, named by its number and name: extractors disagree on these (which name a PAX
/// path, a global header or a long name beside one gives), so no file may depend on one.
impl ArchiveContents for Found {
    type Error = BundleErrorKind;

    fn add_entry<R: Read>(
        &mut self,
        number: usize,
        entry: &mut tar::Entry<'_, R>,
    ) -> Result<String, BundleErrorKind> {
        let header_path = entry.header().path_bytes().into_owned();
        let shown = strict_tar::shown_path(entry.header());
        let type_flag = strict_tar::type_flag(entry.header());
        if type_flag == b'L' {
            let refused = |problem: String| {
                BundleErrorKind::Archive(format!(
                    "entry {number} ({shown}) is a GNU long name (type 'L') {problem}; a bundle \
                     archive has one only just before the file whose path a ustar header cannot \
                     hold"
                ))
            };
            if self.long.is_some() {
                return Err(refused("right after another".to_string()));
            }
            self.long = Some((number, long_name(entry, refused)?));
            return Ok(shown);
        }
        let refused = |what: String| {
            BundleErrorKind::Archive(format!(
                "entry {number} ({shown}) is {what}; a bundle archive holds regular files in \
                 ustar headers only"
            ))
        };
        if type_flag != b'0' {
            return Err(refused(strict_tar::kind_of(type_flag)));
        }
        let header = entry.header();
        if let Some(problem) = strict_tar::ustar_problem(header, "a regular file") {
            return Err(refused(problem));
        }
        // A long name stands for the file's path (every reader of GNU long names ignores the
        // header's own); the builder writes its first 100 bytes in the name field.
        let raw = match self.long.take() {
            Some((_, path)) => {
                let name_field = header
                    .as_old()
                    .name
                    .split(|&b| b == 0)
                    .next()
                    .unwrap_or(&[]);
                if name_field.is_empty() || !path.starts_with(name_field) {
                    return Err(refused(format!(
                        "a regular file whose name field does not start the GNU long name \
                         before it ({})",
                        String::from_utf8_lossy(&path)
                    )));
                }
                path
            }
            None => header_path,
        };
        let shown = String::from_utf8_lossy(&raw).into_owned();
        self.count += 1;
        if self.count > MAX_ENTRIES {
            return Err(BundleErrorKind::TooManyEntries);
        }
        let Ok(name) = String::from_utf8(raw) else {
            self.irregular.insert(shown.clone(), "non-utf8-name");
            return Ok(shown);
        };
        if !strict_tar::plain_relative(&name) {
            self.irregular.insert(name, "unsafe-name");
            return Ok(shown);
        }
        if name.split('/').count() > MAX_DEPTH + 1 {
            return Err(BundleErrorKind::TooDeep);
        }
        if name.starts_with("receipt.json/") {
            self.receipt_is_dir = true;
        }
        if self.files.contains_key(&name) || self.irregular.contains_key(&name) {
            // Two entries for one path: which one an extractor keeps is its choice; refuse.
            self.files.remove(&name);
            self.irregular.insert(name, "duplicate-entry");
            return Ok(shown);
        }
        let size = entry.size();
        if size > MAX_FILE_BYTES {
            return Err(BundleErrorKind::FileTooLarge {
                path: name,
                limit: MAX_FILE_BYTES,
            });
        }
        let bytes = strict_tar::read_data(entry, size, &name)?;
        self.total += size;
        if self.total > MAX_TOTAL_BYTES {
            return Err(BundleErrorKind::TooLarge);
        }
        self.files.insert(name, bytes);
        Ok(shown)
    }

    fn end(&mut self) -> Result<(), BundleErrorKind> {
        match self.long {
            Some((number, _)) => Err(BundleErrorKind::Archive(format!(
                "entry {number} (././@LongLink) is a GNU long name (type 'L') followed by no \
                 file; a bundle archive has one only just before the file whose path a ustar \
                 header cannot hold"
            ))),
            None => Ok(()),
        }
    }
}

/// The longest path a bundle directory can have: `MAX_DEPTH + 1` names of at most 255 bytes
/// (`NAME_MAX`), each with its slash. No GNU long name is longer.
const MAX_LONG_NAME_BYTES: u64 = (MAX_DEPTH as u64 + 1) * 256;

/// The path a GNU long name entry gives, if it is one the tar crate's builder writes (and so
/// [`write_archive`]): an old GNU header named `././@LongLink` with a plain octal size, whose
/// data is the path and one NUL, for a path no ustar header holds. Otherwise `refused` says
/// what is wrong with it (its argument finishes "a GNU long name (type 'L') …").
fn long_name<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    refused: impl Fn(String) -> BundleErrorKind,
) -> Result<Vec<u8>, BundleErrorKind> {
    let header = entry.header();
    if header.as_gnu().is_none() {
        return Err(refused("not in an old GNU header".to_string()));
    }
    if header.path_bytes().as_ref() != b"././@LongLink" {
        return Err(refused("not named ././@LongLink".to_string()));
    }
    if !strict_tar::plain_octal(&header.as_old().size) {
        return Err(refused(
            "whose size field is not 11 octal digits".to_string(),
        ));
    }
    let size = entry.size();
    if size > MAX_LONG_NAME_BYTES + 1 {
        return Err(refused(format!(
            "of more than {MAX_LONG_NAME_BYTES} bytes (the longest path a bundle can have)"
        )));
    }
    let mut path = strict_tar::read_data(entry, size, "a GNU long name")?;
    if path.pop() != Some(0) || path.is_empty() || path.contains(&0) {
        return Err(refused(
            "whose name does not end with its one NUL byte".to_string(),
        ));
    }
    if fits_ustar(&path) {
        return Err(refused(format!(
            "for {}, a path a ustar header holds",
            String::from_utf8_lossy(&path)
        )));
    }
    Ok(path)
}

/// A bundle directory, or a bundle archive when `path` is a file.
pub fn read_any(path: &Path) -> Result<Bundle, BundleError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => read_archive(path),
        _ => Bundle::read(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strict_tar::blocks::*;
    use tar::EntryType::{self, *};

    fn sample() -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        files.insert(RECEIPT_FILE.to_string(), b"{}".to_vec());
        files.insert("inputs/matrix.json".to_string(), b"[1]".to_vec());
        files.insert("platforms/linux-amd64/outer/x".to_string(), vec![7; 1000]);
        files
    }

    #[test]
    fn the_archive_is_deterministic_and_reads_back_to_the_same_files() {
        let a = write_archive(&sample(), Vec::new()).unwrap();
        let b = write_archive(&sample(), Vec::new()).unwrap();
        assert_eq!(a, b);
        let bundle = read_archive_from(Path::new("x.tar.gz"), a.as_slice()).unwrap();
        assert_eq!(bundle.receipt_bytes, b"{}");
        let mut expected = sample();
        expected.remove(RECEIPT_FILE);
        assert_eq!(bundle.files, expected);
        assert!(bundle.irregular.is_empty());
    }

    fn raw_tar(entries: &[(&str, EntryType, &[u8])]) -> Vec<u8> {
        gzip(&plain_tar(entries))
    }

    /// The tar stream of `entries` (ustar headers), with its end-of-archive marker.
    fn plain_tar(entries: &[(&str, EntryType, &[u8])]) -> Vec<u8> {
        let mut tar: Vec<u8> = entries
            .iter()
            .flat_map(|(name, kind, bytes)| block(&ustar(name, *kind, bytes.len() as u64), bytes))
            .collect();
        tar.extend_from_slice(&[0; 1024]);
        tar
    }

    fn malformed(gz: &[u8]) -> String {
        match read_archive_from(Path::new("t"), gz) {
            Err(BundleErrorKind::Archive(what)) => what,
            other => panic!("not refused as malformed: {other:?}"),
        }
    }

    /// Why the archive of `entries` is malformed (it must be).
    fn refused(entries: &[Vec<u8>]) -> String {
        malformed(&archive_of(entries))
    }

    const ONLY: &str = "; a bundle archive holds regular files in ustar headers only";

    #[test]
    fn a_second_gzip_member_or_any_byte_after_the_gzip_stream_is_refused() {
        let good = write_archive(&sample(), Vec::new()).unwrap();
        // What `tar xzf` would extract over the first member's file.
        let replacement = raw_tar(&[("inputs/matrix.json", Regular, b"[2]")]);
        for tail in [replacement.as_slice(), b"garbage", b"\0"] {
            let mut archive = good.clone();
            archive.extend_from_slice(tail);
            assert!(
                malformed(&archive).starts_with("bytes follow the gzip stream"),
                "{tail:?}"
            );
        }
    }

    #[test]
    fn a_tar_stream_cut_before_its_marker_or_continued_after_it_is_refused() {
        let entry: &[(&str, EntryType, &[u8])] = &[("receipt.json", Regular, b"{}")];
        let with_marker = plain_tar(entry);
        let body = &with_marker[..with_marker.len() - 1024];
        let tar_with = |tail: &[u8]| gzip(&[body, tail].concat());
        // The writer's form, and tar's own record padding after the marker, are accepted.
        for zeros in [1024, 10240] {
            let bundle = read_archive_from(Path::new("t"), tar_with(&vec![0; zeros]).as_slice());
            assert_eq!(bundle.unwrap().receipt_bytes, b"{}", "{zeros}");
        }
        // No marker, or half of one.
        for zeros in [0, 512] {
            assert!(
                malformed(&tar_with(&vec![0; zeros]))
                    .starts_with("the tar stream does not end with its end-of-archive marker"),
                "{zeros}"
            );
        }
        // Another entry after the marker (a second archive), or after one zero block.
        let second = plain_tar(&[("inputs/matrix.json", Regular, b"[2]")]);
        for zeros in [1024, 512] {
            let tail = [vec![0; zeros], second.clone()].concat();
            assert!(
                malformed(&tar_with(&tail)).starts_with("data follows the tar end-of-archive"),
                "{zeros}"
            );
        }
        // Zeros, but more than a record of them, or not in whole blocks.
        assert!(malformed(&tar_with(&vec![0; 1024 + 10240 + 512])).starts_with("more than 10240"));
        assert!(malformed(&tar_with(&vec![0; 1024 + 100])).contains("not a whole number of 512"));
        // An entry cut short inside its data.
        let cut = gzip(&with_marker[..512 + 1]);
        assert_eq!(
            malformed(&cut),
            "the tar stream ends inside receipt.json (1 of its 2 bytes)"
        );
    }

    #[test]
    fn a_gzip_member_whose_checksum_does_not_match_is_refused() {
        let mut archive = write_archive(&sample(), Vec::new()).unwrap();
        let crc = archive.len() - 8;
        archive[crc] ^= 1;
        let error = read_archive_from(Path::new("t"), archive.as_slice()).unwrap_err();
        assert!(matches!(error, BundleErrorKind::Io(_)), "{error}");
    }

    #[test]
    fn a_receipt_given_twice_or_below_a_name_is_named_as_such() {
        let twice = raw_tar(&[
            ("receipt.json", Regular, b"{}"),
            ("receipt.json", Regular, b"{}"),
        ]);
        let error = read_archive_from(Path::new("t"), twice.as_slice()).unwrap_err();
        assert!(matches!(error, BundleErrorKind::ReceiptTwice), "{error}");
        assert!(error
            .to_string()
            .starts_with("receipt.json appears twice in the archive"));
        let below = raw_tar(&[("receipt.json/x", Regular, b"{}")]);
        let error = read_archive_from(Path::new("t"), below.as_slice()).unwrap_err();
        assert!(
            matches!(error, BundleErrorKind::ReceiptIsADirectory),
            "{error}"
        );
    }

    #[test]
    fn odd_names_and_duplicates_are_irregular_never_files() {
        let gz = raw_tar(&[
            ("receipt.json", Regular, b"{}"),
            ("../escape", Regular, b"x"),
            ("/abs", Regular, b"x"),
            ("a/./b", Regular, b"x"),
            ("twice", Regular, b"1"),
            ("twice", Regular, b"2"),
        ]);
        let bundle = read_archive_from(Path::new("t"), gz.as_slice()).unwrap();
        assert!(bundle.files.is_empty(), "{:?}", bundle.files.keys());
        let kinds: Vec<(&str, &str)> = bundle
            .irregular
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            kinds,
            [
                ("../escape", "unsafe-name"),
                ("/abs", "unsafe-name"),
                ("a/./b", "unsafe-name"),
                ("twice", "duplicate-entry"),
            ]
        );
    }

    #[test]
    fn links_devices_directories_and_every_other_kind_are_refused_naming_the_entry() {
        let receipt = || file("receipt.json", b"{}");
        let mut symlink = ustar("inputs/link", Symlink, 0);
        symlink.set_link_name("/etc/passwd").unwrap();
        symlink.set_cksum();
        let mut hard = ustar("inputs/hard", Link, 0);
        hard.set_link_name("receipt.json").unwrap();
        hard.set_cksum();
        let sparse = old_gnu("inputs/sparse", GNUSparse, 0);
        // The tar crate's `EntryType` writes NUL as `0`: the byte itself.
        let mut pre_posix = ustar("inputs/old", Regular, 1);
        pre_posix.as_old_mut().linkflag = [0];
        pre_posix.set_cksum();
        for (entry, what) in [
            (
                block(&symlink, b""),
                "entry 2 (inputs/link) is a symlink (type '2')",
            ),
            (
                block(&hard, b""),
                "entry 2 (inputs/hard) is a hard link (type '1')",
            ),
            (
                block(&ustar("inputs/tty", Char, 0), b""),
                "entry 2 (inputs/tty) is a character device (type '3')",
            ),
            (
                block(&ustar("inputs/disk", Block, 0), b""),
                "entry 2 (inputs/disk) is a block device (type '4')",
            ),
            (
                block(&ustar("inputs/", Directory, 0), b""),
                "entry 2 (inputs/) is a directory (type '5')",
            ),
            (
                block(&ustar("inputs/fifo", Fifo, 0), b""),
                "entry 2 (inputs/fifo) is a FIFO (type '6')",
            ),
            (
                block(&ustar("inputs/c", Continuous, 1), b"x"),
                "entry 2 (inputs/c) is a contiguous file (type '7')",
            ),
            (
                block(&sparse, b""),
                "entry 2 (inputs/sparse) is a GNU sparse file (type 'S')",
            ),
            (
                block(&pre_posix, b"x"),
                "entry 2 (inputs/old) is an old-style regular file (type NUL)",
            ),
            (
                block(&ustar("inputs/dump", EntryType::new(b'D'), 0), b""),
                "entry 2 (inputs/dump) is an entry of type 'D'",
            ),
            (
                block(&ustar("inputs/odd", EntryType::new(0xff), 0), b""),
                "entry 2 (inputs/odd) is an entry of type 0xff",
            ),
        ] {
            assert_eq!(refused(&[receipt(), entry]), format!("{what}{ONLY}"));
        }
        // The receipt itself, as a link, is refused the same way (not read as a missing file).
        let mut link = ustar("receipt.json", Symlink, 0);
        link.set_link_name("/etc/passwd").unwrap();
        link.set_cksum();
        assert_eq!(
            refused(&[block(&link, b"")]),
            format!("entry 1 (receipt.json) is a symlink (type '2'){ONLY}")
        );
    }

    #[test]
    fn pax_headers_are_refused_naming_the_entry() {
        // A PAX path renames the file after it for a reader that honours PAX (the tar crate,
        // GNU tar); one that does not extracts `inputs/matrix.json` and a file named after the
        // PAX header. Which receipt.json is the bundle's must never depend on the extractor.
        let what = refused(&[
            pax(
                XHeader,
                "PaxHeaders.0/inputs/matrix.json",
                &["path=receipt.json"],
            ),
            file("inputs/matrix.json", b"{}"),
        ]);
        assert_eq!(
            what,
            format!(
                "entry 1 (PaxHeaders.0/inputs/matrix.json) is a PAX extended header (type 'x'){ONLY}"
            )
        );
        // A global header (extractors disagree on whether its path applies, and to what).
        let what = refused(&[
            file("receipt.json", b"{}"),
            pax(XGlobalHeader, "pax_global_header", &["path=inputs/x"]),
            file("inputs/matrix.json", b"[]"),
        ]);
        assert_eq!(
            what,
            format!("entry 2 (pax_global_header) is a PAX global header (type 'g'){ONLY}")
        );
        // A size override (the next header's size field says otherwise: a reader that ignores
        // PAX finds its next header elsewhere), and two in a row.
        let what = refused(&[
            file("receipt.json", b"{}"),
            pax(XHeader, "PaxHeaders.0/a", &["size=0"]),
            pax(XHeader, "PaxHeaders.0/b", &["path=receipt.json"]),
            file("inputs/matrix.json", b"[]"),
        ]);
        assert!(what.starts_with("entry 2 (PaxHeaders.0/a) is a PAX extended header"));
    }

    /// A path of a real bundle's shape whose case id is `id_len` bytes long.
    fn case_path(id_len: usize) -> String {
        format!(
            "platforms/linux-arm64/shards/3/evidence/cases/{}/witness.json",
            "c".repeat(id_len)
        )
    }

    #[test]
    fn a_gnu_long_name_is_refused_unless_it_is_the_one_the_writer_gives() {
        let long = case_path(200);
        let receipt = || file("receipt.json", b"{}");
        let for_long = || gnu_long_name(GNULongName, &long);
        let tail = |what: &str| {
            format!(
                "{what}; a bundle archive has one only just before the file whose path a ustar \
                 header cannot hold"
            )
        };
        // The disguise: a long name for a path a ustar header holds, over another name.
        assert_eq!(
            refused(&[gnu_long_name(GNULongName, "receipt.json"), file("inputs/matrix.json", b"{}")]),
            tail("entry 1 (././@LongLink) is a GNU long name (type 'L') for receipt.json, a path a ustar header holds")
        );
        // A file whose own name is not the start of the long name before it.
        assert_eq!(
            refused(&[receipt(), for_long(), file("inputs/matrix.json", b"[]")]),
            format!(
                "entry 3 (inputs/matrix.json) is a regular file whose name field does not start \
                 the GNU long name before it ({long}){ONLY}"
            )
        );
        // Two in a row (tar-rs refuses, GNU tar takes the last), or none followed by a file.
        assert_eq!(
            refused(&[receipt(), for_long(), for_long(), file(&long[..100], b"[]")]),
            tail("entry 3 (././@LongLink) is a GNU long name (type 'L') right after another")
        );
        assert_eq!(
            refused(&[receipt(), for_long()]),
            tail("entry 2 (././@LongLink) is a GNU long name (type 'L') followed by no file")
        );
        // Followed by a PAX path (GNU tar takes the PAX path, others the long name).
        assert_eq!(
            refused(&[
                receipt(),
                for_long(),
                pax(XHeader, "PaxHeaders.0/x", &["path=inputs/x"]),
                file(&long[..100], b"[]"),
            ]),
            format!("entry 3 (PaxHeaders.0/x) is a PAX extended header (type 'x'){ONLY}")
        );
        // A NUL inside the name (where readers cut it differently), or a long name in a
        // ustar header or under another name than the builder's.
        let mut nul = for_long();
        nul[512 + 10] = 0;
        let mut nul_header = old_gnu("././@LongLink", GNULongName, long.len() as u64 + 1);
        nul_header.set_cksum();
        assert_eq!(
            refused(&[receipt(), nul, file(&long[..100], b"[]")]),
            tail("entry 2 (././@LongLink) is a GNU long name (type 'L') whose name does not end with its one NUL byte")
        );
        let data = [long.as_bytes(), b"\0"].concat();
        let in_ustar = block(
            &ustar("././@LongLink", GNULongName, data.len() as u64),
            &data,
        );
        assert_eq!(
            refused(&[receipt(), in_ustar, file(&long[..100], b"[]")]),
            tail("entry 2 (././@LongLink) is a GNU long name (type 'L') not in an old GNU header")
        );
        let renamed = block(&old_gnu("long", GNULongName, data.len() as u64), &data);
        assert_eq!(
            refused(&[receipt(), renamed, file(&long[..100], b"[]")]),
            tail("entry 2 (long) is a GNU long name (type 'L') not named ././@LongLink")
        );
        // Longer than any path the directory reader could give.
        let huge = format!("{}/x", "a/".repeat(5000));
        assert!(refused(&[
            receipt(),
            gnu_long_name(GNULongName, &huge),
            file(&huge[..100], b"")
        ])
        .starts_with(
            "entry 2 (././@LongLink) is a GNU long name (type 'L') of more than 8448 bytes"
        ));
        // Cut inside its path.
        let cut = [receipt(), for_long()].concat();
        assert_eq!(
            malformed(&gzip(&cut[..1024 + 512 + 10])),
            "the tar stream ends inside a GNU long name (10 of its 260 bytes)"
        );
        // A long link name: no link is ever an entry.
        let what = refused(&[receipt(), gnu_long_name(GNULongLink, &long)]);
        assert_eq!(
            what,
            format!("entry 2 (././@LongLink) is a GNU long link name (type 'K'){ONLY}")
        );
    }

    #[test]
    fn a_regular_file_in_another_header_format_is_refused() {
        assert_eq!(
            refused(&[block(&old_gnu("receipt.json", Regular, 2), b"{}")]),
            format!("entry 1 (receipt.json) is a regular file in an old GNU header{ONLY}")
        );
        let mut v7 = tar::Header::new_old();
        fill(&mut v7, "receipt.json", Regular, 2);
        assert_eq!(
            refused(&[block(&v7, b"{}")]),
            format!("entry 1 (receipt.json) is a regular file in a header without the ustar magic{ONLY}")
        );
    }

    #[test]
    fn a_header_whose_checksum_fails_or_whose_size_is_not_plain_octal_is_refused() {
        let receipt = || file("receipt.json", b"{}");
        let mut flipped = file("inputs/matrix.json", b"[]");
        flipped[0] = b'j';
        assert_eq!(
            refused(&[receipt(), flipped]),
            "entry 2 (after receipt.json): its tar header is unreadable (archive header checksum \
             mismatch)"
        );
        // The size in base-256 (GNU's form for sizes of 8 GiB and more) and in octal padded
        // with spaces: the same number for the tar crate, but never what the writer gives.
        let mut binary = ustar("inputs/matrix.json", Regular, 0);
        binary.as_old_mut().size = [0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
        binary.set_cksum();
        let mut spaced = ustar("inputs/matrix.json", Regular, 0);
        spaced.as_old_mut().size = *b"          2 ";
        spaced.set_cksum();
        for header in [binary, spaced] {
            assert_eq!(
                refused(&[receipt(), block(&header, b"[]")]),
                format!(
                    "entry 2 (inputs/matrix.json) is a regular file whose size field is not 11 \
                     octal digits{ONLY}"
                )
            );
        }
    }

    #[test]
    fn the_writers_long_names_read_back_as_written() {
        // A case id of 109 bytes is the longest whose path a ustar header holds (its prefix
        // field takes up to `…/cases/<id>`, 155 bytes); from 110 on, and a native scenario of
        // 128 bytes (the most its validator allows), the writer gives a GNU long name.
        let mut files = sample();
        for id_len in [87, 88, 109, 110, 240] {
            files.insert(case_path(id_len), vec![1; id_len]);
        }
        let native = format!(
            "native/claude-code-linux-amd64/evidence/native/{}/read-only/inventory/witness.json",
            "s".repeat(128)
        );
        files.insert(native, b"{}".to_vec());
        let gz = write_archive(&files, Vec::new()).unwrap();
        let bundle = read_archive_from(Path::new("t"), gz.as_slice()).unwrap();
        let mut expected = files.clone();
        expected.remove(RECEIPT_FILE);
        assert_eq!(bundle.files, expected);
        assert!(bundle.irregular.is_empty());
        assert_eq!(long_names(&gz), 3);
    }

    /// How many GNU long-name entries the archive `gz` holds (read raw).
    fn long_names(gz: &[u8]) -> usize {
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(gz));
        tar.entries()
            .unwrap()
            .raw(true)
            .filter(|e| e.as_ref().unwrap().header().entry_type() == GNULongName)
            .count()
    }

    #[test]
    fn a_long_name_is_taken_exactly_where_the_writer_writes_one() {
        // Paths around both of ustar's bounds (a 100-byte name field, a 155-byte prefix), in
        // one name and split at every place: `fits_ustar` must say "no" exactly when the
        // builder wrote a long name, and the reader must take every such archive.
        let mut paths: Vec<String> = (90..=110).map(|n| "n".repeat(n)).collect();
        paths.extend((1..=250).map(case_path));
        for prefix in 150..=160 {
            for name in [1, 99, 100, 101] {
                paths.push(format!("{}/{}", "p".repeat(prefix), "n".repeat(name)));
            }
        }
        for path in paths {
            let files = BTreeMap::from([(path.clone(), b"x".to_vec())]);
            let gz = write_archive(&files, Vec::new()).unwrap();
            assert_eq!(long_names(&gz) == 0, fits_ustar(path.as_bytes()), "{path}");
            let read = read_archive_from(Path::new("t"), gz.as_slice());
            assert!(
                matches!(read, Err(BundleErrorKind::NoReceipt)),
                "{path}: {read:?}"
            );
        }
    }

    #[test]
    fn an_archive_without_a_receipt_or_with_a_huge_member_is_refused() {
        let gz = raw_tar(&[("inputs/matrix.json", Regular, b"{}")]);
        assert!(matches!(
            read_archive_from(Path::new("t"), gz.as_slice()),
            Err(BundleErrorKind::NoReceipt)
        ));
        // A header claiming more than the per-file bound is refused before any byte is read.
        let header = ustar("big", Regular, MAX_FILE_BYTES + 1);
        let mut tar = header.as_bytes().to_vec();
        tar.extend_from_slice(&[0; 1024]);
        let error = read_archive_from(Path::new("t"), gzip(&tar).as_slice()).unwrap_err();
        assert_eq!(error.to_string(), "big is larger than 67108864 bytes");
        // Not gzip at all.
        assert!(read_archive_from(Path::new("t"), &b"not an archive"[..]).is_err());
    }
}
