//! The evidence image on the orchestrator's side: reading `images/recipe.json`, generating the
//! image with the shared generator (`scopebox_receipts::image`, which the verifier replays),
//! wrapping it in a docker-archive to load through the Engine API, and checking the engine's
//! inspection against the computed identity. Also the probe image: one tiny hand-made static
//! ELF per platform that only exits 0, so whether the engine can run a platform is known
//! before any image is made or any case runs. This module never talks to the engine itself.

pub use scopebox_receipts::image::Image;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::{LayerEntry, LayerManifest};
use std::path::{Path, PathBuf};

pub use scopebox_receipts::image::{
    build, build_with, Contents, Extra, ExtraPayload, Recipe, WitnessBinary,
};

pub const RECIPE_FILE: &str = "images/recipe.json";
pub const POLICY_FILE: &str = "images/boundary-policy.json";
/// Repository of the probe images (`scopebox-probe:<arch>-<id12>`).
pub const PROBE_REPOSITORY: &str = "scopebox-probe";

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("read image recipe {path}")]
    ReadRecipe {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Generate(#[from] scopebox_receipts::image::ImageError),
    #[error(
        "accept the loaded image: the engine reports {reported}, expected {computed} (sha256 of the config)"
    )]
    IdMismatch { computed: String, reported: String },
    #[error("accept the loaded image: the engine's inspection is not understood ({0})")]
    Inspect(String),
}

/// Read and check `images/recipe.json` below the workspace root; returns it with its bytes.
pub fn load_recipe(root: &Path) -> Result<(Recipe, Vec<u8>), ImageError> {
    let path = root.join(RECIPE_FILE);
    let bytes = std::fs::read(&path).map_err(|source| ImageError::ReadRecipe {
        path: path.clone(),
        source,
    })?;
    let recipe = Recipe::parse(&bytes)?;
    Ok((recipe, bytes))
}

/// What the probe exits with where it really ran: not 0, so that an engine reporting a
/// container that never ran its program as having exited 0 (seen once from Podman under load,
/// for an ELF no handler knows) cannot pass for a platform that runs.
pub const PROBE_EXIT_CODE: u8 = 42;

/// A static ELF of `platform` that does nothing but `exit(PROBE_EXIT_CODE)`: a 64-byte header,
/// one program header, a few instructions. `e_machine` is the platform's unless `unrunnable`, which gives
/// one no kernel and no binfmt handler knows (the tests' stand-in for a missing emulator).
pub fn probe_elf(platform: Platform, unrunnable: bool) -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    const CODE_AT: u64 = 64 + 56;
    let code: &[u8] = match platform {
        // mov edi, 42; mov eax, 60 (exit); syscall
        Platform::LinuxAmd64 => &[
            0xbf,
            PROBE_EXIT_CODE,
            0,
            0,
            0,
            0xb8,
            0x3c,
            0,
            0,
            0,
            0x0f,
            0x05,
        ],
        // movz x0, #42 (imm16 << 5: 0x540); mov x8, #93 (exit); svc #0
        Platform::LinuxArm64 => &[
            0x40, 0x05, 0x80, 0xd2, 0xa8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
        ],
    };
    let machine = if unrunnable {
        0x5342
    } else {
        platform.elf_machine()
    };
    let size = CODE_AT + code.len() as u64;
    let mut elf = Vec::with_capacity(size as usize);
    elf.extend_from_slice(b"\x7fELF");
    elf.extend_from_slice(&[2, 1, 1, 0]); // 64-bit, little-endian, version 1, System V
    elf.extend_from_slice(&[0; 8]);
    elf.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    elf.extend_from_slice(&machine.to_le_bytes());
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&(BASE + CODE_AT).to_le_bytes()); // e_entry
    elf.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
    elf.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    elf.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    elf.extend_from_slice(&64u16.to_le_bytes()); // e_ehsize
    elf.extend_from_slice(&56u16.to_le_bytes()); // e_phentsize
    elf.extend_from_slice(&1u16.to_le_bytes()); // e_phnum
    elf.extend_from_slice(&[0; 6]); // e_shentsize, e_shnum, e_shstrndx
    elf.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    elf.extend_from_slice(&5u32.to_le_bytes()); // PF_R | PF_X
    elf.extend_from_slice(&0u64.to_le_bytes()); // p_offset
    elf.extend_from_slice(&BASE.to_le_bytes()); // p_vaddr
    elf.extend_from_slice(&BASE.to_le_bytes()); // p_paddr
    elf.extend_from_slice(&size.to_le_bytes()); // p_filesz
    elf.extend_from_slice(&size.to_le_bytes()); // p_memsz
    elf.extend_from_slice(&0x1000u64.to_le_bytes()); // p_align
    elf.extend_from_slice(code);
    elf
}

/// The probe image of `platform`: one layer holding `/probe` (`probe_elf`), entrypoint it.
pub fn probe_image(platform: Platform, unrunnable: bool) -> Image {
    let elf = probe_elf(platform, unrunnable);
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_ustar();
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mode(0o755);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(elf.len() as u64);
    tar.append_data(&mut header, "probe", elf.as_slice())
        .expect("writing a tar into memory cannot fail");
    let layer = tar
        .into_inner()
        .expect("finishing an in-memory tar cannot fail");
    let diff_id = format!("sha256:{}", sha256_hex(&layer));
    let mut config = serde_json::json!({
        "architecture": platform.oci_architecture(),
        "config": {"Entrypoint": ["/probe"], "User": "1000:1000"},
        "created": "1970-01-01T00:00:00Z",
        "os": platform.os(),
        "rootfs": {"diff_ids": [diff_id], "type": "layers"},
    });
    if let Some(variant) = platform.oci_variant() {
        config["variant"] = variant.into();
    }
    let config = serde_json::to_vec(&config).expect("a config always serializes");
    let hex = sha256_hex(&config);
    Image {
        layer_manifest: LayerManifest {
            diff_id: diff_id.clone(),
            entries: vec![LayerEntry {
                path: "/probe".into(),
                kind: "file".into(),
                mode: "0755".into(),
                uid: 0,
                gid: 0,
                size: elf.len() as u64,
                sha256: Some(sha256_hex(&elf)),
            }],
        },
        layer,
        diff_id,
        tag: format!(
            "{PROBE_REPOSITORY}:{}-{}",
            platform.oci_architecture(),
            &hex[..12]
        ),
        id: format!("sha256:{hex}"),
        config,
    }
}

/// The docker-archive (`docker save` format) for `POST /images/load`: `manifest.json`, the
/// config as `<hex>.json`, the layer as `<hex>/layer.tar`. Deterministic like the layer.
pub fn docker_archive(image: &Image) -> Vec<u8> {
    let config_name = format!("{}.json", image.id.trim_start_matches("sha256:"));
    let layer_name = format!("{}/layer.tar", image.diff_id.trim_start_matches("sha256:"));
    let manifest = serde_json::json!([{
        "Config": config_name,
        "RepoTags": [image.tag],
        "Layers": [layer_name],
    }]);
    let manifest = serde_json::to_vec(&manifest).expect("a manifest always serializes");
    let layer_dir = format!("{}/", image.diff_id.trim_start_matches("sha256:"));
    let mut files: Vec<(String, Option<&[u8]>)> = vec![
        (config_name.clone(), Some(&image.config)),
        (layer_dir, None),
        (layer_name, Some(&image.layer)),
        ("manifest.json".to_string(), Some(&manifest)),
    ];
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        match bytes {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &name, std::io::empty())
            }
            Some(bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                header.set_size(bytes.len() as u64);
                tar.append_data(&mut header, &name, bytes)
            }
        }
        .expect("writing a tar into memory cannot fail");
    }
    tar.into_inner()
        .expect("finishing an in-memory tar cannot fail")
}

/// How the engine's inspection matched the computed identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdMatch {
    /// `Id` is sha256 of our config (the classic image store).
    ConfigDigest,
    /// `Id` is a manifest digest (the containerd image store): accepted when the image carries
    /// our tag and exactly our layer.
    ManifestDigest,
}

/// Check an image inspection against the computed identity.
pub fn check_loaded(image: &Image, inspect: &serde_json::Value) -> Result<IdMatch, ImageError> {
    let config: serde_json::Value =
        serde_json::from_slice(&image.config).map_err(|e| ImageError::Inspect(e.to_string()))?;
    let want = config.get("architecture").and_then(|v| v.as_str());
    let got = inspect.get("Architecture").and_then(|v| v.as_str());
    if got.is_some() && got != want {
        return Err(ImageError::Inspect(format!(
            "the engine reports architecture {}, the config says {}",
            got.unwrap_or("none"),
            want.unwrap_or("none")
        )));
    }
    let reported = inspect
        .get("Id")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ImageError::Inspect("no Id".into()))?;
    if reported == image.id {
        return Ok(IdMatch::ConfigDigest);
    }
    let layers: Vec<&str> = inspect
        .pointer("/RootFS/Layers")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|l| l.as_str()).collect())
        .unwrap_or_default();
    let tagged = inspect
        .get("RepoTags")
        .and_then(|v| v.as_array())
        .is_some_and(|tags| tags.iter().any(|t| t.as_str() == Some(&image.tag)));
    if tagged && layers == [image.diff_id.as_str()] {
        return Ok(IdMatch::ManifestDigest);
    }
    Err(ImageError::IdMismatch {
        computed: image.id.clone(),
        reported: reported.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::workspace_root;
    use scopebox_receipts::archive::ArchiveFile;

    fn image(platform: Platform) -> Image {
        let (recipe, bytes) = load_recipe(&workspace_root()).unwrap();
        let candidate = vec![ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"candidate".to_vec(),
        }];
        build(
            &recipe,
            &bytes,
            &Contents {
                platform,
                candidate: &candidate,
                runner: b"runner",
                sentinel: b"sentinel",
                matrix: b"{}",
                witnesses: &[],
            },
        )
        .unwrap()
    }

    #[test]
    fn the_docker_archive_is_deterministic() {
        let a = image(Platform::LinuxArm64);
        assert_eq!(
            docker_archive(&a),
            docker_archive(&image(Platform::LinuxArm64))
        );
    }

    #[test]
    fn a_reported_id_other_than_the_config_digest_is_refused() {
        let image = image(Platform::LinuxAmd64);
        let ok = serde_json::json!({"Id": image.id, "Architecture": "amd64"});
        assert_eq!(check_loaded(&image, &ok).unwrap(), IdMatch::ConfigDigest);
        let other = serde_json::json!({"Id": format!("sha256:{}", "1".repeat(64))});
        assert!(matches!(
            check_loaded(&image, &other),
            Err(ImageError::IdMismatch { .. })
        ));
        let manifest = serde_json::json!({
            "Id": format!("sha256:{}", "2".repeat(64)),
            "RepoTags": [image.tag],
            "RootFS": {"Layers": [image.diff_id]},
        });
        assert_eq!(
            check_loaded(&image, &manifest).unwrap(),
            IdMatch::ManifestDigest
        );
        let wrong_arch = serde_json::json!({"Id": image.id, "Architecture": "arm64"});
        assert!(check_loaded(&image, &wrong_arch).is_err());
    }

    #[test]
    fn the_probe_is_an_elf_of_its_platform_unless_asked_to_be_unrunnable() {
        for platform in Platform::ALL {
            let elf = probe_elf(platform, false);
            assert_eq!(
                scopebox_schema::platform::elf_machine(&elf),
                Some(Ok(platform.elf_machine()))
            );
            let foreign = probe_elf(platform, true);
            let machine = scopebox_schema::platform::elf_machine(&foreign)
                .unwrap()
                .unwrap();
            assert_eq!(Platform::from_elf_machine(machine), None);
            let image = probe_image(platform, false);
            assert_eq!(image.id, format!("sha256:{}", sha256_hex(&image.config)));
            assert_ne!(image.id, probe_image(platform, true).id);
        }
    }

    #[test]
    fn the_amd64_probe_exits_with_its_code_on_this_host() {
        // Only meaningful where the host is x86_64 (the probe must really be a program).
        if std::env::consts::ARCH != "x86_64" {
            return;
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe");
        std::fs::write(&path, probe_elf(Platform::LinuxAmd64, false)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let status = std::process::Command::new(&path).status().unwrap();
        assert_eq!(status.code(), Some(i32::from(PROBE_EXIT_CODE)));
        std::fs::write(&path, probe_elf(Platform::LinuxAmd64, true)).unwrap();
        let err = std::process::Command::new(&path).status().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(8), "ENOEXEC: {err}");
    }
}
