//! A bundle as one file: `scopebox-verify FILE.tar.gz` gives the same verdict as on the
//! directory it was made from (its longest paths too), a changed byte inside the archive is
//! rejected like on disk, and a link, a PAX header or any framing the writer does not give
//! makes the archive unreadable, the entry named.

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

/// A PAX extended header entry named `name` whose one record is `record` (`key=value`).
fn pax_header(name: &str, record: &str) -> Vec<u8> {
    let body = format!(" {record}\n");
    let mut length = body.len() + 1;
    while format!("{length}{body}").len() != length {
        length += 1;
    }
    let data = format!("{length}{body}");
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(tar::EntryType::XHeader);
    h.set_size(data.len() as u64);
    h.set_path(name).unwrap();
    h.set_cksum();
    let mut bytes = h.as_bytes().to_vec();
    bytes.extend_from_slice(data.as_bytes());
    bytes.resize(bytes.len().next_multiple_of(512), 0);
    bytes
}

#[test]
fn a_symlink_inside_the_archive_is_unreadable_naming_it_escaped_and_so_is_garbage() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let files = files_of_dir(&bundle).unwrap();
    let mut tar = tar::Builder::new(tar_without_marker(&files));
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    tar.append_link(&mut h, "inputs/evil\x1b[31m", "/etc/passwd")
        .unwrap();
    let archive = tmp.path().join("linked.tar.gz");
    std::fs::write(&archive, gzip(&tar.into_inner().unwrap())).unwrap();
    let run = verify_bin(&[archive.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let expected = format!(
        ": the archive is malformed: entry {} (inputs/evil\\u{{1b}}[31m) is a symlink (type '2'); \
         a bundle archive holds regular files in ustar headers only",
        files.len() + 1
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(!run.stderr.contains('\x1b'), "{}", run.stderr);

    let garbage = tmp.path().join("garbage.tar.gz");
    std::fs::write(&garbage, b"\x1f\x8bnot really").unwrap();
    let run = verify_bin(&[garbage.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

#[test]
fn a_pax_header_renaming_a_file_of_the_archive_is_unreadable() {
    // The boundary policy under another name that a PAX path renames back: a reader honouring
    // PAX (the tar crate, GNU tar) sees the policy (the verifier did, and verified the
    // bundle), one that does not sees a stray notes.txt and no policy. It is read by neither.
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let mut files = files_of_dir(&bundle).unwrap();
    let policy = "inputs/boundary-policy.json";
    let bytes = files.remove(policy).unwrap();
    let mut tar = tar_without_marker(&files);
    tar.extend(pax_header(
        "PaxHeaders.0/notes.txt",
        &format!("path={policy}"),
    ));
    let mut renamed = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(bytes.len() as u64);
    renamed
        .append_data(&mut h, "notes.txt", bytes.as_slice())
        .unwrap();
    tar.extend(renamed.into_inner().unwrap());
    let archive = tmp.path().join("renamed.tar.gz");
    std::fs::write(&archive, gzip(&tar)).unwrap();
    let run = verify_bin(&[archive.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["result"], "unreadable");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains(&format!(
            "the archive is malformed: entry {} (PaxHeaders.0/notes.txt) is a PAX extended \
             header (type 'x')",
            files.len() + 1
        )),
        "{v}"
    );
}

#[test]
fn an_archived_bundle_with_case_ids_too_long_for_ustar_verifies_as_its_directory_does() {
    // Paths of `platforms/<dir>/evidence/cases/<id>/…` whose id is over 109 bytes do not fit
    // a ustar header (155-byte prefix, 100-byte name): the writer gives them GNU long names,
    // the one extension the reader takes.
    let tmp = tempdir();
    let long = ["a-".repeat(60) + "z", "z".repeat(240)];
    let ids = [vec!["short".to_string()], long.to_vec()].concat();
    let bundle = tmp.path().join("bundle");
    crate::synthetic::write_bundle_with_case_ids(&bundle, &ids).unwrap();
    let files = files_of_dir(&bundle).unwrap();
    let gz = write_archive(&files, Vec::new()).unwrap();
    let mut raw = tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()));
    let long_names = raw
        .entries()
        .unwrap()
        .raw(true)
        .filter(|e| e.as_ref().unwrap().header().entry_type() == tar::EntryType::GNULongName)
        .count();
    let long_paths = files
        .keys()
        .filter(|p| long.iter().any(|id| p.contains(id.as_str())))
        .count();
    assert_eq!(long_names, long_paths);
    assert!(long_paths >= 8, "{long_paths}");
    let archive = tmp.path().join("bundle.tar.gz");
    std::fs::write(&archive, gz).unwrap();
    let dir_run = verify_bin(&[bundle.to_str().unwrap(), "--json"]);
    let file_run = verify_bin(&[archive.to_str().unwrap(), "--json"]);
    assert_eq!(dir_run.code, 0, "{}{}", dir_run.stdout, dir_run.stderr);
    assert_eq!(file_run.code, 0, "{}{}", file_run.stdout, file_run.stderr);
    let checks =
        |out: &str| serde_json::from_str::<serde_json::Value>(out).unwrap()["checks"].clone();
    assert_eq!(checks(&dir_run.stdout), checks(&file_run.stdout));
}

/// The tar stream of `files` as `write_archive` writes it (regular files in ustar headers)
/// without its end-of-archive marker, and the gzip of some bytes.
fn tar_without_marker(files: &std::collections::BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        tar.append_data(&mut h, path, bytes.as_slice()).unwrap();
    }
    let mut tar = tar.into_inner().unwrap();
    tar.truncate(tar.len() - 1024);
    tar
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_second_gzip_member_replacing_a_file_or_bytes_after_the_archive_are_unreadable() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let files = files_of_dir(&bundle).unwrap();
    let target = "inputs/boundary-policy.json";
    let replacement = br#"{"replaced": true}"#.to_vec();
    // The tester's archive: the bundle's tar cut before its marker, then a second gzip member
    // holding the replacement and the marker. An extractor reading every member sees it.
    let mut archive = gzip(&tar_without_marker(&files));
    let second = std::collections::BTreeMap::from([(target.to_string(), replacement.clone())]);
    archive.extend(gzip(&[tar_without_marker(&second), vec![0; 1024]].concat()));
    let mut extracted = Vec::new();
    let mut whole = tar::Archive::new(flate2::read::MultiGzDecoder::new(archive.as_slice()));
    for entry in whole.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path_bytes().as_ref() == target.as_bytes() {
            extracted.clear();
            std::io::Read::read_to_end(&mut entry, &mut extracted).unwrap();
        }
    }
    assert_eq!(extracted, replacement);
    let two = tmp.path().join("two-members.tar.gz");
    std::fs::write(&two, &archive).unwrap();
    // A valid archive with garbage after it.
    let mut garbage = write_archive(&files, Vec::new()).unwrap();
    garbage.extend_from_slice(b"trailing garbage");
    let trailing = tmp.path().join("trailing.tar.gz");
    std::fs::write(&trailing, &garbage).unwrap();
    for path in [&two, &trailing] {
        let run = verify_bin(&[path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(
                ": the archive is malformed: bytes follow the gzip stream (another gzip member \
                 or trailing data)"
            ),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn an_archive_whose_tar_stream_lacks_its_end_marker_is_unreadable() {
    let tmp = tempdir();
    let bundle = specimen(tmp.path(), 1);
    let cut = tmp.path().join("cut.tar.gz");
    std::fs::write(
        &cut,
        gzip(&tar_without_marker(&files_of_dir(&bundle).unwrap())),
    )
    .unwrap();
    let run = verify_bin(&[cut.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["result"], "unreadable");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("the tar stream does not end with its end-of-archive marker"),
        "{v}"
    );
}
