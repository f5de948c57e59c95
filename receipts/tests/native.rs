//! The native reference in a bundle: a native bundle (candidate platforms + `native.json`) and
//! a native-only bundle verify; the self-test's native classes are all rejected; each tampered
//! capture (removed tag, edited system/init, changed exit code, reordered index, a forged
//! judgement or pin) is rejected by the named check, through the binary, with the report
//! escaped; the native part's bounds hold.

use crate::synthetic::Writer;
use crate::util::{edit_json, relist, tempdir, verify_bin};
use scopebox_receipts::verify::{verify_dir, VerifyOptions};
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::platform::Platform;
use scopebox_schema::receipt::{Receipt, JUNIT_FILE, MATRIX_FILE, RECEIPT_FILE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) fn native_bundle(tmp: &Path) -> PathBuf {
    let dir = tmp.join("bundle");
    crate::synthetic::write_bundle(&dir, 2).unwrap();
    add_native(&dir).unwrap();
    dir
}

fn native_only(tmp: &Path) -> PathBuf {
    let dir = tmp.join("native-only");
    write_native_only(&dir).unwrap();
    dir
}

/// Add the native reference to the bundle at `dir` (written by `write_bundle*`): the sample
/// evidence of `native_sample` (real Claude Code 2.1.327 outputs) below
/// `native/claude-code-linux-amd64/evidence/`, the matrix and lock under `inputs/`, and
/// `native.json` built with `native_receipt` from `judge_evidence`, every file listed.
pub fn add_native(dir: &Path) -> std::io::Result<()> {
    use scopebox_schema::native_observe::judge_evidence;
    use scopebox_schema::native_receipt::{
        platform_run, run_dir_of, section, NATIVE_LOCK_FILE, NATIVE_MATRIX_FILE,
        NATIVE_SECTION_FILE,
    };
    let sample = scopebox_schema::native_sample::sample();
    let mut w = Writer {
        dir,
        files: BTreeMap::new(),
    };
    let native_only = !dir.join(MATRIX_FILE).exists();
    let base = run_dir_of("claude-code", Platform::LinuxAmd64, native_only);
    for (rel, bytes) in &sample.files {
        w.put(&format!("{base}/evidence/{rel}"), bytes)?;
    }
    w.put(NATIVE_MATRIX_FILE, &sample.matrix)?;
    w.put(NATIVE_LOCK_FILE, &sample.lock)?;
    let judgement = judge_evidence(&sample.matrix, &sample.lock, &sample.reader());
    assert!(judgement.passed, "the sample judges clean");
    let mut run = platform_run(
        &sample.lock,
        Platform::LinuxAmd64,
        false,
        judgement,
        native_only,
    )
    .map_err(std::io::Error::other)?;
    if native_only {
        // The native container's inspection, as Docker reports a conforming one.
        run.engine = Some(scopebox_schema::engine::EngineName::Docker);
        w.put(
            &format!(
                "{base}/{}",
                scopebox_schema::receipt::CONTAINER_INSPECT_FILE
            ),
            include_bytes!("../../schema/tests/fixtures/container-inspect.json"),
        )?;
    }
    let native = section(&sample.matrix, &sample.lock, vec![run]).map_err(std::io::Error::other)?;
    w.put_json(NATIVE_SECTION_FILE, &native)?;
    let path = dir.join(RECEIPT_FILE);
    let mut receipt: Receipt =
        serde_json::from_slice(&std::fs::read(&path)?).map_err(std::io::Error::other)?;
    receipt.files.extend(w.files);
    let mut bytes = serde_json::to_vec_pretty(&receipt).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    std::fs::write(path, bytes)
}

/// A native-only bundle at `dir` (what `scopebox native` writes): no candidate platform, no
/// candidate matrix, `matrix` naming the native matrix.
pub fn write_native_only(dir: &Path) -> std::io::Result<()> {
    use scopebox_schema::native_receipt::{native_only_receipt, NativeOnlyRun, NATIVE_MATRIX_FILE};
    crate::synthetic::write_bundle_for(dir, 1, &[], &[])?;
    std::fs::remove_file(dir.join(MATRIX_FILE))?;
    // The native container's own boundary record sits beside its native tree.
    let boundary = serde_json::to_vec_pretty(&crate::synthetic::conforming_observation())
        .map_err(std::io::Error::other)?;
    let boundary_rel = "platforms/linux-amd64/evidence/boundary.json";
    std::fs::create_dir_all(dir.join(boundary_rel).parent().unwrap())?;
    std::fs::write(dir.join(boundary_rel), &boundary)?;
    add_native(dir)?;
    let path = dir.join(RECEIPT_FILE);
    let old: Receipt =
        serde_json::from_slice(&std::fs::read(&path)?).map_err(std::io::Error::other)?;
    let mut files = old.files.clone();
    files.remove(MATRIX_FILE);
    files.insert(boundary_rel.to_string(), sha256_hex(&boundary));
    // The native run's JUnit report, in the shape `scopebox native` writes it.
    let section: scopebox_schema::native_receipt::NativeSection = serde_json::from_slice(
        &std::fs::read(dir.join(scopebox_schema::native_receipt::NATIVE_SECTION_FILE))?,
    )
    .map_err(std::io::Error::other)?;
    let mut junit = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"scopebox native {}\">\n",
        old.run_id
    );
    for run in &section.platforms {
        let p = run.platform.name();
        junit.push_str(&format!(
            "<testsuite name=\"native {p}\"><testcase name=\"native run {p}\" classname=\"{p}\"/>"
        ));
        for r in &run.judgement.runs {
            let outcome = if r.passed {
                ""
            } else {
                "<failure message=\"failed\"/>"
            };
            junit.push_str(&format!(
                "<testcase name=\"{} {}\" classname=\"native.{}\">{outcome}</testcase>",
                r.scenario,
                r.mode.as_str(),
                r.scenario
            ));
        }
        junit.push_str("</testsuite>\n");
    }
    junit.push_str("</testsuites>\n");
    std::fs::write(dir.join(JUNIT_FILE), &junit)?;
    files.insert(JUNIT_FILE.to_string(), sha256_hex(junit.as_bytes()));
    let receipt = native_only_receipt(
        NativeOnlyRun {
            tool_version: old.tool.version.clone(),
            run_id: old.run_id.clone(),
            started_at: old.started_at.clone(),
            finished_at: old.finished_at.clone(),
            boundary_policy_sha256: old.boundary_policy_sha256.clone(),
            recipe_sha256: old.recipe_sha256.clone(),
            files,
            provenance: None,
        },
        &std::fs::read(dir.join(NATIVE_MATRIX_FILE))?,
    )
    .map_err(std::io::Error::other)?;
    let mut out = serde_json::to_vec_pretty(&receipt).map_err(std::io::Error::other)?;
    out.push(b'\n');
    std::fs::write(path, out)
}

const RUN: &str = "native/claude-code-linux-amd64/evidence/native";

/// `failures` is not empty and every one is the native-only platform's `native.boundary`,
/// saying `expected` (`case` names the edit in the message).
fn assert_only_the_boundary_fails(failures: &[String], expected: &str, case: &str) {
    assert!(!failures.is_empty(), "{case}: accepted");
    assert!(
        failures.iter().all(
            |l| l.starts_with("native-claude-code-linux-amd64/native.boundary: ")
                && l.contains(expected)
        ),
        "{case}: {failures:?}"
    );
}

fn failed(dir: &Path) -> Vec<String> {
    let r = verify_dir(dir, &VerifyOptions::default()).unwrap();
    r.checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| format!("{}: {}", c.id, c.reason.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn a_native_bundle_and_a_native_only_bundle_verify() {
    let tmp = tempdir();
    for dir in [native_bundle(tmp.path()), native_only(tmp.path())] {
        let report = verify_dir(&dir, &VerifyOptions::default()).unwrap();
        assert!(report.verified, "{:?}", failed(&dir));
        let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
        for id in [
            "native.section",
            "native-claude-code-linux-amd64/native.pinned",
            "native-claude-code-linux-amd64/native.judgement",
            "native-claude-code-linux-amd64/native.pass",
        ] {
            assert!(ids.contains(&id), "{id} in {ids:?}");
        }
    }
    // A native-only receipt carries no provenance by design: the note says why, not that it
    // predates provenance.
    let report = verify_dir(&native_only(tmp.path()), &VerifyOptions::default()).unwrap();
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("a native reference run attests no candidate")),
        "{:?}",
        report.notes
    );
}

#[test]
fn a_removed_tag_is_rejected_by_the_recomputed_judgement() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    let rel = format!("{RUN}/baseline-stdio-all-scopes/list/sentinel.txt");
    let text = std::fs::read_to_string(dir.join(&rel)).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("user/u1"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join(&rel), kept).unwrap();
    relist(&dir, &rel);
    let f = failed(&dir);
    assert_eq!(f.len(), 2, "{f:?}");
    // The recorded judgement no longer matches the raw file, and the recomputed one fails the
    // run: the witnesses disagree and the client drifted.
    assert!(
        f[0].starts_with("native-claude-code-linux-amd64/native.judgement: baseline-stdio-all-scopes/list: native/baseline-stdio-all-scopes/list/sentinel.txt has sha256"),
        "{f:?}"
    );
    assert!(
        f[1].starts_with("native-claude-code-linux-amd64/native.pass: baseline-stdio-all-scopes/list: the two witnesses disagree"),
        "{f:?}"
    );
}

#[test]
fn an_edited_init_line_a_changed_exit_code_and_a_reordered_index_are_rejected() {
    let tmp = tempdir();
    let base = native_bundle(tmp.path());
    type Edit = (&'static str, fn(&Path));
    let edits: [Edit; 3] = [
        ("init", |dir| {
            let rel = format!("{RUN}/baseline-stdio-all-scopes/headless/client.stdout");
            let text = std::fs::read_to_string(dir.join(&rel)).unwrap();
            std::fs::write(
                dir.join(&rel),
                text.replacen("\"name\":\"p1\"", "\"name\":\"p9\"", 1),
            )
            .unwrap();
            relist(dir, &rel);
        }),
        ("exit", |dir| {
            let rel = format!("{RUN}/get-unknown-name/get/client.json");
            edit_json(&dir.join(&rel), |c| c["exitCode"] = 0.into());
            relist(dir, &rel);
        }),
        ("index", |dir| {
            let rel = format!("{RUN}/index.json");
            edit_json(&dir.join(&rel), |i| {
                i["runs"].as_array_mut().unwrap().swap(0, 1)
            });
            relist(dir, &rel);
        }),
    ];
    for (name, edit) in edits {
        let dir = tmp.path().join(name);
        crate::hostile_copy(&base, &dir);
        edit(&dir);
        let f = failed(&dir);
        assert!(
            f.iter()
                .any(|l| l.starts_with("native-claude-code-linux-amd64/native.judgement")),
            "{name}: {f:?}"
        );
        // The raw capture is also judged: the recomputed judgement fails the run.
        assert!(
            f.iter()
                .any(|l| l.starts_with("native-claude-code-linux-amd64/native.pass")),
            "{name}: {f:?}"
        );
    }
}

#[test]
fn a_forged_pin_and_a_forged_section_digest_are_rejected() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    edit_json(&dir.join("native.json"), |n| {
        n["platforms"][0]["pinned"]["wheel"]["sha256"] = "0".repeat(64).into();
        n["lockSha256"] = "1".repeat(64).into();
    });
    relist(&dir, "native.json");
    let f = failed(&dir);
    assert!(f.iter().any(|l| l.starts_with("native.section")), "{f:?}");
    assert!(
        f.iter()
            .any(|l| l.starts_with("native-claude-code-linux-amd64/native.pinned")),
        "{f:?}"
    );
    // A native-only receipt naming another matrix.
    let dir = native_only(tmp.path());
    edit_json(&dir.join("receipt.json"), |r| {
        r["matrix"]["caseCount"] = 1.into()
    });
    assert!(
        failed(&dir)[0].starts_with("native.section"),
        "{:?}",
        failed(&dir)
    );
}

#[test]
fn an_unlisted_native_file_or_an_unknown_run_dir_is_outside_the_layout() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    let rel = format!("{RUN}/no-such-scenario/list/client.json");
    std::fs::create_dir_all(dir.join(&rel).parent().unwrap()).unwrap();
    std::fs::write(dir.join(&rel), b"{}").unwrap();
    relist(&dir, &rel);
    let f = failed(&dir);
    assert!(f.iter().any(|l| l.starts_with("files.layout")), "{f:?}");
}

#[test]
fn the_binary_reports_a_tampered_capture_escaped_and_exits_1() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    // A hostile edit that puts an escape sequence into what the judge quotes.
    let rel = format!("{RUN}/baseline-stdio-all-scopes/headless/client.stdout");
    let text = std::fs::read_to_string(dir.join(&rel)).unwrap();
    std::fs::write(
        dir.join(&rel),
        text.replacen("\"name\":\"p1\"", "\"name\":\"\\u001b[8mp1\"", 1),
    )
    .unwrap();
    relist(&dir, &rel);
    let run = verify_bin(&[dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("native.judgement"), "{}", run.stdout);
    assert!(
        !run.stdout.contains('\u{1b}'),
        "a raw ESC reached the terminal"
    );
    let json = verify_bin(&[dir.to_str().unwrap(), "--json"]);
    assert_eq!(json.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["result"], "rejected", "{doc}");
    assert!(
        json.stdout.contains("\\u001b"),
        "the JSON keeps the value exact, escaped"
    );
}

#[test]
fn a_native_section_beyond_the_bounds_is_stopped_before_any_judging() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    edit_json(&dir.join("native.json"), |n| {
        let one = n["platforms"][0].clone();
        n["platforms"] = serde_json::Value::Array(vec![one; 5]);
    });
    relist(&dir, "native.json");
    let r = verify_dir(&dir, &VerifyOptions::default()).unwrap();
    assert_eq!(r.failed_ids(), ["bundle.bounds"]);
}

#[test]
fn every_native_self_test_class_is_rejected() {
    let tmp = tempdir();
    // The native-only bundle: only the native classes apply (the candidate classes need a
    // candidate platform); a combined bundle runs the same native classes after the others.
    {
        let dir = native_only(tmp.path());
        let report = scopebox_receipts::selftest::run(&dir).unwrap();
        let native: Vec<_> = report
            .rows
            .iter()
            .filter(|r| r.class.starts_with("native-"))
            .collect();
        assert_eq!(native.len(), 9, "{}", report.render_text());
        assert!(report.all_rejected(), "{}", report.render_text());
        for row in native {
            assert!(
                row.rejected_by
                    .iter()
                    .any(|id| id.contains("native") || id.starts_with("files.")),
                "{row:?}"
            );
        }
    }
}

#[test]
fn a_native_matrix_flood_is_stopped_by_the_bounds() {
    let tmp = tempdir();
    let dir = native_only(tmp.path());
    let rel = scopebox_schema::native_receipt::NATIVE_MATRIX_FILE;
    edit_json(&dir.join(rel), |m| {
        let one = m["scenarios"][0].clone();
        m["scenarios"] = serde_json::Value::Array(
            (0..2000)
                .map(|i| {
                    let mut s = one.clone();
                    s["id"] = format!("flood-{i}").into();
                    s
                })
                .collect(),
        );
    });
    relist(&dir, rel);
    let r = verify_dir(&dir, &VerifyOptions::default()).unwrap();
    assert_eq!(r.failed_ids(), ["bundle.bounds"]);
    assert!(r.checks[0].failures[0].contains("native matrix: the native matrix has 2000 scenarios"));
}

#[test]
fn a_native_run_recorded_emulated_on_its_own_machine_is_rejected() {
    let tmp = tempdir();
    let dir = native_bundle(tmp.path());
    edit_json(&dir.join("native.json"), |n| {
        n["platforms"][0]["emulated"] = true.into()
    });
    relist(&dir, "native.json");
    let f = failed(&dir);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].contains("recorded emulated, but the engine is x86_64"),
        "{f:?}"
    );
}

/// A native-only bundle's container is held to the boundary policy like a candidate's: an
/// inspection showing a network and a writable root, an observation showing a capability, or
/// a run that names no engine, each re-digested so only the policy can catch it, is rejected
/// by `native.boundary` (and nothing else).
#[test]
fn a_native_only_container_outside_the_boundary_is_rejected() {
    use scopebox_schema::native_receipt::NATIVE_SECTION_FILE;
    let tmp = tempdir();
    let platform = "platforms/linux-amd64";
    let edit_json = |dir: &Path, rel: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(rel)).unwrap()).unwrap();
        f(&mut doc);
        std::fs::write(dir.join(rel), serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        relist(dir, rel);
    };
    let inspect = format!("{platform}/outer/container-inspect.json");
    let observed = format!("{platform}/evidence/boundary.json");
    type Edit<'a> = (
        &'a str,
        &'a str,
        &'a dyn Fn(&mut serde_json::Value),
        &'a str,
    );
    let cases: [Edit; 3] = [
        (
            "networked",
            &inspect,
            &|d| {
                d["HostConfig"]["NetworkMode"] = "bridge".into();
                d["HostConfig"]["ReadonlyRootfs"] = false.into();
            },
            "applied: ",
        ),
        (
            "capable",
            &observed,
            &|d| d["capEff"] = "0000000000000400".into(),
            "observed: ",
        ),
        (
            "engineless",
            NATIVE_SECTION_FILE,
            &|d| {
                d["platforms"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("engine")
                    .unwrap();
            },
            "the native run names no engine",
        ),
    ];
    for (name, rel, edit, expected) in cases {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        write_native_only(&dir).unwrap();
        edit_json(&dir, rel, edit);
        assert_only_the_boundary_fails(&failed(&dir), expected, name);
    }
}

/// A native-only bundle at `dir` whose run was spread over two containers: the second's
/// inspection and boundary observation below `platforms/linux-amd64/shards/1/`, `containers: 2`
/// in its platform entry, every file listed.
fn write_sharded_native_only(dir: &Path) {
    use scopebox_schema::native_receipt::NATIVE_SECTION_FILE;
    write_native_only(dir).unwrap();
    let platform = "platforms/linux-amd64";
    for file in ["outer/container-inspect.json", "evidence/boundary.json"] {
        let rel = format!("{platform}/shards/1/{file}");
        std::fs::create_dir_all(dir.join(&rel).parent().unwrap()).unwrap();
        std::fs::copy(dir.join(format!("{platform}/{file}")), dir.join(&rel)).unwrap();
        relist(dir, &rel);
    }
    edit_json(&dir.join(NATIVE_SECTION_FILE), |n| {
        n["platforms"][0]["containers"] = 2.into()
    });
    relist(dir, NATIVE_SECTION_FILE);
}

/// Every container of a sharded native run is held to the boundary, not only the first: the
/// second's networked inspection, its missing observation, a third container the entry names
/// but the bundle lacks are each rejected by `native.boundary` naming the container; a
/// container directory beyond the count is outside the layout; an absurd count is a bound.
#[test]
fn every_container_of_a_sharded_native_run_is_held_to_the_boundary() {
    use scopebox_schema::native_receipt::NATIVE_SECTION_FILE;
    let tmp = tempdir();
    let shard = "platforms/linux-amd64/shards/1";
    let fresh = |name: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        write_sharded_native_only(&dir);
        dir
    };
    let boundary_only =
        |f: &[String], expected: &str| assert_only_the_boundary_fails(f, expected, "sharded");
    assert_eq!(failed(&fresh("clean")), Vec::<String>::new());

    let dir = fresh("networked");
    let rel = format!("{shard}/outer/container-inspect.json");
    edit_json(&dir.join(&rel), |d| {
        d["HostConfig"]["NetworkMode"] = "bridge".into()
    });
    relist(&dir, &rel);
    boundary_only(&failed(&dir), "container 1: applied: ");

    let dir = fresh("unobserved");
    let rel = format!("{shard}/evidence/boundary.json");
    std::fs::remove_file(dir.join(&rel)).unwrap();
    edit_json(&dir.join(RECEIPT_FILE), |r| {
        r["files"].as_object_mut().unwrap().remove(&rel);
    });
    boundary_only(&failed(&dir), &format!("container 1: {rel} is missing"));

    let dir = fresh("a-third-container");
    edit_json(&dir.join(NATIVE_SECTION_FILE), |n| {
        n["platforms"][0]["containers"] = 3.into()
    });
    relist(&dir, NATIVE_SECTION_FILE);
    boundary_only(
        &failed(&dir),
        "container 2: platforms/linux-amd64/shards/2/",
    );

    let dir = fresh("beyond-the-count");
    edit_json(&dir.join(NATIVE_SECTION_FILE), |n| {
        n["platforms"][0]
            .as_object_mut()
            .unwrap()
            .remove("containers");
    });
    relist(&dir, NATIVE_SECTION_FILE);
    let f = failed(&dir);
    assert!(
        f.iter()
            .any(|l| l.starts_with("files.layout") && l.contains(shard)),
        "{f:?}"
    );

    let dir = fresh("a-flood");
    edit_json(&dir.join(NATIVE_SECTION_FILE), |n| {
        n["platforms"][0]["containers"] = 1_000_000_000u64.into()
    });
    relist(&dir, NATIVE_SECTION_FILE);
    let f = failed(&dir);
    assert!(
        f.iter()
            .any(|l| l.starts_with("bundle.bounds") && l.contains("native containers")),
        "{f:?}"
    );
}

/// The statement a signed bundle carries.
fn signed_statement(dir: &Path) -> scopebox_receipts::attestation::Statement {
    use scopebox_receipts::dsse::{decode_base64, Envelope};
    let envelope: Envelope =
        serde_json::from_slice(&std::fs::read(dir.join("receipt.dsse.json")).unwrap()).unwrap();
    serde_json::from_slice(&decode_base64(&envelope.payload).unwrap()).unwrap()
}

#[test]
fn a_signed_native_statement_lists_every_native_run_and_the_pinned_client() {
    use scopebox_receipts::attestation::{sign_bundle, statement_for};
    use scopebox_receipts::dsse::{self, IN_TOTO_PAYLOAD_TYPE};
    use scopebox_schema::native_receipt::{NativeSection, NATIVE_SECTION_FILE};
    let tmp = tempdir();
    let keys = dsse::write_keypair(&tmp.path().join("k")).unwrap();
    let private = std::fs::read_to_string(&keys.private).unwrap();
    let public = keys.public.to_str().unwrap().to_string();
    for (dir, candidate_cases) in [(native_only(tmp.path()), 0), (native_bundle(tmp.path()), 4)] {
        sign_bundle(&dir, &private).unwrap();
        let statement = signed_statement(&dir);
        let section: NativeSection =
            serde_json::from_slice(&std::fs::read(dir.join(NATIVE_SECTION_FILE)).unwrap()).unwrap();
        let run = &section.platforms[0];
        // Every native run by name, after the candidate cases; nothing failed.
        let native: Vec<String> = run
            .judgement
            .runs
            .iter()
            .map(|r| format!("native/claude-code-linux-amd64/{}", r.dir))
            .collect();
        assert!(native.len() > 10, "{native:?}");
        assert_eq!(
            statement.predicate.passed_tests.len(),
            candidate_cases + native.len()
        );
        assert_eq!(
            statement.predicate.passed_tests[candidate_cases..],
            native[..]
        );
        assert!(native.contains(
            &"native/claude-code-linux-amd64/baseline-stdio-all-scopes/list".to_string()
        ));
        assert!(statement.predicate.failed_tests.is_empty());
        assert_eq!(statement.predicate.result, "PASSED");
        // The pinned client binary, the native matrix and the lock, each by digest.
        let named = |name: &str| {
            statement
                .predicate
                .configuration
                .iter()
                .find(|d| d.name == name)
                .map(|d| d.digest["sha256"].clone())
        };
        assert_eq!(
            named("native client claude-code 2.1.327 linux/amd64").as_deref(),
            Some(run.pinned.binary_sha256.as_str())
        );
        assert_eq!(
            named("inputs/native.lock.json").as_deref(),
            Some(section.lock_sha256.as_str())
        );
        assert_eq!(
            named("inputs/native-matrix.json").as_deref(),
            Some(section.matrix.sha256.as_str())
        );
        let good = verify_bin(&[dir.to_str().unwrap(), "--key", &public]);
        assert_eq!(good.code, 0, "{}", good.stdout);
        assert!(
            good.stdout.contains("✓ signature.statement"),
            "{}",
            good.stdout
        );

        // Someone with the key signs the statement a candidate-only reading gives (no native
        // runs, no pinned client): the verifier rebuilds the statement and refuses it.
        let receipt_bytes = std::fs::read(dir.join(RECEIPT_FILE)).unwrap();
        let receipt: Receipt = serde_json::from_slice(&receipt_bytes).unwrap();
        let without = statement_for(&receipt, &receipt_bytes, None, true);
        let key = dsse::signing_key_from_pem(&private).unwrap();
        let envelope = dsse::sign(
            IN_TOTO_PAYLOAD_TYPE,
            &serde_json::to_vec(&without).unwrap(),
            &key,
        );
        std::fs::write(
            dir.join("receipt.dsse.json"),
            serde_json::to_vec_pretty(&envelope).unwrap(),
        )
        .unwrap();
        let bad = verify_bin(&[dir.to_str().unwrap(), "--key", &public]);
        assert_eq!(bad.code, 1, "{}", bad.stdout);
        assert!(
            bad.stdout.contains("✗ signature.statement")
                && bad
                    .stdout
                    .contains("the statement names another image, matrix or policy")
                && bad
                    .stdout
                    .contains("the statement lists other passed or failed cases"),
            "{}",
            bad.stdout
        );
    }
}
