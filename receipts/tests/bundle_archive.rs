//! A bundle as one file: `scopebox-verify FILE.tar.gz` gives the same verdict as on the
//! directory it was made from, a changed byte inside the archive is rejected like on disk, and
//! a link inside it is an irregular entry, never followed.

use crate::util::{edit_json, relist, specimen, tempdir, verify_bin};
use scopebox_receipts::bundle_file::{files_of_dir, write_archive};
use std::io::Write;

#[test]
fn an_archived_bundle_verifies_exactly_as_its_directory_does() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    let files = files_of_dir(&bundle).unwrap();
    let archive = tmp.path().join("bundle.tar.gz");
    std::fs::write(&archive, write_archive(&files, Vec::new()).unwrap()).unwrap();
    // Deterministic: the same directory gives the same file.
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        write_archive(&files_of_dir(&bundle).unwrap(), Vec::new()).unwrap()
    );
    let dir_run = verify_bin(&[bundle.to_str().unwrap(), "--json"]);
    let file_run = verify_bin(&[archive.to_str().unwrap(), "--json"]);
    assert_eq!(file_run.code, 0, "{}{}", file_run.stdout, file_run.stderr);
    let checks = |out: &str| {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        v["checks"].clone()
    };
    assert_eq!(checks(&dir_run.stdout), checks(&file_run.stdout));
    // Nothing was extracted next to the archive.
    let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
}

#[test]
fn a_changed_file_inside_the_archive_is_rejected() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 2);
    edit_json(
        &bundle.join("platforms/linux-amd64/outer/container-inspect.json"),
        |d| d["HostConfig"]["NetworkMode"] = "host".into(),
    );
    relist(
        &bundle,
        "platforms/linux-amd64/outer/container-inspect.json",
    );
    let archive = tmp.path().join("bundle.tar.gz");
    let files = files_of_dir(&bundle).unwrap();
    std::fs::write(&archive, write_archive(&files, Vec::new()).unwrap()).unwrap();
    let run = verify_bin(&[archive.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("✗ linux-amd64/boundary.applied"));
}

#[test]
fn a_symlink_inside_the_archive_fails_files_kinds_and_garbage_is_unreadable() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let files = files_of_dir(&bundle).unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    for (path, bytes) in &files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        tar.append_data(&mut h, path, bytes.as_slice()).unwrap();
    }
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    tar.append_link(&mut h, "inputs/evil", "/etc/passwd")
        .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    let archive = tmp.path().join("linked.tar.gz");
    std::fs::write(&archive, gz.finish().unwrap()).unwrap();
    let run = verify_bin(&[archive.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("✗ files.kinds"), "{}", run.stdout);
    assert!(run.stdout.contains("inputs/evil"), "{}", run.stdout);

    let garbage = tmp.path().join("garbage.tar.gz");
    std::fs::write(&garbage, b"\x1f\x8bnot really").unwrap();
    let run = verify_bin(&[garbage.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}
