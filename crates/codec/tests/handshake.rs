//! Handshake response validation, one test per rule.

use tickwire_codec::handshake::{
    ClientHandshake, HandshakeError, HandshakeStatus, MAX_HEADERS, Request, accept_key,
};

const NONCE: [u8; 16] = *b"the sample nonce";
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

const OFFERED: &[&str] = &["v1.json", "v2.json"];

fn handshake() -> ClientHandshake {
    ClientHandshake::new(NONCE)
}

fn response(extra: &str) -> String {
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {ACCEPT}\r\n{extra}\r\n"
    )
}

fn parse(resp: &str) -> Result<HandshakeStatus<'static>, HandshakeError> {
    handshake().parse_response(resp.as_bytes(), OFFERED)
}

#[test]
fn accepts_a_valid_response_and_reports_where_frames_start() {
    let mut resp = response("Server: test\r\n").into_bytes();
    resp.extend_from_slice(b"\x81\x02hi");
    assert_eq!(
        handshake().parse_response(&resp, OFFERED),
        Ok(HandshakeStatus::Complete {
            consumed: resp.len() - 4,
            protocol: None
        })
    );
}

#[test]
fn header_names_and_tokens_are_case_insensitive() {
    let resp = "HTTP/1.1 101 Switching Protocols\r\nuPgRaDe:  WebSocket \r\n\
                connection: keep-alive, UPGRADE\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
    assert!(matches!(parse(resp), Ok(HandshakeStatus::Complete { .. })));
}

#[test]
fn selected_subprotocol_must_have_been_offered() {
    assert_eq!(
        parse(&response("Sec-WebSocket-Protocol: v2.json\r\n")),
        Ok(HandshakeStatus::Complete {
            consumed: response("Sec-WebSocket-Protocol: v2.json\r\n").len(),
            protocol: Some("v2.json"),
        })
    );
    assert_eq!(
        parse(&response("Sec-WebSocket-Protocol: v3.json\r\n")),
        Err(HandshakeError::UnexpectedProtocol)
    );
    assert_eq!(
        parse(&response(
            "Sec-WebSocket-Protocol: v1.json\r\nSec-WebSocket-Protocol: v2.json\r\n"
        )),
        Err(HandshakeError::UnexpectedProtocol)
    );
}

#[test]
fn refuses_extensions_it_did_not_offer() {
    assert_eq!(
        parse(&response(
            "Sec-WebSocket-Extensions: permessage-deflate\r\n"
        )),
        Err(HandshakeError::UnexpectedExtension)
    );
}

#[test]
fn refuses_a_status_other_than_101() {
    let resp = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\n\r\n";
    assert_eq!(parse(resp), Err(HandshakeError::Status(429)));
}

#[test]
fn refuses_missing_upgrade_or_connection() {
    let no_upgrade =
        format!("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {ACCEPT}\r\n\r\n");
    assert_eq!(parse(&no_upgrade), Err(HandshakeError::MissingUpgrade));
    let wrong_upgrade = format!(
        "HTTP/1.1 101 OK\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {ACCEPT}\r\n\r\n"
    );
    assert_eq!(parse(&wrong_upgrade), Err(HandshakeError::MissingUpgrade));
    let no_connection = format!(
        "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Accept: {ACCEPT}\r\n\r\n"
    );
    assert_eq!(
        parse(&no_connection),
        Err(HandshakeError::MissingConnectionUpgrade)
    );
}

#[test]
fn refuses_a_wrong_missing_or_repeated_accept() {
    let wrong = "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n";
    assert_eq!(parse(wrong), Err(HandshakeError::InvalidAccept));
    let missing = "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    assert_eq!(parse(missing), Err(HandshakeError::InvalidAccept));
    let twice = response(&format!("Sec-WebSocket-Accept: {ACCEPT}\r\n"));
    assert_eq!(parse(&twice), Err(HandshakeError::InvalidAccept));
}

#[test]
fn refuses_what_is_not_http() {
    let mut hs = handshake();
    assert_eq!(
        hs.parse_response(b"\x16\x03\x01", OFFERED),
        Err(HandshakeError::Malformed)
    );
    assert_eq!(
        parse("HTTP/1.1 abc Nope\r\n\r\n"),
        Err(HandshakeError::Malformed)
    );
}

#[test]
fn header_budget_is_fixed() {
    let many: String = (0..MAX_HEADERS).map(|i| format!("X-{i}: y\r\n")).collect();
    assert_eq!(parse(&response(&many)), Err(HandshakeError::TooManyHeaders));
    let fits: String = (0..MAX_HEADERS - 4)
        .map(|i| format!("X-{i}: y\r\n"))
        .collect();
    assert!(matches!(
        parse(&response(&fits)),
        Ok(HandshakeStatus::Complete { .. })
    ));
}

#[test]
fn response_size_is_capped_even_without_a_blank_line() {
    let mut hs = handshake();
    hs.set_max_response_len(256);
    let mut partial = b"HTTP/1.1 101 OK\r\n".to_vec();
    while partial.len() <= 256 {
        assert_eq!(
            hs.parse_response(&partial, OFFERED),
            Ok(HandshakeStatus::Partial)
        );
        partial.extend_from_slice(b"X-Filler: abcdefgh\r\n");
    }
    assert_eq!(
        hs.parse_response(&partial, OFFERED),
        Err(HandshakeError::TooLarge)
    );
}

#[test]
fn byte_at_a_time_gives_the_same_answer() {
    let resp = response("Sec-WebSocket-Protocol: v1.json\r\n");
    let mut hs = handshake();
    for end in 0..resp.len() {
        assert_eq!(
            hs.parse_response(&resp.as_bytes()[..end], OFFERED),
            Ok(HandshakeStatus::Partial)
        );
    }
    assert_eq!(
        hs.parse_response(resp.as_bytes(), OFFERED),
        Ok(HandshakeStatus::Complete {
            consumed: resp.len(),
            protocol: Some("v1.json")
        })
    );
}

#[test]
fn request_refuses_header_injection_and_reports_its_size() {
    let bad = [
        Request::new("", "/"),
        Request::new("example.com", "no-slash"),
        Request::new("example.com\r\nX: y", "/"),
        Request::new("example.com", "/a b"),
        Request {
            headers: &[("X-Api-Key", "k\r\nInjected: 1")],
            ..Request::new("example.com", "/")
        },
        Request {
            headers: &[("Bad Name", "v")],
            ..Request::new("example.com", "/")
        },
        Request {
            protocols: &["a,b"],
            ..Request::new("example.com", "/")
        },
    ];
    for req in bad {
        let hs = ClientHandshake::new(NONCE);
        assert_eq!(
            hs.write_request(&mut [0u8; 512], &req),
            Err(HandshakeError::InvalidRequest),
            "{req:?}"
        );
    }
    let hs = handshake();
    let req = Request {
        protocols: OFFERED,
        ..Request::new("example.com", "/ws")
    };
    let mut big = [0u8; 512];
    let n = hs.write_request(&mut big, &req).unwrap();
    assert_eq!(
        hs.write_request(&mut big[..n - 1], &req),
        Err(HandshakeError::InsufficientSize { required: n })
    );
    assert_eq!(hs.write_request(&mut big[..n], &req), Ok(n));
}

#[test]
fn accept_key_matches_a_second_known_pair() {
    // Computed independently: base64(sha1("x3JJHMbDL1EzLkh9GBhXDw==" + GUID)).
    assert_eq!(
        &accept_key(b"x3JJHMbDL1EzLkh9GBhXDw=="),
        b"HSmrc0sMlYUkAGmm5OPpG2HaGWk="
    );
}

mod server {
    use tickwire_codec::handshake::{
        ClientHandshake, HandshakeError, HandshakeStatus, Request, RequestStatus, ServerHandshake,
        write_rejection, write_response,
    };

    const REQUEST: &str = "GET /chat?x=1 HTTP/1.1\r\nHost: server.example.com\r\n\
        Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
        Sec-WebSocket-Protocol: chat, superchat\r\n\r\n";

    fn parse(req: &str) -> Result<RequestStatus<'_>, HandshakeError> {
        ServerHandshake::new().parse_request(req.as_bytes())
    }

    #[test]
    fn accepts_the_rfc_sample_and_computes_the_accept() {
        let Ok(RequestStatus::Complete { consumed, request }) = parse(REQUEST) else {
            panic!("{:?}", parse(REQUEST));
        };
        assert_eq!(consumed, REQUEST.len());
        assert_eq!(request.path, "/chat?x=1");
        assert_eq!(request.host, "server.example.com");
        assert_eq!(request.accept(), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        let offered: Vec<&str> = request.offered_protocols().collect();
        assert_eq!(offered, ["chat", "superchat"]);
    }

    #[test]
    fn each_request_rule_has_its_error() {
        let cases = [
            (REQUEST.replace("GET", "POST"), HandshakeError::NotGet),
            (
                REQUEST.replace("Host: server.example.com\r\n", ""),
                HandshakeError::MissingHost,
            ),
            (
                REQUEST.replace("Upgrade: websocket\r\n", ""),
                HandshakeError::MissingUpgrade,
            ),
            (
                REQUEST.replace("keep-alive, Upgrade", "keep-alive"),
                HandshakeError::MissingConnectionUpgrade,
            ),
            (
                REQUEST.replace("dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZQ=="),
                HandshakeError::InvalidKey,
            ),
            (
                REQUEST.replace("dGhlIHNhbXBsZSBub25jZQ==", "!GhlIHNhbXBsZSBub25jZQ=="),
                HandshakeError::InvalidKey,
            ),
            (
                REQUEST.replace(
                    "Sec-WebSocket-Version: 13\r\n",
                    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
                ),
                HandshakeError::InvalidKey,
            ),
            (
                REQUEST.replace("Version: 13", "Version: 8"),
                HandshakeError::UnsupportedVersion,
            ),
            (
                REQUEST.replace("HTTP/1.1", "HTTP/1.0"),
                HandshakeError::Malformed,
            ),
        ];
        for (req, error) in cases {
            assert_eq!(parse(&req), Err(error), "{req}");
        }
    }

    #[test]
    fn byte_at_a_time_and_size_cap() {
        let mut hs = ServerHandshake::new();
        for end in 0..REQUEST.len() {
            assert_eq!(
                hs.parse_request(&REQUEST.as_bytes()[..end]),
                Ok(RequestStatus::Partial)
            );
        }
        assert!(matches!(
            hs.parse_request(REQUEST.as_bytes()),
            Ok(RequestStatus::Complete { .. })
        ));
        let mut small = ServerHandshake::new();
        small.set_max_request_len(64);
        assert_eq!(
            small.parse_request(REQUEST.as_bytes()),
            Err(HandshakeError::TooLarge)
        );
    }

    #[test]
    fn rejections_name_the_problem() {
        let mut out = [0u8; 256];
        let n = write_rejection(&mut out, HandshakeError::UnsupportedVersion).unwrap();
        let text = std::str::from_utf8(&out[..n]).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 426 Upgrade Required\r\n"),
            "{text}"
        );
        assert!(text.contains("Sec-WebSocket-Version: 13\r\n"), "{text}");
        let n = write_rejection(&mut out, HandshakeError::InvalidKey).unwrap();
        assert!(out[..n].starts_with(b"HTTP/1.1 400 Bad Request\r\n"));
        assert_eq!(
            write_rejection(&mut out[..10], HandshakeError::InvalidKey),
            Err(HandshakeError::InsufficientSize { required: n })
        );
    }

    /// Our client against our server, both directions of the handshake.
    #[test]
    fn client_and_server_agree() {
        let request = Request {
            protocols: &["v2.json", "v1.json"],
            ..Request::new("localhost:9001", "/stream")
        };
        let mut client = ClientHandshake::new([42; 16]);
        let mut req = [0u8; 512];
        let n = client.write_request(&mut req, &request).unwrap();
        let mut server = ServerHandshake::new();
        let RequestStatus::Complete {
            request: upgrade, ..
        } = server.parse_request(&req[..n]).unwrap()
        else {
            panic!("partial");
        };
        let chosen = upgrade.offered_protocols().find(|p| *p == "v1.json");
        let mut resp = [0u8; 256];
        let m = write_response(&mut resp, upgrade.accept(), chosen).unwrap();
        assert_eq!(
            client.parse_response(&resp[..m], request.protocols),
            Ok(HandshakeStatus::Complete {
                consumed: m,
                protocol: Some("v1.json")
            })
        );
    }
}
