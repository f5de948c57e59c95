//! Snapshots of what `scopebox-verify` prints (insta, reviewed like code): the committed
//! reference bundle's report, human and `--json`, with and without its key; a rejected copy of
//! it; and a usage error. The bundle's path is the only thing redacted (`[BUNDLE]`): everything
//! else is the committed bundle's own bytes, so any change to a check's id, title, order or
//! wording, or to the report's layout, shows up as a diff to review.

use crate::util::{edit_json, relist, tempdir, verify_bin, Run};
use std::path::{Path, PathBuf};

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-bundle")
}

fn reference_key() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference-key.pub.pem")
}

/// The run's exit code and both streams, with `bundle`'s path as `[BUNDLE]`.
fn transcript(run: &Run, bundle: &Path) -> String {
    let path = bundle.to_str().expect("a UTF-8 path");
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        run.code, run.stdout, run.stderr
    )
    .replace(path, "[BUNDLE]")
}

#[test]
fn the_reference_bundle_with_its_key() {
    let bundle = reference();
    let run = verify_bin(&[
        bundle.to_str().unwrap(),
        "--key",
        reference_key().to_str().unwrap(),
    ]);
    insta::assert_snapshot!(transcript(&run, &bundle));
}

#[test]
fn the_reference_bundle_without_a_key() {
    let bundle = reference();
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    insta::assert_snapshot!(transcript(&run, &bundle));
}

#[test]
fn the_reference_bundle_as_json() {
    let bundle = reference();
    let run = verify_bin(&[bundle.to_str().unwrap(), "--json"]);
    insta::assert_snapshot!(transcript(&run, &bundle));
}

#[test]
fn a_copy_of_the_reference_bundle_run_with_the_host_network() {
    let tmp = tempdir();
    let bundle = tmp.path().join("bundle");
    crate::hostile_copy(&reference(), &bundle);
    let inspect = "platforms/linux-amd64/outer/container-inspect.json";
    edit_json(&bundle.join(inspect), |d| {
        d["HostConfig"]["NetworkMode"] = "host".into()
    });
    relist(&bundle, inspect);
    let run = verify_bin(&[bundle.to_str().unwrap()]);
    insta::assert_snapshot!(transcript(&run, &bundle));
}

#[test]
fn no_bundle_named() {
    let run = verify_bin(&[]);
    insta::assert_snapshot!(transcript(&run, Path::new("[none]")));
}
