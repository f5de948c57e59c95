//! The candidate archive format, shared by the orchestrator (which writes it, and reads back a
//! `--candidate` archive or a kept one) and the verifier (which unpacks the bundled blob to
//! regenerate the image layer): a deterministic `.tar.gz` holding `bin/mcpscope` (sorted
//! entries, each in a ustar header, its parent directories 0755, mtime 0, uid/gid 0, modes
//! normalized to 0755 or 0644, gzip header without time or name), its runtime manifest (every
//! file's path, size, mode and sha256), and a bounded reader that takes exactly that format and
//! nothing else (strictly framed, headers read raw: no PAX or GNU extension header, link,
//! device, other mode or header format; plain relative paths, none twice, no empty directory),
//! so an auditor extracting the archive sees the files the verifier checked, by the same names.
//! It never touches the filesystem.

use crate::digest::sha256_hex;
use crate::receipt::{NamedDigest, PackManifest, RuntimeFile};
use crate::strict_tar::{self, ArchiveContents, TarRefusal};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};

/// Where the candidate binary sits inside the archive (and below `layout::CANDIDATE_DIR`).
pub const ARCHIVE_BIN: &str = "bin/mcpscope";
/// Bounds on what a candidate archive may hold, compressed and unpacked.
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
pub const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;
pub const MAX_ENTRIES: usize = 10_000;

/// Why an archive was refused; fits "failed to read candidate archive {name}: {problem}".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("read candidate archive {name}: {problem}")]
pub struct ArchiveError {
    pub name: String,
    pub problem: String,
}

/// One regular file inside the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFile {
    /// Relative, `/`-separated, e.g. "bin/mcpscope".
    pub path: String,
    /// Normalized permission bits: 0o755 or 0o644.
    pub mode: u32,
    pub bytes: Vec<u8>,
}

/// The runtime manifest of `files` and the archive's identity.
pub fn manifest(name: &str, archive: &[u8], files: &[ArchiveFile]) -> PackManifest {
    let mut runtime: Vec<RuntimeFile> = files
        .iter()
        .map(|f| RuntimeFile {
            path: f.path.clone(),
            size: f.bytes.len() as u64,
            mode: format!("{:04o}", f.mode),
            sha256: sha256_hex(&f.bytes),
        })
        .collect();
    runtime.sort_by(|a, b| a.path.cmp(&b.path));
    let runtime_manifest_sha256 =
        sha256_hex(&serde_json::to_vec(&runtime).expect("a runtime manifest always serializes"));
    PackManifest {
        schema_version: 1,
        archive: NamedDigest {
            name: name.to_string(),
            sha256: sha256_hex(archive),
        },
        archive_size: archive.len() as u64,
        runtime_manifest_sha256,
        runtime,
    }
}

/// Deterministic `.tar.gz` of `files`: parent directories (0755) added, entries sorted by
/// path, each in a ustar header (its path in the name field, or split into prefix and name),
/// mtime 0, uid/gid 0, no user or group names, modes normalized; gzip header with mtime 0 and
/// no name. Exactly what [`read_archive`] takes.
///
/// # Panics
///
/// If a path is not relative or no ustar header holds it (over 100 bytes, and no `/` splits it
/// into a prefix of at most 155 and a name of at most 100): the tar crate's builder would give
/// it a GNU long name, which the reader refuses. The orchestrator packs `bin/mcpscope`.
pub fn write_archive(files: &[ArchiveFile]) -> Vec<u8> {
    let mut entries: Vec<(String, Option<&ArchiveFile>)> = Vec::new();
    for file in files {
        let parts: Vec<&str> = file.path.split('/').collect();
        for depth in 1..parts.len() {
            let dir = format!("{}/", parts[..depth].join("/"));
            if !entries.iter().any(|(p, _)| *p == dir) {
                entries.push((dir, None));
            }
        }
        entries.push((file.path.clone(), Some(file)));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));

    let mut tar = tar::Builder::new(Vec::new());
    for (path, file) in entries {
        let mut header = tar::Header::new_ustar();
        // In the header itself, never in a GNU long name (`append_data` writes one for a path
        // too long; this gives the same bytes for every other path).
        if let Err(error) = header.set_path(&path) {
            panic!("candidate archive path {path:?} does not fit a ustar header: {error}");
        }
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        match file {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                header.set_cksum();
                tar.append(&header, std::io::empty())
            }
            Some(file) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(normalize_mode(file.mode));
                header.set_size(file.bytes.len() as u64);
                header.set_cksum();
                tar.append(&header, file.bytes.as_slice())
            }
        }
        .expect("writing a tar into memory cannot fail");
    }
    let tar_bytes = tar
        .into_inner()
        .expect("finishing an in-memory tar cannot fail");

    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar_bytes)
        .expect("compressing into memory cannot fail");
    gz.finish().expect("compressing into memory cannot fail")
}

/// 0o755 when any execute bit is set, else 0o644.
pub fn normalize_mode(mode: u32) -> u32 {
    if mode & 0o111 != 0 {
        0o755
    } else {
        0o644
    }
}

/// Read and vet a candidate archive: exactly the format [`write_archive`] gives, and an
/// executable `bin/mcpscope`.
///
/// The `.tar.gz` is read strictly (`strict_tar`: one gzip member and nothing after it, one tar
/// stream ending with its end-of-archive marker and at most a record of zero padding, headers
/// read raw, at most [`MAX_UNPACKED_BYTES`] unpacked, at most [`MAX_ENTRIES`] entries), and
/// its entries are those `scopebox pack` writes, in ustar headers with plain octal sizes and
/// modes: regular files (type `0`) of mode 0755 or 0644, and directories (type `5`, a trailing
/// `/`, mode 0755, no data) each holding a file. Every path is relative and made of plain names
/// (no `/` first, no empty, `.` or `..` name), and no path is given twice or lies below a file.
/// Anything else — a PAX header (`x`, `g`), a GNU long name or long link name, a symlink, a
/// hard link, a device, a FIFO, a sparse file, an old GNU or pre-POSIX header, another mode, a
/// checksum that fails — is refused, the entry named by its number and the path its header
/// gives: an extractor (`tar xzf` honours PAX paths and long names; another may not) could see
/// files, or names, the verifier did not check.
pub fn read_archive(name: &str, bytes: &[u8]) -> Result<Vec<ArchiveFile>, ArchiveError> {
    let invalid = |problem: String| ArchiveError {
        name: name.to_string(),
        problem,
    };
    let mut contents = CandidateContents::default();
    strict_tar::read_tar_gz(
        bytes,
        MAX_UNPACKED_BYTES,
        "a candidate archive",
        &mut contents,
    )
    .map_err(|Problem(problem)| invalid(problem))?;
    // Sorted by path (a map's order).
    let files: Vec<ArchiveFile> = contents.files.into_values().map(|(_, f)| f).collect();
    match files.iter().find(|f| f.path == ARCHIVE_BIN) {
        None => return Err(invalid(format!("no {ARCHIVE_BIN}"))),
        Some(f) if f.mode & 0o111 == 0 => {
            return Err(invalid(format!("{ARCHIVE_BIN} is not executable")))
        }
        Some(_) => {}
    }
    Ok(files)
}

/// What follows "entry N (path) is …" when a candidate archive holds an entry `scopebox pack`
/// never writes.
const PACKED_ONLY: &str = "; a candidate archive holds only what scopebox pack writes: regular \
                           files (mode 0755 or 0644) and their directories (mode 0755), in \
                           ustar headers";

/// Why a candidate archive is refused: the `problem` of its [`ArchiveError`].
struct Problem(String);

impl From<TarRefusal> for Problem {
    fn from(refusal: TarRefusal) -> Problem {
        Problem(match refusal {
            TarRefusal::Malformed(problem) => problem,
            TarRefusal::Io(error) => format!("not a gzip'd tar ({error})"),
            TarRefusal::TooLarge => format!("unpacks to more than {MAX_UNPACKED_BYTES} bytes"),
        })
    }
}

/// The entries of a candidate archive as read: its files and directories by path (without the
/// directory's trailing `/`), each with its entry number, and how many entries came.
#[derive(Default)]
struct CandidateContents {
    files: BTreeMap<String, (usize, ArchiveFile)>,
    directories: BTreeMap<String, usize>,
    entries: usize,
}

impl ArchiveContents for CandidateContents {
    type Error = Problem;

    fn add_entry<R: Read>(
        &mut self,
        number: usize,
        entry: &mut tar::Entry<'_, R>,
    ) -> Result<String, Problem> {
        let header = entry.header();
        let shown = strict_tar::shown_path(header);
        let refused =
            |what: String| Problem(format!("entry {number} ({shown}) is {what}{PACKED_ONLY}"));
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(Problem(format!("more than {MAX_ENTRIES} entries")));
        }
        let type_flag = strict_tar::type_flag(header);
        let (noun, modes, mode_names) = match type_flag {
            b'0' => ("a regular file", &[0o755, 0o644][..], "0755 or 0644"),
            b'5' => ("a directory", &[0o755][..], "0755"),
            other => return Err(refused(strict_tar::kind_of(other))),
        };
        let directory = type_flag == b'5';
        if let Some(problem) = strict_tar::ustar_problem(header, noun) {
            return Err(refused(problem));
        }
        let mode = header.mode().unwrap_or(u32::MAX);
        if !modes.contains(&mode) {
            return Err(refused(format!(
                "{noun} of mode {mode:04o}, not {mode_names}"
            )));
        }
        let raw = header.path_bytes();
        let Ok(path) = std::str::from_utf8(&raw) else {
            return Err(refused(format!("{noun} whose path is not UTF-8")));
        };
        let path = if directory {
            path.strip_suffix('/')
        } else {
            Some(path)
        };
        let Some(path) = path.filter(|p| strict_tar::plain_relative(p)) else {
            return Err(refused(format!(
                "{noun} at an unsafe path (absolute, or an empty, . or .. name in it{})",
                if directory { ", or no trailing /" } else { "" }
            )));
        };
        let path = path.to_string();
        if self.files.contains_key(&path) || self.directories.contains_key(&path) {
            return Err(refused(format!("{noun} at a path an earlier entry gives")));
        }
        let size = entry.size();
        if directory {
            if size != 0 {
                return Err(refused(format!("a directory of {size} bytes")));
            }
            self.directories.insert(path, number);
            return Ok(shown);
        }
        let bytes = strict_tar::read_data(entry, size, &path)?;
        let file = ArchiveFile {
            path: path.clone(),
            mode,
            bytes,
        };
        self.files.insert(path, (number, file));
        Ok(shown)
    }

    /// Where the paths meet: no entry below a regular file (an extractor would replace the file
    /// with a directory, or fail), and no directory without a file below it (an extractor would
    /// make one the runtime manifest does not list).
    fn end(&mut self) -> Result<(), Problem> {
        // The regular file a path lies below, if any.
        let below_a_file = |path: &str| {
            path.match_indices('/')
                .map(|(at, _)| path[..at].to_string())
                .find(|parent| self.files.contains_key(parent))
        };
        for (path, (number, _)) in &self.files {
            if let Some(parent) = below_a_file(path) {
                return Err(Problem(format!(
                    "entry {number} ({path}) is a regular file below the regular file \
                     {parent}{PACKED_ONLY}"
                )));
            }
        }
        let holding: BTreeSet<&str> = self
            .files
            .keys()
            .flat_map(|path| path.match_indices('/').map(|(at, _)| &path[..at]))
            .collect();
        for (path, number) in &self.directories {
            let what = match below_a_file(path) {
                Some(parent) => format!("a directory below the regular file {parent}"),
                None if !holding.contains(path.as_str()) => "a directory holding no file".into(),
                None => continue,
            };
            return Err(Problem(format!(
                "entry {number} ({path}/) is {what}{PACKED_ONLY}"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strict_tar::blocks::{archive_of, block, gnu_long_name, gzip, old_gnu, pax, ustar};
    use tar::EntryType::{self, *};

    fn sample() -> Vec<ArchiveFile> {
        vec![ArchiveFile {
            path: ARCHIVE_BIN.into(),
            mode: 0o700,
            bytes: b"\x7fELF pretend".to_vec(),
        }]
    }

    #[test]
    fn packing_twice_gives_identical_bytes() {
        let a = write_archive(&sample());
        let b = write_archive(&sample());
        assert_eq!(a, b);
        // gzip header: magic, CM, FLG (no name), MTIME = 0, XFL, OS = 255.
        assert_eq!(&a[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&a[4..8], &[0, 0, 0, 0]);
        assert_eq!(a[9], 255);
    }

    #[test]
    fn archive_entries_are_sorted_with_normalized_metadata() {
        let files = vec![
            ArchiveFile {
                path: "share/z.txt".into(),
                mode: 0o600,
                bytes: b"z".to_vec(),
            },
            sample().remove(0),
        ];
        let bytes = write_archive(&files);
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            assert_eq!(h.mtime().unwrap(), 0);
            assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
            seen.push((
                entry.path().unwrap().to_string_lossy().into_owned(),
                h.mode().unwrap(),
            ));
        }
        assert_eq!(
            seen,
            vec![
                ("bin/".to_string(), 0o755),
                ("bin/mcpscope".to_string(), 0o755),
                ("share/".to_string(), 0o755),
                ("share/z.txt".to_string(), 0o644),
            ]
        );
    }

    #[test]
    fn manifest_lists_every_file_and_binds_the_archive() {
        let files = vec![ArchiveFile {
            path: ARCHIVE_BIN.into(),
            mode: 0o755,
            bytes: b"binary".to_vec(),
        }];
        let bytes = write_archive(&files);
        let m = manifest("c.tar.gz", &bytes, &files);
        assert_eq!(m.archive.sha256, sha256_hex(&bytes));
        assert_eq!(m.archive_size, bytes.len() as u64);
        assert_eq!(m.runtime.len(), 1);
        assert_eq!(m.runtime[0].path, "bin/mcpscope");
        assert_eq!(m.runtime[0].mode, "0755");
        assert_eq!(m.runtime[0].sha256, sha256_hex(b"binary"));
        assert_eq!(
            m.runtime_manifest_sha256,
            sha256_hex(&serde_json::to_vec(&m.runtime).unwrap())
        );
        // Reading it back gives the same files.
        let back = read_archive("x", &bytes).unwrap();
        assert_eq!(back, files);
    }

    /// An entry as [`write_archive`] writes one: `kind` named `name` (written raw into the
    /// name field), of mode `mode`, holding `data`.
    fn packed(name: &str, kind: EntryType, mode: u32, data: &[u8]) -> Vec<u8> {
        let mut header = ustar(name, kind, data.len() as u64);
        header.set_mode(mode);
        header.set_cksum();
        block(&header, data)
    }

    fn bin_dir() -> Vec<u8> {
        packed("bin/", Directory, 0o755, b"")
    }

    fn bin() -> Vec<u8> {
        packed(ARCHIVE_BIN, Regular, 0o755, b"\x7fELF pretend")
    }

    /// Why the candidate archive of `entries` is refused (it must be).
    fn refused(entries: &[Vec<u8>]) -> String {
        refused_bytes(&archive_of(entries))
    }

    fn refused_bytes(archive: &[u8]) -> String {
        match read_archive("c.tar.gz", archive) {
            Ok(files) => panic!("accepted: {files:?}"),
            Err(error) => error.problem,
        }
    }

    /// `entry` (a header block and its data) with the header edited by `edit`, checksum reset.
    fn edited(entry: &[u8], edit: impl FnOnce(&mut tar::Header)) -> Vec<u8> {
        let mut header = tar::Header::new_old();
        header.as_mut_bytes().copy_from_slice(&entry[..512]);
        edit(&mut header);
        header.set_cksum();
        [header.as_bytes().as_slice(), &entry[512..]].concat()
    }

    #[test]
    fn the_packed_form_is_read_and_a_path_split_into_prefix_and_name_too() {
        let files = read_archive("c.tar.gz", &archive_of(&[bin_dir(), bin()])).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(
            (files[0].path.as_str(), files[0].mode),
            (ARCHIVE_BIN, 0o755)
        );
        // 137 bytes (its parent 128): the writer splits it into the ustar prefix and name, no
        // GNU long name.
        let deep = format!("share/{}/{}/notes.txt", "d".repeat(90), "e".repeat(30));
        let files = vec![
            sample().remove(0),
            ArchiveFile {
                path: deep.clone(),
                mode: 0o644,
                bytes: b"n".to_vec(),
            },
        ];
        let bytes = write_archive(&files);
        let tar_bytes = {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes.as_slice())
                .read_to_end(&mut out)
                .unwrap();
            out
        };
        let mut raw = tar::Archive::new(tar_bytes.as_slice());
        for entry in raw.entries().unwrap().raw(true) {
            let entry = entry.unwrap();
            assert!(entry.header().as_ustar().is_some());
            let flag = strict_tar::type_flag(entry.header());
            assert!(flag == b'0' || flag == b'5', "{flag}");
        }
        let back = read_archive("c.tar.gz", &bytes).unwrap();
        assert_eq!(
            back.iter().map(|f| &f.path).collect::<Vec<_>>(),
            [ARCHIVE_BIN, &deep]
        );
    }

    #[test]
    #[should_panic(expected = "does not fit a ustar header")]
    fn the_writer_gives_no_path_a_gnu_long_name() {
        write_archive(&[ArchiveFile {
            path: format!("share/{}", "d".repeat(160)),
            mode: 0o644,
            bytes: Vec::new(),
        }]);
    }

    #[test]
    fn extension_headers_links_and_every_other_kind_are_refused_naming_the_entry() {
        let hostile: [(Vec<u8>, &str); 14] = [
            (
                pax(XHeader, "bin/PaxHeaders/mcpscope", &["path=bin/mcpscope"]),
                "entry 2 (bin/PaxHeaders/mcpscope) is a PAX extended header (type 'x')",
            ),
            (
                pax(XGlobalHeader, "pax_global_header", &["comment=x"]),
                "entry 2 (pax_global_header) is a PAX global header (type 'g')",
            ),
            (
                gnu_long_name(GNULongName, ARCHIVE_BIN),
                "entry 2 (././@LongLink) is a GNU long name (type 'L')",
            ),
            (
                gnu_long_name(GNULongLink, ARCHIVE_BIN),
                "entry 2 (././@LongLink) is a GNU long link name (type 'K')",
            ),
            (
                packed("bin/sh", Symlink, 0o755, b""),
                "entry 2 (bin/sh) is a symlink (type '2')",
            ),
            (
                packed("bin/again", Link, 0o755, b""),
                "entry 2 (bin/again) is a hard link (type '1')",
            ),
            (
                packed("bin/tty", Char, 0o644, b""),
                "entry 2 (bin/tty) is a character device (type '3')",
            ),
            (
                packed("bin/sda", Block, 0o644, b""),
                "entry 2 (bin/sda) is a block device (type '4')",
            ),
            (
                packed("bin/pipe", Fifo, 0o644, b""),
                "entry 2 (bin/pipe) is a FIFO (type '6')",
            ),
            (
                packed("bin/c", Continuous, 0o755, b"x"),
                "entry 2 (bin/c) is a contiguous file (type '7')",
            ),
            (
                packed("bin/s", GNUSparse, 0o755, b""),
                "entry 2 (bin/s) is a GNU sparse file (type 'S')",
            ),
            (
                packed("bin/v", EntryType::new(b'V'), 0o644, b""),
                "entry 2 (bin/v) is an entry of type 'V'",
            ),
            (
                edited(&packed("bin/old", Regular, 0o755, b"x"), |h| {
                    h.as_old_mut().linkflag = [0]
                }),
                "entry 2 (bin/old) is an old-style regular file (type NUL)",
            ),
            (
                packed("bin/ctl", EntryType::new(0x01), 0o644, b""),
                "entry 2 (bin/ctl) is an entry of type 0x01",
            ),
        ];
        for (entry, named) in hostile {
            let problem = refused(&[bin_dir(), entry, bin()]);
            assert_eq!(problem, format!("{named}{PACKED_ONLY}"));
        }
    }

    #[test]
    fn another_header_format_a_number_not_plain_octal_or_another_mode_is_refused() {
        let gnu = {
            let mut header = old_gnu(ARCHIVE_BIN, Regular, 3);
            header.set_mode(0o755);
            header.set_cksum();
            block(&header, b"elf")
        };
        let pre_posix = edited(&bin(), |h| {
            h.as_mut_bytes()[257..265].fill(0);
        });
        let base256_size = edited(&bin(), |h| {
            let size = &mut h.as_old_mut().size;
            size.fill(0);
            size[0] = 0x80;
            size[11] = 12;
        });
        let spaced_mode = edited(&bin(), |h| h.as_old_mut().mode = *b" 000755 ");
        let cases: [(Vec<u8>, Vec<u8>, &str); 8] = [
            (
                bin_dir(),
                gnu,
                "entry 2 (bin/mcpscope) is a regular file in an old GNU header",
            ),
            (
                bin_dir(),
                pre_posix,
                "entry 2 (bin/mcpscope) is a regular file in a header without the ustar magic",
            ),
            (
                bin_dir(),
                base256_size,
                "entry 2 (bin/mcpscope) is a regular file whose size field is not 11 octal digits",
            ),
            (
                bin_dir(),
                spaced_mode,
                "entry 2 (bin/mcpscope) is a regular file whose mode field is not 7 octal digits",
            ),
            (
                bin_dir(),
                packed(ARCHIVE_BIN, Regular, 0o4755, b"elf"),
                "entry 2 (bin/mcpscope) is a regular file of mode 4755, not 0755 or 0644",
            ),
            (
                bin_dir(),
                packed(ARCHIVE_BIN, Regular, 0o775, b"elf"),
                "entry 2 (bin/mcpscope) is a regular file of mode 0775, not 0755 or 0644",
            ),
            (
                packed("bin/", Directory, 0o1777, b""),
                bin(),
                "entry 1 (bin/) is a directory of mode 1777, not 0755",
            ),
            (
                packed("bin/", Directory, 0o755, b"data"),
                bin(),
                "entry 1 (bin/) is a directory of 4 bytes",
            ),
        ];
        for (first, second, named) in cases {
            assert_eq!(refused(&[first, second]), format!("{named}{PACKED_ONLY}"));
        }
    }

    #[test]
    fn unsafe_paths_repeated_paths_files_as_directories_and_empty_directories_are_refused() {
        let file = |name: &str| packed(name, Regular, 0o644, b"x");
        let cases: [(Vec<Vec<u8>>, String); 12] = [
            (
                vec![file("../x"), bin_dir(), bin()],
                "entry 1 (../x) is a regular file at an unsafe path (absolute, or an empty, . or \
                 .. name in it)"
                    .into(),
            ),
            (
                vec![file("/etc/x"), bin_dir(), bin()],
                "entry 1 (/etc/x) is a regular file at an unsafe path (absolute, or an empty, . \
                 or .. name in it)"
                    .into(),
            ),
            (
                vec![bin_dir(), packed("./bin/mcpscope", Regular, 0o755, b"x")],
                "entry 2 (./bin/mcpscope) is a regular file at an unsafe path (absolute, or an \
                 empty, . or .. name in it)"
                    .into(),
            ),
            (
                vec![bin_dir(), packed("bin//mcpscope", Regular, 0o755, b"x")],
                "entry 2 (bin//mcpscope) is a regular file at an unsafe path (absolute, or an \
                 empty, . or .. name in it)"
                    .into(),
            ),
            (
                vec![packed("bin", Directory, 0o755, b""), bin()],
                "entry 1 (bin) is a directory at an unsafe path (absolute, or an empty, . or .. \
                 name in it, or no trailing /)"
                    .into(),
            ),
            (vec![bin_dir(), bin(), file("bin/caf\u{e9}")], String::new()),
            (
                vec![
                    bin_dir(),
                    bin(),
                    edited(&file("bin/x"), |h| h.as_old_mut().name[5] = 0xff),
                ],
                "entry 3 (bin/x\u{fffd}) is a regular file whose path is not UTF-8".into(),
            ),
            (
                vec![bin_dir(), bin(), bin()],
                "entry 3 (bin/mcpscope) is a regular file at a path an earlier entry gives".into(),
            ),
            (
                vec![
                    bin_dir(),
                    bin(),
                    packed("bin/mcpscope/", Directory, 0o755, b""),
                ],
                "entry 3 (bin/mcpscope/) is a directory at a path an earlier entry gives".into(),
            ),
            (
                vec![bin_dir(), bin(), file("bin/mcpscope/x")],
                "entry 3 (bin/mcpscope/x) is a regular file below the regular file bin/mcpscope"
                    .into(),
            ),
            (
                vec![
                    bin_dir(),
                    bin(),
                    packed("bin/mcpscope/d/", Directory, 0o755, b""),
                ],
                "entry 3 (bin/mcpscope/d/) is a directory below the regular file bin/mcpscope"
                    .into(),
            ),
            (
                vec![bin_dir(), bin(), packed("share/", Directory, 0o755, b"")],
                "entry 3 (share/) is a directory holding no file".into(),
            ),
        ];
        for (entries, named) in cases {
            if named.is_empty() {
                // A name outside ASCII is still a plain name.
                assert!(read_archive("c.tar.gz", &archive_of(&entries)).is_ok());
                continue;
            }
            assert_eq!(refused(&entries), format!("{named}{PACKED_ONLY}"));
        }
    }

    #[test]
    fn the_framing_is_exactly_the_writers() {
        let good = archive_of(&[bin_dir(), bin()]);
        // Another member holding another binary, or any byte after the gzip stream.
        let another = write_archive(&[ArchiveFile {
            path: ARCHIVE_BIN.into(),
            mode: 0o755,
            bytes: b"\x7fELF other".to_vec(),
        }]);
        for tail in [another.as_slice(), b"garbage", b"\0"] {
            let problem = refused_bytes(&[good.as_slice(), tail].concat());
            assert!(
                problem.starts_with(
                    "bytes follow the gzip stream (another gzip member or trailing data); a \
                     candidate archive is one gzip member and nothing after it"
                ),
                "{problem}"
            );
        }
        let body = [bin_dir(), bin()].concat();
        let with = |tail: &[u8]| gzip(&[body.as_slice(), tail].concat());
        assert!(refused_bytes(&with(b"")).contains("does not end with its end-of-archive marker"));
        assert!(refused_bytes(&with(&[0; 512])).contains("does not end with its end-of-archive"));
        let after = [vec![0; 1024], bin()].concat();
        assert!(refused_bytes(&with(&after)).starts_with("data follows the tar end-of-archive"));
        let padded = vec![0; 1024 + strict_tar::TAR_RECORD as usize + 512];
        assert!(refused_bytes(&with(&padded)).starts_with("more than 10240 bytes of zeros"));
        // tar's own record padding is taken.
        assert!(read_archive("c.tar.gz", &with(&[0; 10240])).is_ok());
        let mut bad_sum = bin();
        bad_sum[0] = b'c';
        assert_eq!(
            refused(&[bin_dir(), bad_sum]),
            "entry 2 (after bin/): its tar header is unreadable (archive header checksum \
             mismatch)"
        );
        assert!(refused_bytes(b"junk").starts_with("not a gzip'd tar ("));
        let cut = &good[..good.len() - 12];
        assert!(read_archive("c.tar.gz", cut).is_err());
    }

    #[test]
    fn an_archive_without_an_executable_binary_is_refused() {
        assert_eq!(
            refused(&[bin_dir()]),
            "entry 1 (bin/) is a directory holding no file".to_string() + PACKED_ONLY
        );
        let data = packed(ARCHIVE_BIN, Regular, 0o644, b"elf");
        assert_eq!(
            refused(&[bin_dir(), data]),
            "bin/mcpscope is not executable"
        );
        let other = packed("LICENSE", Regular, 0o644, b"text");
        assert_eq!(refused(&[other]), "no bin/mcpscope");
        let error = read_archive("junk", b"junk").unwrap_err();
        assert_eq!(error.name, "junk");
    }
}
