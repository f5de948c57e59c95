//! `scopebox native fetch` / `native lock` refusals through the binary, none of which may
//! touch the network: each is decided from the lock and the cache alone. With `--json`, every
//! one of them still prints exactly one JSON object on stdout.

use crate::support::{scopebox, tempdir, workspace, Outcome};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use scopebox_schema::digest::sha256_hex;
use std::path::Path;

fn json_of(out: &Outcome) -> serde_json::Value {
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON line on stdout: {out:?}");
    serde_json::from_str(lines[0]).expect("stdout is JSON")
}

fn shipped_lock() -> serde_json::Value {
    let bytes = std::fs::read(workspace().join("images/native.lock.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Run `scopebox native ARGS --json --cache CACHE`, which must be refused: exit 2, one JSON
/// object saying so.
fn refused(args: &[&str], cache: &Path) -> (Outcome, serde_json::Value) {
    let mut all = vec!["native"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "--cache", cache.to_str().unwrap()]);
    let out = scopebox(&all, &[]);
    assert_eq!(out.code, 2, "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["refusal"], true, "{v}");
    (out, v)
}

pub fn offline_with_an_empty_cache_is_refused_naming_the_first_missing_file() {
    let dir = tempdir();
    let (out, v) = refused(&["fetch", "--offline"], &dir.path().join("cache"));
    assert_eq!(v["error"]["code"], "offline-miss");
    let wheel = shipped_lock()["clients"][0]["platforms"][0]["wheel"]["file"].clone();
    assert_eq!(v["error"]["file"], wheel);
    assert!(
        out.stderr
            .contains("hint: run `scopebox native fetch` once"),
        "{}",
        out.stderr
    );
}

pub fn a_tampered_cache_entry_is_refused_with_both_digests() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let lock = shipped_lock();
    let wheel_sha = lock["clients"][0]["platforms"][0]["wheel"]["sha256"]
        .as_str()
        .unwrap();
    std::fs::create_dir_all(cache.join("sha256")).unwrap();
    let planted = b"PK\x03\x04 not the pinned wheel";
    std::fs::write(cache.join("sha256").join(wheel_sha), planted).unwrap();
    let (out, v) = refused(&["fetch", "--platform", "linux/amd64"], &cache);
    assert_eq!(v["error"]["code"], "cache-corrupt");
    assert_eq!(v["error"]["expected"], wheel_sha);
    assert_eq!(v["error"]["actual"], sha256_hex(planted).as_str());
    assert!(v["error"]["file"].as_str().unwrap().ends_with(wheel_sha));
    assert!(out.stderr.contains("tampered or damaged"), "{}", out.stderr);
}

pub fn a_lock_with_an_unknown_field_is_refused_before_anything_else() {
    let dir = tempdir();
    let mut lock = shipped_lock();
    lock["clients"][0]["platforms"][0]["wheel"]["url"] = "https://example.invalid/x.whl".into();
    let path = dir.path().join("lock.json");
    std::fs::write(&path, serde_json::to_vec(&lock).unwrap()).unwrap();
    let cache = dir.path().join("cache");
    let (out, v) = refused(&["fetch", "--lock", path.to_str().unwrap()], &cache);
    assert_eq!(v["error"]["code"], "lock-invalid");
    assert!(out.stderr.contains("unknown field `url`"), "{}", out.stderr);
    assert!(
        !cache.exists(),
        "the cache is not even created for an invalid lock"
    );
}

pub fn an_unknown_platform_and_a_bad_version_bump_are_refused() {
    let dir = tempdir();
    let cache = dir.path().join("cache");
    let (_, v) = refused(&["fetch", "--platform", "linux/s390x"], &cache);
    assert_eq!(v["error"]["code"], "unknown-platform");
    let (_, v) = refused(&["lock", "--package-version", "claude-code"], &cache);
    assert_eq!(v["error"]["code"], "bad-argument");
    let (_, v) = refused(&["lock", "--add-client", "codex"], &cache);
    assert_eq!(v["error"]["code"], "bad-argument");
    let (_, v) = refused(&["fetch", "--client", "cursor"], &cache);
    assert_eq!(v["error"]["code"], "unknown-client");
}

/// The native matrices (Claude Code, Codex) as committed are what their generators write, and
/// hold together: ≥ 24 (Claude Code) / 16 (Codex) scenarios, each with list / get / headless
/// runs, every expected tag declared, every declared tag written into the fixture (as the
/// sentinel's argument or an http URL path), every divergence naming a declared tag and a mode
/// that exists.
pub fn the_native_matrix_is_generated_and_consistent() {
    for (name, client, at_least) in [
        ("native-claude-code", "claude-code", 24),
        ("native-codex", "codex", 16),
    ] {
        native_matrix_is_generated_and_consistent(name, client, at_least);
    }
}

fn native_matrix_is_generated_and_consistent(name: &str, client: &str, at_least: usize) {
    let path = workspace().join(format!("harness/matrix/{name}.json"));
    let committed = std::fs::read(&path).unwrap();
    let generated = std::process::Command::new("python3")
        .arg(workspace().join(format!("harness/matrix/generate-{name}.py")))
        .output()
        .expect("python3 runs the generator");
    assert!(generated.status.success(), "{generated:?}");
    assert!(
        generated.stdout == committed,
        "harness/matrix/{name}.json is not what its generator writes: regenerate it"
    );
    let m: serde_json::Value = serde_json::from_slice(&committed).unwrap();
    assert_eq!(m["kind"], "native");
    assert_eq!(m["client"]["id"], client);
    let scenarios = m["scenarios"].as_array().unwrap();
    assert!(
        scenarios.len() >= at_least,
        "{name}: {} scenarios",
        scenarios.len()
    );
    let mut ids = std::collections::BTreeSet::new();
    for s in scenarios {
        let id = s["id"].as_str().unwrap();
        assert!(ids.insert(id), "{id} twice");
        let modes: Vec<&str> = s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mode"].as_str().unwrap())
            .collect();
        assert_eq!(modes, ["list", "get", "headless"], "{id}");
        let fixture_text: String = s["fixture"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| match (e["text"].as_str(), e["base64"].as_str()) {
                (Some(t), _) => t.to_string(),
                (None, Some(b)) => String::from_utf8_lossy(&BASE64.decode(b).unwrap()).into_owned(),
                _ => String::new(),
            })
            .collect();
        let declared: std::collections::BTreeSet<&str> = s["declarations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["tag"].as_str().unwrap())
            .collect();
        for d in s["declarations"].as_array().unwrap() {
            let tag = d["tag"].as_str().unwrap();
            let written = match d["transport"].as_str().unwrap() {
                "http" => Some(format!("http://127.0.0.1:18500/{tag}\"")),
                // A partial table (Codex's field merge) names no command or url: no tag.
                "unknown" => None,
                _ => Some(format!("\"--scopebox-tag={tag}\"")),
            };
            assert!(
                written.is_none_or(|w| fixture_text.contains(&w)),
                "{id}: {tag} is not in the fixture"
            );
            assert!(
                d.get("predicted").is_some(),
                "{id}: {tag} has no prediction (null is explicit)"
            );
        }
        for r in s["runs"].as_array().unwrap() {
            for t in r["expect"]["launched"].as_array().unwrap() {
                assert!(
                    declared.contains(t.as_str().unwrap()),
                    "{id}: launched {t} is undeclared"
                );
            }
        }
        for dv in s["divergences"].as_array().into_iter().flatten() {
            assert!(declared.contains(dv["tag"].as_str().unwrap()), "{id}: {dv}");
            assert!(!dv["reason"].as_str().unwrap().is_empty());
            for mode in dv["modes"].as_array().unwrap() {
                assert!(modes.contains(&mode.as_str().unwrap()), "{id}: {dv}");
            }
        }
    }
}
