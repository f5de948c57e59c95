//! The one JSON parser for configuration input: strict RFC 8259 by default,
//! with exactly three opt-in relaxations for JSONC sources (comments, trailing
//! commas, a leading BOM) and nothing else (no single quotes, no hex numbers,
//! no unquoted keys).
//!
//! Guarantees: invalid UTF-8 is rejected before parsing; duplicate object keys
//! (after unescaping) are rejected at every depth; nesting is bounded by
//! [`Options::max_depth`], so recursion (and the recursive drop of the tree)
//! can never overflow the stack; numbers of any size are kept as their text,
//! never converted, so they cannot overflow or panic. Errors are a code
//! ([`JsonError`] → [`Reason`]); no position or message text is produced.
//! Strings without escapes borrow from the input (a 1 MiB file with 15,000
//! servers parses without an allocation per string).
//!
//! It must never be used to *write* JSON (serde_json does that) and never
//! evaluate or expand anything in a value.
//!
//! Why not `jsonc-parser` (0.34, tried as the project brief suggests):
//! even with every relaxation it offers switched off, it accepts raw control
//! characters in strings and VT, FF and Unicode whitespace between tokens,
//! parses an empty document as "no value", knows no BOM and no duplicate
//! keys, recurses with a fixed limit (512) instead of `max_depth`, calls a
//! lone `/` in strict mode an unexpected token, reads a whole string before
//! asking whether a string may stand there (a misplaced `"\ud800"` becomes a
//! surrogate error, not `syntax`), and returns only its first error with no
//! tree, so "the first defect in document order wins" (a duplicate key that
//! closes before a later error, depth against an earlier grammar error) has
//! to be reconstructed. A wrapper that did all of that (byte pre-scan, error
//! positions, a re-parse, a token walk for duplicate keys) matched this
//! parser on 15 million fuzzed inputs but was longer than the parser it
//! replaced, and it missed the speed gate: `bench/run.sh`, same machine and
//! session, old vs jsonc-parser, A report 1.16 vs 1.20 ms, A --json 1.15 vs
//! 1.22 ms, B report 20.7 vs 46.4 ms, B --json 29.9 vs 51.7 ms (gate: B
//! <= 30 ms), peak RSS in B 15.7 vs 21.2 MiB; parsing the 1 MiB file in
//! process takes about 5 ms here and 10.5 ms in `parse_to_ast` alone, which
//! builds a ranged AST that must then be copied into [`Value`].

use std::borrow::Cow;

use crate::model::Reason;

/// What the parser accepts beyond strict JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `//` line and `/* */` block comments.
    pub comments: bool,
    /// A comma before `]` or `}`.
    pub trailing_commas: bool,
    /// A leading UTF-8 byte-order mark.
    pub bom: bool,
    /// Maximum nesting of arrays/objects (the top-level value is depth 1).
    pub max_depth: usize,
}

impl Options {
    /// Strict JSON (Claude Code sources, Copilot user file).
    pub const STRICT: Options = Options {
        comments: false,
        trailing_commas: false,
        bom: false,
        max_depth: 128,
    };

    /// JSONC as VS Code reads it: comments, trailing commas and a BOM.
    pub const JSONC: Options = Options {
        comments: true,
        trailing_commas: true,
        bom: true,
        max_depth: 128,
    };

    /// Comments stripped, then strict JSON (`strip-json-comments` followed by
    /// `JSON.parse`, as Gemini CLI reads its settings): no trailing commas, no
    /// BOM.
    pub const COMMENTS: Options = Options {
        comments: true,
        trailing_commas: false,
        bom: false,
        max_depth: 128,
    };

    /// JSONC with trailing commas but no BOM (`jsonc-parser` with
    /// `allowTrailingComma`, as OpenCode reads its config; a BOM is text).
    pub const JSONC_NO_BOM: Options = Options {
        comments: true,
        trailing_commas: true,
        bom: false,
        max_depth: 128,
    };
}

/// A parsed value borrowing from the input. Objects keep members in
/// document order and never contain two equal keys. Numbers are kept as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    Object(Object<'a>),
}

/// Object members in document order (keys are unique, unescaped).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Object<'a>(pub Vec<(Cow<'a, str>, Value<'a>)>);

impl<'a> Object<'a> {
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Value<'a> {
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Why input was rejected. Maps 1:1 onto a [`Reason`] code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonError {
    InvalidUtf8,
    ByteOrderMark,
    Comment,
    TrailingComma,
    DuplicateKey,
    TooDeep,
    LoneSurrogate,
    Syntax,
}

impl JsonError {
    pub fn reason(self) -> Reason {
        match self {
            JsonError::InvalidUtf8 => Reason::InvalidUtf8,
            JsonError::ByteOrderMark => Reason::ByteOrderMark,
            JsonError::Comment => Reason::Comment,
            JsonError::TrailingComma => Reason::TrailingComma,
            JsonError::DuplicateKey => Reason::DuplicateKey,
            JsonError::TooDeep => Reason::TooDeep,
            JsonError::LoneSurrogate => Reason::LoneSurrogate,
            JsonError::Syntax => Reason::Syntax,
        }
    }
}

/// Parse one JSON document.
pub fn parse<'a>(bytes: &'a [u8], opts: &Options) -> Result<Value<'a>, JsonError> {
    parse_located(bytes, opts).map_err(|(e, _)| e)
}

/// [`parse`], with the byte offset where parsing stopped on an error (for a
/// line and column in the report: a position is not a secret).
pub fn parse_located<'a>(bytes: &'a [u8], opts: &Options) -> Result<Value<'a>, (JsonError, usize)> {
    let mut text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => return Err((JsonError::InvalidUtf8, e.valid_up_to())),
    };
    let mut skipped = 0;
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        if !opts.bom {
            return Err((JsonError::ByteOrderMark, 0));
        }
        text = rest;
        skipped = 3;
    }
    let mut p = Parser {
        text,
        s: text.as_bytes(),
        i: 0,
        opts: *opts,
        members: Vec::new(),
        items: Vec::new(),
    };
    let result = (|| {
        p.skip_ws()?;
        let v = p.value(1)?;
        p.skip_ws()?;
        if p.i != p.s.len() {
            return Err(JsonError::Syntax);
        }
        Ok(v)
    })();
    result.map_err(|e| (e, skipped + p.i.min(p.s.len())))
}

struct Parser<'a> {
    text: &'a str,
    /// `text` as bytes; every index the parser stops at is an ASCII byte,
    /// hence a char boundary of `text`.
    s: &'a [u8],
    i: usize,
    opts: Options,
    /// Members/items of the containers being parsed, innermost on top;
    /// each finished container moves its own range out into an exactly
    /// sized `Vec` (no growth chain, no slack: less memory to fault in).
    members: Vec<(Cow<'a, str>, Value<'a>)>,
    items: Vec<Value<'a>>,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') => {
                    if !self.opts.comments {
                        return Err(JsonError::Comment);
                    }
                    self.comment()?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Result<(), JsonError> {
        match self.s.get(self.i + 1) {
            Some(b'/') => {
                self.i += 2;
                while let Some(c) = self.peek() {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.i += 1;
                }
                Ok(())
            }
            Some(b'*') => {
                self.i += 2;
                loop {
                    match self.peek() {
                        None => return Err(JsonError::Syntax),
                        Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                            self.i += 2;
                            return Ok(());
                        }
                        Some(_) => self.i += 1,
                    }
                }
            }
            _ => Err(JsonError::Syntax),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(JsonError::Syntax),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value<'a>) -> Result<Value<'a>, JsonError> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(JsonError::Syntax)
        }
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > self.opts.max_depth {
            Err(JsonError::TooDeep)
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        self.enter(depth)?;
        self.i += 1; // [
        let base = self.items.len();
        self.skip_ws()?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(Vec::new()));
        }
        loop {
            let v = self.value(depth + 1)?;
            self.items.push(v);
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws()?;
                    if self.peek() == Some(b']') {
                        if !self.opts.trailing_commas {
                            return Err(JsonError::TrailingComma);
                        }
                        self.i += 1;
                        break;
                    }
                }
                Some(b']') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(JsonError::Syntax),
            }
        }
        Ok(Value::Array(self.items.drain(base..).collect()))
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, JsonError> {
        self.enter(depth)?;
        self.i += 1; // {
        let base = self.members.len();
        self.skip_ws()?;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(Object::default()));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(JsonError::Syntax);
            }
            let key = self.string()?;
            self.skip_ws()?;
            if self.peek() != Some(b':') {
                return Err(JsonError::Syntax);
            }
            self.i += 1;
            self.skip_ws()?;
            let v = self.value(depth + 1)?;
            self.members.push((key, v));
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws()?;
                    if self.peek() == Some(b'}') {
                        if !self.opts.trailing_commas {
                            return Err(JsonError::TrailingComma);
                        }
                        self.i += 1;
                        break;
                    }
                }
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(JsonError::Syntax),
            }
        }
        if has_duplicates(&self.members[base..]) {
            return Err(JsonError::DuplicateKey);
        }
        Ok(Value::Object(Object(self.members.drain(base..).collect())))
    }

    /// A string starting at `"`; escapes decoded. Borrowed unless it has
    /// escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.i += 1; // "
        let start = self.i;
        // Fast path: no escapes. One scan for the first special byte.
        let special = |c: &u8| *c == b'"' || *c == b'\\' || *c < 0x20;
        self.i += self.s[start..]
            .iter()
            .position(special)
            .ok_or(JsonError::Syntax)?;
        match self.s[self.i] {
            b'"' => {
                self.i += 1;
                return Ok(Cow::Borrowed(&self.text[start..self.i - 1]));
            }
            b'\\' => {}
            _ => return Err(JsonError::Syntax),
        }
        let mut out = String::from(&self.text[start..self.i]);
        let mut run = self.i;
        loop {
            match self.peek() {
                None => return Err(JsonError::Syntax),
                Some(b'"') => {
                    out.push_str(&self.text[run..self.i]);
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    out.push_str(&self.text[run..self.i]);
                    self.i += 1;
                    let esc = self.peek().ok_or(JsonError::Syntax)?;
                    self.i += 1;
                    out.push(match esc {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(JsonError::Syntax),
                    });
                    run = self.i;
                }
                Some(c) if c < 0x20 => return Err(JsonError::Syntax),
                Some(_) => self.i += 1,
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let h = self.s.get(self.i..self.i + 4).ok_or(JsonError::Syntax)?;
        let mut v = 0u32;
        for &b in h {
            let d = (b as char).to_digit(16).ok_or(JsonError::Syntax)?;
            v = v * 16 + d;
        }
        self.i += 4;
        Ok(v)
    }

    /// After `\u`: one code point, pairing surrogates.
    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let hi = self.hex4()?;
        match hi {
            0xD800..=0xDBFF => {
                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                    return Err(JsonError::LoneSurrogate);
                }
                self.i += 2;
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return Err(JsonError::LoneSurrogate);
                }
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                char::from_u32(c).ok_or(JsonError::Syntax)
            }
            0xDC00..=0xDFFF => Err(JsonError::LoneSurrogate),
            _ => char::from_u32(hi).ok_or(JsonError::Syntax),
        }
    }

    /// RFC 8259 number grammar; the text is kept, never converted.
    fn number(&mut self) -> Result<Value<'a>, JsonError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(JsonError::Syntax),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(JsonError::Syntax);
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(JsonError::Syntax);
            }
            self.digits();
        }
        Ok(Value::Number(&self.text[start..self.i]))
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }
}

/// Whether two members share a key. Linear for small objects, sorted for
/// large ones (a 15,000-server map must not be quadratic).
fn has_duplicates(members: &[(Cow<'_, str>, Value<'_>)]) -> bool {
    if members.len() <= 16 {
        for (i, (a, _)) in members.iter().enumerate() {
            if members[..i].iter().any(|(b, _)| a == b) {
                return true;
            }
        }
        return false;
    }
    let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_ref()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(s: &str) -> Result<Value<'_>, JsonError> {
        parse(s.as_bytes(), &Options::STRICT)
    }

    fn jsonc(s: &str) -> Result<Value<'_>, JsonError> {
        parse(s.as_bytes(), &Options::JSONC)
    }

    #[test]
    fn parses_ordinary_documents() {
        let v = strict(r#" {"a": [1, -2.5e+3, true, false, null, "x"], "b": {}} "#).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o.get("a").unwrap().as_array().unwrap().len(), 6);
        assert_eq!(strict("\"s\"").unwrap(), Value::String("s".into()));
        assert_eq!(strict("[]").unwrap(), Value::Array(vec![]));
    }

    #[test]
    fn decodes_escapes_and_surrogate_pairs() {
        let v = strict(r#""a\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v, Value::String("a\"\\/\u{8}\u{c}\n\r\tAé😀".into()));
    }

    #[test]
    fn rejects_lone_surrogates() {
        assert_eq!(strict(r#""\ud800""#), Err(JsonError::LoneSurrogate));
        assert_eq!(strict(r#""\udc00x""#), Err(JsonError::LoneSurrogate));
        assert_eq!(strict(r#""\ud800\u0041""#), Err(JsonError::LoneSurrogate));
    }

    #[test]
    fn duplicate_keys_are_rejected_at_every_depth_after_unescaping() {
        assert_eq!(strict(r#"{"a":1,"a":2}"#), Err(JsonError::DuplicateKey));
        assert_eq!(
            strict(r#"{"x":{"y":[{"a":1,"\u0061":2}]}}"#),
            Err(JsonError::DuplicateKey)
        );
        let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\":{i}")).collect();
        let mut dup = many.clone();
        dup.push("\"k37\":0".into());
        assert!(strict(&format!("{{{}}}", many.join(","))).is_ok());
        assert_eq!(
            strict(&format!("{{{}}}", dup.join(","))),
            Err(JsonError::DuplicateKey)
        );
    }

    #[test]
    fn invalid_utf8_is_rejected() {
        assert_eq!(
            parse(b"{\"a\":\"\xff\"}", &Options::STRICT),
            Err(JsonError::InvalidUtf8)
        );
        assert_eq!(
            parse(b"\"\xed\xa0\x80\"", &Options::JSONC),
            Err(JsonError::InvalidUtf8)
        );
    }

    #[test]
    fn strict_mode_rejects_bom_comments_and_trailing_commas() {
        assert_eq!(strict("\u{feff}{}"), Err(JsonError::ByteOrderMark));
        assert_eq!(strict("{} // c"), Err(JsonError::Comment));
        assert_eq!(strict("{/* c */}"), Err(JsonError::Comment));
        assert_eq!(strict(r#"{"a":1,}"#), Err(JsonError::TrailingComma));
        assert_eq!(strict("[1,]"), Err(JsonError::TrailingComma));
    }

    #[test]
    fn jsonc_mode_accepts_exactly_those_three() {
        let v = jsonc("\u{feff}// lead\n{\"a\": [1, 2,], /* b */ \"b\": 1,}\n// end").unwrap();
        assert_eq!(v.as_object().unwrap().len(), 2);
        // Everything else stays strict.
        assert_eq!(jsonc("{'a':1}"), Err(JsonError::Syntax));
        assert_eq!(jsonc("{a:1}"), Err(JsonError::Syntax));
        assert_eq!(jsonc("[0x10]"), Err(JsonError::Syntax));
        assert_eq!(jsonc("[1,,2]"), Err(JsonError::Syntax));
        assert_eq!(jsonc("[,]"), Err(JsonError::Syntax));
        assert_eq!(jsonc("{} /* open"), Err(JsonError::Syntax));
        assert_eq!(jsonc(r#"{"a":1,"a":1}"#), Err(JsonError::DuplicateKey));
        // A BOM is only accepted at the very start.
        assert_eq!(jsonc(" \u{feff}{}"), Err(JsonError::Syntax));
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            "",
            " ",
            "{",
            "}",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1:2}",
            "01",
            "1.",
            "-",
            ".5",
            "+1",
            "1e",
            "tru",
            "nul",
            "\"\n\"",
            "\"\\x\"",
            "\"\\u12\"",
            "{} {}",
            "NaN",
            "Infinity",
            "\"unterminated",
        ] {
            assert_eq!(strict(bad), Err(JsonError::Syntax), "{bad:?}");
        }
    }

    #[test]
    fn numbers_of_any_size_are_kept_as_text() {
        let big = format!(
            "[{}, -{}e999999999999, 1E-400]",
            "9".repeat(5000),
            "1".repeat(400)
        );
        let v = strict(&big).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a[0], Value::Number(&"9".repeat(5000)));
        assert_eq!(a[2], Value::Number("1E-400"));
    }

    #[test]
    fn nesting_is_bounded_without_stack_overflow() {
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(strict(&ok).is_ok());
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(strict(&deep), Err(JsonError::TooDeep));
        // A megabyte of openers fails fast instead of overflowing.
        let huge = "[".repeat(1 << 20);
        assert_eq!(strict(&huge), Err(JsonError::TooDeep));
        let objs = "{\"a\":".repeat(200_000);
        assert_eq!(strict(&objs), Err(JsonError::TooDeep));
    }
}
