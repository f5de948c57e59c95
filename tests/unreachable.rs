//! With `DOCKER_HOST` pointing at a socket that does not exist, `run` and `sweep` exit 3 and
//! the hint names the address tried.

use crate::support::{scopebox, tempdir};

#[test]
fn an_unreachable_engine_exits_3_naming_the_socket() {
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
}

#[test]
fn sweep_also_exits_3_without_an_engine() {
    let out = scopebox(&["sweep"], &[("DOCKER_HOST", "unix:///nonexistent.sock")]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("tried unix:///nonexistent.sock"));
}
