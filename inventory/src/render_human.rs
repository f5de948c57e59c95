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
    let mut terms = Terms::default();
    let _ = match client {
        Client::One(profile) => write_report(&mut o, doc, profile, &mut terms),
        Client::All => write_all(&mut o, doc, &mut terms),
    };
    write_legend(&mut o, terms);
    write_fail_on(&mut o, doc);
    o
}

fn write_header(o: &mut String, doc: &Document, title: &str) -> std::fmt::Result {
    writeln!(
        o,
        "mcpscope {} · {title} inventory (read-only: nothing was run, nothing written)",
        doc.tool.version,
    )?;
    writeln!(o)?;
    writeln!(o, "root       {}", sanitize(&doc.root.canonical))?;
    writeln!(o, "requested  {}", sanitize(&doc.root.requested))?;
    writeln!(o, "explicit   {}", sanitize(&doc.root.explicit))?;
    if doc.inventory_complete {
        return writeln!(
            o,
            "inventory  complete: every fixed source is present or missing"
        );
    }
    let bad: Vec<String> = doc
        .sources
        .iter()
        .filter(|s| !s.state.is_complete())
        .map(|s| match s.client {
            Some(c) => format!("{c} {} {}", s.scope, state_label(s.state, s.reason)),
            None => format!("{} {}", s.scope, state_label(s.state, s.reason)),
        })
        .collect();
    writeln!(o, "inventory  incomplete: {}", bad.join("; "))
}

fn write_report(
    o: &mut String,
    doc: &Document,
    profile: &dyn Profile,
    terms: &mut Terms,
) -> std::fmt::Result {
    write_header(o, doc, profile.title())?;
    writeln!(o)?;
    write_section(
        o,
        profile,
        &doc.sources,
        &doc.servers,
        &doc.instructions,
        terms,
    )?;
    writeln!(o)?;
    writeln!(o, "Coverage")?;
    write_list(o, "  not examined: ", &doc.coverage.not_examined)?;
    write_list(o, "  unknown: ", &doc.coverage.unknown)?;
    Ok(())
}

/// `--client all`: one section per profile, then one summary line each.
fn write_all(o: &mut String, doc: &Document, terms: &mut Terms) -> std::fmt::Result {
    let n = crate::profile::REGISTRY.len();
    write_header(o, doc, &format!("all {n} clients'"))?;
    for p in crate::profile::REGISTRY.iter().copied() {
        let id = p.id();
        let sources: Vec<Source> = doc
            .sources
            .iter()
            .filter(|s| s.client == Some(id))
            .cloned()
            .collect();
        let servers: Vec<&Server> = doc
            .servers
            .iter()
            .filter(|s| s.client == Some(id))
            .collect();
        let instructions: Vec<Instruction> = doc
            .instructions
            .iter()
            .filter(|i| i.client == Some(id))
            .cloned()
            .collect();
        writeln!(o)?;
        writeln!(o, "== {} (--client {id}) ==", p.title())?;
        if servers.is_empty()
            && sources.iter().all(|s| s.state == FileState::Missing)
            && instructions.iter().all(|i| i.state == FileState::Missing)
        {
            writeln!(
                o,
                "  nothing configured: no fixed file exists ({} checked)",
                sources.len()
            )?;
            continue;
        }
        let owned: Vec<Server> = servers.into_iter().cloned().collect();
        write_section(o, p, &sources, &owned, &instructions, terms)?;
    }
    writeln!(o)?;
    writeln!(
        o,
        "Coverage: each client's limits are in --json (clients[].coverage) and in --client <id>"
    )?;
    writeln!(o)?;
    writeln!(
        o,
        "Summary (one line per client: servers declared, sources broken)"
    )?;
    let width = doc
        .clients
        .iter()
        .flatten()
        .map(|c| c.client.len())
        .max()
        .unwrap_or(0);
    for c in doc.clients.iter().flatten() {
        writeln!(
            o,
            "  {:<width$}  {} · {}",
            c.client,
            plural(c.server_count, "server", "servers"),
            plural(c.broken_sources, "source broken", "sources broken"),
        )?;
    }
    Ok(())
}

/// Sources, servers and instructions of one profile.
fn write_section(
    o: &mut String,
    profile: &dyn Profile,
    sources: &[Source],
    servers: &[Server],
    instructions: &[Instruction],
    terms: &mut Terms,
) -> std::fmt::Result {
    writeln!(o, "Sources")?;
    let width = sources.iter().map(|s| s.scope.len()).max().unwrap_or(0);
    for s in sources {
        terms.note_source(s);
        write_source(o, profile, s, width)?;
    }

    writeln!(o)?;
    writeln!(
        o,
        "Servers ({}; declarations only: names, shapes and counts)",
        servers.len()
    )?;
    let mut listed = 0;
    for s in sources {
        let rows: Vec<&Server> = servers
            .iter()
            .filter(|v| v.scope == s.scope && v.path == s.path)
            .collect();
        // A missing file has nothing to say here (Sources lists it).
        if rows.is_empty() && s.state == FileState::Missing {
            continue;
        }
        listed += 1;
        match s.trusted {
            Some(crate::model::Tri::Known(false)) => writeln!(
                o,
                "  {}  (not trusted: the client does not load this file)",
                s.scope
            )?,
            Some(crate::model::Tri::Unknown) => writeln!(
                o,
                "  {}  (trust unknown: the client may not load this file)",
                s.scope
            )?,
            _ => writeln!(o, "  {}", s.scope)?,
        }
        if rows.is_empty() {
            let why = match s.state {
                FileState::Present => "(none)".to_owned(),
                _ if crate::bound::is_withheld(s) => withheld_note(),
                _ if stands_for_unread_levels(profile, s) => format!(
                    "(not read: past the bound of {} project levels: this level and every \
                     one above it up to the project's top are not read)",
                    crate::profile::MAX_PROJECT_LEVELS
                ),
                other => format!("(none observed: source {})", other.as_str()),
            };
            writeln!(o, "    {why}")?;
        }
        for v in rows {
            write_server(o, v, terms)?;
        }
    }
    if listed == 0 {
        writeln!(o, "  none: no fixed source exists")?;
    }

    writeln!(o)?;
    write_instructions(o, instructions)
}

/// Whether `s` is the source a walking client lists for the project levels
/// past its bound (`profile::project_levels`).
fn stands_for_unread_levels(profile: &dyn Profile, s: &Source) -> bool {
    s.reason == Some(crate::model::Reason::TooManyEntries)
        && profile.ancestor_project_scopes().contains(&s.scope)
}

/// Why a source withheld by the document's bound lists no row.
fn withheld_note() -> String {
    format!(
        "(not listed: too many servers for one document: its bound of {} server rows \
         and {} MiB of names was reached at or before this source)",
        grouped(crate::bound::MAX_SERVER_ROWS),
        crate::bound::MAX_NAME_BYTES >> 20
    )
}

/// `n` with a comma between groups of three digits.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
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

fn write_server(o: &mut String, v: &Server, terms: &mut Terms) -> std::fmt::Result {
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
    terms.note_server(v);
    let start = o.len();
    v.ext.0.report(v, o);
    terms.note_extension_lines(&o[start..]);
    Ok(())
}

fn write_instructions(o: &mut String, all: &[Instruction]) -> std::fmt::Result {
    if all.is_empty() {
        // The profile defines no instruction candidates.
        return writeln!(
            o,
            "Instructions (no candidates for this client; see coverage)"
        );
    }
    let shown: Vec<&Instruction> = all
        .iter()
        .filter(|i| i.state != FileState::Missing)
        .collect();
    if shown.is_empty() {
        return writeln!(
            o,
            "Instructions (none of {} found; metadata only, contents never read)",
            plural(all.len(), "candidate", "candidates")
        );
    }
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

/// What the report's words mean: each entry is a phrase as printed and its
/// explanation. The legend lists the entries the report used.
const LEGEND: [(&str, &str); 26] = [
    ("launch executable", "starts a program directly"),
    (
        "launch package-runner",
        "fetches and runs a package (npx, uvx, pnpm dlx, ...)",
    ),
    ("launch container", "starts a container (docker/podman run)"),
    (
        "launch interpreter-script",
        "an interpreter runs a script (node, python, sh, ...)",
    ),
    (
        "launch guard-wrapper",
        "started through a recognized guard (mcpm guard)",
    ),
    ("launch remote", "a URL: nothing is started on this machine"),
    (
        "launch unknown",
        "not classifiable from the declaration (invalid, or started by client code)",
    ),
    ("guard direct", "started with no recognized guard in front"),
    (
        "guard guarded",
        "a recognized guard wrapper starts it (not proof that it enforces anything)",
    ),
    (
        "guard unknown",
        "cannot tell (remote endpoint, script, or invalid shape)",
    ),
    (
        "shape invalid",
        "known fields have the wrong type: the client may refuse the entry",
    ),
    (
        "possibly shadowed by",
        "a higher-precedence scope declares the same name",
    ),
    (
        "possibly excluded by",
        "a managed file exists: the client may load only managed servers",
    ),
    (
        "same name in",
        "another scope declares the same name; the client's winner is not documented",
    ),
    (
        "shadowed by",
        "an earlier layer holds this name or identity: this row does not mount",
    ),
    (
        "hidden from this project's sessions",
        "a project row takes the name in this project",
    ),
    (
        "switched off",
        "the entry's own enabled/disabled field turns it off",
    ),
    (
        "not trusted",
        "the client's trust gate keeps it from loading this file",
    ),
    (
        "trust unknown",
        "whether the client loads this file depends on state not read here",
    ),
    (
        "malformed",
        "the file does not parse, or has the wrong shape: nothing in it is listed",
    ),
    (
        "symlink-skipped",
        "a symlink on the way to the file: never followed",
    ),
    (
        "not-file",
        "a directory, FIFO, socket or device where a file should be",
    ),
    (
        "too-large",
        "over the 1 MiB read limit, too many directory entries or project levels \
         (too-many-entries), a YAML or TOML tree too large to build (too-many-nodes), or too many \
         servers for one document (too-many-servers): nothing in it is listed",
    ),
    (
        "unreadable",
        "the file exists but cannot be read (permissions, HOME unset)",
    ),
    (
        "approval",
        "whether a project (.mcp.json) server is approved, rejected or pending, and by which file",
    ),
    (
        "launches",
        "what `claude mcp list`/`mcp get` and a headless `claude -p` session would do, as observed on Claude Code 2.1.327",
    ),
];

/// Row-extension phrases, looked for in the lines a row's extension printed
/// (never in names or paths): the [`LEGEND`] index and the text as printed.
const EXTENSION_TERMS: [(usize, &str); 8] = [
    (11, "      possibly shadowed by: "),
    (12, "      possibly excluded by: "),
    (13, "      same name in: "),
    (14, "      shadowed by: "),
    (15, "      hidden from this project's sessions"),
    (16, "      switched off"),
    (24, "      approval: "),
    (25, "      launches: "),
];

/// Which `LEGEND` entries the report used.
#[derive(Debug, Default, Clone, Copy)]
pub struct Terms(u32);

impl Terms {
    fn set(&mut self, phrase: &str) {
        if let Some(i) = LEGEND.iter().position(|(p, _)| *p == phrase) {
            self.0 |= 1 << i;
        }
    }

    fn has(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }

    fn note_server(&mut self, v: &Server) {
        self.0 |= 1 << launch_index(v);
        self.0 |= 1 << (7 + v.guard_form as usize);
        if !v.shape.valid {
            self.set("shape invalid");
        }
    }

    fn note_source(&mut self, s: &Source) {
        if !s.state.is_complete() {
            self.set(s.state.as_str());
        }
        // Trust matters only for a file that is there.
        match (s.state, s.trusted) {
            (FileState::Present, Some(crate::model::Tri::Known(false))) => self.set("not trusted"),
            (FileState::Present, Some(crate::model::Tri::Unknown)) => self.set("trust unknown"),
            _ => {}
        }
    }

    /// Look for the extension phrases not seen yet in `lines`.
    fn note_extension_lines(&mut self, lines: &str) {
        if lines.is_empty() {
            return;
        }
        for (i, printed) in EXTENSION_TERMS {
            if !self.has(i) && lines.contains(printed) {
                self.0 |= 1 << i;
            }
        }
    }
}

fn launch_index(v: &Server) -> usize {
    use crate::model::Launch::*;
    match v.launch {
        Executable => 0,
        PackageRunner => 1,
        Container => 2,
        InterpreterScript => 3,
        GuardWrapper => 4,
        Remote => 5,
        Unknown => 6,
    }
}

/// The legend for the terms the report used.
fn write_legend(o: &mut String, terms: Terms) {
    if terms.0 == 0 {
        return;
    }
    o.push_str("\nLegend\n");
    for (i, (phrase, text)) in LEGEND.iter().enumerate() {
        if terms.has(i) {
            o.push_str("  ");
            o.push_str(phrase);
            o.push_str(": ");
            o.push_str(text);
            o.push('\n');
        }
    }
}

/// `--fail-on`: what was asked and what held.
fn write_fail_on(o: &mut String, doc: &Document) {
    let Some(f) = &doc.fail_on else { return };
    let _ = writeln!(o);
    if f.met.is_empty() && f.undecided.is_empty() {
        let _ = writeln!(o, "fail-on    none met ({})", f.conditions.join(", "));
    } else if !f.met.is_empty() {
        let _ = writeln!(
            o,
            "fail-on    met: {} (of {})",
            f.met.join(", "),
            f.conditions.join(", ")
        );
    }
    if !f.undecided.is_empty() {
        let _ = writeln!(
            o,
            "fail-on    cannot rule out: {} (a source it depends on could not be inventoried)",
            f.undecided.join(", ")
        );
    }
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
    fn grouped_digits() {
        let got: Vec<String> = [0, 999, 1000, 50_000, 1_234_567].map(grouped).to_vec();
        assert_eq!(got, ["0", "999", "1,000", "50,000", "1,234,567"]);
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
