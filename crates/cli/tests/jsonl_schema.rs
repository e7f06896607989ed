//! The JSON Lines schema in `docs/jsonl.md` against what the sink writes:
//! every line of a `run` against the simulator (its files rotated by
//! size), and a line of every event kind and gap reason, must have every
//! field the doc lists for its type, of the type it says, in its order,
//! and no other; and every type and field the doc lists must be written
//! somewhere. A field added to or dropped from one side alone fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tickwire_feed::sink::{Encoder, Instrument, rotated_path};
use tickwire_feed::{Event, FeedId};
use tickwire_venues::book::Side;
use tickwire_venues::event::{Aggressor, Kind};
use tickwire_venues::sync::Resync;

/// One documented field.
#[derive(Debug)]
struct Field {
    name: String,
    optional: bool,
    ty: String,
}

/// The doc's `schema` blocks: line type to its fields, in order.
fn schema() -> BTreeMap<String, Vec<Field>> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/jsonl.md");
    let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
    let mut types = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(kind) = line.strip_prefix("```schema ") else {
            continue;
        };
        let mut fields = Vec::new();
        for line in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            let mut words = line.split_whitespace();
            let (Some(name), Some(ty)) = (words.next(), words.next()) else {
                panic!("{kind}: a field needs a name and a type: {line:?}");
            };
            assert!(words.next().is_some(), "{kind}.{name}: no description");
            fields.push(Field {
                name: name.trim_end_matches('?').to_owned(),
                optional: name.ends_with('?'),
                ty: ty.to_owned(),
            });
        }
        assert_eq!(fields[0].name, "type", "{kind}: `type` comes first");
        assert_eq!(fields[0].ty, format!("\"{kind}\""), "{kind}");
        assert!(
            types.insert(kind.trim().to_owned(), fields).is_none(),
            "{kind} twice"
        );
    }
    assert!(
        types.len() >= 10,
        "schema blocks in {}: {types:?}",
        doc.display()
    );
    types
}

fn is_decimal(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        let digits = s.strip_prefix('-').unwrap_or(s);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
        !int.is_empty()
            && !frac.is_empty()
            && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    })
}

/// Whether `v` is of the documented type `ty`.
fn of_type(v: &Value, ty: &str) -> bool {
    ty.split('|').any(|t| match t {
        "null" => v.is_null(),
        "string" => v.is_string(),
        "decimal" => is_decimal(v),
        "uint" => v.is_u64(),
        "int" => v.is_i64(),
        "bool" => v.is_boolean(),
        "levels" => v.as_array().is_some_and(|levels| {
            levels.iter().all(|l| {
                l.as_array()
                    .is_some_and(|pair| pair.len() == 2 && pair.iter().all(is_decimal))
            })
        }),
        literal => literal
            .strip_prefix('"')
            .and_then(|l| l.strip_suffix('"'))
            .is_some_and(|l| v == l),
    })
}

/// Checks `line` against the schema; notes the fields it has in `seen`.
fn check(
    schema: &BTreeMap<String, Vec<Field>>,
    line: &str,
    seen: &mut BTreeSet<(String, String)>,
) -> Result<(), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
    let object = v.as_object().ok_or(format!("not an object: {line}"))?;
    let kind = object["type"].as_str().ok_or(format!("no type: {line}"))?;
    let fields = schema
        .get(kind)
        .ok_or(format!("type {kind} is not in docs/jsonl.md: {line}"))?;
    let mut at = 0;
    for f in fields {
        match object.get(&f.name) {
            None if f.optional => {}
            None => return Err(format!("{kind}: `{}` missing: {line}", f.name)),
            Some(value) => {
                if !of_type(value, &f.ty) {
                    return Err(format!("{kind}.{}: not {}: {line}", f.name, f.ty));
                }
                // In the documented order.
                let key = format!("\"{}\":", f.name);
                let Some(pos) = line[at..].find(&key) else {
                    return Err(format!("{kind}.{}: out of order: {line}", f.name));
                };
                at += pos + key.len();
                seen.insert((kind.to_owned(), f.name.clone()));
            }
        }
    }
    for key in object.keys() {
        if !fields.iter().any(|f| &f.name == key) {
            return Err(format!("{kind}: `{key}` is not in docs/jsonl.md: {line}"));
        }
    }
    Ok(())
}

/// A line of every event kind and gap reason, and the sink's own lines.
fn every_kind() -> String {
    let name = Instrument {
        venue: "okx".into(),
        symbol: "BTC-USDT".into(),
        price_scale: 1,
        size_scale: 8,
    };
    let mut enc = Encoder::new(vec![name]);
    let mut out = Vec::new();
    Encoder::header(&mut out);
    Encoder::dropped(5, &mut out);
    let delta = |side, last| Kind::BookDelta {
        side,
        price: 617_376,
        size: 5,
        update_id: 3,
        last,
    };
    let reasons = [
        Resync::Sequence {
            expected: 1,
            got: 3,
        },
        Resync::SnapshotStale {
            snapshot: 1,
            first_diff: 9,
        },
        Resync::Crossed,
        Resync::BadLevel,
        Resync::Checksum {
            expected: -5,
            got: 7,
        },
        Resync::Disconnected,
        Resync::DepthExhausted,
    ];
    let mut kinds = vec![
        Kind::Trade {
            price: 617_376,
            size: 123,
            aggressor: Aggressor::Buy,
            trade_id: 1,
        },
        Kind::Quote {
            bid_price: 1,
            bid_size: 2,
            ask_price: 3,
            ask_size: 0,
            update_id: 4,
        },
        Kind::BookSnapshot {
            update_id: 3,
            bids: 1,
            asks: 1,
            depth: 400,
        },
        delta(Side::Bid, false),
        delta(Side::Ask, true),
        Kind::BookValid { update_id: 3 },
        delta(Side::Ask, true),
        Kind::Resync,
        Kind::Disconnected,
        Kind::Rejected { code: 60018 },
    ];
    kinds.extend(reasons.map(|why| Kind::Gap { why }));
    for (n, kind) in kinds.into_iter().enumerate() {
        let e = Event {
            instrument: FeedId(0),
            // Some with a venue time, some without.
            exchange_ns: (n % 2) as u64 * 1_700_000_000_123_000_000,
            recv_tsc: 0,
            kind,
        };
        enc.encode(&e, 1_700_000_000_456_000_000, &mut out);
    }
    String::from_utf8(out).unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    crate::util::temp_dir(&format!("jsonl-{name}"))
}

/// `tickwire-feed run` against the simulator, its JSON Lines rotated at
/// 1 MiB, stopped (SIGTERM) once a third file has begun: the files.
fn run_against_the_simulator(dir: &Path) -> Vec<PathBuf> {
    let (simulator, ca_file) = crate::util::tls_simulator(dir, 5000);
    let port = simulator.addr().port();
    let config = dir.join("feed.toml");
    let jsonl = dir.join("events.jsonl");
    std::fs::write(
        &config,
        format!(
            r#"
[sinks]
jsonl = "{jsonl}"
jsonl_max_mb = 1
[tls]
ca_file = "{ca}"
[[venue]]
name = "sim"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:1000", "ETHUSDT:2:4:1000"]
endpoint = "wss://localhost:{port}"
rest = "https://localhost:{port}"
"#,
            jsonl = jsonl.display(),
            ca = ca_file.display(),
        ),
    )
    .unwrap();
    let mut child = crate::util::bin()
        .args(["run", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::wait_for(&mut child, "a second rotation", 60, || {
        rotated_path(&jsonl, 2).exists()
    });
    crate::util::signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    simulator.stop();
    (0..)
        .map(|n| rotated_path(&jsonl, n))
        .take_while(|p| p.exists())
        .collect()
}

#[test]
fn every_line_the_sink_writes_is_as_docs_jsonl_md_says() {
    let schema = schema();
    let mut seen = BTreeSet::new();
    let mut errors = Vec::new();
    let mut check_all = |text: &str, seen: &mut BTreeSet<_>| {
        for line in text.lines() {
            if let Err(e) = check(&schema, line, seen) {
                errors.push(e);
            }
        }
    };
    check_all(&every_kind(), &mut seen);

    let dir = temp_dir("run");
    let files = run_against_the_simulator(&dir);
    assert!(files.len() >= 3, "{files:?}");
    let mut run_kinds = BTreeSet::new();
    for (n, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap();
        // Each file reads on its own: its header first, then whole lines.
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            (&first["type"], &first["schema"], &first["version"]),
            (&"header".into(), &"tickwire.jsonl".into(), &1.into()),
            "{}",
            file.display()
        );
        assert!(text.ends_with('\n'));
        if let Some(next) = files.get(n + 1) {
            // Rotated only when the next lines would not fit: the next
            // file's first write (an event's line, after a `dropped` line
            // if there is one) would have taken this one past 1 MiB.
            let len = text.len();
            let next = std::fs::read_to_string(next).unwrap();
            let mut lines = next.lines().skip(1);
            let first = lines.next().unwrap();
            let mut chunk = first.len() + 1;
            if first.starts_with(r#"{"type":"dropped""#) {
                chunk += lines.next().map_or(0, |l| l.len() + 1);
            }
            assert!(
                len <= 1 << 20 && len + chunk > 1 << 20,
                "{}: {len} + {chunk}",
                file.display()
            );
        }
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            run_kinds.insert(v["type"].as_str().unwrap_or("?").to_owned());
        }
        check_all(&text, &mut seen);
    }
    assert!(
        errors.is_empty(),
        "{} lines differ from the doc:\n{}",
        errors.len(),
        errors[..errors.len().min(20)].join("\n")
    );
    // The run wrote what a run against the simulator has: books, trades,
    // quotes, and each instrument's end.
    for kind in [
        "header",
        "book_snapshot",
        "book_delta",
        "book_valid",
        "trade",
        "quote",
        "disconnected",
        "gap",
    ] {
        assert!(
            run_kinds.contains(kind),
            "the run wrote no {kind}: {run_kinds:?}"
        );
    }
    // Every documented type and field was written somewhere (`other` is
    // for kinds a newer feed adds: this one writes none).
    let mut unwritten = Vec::new();
    for (kind, fields) in &schema {
        if kind == "other" {
            continue;
        }
        for f in fields {
            if !seen.contains(&(kind.clone(), f.name.clone())) {
                unwritten.push(format!("{kind}.{}", f.name));
            }
        }
    }
    assert!(
        unwritten.is_empty(),
        "documented but never written: {unwritten:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_checker_refuses_a_field_missing_added_or_of_another_type() {
    let schema = schema();
    let mut seen = BTreeSet::new();
    let good = r#"{"type":"trade","venue":"okx","symbol":"BTC-USDT","exchange_ns":null,"recv_ns":1,"price":"1.5","size":"2.00","aggressor":"sell","trade_id":3}"#;
    assert_eq!(check(&schema, good, &mut seen), Ok(()));
    for bad in [
        good.replace(r#","trade_id":3"#, ""),
        good.replace(r#","trade_id":3"#, r#","trade_id":3,"fee":"0""#),
        good.replace(r#""price":"1.5""#, r#""price":1.5"#),
        good.replace(r#""exchange_ns":null"#, r#""exchange_ns":-1"#),
        good.replace(r#""aggressor":"sell""#, r#""aggressor":"maker""#),
        good.replace(r#""type":"trade""#, r#""type":"fill""#),
        // Out of order.
        good.replace(
            r#""venue":"okx","symbol":"BTC-USDT""#,
            r#""symbol":"BTC-USDT","venue":"okx""#,
        ),
    ] {
        assert!(check(&schema, &bad, &mut seen).is_err(), "{bad}");
    }
}
