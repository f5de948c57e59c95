//! Terminal-safe text: [`escape`] turns an untrusted string (a file name, a JSON key, a case id
//! from a bundle, a server name from a config file) into one that can be printed to a terminal
//! without moving the cursor, changing colours or the window title, reordering the line
//! (bidirectional overrides and isolates) or hiding characters (zero-width and other format
//! characters). Every such character is shown as `\u{hex}` and the backslash itself as `\\`, so
//! an escape can never be forged by the input and nothing is dropped silently.
//!
//! The escape set is decided by Unicode general category (from a maintained table, not a hand
//! list): `Cc` controls (C0, DEL, C1 — so ANSI sequences lose their ESC), `Cf` format characters,
//! `Zl`/`Zp` separators, `Co` private use, `Cn` unassigned, and a few characters that are
//! letters or marks by category yet render as nothing (Hangul fillers, the combining grapheme
//! joiner). It must never be applied to machine output: JSON keeps every value exactly.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_general_category::{get_general_category, GeneralCategory};

/// `s` with every character that could alter or hide what a terminal shows escaped.
/// Borrowed (no allocation) when nothing needs escaping.
pub fn escape(s: &str) -> Cow<'_, str> {
    // Printable ASCII other than the backslash needs nothing: the common case.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'\\') {
        return Cow::Borrowed(s);
    }
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if needs_escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`escape`] for bytes that may not be UTF-8: valid UTF-8 is escaped as text; every byte of an
/// invalid sequence is shown as `\x{hex}`.
pub fn escape_bytes(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => escape(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(&escape(chunk.valid()));
                for b in chunk.invalid() {
                    let _ = write!(out, "\\x{{{b:02x}}}");
                }
            }
            Cow::Owned(out)
        }
    }
}

/// [`escape`] applied to each line of `text`, the line breaks (`\n`) kept: for messages whose
/// own layout has several lines (an error and its hint, clap's usage text echoing an argument).
/// Only use it on text whose line breaks are the program's; a bundle string inside must have
/// been escaped with [`escape`] first, or its own line breaks would survive.
pub fn escape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(&escape(body));
                out.push('\n');
            }
            None => out.push_str(&escape(line)),
        }
    }
    out
}

/// Whether `c` is escaped by [`escape`].
pub fn needs_escape(c: char) -> bool {
    if c == '\\' {
        return true;
    }
    if matches!(
        c,
        '\u{034f}'                              // combining grapheme joiner (Mn, renders as nothing)
            | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' // Hangul fillers (Lo, blank)
    ) {
        return true;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate
    )
}

/// The characters of `text` a terminal would act on instead of showing: those [`escape`] would
/// change, other than the backslash (which it only doubles) and the line break. Empty for what
/// [`escape`] or [`escape_lines`] produced; what a test of printed output asserts.
pub fn obeyed(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\\' && c != '\n' && needs_escape(c))
        .collect()
}

/// Writes `fragment`, a run of a JSON string that needs no JSON escape (`serde_json` escapes
/// `"`, `\\` and C0 controls itself), with every character [`needs_escape`] names as a
/// `\uXXXX` escape (a surrogate pair above U+FFFF): the very same string for a JSON reader,
/// shown rather than obeyed on a terminal. For a `serde_json` formatter's
/// `write_string_fragment`; printable ASCII takes a fast path.
pub fn write_json_fragment<W: std::io::Write + ?Sized>(
    w: &mut W,
    fragment: &str,
) -> std::io::Result<()> {
    if fragment.is_ascii() && !fragment.as_bytes().contains(&0x7f) {
        return w.write_all(fragment.as_bytes());
    }
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        if needs_escape(c) {
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
    }
    w.write_all(&fragment.as_bytes()[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["", "abc", "a b/c.json", "ünïcödé — ok", "日本語"] {
            assert!(matches!(escape(s), Cow::Borrowed(b) if b == s), "{s}");
        }
    }

    #[test]
    fn controls_ansi_and_the_backslash_are_escaped() {
        assert_eq!(escape("a\x1b[8mb"), "a\\u{1b}[8mb");
        assert_eq!(
            escape("\x07\r\n\0\x7f\u{85}"),
            "\\u{7}\\u{d}\\u{a}\\u{0}\\u{7f}\\u{85}"
        );
        assert_eq!(
            escape("\\u{1b}"),
            "\\\\u{1b}",
            "an escape can never be forged"
        );
    }

    #[test]
    fn bidi_zero_width_and_other_format_characters_are_escaped() {
        assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape("\u{2066}\u{2069}"), "\\u{2066}\\u{2069}");
        assert_eq!(
            escape("x\u{200b}\u{feff}\u{ad}"),
            "x\\u{200b}\\u{feff}\\u{ad}"
        );
        // Format characters a hand list missed: musical symbol formatting, Egyptian
        // hieroglyph format controls, shorthand format controls.
        for c in [
            '\u{1d173}',
            '\u{1d17a}',
            '\u{13430}',
            '\u{13438}',
            '\u{1bca0}',
            '\u{1bca3}',
        ] {
            assert_eq!(escape(&c.to_string()), format!("\\u{{{:x}}}", c as u32));
        }
        assert_eq!(escape("\u{2028}\u{2029}"), "\\u{2028}\\u{2029}");
        assert_eq!(escape("\u{e0041}"), "\\u{e0041}", "tag characters");
        assert_eq!(escape("\u{3164}\u{34f}"), "\\u{3164}\\u{34f}");
    }

    #[test]
    fn private_use_and_unassigned_are_escaped() {
        assert_eq!(escape("\u{e000}"), "\\u{e000}");
        assert_eq!(escape("\u{10ffff}"), "\\u{10ffff}");
    }

    #[test]
    fn every_format_character_is_escaped() {
        // Exhaustive over the code space: whatever the table calls Cf is escaped.
        let format: Vec<char> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|c| get_general_category(*c) == GeneralCategory::Format)
            .collect();
        assert!(format.len() > 160, "{} format characters", format.len());
        assert!(format.iter().all(|c| needs_escape(*c)));
    }

    #[test]
    fn escape_lines_keeps_line_breaks_and_escapes_the_rest() {
        assert_eq!(
            escape_lines("a\x1b]0;t\x07\nhint: b\r\n"),
            "a\\u{1b}]0;t\\u{7}\nhint: b\\u{d}\n"
        );
        assert_eq!(escape_lines("no newline"), "no newline");
    }

    #[test]
    fn invalid_utf8_bytes_are_shown_as_hex() {
        assert_eq!(escape_bytes(b"ok"), "ok");
        assert_eq!(escape_bytes(b"a\xffb\x1b"), "a\\x{ff}b\\u{1b}");
    }

    #[test]
    fn obeyed_names_what_a_terminal_would_act_on_and_nothing_escape_leaves() {
        let text = "ok\n\u{1b}[2J é \\ \u{202e}\u{7f}\u{200b}";
        assert_eq!(obeyed(text), ['\u{1b}', '\u{202e}', '\u{7f}', '\u{200b}']);
        assert!(obeyed(&escape_lines(text)).is_empty());
        assert!(obeyed("plain, ünïcödé — 日本語 \\ \n").is_empty());
    }

    #[test]
    fn json_fragments_escape_what_needs_it_and_read_back_the_same() {
        let mut out = Vec::new();
        write_json_fragment(&mut out, "a\u{202e}b\u{7f}c é 😀 \u{e000}\u{e0001}").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r"a\u202eb\u007fc é 😀 \ue000\udb40\udc01");
        assert!(obeyed(&text).is_empty());
        let mut plain = Vec::new();
        write_json_fragment(&mut plain, "server-00001 npx").unwrap();
        assert_eq!(plain, b"server-00001 npx");
    }
}
