//! The mutation self-test: prove the verifier rejects tampering by tampering. The bundle is
//! copied once to a temporary base, which must verify; then each mutation class is applied to
//! a fresh copy of the base and verified, and every one must be rejected. Most classes are
//! "digest-consistent": after changing a file they rewrite its digest in `receipt.json` (and
//! any other recorded digest of it), so only the semantic checks can catch them. Signature
//! classes sign the copy with a throw-away key and verify with its public half.
//! It never touches the original bundle. The bundle is measured (sizes, counts, kinds, from
//! `lstat` alone) before anything is copied, then read once as verification reads it (from
//! directory descriptors, never through a link, even one swapped in mid-copy), and the copies
//! go to a disk-backed temporary directory (never tmpfs or `/dev/shm`).

use crate::attestation::statement_for;
use crate::digest::sha256_hex;
use crate::dsse::{self, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::evidence::{
    CONTROLS_DIR, NEGATIVE_CONTROL_RECORD_FILE, NEGATIVE_CONTROL_WITNESS_FILE,
    POSITIVE_CONTROL_RECORD_FILE, POSITIVE_CONTROL_WITNESS_FILE,
};
use crate::judge;
use crate::receipt::*;
use crate::verify::{self, BundleError, VerifyOptions};
use scopebox_schema::native_observe::judge_evidence;
use scopebox_schema::native_receipt::{
    summary_of, NativeSection, NATIVE_LOCK_FILE, NATIVE_MATRIX_FILE, NATIVE_SECTION_FILE,
};
use scopebox_schema::witness::{WitnessRecord, WITNESS_FILE};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One mutation class.
pub struct Mutation {
    pub class: &'static str,
    pub description: &'static str,
    /// Digests in receipt.json are rewritten to match, so hashing alone cannot catch it.
    pub digest_consistent: bool,
    /// Verify with the throw-away key (the copy is signed before mutating).
    pub signed: bool,
    /// A class of the native reference: applied only to a bundle with `native.json` (the
    /// others only to one with a candidate platform).
    pub native: bool,
    apply: fn(&mut Copy) -> Result<(), String>,
}

/// The outcome of one mutation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub class: String,
    pub description: String,
    pub digest_consistent: bool,
    /// "rejected", "ACCEPTED", "unreadable" or "not-applicable".
    pub outcome: String,
    /// Ids of the checks that failed.
    pub rejected_by: Vec<String>,
    pub detail: Option<String>,
}

impl Row {
    pub fn rejected(&self) -> bool {
        self.outcome == "rejected"
    }
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelfTestReport {
    /// Always 1.
    pub schema_version: u32,
    pub bundle: String,
    pub rows: Vec<Row>,
}

impl SelfTestReport {
    /// True when every class was applied and rejected.
    pub fn all_rejected(&self) -> bool {
        self.rows.iter().all(Row::rejected)
    }

    /// The class → rejected-by table.
    pub fn render_text(&self) -> String {
        let width = self
            .rows
            .iter()
            .map(|r| r.class.len())
            .max()
            .unwrap_or(5)
            .max(5);
        let mut out = format!(
            "scopebox-verify --self-test {}\n{:<width$}  {:<10}  {:<10}  rejected by\n",
            scopebox_terminal::escape(&self.bundle),
            "class",
            "digests",
            "outcome"
        );
        for row in &self.rows {
            out.push_str(&format!(
                "{:<width$}  {:<10}  {:<10}  {}\n",
                row.class,
                if row.digest_consistent {
                    "consistent"
                } else {
                    "raw"
                },
                row.outcome,
                scopebox_terminal::escape(&if row.rejected_by.is_empty() {
                    row.detail.clone().unwrap_or_default()
                } else {
                    row.rejected_by.join(", ")
                })
            ));
        }
        let rejected = self.rows.iter().filter(|r| r.rejected()).count();
        out.push_str(&format!(
            "{rejected} of {} mutation classes rejected{}\n",
            self.rows.len(),
            if self.all_rejected() {
                ""
            } else {
                ": SELF-TEST FAILED"
            }
        ));
        out
    }
}

/// Why the self-test could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SelfTestError {
    #[error("copy the bundle to a temporary directory")]
    Copy(#[source] std::io::Error),
    #[error("self-test {0}")]
    Unreadable(#[source] BundleError),
    #[error("self-test the bundle: it does not verify unmutated ({0})\nhint: run `scopebox-verify` on it first; only a verifying bundle can be mutated meaningfully")]
    BaseRejected(String),
    #[error("sign the base copy: {0}")]
    Sign(String),
    #[error("self-test the bundle: it verifies, but its copy signed with a fresh key does not ({0}); the signature classes could not be run")]
    SignedBaseRejected(String),
    #[error("self-test the bundle: it is beyond the verifier's bounds, nothing was copied: {0}")]
    Bounds(String),
}

/// A fresh copy of the base bundle being mutated. Per-platform mutations act on the first
/// platform of the receipt (`pdir`, and `receipt.platforms[0]`).
pub struct Copy {
    pub dir: PathBuf,
    key_pem: String,
    /// The first platform's directory, e.g. `platforms/linux-amd64`.
    pdir: String,
}

impl Copy {
    /// A path below the first platform's directory.
    fn p(&self, rel: &str) -> String {
        format!("{}/{rel}", self.pdir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        std::fs::read(self.path(rel)).map_err(|e| format!("read {rel}: {e}"))
    }

    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        std::fs::write(self.path(rel), bytes).map_err(|e| format!("write {rel}: {e}"))
    }

    fn json(&self, rel: &str) -> Result<Value, String> {
        serde_json::from_slice(&self.read(rel)?).map_err(|e| format!("parse {rel}: {e}"))
    }

    fn put_json(&self, rel: &str, value: &Value) -> Result<(), String> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        self.write(rel, &bytes)
    }

    /// Edit a JSON file with `edit`; the edit must change it.
    fn edit(&self, rel: &str, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        let mut value = self.json(rel)?;
        let before = value.clone();
        edit(&mut value);
        if value == before {
            return Err(format!("{rel} already had the mutated value"));
        }
        self.put_json(rel, &value)
    }

    fn receipt(&self) -> Result<Value, String> {
        self.json(RECEIPT_FILE)
    }

    fn edit_receipt(&self, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        self.edit(RECEIPT_FILE, edit)
    }

    /// Make receipt.json's `files` entry for `rel` match its bytes (or drop it if absent).
    fn relist(&self, rel: &str) -> Result<(), String> {
        let digest = std::fs::read(self.path(rel)).ok().map(|b| sha256_hex(&b));
        let mut receipt = self.receipt()?;
        match digest {
            Some(d) => receipt["files"][rel] = d.into(),
            None => {
                if let Some(files) = receipt["files"].as_object_mut() {
                    files.remove(rel);
                }
            }
        }
        self.put_json(RECEIPT_FILE, &receipt)
    }

    /// The first case id in the receipt.
    fn first_case(&self) -> Result<String, String> {
        self.receipt()?["platforms"][0]["cases"][0]["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "the receipt has no cases".to_string())
    }

    /// Rewrite a case file, then every digest that names it: the files map, the receipt's case
    /// entry, and (for stdout/stderr) the record, which is then itself re-listed.
    fn rewrite_case_file(&self, id: &str, name: &str, bytes: &[u8]) -> Result<(), String> {
        let rel = self.p(&format!("evidence/cases/{id}/{name}"));
        if self.read(&rel)? == bytes {
            return Err(format!("{rel} already had the mutated bytes"));
        }
        self.write(&rel, bytes)?;
        let digest = sha256_hex(bytes);
        let record_rel = self.p(&format!("evidence/cases/{id}/record.json"));
        if name == "stdout" || name == "stderr" {
            let mut record = self.json(&record_rel)?;
            record[format!("{name}Sha256")] = digest.clone().into();
            self.put_json(&record_rel, &record)?;
        }
        self.sync_case(id)
    }

    /// After editing a case's files: re-list them and update the receipt's case entry.
    fn sync_case(&self, id: &str) -> Result<(), String> {
        let mut receipt = self.receipt()?;
        for name in ["stdout", "stderr", "record.json"] {
            let rel = self.p(&format!("evidence/cases/{id}/{name}"));
            let digest = sha256_hex(&self.read(&rel)?);
            receipt["files"][&rel] = digest.clone().into();
            if let Some(entry) = receipt["platforms"][0]["cases"]
                .as_array_mut()
                .and_then(|cases| cases.iter_mut().find(|c| c["id"] == id))
            {
                let key = match name {
                    "stdout" => "stdoutSha256",
                    "stderr" => "stderrSha256",
                    _ => "recordSha256",
                };
                entry[key] = digest.into();
            }
        }
        self.put_json(RECEIPT_FILE, &receipt)
    }

    fn edit_record(&self, id: &str, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        self.edit(&self.p(&format!("evidence/cases/{id}/record.json")), edit)?;
        self.sync_case(id)
    }

    /// Edit a bundle file and re-list it.
    fn edit_listed(&self, rel: &str, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        self.edit(rel, edit)?;
        self.relist(rel)
    }

    /// Edit `outer/execution.json` and the receipt's copy of it the same way.
    fn edit_execution(&self, edit: impl Fn(&mut Value)) -> Result<(), String> {
        self.edit_listed(&self.p(EXECUTION_FILE), &edit)?;
        self.edit_receipt(|r| edit(&mut r["platforms"][0]["execution"]))
    }

    /// Replace the lifecycle log (in both places) with `rewrite` of it; the rewrite may fail
    /// when the log lacks the events it needs.
    fn rewrite_events(
        &self,
        rewrite: impl Fn(&[Event]) -> Result<Vec<Event>, String>,
    ) -> Result<(), String> {
        let current = events(&self.json(&self.p(EXECUTION_FILE))?)?;
        let events = rewrite(&current)?;
        self.edit_execution(|e| {
            e["events"] = events
                .iter()
                .map(|(event, at)| json!({"event": event, "atMs": at}))
                .collect();
        })
    }

    /// Edit the first case's witness record and re-list it.
    fn edit_case_witness(&self, edit: impl FnOnce(&mut Vec<Value>)) -> Result<(), String> {
        let id = self.first_case()?;
        let rel = self.p(&format!("{EVIDENCE_DIR}/cases/{id}/{WITNESS_FILE}"));
        self.edit_listed(&rel, |w| {
            if let Some(events) = w["events"].as_array_mut() {
                edit(events);
            }
        })
    }

    /// A consistent forgery of an adversarial control: edit its raw witness record, then
    /// rewrite its entry in `controls.json` and in the receipt to what the judge derives from
    /// the edited records, so only the requirement that it be caught can reject it.
    fn forge_adversarial(&self, name: &str, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        let dir = format!("{EVIDENCE_DIR}/{CONTROLS_DIR}/{name}");
        let witness_rel = self.p(&format!("{dir}/{WITNESS_FILE}"));
        self.edit_listed(&witness_rel, edit)?;
        let matrix: crate::matrix::Matrix =
            serde_json::from_value(self.json(MATRIX_FILE)?).map_err(|e| e.to_string())?;
        let record: crate::evidence::CaseRecord =
            serde_json::from_value(self.json(&self.p(&format!("{dir}/record.json")))?)
                .map_err(|e| e.to_string())?;
        let witness: WitnessRecord =
            serde_json::from_value(self.json(&witness_rel)?).map_err(|e| e.to_string())?;
        let stdout = self.read(&self.p(&format!("{dir}/stdout")))?;
        let stderr = self.read(&self.p(&format!("{dir}/stderr")))?;
        let control =
            judge::adversarial_control(name, &matrix, &record, &stdout, &stderr, &witness);
        let control = serde_json::to_value(&control).map_err(|e| e.to_string())?;
        let replace = |controls: &mut Value| {
            if let Some(list) = controls["adversarial"].as_array_mut() {
                for entry in list.iter_mut().filter(|e| e["name"] == name) {
                    *entry = control.clone();
                }
            }
        };
        self.edit_listed(&self.p(&format!("{EVIDENCE_DIR}/controls.json")), replace)?;
        self.edit_receipt(|r| replace(&mut r["platforms"][0]["controls"]))
    }

    /// Every platform directory the receipt names.
    fn platform_dirs(&self) -> Result<Vec<String>, String> {
        Ok(self.receipt()?["platforms"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["dir"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Edit `inputs/matrix.json` and update every digest that names it: the files map, the
    /// receipt's matrix, every platform's summary and layer listing. Only the regenerated
    /// layer (and the image ID), or a semantic check, can then catch the edit.
    fn edit_matrix_everywhere(&self, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        self.edit(MATRIX_FILE, edit)?;
        self.relist(MATRIX_FILE)?;
        let bytes = self.read(MATRIX_FILE)?;
        let sha = sha256_hex(&bytes);
        for dir in self.platform_dirs()? {
            let summary = format!("{dir}/evidence/summary.json");
            self.edit(&summary, |s| s["matrixSha256"] = sha.clone().into())?;
            self.relist(&summary)?;
            let layer = format!("{dir}/{LAYER_MANIFEST_FILE}");
            self.edit(&layer, |m| {
                if let Some(entries) = m["entries"].as_array_mut() {
                    for e in entries {
                        if e["path"] == crate::layout::MATRIX_PATH {
                            e["sha256"] = sha.clone().into();
                            e["size"] = (bytes.len() as u64).into();
                        }
                    }
                }
            })?;
            self.relist(&layer)?;
        }
        self.edit_receipt(|r| r["matrix"]["sha256"] = sha.clone().into())
    }

    /// Write `text` over a listed file and re-list it (for edits a JSON value cannot express,
    /// such as a duplicate key).
    fn write_listed_text(&self, rel: &str, text: &str) -> Result<(), String> {
        if self.read(rel)? == text.as_bytes() {
            return Err(format!("{rel} already had the mutated bytes"));
        }
        self.write(rel, text.as_bytes())?;
        self.relist(rel)
    }

    /// The first native platform's directory (`native/claude-code-linux-amd64`).
    fn native_dir(&self) -> Result<String, String> {
        self.json(NATIVE_SECTION_FILE)?["platforms"][0]["dir"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "native.json names no platform".to_string())
    }

    /// A file below the first native platform's `evidence/native/`.
    fn native_file(&self, rel: &str) -> Result<String, String> {
        Ok(format!("{}/evidence/native/{rel}", self.native_dir()?))
    }

    /// The runs of the first native platform's index: (dir, mode).
    fn native_runs(&self) -> Result<Vec<(String, String)>, String> {
        let index = self.json(&self.native_file("index.json")?)?;
        Ok(index["runs"]
            .as_array()
            .map(|runs| {
                runs.iter()
                    .filter_map(|r| {
                        Some((
                            r["dir"].as_str()?.to_string(),
                            r["mode"].as_str()?.to_string(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `name` of the first native run (`native_file` of `<first run>/<name>`).
    fn native_first_run_file(&self, name: &str) -> Result<String, String> {
        self.native_file(&format!("{}/{name}", self.native_first_run()?))
    }

    fn native_first_run(&self) -> Result<String, String> {
        self.native_runs()?
            .into_iter()
            .next()
            .map(|(d, _)| d)
            .ok_or_else(|| "the native index lists no run".to_string())
    }

    /// The first run of `mode` whose stdout `pick` accepts.
    fn native_run_of_mode(
        &self,
        mode: &str,
        pick: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        for (dir, m) in self.native_runs()? {
            let out = self.read(&self.native_file(&format!("{dir}/client.stdout"))?)?;
            if m == mode && pick(&String::from_utf8_lossy(&out)) {
                return Ok(dir);
            }
        }
        Err(format!("no native {mode} run fits"))
    }

    /// The first run whose marker has a tagged line, and that tag.
    fn native_run_with_sentinel_line(&self) -> Result<(String, String), String> {
        for (dir, _) in self.native_runs()? {
            let marker = self.read(&self.native_file(&format!("{dir}/sentinel.txt"))?)?;
            let text = String::from_utf8_lossy(&marker);
            if let Some(tag) = text.lines().find_map(|l| {
                let rest = l.split("--scopebox-tag=").nth(1)?;
                Some(rest.split('"').next()?.to_string())
            }) {
                return Ok((dir, tag));
            }
        }
        Err("no native run fired a sentinel".to_string())
    }

    /// Recompute every native platform's judgement from the copy's files, as an honest
    /// orchestrator would have written it, and rewrite native.json (and its listing).
    fn rejudge_native(&self) -> Result<(), String> {
        let matrix = self.read(NATIVE_MATRIX_FILE)?;
        let lock = self.read(NATIVE_LOCK_FILE)?;
        let mut section: NativeSection =
            serde_json::from_value(self.json(NATIVE_SECTION_FILE)?).map_err(|e| e.to_string())?;
        for run in &mut section.platforms {
            let base = self.dir.join(&run.dir).join("evidence");
            let read = |p: &str| std::fs::read(base.join(p)).ok();
            run.judgement = judge_evidence(&matrix, &lock, &read);
        }
        section.summary = summary_of(&section.platforms);
        section.lock_sha256 = sha256_hex(&lock);
        let value = serde_json::to_value(&section).map_err(|e| e.to_string())?;
        self.put_json(NATIVE_SECTION_FILE, &value)?;
        self.relist(NATIVE_SECTION_FILE)
    }

    /// Edit a raw control record below `evidence/` and re-list it.
    fn edit_control_record(&self, rel: &str, edit: impl FnOnce(&mut Value)) -> Result<(), String> {
        self.edit_listed(&self.p(&format!("{EVIDENCE_DIR}/{rel}")), edit)
    }
}

/// A lifecycle event as (name, offset).
type Event = (String, u64);

fn events(execution: &Value) -> Result<Vec<Event>, String> {
    let list = execution["events"]
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or("the execution record has no lifecycle events")?;
    list.iter()
        .map(|e| match (e["event"].as_str(), e["atMs"].as_u64()) {
            (Some(name), Some(at)) => Ok((name.to_string(), at)),
            _ => Err(format!("a lifecycle event is malformed: {e}")),
        })
        .collect()
}

fn position(events: &[Event], name: &str) -> Result<usize, String> {
    events
        .iter()
        .position(|(n, _)| n == name)
        .ok_or_else(|| format!("the lifecycle log has no {name}"))
}

/// Swap two events' names, keeping every offset where it was (so the log still reads as
/// monotonic and only the order is wrong).
fn swap_names(events: &[Event], a: &str, b: &str) -> Result<Vec<Event>, String> {
    let (i, j) = (position(events, a)?, position(events, b)?);
    let mut out = events.to_vec();
    let name_i = out[i].0.clone();
    out[i].0 = std::mem::replace(&mut out[j].0, name_i);
    Ok(out)
}

/// Every mutation class, in table order.
pub fn mutations() -> Vec<Mutation> {
    let mut all = candidate_mutations();
    all.extend(native_mutations());
    all
}

/// The classes of a bundle with a candidate platform run.
fn candidate_mutations() -> Vec<Mutation> {
    vec![
        // Raw tampering: hashing must catch it.
        m(
            "byte-flipped",
            "one byte of a case's stdout flipped, digests left alone",
            false,
            false,
            |c| {
                let id = c.first_case()?;
                let rel = c.p(&format!("evidence/cases/{id}/stdout"));
                let mut bytes = c.read(&rel)?;
                match bytes.first_mut() {
                    Some(b) => *b ^= 0x20,
                    None => bytes.push(b'x'),
                }
                c.write(&rel, &bytes)
            },
        ),
        m("file-removed", "a listed file deleted", false, false, |c| {
            let id = c.first_case()?;
            std::fs::remove_file(c.path(&c.p(&format!("evidence/cases/{id}/stderr"))))
                .map_err(|e| e.to_string())
        }),
        m(
            "file-smuggled",
            "an unlisted file added to the evidence tree",
            false,
            false,
            |c| c.write(&c.p("evidence/notes.txt"), b"nothing to see"),
        ),
        m(
            "file-smuggled-listed",
            "a file added and listed in receipt.json with its digest",
            true,
            false,
            |c| {
                c.write(&c.p("inputs/override.json"), b"{}")?;
                c.relist(&c.p("inputs/override.json"))
            },
        ),
        m(
            "symlink-smuggled",
            "a case's stdout replaced by a symlink to a file with the same bytes",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let rel = c.p(&format!("evidence/cases/{id}/stdout"));
                let bytes = c.read(&rel)?;
                let outside = c.dir.with_extension("outside");
                std::fs::write(&outside, &bytes).map_err(|e| e.to_string())?;
                std::fs::remove_file(c.path(&rel)).map_err(|e| e.to_string())?;
                symlink(&outside, &c.path(&rel))
            },
        ),
        // Cases: digest-consistent, only re-judging can catch them.
        m(
            "junit-restates-falsely",
            "junit.xml edited to report a passing case as failed (what a CI page shows), its digest updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let receipt = c.receipt()?;
                let platform = receipt["platforms"][0]["platform"]
                    .as_str()
                    .ok_or("the receipt names no platform")?
                    .to_string();
                let junit = String::from_utf8(c.read(JUNIT_FILE)?).map_err(|e| e.to_string())?;
                let passing = format!("<testcase name=\"{id}\" classname=\"{platform}.cases\"/>");
                if !junit.contains(&passing) {
                    return Err(format!("{JUNIT_FILE} has no passing test case {id}"));
                }
                let failing = format!(
                    "<testcase name=\"{id}\" classname=\"{platform}.cases\"><failure message=\"verdict fail\"/></testcase>"
                );
                c.write(JUNIT_FILE, junit.replacen(&passing, &failing, 1).as_bytes())?;
                c.relist(JUNIT_FILE)
            },
        ),
        m(
            "stdout-rewritten",
            "a case's stdout rewritten to leak a canary, every digest updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let matrix = c.json(MATRIX_FILE)?;
                let canary = matrix["canaries"][0]
                    .as_str()
                    .unwrap_or("CANARY")
                    .to_string();
                let mut bytes = c.read(&c.p(&format!("evidence/cases/{id}/stdout")))?;
                bytes.extend_from_slice(canary.as_bytes());
                c.rewrite_case_file(&id, "stdout", &bytes)
            },
        ),
        m(
            "stdout-leaks-base64-canary",
            "a case's stdout gains an extra JSON-ish field holding a canary base64-encoded at an odd alignment, every digest updated",
            true,
            false,
            |c| {
                use base64::Engine as _;
                let id = c.first_case()?;
                let matrix = c.json(MATRIX_FILE)?;
                let canary = matrix["canaries"][0]
                    .as_str()
                    .ok_or("the matrix has no canary")?
                    .to_string();
                let encoded = base64::engine::general_purpose::STANDARD
                    .encode(format!("pid=7 {canary}").as_bytes());
                let mut bytes = c.read(&c.p(&format!("evidence/cases/{id}/stdout")))?;
                bytes.extend_from_slice(format!("\n\"extra\":\"{encoded}\"\n").as_bytes());
                c.rewrite_case_file(&id, "stdout", &bytes)
            },
        ),
        // The kernel witness (digest-consistent: only re-judging the raw records catches them).
        m(
            "witness-exec-dropped",
            "the candidate's exec removed from a case's witness record",
            true,
            false,
            |c| c.edit_case_witness(|events| events.retain(|e| e["syscall"] != "execve")),
        ),
        m(
            "witness-record-removed",
            "a case's witness record deleted and unlisted: the case then has no kernel witness",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let rel = c.p(&format!("{EVIDENCE_DIR}/cases/{id}/{WITNESS_FILE}"));
                std::fs::remove_file(c.path(&rel)).map_err(|e| e.to_string())?;
                c.relist(&rel)
            },
        ),
        m(
            "witness-events-reordered",
            "a case's witness events put in another order (their seqs with them)",
            true,
            false,
            |c| c.edit_case_witness(|events| events.reverse()),
        ),
        m(
            "witness-pid-changed",
            "the candidate's exec in a case's witness record attributed to the runner's pid",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let rel = c.p(&format!("{EVIDENCE_DIR}/cases/{id}/{WITNESS_FILE}"));
                c.edit_listed(&rel, |w| {
                    let runner = w["runnerPid"].clone();
                    if let Some(events) = w["events"].as_array_mut() {
                        for e in events.iter_mut().filter(|e| e["syscall"] == "execve") {
                            e["pid"] = runner.clone();
                        }
                    }
                })
            },
        ),
        m(
            "witness-path-changed",
            "the path the kernel saw executed in a case's witness record rewritten",
            true,
            false,
            |c| {
                c.edit_case_witness(|events| {
                    for e in events.iter_mut().filter(|e| e["syscall"] == "execve") {
                        e["path"] = "/scopebox/candidate/bin/other".into();
                    }
                })
            },
        ),
        m(
            "positive-control-witness-report-dropped",
            "the sentinel's report removed from the positive control's witness record",
            true,
            false,
            |c| {
                c.edit_control_record(POSITIVE_CONTROL_WITNESS_FILE, |w| {
                    w["sentinelReports"] = json!([]);
                })
            },
        ),
        m(
            "positive-control-witness-other-write",
            "the sentinel's marker write in the positive control's witness record re-pointed at another file",
            true,
            false,
            |c| {
                c.edit_control_record(POSITIVE_CONTROL_WITNESS_FILE, |w| {
                    if let Some(events) = w["events"].as_array_mut() {
                        for e in events.iter_mut().filter(|e| e["syscall"] == "openat") {
                            e["path"] = "/tmp/elsewhere".into();
                        }
                    }
                })
            },
        ),
        m(
            "negative-control-witness-second-exec",
            "a second exec added to the negative control's witness record",
            true,
            false,
            |c| {
                c.edit_control_record(NEGATIVE_CONTROL_WITNESS_FILE, |w| {
                    if let Some(events) = w["events"].as_array_mut() {
                        if let Some(mut extra) = events.last().cloned() {
                            extra["seq"] = (extra["seq"].as_u64().unwrap_or(0) + 1).into();
                            extra["path"] = "/bin/sh".into();
                            events.push(extra);
                        }
                    }
                })
            },
        ),
        m(
            "adversarial-exec-dropped",
            "the sentinel's exec and the fork before it removed from the exec-delete-marker stand-in's witness record, controls.json re-derived to match",
            true,
            false,
            |c| {
                c.forge_adversarial("exec-delete-marker", |w| {
                    let runner = w["runnerPid"].clone();
                    if let Some(events) = w["events"].as_array_mut() {
                        // Keep the runner's own clone and the stand-in's start (the first exec).
                        let mut execs = 0;
                        events.retain(|e| {
                            let exec = e["syscall"] == "execve" || e["syscall"] == "execveat";
                            execs += usize::from(exec);
                            (exec && execs == 1) || (!exec && e["pid"] == runner)
                        });
                    }
                })
            },
        ),
        m(
            "adversarial-descendant-dropped",
            "the daemon's forks and survivor removed from the double-fork-daemon stand-in's witness record, controls.json re-derived to match",
            true,
            false,
            |c| {
                c.forge_adversarial("double-fork-daemon", |w| {
                    let runner = w["runnerPid"].clone();
                    w["survivors"] = json!([]);
                    if let Some(events) = w["events"].as_array_mut() {
                        events.retain(|e| {
                            !matches!(e["syscall"].as_str(), Some("fork" | "vfork" | "clone"))
                                || e["pid"] == runner
                        });
                    }
                })
            },
        ),
        // The exact environment.
        m(
            "env-superset-ld-preload",
            "LD_PRELOAD added (in sorted place) to a case's recorded environment",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(env) = r["env"].as_array_mut() {
                        env.push("LD_PRELOAD=/tmp/preload.so".into());
                        env.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    }
                })
            },
        ),
        m(
            "env-duplicate-home",
            "a second HOME added right after the first in a case's recorded environment",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(env) = r["env"].as_array_mut() {
                        if let Some(at) = env
                            .iter()
                            .position(|e| e.as_str().is_some_and(|e| e.starts_with("HOME=")))
                        {
                            env.insert(at + 1, "HOME=/tmp/elsewhere".into());
                        }
                    }
                })
            },
        ),
        m(
            "env-reordered",
            "a case's recorded environment in reverse order, same entries",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(env) = r["env"].as_array_mut() {
                        env.reverse();
                    }
                })
            },
        ),
        m(
            "written-file-canary-hidden",
            "a case's record gains a file left in /tmp holding a canary hex-encoded, the verdict left passing, every digest updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let matrix = c.json(MATRIX_FILE)?;
                let canary = matrix["canaries"][0]
                    .as_str()
                    .ok_or("the matrix has no canary")?
                    .to_string();
                let content: String = canary.bytes().map(|b| format!("{b:02X}")).collect();
                c.edit_record(&id, |r| {
                    r["written"] = json!([{
                        "path": "/tmp/notes",
                        "size": content.len(),
                        "sha256": sha256_hex(content.as_bytes()),
                        "contentBase64": judge::encode_base64(content.as_bytes()),
                        "truncated": false,
                    }]);
                })
            },
        ),
        m(
            "stdout-emptied",
            "a case's stdout replaced by nothing, every digest updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.rewrite_case_file(&id, "stdout", b"")
            },
        ),
        m(
            "record-verdict-flipped",
            "a record's verdict flipped",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    let pass = r["verdict"]["pass"].as_bool().unwrap_or(true);
                    r["verdict"]["pass"] = (!pass).into();
                    if pass {
                        r["verdict"]["failures"] = json!(["made up"]);
                    } else {
                        r["verdict"]["failures"] = json!([]);
                    }
                })
            },
        ),
        m(
            "receipt-verdict-flipped",
            "the receipt's verdict for a case flipped",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    let v = r["platforms"][0]["cases"][0]["verdict"].as_str().unwrap_or("pass");
                    r["platforms"][0]["cases"][0]["verdict"] = if v == "pass" { "fail" } else { "pass" }.into();
                })
            },
        ),
        m(
            "case-dropped",
            "a case removed from the receipt, its evidence and the counts",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let dir = c.path(&c.p(&format!("evidence/cases/{id}")));
                std::fs::remove_dir_all(dir).map_err(|e| e.to_string())?;
                c.edit_receipt(|r| {
                    if let Some(cases) = r["platforms"][0]["cases"].as_array_mut() {
                        let dropped = cases.remove(0);
                        let passed = dropped["verdict"] == "pass";
                        let sum = &mut r["platforms"][0]["summary"];
                        sum["total"] = (sum["total"].as_u64().unwrap_or(1) - 1).into();
                        let key = if passed { "passed" } else { "failed" };
                        sum[key] = (sum[key].as_u64().unwrap_or(1).saturating_sub(1)).into();
                    }
                    if let Some(files) = r["files"].as_object_mut() {
                        files.retain(|k, _| !k.starts_with(&c.p(&format!("evidence/cases/{id}/"))));
                    }
                })
            },
        ),
        m(
            "matrix-case-dropped",
            "a case removed from the matrix too, with every matrix digest updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                std::fs::remove_dir_all(c.path(&c.p(&format!("evidence/cases/{id}"))))
                    .map_err(|e| e.to_string())?;
                c.edit(MATRIX_FILE, |m| {
                    if let Some(cases) = m["cases"].as_array_mut() {
                        cases.retain(|k| k["id"] != id.as_str());
                    }
                })?;
                let matrix_sha = sha256_hex(&c.read(MATRIX_FILE)?);
                c.edit(&c.p("evidence/summary.json"), |s| {
                    s["matrixSha256"] = matrix_sha.clone().into();
                    if let Some(ids) = s["caseIds"].as_array_mut() {
                        ids.retain(|k| k != id.as_str());
                    }
                    s["total"] = (s["total"].as_u64().unwrap_or(1) - 1).into();
                    s["passed"] = (s["passed"].as_u64().unwrap_or(1).saturating_sub(1)).into();
                })?;
                c.relist(&c.p("evidence/summary.json"))?;
                c.relist(MATRIX_FILE)?;
                c.edit_receipt(|r| {
                    r["matrix"]["sha256"] = matrix_sha.clone().into();
                    if let Some(cases) = r["platforms"][0]["cases"].as_array_mut() {
                        cases.remove(0);
                    }
                    let sum = &mut r["platforms"][0]["summary"];
                    sum["total"] = (sum["total"].as_u64().unwrap_or(1) - 1).into();
                    sum["passed"] = (sum["passed"].as_u64().unwrap_or(1).saturating_sub(1)).into();
                    if let Some(files) = r["files"].as_object_mut() {
                        files.retain(|k, _| !k.starts_with(&c.p(&format!("evidence/cases/{id}/"))));
                    }
                })
            },
        ),
        m(
            "exit-code-changed",
            "a record's exit code changed",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    let code = r["exitCode"].as_i64().unwrap_or(0);
                    r["exitCode"] = (code + 7).into();
                })
            },
        ),
        m(
            "marker-present",
            "a record shows the sentinel marker after the case",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| r["markerPresent"] = true.into())
            },
        ),
        m(
            "fixture-changed",
            "a record's after-walk shows a fixture changed",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                if let Some(after) = r["fixturesAfter"].as_array_mut() {
                    after.push(json!({"path": "/work/smuggled", "kind": "file", "mode": "0644", "size": 1, "sha256": sha256_hex(b"x")}));
                }
            })
            },
        ),
        m(
            "argv-changed",
            "a record shows the candidate run with other arguments",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(argv) = r["argv"].as_array_mut() {
                        argv.push("--dangerously-run-servers".into());
                    }
                })
            },
        ),
        m(
            "summary-miscounted",
            "the receipt's summary counts one more pass",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    let p = r["platforms"][0]["summary"]["passed"].as_u64().unwrap_or(0);
                    r["platforms"][0]["summary"]["passed"] = (p + 1).into();
                })
            },
        ),
        // The boundary.
        m(
            "inspect-network-weakened",
            "the inspection shows network mode bridge",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(CONTAINER_INSPECT_FILE), |d| {
                    d["HostConfig"]["NetworkMode"] = "bridge".into()
                })
            },
        ),
        m(
            "inspect-rootfs-writable",
            "the inspection shows a writable root",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(CONTAINER_INSPECT_FILE), |d| {
                    d["HostConfig"]["ReadonlyRootfs"] = false.into()
                })
            },
        ),
        m(
            "inspect-bind-added",
            "the inspection shows the Docker socket bound in",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(CONTAINER_INSPECT_FILE), |d| {
                    d["HostConfig"]["Binds"] = json!(["/var/run/docker.sock:/var/run/docker.sock"])
                })
            },
        ),
        m(
            "inspect-caps-kept",
            "the inspection shows no capabilities dropped",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(CONTAINER_INSPECT_FILE), |d| {
                    d["HostConfig"]["CapDrop"] = Value::Null
                })
            },
        ),
        m(
            "inspect-pids-unlimited",
            "the inspection shows no pids limit",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(CONTAINER_INSPECT_FILE), |d| {
                    d["HostConfig"]["PidsLimit"] = Value::Null
                })
            },
        ),
        m(
            "observed-uid-root",
            "the runner observed uid 0 (record and receipt both updated)",
            true,
            false,
            |c| {
                c.edit_listed(&c.p("evidence/boundary.json"), |o| o["uid"] = 0.into())?;
                c.edit_receipt(|r| r["platforms"][0]["boundary"]["observed"]["uid"] = 0.into())
            },
        ),
        m(
            "observed-network",
            "the runner observed an eth0 interface (record and receipt updated)",
            true,
            false,
            |c| {
                let add = |o: &mut Value| {
                    if let Some(list) = o.as_array_mut() {
                        list.push("eth0".into());
                    }
                };
                c.edit_listed(&c.p("evidence/boundary.json"), |o| add(&mut o["netInterfaces"]))?;
                c.edit_receipt(|r| add(&mut r["platforms"][0]["boundary"]["observed"]["netInterfaces"]))
            },
        ),
        m(
            "policy-weakened",
            "the bundled policy allows bridge networking, every digest updated",
            true,
            false,
            |c| {
                c.edit_listed(POLICY_FILE, |p| p["networkMode"] = "bridge".into())?;
                let sha = sha256_hex(&c.read(POLICY_FILE)?);
                c.edit_receipt(|r| {
                    r["boundaryPolicySha256"] = sha.into();
                    r["platforms"][0]["boundary"]["policy"]["networkMode"] = "bridge".into();
                })
            },
        ),
        m(
            "boundary-record-falsified",
            "the receipt's boundary record claims a failure the inspection does not show",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    r["platforms"][0]["boundary"]["appliedFailures"] =
                        json!(["network-mode: expected none, got bridge"]);
                    r["platforms"][0]["boundary"]["appliedMeetsPolicy"] = false.into();
                })
            },
        ),
        // The image and the candidate.
        m(
            "image-id-changed",
            "the receipt names another image ID",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    r["platforms"][0]["inputs"]["imageId"] = format!("sha256:{}", sha256_hex(b"other image")).into()
                })
            },
        ),
        m(
            "image-config-edited",
            "the image config runs as root; image ID and config digest updated",
            true,
            false,
            |c| {
                c.edit(&c.p(IMAGE_CONFIG_FILE), |cfg| {
                    cfg["config"]["User"] = "0:0".into()
                })?;
                let sha = sha256_hex(&c.read(&c.p(IMAGE_CONFIG_FILE))?);
                c.relist(&c.p(IMAGE_CONFIG_FILE))?;
                c.edit_receipt(|r| {
                    r["platforms"][0]["inputs"]["imageId"] = format!("sha256:{sha}").into();
                    r["platforms"][0]["inputs"]["imageConfigSha256"] = sha.clone().into();
                })
            },
        ),
        m(
            "layer-diff-id-changed",
            "the receipt names another layer",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    r["platforms"][0]["inputs"]["layerDiffIds"] =
                        json!([format!("sha256:{}", sha256_hex(b"other layer"))])
                })
            },
        ),
        m(
            "runner-digest-changed",
            "the receipt names another runner binary",
            true,
            false,
            |c| {
                c.edit_receipt(|r| r["platforms"][0]["inputs"]["runnerSha256"] = sha256_hex(b"other runner").into())
            },
        ),
        m(
            "candidate-archive-changed",
            "the receipt names another candidate archive",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    r["platforms"][0]["inputs"]["candidateArchive"]["sha256"] = sha256_hex(b"other archive").into()
                })
            },
        ),
        m(
            "runtime-manifest-edited",
            "a candidate file's digest changed in the pack manifest",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(PACK_MANIFEST_FILE), |p| {
                    p["runtime"][0]["sha256"] = sha256_hex(b"other file").into()
                })
            },
        ),
        // Controls, execution, cleanup.
        m(
            "positive-control-failed",
            "the positive control's marker never appeared (record and receipt)",
            true,
            false,
            |c| {
                c.edit_listed(&c.p("evidence/controls.json"), |k| {
                    k["positive"]["markerAppeared"] = false.into()
                })?;
                c.edit_receipt(|r| r["platforms"][0]["controls"]["positive"]["markerAppeared"] = false.into())
            },
        ),
        m(
            "negative-control-missed",
            "the executing reference host was not caught (record and receipt)",
            true,
            false,
            |c| {
                c.edit_listed(&c.p("evidence/controls.json"), |k| {
                    k["negative"]["caught"] = false.into()
                })?;
                c.edit_receipt(|r| r["platforms"][0]["controls"]["negative"]["caught"] = false.into())
            },
        ),
        m(
            "negative-control-not-caught",
            "the raw negative-control record shows no marker after the reference host ran; controls.json still says caught",
            true,
            false,
            |c| {
                c.edit_control_record(NEGATIVE_CONTROL_RECORD_FILE, |k| {
                    let run = &mut k["run"];
                    run["markerPresent"] = false.into();
                    let marker = judge::marker_failure();
                    if let Some(failures) = run["verdict"]["failures"].as_array_mut() {
                        failures.retain(|f| f.as_str() != Some(marker.as_str()));
                    }
                    let none_left = run["verdict"]["failures"]
                        .as_array()
                        .is_some_and(Vec::is_empty);
                    run["verdict"]["pass"] = none_left.into();
                    k["markerText"] = Value::Null;
                })
            },
        ),
        m(
            "negative-control-fixture-swapped",
            "the raw negative-control record shows the host ran over another .mcp.json (both walks)",
            true,
            false,
            |c| {
                c.edit_control_record(NEGATIVE_CONTROL_RECORD_FILE, |k| {
                    let other = sha256_hex(b"{\"mcpServers\":{}}");
                    for walk in ["fixturesBefore", "fixturesAfter"] {
                        if let Some(entries) = k["run"][walk].as_array_mut() {
                            for e in entries.iter_mut().filter(|e| e["kind"] == "file") {
                                e["sha256"] = other.clone().into();
                            }
                        }
                    }
                })
            },
        ),
        m(
            "negative-control-other-command",
            "the raw negative-control record shows the host executing /bin/sh",
            true,
            false,
            |c| {
                c.edit_control_record(NEGATIVE_CONTROL_RECORD_FILE, |k| {
                    k["executed"][0]["program"] = "/bin/sh".into()
                })
            },
        ),
        m(
            "negative-control-record-removed",
            "the raw negative-control record deleted and unlisted; controls.json kept",
            true,
            false,
            |c| {
                let rel = c.p(&format!("{EVIDENCE_DIR}/{NEGATIVE_CONTROL_RECORD_FILE}"));
                std::fs::remove_file(c.path(&rel)).map_err(|e| format!("remove {rel}: {e}"))?;
                c.relist(&rel)
            },
        ),
        m(
            "positive-control-not-fired",
            "the raw positive-control record shows no marker after the sentinel ran; controls.json still says it appeared",
            true,
            false,
            |c| {
                c.edit_control_record(POSITIVE_CONTROL_RECORD_FILE, |k| {
                    k["markerPresentAfter"] = false.into();
                    k["markerText"] = Value::Null;
                })
            },
        ),
        m(
            "execution-timed-out",
            "the run is marked timed out (record and receipt)",
            true,
            false,
            |c| {
                let edit = |e: &mut Value| {
                    e["timedOut"] = true.into();
                    e["status"] = "timed-out".into();
                };
                c.edit_listed(&c.p(EXECUTION_FILE), edit)?;
                c.edit_receipt(|r| edit(&mut r["platforms"][0]["execution"]))
            },
        ),
        m(
            "execution-oom-killed",
            "the run is marked OOM-killed (record and receipt)",
            true,
            false,
            |c| {
                c.edit_listed(&c.p(EXECUTION_FILE), |e| e["oomKilled"] = true.into())?;
                c.edit_receipt(|r| r["platforms"][0]["execution"]["oomKilled"] = true.into())
            },
        ),
        m(
            "execution-export-before-exit",
            "the lifecycle log shows the evidence copied before the container exited (offsets kept monotonic)",
            true,
            false,
            |c| c.rewrite_events(|e| swap_names(e, "exited", "evidence-exported")),
        ),
        m(
            "execution-export-before-kill",
            "the run recast as timed out whose kill the log puts after the export (offsets shifted, record and receipt consistent)",
            true,
            false,
            |c| {
                let deadline_ms = c.json(&c.p(EXECUTION_FILE))?["deadlineSeconds"]
                    .as_u64()
                    .unwrap_or(180)
                    * 1000;
                c.rewrite_events(|old| {
                    let started = old[position(old, "started")?].1;
                    let exited = old[position(old, "exited")?].1;
                    let passed = started + deadline_ms;
                    let mut out = Vec::new();
                    for (name, at) in old {
                        match name.as_str() {
                            "exited" => {
                                for (i, step) in
                                    ["deadline-passed", "evidence-exported", "killed", "exited"]
                                        .into_iter()
                                        .enumerate()
                                {
                                    out.push((step.to_string(), passed + i as u64));
                                }
                            }
                            "evidence-exported" => {}
                            _ if *at > exited => {
                                out.push((name.clone(), passed + 3 + (at - exited)))
                            }
                            _ => out.push((name.clone(), *at)),
                        }
                    }
                    Ok(out)
                })?;
                c.edit_execution(|e| {
                    e["status"] = "timed-out".into();
                    e["timedOut"] = true.into();
                    e["signal"] = "SIGKILL".into();
                })
            },
        ),
        m(
            "execution-inspect-after-removal",
            "the lifecycle log shows the container inspected after it was removed",
            true,
            false,
            |c| c.rewrite_events(|e| swap_names(e, "container-inspected", "container-removed")),
        ),
        m(
            "execution-removal-unrecorded",
            "the lifecycle log lacks the volume's removal while the cleanup claims it",
            true,
            false,
            |c| {
                c.rewrite_events(|e| {
                    position(e, "volume-removed")?;
                    Ok(e.iter()
                        .filter(|(n, _)| n != "volume-removed")
                        .cloned()
                        .collect())
                })
            },
        ),
        m(
            "runner-unfinished",
            "the runner's summary removed and unlisted",
            true,
            false,
            |c| {
                std::fs::remove_file(c.path(&c.p("evidence/summary.json"))).map_err(|e| e.to_string())?;
                c.relist(&c.p("evidence/summary.json"))
            },
        ),
        m(
            "cleanup-skipped",
            "the volume was not removed",
            true,
            false,
            |c| c.edit_receipt(|r| r["platforms"][0]["cleanup"]["volumeRemoved"] = false.into()),
        ),
        // Signatures: the copy is signed with a throw-away key first.
        m(
            "signature-over-modified-receipt",
            "receipt.json edited after signing",
            true,
            true,
            |c| c.edit_receipt(|r| r["runId"] = "another-run".into()),
        ),
        m(
            "signature-wrong-key",
            "the envelope re-signed with another key",
            true,
            true,
            |c| {
                let (other, _) = dsse::generate_keypair_pem().map_err(|e| e.to_string())?;
                crate::attestation::sign_bundle_with(
                    &c.dir,
                    &other,
                    crate::attestation::SignOptions { force: true },
                )
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        ),
        m(
            "signature-payload-swapped",
            "the envelope's statement edited, signature kept",
            true,
            true,
            |c| {
                let bytes = c.read(ENVELOPE_FILE)?;
                let mut envelope: Envelope =
                    serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
                let payload = dsse::decode_base64(&envelope.payload).map_err(|e| e.to_string())?;
                let mut statement: Value =
                    serde_json::from_slice(&payload).map_err(|e| e.to_string())?;
                statement["predicate"]["result"] = "PASSED".into();
                statement["subject"][0]["digest"]["sha256"] = sha256_hex(b"other archive").into();
                envelope.payload = dsse::encode_base64(
                    &serde_json::to_vec(&statement).map_err(|e| e.to_string())?,
                );
                c.write(
                    ENVELOPE_FILE,
                    &serde_json::to_vec(&envelope).map_err(|e| e.to_string())?,
                )
            },
        ),
        m(
            "signature-removed",
            "the envelope deleted while a key is required",
            true,
            true,
            |c| std::fs::remove_file(c.path(ENVELOPE_FILE)).map_err(|e| e.to_string()),
        ),
        m(
            "signature-restated",
            "a validly signed statement for an edited receipt claims PASSED over a failed case",
            true,
            true,
            |c| {
                // An attacker with the key: flip a case's stdout (digest-consistent), then sign a
                // statement that still says all passed. The semantic checks must still reject.
                let id = c.first_case()?;
                c.rewrite_case_file(&id, "stdout", b"")?;
                let receipt_bytes = c.read(RECEIPT_FILE)?;
                let receipt: Receipt =
                    serde_json::from_slice(&receipt_bytes).map_err(|e| e.to_string())?;
                let native = c
                    .read(scopebox_schema::native_receipt::NATIVE_SECTION_FILE)
                    .ok()
                    .and_then(|b| crate::strict_json::from_slice(&b).ok());
                let statement = statement_for(&receipt, &receipt_bytes, native.as_ref(), true);
                let key = dsse::signing_key_from_pem(&c.key_pem).map_err(|e| e.to_string())?;
                let envelope = dsse::sign(
                    IN_TOTO_PAYLOAD_TYPE,
                    &serde_json::to_vec(&statement).map_err(|e| e.to_string())?,
                    &key,
                );
                c.write(
                    ENVELOPE_FILE,
                    &serde_json::to_vec(&envelope).map_err(|e| e.to_string())?,
                )
            },
        ),
        // The bound inputs (schema 2): the layer is regenerated from the bundle's own bytes.
        m(
            "layer-listing-edited",
            "the layer listing names another matrix digest, re-listed",
            true,
            false,
            |c| {
                let rel = c.p(LAYER_MANIFEST_FILE);
                c.edit_listed(&rel, |m| {
                    if let Some(entries) = m["entries"].as_array_mut() {
                        for e in entries {
                            if e["path"] == crate::layout::MATRIX_PATH {
                                e["sha256"] = sha256_hex(b"another matrix").into();
                            }
                        }
                    }
                })
            },
        ),
        m(
            "matrix-stripped-digests-recomputed",
            "the matrix stripped of all but one canary; matrix, summaries and layer listing digests all updated",
            true,
            false,
            |c| {
                c.edit_matrix_everywhere(|m| {
                    if let Some(canaries) = m["canaries"].as_array_mut() {
                        canaries.truncate(1);
                    }
                })
            },
        ),
        m(
            "candidate-relabelled",
            "the first platform claims it tested another archive (the other platform's, or fresh bytes): blob, pack manifest, receipt and blob index updated",
            true,
            false,
            |c| {
                let receipt = c.receipt()?;
                let first = &receipt["platforms"][0]["inputs"]["candidateArchive"];
                let other = receipt["platforms"][1]["inputs"]["candidateArchive"].clone();
                let (name, sha, bytes) = if other.is_object() {
                    let sha = other["sha256"].as_str().unwrap_or_default().to_string();
                    let bytes = c.read(&blob_path(&sha))?;
                    (other["name"].as_str().unwrap_or_default().to_string(), sha, bytes)
                } else {
                    let files = vec![crate::archive::ArchiveFile {
                        path: crate::archive::ARCHIVE_BIN.into(),
                        mode: 0o755,
                        bytes: b"\x7fELF relabelled".to_vec(),
                    }];
                    let bytes = crate::archive::write_archive(&files);
                    (
                        first["name"].as_str().unwrap_or_default().to_string(),
                        sha256_hex(&bytes),
                        bytes,
                    )
                };
                c.write(&blob_path(&sha), &bytes)?;
                c.relist(&blob_path(&sha))?;
                let files =
                    crate::archive::read_archive(&name, &bytes).map_err(|e| e.to_string())?;
                let manifest = crate::archive::manifest(&name, &bytes, &files);
                let rel = c.p(PACK_MANIFEST_FILE);
                c.put_json(&rel, &serde_json::to_value(&manifest).map_err(|e| e.to_string())?)?;
                c.relist(&rel)?;
                let platform = receipt["platforms"][0]["platform"].clone();
                c.edit_receipt(|r| {
                    let old = r["platforms"][0]["inputs"]["candidateArchive"]["sha256"].clone();
                    r["platforms"][0]["inputs"]["candidateArchive"] =
                        json!({"name": name, "sha256": sha});
                    r["platforms"][0]["inputs"]["runtimeManifestSha256"] =
                        manifest.runtime_manifest_sha256.clone().into();
                    if let Some(blobs) = r["blobs"].as_array_mut() {
                        for b in blobs.iter_mut() {
                            let is_old = b["sha256"] == old;
                            if let Some(uses) = b["uses"].as_array_mut() {
                                uses.retain(|u| {
                                    !(is_old
                                        && u["role"] == "candidate-archive"
                                        && u["platform"] == platform)
                                });
                            }
                        }
                        let used = json!({"role": "candidate-archive", "platform": platform, "name": name});
                        match blobs.iter_mut().find(|b| b["sha256"] == sha.as_str()) {
                            Some(b) => {
                                if let Some(uses) = b["uses"].as_array_mut() {
                                    uses.push(used);
                                }
                            }
                            None => blobs.push(json!({"sha256": sha, "size": bytes.len(), "uses": [used]})),
                        }
                        blobs.retain(|b| b["uses"].as_array().is_some_and(|u| !u.is_empty()));
                        blobs.sort_by(|a, b| {
                            a["sha256"].as_str().unwrap_or("").cmp(b["sha256"].as_str().unwrap_or(""))
                        });
                    }
                })
            },
        ),
        m(
            "platform-dropped-silently",
            "the second platform's run removed from the receipt and the bundle, the counts updated, nothing said about it",
            true,
            false,
            |c| {
                let receipt = c.receipt()?;
                let Some(dir) = receipt["platforms"][1]["dir"].as_str() else {
                    return Err("the bundle has one platform".into());
                };
                std::fs::remove_dir_all(c.path(dir)).map_err(|e| e.to_string())?;
                let dir = format!("{dir}/");
                c.edit_receipt(|r| {
                    if let Some(p) = r["platforms"].as_array_mut() {
                        p.truncate(1);
                    }
                    let cases = r["platforms"][0]["summary"]["total"].clone();
                    let passed = r["platforms"][0]["summary"]["passed"].clone();
                    r["summary"] = json!({"platforms": 1, "platformsPassed": 1, "cases": cases, "casesPassed": passed});
                    if let Some(files) = r["files"].as_object_mut() {
                        files.retain(|k, _| !k.starts_with(&dir));
                    }
                })
            },
        ),
        // Strictness and bounds (issue 14 item 3): duplicate keys, floods, bombs.
        m(
            "duplicate-key-inspect",
            "the container inspection says NetworkMode host, then none (a last-wins reader sees none), re-listed",
            true,
            false,
            |c| {
                let rel = c.p(CONTAINER_INSPECT_FILE);
                let text = String::from_utf8(c.read(&rel)?).map_err(|e| e.to_string())?;
                let at = text
                    .find("\"NetworkMode\"")
                    .ok_or("the inspection has no NetworkMode")?;
                let doubled = format!("{}\"NetworkMode\": \"host\", {}", &text[..at], &text[at..]);
                c.write_listed_text(&rel, &doubled)
            },
        ),
        m(
            "duplicate-key-record",
            "a case record says exit code 3, then its real one; every digest of it updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                let rel = c.p(&format!("evidence/cases/{id}/record.json"));
                let text = String::from_utf8(c.read(&rel)?).map_err(|e| e.to_string())?;
                let open = text.find('{').ok_or("the record is not an object")?;
                let doubled = format!("{}\"exitCode\": 3, {}", &text[..=open], &text[open + 1..]);
                c.write(&rel, doubled.as_bytes())?;
                c.sync_case(&id)
            },
        ),
        m(
            "duplicate-key-matrix",
            "the matrix names a canary list twice (the last one empty), every matrix digest updated",
            true,
            false,
            |c| {
                let text = String::from_utf8(c.read(MATRIX_FILE)?).map_err(|e| e.to_string())?;
                let open = text.find('{').ok_or("the matrix is not an object")?;
                let doubled = format!("{}{}, \"canaries\": []}}", &text[..open], text[open..].trim_end().trim_end_matches('}'));
                c.write(MATRIX_FILE, doubled.as_bytes())?;
                // Recompute every digest of the matrix with the doubled bytes in place.
                let sha = sha256_hex(doubled.as_bytes());
                c.relist(MATRIX_FILE)?;
                for dir in c.platform_dirs()? {
                    let summary = format!("{dir}/evidence/summary.json");
                    c.edit(&summary, |s| s["matrixSha256"] = sha.clone().into())?;
                    c.relist(&summary)?;
                }
                c.edit_receipt(|r| r["matrix"]["sha256"] = sha.clone().into())
            },
        ),
        m(
            "env-superset",
            "a case record's environment carries LD_PRELOAD besides the matrix's variables, digests updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(env) = r["env"].as_array_mut() {
                        env.push("LD_PRELOAD=/tmp/hook.so".into());
                    }
                })
            },
        ),
        m(
            "run-id-replayed",
            "receipt.json names another run id (an older run's), unsigned",
            true,
            false,
            |c| c.edit_receipt(|r| r["runId"] = "replayed-run-0001".into()),
        ),
        m(
            "matrix-fill-bomb",
            "the first case declares 400 fill files of 16 MiB (6.7 GB), every matrix digest updated",
            true,
            false,
            |c| {
                c.edit_matrix_everywhere(|m| {
                    if let Some(fixture) = m["cases"][0]["fixture"].as_array_mut() {
                        for i in 0..400 {
                            fixture.push(json!({"kind": "file", "path": format!("/work/bomb/f{i}"),
                                "fill": {"prefix": "{", "byte": 32, "size": judge::MAX_FILL_SIZE}}));
                        }
                    }
                })
            },
        ),
        m(
            "matrix-fixture-flood",
            "the first case declares 60,000 fixture entries, every matrix digest updated",
            true,
            false,
            |c| {
                c.edit_matrix_everywhere(|m| {
                    if let Some(fixture) = m["cases"][0]["fixture"].as_array_mut() {
                        for i in 0..60_000 {
                            fixture.push(json!({"kind": "dir", "path": format!("/work/flood/d{i}")}));
                        }
                    }
                })
            },
        ),
        m(
            "matrix-case-dropped-all-digests",
            "a case removed from the matrix, every platform's receipt entries, evidence, summaries and the layer listings, all digests recomputed",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_matrix_everywhere(|m| {
                    if let Some(cases) = m["cases"].as_array_mut() {
                        cases.retain(|k| k["id"] != id.as_str());
                    }
                })?;
                for (i, dir) in c.platform_dirs()?.into_iter().enumerate() {
                    let _ = std::fs::remove_dir_all(c.path(&format!("{dir}/evidence/cases/{id}")));
                    let summary = format!("{dir}/evidence/summary.json");
                    c.edit(&summary, |s| {
                        if let Some(ids) = s["caseIds"].as_array_mut() {
                            ids.retain(|k| k != id.as_str());
                        }
                        s["total"] = (s["total"].as_u64().unwrap_or(1) - 1).into();
                        s["passed"] = (s["passed"].as_u64().unwrap_or(1).saturating_sub(1)).into();
                    })?;
                    c.relist(&summary)?;
                    let prefix = format!("{dir}/evidence/cases/{id}/");
                    c.edit_receipt(|r| {
                        let p = &mut r["platforms"][i];
                        if let Some(cases) = p["cases"].as_array_mut() {
                            cases.retain(|k| k["id"] != id.as_str());
                        }
                        let sum = &mut p["summary"];
                        sum["total"] = (sum["total"].as_u64().unwrap_or(1) - 1).into();
                        sum["passed"] = (sum["passed"].as_u64().unwrap_or(1).saturating_sub(1)).into();
                        if let Some(files) = r["files"].as_object_mut() {
                            files.retain(|k, _| !k.starts_with(&prefix));
                        }
                    })?;
                }
                c.edit_receipt(|r| {
                    if let Some(n) = r["matrix"]["caseCount"].as_u64() {
                        r["matrix"]["caseCount"] = (n - 1).into();
                    }
                    let (mut cases, mut passed) = (0, 0);
                    if let Some(ps) = r["platforms"].as_array() {
                        for p in ps {
                            cases += p["summary"]["total"].as_u64().unwrap_or(0);
                            passed += p["summary"]["passed"].as_u64().unwrap_or(0);
                        }
                    }
                    r["summary"]["cases"] = cases.into();
                    r["summary"]["casesPassed"] = passed.into();
                })
            },
        ),
        m(
            "receipt-case-flood",
            "the receipt lists 4,097 more cases for the first platform than a matrix may have",
            true,
            false,
            |c| {
                c.edit_receipt(|r| {
                    if let Some(cases) = r["platforms"][0]["cases"].as_array_mut() {
                        let first = cases[0].clone();
                        for i in 0..=judge::bounds::MAX_CASES {
                            let mut more = first.clone();
                            more["id"] = format!("flood-{i}").into();
                            cases.push(more);
                        }
                    }
                })
            },
        ),
        m(
            "record-observation-flood",
            "a case record's fixture walk lists 70,000 entries, digests updated",
            true,
            false,
            |c| {
                let id = c.first_case()?;
                c.edit_record(&id, |r| {
                    if let Some(before) = r["fixturesBefore"].as_array_mut() {
                        for i in 0..70_000 {
                            before.push(json!({"path": format!("/work/o{i}"), "kind": "dir", "mode": "0755", "size": 0}));
                        }
                    }
                })
            },
        ),
        m(
            "file-name-escape-smuggled",
            "a file whose name hides the report behind ESC[8m smuggled into the evidence, listed",
            true,
            false,
            |c| {
                let rel = c.p("evidence/\u{1b}[8m\u{202e}verified");
                c.write(&rel, b"hidden")?;
                c.relist(&rel)
            },
        ),
    ]
}

fn m(
    class: &'static str,
    description: &'static str,
    digest_consistent: bool,
    signed: bool,
    apply: fn(&mut Copy) -> Result<(), String>,
) -> Mutation {
    Mutation {
        class,
        description,
        digest_consistent,
        signed,
        native: false,
        apply,
    }
}

/// A native class (`Mutation::native`).
fn native_m(
    class: &'static str,
    description: &'static str,
    digest_consistent: bool,
    apply: fn(&mut Copy) -> Result<(), String>,
) -> Mutation {
    Mutation {
        class,
        description,
        digest_consistent,
        signed: false,
        native: true,
        apply,
    }
}

/// The native reference's classes: tampered captures made consistent with every digest and
/// with a recomputed judgement, so only the differential judge can catch them; a forged
/// judgement and a forged pin, which only the recomputation and the lock can.
fn native_mutations() -> Vec<Mutation> {
    vec![
        native_m(
            "native-sentinel-tag-removed",
            "every marker line of one fired tag removed from a native run's sentinel.txt, judgement recomputed, digests updated",
            true,
            |c| {
                let (dir, tag) = c.native_run_with_sentinel_line()?;
                let rel = c.native_file(&format!("{dir}/sentinel.txt"))?;
                let text = String::from_utf8_lossy(&c.read(&rel)?).into_owned();
                let kept: String = text
                    .lines()
                    .filter(|l| !l.contains(&format!("--scopebox-tag={tag}\"")))
                    .map(|l| format!("{l}\n"))
                    .collect();
                c.write(&rel, kept.as_bytes())?;
                c.relist(&rel)?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-init-line-edited",
            "a headless run's system/init line lists a server under another name, client.json's digest updated, judgement recomputed",
            true,
            |c| {
                let dir = c.native_run_of_mode("headless", |stdout| stdout.contains("\"mcp_servers\":[{\"name\":\""))?;
                let out = c.native_file(&format!("{dir}/client.stdout"))?;
                let text = String::from_utf8_lossy(&c.read(&out)?).into_owned();
                let edited = text.replacen("\"mcp_servers\":[{\"name\":\"", "\"mcp_servers\":[{\"name\":\"forged-", 1);
                c.write(&out, edited.as_bytes())?;
                c.relist(&out)?;
                let record = c.native_file(&format!("{dir}/client.json"))?;
                let (sha, len) = (sha256_hex(edited.as_bytes()), edited.len() as u64);
                c.edit_listed(&record, |r| {
                    r["stdout"]["sha256"] = sha.into();
                    r["stdout"]["totalBytes"] = len.into();
                })?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-exit-code-changed",
            "a native run's client.json exit code changed, judgement recomputed, digests updated",
            true,
            |c| {
                let record = c.native_first_run_file("client.json")?;
                c.edit_listed(&record, |r| {
                    let code = r["exitCode"].as_i64().unwrap_or(0);
                    r["exitCode"] = (if code == 0 { 1 } else { 0 }).into();
                })?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-index-reordered",
            "the first two runs of native/index.json swapped, judgement recomputed, digests updated",
            true,
            |c| {
                let index = c.native_file("index.json")?;
                c.edit_listed(&index, |i| {
                    if let Some(runs) = i["runs"].as_array_mut() {
                        if runs.len() > 1 {
                            runs.swap(0, 1);
                        }
                    }
                })?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-other-execution",
            "the client's witness record of a native run shows an exec of /bin/sh, judgement recomputed, digests updated",
            true,
            |c| {
                let rel = c.native_first_run_file("witness.json")?;
                c.edit_listed(&rel, |w| {
                    let seq = w["events"].as_array().and_then(|e| e.last()).and_then(|e| e["seq"].as_u64()).unwrap_or(0);
                    if let Some(events) = w["events"].as_array_mut() {
                        events.push(json!({"seq": seq + 1, "syscall": "execve", "pid": 9999, "ppid": 9998, "path": "/bin/sh", "argc": 1}));
                    }
                })?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-judgement-forged",
            "native.json claims the first run launched nothing, the raw captures unchanged, native.json re-listed",
            true,
            |c| {
                c.edit_listed(NATIVE_SECTION_FILE, |n| {
                    n["platforms"][0]["judgement"]["runs"][0]["observation"]["launched"] = json!(["forged/none"]);
                })
            },
        ),
        native_m(
            "native-pin-swapped",
            "native.json's pinned binary sha256 replaced by another platform's, re-listed",
            true,
            |c| {
                c.edit_listed(NATIVE_SECTION_FILE, |n| {
                    n["platforms"][0]["pinned"]["binarySha256"] = "ab".repeat(32).into();
                })
            },
        ),
        native_m(
            "native-lock-edited",
            "the bundled native lock pins another binary digest, section and judgement recomputed, digests updated",
            true,
            |c| {
                c.edit_listed(NATIVE_LOCK_FILE, |l| {
                    if let Some(clients) = l["clients"].as_array_mut() {
                        for client in clients {
                            if let Some(platforms) = client["platforms"].as_array_mut() {
                                for p in platforms {
                                    p["binary"]["sha256"] = "cd".repeat(32).into();
                                }
                            }
                        }
                    }
                })?;
                c.rejudge_native()
            },
        ),
        native_m(
            "native-capture-raw",
            "a byte appended to a native run's client.stdout, nothing re-listed",
            false,
            |c| {
                let rel = c.native_first_run_file("client.stdout")?;
                let mut bytes = c.read(&rel)?;
                bytes.push(b'\n');
                c.write(&rel, &bytes)
            },
        ),
    ]
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, link).map_err(|e| e.to_string())
}

#[cfg(not(unix))]
fn symlink(_: &Path, _: &Path) -> Result<(), String> {
    Err("symlinks need unix".into())
}

/// Copy the bundle directory `from` to `to` (made new): read once by the verifier's own walk
/// (`bundle::read_tree`: every entry reached from its parent's descriptor with `O_NOFOLLOW`,
/// so no link is followed, not even a directory swapped for one mid-copy; each file opened
/// `O_NONBLOCK`, checked a regular file on its descriptor, read once within `MAX_FILE_BYTES`
/// and the bundle's total), then written from memory. Directories and regular files only: the
/// bundle was measured first, so anything else met now is an error. `between` is the walk's
/// (the tests change the tree there).
fn copy_tree(from: &Path, to: &Path, between: &mut dyn FnMut(&str)) -> std::io::Result<()> {
    let tree = crate::verify::bundle::read_tree(from, crate::verify::bundle::BOUNDS, between)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if let Some((rel, kind)) = tree.irregular.iter().next() {
        return Err(std::io::Error::other(format!(
            "{rel} is a {kind}, not a file or directory"
        )));
    }
    std::fs::create_dir(to)?;
    for dir in &tree.dirs {
        std::fs::create_dir_all(to.join(dir))?;
    }
    for (rel, bytes) in &tree.files {
        let mut target = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(to.join(rel))?;
        std::io::Write::write_all(&mut target, bytes)?;
    }
    Ok(())
}

/// Bounds of the bundle, from `lstat` alone, before anything is copied: the reader's own first
/// pass (`bundle::measure`: `MAX_FILE_BYTES` per file, `MAX_TOTAL_BYTES` in all, `MAX_ENTRIES`,
/// `MAX_DEPTH`), and nothing but directories and regular files with UTF-8 names. A sparse
/// 2 GiB file is refused by its size. The bundle's total size when it may be copied.
pub fn measure(bundle: &Path) -> Result<u64, String> {
    let measured = crate::verify::bundle::measure(bundle, crate::verify::bundle::BOUNDS)
        .map_err(|e| e.to_string())?;
    if let Some((rel, kind)) = measured.irregular.iter().next() {
        let what = match *kind {
            "non-utf8-name" => "has a name that is not UTF-8".to_string(),
            kind => format!("is a {kind}, not a file or directory"),
        };
        // Raw here: whoever prints the error escapes it (once).
        return Err(format!("{rel} {what} (scopebox-verify names it)"));
    }
    Ok(measured.total)
}

/// Linux statfs magic numbers of RAM-backed file systems.
const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// Whether `dir` lives on a RAM-backed file system (tmpfs, ramfs), where dozens of bundle
/// copies would be held in memory.
pub fn is_ram_backed(dir: &Path) -> std::io::Result<bool> {
    let stat = rustix::fs::statfs(dir)?;
    #[allow(clippy::unnecessary_cast)] // f_type is i64 on some targets, u32/i32 on others
    let kind = stat.f_type as u64;
    Ok(kind == TMPFS_MAGIC || kind == RAMFS_MAGIC)
}

/// A temporary directory for the copies on a disk-backed file system: `$TMPDIR` (or `/tmp`)
/// when it is not tmpfs/ramfs, else `/var/tmp`; never `/dev/shm`. None found is an error
/// with a hint, not a silent fallback to memory.
fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let mut b = tempfile::Builder::new();
    b.prefix("scopebox-selftest-");
    let mut tried = Vec::new();
    for dir in [std::env::temp_dir(), PathBuf::from("/var/tmp")] {
        match is_ram_backed(&dir) {
            Ok(false) => return b.tempdir_in(&dir),
            Ok(true) => tried.push(format!("{} is RAM-backed", dir.display())),
            Err(e) => tried.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(std::io::Error::other(format!(
        "no disk-backed temporary directory ({}); set TMPDIR to a directory on disk",
        tried.join("; ")
    )))
}

/// Run every mutation class against copies of the bundle at `bundle`.
pub fn run(bundle: &Path) -> Result<SelfTestReport, SelfTestError> {
    // Bounds before any copy: the bundle is measured from lstat alone.
    measure(bundle).map_err(SelfTestError::Bounds)?;
    let scratch = scratch_dir().map_err(SelfTestError::Copy)?;
    // The base: an unsigned copy (both envelopes removed), which must verify.
    let base = scratch.path().join("base");
    copy_tree(bundle, &base, &mut |_| {}).map_err(SelfTestError::Copy)?;
    let _ = std::fs::remove_file(base.join(ENVELOPE_FILE));
    let _ = std::fs::remove_file(base.join(PROVENANCE_ENVELOPE_FILE));
    let report =
        verify::verify_dir(&base, &VerifyOptions::default()).map_err(SelfTestError::Unreadable)?;
    if !report.verified {
        return Err(SelfTestError::BaseRejected(report.failed_ids().join(", ")));
    }
    // A native-only bundle has no candidate platform: its candidate classes do not apply.
    let pdir = std::fs::read(base.join(RECEIPT_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|r| r["platforms"][0]["dir"].as_str().map(str::to_string));
    let has_native = base.join(NATIVE_SECTION_FILE).is_file();
    if pdir.is_none() && !has_native {
        return Err(SelfTestError::BaseRejected(
            "the receipt names no platform".into(),
        ));
    }
    let (key_pem, public_pem) =
        dsse::generate_keypair_pem().map_err(|e| SelfTestError::Sign(e.to_string()))?;
    // The signed base must verify with the key too, or the signature rows prove nothing.
    let signed_base = scratch.path().join("signed-base");
    copy_tree(&base, &signed_base, &mut |_| {}).map_err(SelfTestError::Copy)?;
    crate::attestation::sign_bundle_with(
        &signed_base,
        &key_pem,
        crate::attestation::SignOptions { force: true },
    )
    .map_err(|e| SelfTestError::Sign(e.to_string()))?;
    // As `scopebox sign` does: the provenance statement too, when the run built a candidate
    // (with a key, the verifier requires it then).
    crate::provenance::sign_bundle(&signed_base, &key_pem, true)
        .map_err(|e| SelfTestError::Sign(e.to_string()))?;
    let keyed = VerifyOptions {
        public_key_pem: Some(public_pem),
        ..Default::default()
    };
    let signed_report =
        verify::verify_dir(&signed_base, &keyed).map_err(SelfTestError::Unreadable)?;
    if !signed_report.verified {
        return Err(SelfTestError::SignedBaseRejected(
            signed_report.failed_ids().join(", "),
        ));
    }

    let mut rows = Vec::new();
    let applicable =
        mutations()
            .into_iter()
            .filter(|m| if m.native { has_native } else { pdir.is_some() });
    for (i, mutation) in applicable.enumerate() {
        let dir = scratch.path().join(format!("m{i:02}"));
        let source = if mutation.signed { &signed_base } else { &base };
        copy_tree(source, &dir, &mut |_| {}).map_err(SelfTestError::Copy)?;
        let mut copy = Copy {
            dir: dir.clone(),
            key_pem: key_pem.clone(),
            pdir: pdir.clone().unwrap_or_default(),
        };
        let options = if mutation.signed {
            keyed.clone()
        } else {
            VerifyOptions::default()
        };
        let applied = (mutation.apply)(&mut copy);
        let row = |outcome: &str, rejected_by: Vec<String>, detail: Option<String>| Row {
            class: mutation.class.to_string(),
            description: mutation.description.to_string(),
            digest_consistent: mutation.digest_consistent,
            outcome: outcome.to_string(),
            rejected_by,
            detail,
        };
        rows.push(match applied {
            Err(e) => row("not-applicable", Vec::new(), Some(e)),
            Ok(()) => match verify::verify_dir(&dir, &options) {
                Err(e) => row("unreadable", Vec::new(), Some(format!("failed to {e}"))),
                Ok(report) if report.verified => row("ACCEPTED", Vec::new(), None),
                Ok(report) => row(
                    "rejected",
                    report.failed_ids().iter().map(|s| s.to_string()).collect(),
                    None,
                ),
            },
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(SelfTestReport {
        schema_version: 1,
        bundle: bundle.display().to_string(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn bundle_like() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        std::fs::write(dir.path().join("top"), b"12345").unwrap();
        std::fs::write(dir.path().join("a/b/deep"), b"678").unwrap();
        dir
    }

    #[test]
    fn a_tree_of_files_and_directories_measures_its_size_and_copies_exactly() {
        let from = bundle_like();
        assert_eq!(measure(from.path()).unwrap(), 8);
        let to = tempfile::tempdir().unwrap();
        let copy = to.path().join("copy");
        copy_tree(from.path(), &copy, &mut |_| {}).unwrap();
        assert_eq!(std::fs::read(copy.join("top")).unwrap(), b"12345");
        assert_eq!(std::fs::read(copy.join("a/b/deep")).unwrap(), b"678");
        assert!(copy.join("empty").is_dir());
        assert_eq!(measure(&copy).unwrap(), 8);
    }

    #[test]
    fn links_and_unusable_names_are_refused_by_name_before_any_copy() {
        let dir = bundle_like();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("a/\x1b[31mlink")).unwrap();
        let error = measure(dir.path()).unwrap_err();
        assert!(
            error.starts_with("a/\x1b[31mlink is a symlink, not a file or directory"),
            "{error}"
        );
        // The copy refuses it too (were it asked without measuring first), never following it.
        let to = tempfile::tempdir().unwrap();
        let error = copy_tree(dir.path(), &to.path().join("copy"), &mut |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a/\x1b[31mlink is a symlink, not a file or directory"
        );
        assert!(!to.path().join("copy").exists());

        let dir = bundle_like();
        std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(b"\xff")), b"").unwrap();
        let error = measure(dir.path()).unwrap_err();
        assert!(error.contains("has a name that is not UTF-8"), "{error}");
    }

    #[test]
    fn a_directory_swapped_for_a_link_while_the_bundle_is_copied_is_never_followed() {
        // `a/f` holds "inside"; beside the bundle, `outside/f` holds "outside". Just before
        // `a/f` is copied, `a` moves away and a link to `outside` takes its name: copied by
        // path, that is the outside file's bytes in the self-test's base.
        let from = bundle_like();
        std::fs::write(from.path().join("a/f"), b"inside").unwrap();
        let beside = tempfile::tempdir().unwrap();
        std::fs::create_dir(beside.path().join("outside")).unwrap();
        std::fs::write(beside.path().join("outside/f"), b"outside").unwrap();
        let to = tempfile::tempdir().unwrap();
        let copy = to.path().join("copy");
        let copied = copy_tree(from.path(), &copy, &mut |rel| {
            if rel == "a/f" {
                std::fs::rename(from.path().join("a"), beside.path().join("moved")).unwrap();
                std::os::unix::fs::symlink(beside.path().join("outside"), from.path().join("a"))
                    .unwrap();
                // The race is real: the path now leads outside.
                let by_path = std::fs::read(from.path().join("a/f")).unwrap();
                assert_eq!(by_path, b"outside");
            }
        });
        // Read through the descriptor of `a` opened before the swap: what was inside.
        copied.unwrap();
        assert_eq!(std::fs::read(copy.join("a/f")).unwrap(), b"inside");
    }

    #[test]
    fn a_file_swapped_for_a_fifo_while_the_bundle_is_copied_stops_the_copy_without_blocking() {
        let from = bundle_like();
        let to = tempfile::tempdir().unwrap();
        let error = copy_tree(from.path(), &to.path().join("copy"), &mut |rel| {
            if rel == "a/b/deep" {
                let file = from.path().join(rel);
                std::fs::remove_file(&file).unwrap();
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &file,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .unwrap();
            }
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "a/b/deep is no longer a regular file while the bundle was read; verify a bundle \
             nothing else is changing"
        );
    }
}
