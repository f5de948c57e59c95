//! Arguments, root selection, client selection and exit codes, through the
//! real binary.

use crate::util::{assert_no_system_managed_dir, Tree};

#[test]
fn empty_tree_is_complete_and_exits_0() {
    assert_no_system_managed_dir();
    let t = Tree::new();
    snapshot!("empty_tree_human", t.run(&["."]));
    snapshot!("empty_tree_json", t.run(&[".", "--json"]));
}

#[test]
fn client_selector_and_its_alias_are_byte_identical_to_the_default() {
    let t = Tree::new();
    crate::fixtures::full(&t);
    for extra in [&[][..], &["--json"][..]] {
        let default = t.run(&[&["."], extra].concat());
        for client in [["--client", "claude-code"], ["--client", "claude"]] {
            let other = t.run(&[&["."], extra, &client[..]].concat());
            assert_eq!(default, other, "{client:?} {extra:?}");
        }
        let eq_form = t.run(&[&["."], extra, &["--client=claude"][..]].concat());
        assert_eq!(default, eq_form);
    }
}

#[test]
fn other_clients_are_usage_errors_before_the_root_is_examined() {
    let t = Tree::new();
    // The root does not exist: had it been examined, the exit would be 1.
    for client in [
        "DSH",
        "kursor",
        "",
        "CLAUDE-CODE",
        "VSCODE",
        "vs-code",
        "All",
    ] {
        let r = t.run(&["does-not-exist", "--client", client]);
        assert_eq!(r.code, 2, "{client}: {r}");
        assert_eq!(r.stdout, "");
        assert!(r.stderr.starts_with("error: "), "{r}");
    }
    snapshot!(
        "unknown_client",
        t.run(&["does-not-exist", "--client", "kursor"])
    );
}

#[test]
fn usage_errors_exit_2_with_nothing_on_stdout() {
    let t = Tree::new();
    snapshot!("missing_root_argument", t.run(&[]));
    snapshot!("unknown_flag", t.run(&[".", "--frobnicate"]));
    let r = t.run(&[".", "extra"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    // `--json` after `--` is a second root, not the flag.
    let r = t.run(&[".", "--", "--json"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r}");
}

#[test]
fn usage_errors_with_json_answer_with_the_refusal_document() {
    let t = Tree::new();
    for args in [
        &["--json"][..],
        &[".", "--json", "--frobnicate"][..],
        &["--json", ".", "--client", "kursor"][..],
        &[".", "--json", "--dsh-profile", "web"][..],
        &[".", "--json", "--fail-on", "sometimes"][..],
    ] {
        let r = t.run(args);
        assert_eq!(r.code, 2, "{args:?}: {r}");
        let j = r.json();
        assert_eq!(j["schemaVersion"], 1, "{r}");
        assert_eq!(j["error"]["code"], "usage", "{r}");
        assert!(j["error"]["reason"].is_null() && j["error"]["root"].is_null());
        // The document says what stderr says: clap's first line, without its prefix.
        let first = r.stderr.lines().next().unwrap();
        let message = j["error"]["message"].as_str().unwrap();
        assert_eq!(message.lines().next(), first.strip_prefix("error: "), "{r}");
    }
    // An argument echoed back with a terminal escape never reaches stdout raw. (Whether clap
    // keeps the escape in its text at all depends on its features: with `color`, unified in by
    // the workspace's other crates, its rendering strips it; the shipped static build keeps it,
    // and then the document carries it as a `\u001b` escape.)
    let r = t.run(&[".", "--json", "--client", "cur\u{1b}[2Jsor"]);
    assert_eq!(r.code, 2, "{r}");
    assert!(!r.stdout.contains('\u{1b}'), "{r}");
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("for '--client <CLIENT>'"), "{message}");
}

#[test]
fn help_and_version_succeed_on_stdout() {
    let t = Tree::new();
    let h = t.run(&["--help"]);
    assert_eq!(h.code, 0);
    assert!(h.stdout.contains("--client <CLIENT>") && h.stdout.contains("claude-code"));
    let v = t.run(&["--version"]);
    assert_eq!(
        (v.code, v.stdout.trim()),
        (0, concat!("mcpscope ", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn invalid_roots_are_refused_with_exit_1() {
    let t = Tree::new();
    t.write("a-file", "x");
    snapshot!("empty_root", t.run(&[""]));
    snapshot!("missing_root", t.run(&["no/such/dir"]));
    snapshot!("file_root", t.run_in(&t.base, &["a-file"]));
    // Without --json nothing is printed on stdout; with it, the refusal's document, and
    // stderr says the same as without.
    for (args, reason, message) in [
        (&["", "--json"][..], "empty", "the root argument is empty"),
        (
            &["no/such/dir", "--json"][..],
            "not-found",
            "root does not exist: no/such/dir",
        ),
        (
            &["a-file", "--json"][..],
            "not-directory",
            "root is not a directory: a-file",
        ),
    ] {
        let r = t.run_in(&t.base, args);
        assert_eq!(r.code, 1, "{r}");
        let plain = t.run_in(&t.base, &args[..1]);
        assert_eq!((plain.code, plain.stdout.as_str()), (1, ""), "{plain}");
        assert_eq!(r.stderr, plain.stderr);
        let j = r.json(); // the whole of stdout parses
        assert_eq!(j["schemaVersion"], 1, "{r}");
        assert_eq!(j["tool"]["name"], "mcpscope");
        assert_eq!(j["error"]["code"], "invalid-root");
        assert_eq!(j["error"]["reason"], reason);
        assert_eq!(j["error"]["root"], args[0]);
        assert_eq!(j["error"]["message"], message);
        assert!(j.get("inventoryComplete").is_none(), "{r}");
    }
    // A dangling symlink as root is "does not exist".
    t.symlink("nowhere", "dangling");
    assert_eq!(t.run_in(&t.base, &["dangling"]).code, 1);
}

#[test]
fn dot_selects_the_current_directory_and_relative_roots_work() {
    let t = Tree::new();
    let dot = t.run(&[".", "--json"]).json();
    let rel = t.run_in(&t.base, &["work/team/proj", "--json"]).json();
    let abs = t
        .run_in(&t.base, &[t.root().to_str().unwrap(), "--json"])
        .json();
    assert_eq!(dot["root"]["canonical"], "[TMP]/work/team/proj");
    assert_eq!(dot["root"]["requested"], ".");
    assert_eq!(rel["root"]["requested"], "work/team/proj");
    assert_eq!(abs["root"]["requested"], "[TMP]/work/team/proj");
    for d in [&dot, &rel, &abs] {
        assert_eq!(d["root"]["explicit"], "[TMP]/work/team/proj");
        assert_eq!(d["sources"], dot["sources"]);
    }
}

#[test]
fn a_symlinked_root_is_followed_and_keeps_its_explicit_spelling() {
    let t = Tree::new();
    t.write(
        "work/team/proj/.mcp.json",
        r#"{"mcpServers":{"p":{"command":"x"}}}"#,
    );
    t.symlink(t.path("work/team"), "link");
    let d = t.run_in(&t.base, &["link/proj/", "--json"]);
    assert_eq!(d.code, 0, "{d}");
    let j = d.json();
    assert_eq!(j["root"]["explicit"], "[TMP]/link/proj");
    assert_eq!(j["root"]["canonical"], "[TMP]/work/team/proj");
    assert_eq!(j["sources"][1]["state"], "present");
    assert_eq!(j["sources"][1]["path"], "[TMP]/work/team/proj/.mcp.json");
}

#[test]
fn json_mode_prints_exactly_one_document_and_the_incomplete_note_goes_to_stderr() {
    let t = Tree::new();
    t.write("work/team/proj/.mcp.json", "{,}");
    let r = t.run(&[".", "--json"]);
    assert_eq!(r.code, 1);
    let j = r.json(); // the whole of stdout parses
    assert_eq!(j["inventoryComplete"], false);
    assert_eq!(
        r.stderr,
        "mcpscope: inventory incomplete: project source malformed (syntax)\n"
    );
}

#[test]
fn home_unset_makes_home_sources_unreadable() {
    let t = Tree::new();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
    cmd.args([".", "--json"]).current_dir(t.root()).env_clear();
    let r = t.transcript(cmd);
    assert_eq!(r.code, 1);
    let j = r.json();
    for i in [0, 2] {
        assert_eq!(j["sources"][i]["state"], "unreadable");
        assert_eq!(j["sources"][i]["reason"], "home-not-set");
        assert_eq!(j["sources"][i]["path"], "~/.claude.json");
    }
    let user_instr = j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["scope"] == "user")
        .unwrap();
    assert_eq!(user_instr["reason"], "home-not-set");
}

#[test]
fn a_report_that_cannot_be_written_exits_1_but_a_closed_pipe_does_not() {
    let t = Tree::new();
    for json in [false, true] {
        let args: &[&str] = if json { &[".", "--json"] } else { &["."] };
        // A full stdout (a full disk): the report is lost, and the exit code says so.
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
        cmd.args(args)
            .current_dir(t.root())
            .env_clear()
            .env("HOME", t.home())
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(std::process::Stdio::piped());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "json={json}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("the report could not be written to stdout (No space left"),
            "{stderr}"
        );
        // A reader that went away before anything was written: no failure.
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpscope"));
        cmd.args(args)
            .current_dir(t.root())
            .env_clear()
            .env("HOME", t.home())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "json={json}");
        assert!(
            out.stderr.is_empty(),
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
