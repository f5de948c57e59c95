//! The candidate: built from this workspace (`build_candidate`, the one function `scopebox pack`
//! and `scopebox run` both call, so they ship and test the same bytes) or read from an existing
//! archive given with `--candidate … --expect-sha256 …` (refusing a digest mismatch before
//! anything else happens), per platform. The archive format itself — deterministic `.tar.gz`,
//! runtime manifest, the bounded reader — is `scopebox_receipts::archive`, shared with the
//! verifier. It never talks to the engine and never extracts to disk.

use crate::toolchain::{self, BuildError};
use scopebox_receipts::archive::{self, ArchiveFile, ARCHIVE_BIN, MAX_ARCHIVE_BYTES};
use scopebox_schema::digest::{is_sha256_hex, sha256_hex};
use scopebox_schema::platform::{self, Platform};
use scopebox_schema::receipt::PackManifest;
use std::path::{Path, PathBuf};

pub const PACK_MANIFEST_NAME: &str = "pack-manifest.json";

/// The name `scopebox pack` gives a platform's archive: `mcpscope-<ver>-<machine>-linux.tar.gz`
/// (`x86_64`, `aarch64`).
pub fn archive_name(platform: Platform) -> String {
    format!(
        "mcpscope-{}-{}-linux.tar.gz",
        env!("CARGO_PKG_VERSION"),
        platform.machine()
    )
}

/// The pack manifest's file name beside a platform's archive when several are written to one
/// directory: `pack-manifest-<machine>.json`; `pack-manifest.json` when there is one.
pub fn manifest_name(platform: Platform, several: bool) -> String {
    if several {
        format!("pack-manifest-{}.json", platform.machine())
    } else {
        PACK_MANIFEST_NAME.to_string()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("read candidate archive {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("accept --expect-sha256 {given:?}: expected 64 hex digits")]
    BadDigest { given: String },
    #[error("accept candidate archive {path}: its sha256 is {actual}, expected {expected}")]
    Mismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{0}")]
    Invalid(#[from] archive::ArchiveError),
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl PackError {
    /// A refusal of the input given (nothing was run), as opposed to a failure while working.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            PackError::BadDigest { .. } | PackError::Mismatch { .. } | PackError::Invalid(_)
        )
    }
}

/// A candidate archive with its identity, platform and contents, vetted.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub platform: Platform,
    pub name: String,
    pub bytes: Vec<u8>,
    pub files: Vec<ArchiveFile>,
    pub manifest: PackManifest,
}

/// The `mcpscope` of `platform` that `toolchain::build_shipped` built, packed. `scopebox pack`,
/// `build`, `run` and `native` all build with that one invocation: the same sources give the
/// same archive digest whichever command packed it.
pub fn built_candidate(root: &Path, platform: Platform) -> Result<Candidate, BuildError> {
    let binary = toolchain::read_bin(root, platform, "mcpscope")?;
    let packed = PackedArchives::in_dir(toolchain::static_target_dir(root).join(PACKED_DIR));
    Ok(Candidate::from_binary_reusing(platform, binary, &packed))
}

/// The directory below the static target directory where packed archives are kept for reuse.
pub const PACKED_DIR: &str = "scopebox-packed";

/// Archives packed earlier, kept so that a warm run does not compress the same binary again
/// (gzip of a 2.5 MB binary is ~0.1 s per platform on every run). An entry is named by the
/// sha256 of the binary it holds and of this orchestrator's own executable (its size and
/// modification time: a rebuilt scopebox, whose archive writer may differ, never reuses what an
/// older one wrote), and it is used only after it was unpacked and found to hold exactly the
/// binary being packed: a damaged or planted entry is replaced, never trusted.
pub struct PackedArchives {
    dir: Option<PathBuf>,
}

impl PackedArchives {
    pub fn in_dir(dir: PathBuf) -> PackedArchives {
        PackedArchives { dir: Some(dir) }
    }

    /// No reuse: every archive is packed afresh.
    pub fn none() -> PackedArchives {
        PackedArchives { dir: None }
    }

    fn entry(&self, name: &str, binary: &[u8]) -> Option<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let dir = self.dir.as_ref()?;
        let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let writer = format!("{} {} {}", exe.size(), exe.mtime(), exe.mtime_nsec());
        let key = sha256_hex(format!("{writer}\n{}", sha256_hex(binary)).as_bytes());
        Some(dir.join(format!("{name}.{key}")))
    }

    /// The kept archive of `files` named `name`, if there is one and it holds exactly `files`.
    fn reuse(&self, entry: &Path, name: &str, files: &[ArchiveFile]) -> Option<Vec<u8>> {
        let kept = std::fs::read(entry).ok()?;
        if kept.len() as u64 > MAX_ARCHIVE_BYTES {
            return None;
        }
        let unpacked = archive::read_archive(name, &kept).ok()?;
        (unpacked == files).then_some(kept)
    }

    /// Keeps `bytes` for reuse (written aside, then renamed: a reader never sees half of it),
    /// in place of any entry of the same archive name kept before (one per platform, however
    /// many builds came before). Failing to keep it only costs the next run the compression.
    fn keep(entry: &Path, name: &str, bytes: &[u8]) {
        let Some(dir) = entry.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let earlier = format!("{name}.");
        for old in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if old.file_name().to_string_lossy().starts_with(&earlier) {
                let _ = std::fs::remove_file(old.path());
            }
        }
        let aside = entry.with_extension(format!("part-{}", std::process::id()));
        if std::fs::write(&aside, bytes).is_err() || std::fs::rename(&aside, entry).is_err() {
            let _ = std::fs::remove_file(&aside);
        }
    }
}

impl Candidate {
    /// Pack a freshly built `mcpscope` binary of `platform`.
    pub fn from_binary(platform: Platform, binary: Vec<u8>) -> Candidate {
        Candidate::from_binary_reusing(platform, binary, &PackedArchives::none())
    }

    /// Pack `binary`, reusing the archive `packed` kept of these exact bytes when it has one
    /// (the same bytes a fresh pack gives: see `PackedArchives`).
    pub fn from_binary_reusing(
        platform: Platform,
        binary: Vec<u8>,
        packed: &PackedArchives,
    ) -> Candidate {
        let name = archive_name(platform);
        let entry = packed.entry(&name, &binary);
        let files = vec![ArchiveFile {
            path: ARCHIVE_BIN.to_string(),
            mode: 0o755,
            bytes: binary,
        }];
        let reused = entry
            .as_deref()
            .and_then(|e| packed.reuse(e, &name, &files));
        let bytes = match reused {
            Some(kept) => kept,
            None => {
                let fresh = archive::write_archive(&files);
                if let Some(e) = &entry {
                    PackedArchives::keep(e, &name, &fresh);
                }
                fresh
            }
        };
        let manifest = archive::manifest(&name, &bytes, &files);
        Candidate {
            platform,
            name,
            bytes,
            files,
            manifest,
        }
    }

    /// Read an existing archive, refusing it unless its sha256 equals `expected` — checked
    /// first, before its contents are looked at. Its platform is the ELF machine of its
    /// `bin/mcpscope`, read from the header.
    pub fn from_file(path: &Path, expected: &str) -> Result<Candidate, PackError> {
        let expected = normalize_digest(expected)?;
        let meta = std::fs::metadata(path).map_err(|source| PackError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "candidate.tar.gz".to_string());
        let invalid = |problem: String| {
            PackError::Invalid(archive::ArchiveError {
                name: name.clone(),
                problem,
            })
        };
        if meta.len() > MAX_ARCHIVE_BYTES {
            return Err(invalid(format!("larger than {MAX_ARCHIVE_BYTES} bytes")));
        }
        let bytes = std::fs::read(path).map_err(|source| PackError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let actual = sha256_hex(&bytes);
        if actual != expected {
            return Err(PackError::Mismatch {
                path: path.to_path_buf(),
                expected,
                actual,
            });
        }
        let files = archive::read_archive(&name, &bytes)?;
        let bin = files
            .iter()
            .find(|f| f.path == ARCHIVE_BIN)
            .expect("read_archive requires the binary");
        let platform = match platform::elf_machine(&bin.bytes) {
            Some(Ok(machine)) => Platform::from_elf_machine(machine).ok_or_else(|| {
                invalid(format!(
                    "its {ARCHIVE_BIN} is an ELF for machine {machine}, not linux/amd64 or linux/arm64"
                ))
            })?,
            Some(Err(problem)) => return Err(invalid(format!("its {ARCHIVE_BIN} is {problem}"))),
            None => return Err(invalid(format!("its {ARCHIVE_BIN} is not an ELF binary"))),
        };
        let manifest = archive::manifest(&name, &bytes, &files);
        Ok(Candidate {
            platform,
            name,
            bytes,
            files,
            manifest,
        })
    }

    /// Write the archive and its pack manifest (`manifest_file`) into `dir` (created if
    /// needed). Returns the archive's path.
    pub fn write_to(&self, dir: &Path, manifest_file: &str) -> Result<PathBuf, PackError> {
        let write = |path: PathBuf, bytes: &[u8]| -> Result<PathBuf, PackError> {
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, bytes))
                .map_err(|source| PackError::Write {
                    path: path.clone(),
                    source,
                })?;
            Ok(path)
        };
        let archive = write(dir.join(&self.name), &self.bytes)?;
        write(dir.join(manifest_file), &manifest_json(&self.manifest))?;
        Ok(archive)
    }
}

/// The pack manifest as written to disk and into the bundle: pretty JSON plus a newline.
pub fn manifest_json(manifest: &PackManifest) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(manifest).expect("a manifest always serializes");
    bytes.push(b'\n');
    bytes
}

/// Accept 64 hex digits (either case, optionally prefixed `sha256:`), return lowercase.
pub fn normalize_digest(given: &str) -> Result<String, PackError> {
    let lowered = given
        .trim()
        .strip_prefix("sha256:")
        .unwrap_or(given.trim())
        .to_ascii_lowercase();
    if is_sha256_hex(&lowered) {
        Ok(lowered)
    } else {
        Err(PackError::BadDigest {
            given: given.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real (tiny) ELF of the machine `machine` names, or of an unknown one.
    fn elf(machine: u16) -> Vec<u8> {
        match Platform::from_elf_machine(machine) {
            Some(p) => crate::image::probe_elf(p, false),
            None => crate::image::probe_elf(Platform::LinuxAmd64, true),
        }
    }

    #[test]
    fn archives_are_named_per_platform_and_packing_twice_gives_identical_bytes() {
        let a = Candidate::from_binary(Platform::LinuxArm64, elf(183));
        let b = Candidate::from_binary(Platform::LinuxArm64, elf(183));
        assert_eq!(a.bytes, b.bytes);
        assert_eq!(a.manifest, b.manifest);
        assert!(a.name.ends_with("-aarch64-linux.tar.gz"), "{}", a.name);
        let x = Candidate::from_binary(Platform::LinuxAmd64, elf(62));
        assert!(x.name.ends_with("-x86_64-linux.tar.gz"), "{}", x.name);
    }

    #[test]
    fn a_given_archive_is_assigned_the_platform_of_its_binary() {
        let dir = tempfile::tempdir().unwrap();
        for (machine, platform) in [(62, Platform::LinuxAmd64), (183, Platform::LinuxArm64)] {
            let packed = Candidate::from_binary(platform, elf(machine));
            let path = dir.path().join(format!("{machine}.tar.gz"));
            std::fs::write(&path, &packed.bytes).unwrap();
            let read = Candidate::from_file(&path, &packed.manifest.archive.sha256).unwrap();
            assert_eq!(read.platform, platform);
            assert_eq!(read.files, packed.files);
        }
        // A binary for another machine, or no ELF at all, is refused.
        for bytes in [elf(8), b"#!/bin/sh\n".to_vec()] {
            let packed = Candidate::from_binary(Platform::LinuxAmd64, bytes);
            let path = dir.path().join("other.tar.gz");
            std::fs::write(&path, &packed.bytes).unwrap();
            let err = Candidate::from_file(&path, &packed.manifest.archive.sha256).unwrap_err();
            assert!(err.is_refusal(), "{err:?}");
        }
    }

    #[test]
    fn a_digest_mismatch_is_refused_before_the_contents_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.tar.gz");
        // Not even an archive: only the digest check can have refused it.
        std::fs::write(&path, b"not an archive").unwrap();
        let err = Candidate::from_file(&path, &"0".repeat(64)).unwrap_err();
        assert!(matches!(err, PackError::Mismatch { .. }), "{err:?}");
        assert!(err.is_refusal());
        let err = Candidate::from_file(&path, "abc").unwrap_err();
        assert!(matches!(err, PackError::BadDigest { .. }), "{err:?}");
    }

    /// The archive `write_archive` makes of `files`, recompressed at another gzip level: the same
    /// contents, other bytes (what only a reused entry can have given back).
    fn recompressed(files: &[ArchiveFile]) -> Vec<u8> {
        use std::io::{Read, Write};
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&archive::write_archive(files)[..])
            .read_to_end(&mut tar)
            .unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_kept_archive_is_reused_only_while_it_holds_exactly_the_binary_being_packed() {
        let dir = tempfile::tempdir().unwrap();
        let packed = PackedArchives::in_dir(dir.path().join("kept"));
        let binary = elf(62);
        let fresh = Candidate::from_binary(Platform::LinuxAmd64, binary.clone());

        // The first pack keeps what it wrote: the same bytes as a pack without reuse.
        let first = Candidate::from_binary_reusing(Platform::LinuxAmd64, binary.clone(), &packed);
        assert_eq!(first.bytes, fresh.bytes);
        let entry = packed.entry(&first.name, &binary).unwrap();
        assert_eq!(std::fs::read(&entry).unwrap(), fresh.bytes);

        // An entry that holds the same binary is used as it is (no compression).
        let same_contents = recompressed(&fresh.files);
        assert_ne!(same_contents, fresh.bytes);
        std::fs::write(&entry, &same_contents).unwrap();
        let reused = Candidate::from_binary_reusing(Platform::LinuxAmd64, binary.clone(), &packed);
        assert_eq!(reused.bytes, same_contents);
        assert_eq!(reused.files, fresh.files);
        assert_eq!(
            reused.manifest.archive.sha256,
            sha256_hex(&same_contents),
            "the manifest describes the bytes shipped"
        );

        // A planted archive of another binary, a damaged one, or no archive at all under the
        // entry's name: packed afresh, and the entry replaced.
        let other = archive::write_archive(&[ArchiveFile {
            path: ARCHIVE_BIN.to_string(),
            mode: 0o755,
            bytes: elf(183),
        }]);
        let mut truncated = fresh.bytes.clone();
        truncated.truncate(truncated.len() / 2);
        for planted in [other, truncated, b"not an archive".to_vec()] {
            std::fs::write(&entry, &planted).unwrap();
            let again =
                Candidate::from_binary_reusing(Platform::LinuxAmd64, binary.clone(), &packed);
            assert_eq!(again.bytes, fresh.bytes);
            assert_eq!(std::fs::read(&entry).unwrap(), fresh.bytes);
        }

        // Another binary has an entry of its own, which replaces the earlier one.
        let other_binary = elf(8);
        let other_entry = packed.entry(&first.name, &other_binary).unwrap();
        assert_ne!(other_entry, entry);
        Candidate::from_binary_reusing(Platform::LinuxAmd64, other_binary, &packed);
        let kept: Vec<_> = std::fs::read_dir(dir.path().join("kept"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept, vec![other_entry]);
    }

    #[test]
    fn packing_without_a_usable_directory_for_kept_archives_still_packs() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the directory would go: nothing can be kept, the pack is unaffected.
        let blocked = dir.path().join("kept");
        std::fs::write(&blocked, b"").unwrap();
        let packed = PackedArchives::in_dir(blocked.clone());
        let binary = elf(62);
        let candidate =
            Candidate::from_binary_reusing(Platform::LinuxAmd64, binary.clone(), &packed);
        assert_eq!(
            candidate.bytes,
            Candidate::from_binary(Platform::LinuxAmd64, binary).bytes
        );
        assert_eq!(std::fs::read(&blocked).unwrap(), b"");
    }
}
