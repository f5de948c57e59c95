//! Whether DSH accepts a streamable-HTTP `url`: a whole `${VAR}` reference,
//! or a string Node's `new URL(value)` parses (dsh-project-mcp-manager
//! `model.ts`, `isUrlOrEnvRef`). A JSON entry whose url fails is an entry
//! error in DSH: it mounts nothing and holds no shadow key, so the chain must
//! agree with DSH on this exactly.
//!
//! [`parses`] follows the WHATWG URL parser's failure paths (scheme, special
//! authority, host, IPv4, IPv6, port) for an absolute URL without a base. The
//! one step it does not reproduce is UTS #46 processing of internationalized
//! hosts (non-ASCII, or an `xn--` label): those are taken as parsing. Nothing
//! here is printed or kept; the answer is a boolean.

/// `^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`, or a string [`parses`] accepts.
pub fn is_url_or_env_ref(value: &str) -> bool {
    is_env_ref(value) || parses(value)
}

/// A value that is exactly one `${NAME}` reference.
fn is_env_ref(value: &str) -> bool {
    let Some(name) = value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) else {
        return false;
    };
    let b = name.as_bytes();
    b.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

const SPECIAL: [&str; 5] = ["http", "https", "ws", "wss", "ftp"];

/// Whether the WHATWG URL parser returns a URL (not failure) for `input`.
pub fn parses(input: &str) -> bool {
    let trimmed = input.trim_matches(|c: char| c <= '\u{20}');
    let s: String = trimmed
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return false; // no scheme, and there is no base URL
    }
    let colon = match b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')))
    {
        Some(i) if b[i] == b':' => i,
        _ => return false,
    };
    let scheme = s[..colon].to_ascii_lowercase();
    let rest = &s[colon + 1..];
    if SPECIAL.contains(&scheme.as_str()) {
        authority(rest.trim_start_matches(['/', '\\']), true)
    } else if scheme == "file" {
        file(rest)
    } else if let Some(after) = rest.strip_prefix("//") {
        authority(after, false)
    } else {
        true // a path or an opaque path never fails
    }
}

/// `file:` URLs: only a host after `//` can fail.
fn file(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix(['/', '\\']) else {
        return true;
    };
    let Some(after) = after.strip_prefix(['/', '\\']) else {
        return true;
    };
    let end = after.find(['/', '\\', '?', '#']).unwrap_or(after.len());
    let host = &after[..end];
    let drive = host.len() == 2
        && host.as_bytes()[0].is_ascii_alphabetic()
        && matches!(host.as_bytes()[1], b':' | b'|');
    host.is_empty() || drive || host_parses(host, true)
}

/// The authority state onward: userinfo, host, port.
fn authority(rest: &str, special: bool) -> bool {
    let terminators: &[char] = if special {
        &['/', '\\', '?', '#']
    } else {
        &['/', '?', '#']
    };
    let end = rest.find(terminators).unwrap_or(rest.len());
    let auth = &rest[..end];
    let host_port = match auth.rfind('@') {
        Some(at) => {
            let hp = &auth[at + 1..];
            if hp.is_empty() {
                return false; // credentials without a host
            }
            hp
        }
        None => auth,
    };
    // The host ends at the first ':' outside brackets.
    let mut inside = false;
    let mut split = None;
    for (i, c) in host_port.char_indices() {
        match c {
            '[' => inside = true,
            ']' => inside = false,
            ':' if !inside => {
                split = Some(i);
                break;
            }
            _ => {}
        }
    }
    let (host, port) = match split {
        Some(i) => (&host_port[..i], Some(&host_port[i + 1..])),
        None => (host_port, None),
    };
    if host.is_empty() && (special || port.is_some()) {
        return false;
    }
    if let Some(p) = port {
        if !p.bytes().all(|c| c.is_ascii_digit()) {
            return false;
        }
        let value = p.bytes().fold(0u32, |acc, d| {
            acc.saturating_mul(10).saturating_add(u32::from(d - b'0'))
        });
        if value > 65_535 {
            return false;
        }
    }
    host.is_empty() || host_parses(host, special)
}

fn forbidden_host(c: char) -> bool {
    matches!(
        c,
        '\0' | '\t'
            | '\n'
            | '\r'
            | ' '
            | '#'
            | '/'
            | ':'
            | '<'
            | '>'
            | '?'
            | '@'
            | '['
            | '\\'
            | ']'
            | '^'
            | '|'
    )
}

fn forbidden_domain(c: char) -> bool {
    forbidden_host(c) || c <= '\u{1f}' || c == '%' || c == '\u{7f}'
}

/// The host parser: IPv6 in brackets, an opaque host for non-special
/// schemes, otherwise a domain (which may turn out to be IPv4).
fn host_parses(host: &str, special: bool) -> bool {
    if let Some(inner) = host.strip_prefix('[') {
        return inner.strip_suffix(']').is_some_and(ipv6_parses);
    }
    if !special {
        return !host.chars().any(forbidden_host);
    }
    let decoded = percent_decode(host);
    let domain = String::from_utf8_lossy(&decoded);
    let idna = !domain.is_ascii()
        || domain
            .split('.')
            .any(|l| l.len() >= 4 && l[..4].eq_ignore_ascii_case("xn--"));
    if idna {
        return true; // UTS #46 is not reproduced (see the module note)
    }
    let ascii = domain.to_ascii_lowercase();
    if ascii.is_empty() || ascii.chars().any(forbidden_domain) {
        return false;
    }
    !ends_in_number(&ascii) || ipv4_parses(&ascii)
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The parts of a domain split on `.`, without one trailing empty part.
fn ipv4_parts(domain: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = domain.split('.').collect();
    if parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

fn ends_in_number(domain: &str) -> bool {
    let parts = ipv4_parts(domain);
    let last = parts.last().copied().unwrap_or("");
    (!last.is_empty() && last.bytes().all(|c| c.is_ascii_digit())) || ipv4_number(last).is_some()
}

/// The IPv4 number parser: decimal, `0x` hex, or `0`-prefixed octal.
fn ipv4_number(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(h) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (h, 16)
        } else if part.len() >= 2 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        return Some(0);
    }
    digits.chars().try_fold(0u64, |acc, c| {
        let d = c.to_digit(radix)?;
        Some(
            acc.saturating_mul(u64::from(radix))
                .saturating_add(u64::from(d)),
        )
    })
}

fn ipv4_parses(domain: &str) -> bool {
    let parts = ipv4_parts(domain);
    if parts.len() > 4 {
        return false;
    }
    let Some(numbers) = parts
        .iter()
        .map(|p| ipv4_number(p))
        .collect::<Option<Vec<u64>>>()
    else {
        return false;
    };
    let (last, init) = numbers.split_last().expect("at least one part");
    init.iter().all(|n| *n <= 255) && *last < 256u64.pow(5 - numbers.len() as u32)
}

/// The IPv6 parser's failure paths (the address value is not needed).
fn ipv6_parses(input: &str) -> bool {
    let c: Vec<char> = input.chars().collect();
    let at = |p: usize| c.get(p).copied();
    let mut p = 0;
    let mut piece = 0usize;
    let mut compress = false;
    if at(0) == Some(':') {
        if at(1) != Some(':') {
            return false;
        }
        p = 2;
        piece = 1;
        compress = true;
    }
    while at(p).is_some() {
        if piece == 8 {
            return false;
        }
        if at(p) == Some(':') {
            if compress {
                return false;
            }
            p += 1;
            piece += 1;
            compress = true;
            continue;
        }
        let mut length = 0;
        while length < 4 && at(p).is_some_and(|c| c.is_ascii_hexdigit()) {
            p += 1;
            length += 1;
        }
        match at(p) {
            Some('.') => {
                if length == 0 || piece > 6 {
                    return false;
                }
                p -= length;
                let mut seen = 0;
                while at(p).is_some() {
                    if seen > 0 {
                        if at(p) == Some('.') && seen < 4 {
                            p += 1;
                        } else {
                            return false;
                        }
                    }
                    if !at(p).is_some_and(|c| c.is_ascii_digit()) {
                        return false;
                    }
                    let mut value: Option<u32> = None;
                    while let Some(d) = at(p).and_then(|c| c.to_digit(10)) {
                        value = match value {
                            None => Some(d),
                            Some(0) => return false,
                            Some(v) => Some(v * 10 + d),
                        };
                        if value > Some(255) {
                            return false;
                        }
                        p += 1;
                    }
                    seen += 1;
                    if seen == 2 || seen == 4 {
                        piece += 1;
                    }
                }
                return seen == 4 && (compress || piece == 8);
            }
            Some(':') => {
                p += 1;
                if at(p).is_none() {
                    return false;
                }
            }
            Some(_) => return false,
            None => {}
        }
        piece += 1;
    }
    compress || piece == 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_node_accepts() {
        for ok in [
            "https://example.com/mcp",
            "http://localhost:8080/mcp?x=1#f",
            "HTTP://EXAMPLE.COM",
            "https://user:pw@host/",
            "http:example.com",
            "http:\\\\example.com\\x",
            "https://127.0.0.1:65535",
            "https://0x7f.1/",
            "https://[::1]:3000/",
            "https://[2001:db8::192.0.2.1]/",
            "https://h%41st/",
            "https://exämple.com/",
            "  https://example.com \n",
            "https://ex\tample.com/",
            "localhost:8080",
            "mailto:x",
            "foo:",
            "foo://",
            "foo://host:1/x",
            "foo://@host",
            "https:///x",
            "file:///etc/x",
            "file://localhost/x",
            "file://C:/x",
            "${MCP_URL}",
            "https://${HOST}/mcp",
        ] {
            assert!(is_url_or_env_ref(ok), "{ok:?}");
        }
    }

    #[test]
    fn urls_node_refuses() {
        for bad in [
            "",
            "example.com/mcp",
            "/relative",
            "//host/x",
            "1http://x",
            "ht tp://x",
            "https://",
            "https://user@",
            "https://host:port",
            "https://host:65536",
            "https://ho st/",
            "https://a<b/",
            "https://h%20st/",
            "https://h%/",
            "https://256.0.0.1/",
            "https://1.2.3.4.5/",
            "https://example.0x/",
            "https://[::1/",
            "https://[1::2::3]/",
            "https://[12345::]/",
            "https://[::1.2.3]/",
            "https://[::01.2.3.4]/",
            "foo://host@",
            "foo://:80",
            "foo://a b/",
            "file://ho st/x",
            "${1BAD}",
            "${A}x",
        ] {
            assert!(!is_url_or_env_ref(bad), "{bad:?}");
        }
    }
}
