//! Fixture trees: what the walk must show for each declared entry, whether the walk before the
//! run shows exactly the declared fixture, what changed between the walks before and after, and
//! the entry helpers (paths, modes) those and validation share.

use super::content::{file_sha256, file_size};
use crate::digest::sha256_hex;
use crate::evidence::FixtureObservation;
use crate::layout;
use crate::matrix::{Case, FixtureEntry};
use std::collections::{BTreeMap, BTreeSet};

/// Mode a file or FIFO gets when the matrix names none.
pub const DEFAULT_FILE_MODE: u32 = 0o644;
/// Mode a directory (declared or implied parent) gets when the matrix names none.
pub const DEFAULT_DIR_MODE: u32 = 0o755;

/// Every path added, removed or changed between two walks of the fixture roots. When the walk
/// after is not `whole` (it stopped at a bound or an unreadable entry), a path it did not reach
/// is only said to be unseen: it may be there still.
pub fn fixture_change_failures(
    before: &[FixtureObservation],
    after: &[FixtureObservation],
    whole: bool,
) -> Vec<String> {
    let before: BTreeMap<&str, &FixtureObservation> =
        before.iter().map(|o| (o.path.as_str(), o)).collect();
    let after: BTreeMap<&str, &FixtureObservation> =
        after.iter().map(|o| (o.path.as_str(), o)).collect();
    let mut failures = Vec::new();
    for (path, old) in &before {
        match after.get(path) {
            None if whole => failures.push(format!("fixture {path} removed")),
            None => failures.push(format!("fixture {path} not seen after the run")),
            Some(new) if new != old => {
                let mut what = Vec::new();
                if new.kind != old.kind {
                    what.push(format!("kind {} -> {}", old.kind, new.kind));
                }
                if new.mode != old.mode {
                    what.push(format!("mode {} -> {}", old.mode, new.mode));
                }
                if new.size != old.size {
                    what.push(format!("size {} -> {}", old.size, new.size));
                }
                if new.sha256 != old.sha256 {
                    what.push("content".to_string());
                }
                failures.push(format!("fixture {path} changed ({})", what.join(", ")));
            }
            Some(_) => {}
        }
    }
    for path in after.keys() {
        if !before.contains_key(path) {
            failures.push(format!("fixture {path} added"));
        }
    }
    failures
}

/// Whether the walk taken before the run shows exactly the declared fixture: every entry with
/// its kind, mode and bytes (symlinks: target), and nothing else but implied parent dirs.
/// This binds the matrix to what the candidate actually saw.
pub fn fixture_layout_failures(case: &Case, before: &[FixtureObservation]) -> Vec<String> {
    layout_failures(&case.fixture, before)
}

/// `fixture_layout_failures` for any declared fixture (the negative control's, for one).
pub fn layout_failures(fixture: &[FixtureEntry], before: &[FixtureObservation]) -> Vec<String> {
    let observed: BTreeMap<&str, &FixtureObservation> =
        before.iter().map(|o| (o.path.as_str(), o)).collect();
    let mut failures = Vec::new();
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for entry in fixture {
        let path = entry_path(entry);
        declared.insert(path.to_string());
        let mut parent = parent_of(path);
        while let Some(p) = parent {
            if layout::FIXTURE_ROOTS.contains(&p) {
                break;
            }
            declared.insert(p.to_string());
            parent = parent_of(p);
        }
        let Some(obs) = observed.get(path) else {
            failures.push(format!("fixture {path} was not laid out"));
            continue;
        };
        // Kind, mode and size first: a file's digest (a fill's is streamed) is computed only
        // when everything cheaper already agrees.
        let expected = match expected_shape(entry) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("fixture {path} is invalid: {e}"));
                continue;
            }
        };
        let shape_differs = obs.kind != expected.kind
            || (expected.kind != "symlink" && obs.mode != expected.mode)
            || (expected.kind == "file" && obs.size != expected.size);
        let digest_differs = || match entry {
            FixtureEntry::File { content, .. } => {
                file_sha256(content).ok().as_ref() != obs.sha256.as_ref()
            }
            _ => obs.sha256 != expected.sha256,
        };
        if shape_differs || digest_differs() {
            failures.push(format!(
                "fixture {path} not laid out as declared (saw {} {} {} bytes)",
                obs.kind, obs.mode, obs.size
            ));
        }
    }
    for obs in before {
        if !declared.contains(&obs.path) {
            failures.push(format!("fixture {} present but not declared", obs.path));
        }
    }
    failures
}

/// What the walk must show for one declared entry (`size` only meaningful for files).
pub fn expected_observation(entry: &FixtureEntry) -> Result<FixtureObservation, String> {
    let mut expected = expected_shape(entry)?;
    if let FixtureEntry::File { content, .. } = entry {
        expected.sha256 = Some(file_sha256(content)?);
    }
    Ok(expected)
}

/// `expected_observation` without a file's digest (`sha256` is `None` for files): sizes are
/// arithmetic, so this costs nothing for a fill of any size.
fn expected_shape(entry: &FixtureEntry) -> Result<FixtureObservation, String> {
    Ok(match entry {
        FixtureEntry::File {
            path,
            content,
            mode,
        } => FixtureObservation {
            path: path.clone(),
            kind: "file".into(),
            mode: format_mode(mode_or(mode, DEFAULT_FILE_MODE)?),
            size: file_size(content)?,
            sha256: None,
        },
        FixtureEntry::Dir { path, mode } => FixtureObservation {
            path: path.clone(),
            kind: "dir".into(),
            mode: format_mode(mode_or(mode, DEFAULT_DIR_MODE)?),
            size: 0,
            sha256: None,
        },
        FixtureEntry::Symlink { path, target } => FixtureObservation {
            path: path.clone(),
            kind: "symlink".into(),
            mode: "0777".into(),
            size: target.len() as u64,
            sha256: Some(sha256_hex(target.as_bytes())),
        },
        FixtureEntry::Fifo { path, mode } => FixtureObservation {
            path: path.clone(),
            kind: "fifo".into(),
            mode: format_mode(mode_or(mode, DEFAULT_FILE_MODE)?),
            size: 0,
            sha256: None,
        },
    })
}

fn mode_or(mode: &Option<String>, default: u32) -> Result<u32, String> {
    match mode {
        Some(m) => parse_mode(m),
        None => Ok(default),
    }
}

/// An octal mode string ("0644", "755", "0000") → permission bits; at most 0o777.
pub fn parse_mode(text: &str) -> Result<u32, String> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(format!("mode {text:?} is not 1-4 octal digits"));
    }
    let mode = u32::from_str_radix(text, 8).map_err(|_| format!("mode {text:?} is not octal"))?;
    if mode > 0o777 {
        return Err(format!(
            "mode {text:?} sets bits beyond rwx (setuid/setgid/sticky)"
        ));
    }
    Ok(mode)
}

/// Permission bits as the walk records them: four octal digits.
pub fn format_mode(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}

/// The path a fixture entry creates.
pub fn entry_path(entry: &FixtureEntry) -> &str {
    match entry {
        FixtureEntry::File { path, .. }
        | FixtureEntry::Dir { path, .. }
        | FixtureEntry::Symlink { path, .. }
        | FixtureEntry::Fifo { path, .. } => path,
    }
}

pub(super) fn parent_of(path: &str) -> Option<&str> {
    let idx = path.rfind('/')?;
    if idx == 0 {
        None
    } else {
        Some(&path[..idx])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::content::file_bytes;
    use crate::judge::test_support::{case, failures_of, record};
    use crate::matrix::FileContent;

    #[test]
    fn fixture_changes_are_named_by_path() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let file = r
            .fixtures_after
            .iter_mut()
            .find(|o| o.path == "/work/p/.mcp.json")
            .unwrap();
        file.mode = "0600".into();
        file.sha256 = Some(sha256_hex(b"{ }"));
        file.size = 3;
        r.fixtures_after.push(FixtureObservation {
            path: "/work/p/new".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        });
        r.fixtures_after.retain(|o| o.path != "/work/p");
        let f = failures_of(&c, b"", b"", &r);
        assert_eq!(
            f,
            vec![
                "fixture /work/p removed",
                "fixture /work/p/.mcp.json changed (mode 0644 -> 0600, size 2 -> 3, content)",
                "fixture /work/p/new added",
            ]
        );
    }

    #[test]
    fn fixture_not_laid_out_as_declared_fails() {
        let c = case();
        let mut r = record(&c, b"", b"");
        for walk in [&mut r.fixtures_before, &mut r.fixtures_after] {
            let file = walk
                .iter_mut()
                .find(|o| o.path == "/work/p/.mcp.json")
                .unwrap();
            file.sha256 = Some(sha256_hex(b"[]"));
        }
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["fixture /work/p/.mcp.json not laid out as declared (saw file 0644 2 bytes)"]
        );
    }

    #[test]
    fn missing_and_undeclared_fixture_paths_fail() {
        let c = case();
        let mut r = record(&c, b"", b"");
        let stray = FixtureObservation {
            path: "/home/node/.claude.json".into(),
            kind: "file".into(),
            mode: "0644".into(),
            size: 0,
            sha256: Some(sha256_hex(b"")),
        };
        for walk in [&mut r.fixtures_before, &mut r.fixtures_after] {
            walk.retain(|o| o.path != "/work/p/.mcp.json");
            walk.push(stray.clone());
            walk.sort();
        }
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec![
                "fixture /work/p/.mcp.json was not laid out",
                "fixture /home/node/.claude.json present but not declared",
            ]
        );
    }

    #[test]
    fn modes_parse_as_octal_permission_bits() {
        assert_eq!(parse_mode("0644").unwrap(), 0o644);
        assert_eq!(parse_mode("0").unwrap(), 0);
        assert_eq!(parse_mode("755").unwrap(), 0o755);
        for bad in ["", "0888", "rw-", "00644", "4755", "-1"] {
            assert!(parse_mode(bad).is_err(), "{bad}");
        }
        assert_eq!(format_mode(0o640), "0640");
    }

    #[test]
    fn a_laid_out_fill_one_byte_off_is_caught_though_its_bytes_were_remembered() {
        // The runner's walk remembers what it read (`sha256_hex_remembered`); the judge may
        // take a fill's digest from there only when those bytes are exactly the fill.
        let size = 3 * crate::digest::REMEMBER_MIN_BYTES as u64 + 1;
        let entry = FixtureEntry::File {
            path: "/work/proj/.mcp.json".into(),
            content: FileContent::Fill {
                prefix: "{\"remembered-fill\":".into(),
                byte: b' ',
                size,
            },
            mode: None,
        };
        let FixtureEntry::File { content, .. } = &entry else {
            unreachable!()
        };
        let observed = |bytes: &[u8]| FixtureObservation {
            path: "/work/proj/.mcp.json".into(),
            kind: "file".into(),
            mode: format_mode(DEFAULT_FILE_MODE),
            size: bytes.len() as u64,
            sha256: Some(crate::digest::sha256_hex_remembered(bytes)),
        };
        let mut one_off = file_bytes(content).unwrap();
        *one_off.last_mut().unwrap() = b'}';
        let failures = layout_failures(std::slice::from_ref(&entry), &[observed(&one_off)]);
        assert_eq!(
            failures,
            ["fixture /work/proj/.mcp.json not laid out as declared (saw file 0644 196609 bytes)"]
        );
        let exact = file_bytes(content).unwrap();
        assert!(layout_failures(std::slice::from_ref(&entry), &[observed(&exact)]).is_empty());
    }
}
