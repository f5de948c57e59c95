//! The platforms an evidence run covers (`linux/amd64`, `linux/arm64`) and every name each one
//! goes by: the OCI platform string and image config `architecture`/`variant`, the bundle
//! directory, the Rust target its static binaries are built for, the machine `uname` reports,
//! the ELF `e_machine` of its binaries, and the arch part of the candidate archive's name. One
//! table, so the orchestrator, the runner and the verifier can never disagree on a spelling.
//! It describes; it never builds, runs or probes anything.

use serde::{Deserialize, Serialize};

/// ELF `e_machine` values (System V gABI).
pub const EM_X86_64: u16 = 62;
pub const EM_AARCH64: u16 = 183;

/// One platform an evidence run can cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Platform {
    LinuxAmd64,
    LinuxArm64,
}

impl Platform {
    /// Every platform, in the order runs list them.
    pub const ALL: [Platform; 2] = [Platform::LinuxAmd64, Platform::LinuxArm64];

    /// The OCI platform string: "linux/amd64".
    pub fn name(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "linux/amd64",
            Platform::LinuxArm64 => "linux/arm64",
        }
    }

    /// Parse an OCI platform string; `linux/arm64/v8` and `linux/aarch64` are accepted for
    /// arm64, `linux/x86_64` for amd64.
    pub fn parse(text: &str) -> Option<Platform> {
        match text.trim().to_ascii_lowercase().as_str() {
            "linux/amd64" | "linux/x86_64" | "linux/x86-64" => Some(Platform::LinuxAmd64),
            "linux/arm64" | "linux/arm64/v8" | "linux/aarch64" => Some(Platform::LinuxArm64),
            _ => None,
        }
    }

    /// The bundle directory name below `platforms/`: "linux-amd64".
    pub fn dir_name(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "linux-amd64",
            Platform::LinuxArm64 => "linux-arm64",
        }
    }

    pub fn os(self) -> &'static str {
        "linux"
    }

    /// The image config's `architecture` (GOARCH spelling).
    pub fn oci_architecture(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "amd64",
            Platform::LinuxArm64 => "arm64",
        }
    }

    /// The image config's `variant`, when the OCI spec defines one.
    pub fn oci_variant(self) -> Option<&'static str> {
        match self {
            Platform::LinuxAmd64 => None,
            Platform::LinuxArm64 => Some("v8"),
        }
    }

    /// What `uname -m` says on (or emulating) this platform.
    pub fn machine(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "x86_64",
            Platform::LinuxArm64 => "aarch64",
        }
    }

    /// The ELF `e_machine` of this platform's binaries.
    pub fn elf_machine(self) -> u16 {
        match self {
            Platform::LinuxAmd64 => EM_X86_64,
            Platform::LinuxArm64 => EM_AARCH64,
        }
    }

    /// The Rust target its static binaries are built for. amd64 keeps glibc with
    /// `+crt-static` (measured faster than musl on large inputs); arm64 uses musl, which links
    /// self-contained with rust-lld and needs no C cross toolchain.
    pub fn rust_target(self) -> &'static str {
        match self {
            Platform::LinuxAmd64 => "x86_64-unknown-linux-gnu",
            Platform::LinuxArm64 => "aarch64-unknown-linux-musl",
        }
    }

    /// The platform whose `uname -m` (or the engine's `Architecture`) is `machine`.
    pub fn from_machine(machine: &str) -> Option<Platform> {
        match machine {
            "x86_64" | "amd64" => Some(Platform::LinuxAmd64),
            "aarch64" | "arm64" => Some(Platform::LinuxArm64),
            _ => None,
        }
    }

    /// The platform whose binaries carry ELF machine `e_machine`.
    pub fn from_elf_machine(e_machine: u16) -> Option<Platform> {
        Platform::ALL
            .into_iter()
            .find(|p| p.elf_machine() == e_machine)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Platform> for String {
    fn from(p: Platform) -> String {
        p.name().to_string()
    }
}

impl TryFrom<String> for Platform {
    type Error = String;
    fn try_from(text: String) -> Result<Platform, String> {
        // The serialized form is exact: only the canonical spelling is accepted in records.
        Platform::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!("unknown platform {text:?} (expected linux/amd64 or linux/arm64)")
            })
    }
}

/// What the ELF header of `bytes` says, read from the header itself: `Some(e_machine)` for a
/// well-formed 64-bit little-endian ELF header, `None` when `bytes` is not an ELF file at all.
/// An ELF whose class or byte order is not 64-bit little-endian reports `Err` with the reason.
pub fn elf_machine(bytes: &[u8]) -> Option<Result<u16, String>> {
    if bytes.len() < 4 || &bytes[..4] != b"\x7fELF" {
        return None;
    }
    if bytes.len() < 20 {
        return Some(Err("a truncated ELF header".into()));
    }
    // e_ident[EI_CLASS] = 2 (64-bit), e_ident[EI_DATA] = 1 (little-endian).
    if bytes[4] != 2 || bytes[5] != 1 {
        return Some(Err(format!(
            "an ELF of class {} and byte order {}, not 64-bit little-endian",
            bytes[4], bytes[5]
        )));
    }
    Some(Ok(u16::from_le_bytes([bytes[18], bytes[19]])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_the_canonical_spelling_deserializes() {
        for p in Platform::ALL {
            assert_eq!(Platform::parse(p.name()), Some(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Platform>(&json).unwrap(), p);
            assert_eq!(Platform::from_machine(p.machine()), Some(p));
            assert_eq!(Platform::from_elf_machine(p.elf_machine()), Some(p));
        }
        assert_eq!(
            Platform::parse("linux/arm64/v8"),
            Some(Platform::LinuxArm64)
        );
        assert_eq!(Platform::parse("windows/amd64"), None);
        assert!(serde_json::from_str::<Platform>("\"linux/aarch64\"").is_err());
    }

    #[test]
    fn the_elf_machine_is_read_from_the_header() {
        let mut header = vec![0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[18..20].copy_from_slice(&EM_AARCH64.to_le_bytes());
        assert_eq!(elf_machine(&header), Some(Ok(EM_AARCH64)));
        assert_eq!(elf_machine(b"#!/bin/sh\n"), None);
        header[4] = 1;
        assert!(matches!(elf_machine(&header), Some(Err(_))));
        assert!(matches!(elf_machine(b"\x7fELF\x02"), Some(Err(_))));
    }
}
