//! Progress for people, on stderr: the runner's log lines (`case <id> pass|fail <micros>`) become
//! one numbered line per case; any other runner line is passed through prefixed `runner:`.
//! It only formats; it never decides a verdict (the receipt does, from the evidence files).

use std::io::Write;

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
}

impl<W: Write> Progress<W> {
    pub fn new(total: usize, out: W) -> Progress<W> {
        Progress {
            out,
            total,
            seen: 0,
            failed: 0,
            partial: Vec::new(),
        }
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
        // Progress is best effort: a closed stderr must not stop the run.
        let _ = match parse_case_line(line) {
            Some(case) => {
                self.seen += 1;
                if !case.pass {
                    self.failed += 1;
                }
                let width = self.total.to_string().len();
                writeln!(
                    self.out,
                    "  [{:>width$}/{}] {}  {}  ({:.1} ms)",
                    self.seen,
                    self.total,
                    if case.pass { "pass" } else { "FAIL" },
                    case.id,
                    case.micros as f64 / 1000.0,
                )
            }
            None => writeln!(self.out, "  runner: {}", sanitize(line)),
        };
    }
}

/// Control characters from inside the container never reach the terminal.
fn sanitize(line: &str) -> String {
    line.chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
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
                "  runner: hello?[31m",
                "  [ 3/12] pass  c  (0.0 ms)",
            ]
        );
    }
}
