//! One-shot HTTP/1.1 GET over a connection slot ([`Driver::fetch`](crate::Driver::fetch)):
//! for the REST snapshots that order books are bridged from, fetched on the
//! same thread and poll as the streams, without blocking them. The
//! response is read into the slot's receive buffer and handed over in
//! place; a chunked body is joined in place.

use core::fmt;

/// Why a response could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FetchError {
    /// The status line or headers are not HTTP/1.1.
    Malformed,
    /// A `Content-Length` or chunk size that is not a number, or a chunk
    /// that does not end where its size says.
    BadLength,
    /// The connection ended before the body did.
    Truncated,
    /// The response does not fit the receive buffer
    /// ([`Config::read_buffer_size`](crate::Config::read_buffer_size)).
    TooLarge,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FetchError::Malformed => "the response is not HTTP/1.1",
            FetchError::BadLength => "the response's body length is malformed",
            FetchError::Truncated => "the connection ended before the body did",
            FetchError::TooLarge => "the response does not fit the receive buffer",
        })
    }
}

impl std::error::Error for FetchError {}

/// Writes `GET <path> HTTP/1.1` with `Host`, identity encoding and
/// `Connection: close`, plus `headers`. Returns the bytes written, or
/// `None` if `out` is too small.
pub(crate) fn write_request(
    out: &mut [u8],
    host: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Option<usize> {
    let mut n = 0;
    let mut put = |s: &str| {
        let end = n + s.len();
        out.get_mut(n..end)?.copy_from_slice(s.as_bytes());
        n = end;
        Some(())
    };
    put("GET ")?;
    put(path)?;
    put(" HTTP/1.1\r\nHost: ")?;
    put(host)?;
    put(
        "\r\nAccept: application/json\r\nAccept-Encoding: identity\r\nConnection: close\r\nUser-Agent: tickwire\r\n",
    )?;
    for (name, value) in headers {
        put(name)?;
        put(": ")?;
        put(value)?;
        put("\r\n")?;
    }
    put("\r\n")?;
    Some(n)
}

/// A complete response: its status and where its body is in the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    /// `Retry-After` in seconds, if it was given so.
    pub(crate) retry_after: Option<u32>,
    pub(crate) body_start: usize,
    pub(crate) body_len: usize,
}

/// Reads the response in `buf`. `Ok(None)`: not complete yet (`eof`: the
/// peer has closed, so a body without a length ends here). A chunked body
/// is joined in place, so that it is contiguous from `body_start`.
pub(crate) fn parse_response(buf: &mut [u8], eof: bool) -> Result<Option<Response>, FetchError> {
    let mut headers = [httparse::EMPTY_HEADER; 48];
    let mut response = httparse::Response::new(&mut headers);
    let body_start = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if eof => return Err(FetchError::Truncated),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(FetchError::Malformed),
    };
    let status = response.code.ok_or(FetchError::Malformed)?;
    let mut length = None;
    let mut chunked = false;
    let mut retry_after = None;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("retry-after") {
            retry_after = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse().ok());
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| FetchError::BadLength)?;
            let n: usize = text.trim().parse().map_err(|_| FetchError::BadLength)?;
            if length.is_some_and(|l| l != n) {
                return Err(FetchError::BadLength);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
        }
    }
    // 1xx, 204 and 304 have no body.
    if status < 200 || status == 204 || status == 304 {
        return Ok(Some(Response {
            status,
            retry_after,
            body_start,
            body_len: 0,
        }));
    }
    let body = &mut buf[body_start..];
    let body_len = if chunked {
        match dechunk(body)? {
            Some(n) => n,
            None if eof => return Err(FetchError::Truncated),
            None => return Ok(None),
        }
    } else if let Some(n) = length {
        if body.len() < n {
            if eof {
                return Err(FetchError::Truncated);
            }
            return Ok(None);
        }
        n
    } else if eof {
        body.len()
    } else {
        return Ok(None);
    };
    Ok(Some(Response {
        status,
        retry_after,
        body_start,
        body_len,
    }))
}

/// Joins a chunked body in place. `Ok(None)` until the last chunk (and the
/// trailers) are in; then the joined length. Only what is complete is
/// moved, so it is safe to call again with more bytes.
fn dechunk(body: &mut [u8]) -> Result<Option<usize>, FetchError> {
    // First pass: check that everything is in, without moving anything.
    let mut at = 0;
    let mut chunks = 0usize;
    loop {
        let Some(line_end) = find_crlf(&body[at..]) else {
            return Ok(None);
        };
        let size = chunk_size(&body[at..at + line_end])?;
        let data = at + line_end + 2;
        if size == 0 {
            // Trailers, then an empty line.
            let mut t = data;
            loop {
                let Some(end) = find_crlf(&body[t..]) else {
                    return Ok(None);
                };
                t += end + 2;
                if end == 0 {
                    break;
                }
            }
            break;
        }
        let end = data.checked_add(size).ok_or(FetchError::BadLength)?;
        if body.len() < end + 2 {
            return Ok(None);
        }
        if &body[end..end + 2] != b"\r\n" {
            return Err(FetchError::BadLength);
        }
        at = end + 2;
        chunks += 1;
    }
    // Second pass: move each chunk's data down to the end of the last.
    let (mut at, mut joined) = (0, 0);
    for _ in 0..chunks {
        let line_end = find_crlf(&body[at..]).expect("checked");
        let size = chunk_size(&body[at..at + line_end]).expect("checked");
        let data = at + line_end + 2;
        body.copy_within(data..data + size, joined);
        joined += size;
        at = data + size + 2;
    }
    Ok(Some(joined))
}

fn find_crlf(b: &[u8]) -> Option<usize> {
    b.windows(2).position(|w| w == b"\r\n")
}

/// The hex size of a chunk line (`1a3f` or `1a3f;ext=..`).
fn chunk_size(line: &[u8]) -> Result<usize, FetchError> {
    let hex = line
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if hex.is_empty() || hex.len() > 15 {
        return Err(FetchError::BadLength);
    }
    hex.iter().try_fold(0usize, |n, &d| {
        let v = (d as char).to_digit(16).ok_or(FetchError::BadLength)?;
        Ok(n * 16 + v as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &[u8], eof: bool) -> (Result<Option<Response>, FetchError>, Vec<u8>) {
        let mut buf = text.to_vec();
        let r = parse_response(&mut buf, eof);
        (r, buf)
    }

    fn body(text: &[u8]) -> (u16, Vec<u8>) {
        let (r, buf) = parse(text, false);
        let r = r.unwrap().expect("complete");
        (
            r.status,
            buf[r.body_start..r.body_start + r.body_len].to_vec(),
        )
    }

    #[test]
    fn content_length_and_chunked_bodies() {
        let (status, b) = body(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!((status, &b[..]), (200, &b"hello"[..]));
        let (status, b) = body(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;x=1\r\n, world\r\n0\r\nX-T: 1\r\n\r\n",
        );
        assert_eq!((status, &b[..]), (200, &b"hello, world"[..]));
        let (status, b) = body(b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!((status, &b[..]), (429, &b"{}"[..]));
    }

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let retry = |header: &str| {
            let text =
                format!("HTTP/1.1 429 Too Many Requests\r\n{header}Content-Length: 0\r\n\r\n");
            parse(text.as_bytes(), false)
                .0
                .unwrap()
                .unwrap()
                .retry_after
        };
        assert_eq!(retry("Retry-After: 7\r\n"), Some(7));
        assert_eq!(retry("retry-after:  120 \r\n"), Some(120));
        assert_eq!(retry(""), None);
        assert_eq!(
            retry("Retry-After: Fri, 31 Dec 1999 23:59:59 GMT\r\n"),
            None
        );
    }

    #[test]
    fn incomplete_responses_wait_and_truncated_ones_fail() {
        let full = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        for cut in 0..full.len() {
            let (r, _) = parse(&full[..cut], false);
            assert_eq!(r, Ok(None), "cut at {cut}");
            let (r, _) = parse(&full[..cut], true);
            assert_eq!(r, Err(FetchError::Truncated), "cut at {cut}");
        }
        let (r, _) = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello", false);
        assert_eq!(r, Ok(None));
        // No length: the body ends with the connection.
        let (status, b) = {
            let (r, buf) = parse(b"HTTP/1.1 200 OK\r\n\r\nhello", true);
            let r = r.unwrap().unwrap();
            (
                r.status,
                buf[r.body_start..r.body_start + r.body_len].to_vec(),
            )
        };
        assert_eq!((status, &b[..]), (200, &b"hello"[..]));
    }

    #[test]
    fn malformed_lengths_are_typed_errors() {
        for bad in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
        ] {
            assert_eq!(parse(bad, false).0, Err(FetchError::BadLength), "{bad:?}");
        }
        assert_eq!(
            parse(b"SSH-2.0\r\n\r\n", false).0,
            Err(FetchError::Malformed)
        );
    }

    #[test]
    fn the_request_names_host_path_and_headers() {
        let mut out = [0u8; 256];
        let n = write_request(
            &mut out,
            "api.binance.com",
            "/api/v3/depth?symbol=BTCUSDT&limit=1000",
            &[("X-A", "1")],
        )
        .unwrap();
        let text = std::str::from_utf8(&out[..n]).unwrap();
        assert!(text.starts_with(
            "GET /api/v3/depth?symbol=BTCUSDT&limit=1000 HTTP/1.1\r\nHost: api.binance.com\r\n"
        ));
        assert!(text.contains("\r\nX-A: 1\r\n") && text.ends_with("\r\n\r\n"));
        assert_eq!(write_request(&mut out[..10], "h", "/", &[]), None);
    }
}
