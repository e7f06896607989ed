//! The Prometheus page of a running feed shows what the feed counted: each
//! venue's messages, bytes, undecodable messages and reconnects (the
//! recorders'), its books, books valid, gaps and resyncs, and the feed's
//! events, snapshots and lost connections by cause; every one checked
//! against [`FeedStats`] after a connection was reset under the feed.

use crate::common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tickwire_feed::live::FeedStats;
use tickwire_tsc::ExportConfig;

use common::Rig;

/// `GET /metrics`: every sample, by its name and labels as written.
fn scrape(addr: SocketAddr) -> HashMap<String, f64> {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_owned(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_prometheus_page_shows_what_the_feed_counted() {
    for venue in common::venues() {
        let mut rig = Rig::start(venue);
        let exporter = rig
            .metrics
            .export(ExportConfig {
                interval: Duration::from_millis(20),
                prometheus_port: Some(0),
                ..ExportConfig::default()
            })
            .unwrap();
        let feeds = vec![Arc::clone(&rig.stats)];
        rig.metrics.add_page(Arc::new(move |out: &mut String| {
            FeedStats::prometheus(&feeds, None, out)
        }));
        let addr = exporter.metrics_addr().unwrap();
        // A reset under venue `a`: a reconnect, a gap, a resync.
        rig.run_messages(1000, 30);
        rig.proxies[0].reset_all();
        rig.wait("the reset's reconnect", 30, |r| r.reconnects() >= 1);
        rig.wait("both books valid again", 30, |r| r.valid() == 2);
        rig.run_messages(500, 30);

        // The feed is not polled from here: its counters stand still, and
        // the page shows them from the next export on.
        let s = &rig.stats;
        let g = FeedStats::get;
        let mut expected: Vec<(String, u64)> = Vec::new();
        for v in s.venues.iter() {
            let n = &v.name;
            expected.extend([
                (
                    format!("tickwire_messages_total{{stream=\"{n}\"}}"),
                    g(&v.messages),
                ),
                (
                    format!("tickwire_errors_total{{stream=\"{n}\"}}"),
                    g(&v.decode_errors),
                ),
                (
                    format!("tickwire_reconnects_total{{stream=\"{n}\"}}"),
                    g(&v.reconnects),
                ),
                (format!("tickwire_books{{venue=\"{n}\"}}"), v.books),
                (
                    format!("tickwire_books_valid{{venue=\"{n}\"}}"),
                    g(&v.books_valid),
                ),
                (format!("tickwire_gaps_total{{venue=\"{n}\"}}"), g(&v.gaps)),
                (
                    format!("tickwire_resyncs_total{{venue=\"{n}\"}}"),
                    g(&v.resyncs),
                ),
                (
                    format!("tickwire_rejections_total{{venue=\"{n}\"}}"),
                    g(&v.rejections),
                ),
                // Connected (twice: the first, and after the reset), never
                // failed to connect.
                (
                    format!("tickwire_connections_total{{venue=\"{n}\"}}"),
                    g(&v.connections),
                ),
                (
                    format!("tickwire_connect_failures_total{{venue=\"{n}\"}}"),
                    g(&v.connect_failures),
                ),
                (format!("tickwire_connected{{venue=\"{n}\"}}"), 1),
                (format!("tickwire_never_connected{{venue=\"{n}\"}}"), 0),
            ]);
        }
        let lost = &s.lost;
        expected.extend([
            ("tickwire_events_total".into(), g(&s.events)),
            ("tickwire_snapshots_total".into(), g(&s.snapshots)),
            (
                "tickwire_snapshot_failures_total".into(),
                g(&s.fetch_failures),
            ),
            (
                "tickwire_resubscriptions_total".into(),
                g(&s.resubscriptions),
            ),
            ("tickwire_ignored_total".into(), g(&s.ignored)),
            (
                "tickwire_connections_lost_total{cause=\"closed\"}".into(),
                g(&lost.closed),
            ),
            (
                "tickwire_connections_lost_total{cause=\"socket\"}".into(),
                g(&lost.socket),
            ),
            (
                "tickwire_connections_lost_total{cause=\"timeout\"}".into(),
                g(&lost.timeout),
            ),
        ]);
        // What the scenario made happen, so the comparison means something.
        let a = &s.venues[0];
        assert!(g(&a.reconnects) >= 1 && g(&a.gaps) >= 1, "{venue}");
        assert!(g(&a.messages) >= 750 && g(&a.books_valid) == 1, "{venue}");
        assert!(g(&lost.closed) + g(&lost.socket) >= 1, "{venue}");

        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let page = scrape(addr);
            let wrong: Vec<_> = expected
                .iter()
                .filter(|(k, v)| page.get(k) != Some(&(*v as f64)))
                .map(|(k, v)| format!("{k}: page {:?}, feed {v}", page.get(k)))
                .collect();
            if wrong.is_empty() {
                // Bytes: at least a byte per message.
                let bytes = page["tickwire_bytes_total{stream=\"a\"}"];
                assert!(bytes >= g(&a.messages) as f64, "{venue}: {bytes} bytes");
                break;
            }
            assert!(Instant::now() < deadline, "{venue}: {wrong:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        exporter.finish().unwrap();
    }
}
