//! `scopebox native fetch` / `native lock` refusals through the binary, none of which may
//! touch the network: each is decided from the lock and the cache alone. With `--json`, every
//! one of them still prints exactly one JSON object on stdout.

use crate::support::{scopebox, tempdir, workspace, Outcome};
use scopebox_receipts::digest::sha256_hex;

fn json_of(out: &Outcome) -> serde_json::Value {
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON line on stdout: {out:?}");
    serde_json::from_str(lines[0]).expect("stdout is JSON")
}

fn shipped_lock() -> serde_json::Value {
    let bytes = std::fs::read(workspace().join("images/native.lock.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn offline_with_an_empty_cache_is_refused_naming_the_first_missing_file() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let out = scopebox(
        &[
            "native",
            "fetch",
            "--offline",
            "--json",
            "--cache",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "offline-miss");
    assert_eq!(v["error"]["refusal"], true);
    let wheel = shipped_lock()["clients"][0]["platforms"][0]["wheel"]["file"].clone();
    assert_eq!(v["error"]["file"], wheel);
    assert!(
        out.stderr
            .contains("hint: run `scopebox native fetch` once"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_tampered_cache_entry_is_refused_with_both_digests() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let wheel_sha = shipped_lock()["clients"][0]["platforms"][0]["wheel"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::create_dir_all(cache.join("sha256")).unwrap();
    let planted = b"PK\x03\x04 not the pinned wheel";
    std::fs::write(cache.join("sha256").join(&wheel_sha), planted).unwrap();
    let out = scopebox(
        &[
            "native",
            "fetch",
            "--platform",
            "linux/amd64",
            "--json",
            "--cache",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["code"], "cache-corrupt");
    assert_eq!(v["error"]["expected"], wheel_sha.as_str());
    assert_eq!(v["error"]["actual"], sha256_hex(planted).as_str());
    assert!(v["error"]["file"].as_str().unwrap().ends_with(&wheel_sha));
    assert!(out.stderr.contains("tampered or damaged"), "{}", out.stderr);
}

#[test]
fn a_lock_with_an_unknown_field_is_refused_before_anything_else() {
    let dir = tempdir();
    let mut lock = shipped_lock();
    lock["clients"][0]["platforms"][0]["wheel"]["url"] = "https://example.invalid/x.whl".into();
    let path = dir.path().join("lock.json");
    std::fs::write(&path, serde_json::to_vec(&lock).unwrap()).unwrap();
    let cache = dir.path().join("cache");
    let out = scopebox(
        &[
            "native",
            "fetch",
            "--json",
            "--lock",
            path.to_str().unwrap(),
            "--cache",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["code"], "lock-invalid");
    assert!(out.stderr.contains("unknown field `url`"), "{}", out.stderr);
    assert!(
        !cache.exists(),
        "the cache is not even created for an invalid lock"
    );
}

#[test]
fn an_unknown_platform_and_a_bad_version_bump_are_refused() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let out = scopebox(
        &[
            "native",
            "fetch",
            "--platform",
            "linux/s390x",
            "--json",
            "--cache",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(json_of(&out)["error"]["code"], "unknown-platform");
    let out = scopebox(
        &[
            "native",
            "lock",
            "--package-version",
            "claude-code",
            "--json",
            "--cache",
            cache.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(json_of(&out)["error"]["code"], "bad-argument");
}
