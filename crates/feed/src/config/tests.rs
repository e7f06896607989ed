use super::*;

const GOOD: &str = r#"
poll = "busy-read"
[sinks]
jsonl = "-"
[[venue]]
name = "bn"
venue = "binance-spot"
instruments = ["BTCUSDT:2:5:1000", "ETHUSDT:2:4"]
endpoint = "wss://localhost:9443"
rest = "https://localhost:9443"
[[venue]]
venue = "okx"
instruments = ["BTC-USDT", "ETH-USDT:5"]
"#;

type Env<'a> = &'a [(&'a str, &'a str)];

fn parse(text: &str, env: &[(&str, &str)]) -> Result<FeedConfig, ConfigError> {
    FeedConfig::parse(
        text,
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
    )
}

#[test]
fn a_good_file_is_read_whole() {
    let c = parse(GOOD, &[]).unwrap();
    assert_eq!(c.poll, PollMode::BusyRead);
    assert_eq!(c.venues.len(), 2);
    assert_eq!(c.venues[0].name, "bn");
    assert_eq!(c.venues[1].name, "okx");
    assert_eq!(
        c.venues[0].instruments[1],
        InstrumentSpec::new("ETHUSDT", 2, 4, DEFAULT_DEPTH)
    );
    // Without decimals, the venue's: every value it sends fits.
    let (price, size) = Venue::Okx.default_scales();
    assert_eq!(
        c.venues[1].instruments,
        [
            InstrumentSpec::new("BTC-USDT", price, size, DEFAULT_DEPTH),
            InstrumentSpec::new("ETH-USDT", price, size, 5)
        ]
    );
    assert_eq!(c.sinks.jsonl.as_deref(), Some(Path::new("-")));
    assert_eq!(c.threads.len(), 1);
    assert_eq!(c.threads[0].venues, [0, 1]);
    assert_eq!(c.metrics.interval_ms, 1000);
}

#[test]
fn a_standby_line_and_a_lifetime_are_read() {
    let c = parse(
        GOOD,
        &[
            ("TICKWIRE_FEED_VENUE_BN_STANDBY", "true"),
            (
                "TICKWIRE_FEED_VENUE_BN_STANDBY_ENDPOINT",
                "wss://localhost:9444",
            ),
            ("TICKWIRE_FEED_VENUE_BN_CONNECTION_LIFETIME_S", "600"),
        ],
    )
    .unwrap();
    assert_eq!(
        c.venues[0].lines,
        LineSetup {
            standby: true,
            standby_endpoint: Some("wss://localhost:9444".into()),
            max_lifetime: Some(std::time::Duration::from_secs(600)),
        }
    );
    assert_eq!(c.venues[1].lines, LineSetup::default());
}

#[test]
fn environment_variables_override_the_file() {
    let c = parse(
        GOOD,
        &[
            ("TICKWIRE_FEED_POLL", "blocking"),
            ("TICKWIRE_FEED_SINKS_JSONL", "out.jsonl"),
            ("TICKWIRE_FEED_METRICS_INTERVAL_MS", "250"),
            ("TICKWIRE_FEED_VENUE_BN_ENDPOINT", "wss://127.0.0.1:1"),
            ("TICKWIRE_FEED_VENUE_OKX_QUOTES", "false"),
            ("OTHER", "ignored"),
            // The project's other variables are not the feed's.
            ("TICKWIRE_PYTHON", "/usr/bin/python3"),
            ("TICKWIRE_CLOCK", "monotonic"),
        ],
    )
    .unwrap();
    assert_eq!(c.poll, PollMode::Blocking);
    assert_eq!(c.sinks.jsonl.as_deref(), Some(Path::new("out.jsonl")));
    assert_eq!(c.metrics.interval_ms, 250);
    assert_eq!(c.venues[0].endpoint.as_deref(), Some("wss://127.0.0.1:1"));
    assert!(!c.venues[1].channels.quotes);
}

/// Where the SBE streams' key is read is configured, never the key; a key
/// source on a venue that takes none, or two sources, are refused.
#[test]
fn an_api_keys_source_is_read_for_the_venue_that_needs_one() {
    let sbe = |extra: &str| {
        format!("[[venue]]\nvenue = \"binance-spot-sbe\"\ninstruments = [\"BTCUSDT\"]\n{extra}")
    };
    let c = parse(&sbe(""), &[]).unwrap();
    assert_eq!(c.venues[0].api_key, None, "the default variable, at build");
    let c = parse(&sbe("api_key_env = \"MY_SBE_KEY\"\n"), &[]).unwrap();
    assert_eq!(c.venues[0].api_key, Some(ApiKey::Env("MY_SBE_KEY".into())));
    let c = parse(
        &sbe(""),
        &[("TICKWIRE_FEED_VENUE_BINANCE_SPOT_SBE_API_KEY_FILE", "/k")],
    )
    .unwrap();
    assert_eq!(c.venues[0].api_key, Some(ApiKey::File("/k".into())));
    let both = sbe("api_key_env = \"A\"\napi_key_file = \"/k\"\n");
    let e = parse(&both, &[]).unwrap_err();
    assert!(e.to_string().contains("not both"), "{e}");
    // The key itself where its source belongs: refused, never repeated.
    let key = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A";
    let e = parse(&sbe(&format!("api_key_env = \"{key}\"\n")), &[]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("`venue[0].api_key_env`") && !text.contains(key),
        "{text}"
    );
    for var in [
        "TICKWIRE_FEED_VENUE_BINANCE_SPOT_SBE_API_KEY",
        "TICKWIRE_FEED_VENUE_BINANCE_SPOT_SBE_API_KEY_ENV",
    ] {
        let text = parse(&sbe(""), &[(var, key)]).unwrap_err().to_string();
        assert!(text.contains(var) && !text.contains(key), "{text}");
    }
    let json =
        "[[venue]]\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\napi_key_env = \"A\"\n";
    let e = parse(json, &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("`venue[0].api_key_env`: binance-spot's streams take no API key"),
        "{e}"
    );
}

/// Each bad value is refused with its key named.
#[test]
fn bad_values_name_their_key() {
    // (file, environment, the key the error must name)
    let cases: &[(&str, Env<'_>, &str)] = &[
        (GOOD, &[("TICKWIRE_FEED_POLL", "spin")], "poll"),
        (
            GOOD,
            &[("TICKWIRE_FEED_SINKS_SHM_CAPACITY", "1000")],
            "sinks.shm_capacity",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_METRICS_INTERVAL_MS", "1")],
            "metrics.interval_ms",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_VENUE", "binance")],
            "venue[0].venue",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_ENDPOINT", "https://x")],
            "venue[0].endpoint",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_REST", "wss://x")],
            "venue[0].rest",
        ),
        (
            GOOD,
            &[(
                "TICKWIRE_FEED_VENUE_BN_STANDBY_ENDPOINT",
                "wss://localhost:9444",
            )],
            "venue[0].standby_endpoint",
        ),
        (
            GOOD,
            &[
                ("TICKWIRE_FEED_VENUE_BN_STANDBY", "true"),
                ("TICKWIRE_FEED_VENUE_BN_STANDBY_ENDPOINT", "https://x"),
            ],
            "venue[0].standby_endpoint",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_CONNECTION_LIFETIME_S", "1")],
            "venue[0].connection_lifetime_s",
        ),
        // Smaller than twice a 1000-level spot snapshot's weight (50).
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_REST_WEIGHT_LIMIT", "99")],
            "venue[0].rest_weight_limit",
        ),
        (
            "[[venue]]\nvenue = \"kraken\"\ninstruments = [\"BTC/USD:1:8:7000\"]",
            &[],
            "venue[0].instruments",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_BN_INSTRUMENTS", r#"["BTCUSDT:2:x"]"#)],
            "venue[0].instruments[0]",
        ),
        // The unknown key with its section, as the variable made it.
        (
            GOOD,
            &[("TICKWIRE_FEED_SINKS_COLOUR", "red")],
            "sinks.colour",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_VENUE_NOPE_X", "1")],
            "TICKWIRE_FEED_VENUE_NOPE_X",
        ),
        (
            GOOD,
            &[("TICKWIRE_FEED_TLS_CA_FILE", "/no/such/ca.pem")],
            "tls.ca_file",
        ),
        ("", &[], "venue"),
        (
            "poll = \"blocking\"\n[[venue]]\nvenue = \"okx\"\n",
            &[],
            "venue[0].instruments",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\", \"A:1:1:400\"]",
            &[],
            "venue[0].instruments[1]",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\"]\n[[thread]]\nvenues = [\"kraken\"]",
            &[],
            "thread[0].venues[0]",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\"]\n[[thread]]\ncore = 4096\nvenues = [\"okx\"]",
            &[],
            "thread[0].core",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\"]\n[[thread]]\npriority = 0\nvenues = [\"okx\"]",
            &[],
            "thread[0].priority",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\"]\n[[venue]]\nname = \"b\"\nvenue = \"okx\"\ninstruments = [\"A:1:1:400\"]\n[[thread]]\nvenues = [\"okx\"]",
            &[],
            "thread",
        ),
    ];
    for (text, env, key) in cases {
        let e = parse(text, env).expect_err(key);
        assert_eq!(e.key, *key, "{e}");
        assert!(!e.problem.is_empty());
    }
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_and_line() {
    let text = "poll = \"blocking\"\n[sinks]\nqueue = \"x\"\n";
    let e = parse(text, &[]).unwrap_err();
    assert_eq!(e.key, "sinks.queue", "{e}");
    assert_eq!(e.at, Some(Location { line: 3, column: 9 }), "{e}");
    let text = "[[venue]]\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n\
                [[venue]]\nvenue = \"kraken\"\ninstruments = [\"BTC/USD\"]\nstandby = \"yes\"\n";
    let e = parse(text, &[]).unwrap_err();
    assert_eq!(e.key, "venue[1].standby", "{e}");
    assert_eq!(
        e.at,
        Some(Location {
            line: 7,
            column: 11
        }),
        "{e}"
    );
    // From an override: the variable and its value named, not the file.
    let e = parse(GOOD, &[("TICKWIRE_FEED_SINKS_QUEUE", "\"x\"")]).unwrap_err();
    assert_eq!(e.key, "sinks.queue", "{e}");
    assert_eq!(
        e.env.as_deref(),
        Some(r#"TICKWIRE_FEED_SINKS_QUEUE="\"x\"""#),
        "{e}"
    );
    // A wrong value in the file that an override puts right is no error;
    // nor is a key the file leaves to an override.
    let fixed = "[[venue]]\nname = \"bn\"\nvenue = \"binance-spot\"\n\
                 instruments = [\"BTCUSDT\"]\nstandby = \"yes\"\n";
    let c = parse(fixed, &[("TICKWIRE_FEED_VENUE_BN_STANDBY", "true")]).unwrap();
    assert!(c.venues[0].lines.standby);
    let missing = "[[venue]]\nname = \"bn\"\nvenue = \"binance-spot\"\n";
    let c = parse(
        missing,
        &[("TICKWIRE_FEED_VENUE_BN_INSTRUMENTS", "[\"ETHUSDT\"]")],
    )
    .unwrap();
    assert_eq!(c.venues[0].instruments[0].symbol, "ETHUSDT");
    // A line of a multi-line array is no table header.
    let text = "[[venue]]\nvenue = \"okx\"\ninstruments = [\n  \"BTC-USDT\",\n]\nbooks = 3\n";
    let e = parse(text, &[]).unwrap_err();
    assert_eq!(e.key, "venue[0].books", "{e}");
    assert_eq!(e.at, Some(Location { line: 6, column: 9 }), "{e}");
}

#[test]
fn a_syntax_error_says_where() {
    let e = parse("poll = \n", &[]).unwrap_err();
    assert_eq!(e.at, Some(Location { line: 1, column: 8 }), "{e}");
}

/// A venue's override lands on that venue alone, even where another
/// venue's name is a prefix of its name (`bn` and `bn-2`).
#[test]
fn an_override_names_one_venue_by_its_whole_name() {
    let file = format!(
        "{GOOD}[[venue]]\nname = \"bn-2\"\nvenue = \"binance-spot\"\ninstruments = [\"BTCUSDT\"]\n"
    );
    let c = parse(
        &file,
        &[("TICKWIRE_FEED_VENUE_BN_2_ENDPOINT", "wss://127.0.0.1:2")],
    )
    .unwrap();
    assert_eq!(c.venues[0].name, "bn");
    assert_eq!(
        c.venues[0].endpoint.as_deref(),
        Some("wss://localhost:9443")
    );
    assert_eq!(c.venues[2].name, "bn-2");
    assert_eq!(c.venues[2].endpoint.as_deref(), Some("wss://127.0.0.1:2"));
    // And the shorter name still takes its own.
    let c = parse(
        &file,
        &[("TICKWIRE_FEED_VENUE_BN_ENDPOINT", "wss://127.0.0.1:1")],
    )
    .unwrap();
    assert_eq!(c.venues[0].endpoint.as_deref(), Some("wss://127.0.0.1:1"));
    assert_eq!(c.venues[2].endpoint, None);
}

#[test]
fn jsonl_files_rotate_at_their_size_and_a_bad_size_is_refused() {
    let c = parse(GOOD, &[]).unwrap();
    assert_eq!(c.sinks.jsonl_max_bytes, 256 << 20, "the default");
    let c = parse(GOOD, &[("TICKWIRE_FEED_SINKS_JSONL_MAX_MB", "3")]).unwrap();
    assert_eq!(c.sinks.jsonl_max_bytes, 3 << 20);
    let e = parse(GOOD, &[("TICKWIRE_FEED_SINKS_JSONL_MAX_MB", "0")]).unwrap_err();
    assert_eq!(e.key, "sinks.jsonl_max_mb", "{e}");
}

#[test]
fn the_recordings_sync_interval_is_optional_and_checked() {
    let with = |sync: &str| format!("{GOOD}\n[record]\npath = \"rec/x\"\n{sync}");
    let c = parse(&with(""), &[]).unwrap();
    assert_eq!(c.record.unwrap().sync_interval, None);
    let c = parse(&with("sync_ms = 250"), &[]).unwrap();
    assert_eq!(
        c.record.unwrap().sync_interval,
        Some(std::time::Duration::from_millis(250))
    );
    let e = parse(&with("sync_ms = 0"), &[]).unwrap_err().to_string();
    assert!(
        e.contains("record.sync_ms") && e.contains("between 1 and"),
        "{e}"
    );
}

/// An override's error names the variable and its value, whichever check
/// refused it (a type, a range, a list's element); a file's own error
/// names no variable.
#[test]
fn an_override_is_blamed_for_its_own_value_only() {
    let cases: &[(Env<'_>, &str, &str)] = &[
        (
            &[("TICKWIRE_FEED_METRICS_INTERVAL_MS", "abc")],
            "metrics.interval_ms",
            "TICKWIRE_FEED_METRICS_INTERVAL_MS=\"abc\"",
        ),
        (
            &[("TICKWIRE_FEED_METRICS_INTERVAL_MS", "1")],
            "metrics.interval_ms",
            "TICKWIRE_FEED_METRICS_INTERVAL_MS=\"1\"",
        ),
        (
            &[("TICKWIRE_FEED_VENUE_BN_INSTRUMENTS", "BTCUSDT")],
            "venue[0].instruments",
            "TICKWIRE_FEED_VENUE_BN_INSTRUMENTS=\"BTCUSDT\"",
        ),
        (
            &[("TICKWIRE_FEED_VENUE_BN_INSTRUMENTS", r#"["BTCUSDT:2:x"]"#)],
            "venue[0].instruments[0]",
            "TICKWIRE_FEED_VENUE_BN_INSTRUMENTS=",
        ),
        (
            &[
                ("TICKWIRE_FEED_POLL", "blocking"),
                ("TICKWIRE_FEED_SINKS_QUEUE", "[1]"),
            ],
            "sinks.queue",
            "TICKWIRE_FEED_SINKS_QUEUE=\"[1]\"",
        ),
    ];
    for (env, key, from) in cases {
        let e = parse(GOOD, env).expect_err(key);
        assert_eq!(e.key, *key, "{e}");
        assert!(e.env.as_deref().is_some_and(|s| s.starts_with(from)), "{e}");
        assert!(e.to_string().starts_with(from), "{e}");
    }
    // A list not written as TOML: the error says how to write one.
    let e = parse(GOOD, &[("TICKWIRE_FEED_VENUE_BN_INSTRUMENTS", "BTCUSDT")]).unwrap_err();
    assert!(e.problem.contains("written as TOML"), "{e}");
    // The file's own mistake, with an unrelated override: the file's.
    let text = "poll = \"blocking\"\n[sinks]\nqueue = \"x\"\n";
    let e = parse(text, &[("TICKWIRE_FEED_POLL", "blocking")]).unwrap_err();
    assert_eq!(
        (e.key.as_str(), e.env.as_deref()),
        ("sinks.queue", None),
        "{e}"
    );
}

/// How long `run` waits for a first connection: 30 s unless the file or
/// its variable says; 0 waits for ever; more than a day is refused.
#[test]
fn the_connect_deadline_has_a_default_a_key_and_a_variable() {
    use std::time::Duration;
    let c = parse(GOOD, &[]).unwrap();
    assert_eq!(c.connect_deadline, Some(Duration::from_secs(30)));
    let c = parse(&format!("connect_deadline_s = 5\n{GOOD}"), &[]).unwrap();
    assert_eq!(c.connect_deadline, Some(Duration::from_secs(5)));
    let c = parse(GOOD, &[("TICKWIRE_FEED_CONNECT_DEADLINE_S", "2")]).unwrap();
    assert_eq!(c.connect_deadline, Some(Duration::from_secs(2)));
    let c = parse(GOOD, &[("TICKWIRE_FEED_CONNECT_DEADLINE_S", "0")]).unwrap();
    assert_eq!(c.connect_deadline, None);
    let e = parse(&format!("connect_deadline_s = 86401\n{GOOD}"), &[]).unwrap_err();
    assert_eq!(e.key, "connect_deadline_s", "{e}");
}

const VENUE: &str = "[[venue]]\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n";

/// Bad files, each refused with the whole message an operator reads: the
/// file, line and column (from the parser's spans), the key's dotted path
/// and what was wrong or expected.
#[test]
fn bad_files_are_refused_with_the_whole_message() {
    let v = VENUE;
    let cases: &[(String, Env<'_>, &str)] = &[
        // Unknown keys, at each level.
        (
            format!("colour = 1\n{v}"),
            &[],
            "feed.toml:1:1: `colour`: unknown field `colour`, expected one of `poll`, `connect_deadline_s`, `check_instruments`, `metrics`, `sinks`, `record`, `tls`, `thread`, `venue`",
        ),
        (
            format!("{v}[metrics]\nhlog = \"x\"\nstdout = true\n"),
            &[],
            "feed.toml:6:1: `metrics.stdout`: unknown field `stdout`, expected one of `hlog`, `interval_ms`, `prometheus_port`, `stderr`",
        ),
        (
            format!("{v}[sinks]\ncolour = 1\n"),
            &[],
            "feed.toml:5:1: `sinks.colour`: unknown field `colour`, expected one of `jsonl`, `jsonl_max_mb`, `shm`, `shm_capacity`, `queue`, `aeron`",
        ),
        (
            format!("{v}[record]\npath = \"r\"\nsize = 1\n"),
            &[],
            "feed.toml:6:1: `record.size`: unknown field `size`, expected one of `path`, `max_file_mb`, `sync_ms`",
        ),
        (
            format!("{v}[tls]\nca = \"x\"\n"),
            &[],
            "feed.toml:5:1: `tls.ca`: unknown field `ca`, expected `ca_file`",
        ),
        (
            format!("{v}[[thread]]\nvenues = [\"okx\"]\ncpu = 1\n"),
            &[],
            "feed.toml:6:1: `thread[0].cpu`: unknown field `cpu`, expected one of `core`, `priority`, `venues`",
        ),
        (
            format!("{v}[[venue]]\nvenue = \"kraken\"\ninstruments = [\"BTC/USD\"]\nbook = true\n"),
            &[],
            "feed.toml:7:1: `venue[1].book`: unknown field `book`, expected one of `name`, `venue`, `instruments`, `trades`, `aggregate`, `quotes`, `books`, `endpoint`, `rest`, `rest_weight_limit`, `standby`, `standby_endpoint`, `connection_lifetime_s`, `api_key_env`, `api_key_file`",
        ),
        // A dotted key below `[[venue]]` is the venue's, as TOML reads it.
        (
            format!("{v}sinks.colour = 1\n"),
            &[],
            "feed.toml:4:1: `venue[0].sinks`: unknown field `sinks`, expected one of `name`, `venue`, `instruments`, `trades`, `aggregate`, `quotes`, `books`, `endpoint`, `rest`, `rest_weight_limit`, `standby`, `standby_endpoint`, `connection_lifetime_s`, `api_key_env`, `api_key_file`",
        ),
        (
            "venue = [{ venue = \"okx\", instruments = [\"A\"], nope = 1 }]\n".into(),
            &[],
            "feed.toml:1:48: `venue[0].nope`: unknown field `nope`, expected one of `name`, `venue`, `instruments`, `trades`, `aggregate`, `quotes`, `books`, `endpoint`, `rest`, `rest_weight_limit`, `standby`, `standby_endpoint`, `connection_lifetime_s`, `api_key_env`, `api_key_file`",
        ),
        // Values of the wrong type.
        (
            format!("{v}[sinks]\nqueue = \"x\"\n"),
            &[],
            r#"feed.toml:5:9: `sinks.queue`: invalid type: string "x", expected usize"#,
        ),
        (
            format!("{v}[sinks]\nqueue = -1\n"),
            &[],
            "feed.toml:5:9: `sinks.queue`: invalid value: integer `-1`, expected usize",
        ),
        (
            format!("sinks = 3\n{v}"),
            &[],
            "feed.toml:1:9: `sinks`: invalid type: integer `3`, expected the [sinks] table",
        ),
        (
            format!("{v}trades = \"yes\"\n"),
            &[],
            r#"feed.toml:4:10: `venue[0].trades`: invalid type: string "yes", expected a boolean"#,
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A\", 3]\n".into(),
            &[],
            "feed.toml:3:21: `venue[0].instruments[1]`: invalid type: integer `3`, expected a string",
        ),
        // Bad values.
        (
            format!("poll = \"spin\"\n{v}"),
            &[],
            "feed.toml:1:8: `poll`: `spin` is not one of blocking, busy-poll, busy-read",
        ),
        (
            format!("check_instruments = \"maybe\"\n{v}"),
            &[],
            "feed.toml:1:21: `check_instruments`: `maybe` is not one of required, best-effort, off",
        ),
        (
            format!("{v}[metrics]\ninterval_ms = 1\n"),
            &[],
            "feed.toml:5:15: `metrics.interval_ms`: 1 is not between 10 and 3600000",
        ),
        (
            format!("{v}endpoint = \"https://x\"\n"),
            &[],
            "feed.toml:4:12: `venue[0].endpoint`: `https://x`: expected wss:// or ws://",
        ),
        (
            "[[venue]]\nvenue = \"okx\"\ninstruments = [\"A\", \"B:2:x\"]\n".into(),
            &[],
            "feed.toml:3:21: `venue[0].instruments[1]`: `B:2:x`: size decimals must be 0 to 18, not `x`",
        ),
        (
            "[[venue]]\nvenue = \"binance\"\ninstruments = [\"A\"]\n".into(),
            &[],
            "feed.toml:2:9: `venue[0].venue`: `binance` is not a venue (one of binance-spot, binance-spot-sbe, binance-usdm, binance-coinm, okx, bybit-spot, bybit-linear, bybit-inverse, kraken, coinbase, deribit)",
        ),
        (
            format!("{v}[[thread]]\nvenues = [\"kraken\"]\n"),
            &[],
            "feed.toml:5:11: `thread[0].venues[0]`: no [[venue]] is named `kraken`",
        ),
        // Duplicate keys.
        (
            format!("poll = \"blocking\"\npoll = \"busy-poll\"\n{v}"),
            &[],
            "feed.toml:2:1: `poll`: duplicate key",
        ),
        (
            format!("{v}[sinks]\nqueue = 64\n[sinks]\nshm = \"x\"\n"),
            &[],
            "feed.toml:6:2: `sinks`: duplicate key",
        ),
        (
            format!("{v}[sinks]\nqueue = 64\nqueue = 128\n"),
            &[],
            "feed.toml:6:1: `sinks.queue`: duplicate key",
        ),
        // Missing keys.
        (
            "[[venue]]\nvenue = \"okx\"\n".into(),
            &[],
            r#"feed.toml:1:1: `venue[0].instruments`: missing: the venue's instruments (`instruments = ["BTCUSDT"]`)"#,
        ),
        (
            "[[venue]]\ninstruments = [\"A\"]\n".into(),
            &[],
            r#"feed.toml:1:1: `venue[0].venue`: missing: which venue this is (`venue = "binance-spot"`)"#,
        ),
        (
            format!("{v}[record]\nmax_file_mb = 1\n"),
            &[],
            r#"feed.toml:4:1: `record.path`: missing: the recording's base name (`path = "rec/feed"`)"#,
        ),
        (
            String::new(),
            &[],
            "feed.toml: `venue`: no [[venue]]: nothing to connect to",
        ),
        // Syntax.
        (
            format!("poll = \n{v}"),
            &[],
            "feed.toml:1:8: `poll`: string values must be quoted, expected literal string",
        ),
        (
            format!("{v}[sinks\n"),
            &[],
            "feed.toml:4:7: unclosed table, expected `]`",
        ),
        // An override's value: the variable named, not the file.
        (
            v.into(),
            &[("TICKWIRE_FEED_SINKS_QUEUE", "\"x\"")],
            r#"TICKWIRE_FEED_SINKS_QUEUE="\"x\"": `sinks.queue`: invalid type: string "x", expected usize"#,
        ),
        (
            v.into(),
            &[("TICKWIRE_FEED_VENUE_OKX_INSTRUMENTS", "A")],
            r#"TICKWIRE_FEED_VENUE_OKX_INSTRUMENTS="A": `venue[0].instruments`: invalid type: string "A", expected a sequence (a list is written as TOML: TICKWIRE_FEED_VENUE_OKX_INSTRUMENTS='["A", "B"]')"#,
        ),
    ];
    let mut wrong = Vec::new();
    for (text, env, said) in cases {
        let e = parse(text, env).expect_err(text);
        let message = e.in_file(Path::new("feed.toml")).to_string();
        if message != *said {
            wrong.push(format!("{text:?}\n  said     {message}\n  expected {said}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `[sinks.aeron]`: read whole where the build has Aeron, refused with how
/// to build it where it does not; a bad driver or channel named.
#[test]
fn the_aeron_sink_is_read_or_refused_with_how_to_build_it() {
    let venue = "[[venue]]\nvenue = \"okx\"\ninstruments = [\"BTC-USDT\"]\n";
    let good = format!(
        "{venue}[sinks.aeron]\nchannel = \"aeron:udp?endpoint=10.0.0.2:40456\"\nstream = 1001\n\
         driver = \"external\"\ndir = \"/dev/shm/aeron-feed\"\nbooks_every_s = 5\n"
    );
    if cfg!(feature = "aeron") {
        let c = parse(&good, &[]).unwrap();
        assert_eq!(
            c.sinks.aeron,
            Some(AeronSinkConfig {
                channel: "aeron:udp?endpoint=10.0.0.2:40456".into(),
                stream: 1001,
                embedded: false,
                dir: Some("/dev/shm/aeron-feed".into()),
                books_every: Some(std::time::Duration::from_secs(5)),
            })
        );
        for (text, key) in [
            (good.replace("external", "remote"), "sinks.aeron.driver"),
            (good.replace("aeron:udp", "udp"), "sinks.aeron.channel"),
            (good.replace("= 5", "= 0"), "sinks.aeron.books_every_s"),
        ] {
            let e = parse(&text, &[]).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    } else {
        let e = parse(&good, &[]).unwrap_err().to_string();
        assert!(
            e.contains("`sinks.aeron`") && e.contains("--features aeron"),
            "{e}"
        );
    }
    assert!(parse(venue, &[]).unwrap().sinks.aeron.is_none());
}
