//! `scopebox pack` builds the real candidate for every platform: packing twice gives
//! byte-identical archives and manifests per platform, each archive is named for its machine and
//! holds a binary of it, and a packed archive is accepted by `--candidate … --expect-sha256 …`,
//! which recognizes its platform from the binary. (That `scopebox run` tests exactly these
//! archives is `run::a_full_run_passes_on_every_platform_…`.)

use crate::support::{scopebox, tempdir};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::platform::{elf_machine, Platform};
use scopebox_schema::receipt::PackManifest;

pub fn packing_twice_gives_identical_bytes_per_platform_and_the_digest_is_recorded() {
    let dir = tempdir();
    let summaries = |out: &std::path::Path| -> serde_json::Value {
        let res = scopebox(&["pack", "--out", out.to_str().unwrap(), "--json"], &[]);
        assert_eq!(res.code, 0, "{res:?}");
        serde_json::from_str(res.stdout.trim()).unwrap()
    };
    // While someone edits mcpscope in this tree, two builds may hold different binaries; that
    // is not the packer's doing, so retry. Identical binaries must always give identical bytes.
    let mut attempt = 0;
    let (a, first) = loop {
        attempt += 1;
        let (a, b) = (
            dir.path().join(format!("a{attempt}")),
            dir.path().join(format!("b{attempt}")),
        );
        let (sa, sb) = (summaries(&a), summaries(&b));
        if sa["archives"]
            .as_array()
            .unwrap()
            .iter()
            .zip(sb["archives"].as_array().unwrap())
            .any(|(x, y)| x["runtimeManifestSha256"] != y["runtimeManifestSha256"])
        {
            assert!(
                attempt < 3,
                "the candidate binary kept changing between builds"
            );
            continue;
        }
        assert_eq!(sa, summaries_without_paths(&sb, &b, &a));
        break (a, sa);
    };
    let archives = first["archives"].as_array().unwrap();
    assert_eq!(archives.len(), Platform::ALL.len());
    for (entry, platform) in archives.iter().zip(Platform::ALL) {
        assert_eq!(entry["platform"], platform.name());
        let path = std::path::PathBuf::from(entry["archive"].as_str().unwrap());
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, scopebox::pack::archive_name(platform));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(entry["sha256"], sha256_hex(&bytes).as_str());
        let manifest: PackManifest = serde_json::from_slice(
            &std::fs::read(entry["packManifest"].as_str().unwrap()).unwrap(),
        )
        .unwrap();
        assert_eq!(manifest.archive.sha256, sha256_hex(&bytes));
        let paths: Vec<_> = manifest.runtime.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["bin/mcpscope"]);
        let files = scopebox_receipts::archive::read_archive(name, &bytes).unwrap();
        assert_eq!(
            elf_machine(&files[0].bytes),
            Some(Ok(platform.elf_machine())),
            "{platform}: the packed binary is of another machine"
        );

        // The packed archive passes its own digest, and is recognized as this platform's.
        let again = dir.path().join(format!("c-{}", platform.dir_name()));
        let res = scopebox(
            &[
                "pack",
                "--out",
                again.to_str().unwrap(),
                "--candidate",
                path.to_str().unwrap(),
                "--expect-sha256",
                &manifest.archive.sha256,
                "--json",
            ],
            &[],
        );
        assert_eq!(res.code, 0, "{res:?}");
        let summary: serde_json::Value = serde_json::from_str(res.stdout.trim()).unwrap();
        assert_eq!(summary["archives"][0]["platform"], platform.name());
        assert_eq!(
            summary["archives"][0]["sha256"],
            manifest.archive.sha256.as_str()
        );
    }
    assert!(a.is_dir());
}

/// `summary` (written below `from`) with its paths as if written below `to`.
fn summaries_without_paths(
    summary: &serde_json::Value,
    from: &std::path::Path,
    to: &std::path::Path,
) -> serde_json::Value {
    let text = serde_json::to_string(summary)
        .unwrap()
        .replace(from.to_str().unwrap(), to.to_str().unwrap());
    serde_json::from_str(&text).unwrap()
}
