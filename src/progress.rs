//! Progress for people, on stderr: the runner's log lines (`case <id> pass|fail <micros>`) become,
//! on a terminal, one progress bar per platform (indicatif; failures and other runner lines are
//! printed above it), elsewhere one numbered line per case; any other runner line is passed
//! through prefixed `runner:`; with `--quiet`, nothing per case. Colour only on a terminal, and
//! never when `NO_COLOR` is set. It only formats; it never decides a verdict (the receipt does,
//! from the evidence files).

use std::io::{IsTerminal, Write};

/// How per-case progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// One progress bar per platform (stderr is a terminal).
    Bars,
    /// One line per case (stderr is a file or a pipe).
    Lines,
    /// Nothing per case (`--quiet`).
    Quiet,
}

/// The display for a stderr that `is_terminal`, with `--quiet` or not.
pub fn display_for(is_terminal: bool, quiet: bool) -> Display {
    match (quiet, is_terminal) {
        (true, _) => Display::Quiet,
        (false, true) => Display::Bars,
        (false, false) => Display::Lines,
    }
}

/// Colour only on a terminal, and not when `NO_COLOR` is set to anything non-empty
/// (no-color.org).
pub fn colour_for(is_terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// [`display_for`] and [`colour_for`] of this process's stderr and environment.
pub fn for_stderr(quiet: bool) -> (Display, bool) {
    let terminal = std::io::stderr().is_terminal();
    (
        display_for(terminal, quiet),
        colour_for(terminal, std::env::var_os("NO_COLOR")),
    )
}

/// A platform's bar: `linux/amd64 [#####-----] 120/342 2 failed`.
pub fn bar(
    multi: &indicatif::MultiProgress,
    platform: &str,
    total: usize,
) -> indicatif::ProgressBar {
    let bar = multi.add(indicatif::ProgressBar::new(total as u64));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("#>-"),
    );
    bar.set_prefix(platform.to_string());
    bar
}

enum Mode {
    Lines,
    Bar(indicatif::ProgressBar),
    Quiet,
}

/// One `case <id> pass|fail <micros>` line from the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseLine {
    pub id: String,
    pub pass: bool,
    pub micros: u64,
}

pub fn parse_case_line(line: &str) -> Option<CaseLine> {
    let mut words = line.split_whitespace();
    if words.next()? != "case" {
        return None;
    }
    let id = words.next()?.to_string();
    let pass = match words.next()? {
        "pass" => true,
        "fail" => false,
        _ => return None,
    };
    let micros = words.next()?.parse().ok()?;
    if words.next().is_some() {
        return None;
    }
    Some(CaseLine { id, pass, micros })
}

/// Turns log chunks into lines on `out`.
pub struct Progress<W: Write> {
    out: W,
    total: usize,
    seen: usize,
    failed: usize,
    partial: Vec<u8>,
    mode: Mode,
    colour: bool,
}

impl<W: Write> Progress<W> {
    /// Plain lines on `out`, no colour.
    pub fn new(total: usize, out: W) -> Progress<W> {
        Progress {
            out,
            total,
            seen: 0,
            failed: 0,
            partial: Vec::new(),
            mode: Mode::Lines,
            colour: false,
        }
    }

    /// Shown as `display` (a bar from `bar` when `Bars`), in colour when `colour`.
    pub fn shown(
        total: usize,
        out: W,
        display: Display,
        bar: Option<indicatif::ProgressBar>,
        colour: bool,
    ) -> Progress<W> {
        let mut p = Progress::new(total, out);
        p.colour = colour;
        p.mode = match (display, bar) {
            (Display::Bars, Some(bar)) => Mode::Bar(bar),
            (Display::Quiet, _) => Mode::Quiet,
            _ => Mode::Lines,
        };
        p
    }

    /// Cases reported so far, and how many of them failed.
    pub fn counts(&self) -> (usize, usize) {
        (self.seen, self.failed)
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.partial.extend_from_slice(chunk);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.line(&String::from_utf8_lossy(&line[..line.len() - 1]));
        }
    }

    /// Flush a last line without a newline.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
            self.line(&line);
        }
        if let Mode::Bar(bar) = &self.mode {
            bar.finish();
        }
        let _ = self.out.flush();
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn line(&mut self, line: &str) {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            return;
        }
        let case = parse_case_line(line);
        if let Some(case) = &case {
            self.seen += 1;
            if !case.pass {
                self.failed += 1;
            }
        }
        let verdict = |pass: bool, colour: bool| match (pass, colour) {
            (true, false) => "pass".to_string(),
            (false, false) => "FAIL".to_string(),
            (true, true) => "\x1b[32mpass\x1b[0m".to_string(),
            (false, true) => "\x1b[1;31mFAIL\x1b[0m".to_string(),
        };
        match &self.mode {
            Mode::Quiet => {}
            Mode::Bar(bar) => match case {
                Some(case) => {
                    bar.inc(1);
                    if !case.pass {
                        bar.println(format!(
                            "  {}  {}",
                            verdict(false, self.colour),
                            sanitize(&case.id)
                        ));
                        bar.set_message(format!("{} failed", self.failed));
                    }
                }
                None => bar.println(format!("  runner: {}", sanitize(line))),
            },
            // Progress is best effort: a closed stderr must not stop the run.
            Mode::Lines => {
                let _ = match case {
                    Some(case) => {
                        let width = self.total.to_string().len();
                        writeln!(
                            self.out,
                            "  [{:>width$}/{}] {}  {}  ({:.1} ms)",
                            self.seen,
                            self.total,
                            verdict(case.pass, self.colour),
                            sanitize(&case.id),
                            case.micros as f64 / 1000.0,
                        )
                    }
                    None => writeln!(self.out, "  runner: {}", sanitize(line)),
                };
            }
        }
    }
}

/// What comes from inside the container (a case id, a runner line that quotes a name the
/// candidate made) reaches the terminal escaped: control, format and bidirectional characters
/// shown as `\u{…}` (`scopebox_terminal::escape`), the same as everywhere else.
fn sanitize(line: &str) -> String {
    scopebox_terminal::escape(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_lines_parse_strictly() {
        assert_eq!(
            parse_case_line("case cc-basic pass 1234"),
            Some(CaseLine {
                id: "cc-basic".into(),
                pass: true,
                micros: 1234
            })
        );
        assert!(!parse_case_line("case x fail 9").unwrap().pass);
        assert_eq!(parse_case_line("case x maybe 9"), None);
        assert_eq!(parse_case_line("case x pass nine"), None);
        assert_eq!(parse_case_line("case x pass 9 extra"), None);
        assert_eq!(parse_case_line("positive control ok"), None);
    }

    #[test]
    fn chunks_split_mid_line_still_give_one_line_per_case() {
        let mut p = Progress::new(12, Vec::new());
        p.feed(b"case a pa");
        p.feed(b"ss 1500\ncase b fail 20\nhello\x1b[31m\n");
        p.feed(b"case c pass 1");
        p.finish();
        assert_eq!(p.counts(), (3, 1));
        let text = String::from_utf8(p.into_inner()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            vec![
                "  [ 1/12] pass  a  (1.5 ms)",
                "  [ 2/12] FAIL  b  (0.0 ms)",
                "  runner: hello\\u{1b}[31m",
                "  [ 3/12] pass  c  (0.0 ms)",
            ]
        );
    }

    #[test]
    fn a_terminal_gets_bars_and_colour_unless_no_color_and_quiet_shows_nothing() {
        assert_eq!(display_for(true, false), Display::Bars);
        assert_eq!(display_for(false, false), Display::Lines);
        assert_eq!(display_for(true, true), Display::Quiet);
        assert!(colour_for(true, None));
        assert!(!colour_for(false, None));
        assert!(!colour_for(true, Some("1".into())));
        assert!(
            colour_for(true, Some("".into())),
            "an empty NO_COLOR is unset"
        );
    }

    #[test]
    fn a_bar_counts_every_case_and_quiet_writes_nothing() {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_length(3);
        let mut p = Progress::shown(3, Vec::new(), Display::Bars, Some(bar.clone()), true);
        p.feed(b"case a pass 1\ncase b fail 2\nnoise\ncase c pass 3\n");
        p.finish();
        assert_eq!(bar.position(), 3);
        assert_eq!(p.counts(), (3, 1));
        assert!(
            p.into_inner().is_empty(),
            "a bar writes no lines of its own"
        );
        let mut q = Progress::shown(2, Vec::new(), Display::Quiet, None, false);
        q.feed(b"case a pass 1\nhello\n");
        q.finish();
        assert_eq!(q.counts(), (1, 0));
        assert!(q.into_inner().is_empty());
    }

    #[test]
    fn colour_marks_verdicts_only_when_asked() {
        let mut c = Progress::shown(1, Vec::new(), Display::Lines, None, true);
        c.feed(b"case a fail 1\n");
        let text = String::from_utf8(c.into_inner()).unwrap();
        assert!(text.contains("\x1b[1;31mFAIL\x1b[0m"), "{text:?}");
        let mut plain = Progress::shown(1, Vec::new(), Display::Lines, None, false);
        plain.feed(b"case a fail 1\n");
        assert!(!String::from_utf8(plain.into_inner())
            .unwrap()
            .contains('\x1b'));
    }

    #[test]
    fn what_the_runner_quotes_from_the_candidate_reaches_the_terminal_escaped() {
        let mut p = Progress::shown(1, Vec::new(), Display::Lines, None, false);
        p.feed("  fixture /work/\u{1b}]0;pwned\u{7}red\u{202e}txt added\n".as_bytes());
        let text = String::from_utf8(p.into_inner()).unwrap();
        assert_eq!(
            text,
            "  runner:   fixture /work/\\u{1b}]0;pwned\\u{7}red\\u{202e}txt added\n"
        );
    }
}
