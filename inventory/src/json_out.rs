//! Writing the `--json` document: serde_json with a pretty formatter whose
//! output is byte-identical to `serde_json::ser::PrettyFormatter` (two-space
//! indent), but which writes each newline-plus-indent in one call instead of
//! one call per level. A 15,000-server document is ~7 MB; this keeps it
//! within the time budget. It also keeps the document safe on a terminal: a
//! character `scopebox_terminal::needs_escape` names inside a string (a DEL,
//! a C1 control, a bidirectional override, a zero-width or other format
//! character — JSON allows them raw, and a server name from a config file can
//! hold any) is written as a `\uXXXX` escape, so a reader gets the very same
//! string back and a terminal shows it instead of obeying it.
//!
//! It must never parse input (see `json.rs`) and never change the document's
//! values.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// `\n` followed by enough spaces for 64 levels.
const NEWLINE_INDENT: &[u8; 129] = &{
    let mut b = [b' '; 129];
    b[0] = b'\n';
    b
};

#[derive(Default)]
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        let mut spaces = self.level * 2;
        let first = spaces.min(NEWLINE_INDENT.len() - 1);
        w.write_all(&NEWLINE_INDENT[..1 + first])?;
        spaces -= first;
        while spaces > 0 {
            let n = spaces.min(NEWLINE_INDENT.len() - 1);
            w.write_all(&NEWLINE_INDENT[1..1 + n])?;
            spaces -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, c: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(c)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, c: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(c)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    /// A run of a string that serde_json needs no escape for: terminal-unsafe characters as
    /// `\uXXXX` (`scopebox_terminal::write_json_fragment`).
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        scopebox_terminal::write_json_fragment(w, fragment)
    }
}

/// `value` as pretty JSON (two-space indent) with a final newline.
/// `size_hint` pre-sizes the buffer so large documents are not regrown.
pub fn pretty<T: Serialize>(value: &T, size_hint: usize) -> String {
    let mut buf: Vec<u8> = Vec::with_capacity(size_hint);
    pretty_to(&mut buf, value).expect("writing to memory cannot fail");
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// [`pretty`] into a writer, in chunks of about 64 KiB: serde_json makes a
/// write per token, which is cheap into a `Vec` and costly through a
/// `dyn Write`, and the whole document (7 MB for 15,000 servers) is never
/// held in memory.
pub fn pretty_to<W: Write + ?Sized, T: Serialize>(w: &mut W, value: &T) -> io::Result<()> {
    let mut out = Chunked {
        buf: Vec::with_capacity(CHUNK + 4096),
        inner: w,
    };
    let mut ser = Serializer::with_formatter(&mut out, Pretty::default());
    value.serialize(&mut ser).map_err(io::Error::from)?;
    out.buf.push(b'\n');
    out.inner.write_all(&out.buf)
}

const CHUNK: usize = 1 << 16;

struct Chunked<'w, W: ?Sized> {
    buf: Vec<u8>,
    inner: &'w mut W,
}

impl<W: Write + ?Sized> Write for Chunked<'_, W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.write_all(b)?;
        Ok(b.len())
    }

    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_unsafe_characters_are_escaped_and_read_back_the_same() {
        let name = "a\u{202e}b\u{7f}c\u{200b}d\u{85}e é 😀 \u{e000}";
        let v = serde_json::json!({ name: [name] });
        let text = pretty(&v, 0);
        assert_eq!(
            text.matches(r"a\u202eb\u007fc\u200bd\u0085e é 😀 \ue000")
                .count(),
            2,
            "{text}"
        );
        assert!(scopebox_terminal::obeyed(&text).is_empty(), "{text:?}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn identical_to_serde_json_pretty() {
        let deep = (0..70).fold(serde_json::json!(1), |v, _| serde_json::json!([v, {}, []]));
        let v = serde_json::json!({
            "a": [1, {"b": [], "c": {}, "d": [null, true, "x\n\u{1b}"]}],
            "e": {}, "deep": deep,
        });
        let want = serde_json::to_string_pretty(&v).unwrap() + "\n";
        assert_eq!(pretty(&v, 0), want);
        // Streamed in chunks: same bytes.
        let big: Vec<_> = (0..20_000)
            .map(|i| serde_json::json!({"n": i, "s": "x"}))
            .collect();
        let mut streamed = Vec::new();
        pretty_to(&mut streamed, &big).unwrap();
        assert_eq!(
            streamed,
            (serde_json::to_string_pretty(&big).unwrap() + "\n").into_bytes()
        );
    }
}
