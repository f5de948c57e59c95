//! `junit.xml`: the bundle's JUnit report must restate the receipt — the test suites, test cases
//! and outcomes the receipt (or a native-only bundle's native section) implies, in its order, with
//! counts that add up, and nothing else — so a CI page that reads it shows what the verifier
//! checked, not what was written into it. The report's free text (failure messages, times) is
//! not compared: it only explains. Parsed with `quick-xml` (no DTD, no entity beyond XML's five:
//! anything else fails the parse).

use super::{Checks, Context};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use scopebox_schema::receipt::JUNIT_FILE;

const TITLE: &str =
    "junit.xml restates the receipt: its suites, test cases and their outcomes, and nothing else";

/// A test case's outcome as the report states it (`Either`: what the report may state, where
/// the receipt alone does not decide it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    Failure,
    Skipped,
    Error,
    Either,
}

impl Outcome {
    fn word(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Skipped => "skipped",
            Outcome::Error => "error",
            Outcome::Either => "success or failure",
        }
    }
}

/// A test case: name, class name and outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TestCase {
    name: String,
    classname: String,
    outcome: Outcome,
}

/// The counting attributes of a `testsuites` or `testsuite` element.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Counts {
    tests: Option<String>,
    failures: Option<String>,
    errors: Option<String>,
    skipped: Option<String>,
}

#[derive(Debug, Default)]
struct Suite {
    name: String,
    counts: Counts,
    cases: Vec<TestCase>,
}

#[derive(Debug, Default)]
struct Parsed {
    name: String,
    counts: Counts,
    suites: Vec<Suite>,
}

/// Where the parser is: which element it is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Suites,
    Suite,
    Case,
    Status,
    Done,
}

fn attributes(e: &BytesStart) -> Result<(Option<String>, Counts, Option<String>), String> {
    let (mut name, mut classname, mut counts) = (None, None, Counts::default());
    for attribute in e.attributes() {
        let attribute = attribute.map_err(|e| format!("an attribute does not parse: {e}"))?;
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| format!("an attribute value does not parse: {e}"))?
            .into_owned();
        match attribute.key.as_ref() {
            b"name" => name = Some(value),
            b"classname" => classname = Some(value),
            b"tests" => counts.tests = Some(value),
            b"failures" => counts.failures = Some(value),
            b"errors" => counts.errors = Some(value),
            b"skipped" => counts.skipped = Some(value),
            _ => {}
        }
    }
    Ok((name, counts, classname))
}

/// The report's structure; text and the attributes that only explain are skipped.
fn parse(bytes: &[u8]) -> Result<Parsed, String> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let mut parsed = Parsed::default();
    let mut level = Level::Top;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("it is not well-formed XML ({e})"))?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            let element = e.name().as_ref().to_vec();
            let (name, counts, classname) = attributes(e)?;
            let unexpected = || {
                format!(
                    "an element <{}> where none belongs",
                    String::from_utf8_lossy(&element)
                )
            };
            let next = match (level, element.as_slice()) {
                (Level::Top, b"testsuites") => {
                    parsed.name = name.unwrap_or_default();
                    parsed.counts = counts;
                    Level::Suites
                }
                (Level::Suites, b"testsuite") => {
                    parsed.suites.push(Suite {
                        name: name.unwrap_or_default(),
                        counts,
                        cases: Vec::new(),
                    });
                    Level::Suite
                }
                (Level::Suite, b"testcase") => {
                    let suite = parsed.suites.last_mut().ok_or_else(unexpected)?;
                    suite.cases.push(TestCase {
                        name: name.unwrap_or_default(),
                        classname: classname.unwrap_or_default(),
                        outcome: Outcome::Success,
                    });
                    Level::Case
                }
                (Level::Case, b"failure" | b"error" | b"skipped") => {
                    let case = parsed
                        .suites
                        .last_mut()
                        .and_then(|s| s.cases.last_mut())
                        .ok_or_else(unexpected)?;
                    if case.outcome != Outcome::Success {
                        return Err(format!(
                            "test case {:?} states more than one outcome",
                            case.name
                        ));
                    }
                    case.outcome = match element.as_slice() {
                        b"failure" => Outcome::Failure,
                        b"error" => Outcome::Error,
                        _ => Outcome::Skipped,
                    };
                    Level::Status
                }
                _ => return Err(unexpected()),
            };
            if !empty {
                level = next;
            } else if next == Level::Suites {
                level = Level::Done;
            }
            continue;
        }
        match event {
            Event::End(_) => {
                level = match level {
                    Level::Suites => Level::Done,
                    Level::Suite => Level::Suites,
                    Level::Case => Level::Suite,
                    Level::Status => Level::Case,
                    Level::Top | Level::Done => return Err("an end tag without its start".into()),
                }
            }
            Event::Eof if level == Level::Done => return Ok(parsed),
            Event::Eof => return Err("it ends before its <testsuites> element does".into()),
            Event::Text(_) | Event::CData(_) if level == Level::Status => {}
            Event::Text(_) | Event::CData(_) => {
                return Err("text outside a failure's description".into())
            }
            Event::Decl(_) if level == Level::Top => {}
            Event::DocType(_) => return Err("a document type declaration".into()),
            Event::PI(_) => return Err("a processing instruction".into()),
            Event::Comment(_) => {}
            _ => return Err("an element where none belongs".into()),
        }
    }
}

/// The suites the receipt implies: (name, test cases), in order; and the report's name.
fn expected(ctx: &Context, checks: &Checks) -> (String, Vec<(String, Vec<TestCase>)>) {
    let receipt = ctx.receipt;
    // A platform's whole-run case restates the orchestrator's conclusion (boundary, cleanup,
    // execution), which the receipt does not record: where every check of the platform passed,
    // it must be a success; where one failed, that check already says so, and the report may
    // state either (the orchestrator may have seen the same failure).
    let whole = |prefix: String, except: Option<&str>| {
        let ok = checks
            .list
            .iter()
            .filter(|c| c.id.starts_with(&prefix) && except.is_none_or(|e| !c.id.ends_with(e)))
            .all(|c| c.ok);
        if ok {
            Outcome::Success
        } else {
            Outcome::Either
        }
    };
    let case = |name: String, classname: String, ok: bool| TestCase {
        name,
        classname,
        outcome: if ok {
            Outcome::Success
        } else {
            Outcome::Failure
        },
    };
    let native_only = match &ctx.native {
        Some(n) if scopebox_schema::native_receipt::is_native_only(receipt, true) => {
            n.section.as_ref().ok()
        }
        _ => None,
    };
    if let Some(section) = native_only {
        let suites = section
            .platforms
            .iter()
            .map(|run| {
                let platform = run.platform.name();
                // The whole run fails on what fails it as a whole (boundary, cleanup), not on a
                // run's verdict, which is a test case of its own.
                let mut cases = vec![TestCase {
                    name: format!("native run {platform}"),
                    classname: platform.to_string(),
                    outcome: whole(
                        format!("{}/", super::native::scope(run)),
                        Some("/native.pass"),
                    ),
                }];
                cases.extend(run.judgement.runs.iter().map(|r| {
                    case(
                        format!("{} {}", r.scenario, r.mode.as_str()),
                        format!("native.{}", r.scenario),
                        r.passed,
                    )
                }));
                (format!("native {platform}"), cases)
            })
            .collect();
        return (format!("scopebox native {}", receipt.run_id), suites);
    }
    let mut suites: Vec<(String, Vec<TestCase>)> = receipt
        .platforms
        .iter()
        .map(|run| {
            let platform = run.platform.name();
            let mut cases = vec![
                TestCase {
                    name: format!("platform {platform}"),
                    classname: platform.to_string(),
                    outcome: whole(format!("{}/", run.platform.dir_name()), None),
                },
                case(
                    "positive control".into(),
                    format!("{platform}.controls"),
                    scopebox_schema::judge::positive_control_failures(&run.controls.positive)
                        .is_empty(),
                ),
                case(
                    "negative control".into(),
                    format!("{platform}.controls"),
                    scopebox_schema::judge::negative_control_failures(&run.controls.negative)
                        .is_empty(),
                ),
            ];
            cases.extend(run.cases.iter().map(|c| {
                case(
                    c.id.clone(),
                    format!("{platform}.cases"),
                    c.verdict == "pass",
                )
            }));
            (platform.to_string(), cases)
        })
        .collect();
    for n in &receipt.not_covered {
        let platform = n.platform.name();
        suites.push((
            platform.to_string(),
            vec![TestCase {
                name: format!("platform {platform}"),
                classname: platform.to_string(),
                outcome: Outcome::Skipped,
            }],
        ));
    }
    (format!("scopebox run {}", receipt.run_id), suites)
}

/// How `counts` disagrees with `cases` (each a line), as `what` names them.
fn count_failures(what: &str, counts: &Counts, cases: &[&TestCase]) -> Vec<String> {
    let of = |outcome: Outcome| cases.iter().filter(|c| c.outcome == outcome).count();
    let mut failures = Vec::new();
    for (attribute, stated, actual) in [
        ("tests", &counts.tests, cases.len()),
        ("failures", &counts.failures, of(Outcome::Failure)),
        ("errors", &counts.errors, of(Outcome::Error)),
        ("skipped", &counts.skipped, of(Outcome::Skipped)),
    ] {
        if let Some(stated) = stated {
            if stated.parse::<usize>().ok() != Some(actual) {
                failures.push(format!(
                    "{what} says {attribute}=\"{stated}\" where its test cases give {actual}"
                ));
            }
        }
    }
    failures
}

/// `junit.xml`, against what the receipt implies and the checks recorded so far.
pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let Some(bytes) = ctx.bundle.files.get(JUNIT_FILE) else {
        // Its absence is the layout's to report (files.layout).
        return;
    };
    let failures = match parse(bytes) {
        Err(e) => vec![format!(
            "{JUNIT_FILE} does not parse as a JUnit report: {e}"
        )],
        Ok(parsed) => compare(ctx, checks, &parsed),
    };
    checks.record("junit.report", TITLE, failures);
}

fn compare(ctx: &Context, checks: &Checks, parsed: &Parsed) -> Vec<String> {
    const SHOWN: usize = 20;
    let (name, suites) = expected(ctx, checks);
    let mut failures = Vec::new();
    if parsed.name != name {
        failures.push(format!(
            "the report is named {:?}, not {name:?}",
            parsed.name
        ));
    }
    let names: Vec<&str> = parsed.suites.iter().map(|s| s.name.as_str()).collect();
    let want: Vec<&str> = suites.iter().map(|(n, _)| n.as_str()).collect();
    if names != want {
        failures.push(format!("its test suites are {names:?}, not {want:?}"));
        return failures;
    }
    for (suite, (suite_name, cases)) in parsed.suites.iter().zip(&suites) {
        if suite.cases.len() != cases.len() {
            failures.push(format!(
                "suite {suite_name:?} has {} test cases, the receipt implies {}",
                suite.cases.len(),
                cases.len()
            ));
            continue;
        }
        for (got, want) in suite.cases.iter().zip(cases) {
            if failures.len() >= SHOWN {
                break;
            }
            if (&got.name, &got.classname) != (&want.name, &want.classname) {
                failures.push(format!(
                    "suite {suite_name:?} has test case {:?} ({:?}) where the receipt implies {:?} ({:?})",
                    got.name, got.classname, want.name, want.classname
                ));
            } else if got.outcome != want.outcome
                && !(want.outcome == Outcome::Either
                    && matches!(got.outcome, Outcome::Success | Outcome::Failure))
            {
                failures.push(format!(
                    "test case {:?} of suite {suite_name:?} is a {}, the receipt implies a {}",
                    got.name,
                    got.outcome.word(),
                    want.outcome.word()
                ));
            }
        }
        let all: Vec<&TestCase> = suite.cases.iter().collect();
        failures.extend(count_failures(
            &format!("suite {suite_name:?}"),
            &suite.counts,
            &all,
        ));
    }
    let all: Vec<&TestCase> = parsed.suites.iter().flat_map(|s| &s.cases).collect();
    failures.extend(count_failures("the report", &parsed.counts, &all));
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="scopebox run r1" tests="3" skipped="1" failures="1" errors="0">
    <testsuite name="linux/amd64" tests="2" skipped="0" errors="0" failures="1">
        <testcase name="platform linux/amd64" classname="linux/amd64" time="1.0"/>
        <testcase name="c&amp;1" classname="linux/amd64.cases">
            <failure message="verdict fail">see it</failure>
        </testcase>
    </testsuite>
    <testsuite name="linux/arm64" tests="1" skipped="1" errors="0" failures="0">
        <testcase name="platform linux/arm64" classname="linux/arm64">
            <skipped message="not covered: no emulator"/>
        </testcase>
    </testsuite>
</testsuites>
"#;

    #[test]
    fn the_structure_and_outcomes_are_read_and_the_free_text_skipped() {
        let parsed = parse(REPORT.as_bytes()).unwrap();
        assert_eq!(parsed.name, "scopebox run r1");
        assert_eq!(parsed.suites.len(), 2);
        let outcomes: Vec<(&str, Outcome)> = parsed
            .suites
            .iter()
            .flat_map(|s| &s.cases)
            .map(|c| (c.name.as_str(), c.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("platform linux/amd64", Outcome::Success),
                ("c&1", Outcome::Failure),
                ("platform linux/arm64", Outcome::Skipped),
            ]
        );
        let all: Vec<&TestCase> = parsed.suites.iter().flat_map(|s| &s.cases).collect();
        assert!(count_failures("the report", &parsed.counts, &all).is_empty());
        let mut wrong = parsed.counts.clone();
        wrong.failures = Some("0".into());
        assert_eq!(
            count_failures("the report", &wrong, &all),
            ["the report says failures=\"0\" where its test cases give 1"]
        );
    }

    #[test]
    fn anything_but_the_reports_own_shape_fails_the_parse() {
        for (bad, why) in [
            ("<testsuites>", "ends before"),
            (
                "<!DOCTYPE x [<!ENTITY a \"b\">]><testsuites/>",
                "document type",
            ),
            (
                "<testsuites><testsuite><testcase><failure/><skipped/></testcase></testsuite></testsuites>",
                "more than one outcome",
            ),
            ("<testsuites><testcase/></testsuites>", "<testcase>"),
            ("<testsuites><x/></testsuites>", "<x>"),
            ("<testsuites name=\"&bogus;\"/>", "attribute value"),
            ("<testsuites/><testsuites/>", "where none belongs"),
            ("<testsuites>text</testsuites>", "text outside"),
        ] {
            let e = parse(bad.as_bytes()).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(parse(b"<testsuites/>").unwrap().suites.is_empty());
    }
}
