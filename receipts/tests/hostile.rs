//! Hostile bundles, built from a good one (the synthetic specimen or the reference bundle of a
//! real run) the way an attacker would: every shape of issue 14 — terminal escapes in every
//! bundle-derived string, a 6.35 MB matrix of fill fixtures, 60,000 fixture entries in one
//! case, tens of thousands of files (within and beyond the reader's bound), duplicate keys, a sparse multi-GiB file. Each builder
//! copies the base, edits the copy and re-lists the digests it changed, so only the check made
//! for the shape can stop it. Shared by the end-to-end tests (`hostile_bundles`) and the
//! benchmark (`examples/bench.rs`). It only ever writes below the `out` directory it is given.

#![allow(dead_code)] // each user (the tests, the benchmark) takes the shapes it needs

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Every escape an attacker would try in one string: OSC title change with BEL, clear screen,
/// hidden text, CR and LF to forge a line, NUL, a C1 CSI, DEL, a bidi override and isolate, and
/// zero-width characters.
pub const NASTY: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[8m\r\nverified: all checks passed\0\u{9b}31m\u{7f}\u{202e}\u{2066}\u{200b}\u{feff}";

/// The shapes, by name (the benchmark's command line takes these).
pub const SHAPES: [&str; 9] = [
    "escapes",
    "unknown-key-escape",
    "fill-matrix",
    "fixture-flood",
    "many-files",
    "many-listed-files",
    "too-many-files",
    "duplicate-keys",
    "case-flood",
];

/// A copy of `base` at `out`, then shape `name` applied to it. Returns the bundle path.
pub fn build(name: &str, base: &Path, out: &Path) -> std::io::Result<PathBuf> {
    copy_tree(base, out)?;
    let _ = std::fs::remove_file(out.join("receipt.dsse.json"));
    let b = Bundle(out.to_path_buf());
    match name {
        "escapes" => b.escapes(),
        "unknown-key-escape" => b.unknown_key_escape(),
        "receipt-unknown-key" => b.edit("receipt.json", |r| r[NASTY] = 1.into()),
        "fill-matrix" => b.fill_matrix(),
        "fixture-flood" => b.fixture_flood(60_000),
        "many-files" => b.many_files(40_000, false),
        "many-listed-files" => b.many_files(40_000, true),
        "too-many-files" => b.many_files(60_000, false),
        "duplicate-keys" => b.duplicate_keys(),
        "case-flood" => b.case_flood(),
        "sparse" => b.sparse(),
        other => panic!("no hostile shape {other}"),
    }?;
    Ok(out.to_path_buf())
}

/// A copy of `base` at `out` with its cases replicated to `cases` per platform: every new case
/// is a copy of an existing one (matrix entry, evidence, receipt entry) under a new id, every
/// digest and count updated. Only the image binding fails (the layer holds the original
/// matrix): the verifier does all the work a real bundle of that size asks. For the benchmark.
pub fn scaled(base: &Path, out: &Path, cases: usize) -> std::io::Result<PathBuf> {
    copy_tree(base, out)?;
    let _ = std::fs::remove_file(out.join("receipt.dsse.json"));
    let b = Bundle(out.to_path_buf());
    let mut matrix = b.read_json("inputs/matrix.json");
    let originals = matrix["cases"].as_array().unwrap().clone();
    let mut new_ids = Vec::new();
    for i in originals.len()..cases {
        let mut case = originals[i % originals.len()].clone();
        let from = case["id"].as_str().unwrap().to_string();
        let id = format!("{from}-x{i:04}");
        case["id"] = id.clone().into();
        matrix["cases"].as_array_mut().unwrap().push(case);
        new_ids.push((from, id));
    }
    b.write_json("inputs/matrix.json", &matrix)?;
    let matrix_sha = b.sha("inputs/matrix.json");
    let mut receipt = b.read_json("receipt.json");
    receipt["matrix"]["sha256"] = matrix_sha.clone().into();
    receipt["matrix"]["caseCount"] = cases.into();
    receipt["files"]["inputs/matrix.json"] = matrix_sha.clone().into();
    let platforms = receipt["platforms"].as_array().unwrap().len();
    let mut total = 0;
    for p in 0..platforms {
        let dir = receipt["platforms"][p]["dir"].as_str().unwrap().to_string();
        for (from, id) in &new_ids {
            let src = format!("{dir}/evidence/cases/{from}");
            let dst = format!("{dir}/evidence/cases/{id}");
            copy_tree(&out.join(&src), &out.join(&dst))?;
            let record = format!("{dst}/record.json");
            b.edit(&record, |r| r["id"] = id.clone().into())?;
            let mut entry = receipt["platforms"][p]["cases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == from.as_str())
                .unwrap()
                .clone();
            entry["id"] = id.clone().into();
            entry["recordSha256"] = b.sha(&record).into();
            receipt["platforms"][p]["cases"]
                .as_array_mut()
                .unwrap()
                .push(entry);
            for name in ["stdout", "stderr", "record.json"] {
                let rel = format!("{dst}/{name}");
                receipt["files"][&rel] = b.sha(&rel).into();
            }
        }
        let ids: Vec<Value> = matrix["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        let summary = format!("{dir}/evidence/summary.json");
        b.edit(&summary, |s| {
            s["matrixSha256"] = matrix_sha.clone().into();
            s["caseIds"] = ids.clone().into();
            s["total"] = cases.into();
            s["passed"] = cases.into();
        })?;
        receipt["files"][&summary] = b.sha(&summary).into();
        receipt["platforms"][p]["summary"]["total"] = cases.into();
        receipt["platforms"][p]["summary"]["passed"] = cases.into();
        total += cases;
    }
    receipt["summary"]["cases"] = total.into();
    receipt["summary"]["casesPassed"] = total.into();
    b.write_json("receipt.json", &receipt)?;
    Ok(out.to_path_buf())
}

struct Bundle(PathBuf);

impl Bundle {
    fn read_json(&self, rel: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.0.join(rel)).expect("read")).expect("parse")
    }

    fn write_json(&self, rel: &str, value: &Value) -> std::io::Result<()> {
        std::fs::write(self.0.join(rel), serde_json::to_vec(value).expect("render"))
    }

    fn edit(&self, rel: &str, edit: impl FnOnce(&mut Value)) -> std::io::Result<()> {
        let mut value = self.read_json(rel);
        edit(&mut value);
        self.write_json(rel, &value)
    }

    fn sha(&self, rel: &str) -> String {
        hex::encode(Sha256::digest(
            std::fs::read(self.0.join(rel)).expect("read"),
        ))
    }

    /// Re-list files in receipt.json with their current digests.
    fn relist(&self, rels: &[&str]) -> std::io::Result<()> {
        let digests: Vec<(String, String)> = rels
            .iter()
            .map(|rel| (rel.to_string(), self.sha(rel)))
            .collect();
        self.edit("receipt.json", |r| {
            for (rel, digest) in digests {
                r["files"][rel] = digest.into();
            }
        })
    }

    fn platform_dirs(&self) -> Vec<String> {
        self.read_json("receipt.json")["platforms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["dir"].as_str().unwrap().to_string())
            .collect()
    }

    fn first_case(&self) -> String {
        self.read_json("receipt.json")["platforms"][0]["cases"][0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Replace the matrix with `edit` of it; its digest updated in the receipt, the files map
    /// and every summary (the regenerated layer and the bounds still know better).
    fn edit_matrix(&self, edit: impl FnOnce(&mut Value)) -> std::io::Result<()> {
        self.edit("inputs/matrix.json", edit)?;
        let sha = self.sha("inputs/matrix.json");
        let mut listed = vec!["inputs/matrix.json".to_string()];
        for dir in self.platform_dirs() {
            let summary = format!("{dir}/evidence/summary.json");
            self.edit(&summary, |s| s["matrixSha256"] = sha.clone().into())?;
            listed.push(summary);
        }
        self.edit("receipt.json", |r| {
            r["matrix"]["sha256"] = sha.clone().into()
        })?;
        let rels: Vec<&str> = listed.iter().map(String::as_str).collect();
        self.relist(&rels)
    }

    /// Escapes in the run id, a listed file name, a `files` key naming nothing, and a
    /// candidate archive name.
    fn escapes(&self) -> std::io::Result<()> {
        let dir = &self.platform_dirs()[0];
        // A file name cannot hold a NUL; everything else of NASTY it can.
        let smuggled = format!("{dir}/evidence/{}", NASTY.replace('\0', ""));
        std::fs::write(self.0.join(&smuggled), b"x")?;
        self.relist(&[&smuggled])?;
        self.edit("receipt.json", |r| {
            r["runId"] = format!("run{NASTY}").into();
            r["files"][format!("inputs/{NASTY}")] = "0".repeat(64).into();
            r["platforms"][0]["inputs"]["candidateArchive"]["name"] =
                format!("mcpscope{NASTY}.tar.gz").into();
        })
    }

    /// An unknown key full of escapes in a case record: serde's "unknown field" text quotes it.
    fn unknown_key_escape(&self) -> std::io::Result<()> {
        let dir = &self.platform_dirs()[0];
        let id = self.first_case();
        let rel = format!("{dir}/evidence/cases/{id}/record.json");
        self.edit(&rel, |r| r[NASTY] = 1.into())?;
        let sha = self.sha(&rel);
        self.edit("receipt.json", |r| {
            r["platforms"][0]["cases"][0]["recordSha256"] = sha.clone().into();
        })?;
        self.relist(&[&rel])
    }

    /// A 6.35 MB matrix: 75,000 fill fixtures of 16 MiB each over the first case.
    fn fill_matrix(&self) -> std::io::Result<()> {
        self.edit_matrix(|m| {
            let fixture = m["cases"][0]["fixture"].as_array_mut().unwrap();
            for i in 0..75_000 {
                fixture.push(json!({"kind": "file", "path": format!("/work/f/{i:06}"),
                    "fill": {"prefix": "{", "byte": 32, "size": 16 * 1024 * 1024}}));
            }
        })
    }

    /// `count` fixture entries in the first case: small files, each a non-directory every
    /// later path had to be compared with (the quadratic walk this shape was built against).
    fn fixture_flood(&self, count: usize) -> std::io::Result<()> {
        self.edit_matrix(|m| {
            let fixture = m["cases"][0]["fixture"].as_array_mut().unwrap();
            for i in 0..count {
                fixture.push(
                    json!({"kind": "file", "path": format!("/work/flood/f{i:06}"), "text": "{}"}),
                );
            }
        })
    }

    /// `count` files below a case directory the matrix does not have; with `listed`, every one
    /// listed in `files` with its digest, so only the layout check can object.
    fn many_files(&self, count: usize, listed: bool) -> std::io::Result<()> {
        let dir = &self.platform_dirs()[0];
        let mut names = Vec::with_capacity(count);
        for i in 0..count {
            let case = format!("{dir}/evidence/cases/ghost-{:03}", i / 1000);
            std::fs::create_dir_all(self.0.join(&case))?;
            let rel = format!("{case}/f{i:06}");
            std::fs::write(self.0.join(&rel), i.to_string())?;
            names.push(rel);
        }
        if listed {
            let rels: Vec<&str> = names.iter().map(String::as_str).collect();
            self.relist(&rels)?;
        }
        Ok(())
    }

    /// `"NetworkMode": "host", "NetworkMode": "none"` in the container inspection, re-listed.
    fn duplicate_keys(&self) -> std::io::Result<()> {
        let rel = format!("{}/outer/container-inspect.json", self.platform_dirs()[0]);
        let text = std::fs::read_to_string(self.0.join(&rel))?;
        let at = text.find("\"NetworkMode\"").expect("a NetworkMode");
        let doubled = format!("{}\"NetworkMode\": \"host\", {}", &text[..at], &text[at..]);
        std::fs::write(self.0.join(&rel), doubled)?;
        self.relist(&[&rel])
    }

    /// The receipt lists 20,000 cases for the first platform (a matrix may have 4,096).
    fn case_flood(&self) -> std::io::Result<()> {
        self.edit("receipt.json", |r| {
            let cases = r["platforms"][0]["cases"].as_array_mut().unwrap();
            let first = cases[0].clone();
            for i in 0..20_000 {
                let mut more = first.clone();
                more["id"] = format!("flood-{i:05}").into();
                cases.push(more);
            }
        })
    }

    /// A sparse 2 GiB file where a case's stdout was (no disk space used).
    fn sparse(&self) -> std::io::Result<()> {
        let rel = format!(
            "{}/evidence/cases/{}/stdout",
            self.platform_dirs()[0],
            self.first_case()
        );
        let file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.0.join(rel))?;
        file.set_len(2 * 1024 * 1024 * 1024)
    }
}

/// Every raw control or format character in `bytes` that a terminal would act on: C0 but LF,
/// DEL, C1, bidi overrides and isolates, zero-width characters, invalid UTF-8. Empty when the
/// output is safe to show.
pub fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for chunk in bytes.utf8_chunks() {
        if !chunk.invalid().is_empty() {
            found.push(format!("invalid UTF-8 {:?}", chunk.invalid()));
        }
        for c in chunk.valid().chars() {
            let bad = (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}' | '\u{feff}');
            if bad {
                found.push(format!("U+{:04X}", c as u32));
            }
        }
    }
    found
}

/// A copy of the directory tree `from` (directories and regular files) at `to`.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
