//! The feed and a subscriber on two hosts: two network namespaces joined
//! by a veth pair, the simulator and the feed in one, `subscribe` in the
//! other, over UDP unicast and multicast, with 1 % of the data frames
//! lost on the way in. Every event still arrives, in order, equal to the
//! feed's own JSON Lines sink, and the subscriber's sequence check sees no
//! gap: Aeron's NAKs and retransmissions repaired the loss, and its own
//! counters say there was loss to repair.
//!
//! The loss is the C media driver's own loss generator, in the
//! subscriber's driver only (Aeron C sources, `aeron-driver/src/main/c`):
//! - `aeron_driver_context.c` reads `AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS`
//!   when the driver's context is made and loads the interceptors it names
//!   (`media/aeron_udp_channel_transport_bindings.c`: `loss` is
//!   `aeron_udp_channel_interceptor_loss_load`), put in front of every UDP
//!   transport's incoming path;
//! - `media/aeron_udp_channel_transport_loss.c` reads
//!   `AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS` (`rate`, `seed`,
//!   `recv-msg-mask`, the mask in hex) once, on the first transport, and
//!   drops an incoming frame when `1 << frame type` is in the mask and a
//!   draw is within the rate: data frames are type `0x01`
//!   (`protocol/aeron_udp_protocol.h`), so the mask `0x2` drops data
//!   frames only, never setup, status or NAK frames;
//! - the driver counts each NAK it sends in the system counter "NAKs
//!   sent" (`aeron_system_counters.c`), which `subscribe` with an embedded
//!   driver prints in its last line: a NAK is sent only for a gap in a
//!   stream's term, so more than none proves frames were lost and asked
//!   for again.
//!
//! Namespaces need privilege and iproute2: where `ip netns add` fails the
//! tests say why and pass (CI runs as root). Multicast across the pair
//! needs the kernel to route 239.255.0.0/16 out of the given interface;
//! where nothing arrives that way the multicast test says so and passes.

use std::process::{Command, Stdio};

use super::{Lines, Running, assert_same_events, driver_dir, events_of, exit_of, feed_config};
use crate::util::{signal, temp_dir, wait_for};

/// Data frames lost on the way into the subscriber's driver.
const LOSS_ARGS: &str = "rate=0.01|recv-msg-mask=0x2";

/// Where the simulator listens, inside the feed's namespace (a namespace
/// of this test's own: no other listener).
const SIM_PORT: u16 = 9443;

/// Two network namespaces, `a` (10.231.N.1) and `b` (10.231.N.2), joined by
/// a veth pair; removed (with the pair) when dropped.
struct Hosts {
    a: String,
    b: String,
    net: u8,
    made: Vec<String>,
}

impl Hosts {
    /// Makes the pair, named after `tag` and this process; `Err` (why)
    /// when namespaces cannot be made here at all.
    fn make(tag: &str) -> Result<Hosts, String> {
        let pid = std::process::id();
        let mut hosts = Hosts {
            a: format!("tw{tag}{pid}a"),
            b: format!("tw{tag}{pid}b"),
            net: (pid % 250) as u8 + 1,
            made: Vec::new(),
        };
        for ns in [hosts.a.clone(), hosts.b.clone()] {
            match Command::new("ip").args(["netns", "add", &ns]).output() {
                Ok(o) if o.status.success() => hosts.made.push(ns),
                Ok(o) => {
                    return Err(format!(
                        "`ip netns add {ns}`: {}",
                        String::from_utf8_lossy(&o.stderr).trim()
                    ));
                }
                Err(e) => return Err(format!("`ip netns add {ns}`: {e}")),
            }
        }
        let (a, b, n) = (hosts.a.clone(), hosts.b.clone(), hosts.net);
        ip(&[
            "-n", &a, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1", "netns", &b,
        ]);
        for (ns, dev, host) in [(&a, "veth0", 1), (&b, "veth1", 2)] {
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("10.231.{n}.{host}/24"),
                "dev",
                dev,
            ]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        Ok(hosts)
    }

    /// The address of host `a` (1) or `b` (2) on the pair.
    fn addr(&self, host: u8) -> String {
        format!("10.231.{}.{host}", self.net)
    }

    /// `tickwire-feed` run inside namespace `ns` (`ip netns exec` execs it
    /// in place: the child's pid is the program's, for signals).
    fn feed_bin(&self, ns: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_tickwire-feed")]);
        for (k, _) in std::env::vars() {
            if k.starts_with("TICKWIRE_FEED_") || k.starts_with("AERON_") {
                c.env_remove(k);
            }
        }
        c
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in &self.made {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Runs `ip ARGS`, failing the test if it fails.
fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().unwrap();
    assert!(
        o.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr).trim()
    );
}

/// How a run across the pair ended.
enum Across {
    /// Every check passed.
    Passed,
    /// Nothing reached the subscriber (why).
    NothingArrived(String),
}

/// The simulator and the feed in `hosts.a`, publishing on `publish`; the
/// subscriber in `hosts.b` on `subscribe`, losing 1 % of the data frames;
/// all checks.
fn across(hosts: &Hosts, name: &str, publish: &str, subscribe: &str) -> Across {
    let dir = temp_dir(name);
    let ca = dir.join("sim-ca.pem");
    let mut sim = Running {
        child: hosts
            .feed_bin(&hosts.a)
            .args(["sim", "--listen", &format!("127.0.0.1:{SIM_PORT}")])
            .args(["--venues", "binance-spot", "--rate", "2000", "--ca-out"])
            .arg(&ca)
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: None,
    };
    let mut sim_said = Lines::of(sim.child.stderr.take().unwrap());
    sim_said.wait_for("trust ", 60);

    // The subscriber first, its own driver losing data frames.
    let sub_driver = driver_dir(&format!("{name}-sub"));
    let out = dir.join("subscriber.jsonl");
    let mut sub = Running {
        child: hosts
            .feed_bin(&hosts.b)
            .args(["subscribe", "--aeron", subscribe, "--stream", "1001"])
            .arg("--dir")
            .arg(&sub_driver)
            .args(["--embedded-driver", "--idle", "5s", "--out"])
            .arg(&out)
            .env("AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS", "loss")
            .env("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS", LOSS_ARGS)
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: Some(sub_driver.clone()),
    };
    let mut sub_said = Lines::of(sub.child.stderr.take().unwrap());
    sub_said.wait_for("media driver in", 60);

    let feed_driver = driver_dir(&format!("{name}-feed"));
    let jsonl = dir.join("feed.jsonl");
    let config = feed_config(
        &dir,
        SIM_PORT,
        &ca,
        &jsonl,
        &format!(
            "channel = \"{publish}\"\nstream = 1001\ndriver = \"embedded\"\ndir = \"{}\"",
            feed_driver.display()
        ),
    );
    let mut feed = Running {
        child: hosts
            .feed_bin(&hosts.a)
            .args(["run", "--config"])
            .arg(&config)
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        driver: Some(feed_driver.clone()),
    };
    let mut feed_said = Lines::of(feed.child.stderr.take().unwrap());

    // Something across first (multicast may not route here), then a few
    // thousand events, enough frames for 1 % of them to be some.
    let arrived = |min: u64| std::fs::metadata(&out).is_ok_and(|m| m.len() > min);
    let header = 2_000;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !arrived(header) {
        assert!(
            feed.child.try_wait().unwrap().is_none(),
            "the feed exited; it said:\n{}",
            feed_said.seen.join("\n")
        );
        if std::time::Instant::now() > deadline {
            return Across::NothingArrived(format!(
                "no event reached the subscriber in 30 s (its output: {} bytes)",
                std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0)
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    wait_for(&mut feed.child, "events across the pair", 60, || {
        arrived(1_500_000)
    });
    signal(&feed.child, "-TERM");
    let status = exit_of(&mut feed.child, 60);
    let summary = feed_said.wait_for("aeron:", 10);
    assert!(
        status.success(),
        "the feed: {status}; it said:\n{}",
        feed_said.seen.join("\n")
    );
    assert!(summary.contains(" 0 dropped"), "{summary}");
    // The subscriber stops 5 s after the last event.
    let status = exit_of(&mut sub.child, 60);
    let end = sub_said.wait_for("events in", 10);
    assert!(status.success(), "the subscriber: {status}: {end}");
    assert!(end.contains("gaps 0  lost 0  bad 0"), "{end}");
    let naks = number_after(&end, "NAKs sent ");
    assert!(naks > 0, "no NAK sent, so no loss to repair: {end}");

    let (feed_events, got) = (events_of(&jsonl), events_of(&out));
    assert!(feed_events.len() > 3000, "{} events", feed_events.len());
    // Counted in the stream's events (a book snapshot's levels are one
    // JSON line but an event each).
    assert_eq!(
        number_after(&end, "subscribe: "),
        number_after(&summary, "aeron: "),
        "events received ({end}) and published ({summary})"
    );
    assert_same_events(&feed_events, &got);
    eprintln!(
        "{name}: {} events across, {naks} NAKs sent for the lost frames",
        got.len()
    );
    // Both have exited: their drivers removed their directories (the
    // guards' clean-up, below, would hide it).
    assert!(!feed_driver.exists() && !sub_driver.exists());
    drop((feed, sub, sim));
    let _ = std::fs::remove_dir_all(&dir);
    Across::Passed
}

/// The number just after `text` in `line`.
fn number_after(line: &str, text: &str) -> u64 {
    let at = line
        .find(text)
        .unwrap_or_else(|| panic!("no {text:?} in {line}"))
        + text.len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {text:?} in {line}"))
}

/// Namespaces for one test, or `None` (the reason said) where they
/// cannot be made.
fn hosts_or_skip(tag: &str, test: &str) -> Option<Hosts> {
    match Hosts::make(tag) {
        Ok(h) => Some(h),
        Err(why) => {
            eprintln!("{test}: skipped: cannot make network namespaces: {why}");
            None
        }
    }
}

/// Unicast from the feed's host to the subscriber's address.
#[test]
fn over_udp_unicast_between_two_hosts_with_loss_every_event_arrives_in_order() {
    let test = "aeron::hosts unicast";
    let Some(hosts) = hosts_or_skip("u", test) else {
        return;
    };
    let channel = format!("aeron:udp?endpoint={}:40456", hosts.addr(2));
    match across(&hosts, "aeron-hosts-unicast", &channel, &channel) {
        Across::Passed => {}
        Across::NothingArrived(why) => panic!("{why}"),
    }
}

/// Multicast on the pair: the publisher's and the subscriber's interface
/// named, the data group's last byte odd (Aeron's control group is the
/// next address).
#[test]
fn over_udp_multicast_between_two_hosts_with_loss_every_event_arrives_in_order() {
    let test = "aeron::hosts multicast";
    let Some(hosts) = hosts_or_skip("m", test) else {
        return;
    };
    let group = format!("239.255.{}.1:40457", hosts.net);
    let publish = format!("aeron:udp?endpoint={group}|interface={}", hosts.addr(1));
    let subscribe = format!("aeron:udp?endpoint={group}|interface={}", hosts.addr(2));
    match across(&hosts, "aeron-hosts-multicast", &publish, &subscribe) {
        Across::Passed => {}
        Across::NothingArrived(why) => {
            eprintln!("{test}: skipped: multicast does not work across the veth pair here: {why}")
        }
    }
}
