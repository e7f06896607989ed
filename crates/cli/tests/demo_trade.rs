//! `tickwire-feed demo --trade`: the quoting strategy against a simulated
//! Deribit that trades, run as a user runs it; its lines say what it did,
//! and it exits 0 only with fills and no order left open.

use crate::util::{bin, temp_dir};

#[test]
fn demo_trade_fills_prints_both_stages_and_leaves_no_order_open() {
    let dir = temp_dir("demo-trade");
    let out = bin()
        .args(["demo", "--trade", "--seconds", "5"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let line = |start: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}` line:\n{stdout}"))
            .to_owned()
    };
    let number = |l: &str, after: &str| -> u64 {
        let rest = &l[l.find(after).unwrap_or_else(|| panic!("{after} in {l}")) + after.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap_or_else(|_| panic!("{after} in {l}"))
    };
    let orders = line("orders sent ");
    assert!(number(&orders, "orders sent ") > 0, "{orders}");
    assert!(number(&orders, "acknowledged ") > 0, "{orders}");
    assert!(number(&line("fills "), "fills ") > 0);
    for stage in ["tick-to-trade: ", "round trip: "] {
        let l = line(stage);
        assert!(
            l.contains(" p50 ") && l.contains(" p99 ") && l.contains(" p99.9 "),
            "{l}"
        );
        assert!(number(&l, "(n=") > 0, "{l}");
    }
    let exit = line("cancel-all at exit: ");
    // Asked before the close: Deribit's cancel-on-disconnect cannot hide
    // a cancel-all that did not work.
    assert!(
        exit.ends_with("the simulator held 0 open once it was answered, before the close"),
        "{exit}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
