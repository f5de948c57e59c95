//! The DSH native YAML files (`<root>/.dsh/mcp.yml`, `~/.dsh/mcp.yml`): finding
//! the managed block between its markers the way DSH does, and turning the
//! block's YAML into the crate's [`Value`] tree under hard bounds.
//!
//! Owns: the marker rules ([`managed_block`]: DSH's substring search, see
//! dsh-project-mcp-manager `src/mcp-file.ts`), the accepted YAML subset
//! ([`parse_block`]): YAML 1.2 core-schema scalars, the core tags `!!str`,
//! `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map` (any other tag —
//! `!!js`, `!foo`, `!!binary`, … — is `unsupported-tag`), nesting of at most
//! [`MAX_DEPTH`], the alias budget of the `yaml` package DSH parses with
//! ([`MAX_ALIAS_COUNT`]) and at most [`ALIAS_NODE_LIMIT`] nodes copied for
//! anchors and aliases (a billion-laughs file is refused after a few thousand
//! nodes, never expanded; unreferenced anchors are never copied), no
//! duplicate or complex mapping keys, no `<<` merge keys, one document. The
//! tree is built from parser events with an explicit stack: no recursion over
//! input, so no input can overflow the stack.
//!
//! Owns too the bound on the work one file may cost, whichever profile reads
//! it: a tree of at most [`MAX_NODES`] nodes, into which anchors and aliases
//! copy at most [`MAX_ALIAS_TEXT`] bytes of text. Past either the file is
//! `too-many-nodes` (a `too-large` file) and the parse stops on the spot:
//! saphyr spends about a quarter of a microsecond per node, so a 1 MiB file of
//! one-byte items (524,000 nodes) would cost 0.14 s, and Continue reads 65
//! YAML files.
//!
//! It must never evaluate a tag, expand a `${VAR}`, or let parser text
//! (messages) escape: every failure is a [`Reason`] code, with the offset
//! where parsing stopped (a position is not a secret). The same reader takes
//! whole YAML files for the Continue and goose profiles ([`parse_located`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

use crate::json::{Object, Value};
use crate::model::Reason;

/// The managed block's opening marker (found anywhere, as a substring).
pub const BEGIN: &str = "# >>> dsh-project-mcp-manager:mcp:begin";
/// The managed block's closing marker (found anywhere, as a substring).
pub const END: &str = "# <<< dsh-project-mcp-manager:mcp:end";

/// Maximum nesting of sequences/mappings (the top-level collection is 1).
pub const MAX_DEPTH: usize = 64;

/// Maximum number of nodes one block may copy: anchored nodes that an alias
/// refers to, plus every alias expansion.
pub const ALIAS_NODE_LIMIT: usize = 10_000;

/// Nodes one file's tree may hold: every scalar (a mapping key too), every
/// sequence and mapping, and every node an alias copies in. 1.4 times the
/// densest file the benchmarks read (`bench/dsh.sh` B: a 1 MiB managed block
/// of 4,025 full rows, 92,579 nodes), some fifty times a real configuration's
/// few thousand; a 1 MiB file of one-byte items is four times as many.
pub const MAX_NODES: usize = 1 << 17;

/// Bytes of text (strings and mapping keys) one file's anchors and aliases
/// may copy, in all: as much as the file itself may hold (the read limit), so
/// an alias never makes a tree much larger than its file. Without it 99
/// aliases of one long scalar copied 100 MB out of a 1 MiB file.
pub const MAX_ALIAS_TEXT: usize = crate::read::READ_LIMIT;

/// The `yaml` package's `maxAliasCount` default: DSH's `doc.toJS()` throws
/// (the whole file fails) once an anchor's resolutions times its alias count
/// exceed it. Reproduced exactly, so a block DSH refuses is never read here.
pub const MAX_ALIAS_COUNT: u64 = 100;

/// A number whose source text could not be recovered (never seen with
/// saphyr's spans; kept as a type-only fallback).
const NUMBER: &str = "0";

/// The managed block's text, or `None` when the file has no markers, located
/// exactly as DSH's `extractManagedRows` does.
///
/// Markers are found by substring search (`indexOf`), so a marker inside a
/// longer line (a comment, a quoted value) counts; only the first begin and
/// the first end matter. Neither: no block. A begin without any end is
/// `unterminated-block`, an end without a begin or before the first begin is
/// `unbalanced-markers`. The block runs from just after the first newline
/// following the begin marker (the rest of the begin line is skipped; none at
/// all is `unterminated-block`) up to the start of the end marker (text before
/// the end marker on its line is part of the block). When that newline comes
/// after the end marker the block is empty, as JavaScript's `slice` makes it.
/// A second begin or block after the first end is ignored, as DSH ignores it.
pub fn managed_block(text: &str) -> Result<Option<&str>, Reason> {
    match (text.find(BEGIN), text.find(END)) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(Reason::UnterminatedBlock),
        (None, Some(_)) => Err(Reason::UnbalancedMarkers),
        (Some(begin), Some(end)) if end < begin => Err(Reason::UnbalancedMarkers),
        (Some(begin), Some(end)) => {
            let Some(newline) = text[begin..].find('\n') else {
                return Err(Reason::UnterminatedBlock);
            };
            let start = begin + newline + 1;
            Ok(Some(if start <= end { &text[start..end] } else { "" }))
        }
    }
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

/// A finished anchored node: its value, node count, height and the bytes of
/// text a copy of it copies.
struct Anchored<'a> {
    value: Value<'a>,
    nodes: usize,
    height: usize,
    text: usize,
}

/// What `getAliasCount` (the `yaml` package) sees in a node: whether it holds
/// any scalar (a mapping key counts), and the anchors of the aliases in it.
#[derive(Default, Clone)]
struct Summary {
    scalar: bool,
    aliases: Vec<usize>,
}

/// A scalar node (or a mapping key).
const SCALAR: Summary = Summary {
    scalar: true,
    aliases: Vec::new(),
};

impl Summary {
    fn absorb(&mut self, other: Summary) {
        self.scalar |= other.scalar;
        self.aliases.extend(other.aliases);
    }
}

/// The `yaml` package's per-anchor bookkeeping during `toJS`: `count` starts
/// at 1 and grows with each alias resolved; `alias_count` is computed at the
/// first resolution.
struct AliasData {
    count: u64,
    alias_count: Option<u64>,
    summary: Summary,
}

/// Parse the block's YAML (one document; an empty block is `null`).
pub fn parse_block(block: &str) -> Result<Value<'_>, Reason> {
    parse_located(block).map_err(|(r, _)| r)
}

/// [`parse_block`] for any YAML document (the whole of a file, or a block),
/// with the byte offset in `text` where parsing stopped on an error: the
/// scanner's own mark, or the start of the event that broke a rule.
pub fn parse_located(text: &str) -> Result<Value<'_>, (Reason, usize)> {
    let byte_at = |chars: usize| {
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(i, _)| i)
    };
    let scan = |e: saphyr_parser::ScanError| {
        let at = byte_at(e.marker().index());
        (scan_error(e), at)
    };
    let referenced = referenced_anchors(text).map_err(scan)?;
    let mut b = Builder {
        block: text,
        cursor: (0, 0),
        stack: Vec::new(),
        track: !referenced.is_empty(),
        summaries: Vec::new(),
        alias_data: HashMap::new(),
        anchors: HashMap::new(),
        referenced,
        copied_nodes: 0,
        nodes: 0,
        copied_text: 0,
        root: None,
        documents: 0,
    };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(scan)?;
        let start = span.start.index();
        b.event(event, span)
            .map_err(|reason| (reason, byte_at(start)))?;
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
///
/// The pre-pass stops after [`MAX_NODES`] nodes: the tree counts every one of
/// them (an alias counts at least one), so the build stops there at the
/// latest, and what lies further is never needed.
fn referenced_anchors(block: &str) -> Result<HashSet<usize>, saphyr_parser::ScanError> {
    let mut ids = HashSet::new();
    if !block.contains('*') {
        return Ok(ids);
    }
    let mut nodes = 0usize;
    for event in Parser::new_from_str(block) {
        match event?.0 {
            Event::Alias(id) => {
                ids.insert(id);
            }
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..) => {}
            _ => continue,
        }
        nodes += 1;
        if nodes > MAX_NODES {
            break;
        }
    }
    Ok(ids)
}

/// The bytes of text (strings and mapping keys) in `value`: what a copy of
/// it copies. Walked with an explicit stack, never recursion.
fn text_bytes(value: &Value) -> usize {
    let mut total = 0usize;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(items) => pending.extend(items),
            Value::Object(o) => {
                for (k, v) in o.iter() {
                    total = total.saturating_add(k.len());
                    pending.push(v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    total
}

struct Builder<'a> {
    block: &'a str,
    /// (characters, bytes) read so far: saphyr spans count characters.
    cursor: (usize, usize),
    stack: Vec<Frame<'a>>,
    /// Whether aliases exist, so the `yaml` package's alias count is kept.
    track: bool,
    /// One [`Summary`] per open collection (only when `track`).
    summaries: Vec<Summary>,
    alias_data: HashMap<usize, AliasData>,
    anchors: HashMap<usize, Anchored<'a>>,
    /// Anchor ids that some alias refers to.
    referenced: HashSet<usize>,
    /// Nodes copied so far for referenced anchors and for aliases.
    copied_nodes: usize,
    /// Nodes of the tree so far (see [`MAX_NODES`]).
    nodes: usize,
    /// Bytes of text copied so far for referenced anchors and for aliases
    /// (see [`MAX_ALIAS_TEXT`]).
    copied_text: usize,
    root: Option<Value<'a>>,
    documents: usize,
}

impl<'a> Builder<'a> {
    fn event(&mut self, event: Event<'a>, span: Span) -> Result<(), Reason> {
        if matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        ) {
            self.grow(1)?;
        }
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
                        self.anchor_summary(anchor, &SCALAR);
                        self.anchor(anchor, &Value::String(text.clone()), 1, 0)?;
                    }
                    self.note(SCALAR);
                    return self.set_key(text);
                }
                let mut value = scalar(text.clone(), style, tag.as_deref())?;
                if matches!(value, Value::Number(_)) {
                    value = Value::Number(self.source_text(&text, span));
                }
                if anchor > 0 {
                    self.anchor_summary(anchor, &SCALAR);
                    self.anchor(anchor, &value, 1, 0)?;
                }
                self.note(SCALAR);
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
                if self.track {
                    self.summaries.push(Summary::default());
                }
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
                if self.track {
                    self.summaries.push(Summary::default());
                }
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
                let summary = if self.track {
                    self.summaries.pop().unwrap_or_default()
                } else {
                    Summary::default()
                };
                if anchor > 0 {
                    self.anchor_summary(anchor, &summary);
                    self.anchor(anchor, &value, nodes, height)?;
                }
                self.note(summary);
                self.finish(value, nodes, height)
            }
            Event::Alias(id) => {
                if self.expecting_key() {
                    return Err(Reason::ComplexKey);
                }
                self.resolve_alias(id)?;
                let Some(a) = self.anchors.get(&id) else {
                    return Err(Reason::Syntax);
                };
                let (nodes, height, text) = (a.nodes, a.height, a.text);
                self.copied_nodes += nodes;
                if self.copied_nodes > ALIAS_NODE_LIMIT {
                    return Err(Reason::AliasLimit);
                }
                if self.stack.len() + height > MAX_DEPTH {
                    return Err(Reason::TooDeep);
                }
                // Counted before the copy is made: a copy past a bound never is.
                self.grow(nodes)?;
                self.copy_text(text)?;
                let value = match self.anchors.get(&id) {
                    Some(a) => a.value.clone(),
                    None => return Err(Reason::Syntax),
                };
                self.note(Summary {
                    scalar: false,
                    aliases: vec![id],
                });
                self.finish(value, nodes, height)
            }
        }
    }

    /// Count `nodes` more nodes of the tree.
    fn grow(&mut self, nodes: usize) -> Result<(), Reason> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > MAX_NODES {
            return Err(Reason::TooManyNodes);
        }
        Ok(())
    }

    /// Count `bytes` more bytes of text copied for an anchor or an alias.
    fn copy_text(&mut self, bytes: usize) -> Result<(), Reason> {
        self.copied_text = self.copied_text.saturating_add(bytes);
        if self.copied_text > MAX_ALIAS_TEXT {
            return Err(Reason::TooManyNodes);
        }
        Ok(())
    }

    /// Record what a finished node holds in its parent's summary.
    fn note(&mut self, summary: Summary) {
        if let Some(parent) = self.summaries.last_mut() {
            parent.absorb(summary);
        }
    }

    /// Start the `yaml` package's bookkeeping for a referenced anchor.
    fn anchor_summary(&mut self, id: usize, summary: &Summary) {
        if self.referenced.contains(&id) {
            self.alias_data.insert(
                id,
                AliasData {
                    count: 1,
                    alias_count: None,
                    summary: summary.clone(),
                },
            );
        }
    }

    /// One alias resolution as the `yaml` package's `Alias.toJS` counts it:
    /// the anchor's count grows by one, its alias count is fixed at the first
    /// resolution (`getAliasCount`: 1 for a node holding a scalar, the
    /// largest `count × aliasCount` of the aliases inside it, 0 for an empty
    /// collection), and their product may not exceed [`MAX_ALIAS_COUNT`].
    fn resolve_alias(&mut self, id: usize) -> Result<(), Reason> {
        let computed = match self.alias_data.get(&id) {
            Some(d) if d.alias_count.is_none() => {
                let inner = d
                    .summary
                    .aliases
                    .iter()
                    .filter_map(|a| self.alias_data.get(a))
                    .map(|a| a.count.saturating_mul(a.alias_count.unwrap_or(0)))
                    .max()
                    .unwrap_or(0);
                Some(inner.max(u64::from(d.summary.scalar)))
            }
            _ => None,
        };
        if let Some(d) = self.alias_data.get_mut(&id) {
            d.count += 1;
            if computed.is_some() {
                d.alias_count = computed;
            }
            if d.count.saturating_mul(d.alias_count.unwrap_or(0)) > MAX_ALIAS_COUNT {
                return Err(Reason::AliasLimit);
            }
        }
        Ok(())
    }

    /// The source text of a number scalar (plain, or quoted with a tag), so
    /// `String(n)` can be computed later; spans count characters.
    fn source_text(&mut self, text: &str, span: Span) -> &'a str {
        let (Some(start), Some(end)) = (
            self.byte_at(span.start.index()),
            self.byte_at(span.end.index()),
        ) else {
            return NUMBER;
        };
        // The span may start at a tag and end after a closing quote.
        let raw = &self.block[start..end];
        let raw = raw.strip_suffix(['\'', '"']).unwrap_or(raw);
        match raw.strip_suffix(text) {
            Some(_) => &raw[raw.len() - text.len()..],
            None => NUMBER,
        }
    }

    /// The byte offset of a character index (forward scans from the last one).
    fn byte_at(&mut self, chars: usize) -> Option<usize> {
        if chars < self.cursor.0 {
            self.cursor = (0, 0);
        }
        let (mut c, mut b) = self.cursor;
        let mut it = self.block[b..].chars();
        while c < chars {
            b += it.next()?.len_utf8();
            c += 1;
        }
        self.cursor = (c, b);
        Some(b)
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
    /// counts against [`ALIAS_NODE_LIMIT`] and [`MAX_ALIAS_TEXT`] like the
    /// alias itself.
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
        let text = text_bytes(value);
        self.copy_text(text)?;
        self.anchors.insert(
            id,
            Anchored {
                value: value.clone(),
                nodes,
                height,
                text,
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
    fn the_block_is_the_text_after_the_begin_line_up_to_the_end_marker() {
        let f = format!("outside: [\n{BEGIN}\n- insert: []\n{END}\nafter: {{\n");
        assert_eq!(block(&f), Ok(Some("- insert: []\n")));
        // Indented or CRLF markers: the block ends where the end marker starts.
        let f = format!("  {BEGIN}\r\na: 1\r\n\t{END} \r\n");
        assert_eq!(block(&f), Ok(Some("a: 1\r\n\t")));
        // No trailing newline after the end marker.
        assert_eq!(block(&format!("{BEGIN}\n{END}")), Ok(Some("")));
        assert_eq!(block("just: yaml\n"), Ok(None));
        assert_eq!(block(""), Ok(None));
    }

    #[test]
    fn markers_inside_longer_lines_count_as_dsh_finds_them_by_substring() {
        // A begin marker in a quoted value opens the block; the rest of its
        // line is skipped.
        let f = format!("x: '{BEGIN}' trailing\n- a\n{END}\n");
        assert_eq!(block(&f), Ok(Some("- a\n")));
        // Text before the end marker on its line belongs to the block.
        let f = format!("# note {BEGIN}\n- a\n- b # {END} tail\n");
        assert_eq!(block(&f), Ok(Some("- a\n- b # ")));
        // Begin and end on one line: the block starts after the next newline,
        // past the end marker, so it is empty (JavaScript's slice).
        let f = format!("{BEGIN} {END}\n- a\n");
        assert_eq!(block(&f), Ok(Some("")));
        // Only the first begin and the first end count: a second block is
        // ignored, a second begin inside the block is block text.
        let f = format!("{BEGIN}\n- a\n{END}\n{BEGIN}\n- b\n{END}\n");
        assert_eq!(block(&f), Ok(Some("- a\n")));
        let f = format!("{BEGIN}\n{BEGIN}\n{END}\n");
        assert_eq!(block(&f), Ok(Some(&*format!("{BEGIN}\n"))));
        let f = format!("{BEGIN}\n{END}\n{END}\n");
        assert_eq!(block(&f), Ok(Some("")));
    }

    #[test]
    fn marker_mistakes_are_refused() {
        let cases = [
            (format!("{BEGIN}\n- a\n"), Reason::UnterminatedBlock),
            (format!("x: 1 {BEGIN}"), Reason::UnterminatedBlock),
            (format!("{BEGIN} {END}"), Reason::UnterminatedBlock),
            (format!("{END}\n"), Reason::UnbalancedMarkers),
            (format!("{END}\n{BEGIN}\n"), Reason::UnbalancedMarkers),
            (
                format!("{END}\n{BEGIN}\n{END}\n"),
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
    fn the_yaml_package_alias_budget_is_reproduced() {
        let refs = |anchor: &str, n: usize| vec![format!("*{anchor}"); n].join(", ");
        // A scalar anchor: 99 aliases bring its count to 100 (fine), 100 to 101.
        assert!(yaml(&format!("a: &s x\nb: [{}]\n", refs("s", 99))).is_ok());
        assert_eq!(
            yaml(&format!("a: &s x\nb: [{}]\n", refs("s", 100))),
            Err(Reason::AliasLimit)
        );
        // An empty collection has alias count 0: never over budget.
        assert!(yaml(&format!("a: &e []\nb: [{}]\n", refs("e", 150))).is_ok());
        // Nesting multiplies: 9 aliases of a scalar (count 10), then an anchor
        // holding them (alias count 10): its 10th alias makes 11 × 10 > 100.
        let inner = format!("a: &s x\nb: &l [{}]\n", refs("s", 9));
        assert!(yaml(&format!("{inner}c: [{}]\n", refs("l", 9))).is_ok());
        assert_eq!(
            yaml(&format!("{inner}c: [{}]\n", refs("l", 10))),
            Err(Reason::AliasLimit)
        );
    }

    #[test]
    fn number_scalars_keep_their_source_text() {
        let v = yaml("[8080, -0x1F, 1.50, !!int '7', 'x: 1', été, 9]\n").unwrap();
        let texts: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| match v {
                Value::Number(t) => Some(*t),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["8080", "1.50", "7", "9"]);
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

    /// A flow sequence of `n` one-byte items: `1 + n` nodes.
    fn ones(n: usize) -> String {
        format!("[{}]", vec!["1"; n].join(","))
    }

    #[test]
    fn a_tree_holds_at_most_max_nodes_and_the_parse_stops_there() {
        assert_eq!(yaml(&ones(MAX_NODES - 1)).err(), None);
        assert_eq!(yaml(&ones(MAX_NODES)).err(), Some(Reason::TooManyNodes));
        // Keys and collections count: `{k0: [], …}` is 1 + 2n nodes.
        let map: Vec<String> = (0..MAX_NODES / 2).map(|i| format!("k{i}: []")).collect();
        let map = format!("{{{}}}", map.join(", "));
        assert_eq!(yaml(&map).err(), Some(Reason::TooManyNodes));
        // What follows the bound is never read: not the syntax error, not the
        // pre-pass a `*` starts (which stops at the bound too).
        let past = format!("{}\n]]\n", ones(MAX_NODES));
        assert_eq!(yaml(&past).err(), Some(Reason::TooManyNodes));
        let starred = format!("# *\n{past}");
        assert_eq!(yaml(&starred).err(), Some(Reason::TooManyNodes));
        // An earlier error still wins.
        assert_eq!(
            yaml(&format!("[!foo x, {}]", vec!["1"; MAX_NODES].join(","))).err(),
            Some(Reason::UnsupportedTag)
        );
    }

    #[test]
    fn alias_copies_count_as_nodes() {
        // `a: &a [1,000 items]`, `b` with `k` aliases of it, `c` with `m`
        // items: 1 + (1 + 1,001) + (1 + 1 + 1,001 k) + (1 + 1 + m) nodes.
        let doc = |k: usize, m: usize| {
            format!(
                "a: &a {}\nb: [{}]\nc: {}\n",
                ones(1_000),
                ["*a"].repeat(k).join(", "),
                ones(m)
            )
        };
        let at = MAX_NODES - 1_007 - 5 * 1_001;
        assert_eq!(yaml(&doc(5, at)).err(), None);
        assert_eq!(yaml(&doc(5, at + 1)).err(), Some(Reason::TooManyNodes));
        // The same file without the aliases is far from the bound.
        assert_eq!(yaml(&doc(0, at + 1)).err(), None);
    }

    #[test]
    fn anchors_and_aliases_copy_in_at_most_max_alias_text() {
        let long = "x".repeat(100_000);
        let refs = |n: usize| ["*a"].repeat(n).join(", ");
        // The anchor's copy and nine aliases: 1,000,000 bytes; one more is past.
        let doc = |aliases: usize| format!("a: &a {long}\nb: [{}]\n", refs(aliases));
        assert!(10 * long.len() <= MAX_ALIAS_TEXT && 11 * long.len() > MAX_ALIAS_TEXT);
        assert_eq!(yaml(&doc(9)).err(), None);
        assert_eq!(yaml(&doc(10)).err(), Some(Reason::TooManyNodes));
        // Keys are text too.
        let keyed = format!("a: &a {{{long}: 1}}\nb: [{}]\n", refs(10));
        assert_eq!(yaml(&keyed).err(), Some(Reason::TooManyNodes));
        // An anchor nobody refers to copies nothing.
        let unreferenced = format!("a: &a {long}\nb: &b {long}\nc: *b\n");
        assert_eq!(yaml(&unreferenced).err(), None);
        // The `yaml` package's budget keeps its own code.
        assert_eq!(
            yaml(&format!("a: &a x\nb: [{}]\n", refs(100))).err(),
            Some(Reason::AliasLimit)
        );
    }

    #[test]
    fn one_document_only_and_syntax_errors_are_codes() {
        assert_eq!(yaml("a: 1\n---\nb: 2\n"), Err(Reason::Syntax));
        assert_eq!(yaml("a: [1, 2\n"), Err(Reason::Syntax));
        assert_eq!(yaml("a: 'x\n"), Err(Reason::Syntax));
        assert!(yaml("---\na: 1\n...\n").is_ok());
    }
}
