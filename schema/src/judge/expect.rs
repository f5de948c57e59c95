//! A case's own expectations: its exit code, JSON facts on stdout, text facts on stdout and
//! stderr, and whether either stream is empty.

use crate::matrix::{Expectations, JsonFact};

/// The case's own expectations: exit code, JSON facts, text facts.
pub(super) fn expectations(
    expect: &Expectations,
    exit_code: Option<i32>,
    stdout: &[u8],
    stderr: &[u8],
    failures: &mut Vec<String>,
) {
    match exit_code {
        Some(code) if code == expect.exit_code => {}
        Some(code) => failures.push(format!("exit code {code}, expected {}", expect.exit_code)),
        None => failures.push(format!("no exit code, expected {}", expect.exit_code)),
    }
    if !expect.json.is_empty() {
        match serde_json::from_slice::<serde_json::Value>(stdout) {
            Ok(doc) => {
                for fact in &expect.json {
                    if let Some(f) = json_fact_failure(&doc, fact) {
                        failures.push(f);
                    }
                }
            }
            Err(_) => failures.push("stdout is not one JSON document".to_string()),
        }
    }
    for needle in &expect.stdout_contains {
        if !contains_bytes(stdout, needle.as_bytes()) {
            failures.push(format!("stdout does not contain {needle:?}"));
        }
    }
    for needle in &expect.stdout_not_contains {
        if contains_bytes(stdout, needle.as_bytes()) {
            failures.push(format!("stdout contains {needle:?}"));
        }
    }
    for needle in &expect.stderr_contains {
        if !contains_bytes(stderr, needle.as_bytes()) {
            failures.push(format!("stderr does not contain {needle:?}"));
        }
    }
    empty_check("stdout", stdout, expect.stdout_empty, failures);
    empty_check("stderr", stderr, expect.stderr_empty, failures);
}

fn empty_check(name: &str, bytes: &[u8], want: Option<bool>, failures: &mut Vec<String>) {
    match want {
        Some(true) if !bytes.is_empty() => {
            failures.push(format!("{name} is not empty ({} bytes)", bytes.len()))
        }
        Some(false) if bytes.is_empty() => failures.push(format!("{name} is empty")),
        _ => {}
    }
}

/// One JSON fact against the parsed document; `None` when it holds.
pub fn json_fact_failure(doc: &serde_json::Value, fact: &JsonFact) -> Option<String> {
    let p = &fact.pointer;
    let found = doc.pointer(p);
    if let Some(want_absent) = fact.absent {
        return match (want_absent, found) {
            (true, Some(v)) => Some(format!("json {p} is {}, expected absent", short(v))),
            (false, None) => Some(format!("json {p} is absent, expected present")),
            _ => None,
        };
    }
    let Some(value) = found else {
        return Some(format!("json {p} is absent"));
    };
    if let Some(want) = &fact.equals {
        if value != want {
            return Some(format!(
                "json {p} is {}, expected {}",
                short(value),
                short(want)
            ));
        }
    }
    if let Some(want) = fact.length {
        let len = match value {
            serde_json::Value::Array(a) => a.len(),
            serde_json::Value::Object(o) => o.len(),
            other => {
                return Some(format!(
                    "json {p} is {}, expected an array or object of length {want}",
                    short(other)
                ))
            }
        };
        if len != want {
            return Some(format!("json {p} has length {len}, expected {want}"));
        }
    }
    None
}

/// A value's JSON text, cut short so one failure stays one readable line.
fn short(v: &serde_json::Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Whether `needle` occurs in `haystack` (byte search; empty needle never matches).
pub fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    // memmem (two-way + SIMD prefilter), not windows(): the verifier runs this for every
    // canary over every capture, and a memcmp per byte position dominated verification time.
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::test_support::{case, fact, failures_of, record};
    use crate::matrix::Case;
    use serde_json::json;

    #[test]
    fn exit_code_mismatch_fails() {
        let mut c = case();
        c.expect.exit_code = 1;
        let r = record(&c, b"", b"");
        assert_eq!(
            failures_of(&c, b"", b"", &r),
            vec!["exit code 0, expected 1"]
        );
    }

    fn json_case(facts: Vec<JsonFact>) -> Case {
        let mut c = case();
        c.expect.json = facts;
        c
    }

    const DOC: &[u8] = br#"{"schemaVersion":1,"sources":[{"scope":"local"},{"scope":"project"}],"client":"claude-code"}
"#;

    #[test]
    fn json_equals_passes_and_fails() {
        let ok = json_case(vec![JsonFact {
            equals: Some(json!("project")),
            ..fact("/sources/1/scope")
        }]);
        let r = record(&ok, DOC, b"");
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![JsonFact {
            equals: Some(json!(2)),
            ..fact("/schemaVersion")
        }]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec!["json /schemaVersion is 1, expected 2"]
        );
        let missing = json_case(vec![JsonFact {
            equals: Some(json!("x")),
            ..fact("/sources/7/scope")
        }]);
        assert_eq!(
            failures_of(&missing, DOC, b"", &r),
            vec!["json /sources/7/scope is absent"]
        );
    }

    #[test]
    fn json_equals_null_needs_a_null_value() {
        let doc = br#"{"reason":null,"state":"present"}"#;
        let r = record(&case(), doc, b"");
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/reason","equals":null}"#,
        )
        .unwrap()]);
        assert!(failures_of(&c, doc, b"", &r).is_empty());
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/state","equals":null}"#,
        )
        .unwrap()]);
        assert_eq!(
            failures_of(&c, doc, b"", &r),
            vec!["json /state is \"present\", expected null"]
        );
        let c: Case = json_case(vec![serde_json::from_str(
            r#"{"pointer":"/nope","equals":null}"#,
        )
        .unwrap()]);
        assert_eq!(failures_of(&c, doc, b"", &r), vec!["json /nope is absent"]);
    }

    #[test]
    fn json_length_passes_and_fails() {
        let r = record(&case(), DOC, b"");
        let ok = json_case(vec![JsonFact {
            length: Some(2),
            ..fact("/sources")
        }]);
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![JsonFact {
            length: Some(3),
            ..fact("/sources")
        }]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec!["json /sources has length 2, expected 3"]
        );
        let scalar = json_case(vec![JsonFact {
            length: Some(1),
            ..fact("/client")
        }]);
        assert_eq!(
            failures_of(&scalar, DOC, b"", &r),
            vec!["json /client is \"claude-code\", expected an array or object of length 1"]
        );
    }

    #[test]
    fn json_absent_passes_and_fails() {
        let r = record(&case(), DOC, b"");
        let ok = json_case(vec![
            JsonFact {
                absent: Some(true),
                ..fact("/sources/2")
            },
            JsonFact {
                absent: Some(false),
                ..fact("/sources/1")
            },
        ]);
        assert!(failures_of(&ok, DOC, b"", &r).is_empty());
        let bad = json_case(vec![
            JsonFact {
                absent: Some(true),
                ..fact("/client")
            },
            JsonFact {
                absent: Some(false),
                ..fact("/servers")
            },
        ]);
        assert_eq!(
            failures_of(&bad, DOC, b"", &r),
            vec![
                "json /client is \"claude-code\", expected absent",
                "json /servers is absent, expected present"
            ]
        );
    }

    #[test]
    fn stdout_must_be_exactly_one_json_document() {
        let c = json_case(vec![JsonFact {
            absent: Some(false),
            ..fact("")
        }]);
        for bad in [&b"{} {}"[..], b"not json", b""] {
            let r = record(&c, bad, b"");
            assert_eq!(
                failures_of(&c, bad, b"", &r),
                vec!["stdout is not one JSON document"],
                "{bad:?}"
            );
        }
        let r = record(&c, b" {}\n", b"");
        assert!(failures_of(&c, b" {}\n", b"", &r).is_empty());
    }

    #[test]
    fn text_facts_pass_and_fail() {
        let mut c = case();
        c.expect.stdout_contains = vec!["local".into()];
        c.expect.stdout_not_contains = vec!["secret".into()];
        c.expect.stderr_contains = vec!["error:".into()];
        let r = record(&c, b"local ok", b"error: x");
        assert!(failures_of(&c, b"local ok", b"error: x", &r).is_empty());
        let r = record(&c, b"a secret", b"warn");
        assert_eq!(
            failures_of(&c, b"a secret", b"warn", &r),
            vec![
                "stdout does not contain \"local\"",
                "stdout contains \"secret\"",
                "stderr does not contain \"error:\""
            ]
        );
    }

    #[test]
    fn emptiness_facts_pass_and_fail() {
        let mut c = case();
        c.expect.stdout_empty = Some(true);
        c.expect.stderr_empty = Some(false);
        let r = record(&c, b"", b"usage");
        assert!(failures_of(&c, b"", b"usage", &r).is_empty());
        let r = record(&c, b"xy", b"");
        assert_eq!(
            failures_of(&c, b"xy", b"", &r),
            vec!["stdout is not empty (2 bytes)", "stderr is empty"]
        );
    }
}
