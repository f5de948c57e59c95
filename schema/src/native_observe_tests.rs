//! Unit tests of `native_observe`: the parsers against the real client's output (the sample's
//! probe records) and against hostile bytes, and `judge_evidence` over the sample evidence
//! directory and its tampered copies.

use super::*;
use crate::native_sample::{sample, Sample};

/// Each listed row as (name, tag, status).
fn name_tag_status(listed: &[Listed]) -> Vec<(&str, Option<&str>, &str)> {
    listed
        .iter()
        .map(|l| (l.name.as_str(), l.tag.as_deref(), l.status.as_str()))
        .collect()
}

fn scenario_run<'a>(m: &'a NativeMatrix, id: &str, mode: Mode) -> (&'a Scenario, &'a Run) {
    let s = m.scenarios.iter().find(|s| s.id == id).unwrap();
    (s, s.runs.iter().find(|r| r.mode == mode).unwrap())
}

fn matrix() -> NativeMatrix {
    serde_json::from_slice(crate::native_sample::MATRIX).unwrap()
}

fn judge(s: &Sample) -> NativeJudgement {
    judge_evidence(&s.matrix, &s.lock, &s.reader())
}

fn run_of<'a>(j: &'a NativeJudgement, id: &str, mode: Mode) -> &'a RunJudgement {
    j.runs
        .iter()
        .find(|r| r.scenario == id && r.mode == mode)
        .unwrap()
}

fn edit_json(s: &mut Sample, path: &str, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&s.files[path]).unwrap();
    f(&mut v);
    s.files
        .insert(path.to_string(), serde_json::to_vec(&v).unwrap());
}

#[test]
fn the_real_outputs_parse_to_the_matrix_expectations() {
    // Every run of the sample is the real client's: parsed, it is exactly what the matrix
    // recorded (the observe.py check), and the whole sample judges clean.
    let s = sample();
    let j = judge(&s);
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let m = matrix();
    for r in &j.runs {
        let (_, run) = scenario_run(&m, &r.scenario, r.mode);
        assert_eq!(
            r.observation.as_ref(),
            Some(&run.expect),
            "{}/{:?}",
            r.scenario,
            r.mode
        );
        assert!(r.passed, "{r:#?}");
    }
    assert!(j.passed);
    assert_eq!(j.totals.runs, m.scenarios.len() * 3);
    assert_eq!(j.totals.passed, j.totals.runs);
    // The BOM scenario's named divergence is carried, with its reason.
    assert!(j.totals.expected_divergences > 0);
    assert_eq!(j.platform.as_deref(), Some("linux/amd64"));
    // Stdio servers are spawned twice: the counts are raw, the set is the tag.
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::List);
    assert_eq!(r.launch_counts.get("user/u1"), Some(&2));
    // Deterministic: the same bytes, the same judgement, byte for byte.
    assert_eq!(
        serde_json::to_vec(&j).unwrap(),
        serde_json::to_vec(&judge(&s)).unwrap()
    );
    let back: NativeJudgement = strict_json::from_slice(&serde_json::to_vec(&j).unwrap()).unwrap();
    assert_eq!(back, j);
}

#[test]
fn list_lines_are_read_as_observe_py_reads_them() {
    let p = "--scopebox-tag=";
    let line = "u1: /scopebox/bin/scopebox-sentinel --scopebox-tag=user/u1 - ✗ Failed to connect";
    assert_eq!(
        list_line(line),
        Some((
            "u1",
            "/scopebox/bin/scopebox-sentinel --scopebox-tag=user/u1",
            "✗ Failed to connect"
        ))
    );
    // The greedy target: the last " - " whose tail is `\S+ .*`.
    assert_eq!(list_line("a: x - y - ok now").map(|l| l.1), Some("x - y"));
    assert_eq!(list_line("a: x - y - lone").map(|l| l.1), Some("x"));
    assert_eq!(list_line("a: x - - b c").map(|l| l.1), Some("x -"));
    // Not lines: a leading space or colon, no ": ", no status with a space.
    for bad in [
        " a: x - y z",
        ":a: x - y z",
        "a:x - y z",
        "a: x - yz",
        "",
        "a: x -  y z",
    ] {
        assert_eq!(list_line(bad), None, "{bad:?}");
    }
    // A name ends at the first colon.
    assert_eq!(
        list_line("h: http://127.0.0.1:18500/user/uh (HTTP) - ✓ Connected").map(|l| l.0),
        Some("h")
    );
    let (listed, problems) = listed_servers(
        Mode::List,
        "Checking MCP server health…\n\nu1: x --scopebox-tag=user/u1 - ✗ Failed to connect\r\nh: http://127.0.0.1:18500/user/uh (HTTP) - ⏸ Pending approval\u{2028}z: q - other words\n".as_bytes(),
        p,
    );
    assert!(problems.is_empty());
    let got = name_tag_status(&listed);
    assert_eq!(
        got,
        [
            ("u1", Some("user/u1"), "failed"),
            ("h", Some("user/uh"), "pending"),
            ("z", None, "other:other words"),
        ]
    );
}

#[test]
fn python_text_semantics_are_kept() {
    assert_eq!(
        py_splitlines("a\r\nb\rc\nd\u{85}e\u{1c}f\n"),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(py_splitlines(""), Vec::<&str>::new());
    assert_eq!(py_splitlines("\n\n"), ["", ""]);
    assert!(py_isspace('\u{1f}') && py_isspace('\u{3000}') && !py_isspace('\u{200b}'));
    assert_eq!(normalize_status("\u{1f} Weird \u{a0}"), "other:Weird");
    assert_eq!(normalize_status("⏸ PENDING APPROVAL"), "pending");
    assert_eq!(normalize_status("connected but failed"), "connected");
    assert_eq!(
        tag_in("x --scopebox-tag= --scopebox-tag=a/b!", "--scopebox-tag="),
        Some("a/b".into())
    );
    assert_eq!(
        tag_in("https://127.0.0.1:1/p/q?x", "--t="),
        Some("p/q".into())
    );
    assert_eq!(
        tag_in("http://127.0.0.1:/p http://127.0.0.1:9/", "--t="),
        None
    );
    assert_eq!(
        tag_in("httphttps://127.0.0.1:9/ok", "--t="),
        Some("ok".into())
    );
}

#[test]
fn the_get_block_and_the_init_line_are_read_as_observe_py_reads_them() {
    let out = "p1:\n  Scope: Project config (shared via .mcp.json)\n  Status: ⏸ Pending approval\n  Type: stdio\n  Command: /scopebox/bin/scopebox-sentinel\n  Args: --scopebox-tag=project/p1\n  Status: ✗ Failed to connect\n";
    let (listed, _) = listed_servers(Mode::Get, out.as_bytes(), "--scopebox-tag=");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "p1");
    assert_eq!(listed[0].tag.as_deref(), Some("project/p1"));
    // The last Status line wins, as in observe.py's dict.
    assert_eq!(listed[0].status, "failed");
    assert_eq!(
        listed[0].scope.as_deref(),
        Some("Project config (shared via .mcp.json)")
    );
    // An undeclared name: "No MCP server named …" is not a block.
    let (listed, _) = listed_servers(Mode::Get, b"No MCP server found with name: x\n", "-");
    assert!(listed.is_empty());

    let init = r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"u1","status":"failed","source":"user"}]}"#;
    let (listed, problems) =
        listed_servers(Mode::Headless, format!("{init}\n{{}}\n").as_bytes(), "-");
    assert!(problems.is_empty());
    assert_eq!(listed[0].source.as_deref(), Some("user"));
    // Not the first line, not init, not JSON: nothing listed, as observe.py.
    for text in [
        format!("{{}}\n{init}"),
        "not json".into(),
        r#"{"type":"system"}"#.into(),
    ] {
        let (listed, problems) = listed_servers(Mode::Headless, text.as_bytes(), "-");
        assert!(listed.is_empty() && problems.is_empty(), "{text}");
    }
    // A duplicate key or a malformed entry is a problem, never a guess.
    let dup = r#"{"type":"system","subtype":"init","mcp_servers":[],"mcp_servers":[{"name":"x","status":"failed","source":"user"}]}"#;
    let (listed, problems) = listed_servers(Mode::Headless, dup.as_bytes(), "-");
    assert!(listed.is_empty());
    assert!(problems[0].contains("duplicate key"), "{problems:?}");
    let bad = r#"{"type":"system","subtype":"init","mcp_servers":[{"name":1}]}"#;
    let (_, problems) = listed_servers(Mode::Headless, bad.as_bytes(), "-");
    assert_eq!(problems.len(), 1);
}

#[test]
fn marker_lines_round_trip_the_sentinels_debug_format() {
    let argv = vec![
        "/scopebox/bin/scopebox-sentinel".to_string(),
        "--scopebox-tag=user/u1".to_string(),
        "q\"\\\n\t\u{1b}é\u{200b}'".to_string(),
    ];
    let line = format!("pid=42 argv={argv:?}\n");
    let parsed = parse_marker(line.as_bytes()).unwrap();
    assert_eq!(parsed, [MarkerLine { pid: 42, argv }]);
    assert_eq!(parse_marker(b"").unwrap(), []);
    assert_eq!(parse_marker(b"pid=1 argv=[]\n").unwrap()[0].argv.len(), 0);
    for bad in [
        &b"pid=1 argv=[\"a\"]"[..],
        b"pid=1 argv=[\"a\"]x\n",
        b"pid= argv=[]\n",
        b"pid=99999999999 argv=[]\n",
        b"pid=1 argv=[\"\\u{110000}\"]\n",
        b"pid=1 argv=[\"\xff\"]\n",
        b"pid=1 argv=[\"a\",\"b\"]\n",
        b"garbage\n",
    ] {
        assert!(
            parse_marker(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    let huge = "pid=1 argv=[]\n".repeat(MARKER_LINE_LIMIT + 1);
    assert!(parse_marker(huge.as_bytes())
        .unwrap_err()
        .contains("more than"));
}

#[test]
fn a_removed_tag_is_client_drift_and_the_witnesses_disagree() {
    let mut s = sample();
    let path = Sample::path("baseline-stdio-all-scopes/list", SENTINEL_FILE);
    let text = String::from_utf8(s.files[&path].clone()).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("user/u1"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept, text);
    s.files.insert(path, kept.into_bytes());
    let j = judge(&s);
    assert!(!j.passed);
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::List);
    assert!(
        r.capture_failures
            .iter()
            .any(|f| f.starts_with("the two witnesses disagree")),
        "{r:#?}"
    );
    assert!(r
        .failures
        .iter()
        .any(|f| matches!(f, Failure::ClientDrift { what } if what.starts_with("launched"))));
    assert_eq!(j.totals.failed, 1);
}

#[test]
fn a_marker_line_without_a_witnessed_exec_fails() {
    let mut s = sample();
    let path = Sample::path("baseline-stdio-all-scopes/get", SENTINEL_FILE);
    let mut text = s.files[&path].clone();
    text.extend_from_slice(
        b"pid=4242 argv=[\"/scopebox/bin/scopebox-sentinel\", \"--scopebox-tag=project/p1\"]\n",
    );
    s.files.insert(path, text);
    let j = judge(&s);
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::Get);
    assert!(r.capture_failures[0].contains("4242"), "{r:#?}");
    assert!(!r.passed);
}

#[test]
fn other_execution_by_the_client_fails_the_run() {
    let mut s = sample();
    let path = Sample::path("baseline-stdio-all-scopes/headless", CLIENT_WITNESS_FILE);
    edit_json(&mut s, &path, |w| {
        let events = w["events"].as_array_mut().unwrap();
        let mut e = events[1].clone();
        e["seq"] = 10_000.into();
        e["pid"] = 99.into();
        e["path"] = "/bin/sh".into();
        events.push(e);
    });
    let j = judge(&s);
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::Headless);
    assert_eq!(r.capture_failures.len(), 1, "{r:#?}");
    assert!(r.capture_failures[0].starts_with(
        "other execution by the client: execve \"/bin/sh\" with 6 argument(s) by pid 99"
    ));
    // A path the matrix names as absent from the image (Codex's getconf) is no execution.
    let mut absent = s.clone();
    let mut m: serde_json::Value = serde_json::from_slice(&absent.matrix).unwrap();
    m["absentExecs"] = serde_json::json!(["/bin/sh"]);
    absent.matrix = serde_json::to_vec(&m).unwrap();
    let j = judge(&absent);
    assert!(
        run_of(&j, "baseline-stdio-all-scopes", Mode::Headless)
            .capture_failures
            .is_empty(),
        "{j:#?}"
    );
    m["absentExecs"] = serde_json::json!(["../bin/sh"]);
    absent.matrix = serde_json::to_vec(&m).unwrap();
    let j = judge(&absent);
    assert!(format!("{j:?}").contains("absentExecs"), "{j:#?}");
    // A dropped event: the count cannot be trusted.
    let mut s = sample();
    edit_json(&mut s, &path, |w| w["eventsDropped"] = 1.into());
    assert!(!run_of(&judge(&s), "baseline-stdio-all-scopes", Mode::Headless).passed);
}

#[test]
fn an_edited_init_line_or_an_extra_listed_server_is_drift() {
    let mut s = sample();
    let path = Sample::path("baseline-stdio-all-scopes/headless", CLIENT_STDOUT_FILE);
    let text = String::from_utf8(s.files[&path].clone()).unwrap();
    let edited = text.replacen("\"name\":\"p1\"", "\"name\":\"p9\"", 1);
    assert_ne!(edited, text);
    s.files.insert(path.clone(), edited.into_bytes());
    let j = judge(&s);
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::Headless);
    // The recorded digest no longer matches, and the listed set drifted.
    assert!(r
        .capture_failures
        .iter()
        .any(|f| f.contains("does not match its recorded sha256")));
    assert!(r
        .failures
        .iter()
        .any(|f| matches!(f, Failure::ClientDrift { what } if what.contains("p9"))));

    // An extra `mcp list` line, with the digest "fixed" too: still drift.
    let mut s = sample();
    let dir = "baseline-stdio-all-scopes/list";
    let out = Sample::path(dir, CLIENT_STDOUT_FILE);
    let mut bytes = s.files[&out].clone();
    bytes.extend_from_slice(
        "x9: /scopebox/bin/scopebox-sentinel --scopebox-tag=user/x9 - ✗ Failed to connect\n"
            .as_bytes(),
    );
    let digest = sha256_hex(&bytes);
    let total = bytes.len();
    s.files.insert(out, bytes);
    edit_json(&mut s, &Sample::path(dir, CLIENT_RECORD_FILE), |c| {
        c["stdout"]["sha256"] = digest.into();
        c["stdout"]["totalBytes"] = total.into();
    });
    let j = judge(&s);
    let r = run_of(&j, "baseline-stdio-all-scopes", Mode::List);
    assert!(r.capture_failures.is_empty(), "{r:#?}");
    assert!(r.failures.iter().any(
        |f| matches!(f, Failure::ClientDrift { what } if what.contains("matches no declaration"))
    ));
}

#[test]
fn a_changed_exit_code_or_a_reordered_index_fails() {
    let mut s = sample();
    edit_json(
        &mut s,
        &Sample::path("get-unknown-name/get", CLIENT_RECORD_FILE),
        |c| c["exitCode"] = 0.into(),
    );
    let r = judge(&s);
    let r = run_of(&r, "get-unknown-name", Mode::Get);
    assert!(r
        .failures
        .iter()
        .any(|f| matches!(f, Failure::ClientDrift { what } if what.starts_with("exit code 0"))));

    let mut s = sample();
    edit_json(&mut s, INDEX_FILE, |i| {
        i["runs"].as_array_mut().unwrap().swap(0, 1);
    });
    let j = judge(&s);
    assert!(
        j.failures.iter().any(|f| f.starts_with("index run 0 is")),
        "{:?}",
        j.failures
    );
    assert!(!run_of(&j, "baseline-stdio-all-scopes", Mode::List).passed);
    assert!(!j.passed);
}

#[test]
fn the_pinned_digests_and_the_matrix_digest_are_checked() {
    let mut s = sample();
    edit_json(&mut s, INDEX_FILE, |i| {
        i["clientSha256"] = "0".repeat(64).into()
    });
    let j = judge(&s);
    assert!(
        j.failures[0].contains("is not the lock's"),
        "{:?}",
        j.failures
    );

    let mut s = sample();
    s.matrix.push(b'\n');
    let j = judge(&s);
    assert!(j
        .failures
        .iter()
        .any(|f| f.starts_with("the index's matrix sha256")));

    let mut s = sample();
    edit_json(&mut s, INDEX_FILE, |i| i["machine"] = "riscv64".into());
    assert!(judge(&s).failures[0].contains("no platform"));
}

#[test]
fn a_stale_divergence_and_a_missed_server_fail_the_candidate() {
    // mcpscope "reads" the BOM file now: the matrix's named `missed` divergence is stale.
    let mut s = sample();
    let id = "malformed-project-bom";
    let m = matrix();
    let (scenario, _) = scenario_run(&m, id, Mode::List);
    assert!(!scenario.divergences.is_empty());
    let decl = scenario
        .declarations
        .iter()
        .find(|d| d.tag == scenario.divergences[0].tag)
        .unwrap()
        .clone();
    for mode in ["list", "get", "headless"] {
        let dir = format!("{id}/{mode}");
        let out = Sample::path(&dir, "inventory/stdout");
        let mut doc: serde_json::Value = serde_json::from_slice(&s.files[&out]).unwrap();
        doc["servers"].as_array_mut().unwrap().push(serde_json::json!({
            "scope": decl.scope, "name": decl.name, "path": decl.file,
            "predictedLaunch": {"list": "launch", "headless": "launch", "validatedAgainst": "2.1.327"},
        }));
        refresh_inventory(&mut s, &dir, serde_json::to_vec(&doc).unwrap());
    }
    let j = judge(&s);
    let r = run_of(&j, id, Mode::Headless);
    assert!(r.inventory_failures.is_empty(), "{r:#?}");
    assert!(
        r.failures
            .iter()
            .any(|f| matches!(f, Failure::StaleDivergence { .. })),
        "{r:#?}"
    );

    // An inventory without the user server: missed (a hard failure) in list and headless.
    let mut s = sample();
    let id = "baseline-stdio-all-scopes";
    for mode in ["list", "headless"] {
        let dir = format!("{id}/{mode}");
        let out = Sample::path(&dir, "inventory/stdout");
        let mut doc: serde_json::Value = serde_json::from_slice(&s.files[&out]).unwrap();
        doc["servers"]
            .as_array_mut()
            .unwrap()
            .retain(|r| r["name"] != "u1");
        refresh_inventory(&mut s, &dir, serde_json::to_vec(&doc).unwrap());
    }
    let j = judge(&s);
    for mode in [Mode::List, Mode::Headless] {
        assert!(run_of(&j, id, mode).failures.contains(&Failure::Missed {
            tag: "user/u1".into()
        }));
    }
    assert_eq!(j.totals.missed, 2);
}

/// Replace a run's inventory stdout and keep its record consistent (digest and verdict), as
/// an honest runner with a different mcpscope would have written it.
fn refresh_inventory(s: &mut Sample, dir: &str, stdout: Vec<u8>) {
    let rec_path = Sample::path(dir, "inventory/record.json");
    let mut rec: CaseRecord = serde_json::from_slice(&s.files[&rec_path]).unwrap();
    rec.stdout_sha256 = sha256_hex(&stdout);
    let w: WitnessRecord =
        serde_json::from_slice(&s.files[&Sample::path(dir, "inventory/witness.json")]).unwrap();
    let m = matrix();
    let (id, mode) = dir.split_once('/').unwrap();
    let mode = match mode {
        "list" => Mode::List,
        "get" => Mode::Get,
        _ => Mode::Headless,
    };
    let (scenario, run) = scenario_run(&m, id, mode);
    let err = s.files[&Sample::path(dir, "inventory/stderr")].clone();
    rec.verdict = judge_inventory(&m, scenario, run, &stdout, &err, &rec, &w);
    s.files.insert(rec_path, serde_json::to_vec(&rec).unwrap());
    s.files
        .insert(Sample::path(dir, "inventory/stdout"), stdout);
}

#[test]
fn missing_and_hostile_files_are_failures_never_panics() {
    let base = sample();
    let keys: Vec<String> = base.files.keys().cloned().collect();
    // Every file of one run, removed or replaced by garbage, in turn.
    for key in keys
        .iter()
        .filter(|k| k.contains("/baseline-http-all-scopes/headless/") || k.as_str() == INDEX_FILE)
    {
        for bytes in [
            None,
            Some(b"\xff\xfe{".to_vec()),
            Some(b"{\"a\":1,\"a\":2}".to_vec()),
            Some(vec![b'['; 100_000]),
        ] {
            let mut s = base.clone();
            match bytes {
                None => {
                    s.files.remove(key);
                }
                Some(b) => {
                    s.files.insert(key.clone(), b);
                }
            }
            let j = judge(&s);
            assert!(!j.passed, "{key}");
        }
    }
    // A matrix or a lock that is not one.
    let s = sample();
    assert!(!judge_evidence(b"{}", &s.lock, &s.reader()).passed);
    assert!(!judge_evidence(&s.matrix, b"[", &s.reader()).passed);
    // The inventory record claiming a verdict the judge does not reach.
    let mut s = sample();
    edit_json(
        &mut s,
        &Sample::path("managed-exclusive/list", "inventory/record.json"),
        |r| r["verdict"]["failures"] = serde_json::json!(["made up"]),
    );
    let j = judge(&s);
    let r = run_of(&j, "managed-exclusive", Mode::List);
    assert!(r.inventory_failures[0].contains("recomputed"), "{r:#?}");
    // The inventory executing the sentinel: a candidate failure of the run.
    let mut s = sample();
    edit_json(
        &mut s,
        &Sample::path("managed-exclusive/get", "inventory/witness.json"),
        |w| {
            let events = w["events"].as_array_mut().unwrap();
            let mut e = events[1].clone();
            e["seq"] = 3.into();
            e["path"] = "/scopebox/bin/scopebox-sentinel".into();
            events.push(e);
        },
    );
    let j = judge(&s);
    let r = run_of(&j, "managed-exclusive", Mode::Get);
    assert!(
        r.inventory_failures
            .iter()
            .any(|f| f.starts_with("witness: executed")),
        "{r:#?}"
    );
}

#[test]
fn a_run_the_runner_did_not_complete_fails() {
    let mut s = sample();
    edit_json(&mut s, INDEX_FILE, |i| {
        i["runs"][4]["completed"] = false.into();
        i["runs"][4]["error"] = "client did not start".into();
    });
    let j = judge(&s);
    assert_eq!(j.totals.failed, 1);
    assert!(j.runs[4].capture_failures[0].ends_with("client did not start"));
}

#[test]
fn the_real_matrix_is_within_bounds_and_hostile_ones_are_not() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../harness/matrix/native-claude-code.json"
    );
    let bytes = std::fs::read(path).unwrap();
    let real: NativeMatrix = strict_json::from_slice(&bytes).unwrap();
    assert_eq!(matrix_problems(&real), Vec::<String>::new());
    assert_eq!(real.scenarios.len() * 3, 153);

    let mut m = matrix();
    m.scenarios[0]
        .fixture
        .push(crate::matrix::FixtureEntry::File {
            path: "/work/proj/big".into(),
            content: crate::matrix::FileContent::Fill {
                prefix: String::new(),
                byte: b' ',
                size: 1 << 40,
            },
            mode: None,
        });
    m.scenarios[1].runs.swap(0, 2);
    m.scenarios[2].id = "../x".into();
    m.sentinel = "/bin/sh".into();
    let p = matrix_problems(&m);
    assert_eq!(p.len(), 4, "{p:?}");
    let mut m = matrix();
    let one = m.scenarios[0].clone();
    m.scenarios = vec![one; MAX_SCENARIOS + 1];
    assert!(matrix_problems(&m)[0].contains("more than"));
}

#[test]
fn failures_read_in_words() {
    let f = Failure::Prediction {
        tag: "user/u1".into(),
        predicted: "launch".into(),
        launched: false,
    };
    assert_eq!(
        f.describe(),
        "prediction: mcpscope predicts launch for user/u1, the client did not launch it"
    );
    assert!(Failure::Missed { tag: "p/x".into() }
        .describe()
        .starts_with("missed: the client launched or listed p/x"));
}

#[test]
fn codex_json_listings_give_name_tag_and_status() {
    let p = "--scopebox-tag=";
    let list = r#"[{"name":"h1","enabled":true,"disabled_reason":null,
        "transport":{"type":"streamable_http","url":"http://127.0.0.1:18500/user/h1"}},
        {"name":"u2","enabled":false,"disabled_reason":null,
        "transport":{"type":"stdio","command":"/scopebox/bin/scopebox-sentinel","args":["--scopebox-tag=user/u2"]}},
        {"name":"x","enabled":false,"disabled_reason":"requirements",
        "transport":{"type":"stdio","args":[]}}, 7]"#;
    let (listed, problems) = codex_listed(Mode::List, list.as_bytes(), p);
    let got = name_tag_status(&listed);
    assert_eq!(
        got,
        [
            ("h1", Some("user/h1"), "enabled"),
            ("u2", Some("user/u2"), "disabled"),
            ("x", None, "disabled:requirements"),
        ]
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    // get: one object; an unknown name prints nothing; exec lists nothing; not JSON drifts.
    let get = r#"{"name":"u1","enabled":true,"transport":{"type":"stdio","args":["--scopebox-tag=user/u1"]}}"#;
    let (listed, _) = listed_servers_for(CODEX, Mode::Get, get.as_bytes(), p);
    assert_eq!(listed[0].tag.as_deref(), Some("user/u1"));
    assert!(codex_listed(Mode::Get, b"\n", p).0.is_empty());
    assert!(
        codex_listed(Mode::Headless, b"{\"type\":\"thread.started\"}\n", p)
            .0
            .is_empty()
    );
    assert_eq!(
        codex_listed(Mode::List, b"Name Command\n", p).0[0].status,
        "other:unparsed"
    );
    // Claude Code's text parser is still the default.
    let (claude, _) = listed_servers_for(
        "claude-code",
        Mode::List,
        b"u1: x --scopebox-tag=user/u1 - \xe2\x9c\x97 Failed to connect\n",
        p,
    );
    assert_eq!(claude[0].status, "failed");
}

#[test]
fn oauth_discovery_requests_are_the_declarations_they_name() {
    for (path, tag) in [
        ("/user/h1", Some("user/h1")),
        ("/user/h1?x=1", Some("user/h1")),
        (
            "/.well-known/oauth-protected-resource/user/h1",
            Some("user/h1"),
        ),
        ("/user/h1/.well-known/openid-configuration", Some("user/h1")),
        ("/.well-known/oauth-authorization-server", None),
        ("/", None),
        ("", None),
        ("/.well-known/", Some(".well-known")),
        ("/.well-known/a/.well-known/b", Some(".well-known/b")),
        ("/a/.well-known/b/.well-known/c", Some("a/.well-known/b")),
    ] {
        assert_eq!(request_tag(path).as_deref(), tag, "{path:?}");
    }
}

#[test]
fn absent_exec_patterns_match_one_component_per_star() {
    let p = "/home/node/.codex/tmp/arg0-linux/*/getconf";
    assert!(absent_exec(
        p,
        "/home/node/.codex/tmp/arg0-linux/codex-arg0iU1ykA/getconf"
    ));
    for other in [
        "/home/node/.codex/tmp/arg0-linux/getconf",
        "/home/node/.codex/tmp/arg0-linux/a/b/getconf",
        "/home/node/.codex/tmp/arg0-linux/../getconf",
        "/home/node/.codex/tmp/arg0-linux//getconf",
        "/home/node/.codex/tmp/arg0-linux/x/getconf2",
        "/home/node/.codex/tmp/arg0-linux/x/sh",
    ] {
        assert!(!absent_exec(p, other), "{other}");
    }
    assert!(absent_exec(
        "/scopebox/bin/getconf",
        "/scopebox/bin/getconf"
    ));
    assert!(!absent_exec(
        "/scopebox/bin/getconf",
        "/scopebox/bin/getconf/x"
    ));
    let mut m = matrix();
    m.absent_execs = vec!["/a/*".into(), "/a/*/b".into()];
    let p = matrix_problems(&m);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("\"/a/*\""), "{p:?}");
}

#[test]
fn the_inventory_reads_the_matrix_clients_profile() {
    let m = matrix();
    let s = &m.scenarios[0];
    assert_eq!(inventory_args(&m, s), [s.root(&m.defaults), "--json"]);
    let mut codex = matrix();
    codex.client.id = "codex".into();
    let args = inventory_args(&codex, s);
    assert_eq!(args[1..], ["--json", "--client", "codex"]);
    assert_eq!(inventory_case(&codex, s, &s.runs[0]).args, args);
    // The shipped Codex matrix names the arg0 attempts of every CODEX_HOME it uses.
    let shipped: NativeMatrix =
        serde_json::from_str(include_str!("../../harness/matrix/native-codex.json")).unwrap();
    assert!(matrix_problems(&shipped).is_empty());
    assert!(shipped
        .absent_execs
        .iter()
        .any(|a| absent_exec(a, "/home/node/alt/tmp/arg0-linux/codex-arg0Zz/lsb_release")));
}
