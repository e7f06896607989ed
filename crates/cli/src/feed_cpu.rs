//! What `demo --max` says of the feed thread's CPU time: a message's
//! cost, the ceiling it makes, and whether the rate measured was that
//! ceiling.

/// Below this share of the span on its core, the feed thread was off it
/// part of the time: the rate measured is not its ceiling.
const FEED_BOUND: f64 = 0.9;

/// `demo --max`'s second line: the feed thread's CPU a message, the
/// ceiling that makes, and whether the rate measured was that ceiling
/// (the feed on its core throughout) or not: off its core, it either
/// waited for the simulator, which shares the machine (at few steps to a
/// write its market thread costs as much a message as the feed), or was
/// pushed off by other threads. With `--busy-poll` the feed spins, on its
/// core all along, and its CPU time says nothing the rate does not.
pub(crate) fn line(cpu: &tickwire_feed::demo::FeedCpu, busy_poll: bool) -> String {
    if busy_poll {
        return "the feed thread spins with --busy-poll: its CPU time is the span's, and says \
                nothing the rate does not"
            .to_string();
    }
    let head = format!(
        "the feed thread: {:.0} ns of CPU a message (its own ceiling {:.0} messages/s), on its \
         core {:.0} % of the time",
        cpu.per_message_ns,
        1e9 / cpu.per_message_ns.max(1e-9),
        cpu.busy * 100.0
    );
    if cpu.busy >= FEED_BOUND {
        format!("{head}: the feed bounded the rate")
    } else {
        format!(
            "{head}: off its core the rest (waiting for the simulator, or pushed off by other \
             threads), so the rate is not the feed's ceiling; more steps to a write (--burst) \
             make the simulator's part smaller"
        )
    }
}

#[cfg(test)]
mod tests {
    use tickwire_feed::demo::FeedCpu;

    use super::line as cpu_line;

    #[test]
    fn the_feed_cpu_line_says_which_side_bounded_the_rate() {
        let busy = FeedCpu {
            per_message_ns: 250.0,
            busy: 0.98,
        };
        let line = cpu_line(&busy, false);
        assert!(line.contains("250 ns of CPU a message"), "{line}");
        assert!(line.contains("ceiling 4000000 messages/s"), "{line}");
        assert!(
            line.contains("98 %") && line.contains("the feed bounded"),
            "{line}"
        );
        let waited = FeedCpu { busy: 0.6, ..busy };
        let line = cpu_line(&waited, false);
        assert!(
            line.contains("60 %") && line.contains("not the feed's ceiling"),
            "{line}"
        );
        assert!(!line.contains("the feed bounded"), "{line}");
        let line = cpu_line(&busy, true);
        assert!(
            line.contains("says nothing") && !line.contains("ns of CPU"),
            "{line}"
        );
    }
}
