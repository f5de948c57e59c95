//! The loopback listeners of a native-reference run: the stand-in for the model API (every
//! request answered at once with the matrix's `modelApi.status` and a small JSON error body, so
//! a headless session starts its servers and exits) and one MCP HTTP listener per `listeners`
//! port (every request answered 404: connecting is what counts, for a remote server). Each
//! request is logged as it arrives — method, target, body length, and its order over all
//! listeners of the run — never its headers or body bytes (they may carry canaries).
//!
//! std::net only, one thread per listener and per connection: the requests are few, short and
//! local, the runner is a small static synchronous binary (no tokio), and an HTTP/1.1 request
//! head plus a `Content-Length` or chunked body is all there is to read. A connection that
//! stalls is dropped after `CONNECTION_TIMEOUT`; nothing here can block the run. Bound once for
//! the whole run; `take` hands out one run's log and starts the next. It must never connect
//! anywhere, answer anything but the fixed responses, or write a file.

use scopebox_schema::native_capture::{HttpLog, HttpRequest, ListenerLog, HTTP_REQUEST_LIMIT};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A connection that sends nothing for this long is closed.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `take` waits for connections still being served.
const SETTLE: Duration = Duration::from_millis(500);
/// Most bytes of a request target kept (`HttpRequest::path`).
pub const PATH_LIMIT: usize = 1024;
/// Most bytes of a request head read (request line and headers); a longer head is logged with
/// what was read and the connection closed.
const HEAD_LIMIT: usize = 64 * 1024;
/// Most requests served on one keep-alive connection.
const REQUESTS_PER_CONNECTION: usize = 64;

/// What the model-API stand-in says.
const MODEL_BODY: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"scopebox stand-in: there is no model here"}}"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Model { status: u16 },
    Mcp,
}

#[derive(Default)]
struct Shared {
    /// port → requests of the current run (at most `HTTP_REQUEST_LIMIT` each) and the dropped count.
    logs: BTreeMap<u16, (Vec<HttpRequest>, u64)>,
    order: u32,
    /// Connections being served now.
    active: usize,
}

/// The listeners, bound and serving.
pub struct Listeners {
    model_port: u16,
    mcp_ports: Vec<u16>,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
}

impl Listeners {
    /// Binds `127.0.0.1:model_port` and `127.0.0.1:<each of mcp_ports>` and serves them in
    /// threads. A port that cannot be bound is an error naming it.
    pub fn start(model_port: u16, status: u16, mcp_ports: &[u16]) -> std::io::Result<Listeners> {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut roles = vec![(model_port, Role::Model { status })];
        roles.extend(mcp_ports.iter().map(|&p| (p, Role::Mcp)));
        let mut bound = Vec::new();
        for (port, role) in roles {
            if bound.iter().any(|(p, _, _)| *p == port) {
                return Err(std::io::Error::other(format!(
                    "port {port} is named twice (the model API and the MCP listeners need their own)"
                )));
            }
            let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
                .map_err(|e| {
                    std::io::Error::new(e.kind(), format!("bind 127.0.0.1:{port}: {e}"))
                })?;
            shared
                .lock()
                .expect("listener log lock")
                .logs
                .insert(port, (Vec::new(), 0));
            bound.push((port, role, listener));
        }
        for (port, role, listener) in bound {
            let shared = Arc::clone(&shared);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || accept_loop(listener, port, role, shared, stop));
        }
        Ok(Listeners {
            model_port,
            mcp_ports: mcp_ports.to_vec(),
            shared,
            stop,
        })
    }

    /// This run's log, and a fresh one for the next run (arrival order restarts at 0). Called
    /// once the client and its descendants are gone: a connection still being read (its peer
    /// died mid-request) gets up to `SETTLE` to be logged first.
    pub fn take(&self) -> HttpLog {
        let settle = std::time::Instant::now();
        while self.shared.lock().expect("listener log lock").active > 0 && settle.elapsed() < SETTLE
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut shared = self.shared.lock().expect("listener log lock");
        shared.order = 0;
        let mut take = |port: u16| {
            let (requests, dropped) = shared
                .logs
                .get_mut(&port)
                .map(|(r, d)| (std::mem::take(r), std::mem::take(d)))
                .unwrap_or_default();
            ListenerLog {
                port,
                requests,
                requests_dropped: dropped,
            }
        };
        let model_api = take(self.model_port);
        let listeners = self
            .mcp_ports
            .iter()
            .map(|&p| (p.to_string(), take(p)))
            .collect();
        HttpLog {
            model_api,
            listeners,
        }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake each accept loop so it sees `stop`.
        for port in std::iter::once(self.model_port).chain(self.mcp_ports.iter().copied()) {
            let _ = TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
                Duration::from_millis(200),
            );
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    port: u16,
    role: Role,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(&shared);
        shared.lock().expect("listener log lock").active += 1;
        std::thread::spawn(move || {
            serve(stream, port, role, &shared);
            shared.lock().expect("listener log lock").active -= 1;
        });
    }
}

fn log(shared: &Mutex<Shared>, port: u16, method: String, path: String, body_bytes: u64) {
    let mut s = shared.lock().expect("listener log lock");
    let order = s.order;
    s.order = s.order.saturating_add(1);
    let (requests, dropped) = s.logs.entry(port).or_default();
    if requests.len() < HTTP_REQUEST_LIMIT {
        requests.push(HttpRequest {
            order,
            method,
            path,
            body_bytes,
        });
    } else {
        *dropped += 1;
    }
}

/// One connection: requests until the peer closes, stalls or asks to close.
fn serve(stream: TcpStream, port: u16, role: Role, shared: &Mutex<Shared>) {
    let _ = stream.set_read_timeout(Some(CONNECTION_TIMEOUT));
    let _ = stream.set_write_timeout(Some(CONNECTION_TIMEOUT));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    for _ in 0..REQUESTS_PER_CONNECTION {
        let Some(head) = read_head(&mut reader) else {
            return;
        };
        let body = read_body(&mut reader, &head);
        log(
            shared,
            port,
            head.method.clone(),
            head.target.clone(),
            body.unwrap_or(0),
        );
        let close = head.close || body.is_none();
        let (status, content_type, text) = match role {
            Role::Model { status } => (status, "application/json", MODEL_BODY),
            Role::Mcp => (404, "text/plain", "not found\n"),
        };
        let response = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: {}\r\n\r\n{text}",
            reason(status),
            text.len(),
            if close { "close" } else { "keep-alive" }
        );
        if writer.write_all(response.as_bytes()).is_err() || close {
            return;
        }
    }
}

#[derive(Debug)]
struct Head {
    method: String,
    target: String,
    content_length: Option<u64>,
    chunked: bool,
    close: bool,
}

/// The request line and headers; `None` when the peer closed or sent nothing usable.
fn read_head(reader: &mut impl BufRead) -> Option<Head> {
    let mut read = 0usize;
    let mut line = Vec::new();
    // Leading empty lines are allowed before a request line (RFC 9112 2.2).
    let request_line = loop {
        line.clear();
        let n = reader
            .take((HEAD_LIMIT - read) as u64)
            .read_until(b'\n', &mut line)
            .ok()?;
        if n == 0 {
            return None;
        }
        read += n;
        let text = trim_eol(&line);
        if !text.is_empty() {
            break String::from_utf8_lossy(text).into_owned();
        }
        if read >= HEAD_LIMIT {
            return None;
        }
    };
    let mut parts = request_line.split(' ');
    let method: String = parts.next().unwrap_or("").chars().take(32).collect();
    let target = truncate(parts.next().unwrap_or(""), PATH_LIMIT);
    let mut head = Head {
        method,
        target,
        content_length: None,
        chunked: false,
        close: request_line.ends_with("HTTP/1.0"),
    };
    loop {
        line.clear();
        if read >= HEAD_LIMIT {
            head.close = true;
            return Some(head);
        }
        let n = reader
            .take((HEAD_LIMIT - read) as u64)
            .read_until(b'\n', &mut line)
            .ok()?;
        if n == 0 {
            head.close = true;
            return Some(head);
        }
        read += n;
        let text = trim_eol(&line);
        if text.is_empty() {
            return Some(head);
        }
        let text = String::from_utf8_lossy(text);
        let Some((name, value)) = text.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => head.content_length = value.parse().ok(),
            "transfer-encoding" => head.chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => head.close |= value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
}

/// Reads and discards the body; its length, or `None` when it could not be read to its end
/// (the connection is then closed after the answer).
fn read_body(reader: &mut impl BufRead, head: &Head) -> Option<u64> {
    if head.chunked {
        let mut total = 0u64;
        let mut line = Vec::new();
        loop {
            line.clear();
            reader.take(1024).read_until(b'\n', &mut line).ok()?;
            let text = String::from_utf8_lossy(trim_eol(&line)).into_owned();
            let size = u64::from_str_radix(text.split(';').next()?.trim(), 16).ok()?;
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    line.clear();
                    let n = reader.take(8192).read_until(b'\n', &mut line).ok()?;
                    if n == 0 || trim_eol(&line).is_empty() {
                        return Some(total);
                    }
                }
            }
            total += discard(reader, size)?;
            line.clear();
            reader.take(2).read_until(b'\n', &mut line).ok()?;
        }
    }
    match head.content_length {
        Some(n) => discard(reader, n),
        None => Some(0),
    }
}

fn discard(reader: &mut impl Read, n: u64) -> Option<u64> {
    let got = std::io::copy(&mut reader.take(n), &mut std::io::sink()).ok()?;
    (got == n).then_some(n)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// At most `limit` bytes, cut at a character boundary.
fn truncate(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_string();
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A free loopback port (bound and released; the test binds it again at once).
    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    fn exchange(port: u16, request: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn requests_are_logged_in_arrival_order_and_answered() {
        let (model, mcp) = (free_port(), free_port());
        let l = Listeners::start(model, 400, &[mcp]).unwrap();
        let a = exchange(
            mcp,
            b"POST /project/srv HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
        );
        assert!(a.starts_with("HTTP/1.1 404 Not Found\r\n"), "{a}");
        let b = exchange(
            model,
            b"POST /v1/messages?beta=true HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        );
        assert!(b.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{b}");
        assert!(b.ends_with(MODEL_BODY), "{b}");
        let log = l.take();
        assert_eq!(
            log.listeners[&mcp.to_string()].requests,
            [HttpRequest {
                order: 0,
                method: "POST".into(),
                path: "/project/srv".into(),
                body_bytes: 5
            }]
        );
        assert_eq!(
            log.model_api.requests,
            [HttpRequest {
                order: 1,
                method: "POST".into(),
                path: "/v1/messages?beta=true".into(),
                body_bytes: 5
            }]
        );
        // The next run starts empty, its order from 0.
        exchange(mcp, b"GET /user/h HTTP/1.0\r\n\r\n");
        let next = l.take();
        assert!(next.model_api.requests.is_empty());
        assert_eq!(next.listeners[&mcp.to_string()].requests[0].order, 0);
        assert_eq!(next.listeners[&mcp.to_string()].requests[0].body_bytes, 0);
    }

    #[test]
    fn keep_alive_connections_serve_several_requests_and_long_targets_are_cut() {
        let (model, mcp) = (free_port(), free_port());
        let l = Listeners::start(model, 503, &[mcp]).unwrap();
        let long = "a".repeat(3000);
        let req =
            format!("GET /{long} HTTP/1.1\r\n\r\nDELETE /x HTTP/1.1\r\nconnection: close\r\n\r\n");
        let answer = exchange(mcp, req.as_bytes());
        assert_eq!(answer.matches("HTTP/1.1 404").count(), 2, "{answer}");
        let log = l.take();
        let reqs = &log.listeners[&mcp.to_string()].requests;
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].path.len(), PATH_LIMIT);
        assert_eq!(reqs[1].method, "DELETE");
        assert_eq!(log.model_api.port, model);
    }

    #[test]
    fn a_port_named_twice_or_taken_is_refused_naming_it() {
        let p = free_port();
        let err = Listeners::start(p, 400, &[p]).err().unwrap();
        assert!(err.to_string().contains(&format!("port {p}")), "{err}");
        let held = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let taken = held.local_addr().unwrap().port();
        let err = Listeners::start(taken, 400, &[]).err().unwrap();
        assert!(
            err.to_string().contains(&format!("127.0.0.1:{taken}")),
            "{err}"
        );
    }

    #[test]
    fn requests_beyond_the_limit_are_only_counted() {
        let (model, mcp) = (free_port(), free_port());
        let l = Listeners::start(model, 400, &[mcp]).unwrap();
        // Several connections: each serves at most REQUESTS_PER_CONNECTION.
        let connections = (HTTP_REQUEST_LIMIT + 10) / REQUESTS_PER_CONNECTION + 1;
        for _ in 0..connections {
            let batch = "GET / HTTP/1.1\r\n\r\n".repeat(REQUESTS_PER_CONNECTION - 1)
                + "GET / HTTP/1.1\r\nconnection: close\r\n\r\n";
            exchange(mcp, batch.as_bytes());
        }
        let log = l.take();
        let mcp_log = &log.listeners[&mcp.to_string()];
        let sent = connections * REQUESTS_PER_CONNECTION;
        assert_eq!(mcp_log.requests.len(), HTTP_REQUEST_LIMIT);
        assert_eq!(mcp_log.requests_dropped, (sent - HTTP_REQUEST_LIMIT) as u64);
    }
}
