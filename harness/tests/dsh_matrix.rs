//! The shipped DSH matrix (`harness/matrix/dsh.json`): as data (valid, at least 20 cases,
//! every canary planted, every stdio command the sentinel, a canary in every sensitive value
//! of every server) and as a run: every case on this host against the real mcpscope in a
//! rebased layout, then re-judged from the evidence files.
//!
//! To run the container's expectations on the host, each case is rebased, never weakened:
//! container paths in fact values and `HOME` are mapped to the layout's real paths, and the
//! sentinel's container path in fixture bytes and symlink targets becomes the real sentinel
//! (so an execution would fire the marker here too). Only mode-0000 cases are left out when
//! the tests run as root (root reads them); the container (uid 1000) runs those.

use crate::support::{
    assert_every_canary_planted, layout, mcpscope_bin, run_and_replay, runs_sentinel, sentinel_bin,
    shipped,
};
use scopebox_harness::Layout;
use scopebox_schema::judge;
use scopebox_schema::layout::SENTINEL_BIN;
use scopebox_schema::matrix::{Case, FileContent, FixtureEntry, Matrix};
use serde_json::Value;

const BEGIN: &str = "# >>> dsh-project-mcp-manager:mcp:begin";

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn the_dsh_matrix_validates_and_has_at_least_20_cases() {
    let m = shipped("dsh.json");
    assert_eq!(m.name, "dsh");
    assert!(m.cases.len() >= 20, "{} cases", m.cases.len());
    assert!(m.cases.iter().all(|c| c.client == "dsh"));
    assert!(m.cases.iter().all(|c| c.fault.is_none()));
    // Every case that inventories a root selects the dsh profile.
    for c in &m.cases {
        if c.expect.exit_code != 2 {
            assert!(
                c.args.windows(2).any(|w| w == ["--client", "dsh"]),
                "{}",
                c.id
            );
        }
    }
}

/// Every server declaration in a case's fixture: (case, path, field, value). JSON files are
/// parsed; YAML files contribute their `config` lines, which the generator writes as
/// `key: <JSON value>`.
fn declarations(m: &Matrix) -> Vec<(String, String, String, Value)> {
    let mut out = Vec::new();
    for c in &m.cases {
        for e in &c.fixture {
            let FixtureEntry::File { path, content, .. } = e else {
                continue;
            };
            let bytes = judge::file_bytes(content).unwrap();
            if let Ok(doc) = serde_json::from_slice::<Value>(&bytes) {
                let servers = doc.get("mcpServers").and_then(Value::as_object);
                for s in servers.into_iter().flat_map(|m| m.values()) {
                    for (k, v) in s.as_object().into_iter().flatten() {
                        out.push((c.id.clone(), path.clone(), k.clone(), v.clone()));
                    }
                }
            } else if let Ok(text) = std::str::from_utf8(&bytes) {
                if !text.contains(BEGIN) {
                    continue;
                }
                for line in text.lines() {
                    let Some((k, v)) = line.trim_start().split_once(": ") else {
                        continue;
                    };
                    if let Ok(v) = serde_json::from_str::<Value>(v) {
                        out.push((c.id.clone(), path.clone(), k.to_string(), v));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_canary_is_planted_and_every_stdio_command_is_the_sentinel() {
    let m = shipped("dsh.json");
    assert_every_canary_planted(&m);
    // Command links point at the sentinel.
    for c in &m.cases {
        for e in &c.fixture {
            if let FixtureEntry::Symlink { path, target } = e {
                if path.starts_with("/home/node/bin/") {
                    assert_eq!(target, SENTINEL_BIN, "{}: {path}", c.id);
                }
            }
        }
    }
    let mut commands = 0;
    for (case, path, key, v) in declarations(&m) {
        if key != "command" {
            continue;
        }
        let cmd = v.as_str().unwrap();
        commands += 1;
        let linked = cmd.starts_with("/home/node/bin/CANARY-CMD-");
        let c = m.cases.iter().find(|c| c.id == case).unwrap();
        assert!(
            runs_sentinel(c, cmd) && (cmd == SENTINEL_BIN || linked),
            "{case}: {path}: command {cmd} is not the sentinel"
        );
    }
    assert!(commands > 100, "only {commands} commands checked");
}

#[test]
fn every_sensitive_value_carries_a_canary() {
    let m = shipped("dsh.json");
    let canary = |s: &str| m.canaries.iter().any(|c| s.contains(c.as_str()));
    let mut checked = 0;
    for (case, path, key, v) in declarations(&m) {
        let strings: Vec<String> = match (key.as_str(), &v) {
            ("args", Value::Array(a)) => a.iter().map(|x| x.to_string()).collect(),
            ("env" | "headers", Value::Object(o)) => o
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.as_str().unwrap_or("null").to_string()])
                .filter(|s| s != "null")
                .collect(),
            ("url" | "httpUrl" | "cwd", Value::String(s)) => vec![s.clone()],
            _ => continue,
        };
        for s in strings {
            checked += 1;
            assert!(
                canary(&s),
                "{case}: {path}: {key} value {s:?} carries no canary"
            );
        }
    }
    assert!(checked > 300, "only {checked} values checked");
}

/// Map a container path (as the matrix spells it) to the layout's real path.
fn rebase_str(l: &Layout, s: &str) -> String {
    if s.starts_with('/') {
        l.arg(s)
    } else {
        s.to_string()
    }
}

fn rebase_case(l: &Layout, c: &Case) -> Case {
    let sentinel = sentinel_bin().to_string_lossy().into_owned();
    let swap = |bytes: Vec<u8>| -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = &bytes[..];
        let pat = SENTINEL_BIN.as_bytes();
        while let Some(i) = rest.windows(pat.len()).position(|w| w == pat) {
            out.extend_from_slice(&rest[..i]);
            out.extend_from_slice(sentinel.as_bytes());
            rest = &rest[i + pat.len()..];
        }
        out.extend_from_slice(rest);
        out
    };
    let mut c = c.clone();
    for e in &mut c.fixture {
        match e {
            FixtureEntry::File { content, .. } => {
                *content = match content {
                    FileContent::Text(t) => {
                        FileContent::Text(String::from_utf8(swap(t.clone().into_bytes())).unwrap())
                    }
                    FileContent::Base64(_) => {
                        let bytes = swap(judge::file_bytes(content).unwrap());
                        FileContent::Base64(base64_encode(&bytes))
                    }
                    FileContent::Fill { prefix, byte, size } => FileContent::Fill {
                        prefix: String::from_utf8(swap(prefix.clone().into_bytes())).unwrap(),
                        byte: *byte,
                        size: *size,
                    },
                };
            }
            FixtureEntry::Symlink { target, .. } if target == SENTINEL_BIN => {
                *target = sentinel.clone();
            }
            _ => {}
        }
    }
    for v in c.env.values_mut() {
        *v = rebase_str(l, v);
    }
    for f in &mut c.expect.json {
        if let Some(Value::String(s)) = &f.equals {
            f.equals = Some(Value::String(rebase_str(l, s)));
        }
    }
    c
}

fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn every_dsh_case_passes_against_the_real_mcpscope_on_this_host() {
    let full = shipped("dsh.json");
    let (_dir, l) = layout(&mcpscope_bin());
    let skip_denied = is_root();
    let cases: Vec<Case> = full
        .cases
        .iter()
        .filter(|c| {
            !(skip_denied
                && c.fixture
                    .iter()
                    .any(|e| matches!(e, FixtureEntry::File { mode: Some(m), .. } if m == "0000")))
        })
        .map(|c| rebase_case(&l, c))
        .collect();
    let skipped = full.cases.len() - cases.len();
    assert!(skipped <= 3, "{skipped} cases skipped");
    let matrix = Matrix { cases, ..full };
    // Every verdict is replayed from the evidence files alone, as the verifier does.
    run_and_replay(&l, &matrix);
}

#[test]
fn rebasing_maps_paths_and_the_sentinel_only() {
    let (_dir, l) = layout(&mcpscope_bin());
    let m = shipped("dsh.json");
    let c = m.cases.iter().find(|c| c.id == "dsh-home-empty").unwrap();
    let r = rebase_case(&l, c);
    assert_eq!(r.env["HOME"], "", "an empty HOME stays empty");
    assert_eq!(r.expect.json.len(), c.expect.json.len());
    let dot = m
        .cases
        .iter()
        .find(|c| c.id == "dsh-root-dot-with-cwd")
        .unwrap();
    let r = rebase_case(&l, dot);
    let canonical = r
        .expect
        .json
        .iter()
        .find(|f| f.pointer == "/root/canonical")
        .unwrap();
    assert_eq!(
        canonical.equals,
        Some(Value::String(
            l.host("/work/proj").to_string_lossy().into_owned()
        ))
    );
    assert_eq!(base64_encode(b"\xef\xbb\xbfab"), "77u/YWI=");
    assert_eq!(base64_encode(b"a"), "YQ==");
}
