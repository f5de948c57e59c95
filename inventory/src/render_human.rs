//! The terminal report: a readable rendering of the same [`Document`] the
//! JSON output serializes, plus [`sanitize`], which every name, path and
//! container string passes through before it reaches a terminal.
//!
//! Sanitizing escapes (never drops silently) every character whose Unicode
//! general category could alter or hide what a terminal shows — controls (C0,
//! DEL, C1: ANSI escape sequences lose their ESC and print as text), every
//! format character (bidi overrides and isolates, zero-width characters, the
//! musical, hieroglyph and shorthand format controls), line/paragraph
//! separators, private-use and unassigned code points — and the backslash
//! itself, as `\u{hex}` / `\\` (the `scopebox-terminal` crate).
//! JSON output keeps every string exactly; only this module changes them.
//!
//! This module must never receive or print commands, arguments, URLs,
//! env/header names or values, or instruction contents: the model has none.

use std::fmt::Write;

use crate::model::{Document, FileState, Instruction, Server, Source};
use crate::profile::{Client, Profile};

/// Escape everything that could move the cursor, recolour, reorder or hide
/// text on a terminal: `scopebox_terminal::escape`, which decides by Unicode
/// general category (controls, format characters, separators, private-use and
/// unassigned code points) rather than by a hand-kept list.
pub use scopebox_terminal::escape as sanitize;

/// The full report, ending with a newline.
pub fn render(doc: &Document, client: Client) -> String {
    let mut o = String::new();
    let _ = write_report(&mut o, doc, client);
    o
}

fn write_report(o: &mut String, doc: &Document, client: Client) -> std::fmt::Result {
    let Client::One(profile) = client else {
        unreachable!("all-client reports are rendered by write_all")
    };
    writeln!(
        o,
        "mcpscope {} · {} inventory (read-only: nothing was run, nothing written)",
        doc.tool.version,
        profile.title()
    )?;
    writeln!(o)?;
    writeln!(o, "root       {}", sanitize(&doc.root.canonical))?;
    writeln!(o, "requested  {}", sanitize(&doc.root.requested))?;
    writeln!(o, "explicit   {}", sanitize(&doc.root.explicit))?;
    if doc.inventory_complete {
        writeln!(
            o,
            "inventory  complete: every fixed source is present or missing"
        )?;
    } else {
        let bad: Vec<String> = doc
            .sources
            .iter()
            .filter(|s| !s.state.is_complete())
            .map(|s| format!("{} {}", s.scope, state_label(s.state, s.reason)))
            .collect();
        writeln!(o, "inventory  incomplete: {}", bad.join("; "))?;
    }

    writeln!(o)?;
    writeln!(o, "Sources")?;
    let width = doc.sources.iter().map(|s| s.scope.len()).max().unwrap_or(0);
    for s in &doc.sources {
        write_source(o, profile, s, width)?;
    }

    writeln!(o)?;
    writeln!(
        o,
        "Servers ({}; declarations only: names, shapes and counts)",
        doc.servers.len()
    )?;
    for s in &doc.sources {
        writeln!(o, "  {}", s.scope)?;
        let rows: Vec<&Server> = doc.servers.iter().filter(|v| v.scope == s.scope).collect();
        if rows.is_empty() {
            let why = match s.state {
                FileState::Present => "(none)".to_owned(),
                FileState::Missing => "(none: source missing)".to_owned(),
                other => format!("(none observed: source {})", other.as_str()),
            };
            writeln!(o, "    {why}")?;
        }
        for v in rows {
            write_server(o, v)?;
        }
    }

    writeln!(o)?;
    write_instructions(o, &doc.instructions)?;

    writeln!(o)?;
    writeln!(o, "Coverage")?;
    write_list(o, "  not examined: ", &doc.coverage.not_examined)?;
    write_list(o, "  unknown: ", &doc.coverage.unknown)?;
    Ok(())
}

fn state_label(state: FileState, reason: Option<crate::model::Reason>) -> String {
    match reason {
        Some(r) => format!("{} ({})", state.as_str(), r.as_str()),
        None => state.as_str().to_owned(),
    }
}

/// `n` and the singular or plural noun, as a `Display` (no allocation: the
/// report has a few of these per server row).
pub struct Plural<'a>(usize, &'a str, &'a str);

impl std::fmt::Display for Plural<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let noun = if self.0 == 1 { self.1 } else { self.2 };
        write!(f, "{} {noun}", self.0)
    }
}

pub fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> Plural<'a> {
    Plural(n, one, many)
}

/// Append `sep`, `n` and the singular or plural noun, without `fmt`.
fn push_count(o: &mut String, sep: &str, n: usize, one: &str, many: &str) {
    o.push_str(sep);
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut rest = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    o.push_str(std::str::from_utf8(&digits[i..]).expect("ascii digits"));
    o.push(' ');
    o.push_str(if n == 1 { one } else { many });
}

fn write_source(
    o: &mut String,
    profile: &dyn Profile,
    s: &Source,
    width: usize,
) -> std::fmt::Result {
    let mut label = state_label(s.state, s.reason);
    if s.state == FileState::Present {
        label.push_str(&format!(
            ", {}",
            plural(s.server_count, "server", "servers")
        ));
    }
    writeln!(o, "  {:<width$}  {label}", s.scope)?;
    writeln!(
        o,
        "  {:<width$}  {} → {}",
        "",
        sanitize(&s.path),
        sanitize(&s.container)
    )?;
    profile.source_report(s, width, o);
    Ok(())
}

/// `      {label}: a, b` when `items` is not empty (the lines a row's profile
/// fields add; items are fixed scope ids, never file text).
pub fn list_line(o: &mut String, label: &str, items: &[&str]) {
    if items.is_empty() {
        return;
    }
    o.push_str("      ");
    o.push_str(label);
    o.push_str(": ");
    o.push_str(&items.join(", "));
    o.push('\n');
}

fn write_server(o: &mut String, v: &Server) -> std::fmt::Result {
    let name = if v.name.is_empty() {
        "(empty name)".into()
    } else {
        sanitize(&v.name)
    };
    // Plain pushes, not `write!`: this runs once per server row, and a
    // 15,000-server report must stay within the time budget.
    o.push_str("    ");
    o.push_str(&name);
    o.push_str("\n      ");
    let sh = &v.shape;
    for part in [
        sh.transport.as_str(),
        " · launch ",
        v.launch.as_str(),
        " · guard ",
    ] {
        o.push_str(part);
    }
    o.push_str(v.guard_form.as_str());
    push_count(o, " · ", sh.arg_count, "arg", "args");
    push_count(o, " · ", sh.env_count, "env var", "env vars");
    push_count(o, " · ", sh.header_count, "header", "headers");
    o.push('\n');
    if !sh.valid {
        writeln!(o, "      shape invalid: {}", sh.problems.join(", "))?;
    }
    v.ext.0.report(v, o);
    Ok(())
}

fn write_instructions(o: &mut String, all: &[Instruction]) -> std::fmt::Result {
    if all.is_empty() {
        // dsh: the profile defines no instruction candidates.
        return writeln!(
            o,
            "Instructions (no candidates for this client; see coverage)"
        );
    }
    let shown: Vec<&Instruction> = all
        .iter()
        .filter(|i| i.state != FileState::Missing)
        .collect();
    writeln!(
        o,
        "Instructions ({} of {} candidates found; metadata only, contents never read)",
        shown.len(),
        all.len()
    )?;
    let width = shown.iter().map(|i| i.scope.len()).max().unwrap_or(0);
    for i in &shown {
        let label = match (i.state, i.bytes) {
            (FileState::Present, Some(b)) => plural(b as usize, "byte", "bytes").to_string(),
            _ => state_label(i.state, i.reason),
        };
        writeln!(o, "  {:<width$}  {}  ({label})", i.scope, sanitize(&i.path))?;
    }
    let missing = all.len() - shown.len();
    if missing > 0 {
        writeln!(
            o,
            "  {} missing",
            plural(missing, "other candidate", "other candidates")
        )?;
    }
    writeln!(o, "  applicability: unknown for every candidate")
}

/// `prefix` then items joined by ", ", wrapped at 80 columns.
fn write_list(o: &mut String, prefix: &str, items: &[&str]) -> std::fmt::Result {
    let indent = " ".repeat(prefix.chars().count());
    let mut line = prefix.to_owned();
    let mut first = true;
    for (n, item) in items.iter().enumerate() {
        let piece = if n + 1 < items.len() {
            format!("{item},")
        } else {
            (*item).to_owned()
        };
        if !first && line.chars().count() + 1 + piece.len() > 80 {
            writeln!(o, "{line}")?;
            line = indent.clone();
            first = true;
        }
        if !first {
            line.push(' ');
        }
        line.push_str(&piece);
        first = false;
    }
    if items.is_empty() {
        line.push_str("(none)");
    }
    writeln!(o, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_escapes_by_category_not_by_a_hand_list() {
        // Format characters the former hand list let through (34 of 163), and
        // the ones it had: all escaped, the backslash too.
        assert_eq!(
            sanitize("a\u{1d173}b\u{13430}c\u{1bca0}d\u{202e}\u{1b}\\"),
            "a\\u{1d173}b\\u{13430}c\\u{1bca0}d\\u{202e}\\u{1b}\\\\"
        );
        assert!(matches!(
            sanitize("/home/ü/proj name"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn counts() {
        let mut o = String::new();
        push_count(&mut o, "", 0, "arg", "args");
        push_count(&mut o, ",", 1, "arg", "args");
        push_count(&mut o, ",", 1234567, "arg", "args");
        push_count(&mut o, ",", usize::MAX, "x", "xs");
        assert_eq!(o, format!("0 args,1 arg,1234567 args,{} xs", usize::MAX));
    }

    #[test]
    fn lists_wrap() {
        let mut o = String::new();
        let items = ["aaaaaaaaaaaaaaaaaaaa"; 6];
        write_list(&mut o, "  x: ", &items).unwrap();
        assert!(o.lines().all(|l| l.chars().count() <= 80), "{o}");
        assert_eq!(o.lines().count(), 2);
    }
}
