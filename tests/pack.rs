//! `scopebox pack` builds the real candidate: packing twice gives byte-identical archives and
//! manifests, and the packed archive is accepted by `--candidate … --expect-sha256 …`.

use crate::support::{scopebox, tempdir};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::receipt::PackManifest;

#[test]
fn packing_twice_gives_identical_bytes_and_the_digest_is_recorded() {
    let dir = tempdir();
    let name = scopebox::pack::ARCHIVE_NAME;
    // While someone edits mcpscope in this tree, two builds may hold different binaries; that
    // is not the packer's doing, so retry. Identical binaries must always give identical bytes.
    let mut attempt = 0;
    let (a, manifest_a) = loop {
        attempt += 1;
        let (a, b) = (
            dir.path().join(format!("a{attempt}")),
            dir.path().join(format!("b{attempt}")),
        );
        for out in [&a, &b] {
            let res = scopebox(&["pack", "--out", out.to_str().unwrap(), "--json"], &[]);
            assert_eq!(res.code, 0, "{res:?}");
        }
        let manifest = |d: &std::path::Path| -> PackManifest {
            serde_json::from_slice(&std::fs::read(d.join("pack-manifest.json")).unwrap()).unwrap()
        };
        let (ma, mb) = (manifest(&a), manifest(&b));
        if ma.runtime != mb.runtime {
            assert!(
                attempt < 3,
                "the candidate binary kept changing between builds"
            );
            continue;
        }
        let archive_a = std::fs::read(a.join(name)).unwrap();
        let archive_b = std::fs::read(b.join(name)).unwrap();
        assert_eq!(
            sha256_hex(&archive_a),
            sha256_hex(&archive_b),
            "the same binary packed twice gave different archives"
        );
        let bytes_a = std::fs::read(a.join("pack-manifest.json")).unwrap();
        assert_eq!(
            bytes_a,
            std::fs::read(b.join("pack-manifest.json")).unwrap()
        );
        assert_eq!(ma.archive.sha256, sha256_hex(&archive_a));
        assert_eq!(ma.archive_size, archive_a.len() as u64);
        break (a, bytes_a);
    };
    let manifest: PackManifest = serde_json::from_slice(&manifest_a).unwrap();
    let paths: Vec<_> = manifest.runtime.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["bin/mcpscope"]);
    assert_eq!(manifest.runtime[0].mode, "0755");

    // The packed archive passes its own digest, and yields the same manifest.
    let again = dir.path().join("c");
    let res = scopebox(
        &[
            "pack",
            "--out",
            again.to_str().unwrap(),
            "--candidate",
            a.join(name).to_str().unwrap(),
            "--expect-sha256",
            &manifest.archive.sha256,
            "--json",
        ],
        &[],
    );
    assert_eq!(res.code, 0, "{res:?}");
    let summary: serde_json::Value = serde_json::from_str(res.stdout.trim()).unwrap();
    assert_eq!(summary["sha256"], manifest.archive.sha256.as_str());
    assert_eq!(
        std::fs::read(again.join("pack-manifest.json")).unwrap(),
        manifest_a
    );
}
