//! Refused input exits 2 before anything is attempted. The engine address points nowhere, so
//! had the command reached the engine (or a build, which comes after it) it would exit 3.

use crate::support::{scopebox, tempdir};

const NOWHERE: (&str, &str) = ("DOCKER_HOST", "unix:///nonexistent.sock");

pub fn a_candidate_digest_mismatch_is_refused_before_any_engine_call() {
    let dir = tempdir();
    let candidate = dir.path().join("c.tar.gz");
    std::fs::write(&candidate, b"not the archive you are looking for").unwrap();
    let out_dir = dir.path().join("bundle");
    let out = scopebox(
        &[
            "run",
            "--out",
            out_dir.to_str().unwrap(),
            "--candidate",
            candidate.to_str().unwrap(),
            "--expect-sha256",
            &"0".repeat(64),
        ],
        &[NOWHERE],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("its sha256 is") && out.stderr.contains("hint: the archive is not"),
        "{}",
        out.stderr
    );
    assert!(
        !out_dir.exists(),
        "nothing may happen before the digest check"
    );
    assert!(out.stdout.is_empty());
}

pub fn pack_refuses_a_mismatching_candidate_too() {
    let dir = tempdir();
    let candidate = dir.path().join("c.tar.gz");
    std::fs::write(&candidate, b"x").unwrap();
    let out_dir = dir.path().join("pack");
    let out = scopebox(
        &[
            "pack",
            "--out",
            out_dir.to_str().unwrap(),
            "--candidate",
            candidate.to_str().unwrap(),
            "--expect-sha256",
            &"a".repeat(64),
        ],
        &[NOWHERE],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!out_dir.exists());
}

pub fn a_candidate_without_its_digest_is_a_usage_error() {
    let out = scopebox(
        &["run", "--out", "/tmp/unused", "--candidate", "x.tar.gz"],
        &[NOWHERE],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--expect-sha256"), "{}", out.stderr);
}

pub fn a_zero_deadline_is_a_usage_error() {
    let out = scopebox(
        &["run", "--out", "/tmp/unused", "--deadline", "0"],
        &[NOWHERE],
    );
    assert_eq!(out.code, 2, "{out:?}");
}

pub fn a_non_empty_bundle_directory_is_refused() {
    let dir = tempdir();
    std::fs::write(dir.path().join("old"), b"").unwrap();
    let out = scopebox(&["run", "--out", dir.path().to_str().unwrap()], &[NOWHERE]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("it is not empty"), "{}", out.stderr);
    assert!(out.stderr.contains("hint: pass a new or empty directory"));
}

pub fn an_invalid_matrix_is_refused() {
    let dir = tempdir();
    let matrix = dir.path().join("m.json");
    std::fs::write(
        &matrix,
        br#"{"schemaVersion":1,"name":"x","canaries":[],"cases":[],"extra":1}"#,
    )
    .unwrap();
    let out = scopebox(
        &[
            "run",
            "--out",
            dir.path().join("b").to_str().unwrap(),
            "--matrix",
            matrix.to_str().unwrap(),
        ],
        &[NOWHERE],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("failed to parse matrix"),
        "{}",
        out.stderr
    );
}

/// The one `--json` object of a refused or failed command: the exit code, an error code, the
/// message and the hint; parsed strictly (one line, nothing else on stdout).
pub fn error_object(stdout: &str) -> serde_json::Value {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one object on stdout: {stdout:?}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).expect("stdout is JSON");
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["outcome"], "error", "{v}");
    assert!(v["error"]["code"].is_string(), "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    v
}

pub fn with_json_every_refusal_answers_with_one_object_and_creates_nothing() {
    let dir = tempdir();
    let candidate = dir.path().join("c.tar.gz");
    std::fs::write(&candidate, b"x").unwrap();
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("old"), b"").unwrap();
    let bundle = dir.path().join("bundle");
    let b = bundle.to_str().unwrap();
    let c = candidate.to_str().unwrap();
    let zeros = "0".repeat(64);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "run",
                "--json",
                "--out",
                b,
                "--candidate",
                c,
                "--expect-sha256",
                &zeros,
            ],
            "candidate-refused",
        ),
        (
            vec![
                "pack",
                "--json",
                "--out",
                b,
                "--candidate",
                c,
                "--expect-sha256",
                &zeros,
            ],
            "candidate-refused",
        ),
        (
            vec!["run", "--json", "--out", full.to_str().unwrap()],
            "bundle-directory-refused",
        ),
        (
            vec![
                "run",
                "--json",
                "--out",
                b,
                "--matrix",
                "/nonexistent/m.json",
            ],
            "matrix-refused",
        ),
        (vec!["run", "--json", "--deadline", "0"], "usage"),
        (vec!["pack", "--json", "--platform", "linux/sparc"], "usage"),
        (vec!["sign", "--json"], "usage"),
    ];
    // Files written at a run's end, into directories that are not there: refused first, by the
    // evidence run and the native reference alike (before anything is fetched or run).
    let mut cases = cases;
    for command in [&["run"][..], &["native", "--offline"]] {
        for flag in ["--junit", "--archive"] {
            let args = [command, &["--json", "--out", b, flag, "/nonexistent/dir/f"]].concat();
            cases.push((args, "usage"));
        }
    }
    for (args, code) in cases {
        let out = scopebox(&args, &[NOWHERE]);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        let v = error_object(&out.stdout);
        assert_eq!(v["exitCode"], 2, "{args:?}: {v}");
        assert_eq!(v["error"]["code"], code, "{args:?}: {v}");
        // What stdout says, stderr says once, in words (clap's own text is reflowed).
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            !message.contains("Some(") && !message.contains("()"),
            "{message}"
        );
        if code == "usage" {
            continue;
        }
        assert_eq!(
            out.stderr.matches(message).count(),
            1,
            "{args:?}: the message once on stderr: {}",
            out.stderr
        );
        assert!(!bundle.exists(), "{args:?} created the bundle directory");
    }
}

/// A stderr that cannot be written (full here; closed when piped into `head` or when the
/// terminal went away) is no panic: the exit code and the `--json` answer are what they would
/// be, on a refusal (2) and with no engine (3).
pub fn an_unwritable_stderr_changes_neither_the_exit_code_nor_the_json_answer() {
    let dir = tempdir();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let cases: [(&[&str], i32, &str); 2] = [
        (
            &["run", "--json", "--out", not_a_dir.to_str().unwrap()],
            2,
            "bundle-directory-refused",
        ),
        (
            &["run", "--json", "--platform", "linux/amd64"],
            3,
            "engine-unreachable",
        ),
    ];
    for (args, code, error) in cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full opens");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_scopebox"))
            .args(args)
            .env(NOWHERE.0, NOWHERE.1)
            .current_dir(crate::support::workspace())
            .stderr(full)
            .output()
            .expect("the scopebox binary runs");
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one object");
        assert_eq!(answer["exitCode"], code, "{answer}");
        assert_eq!(answer["error"]["code"], error, "{answer}");
    }
}
