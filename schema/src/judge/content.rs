//! A fixture file's content: its size, digest and exact bytes for each form it may take (text,
//! base64, fill), a fill never materialized to be checked; and the base64 codec the matrix and
//! the written-file records use.

use crate::digest;
use crate::matrix::FileContent;

/// Largest `fill` file a matrix may ask for: the fixture tmpfs mounts are small.
pub const MAX_FILL_SIZE: u64 = 16 * 1024 * 1024;

/// A file entry's size, validated arithmetically: a `fill` is never materialized here.
pub fn file_size(content: &FileContent) -> Result<u64, String> {
    match content {
        FileContent::Text(t) => Ok(t.len() as u64),
        FileContent::Base64(b) => decode_base64(b).map(|bytes| bytes.len() as u64),
        FileContent::Fill { prefix, size, .. } => {
            if *size > MAX_FILL_SIZE {
                return Err(format!("fill size {size} exceeds {MAX_FILL_SIZE}"));
            }
            if prefix.len() as u64 > *size {
                return Err(format!(
                    "fill prefix is {} bytes, longer than size {size}",
                    prefix.len()
                ));
            }
            Ok(*size)
        }
    }
}

/// A file entry's sha256 hex, streamed: a `fill` is hashed in fixed chunks, never held whole.
pub fn file_sha256(content: &FileContent) -> Result<String, String> {
    match content {
        FileContent::Fill { prefix, byte, size } => {
            file_size(content)?;
            // The runner's walk has just hashed the file it laid out from this fill.
            if let Some(sha256) = digest::remembered_fill_sha256(prefix.as_bytes(), *byte, *size) {
                return Ok(sha256);
            }
            Ok(digest::declared_fill_sha256(
                prefix.as_bytes(),
                *byte,
                *size,
            ))
        }
        other => file_bytes(other).map(|bytes| digest::sha256_hex_remembered(&bytes)),
    }
}

/// A file entry's exact bytes (the runner writes them; checks use `file_size`/`file_sha256`).
pub fn file_bytes(content: &FileContent) -> Result<Vec<u8>, String> {
    match content {
        FileContent::Text(t) => Ok(t.as_bytes().to_vec()),
        FileContent::Base64(b) => decode_base64(b),
        FileContent::Fill { prefix, byte, size } => {
            file_size(content)?;
            let mut bytes = Vec::with_capacity(*size as usize);
            bytes.extend_from_slice(prefix.as_bytes());
            bytes.resize(*size as usize, *byte);
            Ok(bytes)
        }
    }
}

/// Standard base64 (RFC 4648 §4) with `=` padding: what `decode_base64` reads back.
pub fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let v = (b(0) << 16) | (b(1) << 8) | b(2);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 (RFC 4648 §4, `=` padding required, no whitespace).
pub fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some((c - b'A') as u32),
            b'a'..=b'z' => Some((c - b'a') as u32 + 26),
            b'0'..=b'9' => Some((c - b'0') as u32 + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err("base64 length is not a multiple of 4".into());
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let chunks = bytes.len() / 4;
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != chunks) {
            return Err("base64 padding is misplaced".into());
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | value(c).ok_or("base64 has a character outside the alphabet")?;
        }
        acc <<= 6 * pad as u32;
        let three = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_hex;

    #[test]
    fn base64_round_trips() {
        for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\x00\xfe\x01"] {
            assert_eq!(decode_base64(&encode_base64(bytes)).unwrap(), bytes);
        }
        assert_eq!(encode_base64(b"fo"), "Zm8=");
    }

    #[test]
    fn file_bytes_cover_each_form() {
        assert_eq!(
            file_bytes(&FileContent::Text("hé".into())).unwrap(),
            "hé".as_bytes()
        );
        assert_eq!(
            file_bytes(&FileContent::Base64("77u/e30=".into())).unwrap(),
            b"\xef\xbb\xbf{}"
        );
        let fill = file_bytes(&FileContent::Fill {
            prefix: "{".into(),
            byte: b' ',
            size: 1_048_577,
        })
        .unwrap();
        assert_eq!(fill.len(), 1_048_577);
        assert_eq!(&fill[..2], b"{ ");
        assert!(file_bytes(&FileContent::Fill {
            prefix: "abc".into(),
            byte: 0,
            size: 2
        })
        .is_err());
        assert!(file_bytes(&FileContent::Fill {
            prefix: String::new(),
            byte: 0,
            size: MAX_FILL_SIZE + 1
        })
        .is_err());
    }

    #[test]
    fn base64_decodes_and_refuses_bad_input() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("Zg==").unwrap(), b"f");
        assert_eq!(decode_base64("Zm8=").unwrap(), b"fo");
        assert_eq!(decode_base64("Zm9v").unwrap(), b"foo");
        assert_eq!(decode_base64("/+8A").unwrap(), [0xff, 0xef, 0x00]);
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9v!A==", "Zm 9"] {
            assert!(decode_base64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_fill_is_sized_and_hashed_without_being_materialized() {
        let content = FileContent::Fill {
            prefix: "{ ".into(),
            byte: b'x',
            size: 200_000,
        };
        assert_eq!(file_size(&content).unwrap(), 200_000);
        let bytes = file_bytes(&content).unwrap();
        assert_eq!(file_sha256(&content).unwrap(), sha256_hex(&bytes));
        let too_big = FileContent::Fill {
            prefix: String::new(),
            byte: 0,
            size: MAX_FILL_SIZE + 1,
        };
        assert!(file_size(&too_big).is_err());
        assert!(file_sha256(&too_big).is_err());
    }
}
