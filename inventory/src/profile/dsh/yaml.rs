//! The DSH native YAML files (`<root>/.dsh/mcp.yml`, `~/.dsh/mcp.yml`): finding
//! the managed block between its marker lines, and turning the block's YAML
//! into the crate's [`Value`] tree under hard bounds.
//!
//! Owns: the marker rules ([`managed_block`]), the accepted YAML subset
//! ([`parse_block`]): YAML 1.2 core-schema scalars, the core tags `!!str`,
//! `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map` (any other tag —
//! `!!js`, `!foo`, `!!binary`, … — is `unsupported-tag`), nesting of at most
//! [`MAX_DEPTH`], at most [`ALIAS_NODE_LIMIT`] nodes copied for anchors and
//! aliases (a billion-laughs file is refused after a few thousand nodes,
//! never expanded; unreferenced anchors are never copied), no duplicate or
//! complex mapping keys, no `<<` merge keys,
//! one document. The tree is built from parser events with an explicit stack:
//! no recursion over input, so no input can overflow the stack.
//!
//! It must never evaluate a tag, expand a `${VAR}`, or let parser text
//! (messages, positions) escape: every failure is a [`Reason`] code.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

use crate::json::{Object, Value};
use crate::model::Reason;

/// The managed block's opening marker (a whole line).
pub const BEGIN: &str = "# >>> dsh-project-mcp-manager:mcp:begin";
/// The managed block's closing marker (a whole line).
pub const END: &str = "# <<< dsh-project-mcp-manager:mcp:end";

/// Maximum nesting of sequences/mappings (the top-level collection is 1).
pub const MAX_DEPTH: usize = 64;

/// Maximum number of nodes one block may copy: anchored nodes that an alias
/// refers to, plus every alias expansion.
pub const ALIAS_NODE_LIMIT: usize = 10_000;

/// YAML numbers only matter for their type here (never printed, never
/// compared); they are all represented by this text.
const NUMBER: &str = "0";

/// The text between the marker lines, or `None` when the file has no block.
///
/// A marker is a line that equals [`BEGIN`] or [`END`] after trimming spaces,
/// tabs and a trailing `\r`. Exactly zero blocks, or exactly one begin marker
/// followed later by one end marker, are accepted. A begin without an end is
/// `unterminated-block`; an end before any begin, a second begin or a second
/// block is `unbalanced-markers`. Everything outside the block is ignored.
pub fn managed_block(text: &str) -> Result<Option<&str>, Reason> {
    let mut begin: Option<usize> = None; // byte offset just after the begin line
    let mut block: Option<&str> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let marker = line.trim_matches([' ', '\t', '\r', '\n']);
        if marker == BEGIN {
            if begin.is_some() || block.is_some() {
                return Err(Reason::UnbalancedMarkers);
            }
            begin = Some(offset);
        } else if marker == END {
            match begin.take() {
                Some(b) if block.is_none() => block = Some(&text[b..start]),
                _ => return Err(Reason::UnbalancedMarkers),
            }
        }
    }
    if begin.is_some() {
        return Err(Reason::UnterminatedBlock);
    }
    Ok(block)
}

/// A collection being built.
enum Frame<'a> {
    Seq {
        anchor: usize,
        items: Vec<Value<'a>>,
        nodes: usize,
        height: usize,
    },
    Map {
        anchor: usize,
        members: Vec<(Cow<'a, str>, Value<'a>)>,
        keys: HashSet<Cow<'a, str>>,
        key: Option<Cow<'a, str>>,
        nodes: usize,
        height: usize,
    },
}

/// A finished anchored node: its value, node count and height.
struct Anchored<'a> {
    value: Value<'a>,
    nodes: usize,
    height: usize,
}

/// Parse the block's YAML (one document; an empty block is `null`).
pub fn parse_block(block: &str) -> Result<Value<'_>, Reason> {
    let mut b = Builder {
        stack: Vec::new(),
        anchors: HashMap::new(),
        referenced: referenced_anchors(block)?,
        copied_nodes: 0,
        root: None,
        documents: 0,
    };
    for event in Parser::new_from_str(block) {
        let (event, _span) = event.map_err(scan_error)?;
        b.event(event)?;
    }
    Ok(b.root.unwrap_or(Value::Null))
}

/// The scanner's own nesting bound (255 flow levels) can trip before ours
/// sees the events; its message is matched, never shown.
fn scan_error(e: saphyr_parser::ScanError) -> Reason {
    if e.info() == "recursion limit exceeded" {
        Reason::TooDeep
    } else {
        Reason::Syntax
    }
}

/// The anchors some alias refers to. Only those are kept (copied) while the
/// tree is built, so anchors nobody uses cost nothing, and nested anchors
/// cannot multiply copies. A block without `*` has no alias: no pre-pass.
fn referenced_anchors(block: &str) -> Result<HashSet<usize>, Reason> {
    let mut ids = HashSet::new();
    if !block.contains('*') {
        return Ok(ids);
    }
    for event in Parser::new_from_str(block) {
        if let (Event::Alias(id), _) = event.map_err(scan_error)? {
            ids.insert(id);
        }
    }
    Ok(ids)
}

struct Builder<'a> {
    stack: Vec<Frame<'a>>,
    anchors: HashMap<usize, Anchored<'a>>,
    /// Anchor ids that some alias refers to.
    referenced: HashSet<usize>,
    /// Nodes copied so far for referenced anchors and for aliases.
    copied_nodes: usize,
    root: Option<Value<'a>>,
    documents: usize,
}

impl<'a> Builder<'a> {
    fn event(&mut self, event: Event<'a>) -> Result<(), Reason> {
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Ok(()),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(Reason::Syntax);
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                if self.expecting_key() {
                    if style == ScalarStyle::Plain && tag.is_none() && text == "<<" {
                        return Err(Reason::UnsupportedMergeKey);
                    }
                    // Keys are compared as text (a `1` key and a `"1"` key collide).
                    scalar(text.clone(), style, tag.as_deref())?;
                    if anchor > 0 {
                        self.anchor(anchor, &Value::String(text.clone()), 1, 0)?;
                    }
                    return self.set_key(text);
                }
                let value = scalar(text, style, tag.as_deref())?;
                if anchor > 0 {
                    self.anchor(anchor, &value, 1, 0)?;
                }
                self.finish(value, 1, 0)
            }
            Event::SequenceStart(anchor, tag) => {
                self.open_collection(tag.as_deref(), "seq")?;
                self.stack.push(Frame::Seq {
                    anchor,
                    items: Vec::new(),
                    nodes: 1,
                    height: 1,
                });
                Ok(())
            }
            Event::MappingStart(anchor, tag) => {
                self.open_collection(tag.as_deref(), "map")?;
                self.stack.push(Frame::Map {
                    anchor,
                    members: Vec::new(),
                    keys: HashSet::new(),
                    key: None,
                    nodes: 1,
                    height: 1,
                });
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (anchor, value, nodes, height) = match self.stack.pop() {
                    Some(Frame::Seq {
                        anchor,
                        items,
                        nodes,
                        height,
                    }) => (anchor, Value::Array(items), nodes, height),
                    Some(Frame::Map {
                        anchor,
                        members,
                        nodes,
                        height,
                        ..
                    }) => (anchor, Value::Object(Object(members)), nodes, height),
                    None => return Err(Reason::Syntax),
                };
                if anchor > 0 {
                    self.anchor(anchor, &value, nodes, height)?;
                }
                self.finish(value, nodes, height)
            }
            Event::Alias(id) => {
                if self.expecting_key() {
                    return Err(Reason::ComplexKey);
                }
                let Some(a) = self.anchors.get(&id) else {
                    return Err(Reason::Syntax);
                };
                self.copied_nodes += a.nodes;
                if self.copied_nodes > ALIAS_NODE_LIMIT {
                    return Err(Reason::AliasLimit);
                }
                if self.stack.len() + a.height > MAX_DEPTH {
                    return Err(Reason::TooDeep);
                }
                let (value, nodes, height) = (a.value.clone(), a.nodes, a.height);
                self.finish(value, nodes, height)
            }
        }
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn open_collection(&mut self, tag: Option<&Tag>, kind: &str) -> Result<(), Reason> {
        if self.expecting_key() {
            return Err(Reason::ComplexKey);
        }
        if let Some(t) = tag {
            if core_tag(t) != Some(kind) {
                return Err(Reason::UnsupportedTag);
            }
        }
        if self.stack.len() + 1 > MAX_DEPTH {
            return Err(Reason::TooDeep);
        }
        Ok(())
    }

    /// Keep a copy of an anchored node, if an alias refers to it; the copy
    /// counts against [`ALIAS_NODE_LIMIT`] like the alias itself.
    fn anchor(
        &mut self,
        id: usize,
        value: &Value<'a>,
        nodes: usize,
        height: usize,
    ) -> Result<(), Reason> {
        if !self.referenced.contains(&id) {
            return Ok(());
        }
        self.copied_nodes += nodes;
        if self.copied_nodes > ALIAS_NODE_LIMIT {
            return Err(Reason::AliasLimit);
        }
        self.anchors.insert(
            id,
            Anchored {
                value: value.clone(),
                nodes,
                height,
            },
        );
        Ok(())
    }

    fn set_key(&mut self, text: Cow<'a, str>) -> Result<(), Reason> {
        if let Some(Frame::Map {
            members, keys, key, ..
        }) = self.stack.last_mut()
        {
            // Small mappings (every server entry) are scanned; large ones
            // get a set, so a 1 MiB mapping is never quadratic.
            const SCAN: usize = 16;
            let duplicate = if members.len() < SCAN {
                members.iter().any(|(k, _)| *k == text)
            } else {
                if keys.is_empty() {
                    keys.extend(members.iter().map(|(k, _)| k.clone()));
                }
                !keys.insert(text.clone())
            };
            if duplicate {
                return Err(Reason::DuplicateKey);
            }
            *key = Some(text);
        }
        Ok(())
    }

    /// A complete node: attach it to its parent (or make it the root).
    fn finish(&mut self, value: Value<'a>, nodes: usize, height: usize) -> Result<(), Reason> {
        match self.stack.last_mut() {
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Frame::Seq {
                items,
                nodes: n,
                height: h,
                ..
            }) => {
                items.push(value);
                *n += nodes;
                *h = (*h).max(height + 1);
                Ok(())
            }
            Some(Frame::Map {
                members,
                key,
                nodes: n,
                height: h,
                ..
            }) => {
                let k = key.take().ok_or(Reason::Syntax)?;
                members.push((k, value));
                *n += nodes;
                *h = (*h).max(height + 1);
                Ok(())
            }
        }
    }
}

/// The core-schema suffix of a tag (`str`, `int`, …), whether written
/// `!!str` or `!<tag:yaml.org,2002:str>`; `None` for any other tag.
fn core_tag(tag: &Tag) -> Option<&'static str> {
    const CORE: &str = "tag:yaml.org,2002:";
    let suffix = if tag.handle == CORE {
        tag.suffix.as_str()
    } else if tag.handle.is_empty() || tag.handle == "!" {
        tag.suffix.strip_prefix(CORE)?
    } else {
        return None;
    };
    ["str", "int", "float", "bool", "null", "seq", "map"]
        .into_iter()
        .find(|s| *s == suffix)
}

/// A scalar's value under the core schema; a tag may only confirm it.
fn scalar<'a>(
    text: Cow<'a, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value<'a>, Reason> {
    let Some(tag) = tag else {
        return Ok(if style == ScalarStyle::Plain {
            plain(text)
        } else {
            Value::String(text)
        });
    };
    match core_tag(tag) {
        Some("str") => Ok(Value::String(text)),
        Some(kind @ ("int" | "float" | "bool" | "null")) => {
            let v = plain(text);
            let matches = matches!(
                (&v, kind),
                (Value::Null, "null")
                    | (Value::Bool(_), "bool")
                    | (Value::Number(_), "int" | "float")
            );
            if matches {
                Ok(v)
            } else {
                Err(Reason::UnsupportedTag)
            }
        }
        _ => Err(Reason::UnsupportedTag),
    }
}

/// YAML 1.2 core schema resolution of a plain scalar.
fn plain(text: Cow<'_, str>) -> Value<'_> {
    match text.as_ref() {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => Value::Number(NUMBER),
        t if is_int(t) || is_float(t) => Value::Number(NUMBER),
        _ => Value::String(text),
    }
}

fn is_int(t: &str) -> bool {
    let digits = |s: &str, f: fn(&u8) -> bool| !s.is_empty() && s.as_bytes().iter().all(f);
    if let Some(h) = t.strip_prefix("0x") {
        return digits(h, u8::is_ascii_hexdigit);
    }
    if let Some(o) = t.strip_prefix("0o") {
        return digits(o, |b| (b'0'..=b'7').contains(b));
    }
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    digits(t, u8::is_ascii_digit)
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_float(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let s = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - s
    };
    let int = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 && int == 0 {
            return false;
        }
    } else if int == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(s: &str) -> Result<Option<&str>, Reason> {
        managed_block(s)
    }

    fn yaml(s: &str) -> Result<Value<'_>, Reason> {
        parse_block(s)
    }

    #[test]
    fn the_block_is_the_text_between_whole_marker_lines() {
        let f = format!("outside: [\n{BEGIN}\n- insert: []\n{END}\nafter: {{\n");
        assert_eq!(block(&f), Ok(Some("- insert: []\n")));
        // Indented or CRLF markers still count; markers inside a line do not.
        let f = format!("  {BEGIN}\r\na: 1\r\n\t{END} \r\n");
        assert_eq!(block(&f), Ok(Some("a: 1\r\n")));
        let f = format!("x: '{BEGIN}'\n");
        assert_eq!(block(&f), Ok(None));
        // No trailing newline after the end marker.
        assert_eq!(block(&format!("{BEGIN}\n{END}")), Ok(Some("")));
        assert_eq!(block("just: yaml\n"), Ok(None));
        assert_eq!(block(""), Ok(None));
    }

    #[test]
    fn marker_mistakes_are_refused() {
        let cases = [
            (format!("{BEGIN}\n- a\n"), Reason::UnterminatedBlock),
            (format!("{END}\n{BEGIN}\n"), Reason::UnbalancedMarkers),
            (
                format!("{BEGIN}\n{BEGIN}\n{END}\n"),
                Reason::UnbalancedMarkers,
            ),
            (
                format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n"),
                Reason::UnbalancedMarkers,
            ),
            (
                format!("{BEGIN}\n{END}\n{END}\n"),
                Reason::UnbalancedMarkers,
            ),
        ];
        for (f, want) in cases {
            assert_eq!(block(&f), Err(want), "{f:?}");
        }
    }

    #[test]
    fn core_schema_scalars() {
        let v = yaml("[~, null, true, False, 12, -3, 0x1F, 0o17, 1.5, .5, 1e3, .inf, '12', \"true\", abc, 1.2.3, 0x, +]").unwrap();
        let kinds: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|v| match v {
                Value::Null => "null",
                Value::Bool(_) => "bool",
                Value::Number(_) => "num",
                Value::String(_) => "str",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "null", "null", "bool", "bool", "num", "num", "num", "num", "num", "num", "num",
                "num", "str", "str", "str", "str", "str", "str"
            ]
        );
        assert_eq!(yaml("").unwrap(), Value::Null);
        assert_eq!(yaml("# only a comment\n").unwrap(), Value::Null);
    }

    #[test]
    fn core_tags_are_accepted_and_others_refused() {
        let v = yaml("a: !!str 12\nb: !!int '7'\nc: !!seq [x]\nd: !<tag:yaml.org,2002:str> y\n")
            .unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("a").unwrap().as_str(), Some("12"));
        assert!(matches!(o.get("b"), Some(Value::Number(_))));
        assert!(o.get("c").unwrap().as_array().is_some());
        assert_eq!(o.get("d").unwrap().as_str(), Some("y"));
        for bad in [
            "env: { TOKEN: !!js process.env.X }",
            "a: !foo x",
            "a: !!binary aGk=",
            "a: !!int abc",
            "a: !!map [1]",
            "a: !!seq {}",
            "a: ! x",
            "%TAG !! tag:example.com,2000:\n---\na: !!str x",
            "!!js k: v",
        ] {
            assert_eq!(yaml(bad), Err(Reason::UnsupportedTag), "{bad}");
        }
    }

    #[test]
    fn keys_must_be_unique_scalars_and_merge_keys_are_refused() {
        assert_eq!(yaml("a: 1\nb: 2\na: 3\n"), Err(Reason::DuplicateKey));
        assert_eq!(yaml("1: x\n'1': y\n"), Err(Reason::DuplicateKey));
        assert_eq!(yaml("? [a]\n: 1\n"), Err(Reason::ComplexKey));
        assert_eq!(yaml("? {a: 1}\n: 1\n"), Err(Reason::ComplexKey));
        assert_eq!(yaml("x: &a k\n*a : 1\n"), Err(Reason::ComplexKey));
        assert_eq!(
            yaml("base: &b {command: x}\nrow:\n  <<: *b\n"),
            Err(Reason::UnsupportedMergeKey)
        );
        // A quoted "<<" is an ordinary key.
        assert!(yaml("'<<': 1\n").is_ok());
        // Many distinct keys stay linear.
        let big: String = (0..20_000).map(|i| format!("k{i}: {i}\n")).collect();
        assert_eq!(yaml(&big).unwrap().as_object().unwrap().len(), 20_000);
        // A duplicate far past the scanned prefix, and one inside it.
        assert_eq!(
            yaml(&format!("{big}k19999: x\n")),
            Err(Reason::DuplicateKey)
        );
        assert_eq!(yaml(&format!("{big}k3: x\n")), Err(Reason::DuplicateKey));
    }

    #[test]
    fn aliases_copy_within_the_limit() {
        let v = yaml("a: &x [1, 2, {b: c}]\nd: *x\n").unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("a"), o.get("d"));
        assert_eq!(yaml("d: *nope\n"), Err(Reason::Syntax));
    }

    #[test]
    fn nested_anchors_are_copied_only_when_referenced() {
        let items = vec!["x"; 50_000].join(", ");
        let nested = |n: usize| {
            let open: String = (0..n).map(|i| format!("&a{i} [")).collect();
            format!("big: {open}{items}{}\n", "]".repeat(n))
        };
        // 60 nested anchors over 50,000 items, none referenced: nothing copied.
        assert!(yaml(&nested(60)).is_ok());
        // Referenced: the first copy already exceeds the bound.
        assert_eq!(
            yaml(&format!("{}again: *a59\n", nested(60))),
            Err(Reason::AliasLimit)
        );
        // Small referenced anchors are fine.
        assert!(yaml("e: &e {A: b}\nx: [*e, *e, *e]\n").is_ok());
    }

    #[test]
    fn a_billion_laughs_is_refused_without_expanding() {
        let mut s = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            s.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        assert_eq!(yaml(&s), Err(Reason::AliasLimit));
    }

    #[test]
    fn nesting_is_bounded_for_blocks_flows_and_aliases() {
        let flow = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(yaml(&flow), Err(Reason::TooDeep));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(yaml(&ok).is_ok());
        let huge = "[".repeat(500_000);
        assert_eq!(yaml(&huge), Err(Reason::TooDeep));
        let block: String = (0..MAX_DEPTH + 1)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        assert_eq!(yaml(&block), Err(Reason::TooDeep));
        // An alias may not carry a deep node deeper than the limit.
        let deep = format!(
            "a: &d {}{}\nb: [*d]\n",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert_eq!(yaml(&deep), Err(Reason::TooDeep));
    }

    #[test]
    fn one_document_only_and_syntax_errors_are_codes() {
        assert_eq!(yaml("a: 1\n---\nb: 2\n"), Err(Reason::Syntax));
        assert_eq!(yaml("a: [1, 2\n"), Err(Reason::Syntax));
        assert_eq!(yaml("a: 'x\n"), Err(Reason::Syntax));
        assert!(yaml("---\na: 1\n...\n").is_ok());
    }
}
