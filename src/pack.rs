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
    Ok(Candidate::from_binary(platform, binary))
}

impl Candidate {
    /// Pack a freshly built `mcpscope` binary of `platform`.
    pub fn from_binary(platform: Platform, binary: Vec<u8>) -> Candidate {
        let files = vec![ArchiveFile {
            path: ARCHIVE_BIN.to_string(),
            mode: 0o755,
            bytes: binary,
        }];
        let name = archive_name(platform);
        let bytes = archive::write_archive(&files);
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
}
