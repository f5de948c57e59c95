//! With `DOCKER_HOST` pointing at a socket that does not exist, `run` and `sweep` exit 3 and
//! the hint names the address tried.

use crate::support::{scopebox, tempdir};

pub fn an_unreachable_engine_exits_3_naming_the_socket() {
    let dir = tempdir();
    let out = scopebox(
        &["run", "--out", dir.path().join("b").to_str().unwrap()],
        &[("DOCKER_HOST", "unix:///nonexistent.sock")],
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("hint: is the Docker engine running? tried unix:///nonexistent.sock"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
    assert!(!dir.path().join("b").exists(), "no bundle directory");
}

pub fn with_json_an_unreachable_engine_answers_with_the_code_message_and_hint() {
    let dir = tempdir();
    let bundle = dir.path().join("b");
    for args in [
        vec!["run", "--json", "--out", bundle.to_str().unwrap()],
        vec!["sweep", "--json"],
    ] {
        let out = scopebox(&args, &[("DOCKER_HOST", "unix:///nonexistent.sock")]);
        assert_eq!(out.code, 3, "{out:?}");
        let v = crate::refusals::error_object(&out.stdout);
        assert_eq!(v["exitCode"], 3, "{v}");
        assert_eq!(v["error"]["code"], "engine-unreachable", "{v}");
        assert_eq!(
            v["error"]["message"],
            "failed to reach the Docker engine at unix:///nonexistent.sock"
        );
        assert!(
            v["error"]["hint"]
                .as_str()
                .is_some_and(|h| h.contains("tried unix:///nonexistent.sock")),
            "{v}"
        );
        // Each cause once, none repeating the message.
        let causes: Vec<&str> = v["error"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(!causes.is_empty(), "{v}");
        for (i, cause) in causes.iter().enumerate() {
            assert!(!causes[..i].contains(cause), "{causes:?}");
            assert_eq!(
                out.stderr.matches(&format!("caused by: {cause}\n")).count(),
                1,
                "{}",
                out.stderr
            );
        }
        assert!(!bundle.exists(), "no bundle directory");
    }
}

pub fn sweep_also_exits_3_without_an_engine() {
    let out = scopebox(&["sweep"], &[("DOCKER_HOST", "unix:///nonexistent.sock")]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("tried unix:///nonexistent.sock"));
}
