//! SHA-256 digests as lowercase hex: the one way every file, archive and document is named;
//! the digests of large contents this process hashed recently, found again by comparing bytes
//! (`sha256_hex_remembered`, `remembered_fill_sha256`); and the digests of the declared fills
//! this process computed (`declared_fill_sha256`).

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Contents shorter than this are hashed every time: comparing them costs about as much.
pub const REMEMBER_MIN_BYTES: usize = 64 * 1024;
/// How many large contents are remembered (the latest; a case lays out at most a few).
const REMEMBERED_CONTENTS: usize = 4;

/// A large content hashed in this process, and its digest. A digest is only ever given back
/// for bytes equal to these, so it is exactly the SHA-256 of what it is given back for.
struct Remembered {
    bytes: Vec<u8>,
    sha256: String,
}

/// The latest large contents hashed, with their digests (`REMEMBERED_CONTENTS` of them).
struct RememberedDigests {
    latest: Mutex<Vec<Remembered>>,
}

/// This process's: the runner's walks and the judge share it.
static REMEMBERED: RememberedDigests = RememberedDigests::new();

/// `sha256_hex`, remembering large contents: a fixture file of a megabyte is read by the walk
/// before the candidate runs and again after it, and its declared content is hashed once more
/// by the judge; under emulation each SHA-256 of it costs ~16 ms, a comparison ~0.4 ms. Equal
/// bytes get the digest computed the first time; anything else is hashed.
pub fn sha256_hex_remembered(bytes: &[u8]) -> String {
    REMEMBERED.sha256_hex(bytes)
}

/// The digest of `prefix` followed by `byte` up to `size` bytes in all, when such a content
/// was hashed by `sha256_hex_remembered` and is still remembered; never computes one.
pub fn remembered_fill_sha256(prefix: &[u8], byte: u8, size: u64) -> Option<String> {
    REMEMBERED.fill_sha256(prefix, byte, size)
}

/// Forgets every remembered content: the runner does at the end of each case, whose fixture
/// files no later case lays out again, so that the memory does not make its forks dearer.
pub fn forget_remembered() {
    REMEMBERED.forget();
}

impl RememberedDigests {
    const fn new() -> RememberedDigests {
        RememberedDigests {
            latest: Mutex::new(Vec::new()),
        }
    }

    fn sha256_hex(&self, bytes: &[u8]) -> String {
        if bytes.len() < REMEMBER_MIN_BYTES {
            return sha256_hex(bytes);
        }
        if let Some(sha256) = self.recall(|known| same_bytes(known, bytes)) {
            return sha256;
        }
        let sha256 = sha256_hex(bytes);
        let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        if latest.len() == REMEMBERED_CONTENTS {
            latest.remove(0);
        }
        latest.push(Remembered {
            bytes: bytes.to_vec(),
            sha256: sha256.clone(),
        });
        sha256
    }

    fn forget(&self) {
        self.latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn fill_sha256(&self, prefix: &[u8], byte: u8, size: u64) -> Option<String> {
        self.recall(|known| {
            known.len() as u64 == size
                && known.starts_with(prefix)
                && all_bytes_are(&known[prefix.len()..], byte)
        })
    }

    fn recall(&self, matches: impl Fn(&[u8]) -> bool) -> Option<String> {
        let latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        latest
            .iter()
            .rev()
            .find(|r| matches(&r.bytes))
            .map(|r| r.sha256.clone())
    }
}

/// How many declared fills' digests are kept (the shipped matrix declares 15 different ones).
const DECLARED_FILLS: usize = 64;

/// A declared fill — `prefix`, then `byte` up to `size` bytes — and its digest.
struct DeclaredFill {
    prefix: Vec<u8>,
    byte: u8,
    size: u64,
    sha256: String,
}

/// This process's declared fills' digests, oldest first.
static DECLARED: Mutex<Vec<DeclaredFill>> = Mutex::new(Vec::new());

/// The SHA-256 of the fill `prefix`, then `byte` up to `size` bytes (`size` at least the
/// prefix's length), hashed in fixed chunks (never held whole) the first time this process
/// asks for that fill. The three values are the whole content, so a digest is only ever given
/// back for exactly the content it was computed from. The orchestrator judges every case twice
/// (its evidence, then the verification), each platform on a thread of its own, and the shipped
/// matrix's 25 fills of a megabyte were hashed on every judging (100 MB for a two-platform run).
/// Not forgotten with `forget_remembered`: an entry is the few hundred bytes of its prefix, not
/// the content.
pub fn declared_fill_sha256(prefix: &[u8], byte: u8, size: u64) -> String {
    declared_fill_sha256_by(prefix, byte, size, || {
        let mut hasher = Sha256::new();
        hasher.update(prefix);
        let chunk = [byte; 64 * 1024];
        let mut left = size.saturating_sub(prefix.len() as u64);
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            hasher.update(&chunk[..n]);
            left -= n as u64;
        }
        hex::encode(hasher.finalize())
    })
}

/// `declared_fill_sha256`, with `hash` computing a digest the memo does not hold.
fn declared_fill_sha256_by(
    prefix: &[u8],
    byte: u8,
    size: u64,
    hash: impl FnOnce() -> String,
) -> String {
    let same =
        |known: &DeclaredFill| known.size == size && known.byte == byte && known.prefix == prefix;
    {
        let declared = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = declared.iter().find(|known| same(known)) {
            return known.sha256.clone();
        }
    }
    // Hashed without the lock: another thread may compute the same digest meanwhile.
    let sha256 = hash();
    let mut declared = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    if !declared.iter().any(same) {
        if declared.len() == DECLARED_FILLS {
            declared.remove(0);
        }
        declared.push(DeclaredFill {
            prefix: prefix.to_vec(),
            byte,
            size,
            sha256: sha256.clone(),
        });
    }
    sha256
}

/// `a == b`, eight bytes at a time: musl's `memcmp`, which slice equality calls, compares
/// byte by byte, 10× slower under emulation.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let ((words_a, rest_a), (words_b, rest_b)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    a.len() == b.len() && rest_a == rest_b && words_a.iter().zip(words_b).all(|(x, y)| x == y)
}

fn all_bytes_are(bytes: &[u8], byte: u8) -> bool {
    let (words, rest) = bytes.as_chunks::<8>();
    let word = [byte; 8];
    rest.iter().all(|b| *b == byte) && words.iter().all(|w| *w == word)
}

/// Lowercase hex SHA-256 of a file's bytes, streamed.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// True when `s` is 64 lowercase hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_has_the_well_known_digest() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_sha256_hex(&sha256_hex(b"x")));
        assert!(!is_sha256_hex("E3B0"));
    }

    /// A content of `size` bytes: `prefix`, then `byte`.
    fn fill(prefix: &[u8], byte: u8, size: usize) -> Vec<u8> {
        let mut bytes = prefix.to_vec();
        bytes.resize(size, byte);
        bytes
    }

    #[test]
    fn a_remembered_digest_is_given_back_only_for_the_same_bytes() {
        let memo = RememberedDigests::new();
        let size = REMEMBER_MIN_BYTES * 2 + 3; // not a multiple of the comparison's word
        let original = fill(b"{\"remembered\":", b' ', size);
        assert_eq!(memo.sha256_hex(&original), sha256_hex(&original));
        assert_eq!(memo.latest.lock().unwrap().len(), 1);
        assert_eq!(memo.sha256_hex(&original), sha256_hex(&original));
        assert_eq!(
            memo.latest.lock().unwrap().len(),
            1,
            "recalled, not hashed again"
        );
        // One byte changed anywhere — first, in the middle, in the last partial word — or one
        // byte more or less: hashed afresh, never the remembered digest.
        for at in [0, size / 2, size - 1] {
            let mut changed = original.clone();
            changed[at] ^= 1;
            assert_eq!(memo.sha256_hex(&changed), sha256_hex(&changed), "byte {at}");
        }
        let longer = fill(b"{\"remembered\":", b' ', size + 1);
        assert_eq!(memo.sha256_hex(&longer), sha256_hex(&longer));
        let shorter = &original[..size - 1];
        assert_eq!(memo.sha256_hex(shorter), sha256_hex(shorter));
        assert_eq!(memo.latest.lock().unwrap().len(), REMEMBERED_CONTENTS);
        memo.forget();
        assert!(memo.latest.lock().unwrap().is_empty());
        assert_eq!(memo.sha256_hex(&original), sha256_hex(&original));
    }

    #[test]
    fn a_fill_is_recalled_only_when_a_remembered_content_is_exactly_that_fill() {
        let memo = RememberedDigests::new();
        let size = REMEMBER_MIN_BYTES + 5;
        let prefix = b"# recalled fill\n";
        let content = fill(prefix, b'#', size);
        assert_eq!(
            memo.fill_sha256(prefix, b'#', size as u64),
            None,
            "never computed"
        );
        memo.sha256_hex(&content);
        assert_eq!(
            memo.fill_sha256(prefix, b'#', size as u64).as_deref(),
            Some(sha256_hex(&content).as_str())
        );
        assert_eq!(memo.fill_sha256(prefix, b'#', size as u64 + 7), None);
        assert_eq!(memo.fill_sha256(prefix, b' ', size as u64), None);
        assert_eq!(memo.fill_sha256(b"# other fill\n", b'#', size as u64), None);
        let memo = RememberedDigests::new();
        let mut last_byte_differs = content.clone();
        last_byte_differs[size - 1] = b'!';
        memo.sha256_hex(&last_byte_differs);
        assert_eq!(memo.fill_sha256(prefix, b'#', size as u64), None);
    }

    /// A declared fill's digest is computed once, and given back only for the same prefix,
    /// byte and size: a fill differing in any one of them is hashed afresh.
    #[test]
    fn a_declared_fill_is_hashed_once_and_only_recalled_for_the_same_fill() {
        let hashed = std::cell::Cell::new(0);
        let digest_of = |prefix: &[u8], byte: u8, size: u64| {
            declared_fill_sha256_by(prefix, byte, size, || {
                hashed.set(hashed.get() + 1);
                sha256_hex(&fill(prefix, byte, size as usize))
            })
        };
        // A prefix no other test declares: the memo is the process's.
        let prefix = b"{\"declared fill test\":";
        let want = sha256_hex(&fill(prefix, b' ', 1000));
        assert_eq!(digest_of(prefix, b' ', 1000), want);
        assert_eq!(hashed.get(), 1);
        assert_eq!(digest_of(prefix, b' ', 1000), want);
        assert_eq!(hashed.get(), 1, "recalled, not hashed again");
        for (p, byte, size) in [
            (&b"{\"declared fill test\";"[..], b' ', 1000),
            (&prefix[..prefix.len() - 1], b' ', 1000),
            (prefix, b'!', 1000),
            (prefix, b' ', 1001),
        ] {
            let before = hashed.get();
            assert_eq!(
                digest_of(p, byte, size),
                sha256_hex(&fill(p, byte, size as usize))
            );
            assert_eq!(hashed.get(), before + 1, "{byte} {size}: hashed afresh");
        }
        // The streamed hash is the whole content's, whatever the size against its chunks.
        let streamed = b"{\"streamed fill test\":";
        for size in [streamed.len(), streamed.len() + 1, 64 * 1024 + 7, 200_000] {
            assert_eq!(
                declared_fill_sha256(streamed, b'-', size as u64),
                sha256_hex(&fill(streamed, b'-', size)),
                "{size}"
            );
        }
    }

    #[test]
    fn small_contents_are_hashed_and_not_remembered() {
        let memo = RememberedDigests::new();
        let small = fill(b"small", b'.', REMEMBER_MIN_BYTES - 1);
        assert_eq!(memo.sha256_hex(&small), sha256_hex(&small));
        assert!(memo.latest.lock().unwrap().is_empty());
        assert_eq!(memo.fill_sha256(b"small", b'.', small.len() as u64), None);
    }
}
