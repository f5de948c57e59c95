//! Reading what the registries hand us, without ever running it: one named member out of a
//! wheel (a zip, read with the `zip` crate), the members of a Debian package's data archive
//! (`dpkg-deb --fsys-tarfile` piped into the `tar` crate: dpkg-deb is the one tool that knows
//! every compression a `.deb` may use, and is on every Debian host), and the ELF facts of a
//! binary that decide which runtime files it needs (machine, PT_INTERP, DT_NEEDED; `goblin`).
//! Members are looked up by exact name; nothing is ever extracted by a path the archive chooses.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("open {path}")]
    Open {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("read {path} as a zip archive")]
    Zip {
        path: String,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("read the data archive of {path} (dpkg-deb --fsys-tarfile){}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Deb {
        path: String,
        detail: Option<String>,
        #[source]
        source: Option<io::Error>,
    },
    #[error("read {path} as an ELF file: {detail}")]
    Elf { path: String, detail: String },
}

/// Open `member` of the wheel at `wheel` and hand its decompressed bytes to `use_member`.
/// `Ok(None)` when the wheel has no such member (or only a directory of that name).
pub fn with_wheel_member<T>(
    wheel: &Path,
    member: &str,
    use_member: impl FnOnce(&mut dyn Read) -> io::Result<T>,
) -> Result<Option<T>, ArtifactError> {
    let shown = wheel.display().to_string();
    let file = File::open(wheel).map_err(|source| ArtifactError::Open {
        path: shown.clone(),
        source,
    })?;
    let mut archive = zip::ZipArchive::new(file).map_err(|source| ArtifactError::Zip {
        path: shown.clone(),
        source,
    })?;
    let mut entry = match archive.by_name(member) {
        Ok(e) if e.is_file() => e,
        Ok(_) | Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(source) => {
            return Err(ArtifactError::Zip {
                path: shown,
                source,
            })
        }
    };
    use_member(&mut entry)
        .map(Some)
        .map_err(|source| ArtifactError::Zip {
            path: shown,
            source: zip::result::ZipError::Io(source),
        })
}

/// One entry of a `.deb`'s data archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebEntry {
    File { mode: u32, size: u64 },
    Symlink { target: String },
    Other,
}

/// Walk the data archive of the `.deb` at `deb`: `visit(name, entry, reader)` sees every
/// member in archive order (names as stored, e.g. `./lib/x86_64-linux-gnu/libc.so.6`).
pub fn walk_deb(
    deb: &Path,
    mut visit: impl FnMut(&str, &DebEntry, &mut dyn Read) -> io::Result<()>,
) -> Result<(), ArtifactError> {
    let shown = deb.display().to_string();
    let deb_error = |detail: Option<String>, source: Option<io::Error>| ArtifactError::Deb {
        path: shown.clone(),
        detail,
        source,
    };
    let mut child = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| deb_error(Some("could not start dpkg-deb".into()), Some(e)))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let walked = (|| -> io::Result<()> {
        let mut archive = tar::Archive::new(stdout);
        for entry in archive.entries()? {
            let mut entry = entry?;
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let header = entry.header();
            let kind = match header.entry_type() {
                tar::EntryType::Regular => DebEntry::File {
                    mode: header.mode()? & 0o7777,
                    size: header.size()?,
                },
                tar::EntryType::Symlink => DebEntry::Symlink {
                    target: entry
                        .link_name_bytes()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default(),
                },
                _ => DebEntry::Other,
            };
            visit(&name, &kind, &mut entry)?;
        }
        // Read to the end so dpkg-deb never sees a closed pipe.
        io::copy(&mut archive.into_inner(), &mut io::sink())?;
        Ok(())
    })();
    // Drain and reap dpkg-deb whatever happened, so it never lingers.
    let output = child.wait_with_output();
    walked.map_err(|e| deb_error(None, Some(e)))?;
    let output = output.map_err(|e| deb_error(None, Some(e)))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        let last = text.lines().last().unwrap_or("").trim().to_string();
        return Err(deb_error(
            Some(format!("dpkg-deb {}: {}", output.status, last)),
            None,
        ));
    }
    Ok(())
}

/// What the dynamic loader will want from a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfFacts {
    /// `x86_64` or `aarch64` (or `other:<e_machine>`).
    pub machine: String,
    pub interpreter: Option<String>,
    pub needed: Vec<String>,
}

pub fn elf_facts(path: &Path) -> Result<ElfFacts, ArtifactError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ArtifactError::Open {
        path: shown.clone(),
        source,
    })?;
    let elf = goblin::elf::Elf::parse(&bytes).map_err(|e| ArtifactError::Elf {
        path: shown,
        detail: e.to_string(),
    })?;
    let machine = match elf.header.e_machine {
        goblin::elf::header::EM_X86_64 => "x86_64".to_string(),
        goblin::elf::header::EM_AARCH64 => "aarch64".to_string(),
        m => format!("other:{m}"),
    };
    Ok(ElfFacts {
        machine,
        interpreter: elf.interpreter.map(str::to_string),
        needed: elf.libraries.iter().map(|s| s.to_string()).collect(),
    })
}

/// The ELF machine a platform's binaries must have.
pub fn machine_of(platform: &str) -> Option<&'static str> {
    match platform {
        "linux/amd64" => Some("x86_64"),
        "linux/arm64" => Some("aarch64"),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A wheel-shaped zip with the given members (deflated).
    pub fn write_zip(path: &Path, members: &[(&str, &[u8])]) {
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o755);
        for (name, bytes) in members {
            zip.start_file(*name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
    }

    /// A real `.deb` built with `dpkg-deb --build` from (member, bytes, mode) files and
    /// (member, target) symlinks.
    pub fn write_deb(path: &Path, files: &[(&str, &[u8], u32)], links: &[(&str, &str)]) {
        use std::os::unix::fs::PermissionsExt;
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path().join("pkg");
        std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
        std::fs::write(
            root.join("DEBIAN/control"),
            "Package: fake\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: test\n",
        )
        .unwrap();
        for (member, bytes, mode) in files {
            let p = root.join(member.trim_start_matches("./"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode)).unwrap();
        }
        for (member, target) in links {
            let p = root.join(member.trim_start_matches("./"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, &p).unwrap();
        }
        let status = Command::new("dpkg-deb")
            .args(["--root-owner-group", "-Zgzip", "--build"])
            .arg(&root)
            .arg(path)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn a_wheel_member_is_read_by_exact_name_only() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("w.whl");
        write_zip(&wheel, &[("pkg/bin/tool", b"binary"), ("pkg/other", b"x")]);
        let read = |member: &str| {
            with_wheel_member(&wheel, member, |r| {
                let mut v = Vec::new();
                r.read_to_end(&mut v)?;
                Ok(v)
            })
            .unwrap()
        };
        assert_eq!(read("pkg/bin/tool"), Some(b"binary".to_vec()));
        assert_eq!(read("pkg/bin/too"), None);
        assert_eq!(read("bin/tool"), None);
    }

    #[test]
    fn a_file_that_is_not_a_zip_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("w.whl");
        std::fs::write(&wheel, b"not a zip at all").unwrap();
        let err = with_wheel_member(&wheel, "x", |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("w.whl as a zip archive"), "{err}");
    }

    #[test]
    fn a_deb_lists_its_files_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let deb = dir.path().join("f.deb");
        write_deb(
            &deb,
            &[("./lib/x/libc.so.6", b"libc", 0o755)],
            &[("./lib64/ld.so", "/lib/x/ld.so")],
        );
        let mut seen = Vec::new();
        walk_deb(&deb, |name, entry, r| {
            let mut bytes = Vec::new();
            r.read_to_end(&mut bytes)?;
            seen.push((name.to_string(), entry.clone(), bytes));
            Ok(())
        })
        .unwrap();
        assert!(seen.contains(&(
            "./lib/x/libc.so.6".into(),
            DebEntry::File {
                mode: 0o755,
                size: 4
            },
            b"libc".to_vec()
        )));
        assert!(seen.iter().any(|(n, e, _)| n == "./lib64/ld.so"
            && *e
                == DebEntry::Symlink {
                    target: "/lib/x/ld.so".into()
                }));
    }

    #[test]
    fn a_broken_deb_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let deb = dir.path().join("broken.deb");
        std::fs::write(&deb, b"!<arch>\nnot really").unwrap();
        let err = walk_deb(&deb, |_, _, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("broken.deb"), "{err}");
    }

    #[test]
    fn the_elf_facts_of_a_test_binary_name_its_machine() {
        // This test binary itself: x86_64 or aarch64, dynamically linked or not.
        let me = std::env::current_exe().unwrap();
        let facts = elf_facts(&me).unwrap();
        assert_eq!(Some(facts.machine.as_str()), machine_of(host_platform()));
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk");
        std::fs::write(&junk, b"\x7fELF junk").unwrap();
        assert!(matches!(elf_facts(&junk), Err(ArtifactError::Elf { .. })));
    }

    fn host_platform() -> &'static str {
        if cfg!(target_arch = "aarch64") {
            "linux/arm64"
        } else {
            "linux/amd64"
        }
    }
}
