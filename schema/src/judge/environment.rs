//! The candidate's environment: what every candidate gets (`expected_env`), which names a case
//! may not set, and every way a recorded environment differs from it.

use crate::layout;
use crate::matrix::Case;
use std::collections::BTreeMap;

/// Environment names a case may not set: they steer the harness, not the candidate.
pub const RESERVED_ENV_PREFIX: &str = "SCOPEBOX_";

/// The environment every candidate gets, `NAME=value` sorted by name: the base
/// (`HOME=/home/node`, `PATH=/scopebox/bin`, `LANG=C.UTF-8`) with the case's own variables
/// over it. The runner builds the candidate's environment from this.
pub fn expected_env(case: &Case) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = [
        ("HOME", layout::HOME),
        ("PATH", "/scopebox/bin"),
        ("LANG", "C.UTF-8"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in &case.env {
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().collect()
}

/// Every way a recorded environment differs from `expected_env`: it must be equal key for key
/// and in order, with no duplicate, no extra (`LD_PRELOAD`, `SCOPEBOX_*`) and none missing.
pub fn environment_failures(case: &Case, env: &[String]) -> Vec<String> {
    let expected: Vec<String> = expected_env(case)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if env == expected.as_slice() {
        return Vec::new();
    }
    let mut failures = Vec::new();
    let want: BTreeMap<&str, &str> = expected.iter().filter_map(|e| e.split_once('=')).collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in env {
        let Some((name, value)) = entry.split_once('=') else {
            failures.push(format!("environment entry {entry:?} has no '='"));
            continue;
        };
        *seen.entry(name).or_default() += 1;
        match want.get(name) {
            None => failures.push(format!("environment has an extra {name:?}")),
            Some(v) if *v != value => {
                failures.push(format!("environment {name} is {value:?}, expected {v:?}"))
            }
            Some(_) => {}
        }
    }
    for (name, count) in &seen {
        if *count > 1 {
            failures.push(format!("environment has {name:?} {count} times"));
        }
    }
    for name in want.keys() {
        if !seen.contains_key(name) {
            failures.push(format!("environment lacks {name:?}"));
        }
    }
    if failures.is_empty() {
        failures.push("environment is not in the matrix's order".to_string());
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_case(env: &[(&str, &str)]) -> Case {
        let mut case: Case = serde_json::from_str(
            r#"{"id":"e","client":"claude-code","description":"","args":[],"expect":{"exitCode":0}}"#,
        )
        .unwrap();
        case.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        case
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_environment_must_be_the_matrixs_exactly() {
        let case = env_case(&[("XDG_CONFIG_HOME", "/home/node/.config"), ("LANG", "C")]);
        let exact = strings(&[
            "HOME=/home/node",
            "LANG=C",
            "PATH=/scopebox/bin",
            "XDG_CONFIG_HOME=/home/node/.config",
        ]);
        assert_eq!(environment_failures(&case, &exact), Vec::<String>::new());

        let mut extra = exact.clone();
        extra.push("LD_PRELOAD=/tmp/x.so".into());
        extra.push("SCOPEBOX_SENTINEL_MARKER=/tmp/y".into());
        assert_eq!(
            environment_failures(&case, &extra),
            [
                "environment has an extra \"LD_PRELOAD\"",
                "environment has an extra \"SCOPEBOX_SENTINEL_MARKER\""
            ]
        );

        let mut twice = exact.clone();
        twice.push("HOME=/home/node".into());
        assert_eq!(
            environment_failures(&case, &twice),
            ["environment has \"HOME\" 2 times"]
        );

        let mut reordered = exact.clone();
        reordered.swap(0, 1);
        assert_eq!(
            environment_failures(&case, &reordered),
            ["environment is not in the matrix's order"]
        );

        let changed = strings(&["HOME=/tmp", "LANG=C", "PATH=/scopebox/bin"]);
        assert_eq!(
            environment_failures(&case, &changed),
            [
                "environment HOME is \"/tmp\", expected \"/home/node\"",
                "environment lacks \"XDG_CONFIG_HOME\""
            ]
        );
    }
}
