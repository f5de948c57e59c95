//! Canaries in every encoding a leak is likely to take: the judge's search for the matrix's
//! canary strings in a capture (stdout, stderr, a file the candidate wrote). A candidate that
//! executed a configured command, or read a secret, may hide what it got instead of printing it
//! raw; so every canary is looked for raw, reversed, as standard and URL-safe base64 at all three
//! alignments (padded or not), as hex, percent-encoded, as JSON `\u` escapes and as UTF-16LE/BE.
//!
//! All encoded forms of all canaries go into two Aho–Corasick automata, so a haystack is read
//! twice whatever the number of canaries: one for the forms whose case is content (raw,
//! reversed, base64, UTF-16), matched exactly, and one for those whose letters may come in
//! either case (hex `4e`/`4E`/mixed, percent, JSON escapes), stored lower case and searched in
//! an ASCII-lower-cased copy of the haystack — the same matches at the same places as folding
//! case in the automaton, whose compile (once per matrix per process, in the box too, where an
//! emulated platform pays for it many times over) costs up to three times as much.
//!
//! What it cannot see: a canary split by line breaks (MIME-wrapped base64), partially escaped,
//! compressed, encrypted, encoded twice, or paraphrased. Like the rest of the judge, it is a pure
//! function of its arguments.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The searches compiled last in this process, most recent first (at most `MEMO_SIZE`), shared
/// by its threads: the orchestrator judges each platform on a thread of its own and then
/// verifies the bundle on others, all with the same matrix.
static RECENT_SEARCHES: SearchMemo = SearchMemo(Mutex::new(Vec::new()));

/// How many compiled searches the process keeps: the matrix's canaries, and the matrix's plus
/// the adversarial controls' canary, for each of a few matrices at most.
const MEMO_SIZE: usize = 4;

/// The compiled search for `canaries`, reused while the same canaries are asked for again:
/// the judge is called once per case with the same matrix, and compiling the automaton (about
/// 0.05–0.1 s for the shipped matrix's 698 canaries) costs more than searching every capture
/// of a run. A small cache per process, compiled under its lock (a second thread asking for
/// the same canaries waits for the first one's instead of compiling its own); the result is
/// exactly `CanarySearch::new(canaries)`, so callers stay pure functions of their arguments.
pub fn search_for(canaries: &[String]) -> Arc<CanarySearch> {
    RECENT_SEARCHES.get(canaries)
}

/// Compiled searches, most recent first, at most `MEMO_SIZE`.
struct SearchMemo(Mutex<Vec<Arc<CanarySearch>>>);

impl SearchMemo {
    fn get(&self, canaries: &[String]) -> Arc<CanarySearch> {
        // A thread that panicked while holding the lock left at worst a shorter list.
        let mut recent = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let search = match recent.iter().position(|s| s.canaries == canaries) {
            Some(at) => recent.remove(at),
            None => Arc::new(CanarySearch::new(canaries)),
        };
        recent.insert(0, Arc::clone(&search));
        recent.truncate(MEMO_SIZE);
        search
    }
}

/// Several canary lists searched as one, each compiled once (`search_for`): the failures of
/// each list in turn, which are exactly what one search over the lists joined in this order
/// reports (hits come in canary order, then `Encoding::ALL` order).
pub struct CanarySearches(Vec<Arc<CanarySearch>>);

impl CanarySearches {
    pub fn of(lists: &[&[String]]) -> CanarySearches {
        CanarySearches(lists.iter().map(|l| search_for(l)).collect())
    }

    /// `CanarySearch::failures` over every list, in order.
    pub fn failures(&self, haystack: &[u8], place: &str) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|s| s.failures(haystack, place))
            .collect()
    }
}

/// How a canary was spelled where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encoding {
    /// The canary's own bytes.
    Raw,
    /// Its bytes back to front.
    Reversed,
    /// RFC 4648 §4 base64, at any of the three byte alignments, padded or not.
    Base64,
    /// RFC 4648 §5 URL-safe base64 (`-` and `_`), any alignment, padded or not.
    Base64Url,
    /// Two hex digits per byte, either case.
    Hex,
    /// `%XX` for every byte, either case.
    Percent,
    /// `\uXXXX` for every UTF-16 unit, as in a JSON string, either case.
    JsonEscape,
    /// UTF-16, little endian.
    Utf16Le,
    /// UTF-16, big endian.
    Utf16Be,
    /// Any of the above, found only once the haystack's `%HH`, `\xHH` and `\uHHHH` escapes
    /// were decoded: a canary escaped in part (`CANARY\u002dARG`), or base64 percent-encoded
    /// in a URL (`%2B`, `%3D`).
    Unescaped,
}

impl Encoding {
    /// Every encoding, in the order hits are reported.
    pub const ALL: [Encoding; 10] = [
        Encoding::Raw,
        Encoding::Reversed,
        Encoding::Base64,
        Encoding::Base64Url,
        Encoding::Hex,
        Encoding::Percent,
        Encoding::JsonEscape,
        Encoding::Utf16Le,
        Encoding::Utf16Be,
        Encoding::Unescaped,
    ];

    /// The stable name used in failure strings.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Raw => "raw",
            Encoding::Reversed => "reversed",
            Encoding::Base64 => "base64",
            Encoding::Base64Url => "base64url",
            Encoding::Hex => "hex",
            Encoding::Percent => "percent-encoded",
            Encoding::JsonEscape => "json-escaped",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
            Encoding::Unescaped => "escape-decoded",
        }
    }

    /// Whether the letters' case is part of the encoded form (it is not for hex digits).
    fn case_matters(self) -> bool {
        !matches!(
            self,
            Encoding::Hex | Encoding::Percent | Encoding::JsonEscape
        )
    }
}

/// One canary found in one haystack, in one encoding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CanaryHit<'a> {
    pub canary: &'a str,
    pub encoding: Encoding,
}

impl CanaryHit<'_> {
    /// The judge's failure string for this hit in `place` (`stdout`, `stderr`, `file /tmp/x`):
    /// `canary C in stdout` for a raw hit (the wording the judge always used), `canary C in
    /// stdout (base64)` for an encoded one.
    pub fn failure(&self, place: &str) -> String {
        match self.encoding {
            Encoding::Raw => format!("canary {} in {place}", self.canary),
            other => format!("canary {} in {place} ({})", self.canary, other.name()),
        }
    }
}

/// What one automaton pattern stands for: every (canary, encoding) that spells it.
#[derive(Debug)]
struct Pattern {
    bytes: Vec<u8>,
    exact: bool,
    owners: Vec<(usize, Encoding)>,
}

/// One compiled automaton and, per automaton pattern, its `Pattern` index.
#[derive(Debug)]
struct Automaton {
    search: AhoCorasick,
    patterns: Vec<usize>,
    /// Its patterns are lower case and it searches the lower-cased haystack.
    folded: bool,
}

/// The compiled search over every encoded form of a set of canaries. Build it once per matrix
/// and use it for every haystack.
#[derive(Debug)]
pub struct CanarySearch {
    canaries: Vec<String>,
    patterns: Vec<Pattern>,
    /// The exact forms' automaton, then the case-folded forms' (either may be absent).
    automata: Vec<Automaton>,
}

impl CanarySearch {
    /// Compiles the search for `canaries` (empty ones are ignored: they match nothing).
    pub fn new(canaries: &[String]) -> CanarySearch {
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut index: HashMap<(Vec<u8>, bool), usize> = HashMap::new();
        for (which, canary) in canaries.iter().enumerate() {
            for (encoding, form) in encoded_forms(canary.as_bytes()) {
                if form.is_empty() {
                    continue;
                }
                let exact = encoding.case_matters();
                // Folded patterns are stored lower case so equal spellings share one pattern.
                let bytes = if exact {
                    form
                } else {
                    form.to_ascii_lowercase()
                };
                let slot = *index.entry((bytes.clone(), exact)).or_insert_with(|| {
                    patterns.push(Pattern {
                        bytes,
                        exact,
                        owners: Vec::new(),
                    });
                    patterns.len() - 1
                });
                if !patterns[slot].owners.contains(&(which, encoding)) {
                    patterns[slot].owners.push((which, encoding));
                }
            }
        }
        let automata = [true, false]
            .into_iter()
            .filter_map(|exact| {
                let members: Vec<usize> = (0..patterns.len())
                    .filter(|&i| patterns[i].exact == exact)
                    .collect();
                (!members.is_empty()).then(|| Automaton {
                    // Not `ascii_case_insensitive`: a folding automaton compiles up to 3×
                    // slower, and searches slower, than lower-casing each haystack once.
                    search: AhoCorasickBuilder::new()
                        .match_kind(MatchKind::Standard)
                        // Not left to the builder: a DFA builds many times slower, and the
                        // contiguous NFA searches twice as fast as the noncontiguous one.
                        .kind(Some(AhoCorasickKind::ContiguousNFA))
                        .build(members.iter().map(|&i| &patterns[i].bytes))
                        .expect("a few thousand literal patterns always fit the automaton"),
                    patterns: members,
                    folded: !exact,
                })
            })
            .collect();
        CanarySearch {
            canaries: canaries.to_vec(),
            patterns,
            automata,
        }
    }

    /// Every canary found in `haystack`, each (canary, encoding) once, in canary order and then
    /// `Encoding::ALL` order. One pass over the haystack.
    ///
    /// A haystack holding escapes (`%`, `\x`, `\u`) is searched a second time with them
    /// decoded; a canary found only then is reported once, as `Encoding::Unescaped`.
    pub fn find<'a>(&'a self, haystack: &[u8]) -> Vec<CanaryHit<'a>> {
        if self.automata.is_empty() {
            return Vec::new();
        }
        let mut found = self.search(haystack);
        if let Some(decoded) = unescape(haystack) {
            let seen: BTreeSet<usize> = found.iter().map(|(which, _)| *which).collect();
            for (which, _) in self.search(&decoded) {
                if !seen.contains(&which) {
                    found.insert((which, Encoding::Unescaped));
                }
            }
        }
        found
            .into_iter()
            .map(|(which, encoding)| CanaryHit {
                canary: &self.canaries[which],
                encoding,
            })
            .collect()
    }

    /// Every (canary, encoding) the automata find in one pass each over `haystack`.
    fn search(&self, haystack: &[u8]) -> BTreeSet<(usize, Encoding)> {
        let mut found = BTreeSet::new();
        let mut lowered: Option<Vec<u8>> = None;
        for automaton in &self.automata {
            // Byte for byte, so every match is where it is in `haystack`.
            let haystack: &[u8] = if automaton.folded {
                lowered.get_or_insert_with(|| haystack.to_ascii_lowercase())
            } else {
                haystack
            };
            // Overlapping: one pattern's match must not hide another's at the same place.
            for m in automaton.search.find_overlapping_iter(haystack) {
                let pattern = &self.patterns[automaton.patterns[m.pattern().as_usize()]];
                found.extend(pattern.owners.iter().copied());
            }
        }
        found
    }

    /// The failure strings for every hit in `haystack`, named `place`.
    pub fn failures(&self, haystack: &[u8], place: &str) -> Vec<String> {
        self.find(haystack)
            .iter()
            .map(|hit| hit.failure(place))
            .collect()
    }

    /// How many distinct patterns the automaton holds (for benchmarks and tests).
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }
}

/// Every encoded form of one canary that `CanarySearch` looks for. Base64 yields one form per
/// alignment; forms may repeat (a canary without letters has one hex form in either case).
pub fn encoded_forms(canary: &[u8]) -> Vec<(Encoding, Vec<u8>)> {
    let mut forms = vec![
        (Encoding::Raw, canary.to_vec()),
        (Encoding::Reversed, canary.iter().rev().copied().collect()),
    ];
    for offset in 0..3 {
        let std = base64_middle(canary, offset);
        let url: Vec<u8> = std
            .iter()
            .map(|&c| match c {
                b'+' => b'-',
                b'/' => b'_',
                other => other,
            })
            .collect();
        // Without `+` or `/` both alphabets spell it alike: one form, reported as base64.
        if url != std {
            forms.push((Encoding::Base64Url, url));
        }
        forms.push((Encoding::Base64, std));
    }
    forms.push((Encoding::Hex, hex_lower(canary)));
    forms.push((
        Encoding::Percent,
        canary.iter().flat_map(|&b| percent(b)).collect(),
    ));
    let units: Vec<u16> = String::from_utf8_lossy(canary).encode_utf16().collect();
    forms.push((
        Encoding::JsonEscape,
        units
            .iter()
            .flat_map(|u| format!("\\u{u:04x}").into_bytes())
            .collect(),
    ));
    forms.push((
        Encoding::Utf16Le,
        units.iter().flat_map(|u| u.to_le_bytes()).collect(),
    ));
    forms.push((
        Encoding::Utf16Be,
        units.iter().flat_map(|u| u.to_be_bytes()).collect(),
    ));
    forms
}

/// `haystack` with every `%HH`, `\xHH` and `\uHHHH` escape decoded (`\u` below 0x80 to its
/// byte, others to UTF-8; a lone surrogate is left as written), or `None` when it holds no
/// escape at all. Anything else is copied as it is.
pub fn unescape(haystack: &[u8]) -> Option<Vec<u8>> {
    fn hex(digits: &[u8]) -> Option<u32> {
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(text, 16).ok()
    }
    memchr::memchr2(b'%', b'\\', haystack)?;
    let mut out = Vec::with_capacity(haystack.len());
    let mut escapes = 0usize;
    let mut i = 0;
    while i < haystack.len() {
        let rest = &haystack[i..];
        let decoded = match rest {
            [b'%', a, b, ..] => hex(&[*a, *b]).map(|v| (v, 3)),
            [b'\\', b'x', a, b, ..] => hex(&[*a, *b]).map(|v| (v, 4)),
            [b'\\', b'u', a, b, c, d, ..] => hex(&[*a, *b, *c, *d]).map(|v| (v, 6)),
            _ => None,
        };
        match decoded.and_then(|(v, len)| char::from_u32(v).map(|c| (v, c, len))) {
            Some((v, c, len)) => {
                if len < 6 || v < 0x80 {
                    out.push(v as u8);
                } else {
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                escapes += 1;
                i += len;
            }
            None => {
                out.push(rest[0]);
                i += 1;
            }
        }
    }
    (escapes > 0).then_some(out)
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The part of the standard base64 of `offset` filler bytes followed by `canary` that depends
/// on the canary alone: the characters whose six bits all fall inside the canary's bytes. It is
/// the same whatever the filler (whatever precedes the canary in the encoded text) and
/// whatever follows it, and holds no padding; so searching it finds the canary encoded at
/// that alignment, padded or not.
pub fn base64_middle(canary: &[u8], offset: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; offset];
    bytes.extend_from_slice(canary);
    let first_bit = 8 * offset;
    let end_bit = 8 * bytes.len();
    let first_char = first_bit.div_ceil(6);
    let end_char = end_bit / 6;
    (first_char..end_char.max(first_char))
        .map(|i| BASE64_ALPHABET[sextet(&bytes, 6 * i) as usize])
        .collect()
}

/// The six bits of `bytes` starting at bit `bit` (most significant first); bits past the end
/// are zero, as base64 pads them.
fn sextet(bytes: &[u8], bit: usize) -> u8 {
    let byte = |i: usize| u16::from(bytes.get(i).copied().unwrap_or(0));
    let pair = (byte(bit / 8) << 8) | byte(bit / 8 + 1);
    ((pair >> (10 - bit % 8)) & 0x3f) as u8
}

fn hex_lower(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .flat_map(|b| format!("{b:02x}").into_bytes())
        .collect()
}

fn percent(byte: u8) -> [u8; 3] {
    let hex = format!("{byte:02x}").into_bytes();
    [b'%', hex[0], hex[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "CANARY-ARG-PROJECT-1-c41d";

    fn search() -> CanarySearch {
        CanarySearch::new(&[
            CANARY.to_string(),
            "canary-url-project-0b9e.invalid".to_string(),
        ])
    }

    fn encodings_found(haystack: &[u8]) -> Vec<(String, Encoding)> {
        search()
            .find(haystack)
            .into_iter()
            .map(|h| (h.canary.to_string(), h.encoding))
            .collect()
    }

    fn only(encoding: Encoding) -> Vec<(String, Encoding)> {
        vec![(CANARY.to_string(), encoding)]
    }

    /// Standard base64 of `bytes`, padded, written independently of `base64_middle`.
    fn b64(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.len();
            let v = (u32::from(chunk[0]) << 16)
                | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                | u32::from(*chunk.get(2).unwrap_or(&0));
            for i in 0..4 {
                if i <= n {
                    out.push(BASE64_ALPHABET[((v >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn the_encoder_used_by_these_tests_is_rfc_4648() {
        assert_eq!(b64(b""), "");
        assert_eq!(b64(b"f"), "Zg==");
        assert_eq!(b64(b"fo"), "Zm8=");
        assert_eq!(b64(b"foobar"), "Zm9vYmFy");
        assert_eq!(
            crate::judge::decode_base64(&b64(b"\xff\xef\x00")).unwrap(),
            b"\xff\xef\x00"
        );
    }

    #[test]
    fn a_raw_canary_is_found_and_a_prefix_is_not() {
        assert_eq!(
            encodings_found(format!("x {CANARY} y").as_bytes()),
            only(Encoding::Raw)
        );
        assert!(encodings_found(&CANARY.as_bytes()[..CANARY.len() - 1]).is_empty());
        // Raw text is case-sensitive: the canary's letters are content.
        assert!(encodings_found(CANARY.to_lowercase().as_bytes()).is_empty());
    }

    #[test]
    fn a_reversed_canary_is_found() {
        let reversed: String = CANARY.chars().rev().collect();
        assert_eq!(
            encodings_found(reversed.as_bytes()),
            only(Encoding::Reversed)
        );
        assert!(encodings_found(&reversed.as_bytes()[1..]).is_empty());
    }

    #[test]
    fn base64_is_found_at_every_alignment_padded_or_not_inside_json() {
        for prefix in ["", "a", "ab", "abc", "{\"k\":"] {
            for suffix in ["", "z", "zz", "\"}"] {
                let plain = format!("{prefix}{CANARY}{suffix}");
                let padded = b64(plain.as_bytes());
                let unpadded = padded.trim_end_matches('=');
                for text in [padded.as_str(), unpadded] {
                    let doc = format!("{{\"extra\":\"{text}\"}}");
                    assert_eq!(
                        encodings_found(doc.as_bytes()),
                        only(Encoding::Base64),
                        "{prefix:?} {suffix:?} {doc}"
                    );
                }
            }
        }
    }

    #[test]
    fn url_safe_base64_is_told_apart_from_standard() {
        // Bytes chosen so the encoding carries `+` and `/`: the two alphabets differ.
        let canary = "CANARY\u{fb}\u{ff}>?-9d2c";
        let s = CanarySearch::new(&[canary.to_string()]);
        for offset in 0..3 {
            let mut plain = vec![b'.'; offset];
            plain.extend_from_slice(canary.as_bytes());
            let std = b64(&plain);
            assert!(std.contains('+') || std.contains('/'), "{std}");
            let url: String = std
                .chars()
                .map(|c| match c {
                    '+' => '-',
                    '/' => '_',
                    c => c,
                })
                .collect();
            let hit = |text: &str| -> Vec<Encoding> {
                s.find(text.as_bytes()).iter().map(|h| h.encoding).collect()
            };
            assert_eq!(hit(&std), [Encoding::Base64], "{std}");
            assert_eq!(
                hit(url.trim_end_matches('=')),
                [Encoding::Base64Url],
                "{url}"
            );
        }
    }

    #[test]
    fn base64_of_a_near_miss_is_not_found() {
        // One character changed in the middle, or the canary cut short: no alignment matches.
        let changed = CANARY.replace("PROJECT", "PROJEKT");
        let cut = &CANARY[..CANARY.len() - 3];
        for plain in [changed.as_str(), cut] {
            for prefix in ["", "a", "ab"] {
                let text = b64(format!("{prefix}{plain}").as_bytes());
                assert!(
                    encodings_found(text.as_bytes()).is_empty(),
                    "{plain} {text}"
                );
            }
        }
        // Base64 letters are case-sensitive.
        let text = b64(CANARY.as_bytes()).to_lowercase();
        assert!(encodings_found(text.as_bytes()).is_empty());
    }

    #[test]
    fn the_base64_middle_is_independent_of_the_filler() {
        for offset in 0..3 {
            let middle = base64_middle(CANARY.as_bytes(), offset);
            for filler in [0u8, 0xff, b'x'] {
                let mut plain = vec![filler; offset];
                plain.extend_from_slice(CANARY.as_bytes());
                plain.push(filler);
                let full = b64(&plain);
                assert!(
                    full.contains(std::str::from_utf8(&middle).unwrap()),
                    "{offset} {filler}"
                );
            }
        }
        // A 25-byte canary: 33, 32 and 33 stable characters at offsets 0, 1, 2.
        let lens: Vec<usize> = (0..3)
            .map(|o| base64_middle(CANARY.as_bytes(), o).len())
            .collect();
        assert_eq!(lens, [33, 32, 33]);
    }

    #[test]
    fn hex_is_found_in_either_case_and_a_near_miss_is_not() {
        let lower: String = CANARY.bytes().map(|b| format!("{b:02x}")).collect();
        let upper = lower.to_uppercase();
        let mixed: String = lower
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 3 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        for text in [&lower, &upper, &mixed] {
            assert_eq!(
                encodings_found(text.as_bytes()),
                only(Encoding::Hex),
                "{text}"
            );
        }
        // The last byte's hex replaced: not the canary.
        let near = format!("{}00", &lower[..lower.len() - 2]);
        assert!(encodings_found(near.as_bytes()).is_empty());
    }

    /// Every ASCII letter in the other case.
    fn swap_case(text: &str) -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect()
    }

    #[test]
    fn the_lowered_haystack_finds_exactly_what_a_case_folding_automaton_finds() {
        // The reference: the folded forms in an automaton that folds ASCII case itself.
        let search = search();
        let folded: Vec<usize> = (0..search.patterns.len())
            .filter(|&i| !search.patterns[i].exact)
            .collect();
        let folding = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(folded.iter().map(|&i| &search.patterns[i].bytes))
            .unwrap();
        let upper_hex: String = CANARY.bytes().map(|b| format!("{b:02X}")).collect();
        let mixed_hex: String = hex_lower(CANARY.as_bytes())
            .iter()
            .enumerate()
            .map(|(i, &b)| if i % 3 == 0 { b.to_ascii_uppercase() } else { b } as char)
            .collect();
        let percent_upper: String = "canary-url-project-0b9e.invalid"
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect();
        let json_upper: String = CANARY.bytes().map(|b| format!("\\U{b:04X}")).collect();
        let haystacks = [
            format!("x{upper_hex}y{mixed_hex}"),
            format!("{percent_upper}{upper_hex}"),
            json_upper.clone(),
            swap_case(&json_upper),
            format!("{}{}", &upper_hex[..10], &mixed_hex[10..]),
            format!("{}00", &upper_hex[..upper_hex.len() - 2]),
            "nothing to see: 4341-4e41 %43%41 \\u0043".to_string(),
        ];
        let mut hits = 0;
        for haystack in &haystacks {
            let want: BTreeSet<(usize, Encoding)> = folding
                .find_overlapping_iter(haystack.as_bytes())
                .flat_map(|m| {
                    search.patterns[folded[m.pattern().as_usize()]]
                        .owners
                        .clone()
                })
                .collect();
            let got: BTreeSet<(usize, Encoding)> = search
                .search(haystack.as_bytes())
                .into_iter()
                .filter(|(_, encoding)| !encoding.case_matters())
                .collect();
            assert_eq!(got, want, "{haystack}");
            hits += want.len();
        }
        assert!(
            hits >= 5,
            "the haystacks exercise the folded forms: {hits} hits"
        );
    }

    #[test]
    fn forms_whose_case_is_content_are_found_only_in_their_own_case() {
        // The canary with its letters' case swapped, and its base64 likewise: neither spells the
        // canary (the exact automaton does not fold), though both fold to one of its forms.
        let swapped = swap_case(CANARY);
        assert!(encodings_found(swapped.as_bytes()).is_empty(), "{swapped}");
        let base64 = String::from_utf8(base64_middle(CANARY.as_bytes(), 0)).unwrap();
        assert_eq!(encodings_found(base64.as_bytes()), only(Encoding::Base64));
        let flipped = swap_case(&base64);
        assert!(encodings_found(flipped.as_bytes()).is_empty(), "{flipped}");
        // One exact hit and one folded hit in the same capture: both are reported.
        let hex: String = CANARY.bytes().map(|b| format!("{b:02X}")).collect();
        let both = format!("{CANARY} {hex}");
        let found = encodings_found(both.as_bytes());
        assert_eq!(
            found,
            [
                (CANARY.to_string(), Encoding::Raw),
                (CANARY.to_string(), Encoding::Hex)
            ]
        );
    }

    #[test]
    fn percent_encoding_is_found_in_either_case() {
        let lower: String = CANARY.bytes().map(|b| format!("%{b:02x}")).collect();
        let upper: String = CANARY.bytes().map(|b| format!("%{b:02X}")).collect();
        for text in [&lower, &upper] {
            let url = format!("https://evil.invalid/?q={text}&x=1");
            assert_eq!(
                encodings_found(url.as_bytes()),
                only(Encoding::Percent),
                "{url}"
            );
        }
        // Hex without the percent signs is hex, not percent-encoding; one byte dropped is nothing.
        let near: String = upper.chars().skip(3).collect();
        assert!(encodings_found(near.as_bytes()).is_empty());
    }

    #[test]
    fn json_unicode_escapes_are_found_and_a_parsed_document_agrees() {
        let escaped: String = CANARY
            .chars()
            .map(|c| format!("\\u{:04X}", c as u32))
            .collect();
        let doc = format!("{{\"note\":\"{escaped}\"}}");
        // What a JSON reader makes of it is the canary itself.
        let parsed: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(parsed["note"], CANARY);
        assert_eq!(encodings_found(doc.as_bytes()), only(Encoding::JsonEscape));
        let near = escaped.replacen("\\u0043", "\\u0044", 1);
        assert!(encodings_found(near.as_bytes()).is_empty());
    }

    #[test]
    fn utf16_in_both_byte_orders_is_found() {
        let le: Vec<u8> = CANARY
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let be: Vec<u8> = CANARY
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        let mut with_bom = vec![0xff, 0xfe];
        with_bom.extend_from_slice(&le);
        assert_eq!(encodings_found(&with_bom), only(Encoding::Utf16Le));
        assert_eq!(encodings_found(&be), only(Encoding::Utf16Be));
        // One unit short is a near miss; so is the canary's case changed.
        assert!(encodings_found(&le[..le.len() - 2]).is_empty());
        let lower: Vec<u8> = CANARY
            .to_lowercase()
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert!(encodings_found(&lower).is_empty());
    }

    #[test]
    fn several_canaries_and_encodings_in_one_haystack_are_each_reported_once() {
        let other = "canary-url-project-0b9e.invalid";
        let text = format!(
            "{CANARY} {} {CANARY} {} {}",
            b64(CANARY.as_bytes()),
            b64(other.as_bytes()),
            other
                .bytes()
                .map(|b| format!("{b:02X}"))
                .collect::<String>()
        );
        assert_eq!(
            encodings_found(text.as_bytes()),
            [
                (CANARY.to_string(), Encoding::Raw),
                (CANARY.to_string(), Encoding::Base64),
                (other.to_string(), Encoding::Base64),
                (other.to_string(), Encoding::Hex),
            ]
        );
    }

    #[test]
    fn failure_strings_name_the_canary_the_place_and_the_encoding() {
        let s = search();
        let text = format!("{CANARY}|{}", b64(CANARY.as_bytes()));
        assert_eq!(
            s.failures(text.as_bytes(), "file /tmp/leak"),
            [
                format!("canary {CANARY} in file /tmp/leak"),
                format!("canary {CANARY} in file /tmp/leak (base64)"),
            ]
        );
    }

    #[test]
    fn an_empty_search_or_honest_output_finds_nothing() {
        assert!(CanarySearch::new(&[]).find(b"anything").is_empty());
        assert!(CanarySearch::new(&[String::new()]).find(b"").is_empty());
        let honest = br#"{"schemaVersion":1,"servers":[{"name":"db","transport":"stdio","command":"[redacted]","args":"2 redacted"}]}"#;
        assert!(encodings_found(honest).is_empty());
    }

    #[test]
    fn a_canary_escaped_in_part_or_base64_percent_encoded_is_found_once_decoded() {
        // JSON \u escapes for the dashes only; percent-escapes for two letters; \x for one.
        let json = CANARY.replace('-', "\\u002d");
        let url = CANARY.replacen('A', "%41", 2);
        let c_style = CANARY.replacen('R', "\\x52", 1);
        for text in [&json, &url, &c_style] {
            assert_eq!(
                encodings_found(text.as_bytes()),
                only(Encoding::Unescaped),
                "{text}"
            );
        }
        // Base64 whose `+`, `/` and `=` went through a URL encoder.
        let canary = "CANARY\u{fb}\u{ff}>?-9d2c";
        let s = CanarySearch::new(&[canary.to_string()]);
        let encoded = b64(canary.as_bytes())
            .replace('+', "%2B")
            .replace('/', "%2F")
            .replace('=', "%3D");
        assert!(encoded.contains('%'), "{encoded}");
        let hits: Vec<Encoding> = s
            .find(encoded.as_bytes())
            .iter()
            .map(|h| h.encoding)
            .collect();
        assert_eq!(hits, [Encoding::Unescaped]);
        // Found already as written: reported as written, not again as decoded.
        let both = format!("{CANARY} {json}");
        assert_eq!(encodings_found(both.as_bytes()), only(Encoding::Raw));
        // A near miss stays one once decoded.
        let near = json.replace("PROJECT", "PROJEKT");
        assert!(encodings_found(near.as_bytes()).is_empty());
    }

    #[test]
    fn unescaping_decodes_only_well_formed_escapes() {
        assert_eq!(unescape(b"plain text"), None);
        assert_eq!(unescape(b"100% sure"), None);
        assert_eq!(
            unescape(b"a%41\\x42\\u0043\\u00e9%zz\\u12").unwrap(),
            "aABC\u{e9}%zz\\u12".as_bytes()
        );
        // A lone surrogate is not a character: left as written.
        assert_eq!(unescape(b"\\ud800%41").unwrap(), b"\\ud800A");
    }

    #[test]
    fn the_memo_returns_the_search_for_exactly_the_canaries_asked() {
        let memo = SearchMemo(Mutex::new(Vec::new()));
        let a = vec![CANARY.to_string()];
        let b = vec![CANARY.to_string(), "OTHER-CANARY-0001".to_string()];
        let first = memo.get(&a);
        assert!(Arc::ptr_eq(&first, &memo.get(&a)));
        let other = memo.get(&b);
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.find(b"x OTHER-CANARY-0001").len(), 1);
        assert!(memo.get(&a).find(b"x OTHER-CANARY-0001").is_empty());
        // Both stay cached side by side.
        assert!(Arc::ptr_eq(&first, &memo.get(&a)));
        assert!(Arc::ptr_eq(&other, &memo.get(&b)));
        // Past `MEMO_SIZE` other lists, the least recent is compiled again.
        for n in 0..MEMO_SIZE {
            memo.get(&[format!("CANARY-FILLER-{n:04}")]);
        }
        assert!(!Arc::ptr_eq(&first, &memo.get(&a)));
    }

    #[test]
    fn threads_asking_for_the_same_canaries_share_one_compiled_search() {
        let memo = SearchMemo(Mutex::new(Vec::new()));
        let canaries = vec![CANARY.to_string()];
        let searches: Vec<Arc<CanarySearch>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| memo.get(&canaries)))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert!(searches.iter().all(|s| Arc::ptr_eq(s, &searches[0])));
    }

    #[test]
    fn searching_lists_in_turn_reports_what_one_search_over_them_joined_does() {
        let matrix: Vec<String> = ["CANARY-A-1", "CANARY-B-2", "canary-c-3"]
            .iter()
            .map(|c| c.to_string())
            .collect();
        let control = vec!["SCOPEBOX-CONTROL-CANARY-7f3a".to_string()];
        let joined = [matrix.clone(), control.clone()].concat();
        let b64 = |c: &str| base64_middle(c.as_bytes(), 0);
        let haystacks: Vec<Vec<u8>> = vec![
            // The control's base64 first: hits still come in canary order.
            [
                b64(&control[0]),
                b" CANARY-B-2 ".to_vec(),
                hex_lower(b"CANARY-A-1"),
            ]
            .concat(),
            // Escaped only: the second, unescaped pass.
            b"%43%41%4E%41%52%59%2D%41%2D%31 and 2-B-YRANAC".to_vec(),
            "SCOPEBOX-CONTROL-CANARY-7F3A".to_lowercase().into_bytes(),
            b"nothing here".to_vec(),
        ];
        let split = CanarySearches::of(&[&matrix, &control]);
        let one = CanarySearch::new(&joined);
        let mut both_lists_hit = (false, false);
        for h in &haystacks {
            let got = split.failures(h, "stdout");
            assert_eq!(
                got,
                one.failures(h, "stdout"),
                "{}",
                String::from_utf8_lossy(h)
            );
            both_lists_hit.0 |= got.iter().any(|f| f.contains("CANARY-B-2"));
            both_lists_hit.1 |= got.iter().any(|f| f.contains(&control[0]));
        }
        assert_eq!(both_lists_hit, (true, true));
    }

    #[test]
    fn forms_cover_every_encoding() {
        let names: BTreeSet<Encoding> = encoded_forms(CANARY.as_bytes())
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        let mut all = Encoding::ALL.to_vec();
        // This canary's base64 has no `+` or `/`: its URL-safe spelling is the standard one.
        all.retain(|e| *e != Encoding::Base64Url && *e != Encoding::Unescaped);
        assert_eq!(names.into_iter().collect::<Vec<_>>(), all);
        let with_plus = encoded_forms("CANARY\u{fb}\u{ff}>?-9d2c".as_bytes());
        assert!(with_plus.iter().any(|(e, _)| *e == Encoding::Base64Url));
    }
}
