//! Candidates that misbehave must fail their case through the shared judge, and a failing
//! case must never stop or taint the next one. Each fake candidate is a shell script over a
//! small matrix built here; the sentinel is the real one.

use crate::support::{install_matrix, layout, runner_bin, script, sentinel_bin, JournalFiles};
use scopebox_harness::case::run_case;
use scopebox_harness::run::{run, RunStatus};
use scopebox_harness::watch::Watch;
use scopebox_harness::Layout;
use scopebox_schema::evidence::CaseRecord;
use scopebox_schema::judge;
use scopebox_schema::matrix::{Case, Matrix};

const CANARY: &str = "CANARY-ARG-DETECT-1-c41d";

fn matrix(cases: &str) -> Matrix {
    let m: Matrix = serde_json::from_str(&format!(
        r#"{{"schemaVersion":1,"name":"detect","canaries":["{CANARY}"],"cases":{cases}}}"#
    ))
    .unwrap();
    judge::validate_matrix(&m).unwrap();
    m
}

/// One case over /work/p with a config whose server args carry the canary.
fn one_case(id: &str, arg: &str, deadline: Option<u64>) -> String {
    let config = format!(
        r#"{{\"mcpServers\":{{\"s\":{{\"command\":\"/scopebox/bin/scopebox-sentinel\",\"args\":[\"{CANARY}\"]}}}}}}"#
    );
    let deadline = deadline
        .map(|d| format!(r#","deadlineMs":{d}"#))
        .unwrap_or_default();
    format!(
        r#"{{"id":"{id}","client":"claude-code","description":"","args":["/work/p","{arg}"],
            "fixture":[{{"kind":"file","path":"/work/p/.mcp.json","text":"{config}"}}],
            "expect":{{"exitCode":0}}{deadline}}}"#
    )
}

fn failures(l: &Layout, m: &Matrix, i: usize) -> Vec<String> {
    run_case(l, m, &m.cases[i], &mut Watch::Unwatched)
        .unwrap()
        .record
        .verdict
        .failures
}

/// A candidate that does `body` with $1 = the project root and $2 = the mode argument.
fn candidate(body: &str) -> ((tempfile::TempDir, tempfile::TempDir), Layout) {
    let bin = tempfile::tempdir().unwrap();
    // The candidate's PATH is the container's /scopebox/bin: give the script the host's.
    let path = script(
        bin.path(),
        "candidate",
        &format!("PATH=/usr/bin:/bin\n{body}"),
    );
    let (dir, l) = layout(&path);
    // Both directories live as long as the caller holds them.
    ((bin, dir), l)
}

#[test]
fn executing_the_sentinel_fails_that_case_only() {
    let sentinel = sentinel_bin();
    let (_d, l) = candidate(&format!(
        r#"if [ "$2" = fire ]; then "{}" from-candidate; fi; exit 0"#,
        sentinel.display()
    ));
    let m = matrix(&format!(
        "[{},{}]",
        one_case("fires", "fire", None),
        one_case("quiet", "quiet", None)
    ));
    install_matrix(&l, &m);
    // Under the kernel witness, through the binary (`run-rebased`).
    let out = std::process::Command::new(runner_bin())
        .arg("run-rebased")
        .arg(l.evidence_dir.parent().unwrap())
        .arg(&l.matrix_path)
        .arg(&l.candidate_bin)
        .arg(&l.sentinel_bin)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(RunStatus::Failed.exit_code().into())
    );
    let journal = JournalFiles::read(&l.evidence_dir);
    let read = |id: &str| -> CaseRecord {
        serde_json::from_slice(journal.file(id, "record.json")).unwrap()
    };
    let fires = read("fires");
    assert!(fires.marker_present);
    let f = &fires.verdict.failures;
    assert_eq!(f[0], judge::marker_failure());
    // The kernel saw the sentinel's exec, its write-open of the marker, and its report.
    assert!(
        f.iter().any(|f| f.starts_with(&format!(
            "witness: executed execve {:?}",
            sentinel.to_string_lossy()
        ))),
        "{f:?}"
    );
    assert!(
        f.iter().any(|f| f
            .starts_with("witness: opened for writing: openat \"/tmp/scopebox-sentinel/fired\"")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|f| f.starts_with("sentinel reported execution by pid ")),
        "{f:?}"
    );
    // The marker was removed after the case: the next one is judged on its own.
    let quiet = read("quiet");
    assert!(!quiet.marker_present);
    assert!(quiet.verdict.pass, "{:?}", quiet.verdict.failures);
    let progress = String::from_utf8(out.stderr).unwrap();
    assert!(progress.contains("case fires fail "), "{progress}");
    assert!(progress.contains("case quiet pass "), "{progress}");
}

#[test]
fn printing_a_configured_argument_is_a_canary_leak() {
    let (_d, l) = candidate(r#"cat "$1/.mcp.json"; cat "$1/.mcp.json" >&2"#);
    let m = matrix(&format!("[{}]", one_case("leak", "x", None)));
    assert_eq!(
        failures(&l, &m, 0),
        vec![
            format!("canary {CANARY} in stdout"),
            format!("canary {CANARY} in stderr")
        ]
    );
}

#[test]
fn a_canary_left_in_a_tmp_file_or_an_added_fixture_is_found_in_its_bytes() {
    // $1 is the project root below the layout's base; the scratch tmpfs is base/tmp. The
    // candidate reads the config and leaves its contents base64-encoded in /tmp, and reversed
    // in a new file beside the config.
    let (_d, l) = candidate(
        r#"base64 -w0 "$1/.mcp.json" > "$1/../../tmp/leak"; rev "$1/.mcp.json" > "$1/copy"; exit 0"#,
    );
    let m = matrix(&format!("[{}]", one_case("tmp", "x", None)));
    let record = run_case(&l, &m, &m.cases[0], &mut Watch::Unwatched)
        .unwrap()
        .record;
    let paths: Vec<&str> = record.written.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["/work/p/copy", "/tmp/leak"]);
    // (A rebased layout's environment is not the container's; the exact-environment check is
    // not what this test is about.)
    let failures: Vec<&String> = record
        .verdict
        .failures
        .iter()
        .filter(|f| !f.starts_with("environment "))
        .collect();
    assert_eq!(
        failures,
        vec![
            "fixture /work/p/copy added",
            &format!("canary {CANARY} in file /work/p/copy (reversed)"),
            "file /tmp/leak written outside the fixture roots",
            &format!("canary {CANARY} in file /tmp/leak (base64)"),
        ]
    );
}

#[test]
fn writing_or_chmodding_a_fixture_is_caught_by_path() {
    let (_d, l) = candidate(r#"echo >> "$1/.mcp.json"; touch "$1/new-file"; chmod 600 "$1""#);
    let m = matrix(&format!("[{}]", one_case("write", "x", None)));
    let size = match &m.cases[0].fixture[0] {
        scopebox_schema::matrix::FixtureEntry::File { content, .. } => {
            judge::file_bytes(content).unwrap().len()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        failures(&l, &m, 0),
        vec![
            "fixture /work/p changed (mode 0755 -> 0600)".to_string(),
            format!(
                "fixture /work/p/.mcp.json changed (size {size} -> {}, content)",
                size + 1
            ),
            "fixture /work/p/new-file added".to_string(),
        ]
    );
}

#[test]
fn a_hanging_candidate_is_killed_at_its_deadline_and_the_run_goes_on() {
    let (_d, l) = candidate(r#"if [ "$2" = hang ]; then sleep 600; fi; exit 0"#);
    let m = matrix(&format!(
        "[{},{}]",
        one_case("hang", "hang", Some(300)),
        one_case("after", "x", None)
    ));
    let hang = run_case(&l, &m, &m.cases[0], &mut Watch::Unwatched)
        .unwrap()
        .record;
    assert!(hang.timed_out);
    assert_eq!(hang.signal, Some(9));
    assert!(hang
        .verdict
        .failures
        .contains(&"candidate timed out and was killed".to_string()));
    let after = run_case(&l, &m, &m.cases[1], &mut Watch::Unwatched)
        .unwrap()
        .record;
    assert!(after.verdict.pass, "{:?}", after.verdict.failures);
}

#[test]
fn a_candidate_that_cannot_start_fails_its_case_not_the_run() {
    let (_d, l) = layout(std::path::Path::new("/nonexistent/mcpscope"));
    let m = matrix(&format!(
        "[{},{}]",
        one_case("a", "x", None),
        one_case("b", "x", None)
    ));
    install_matrix(&l, &m);
    let mut progress = Vec::new();
    assert_eq!(
        run(
            &l,
            scopebox_schema::evidence::Shard::WHOLE,
            &mut Watch::Unwatched,
            &mut progress,
        ),
        RunStatus::Failed
    );
    let journal = JournalFiles::read(&l.evidence_dir);
    let stderr = String::from_utf8(journal.file("b", "stderr").to_vec()).unwrap();
    assert!(stderr.contains("failed to start the candidate"), "{stderr}");
    let summary = std::fs::read_to_string(l.evidence_dir.join("summary.json")).unwrap();
    assert!(summary.contains("\"failed\": 2"), "{summary}");
}

#[test]
fn a_case_records_exactly_what_the_candidate_got() {
    // Print the environment before the script changes PATH.
    let bin = tempfile::tempdir().unwrap();
    let path = script(
        bin.path(),
        "candidate",
        "/bin/pwd; /usr/bin/env | /usr/bin/sort; exit 0",
    );
    let (_d, l) = layout(&path);
    let mut m = matrix(&format!("[{}]", one_case("env", "x", None)));
    m.cases[0].cwd = Some("/work/p".into());
    m.cases[0].env.insert("LANG".into(), "C".into());
    let c: &Case = &m.cases[0];
    let out = run_case(&l, &m, c, &mut Watch::Unwatched).unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut lines = stdout.lines();
    assert_eq!(lines.next().unwrap(), l.host("/work/p").to_string_lossy());
    // sh may add PWD/SHLVL/_; everything the runner passed must be exactly the record's env.
    let seen: Vec<&str> = lines
        .filter(|v| !v.starts_with("PWD=") && !v.starts_with("SHLVL=") && !v.starts_with("_="))
        .collect();
    let given: Vec<String> = scopebox_harness::case::candidate_env(&l, c)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(seen, given);
    // The record spells it as the matrix does (HOME=/home/node), exactly the judge's.
    let expected: Vec<String> = judge::expected_env(c)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(out.record.env, expected);
    assert!(out.record.env.contains(&"LANG=C".to_string()));
    assert!(judge::environment_failures(c, &out.record.env).is_empty());
    assert_eq!(out.record.cwd, "/work/p");
    assert_eq!(out.record.argv[1], l.host("/work/p").to_string_lossy());
}
