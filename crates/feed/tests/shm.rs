//! The shared-memory ring as files: a writer restarted (after a clean end
//! or a crash) replaces the ring at its path, and a reader of the old one
//! reads what is left there, then follows; and a writer in another
//! process, read through a read-only mapping. (The ring's logic alone is
//! tested on the heap, under Miri too, in `src/shm/tests.rs`.)

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tickwire_feed::shm::{Read, Reader, RingError, State, Writer};
use tickwire_feed::{Event, FeedId};
use tickwire_venues::book::Side;
use tickwire_venues::event::Kind;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickwire-shm-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Event `n`: its fields all derive from `n`.
fn nth(n: u64) -> Event {
    Event {
        instrument: FeedId(n as u32 % 5),
        exchange_ns: n * 3,
        recv_tsc: n,
        kind: Kind::BookDelta {
            side: if n.is_multiple_of(2) {
                Side::Bid
            } else {
                Side::Ask
            },
            price: n as i64 * 7,
            size: -(n as i64),
            update_id: n * 11,
            last: n.is_multiple_of(3),
        },
    }
}

/// A ring file's size for `capacity` slots.
fn ring_bytes(capacity: u64) -> u64 {
    128 + capacity * 128
}

/// The next read that is not `Empty`, polling until `within` has passed.
fn next_read(r: &mut Reader, within: Duration) -> Read {
    let deadline = Instant::now() + within;
    loop {
        match r.read() {
            Read::Empty if Instant::now() < deadline => std::thread::yield_now(),
            Read::Empty => panic!("nothing to read within {within:?}"),
            other => return other,
        }
    }
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

/// The files in `dir`: only the ring, no temporary file left.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A writer of 64 slots publishes 40 events, its reader reads 30; the
/// writer ends (`crash`: vanishes without a word), a new writer of 16
/// slots starts on the path and publishes 10. The reader reads the old
/// ring's last 10 (slots past the new file's end: the old file was not
/// truncated under it), then reattaches, then reads the new writer's 10
/// from its first, and nothing is lost or skipped.
fn restart(crash: bool) {
    let dir = temp_dir(if crash { "crash" } else { "end" });
    let path = dir.join("ring");
    let mut old = Writer::create(&path, 64, &[]).unwrap();
    let mut reader = Reader::open(&path).unwrap();
    assert_eq!(reader.generation(), old.generation());
    for n in 0..40 {
        assert!(old.publish(&nth(n)));
    }
    for n in 0..30 {
        assert_eq!(reader.read(), Read::Event(nth(n)));
    }
    let old_file = File::open(&path).unwrap();
    assert_eq!(old_file.metadata().unwrap().len(), ring_bytes(64));
    let first = old.generation();
    if crash {
        std::mem::forget(old);
        assert_eq!(reader.state(), State::Live);
    } else {
        drop(old);
        assert_eq!(reader.state(), State::Ended);
    }

    let mut new = Writer::create(&path, 16, &[]).unwrap();
    assert_ne!(new.generation(), first);
    assert_eq!(reader.state(), State::Superseded);
    for n in 1000..1010 {
        assert!(new.publish(&nth(n)));
    }
    // The old file is whole, and no longer at the path.
    assert_eq!(old_file.metadata().unwrap().len(), ring_bytes(64));
    let at_path = fs::metadata(&path).unwrap();
    assert_eq!(at_path.len(), ring_bytes(16));
    #[cfg(unix)]
    assert_ne!(inode(&old_file.metadata().unwrap()), inode(&at_path));
    assert_eq!(names_in(&dir), ["ring"]);

    for n in 30..40 {
        assert_eq!(reader.read(), Read::Event(nth(n)));
    }
    assert_eq!(
        next_read(&mut reader, Duration::from_secs(10)),
        Read::Reattached {
            generation: new.generation()
        }
    );
    assert_eq!(
        (reader.generation(), reader.state()),
        (new.generation(), State::Live)
    );
    for n in 1000..1010 {
        assert_eq!(reader.read(), Read::Event(nth(n)));
    }
    assert_eq!(reader.read(), Read::Empty);
    // And on: the new writer's next events, as they come.
    new.publish(&nth(1010));
    assert_eq!(reader.read(), Read::Event(nth(1010)));
    // A reader opened now is on the new ring.
    let mut late = Reader::open(&path).unwrap();
    late.rewind();
    assert_eq!(late.read(), Read::Event(nth(1000)));
    drop(new);
    assert_eq!(reader.state(), State::Ended);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reader_follows_a_writer_restarted_after_a_clean_end() {
    restart(false);
}

#[test]
fn a_reader_follows_a_writer_restarted_after_a_crash() {
    restart(true);
}

/// A ring renamed over the path by hand (the old one never marked) is
/// found by the reader's recheck of the path.
#[test]
fn a_ring_put_in_place_without_the_mark_is_found_by_the_recheck() {
    let dir = temp_dir("unmarked");
    let path = dir.join("ring");
    let mut old = Writer::create(&path, 8, &[]).unwrap();
    let mut reader = Reader::open(&path).unwrap();
    reader.set_recheck(Duration::from_millis(20));
    let mut new = Writer::create(dir.join("other"), 8, &[]).unwrap();
    new.publish(&nth(5));
    fs::rename(dir.join("other"), &path).unwrap();
    old.publish(&nth(4));
    assert_eq!(reader.read(), Read::Event(nth(4)));
    assert_eq!(reader.state(), State::Live);
    assert_eq!(
        next_read(&mut reader, Duration::from_secs(10)),
        Read::Reattached {
            generation: new.generation()
        }
    );
    assert_eq!(reader.read(), Read::Event(nth(5)));
    fs::remove_dir_all(&dir).unwrap();
}

/// Two processes' view: the writer's mapping and the reader's are two
/// mappings of one file, raced from two threads.
#[test]
fn a_reader_racing_the_writer_through_the_file_never_sees_a_torn_event() {
    const N: u64 = 500_000;
    let dir = temp_dir("race");
    let path = dir.join("ring");
    let mut w = Writer::create(&path, 64, &[]).unwrap();
    let mut r = Reader::open(&path).unwrap();
    let reader = std::thread::spawn(move || {
        let (mut read, mut lost, mut last) = (0u64, 0u64, None);
        while read + lost < N {
            match r.read() {
                Read::Event(e) => {
                    let n = e.recv_tsc;
                    assert_eq!(e, nth(n), "torn");
                    assert!(last.is_none_or(|l| n > l), "out of order");
                    last = Some(n);
                    read += 1;
                }
                Read::Lost(k) => lost += k,
                Read::Empty => std::hint::spin_loop(),
                Read::Reattached { .. } => panic!("nothing replaced the ring"),
            }
        }
        (read, lost, last)
    });
    for n in 0..N {
        w.publish(&nth(n));
    }
    let (read, lost, last) = reader.join().unwrap();
    assert_eq!(read + lost, N, "{read} read, {lost} lost");
    assert_eq!(last, Some(N - 1));
    assert!(read > 0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn publishing_to_and_reading_from_a_file_allocate_nothing() {
    let dir = temp_dir("alloc");
    let path = dir.join("ring");
    let mut w = Writer::create(&path, 1024, &[]).unwrap();
    let mut r = Reader::open(&path).unwrap();
    let ((), allocations) = tickwire_testkit::allocations(|| {
        for n in 0..1000 {
            w.publish(&nth(n));
            assert_eq!(r.read(), Read::Event(nth(n)));
            assert_eq!(r.read(), Read::Empty);
        }
    });
    assert_eq!(allocations, 0);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn foreign_files_and_bad_capacities_are_refused() {
    let dir = temp_dir("foreign");
    let path = dir.join("ring");
    assert!(matches!(
        Writer::create(&path, 6, &[]),
        Err(RingError::Capacity(6))
    ));
    assert!(matches!(Reader::open(&path), Err(RingError::Io(_))));
    fs::write(&path, [7u8; 4096]).unwrap();
    assert!(matches!(Reader::open(&path), Err(RingError::NotARing)));
    // A version-1 ring (the magic, then version 1) is another version.
    let mut v1 = vec![0u8; 64 + 16 * 128];
    v1[..8].copy_from_slice(b"twring01");
    v1[8] = 1;
    v1[16] = 16;
    fs::write(&path, &v1).unwrap();
    assert!(matches!(Reader::open(&path), Err(RingError::Version(1))));
    // A version-2 ring (no instrument table) too, with its version said.
    let mut v2 = vec![0u8; 128 + 16 * 128];
    v2[..8].copy_from_slice(b"twring01");
    v2[8] = 2;
    v2[16] = 16;
    v2[24] = 1;
    fs::write(&path, &v2).unwrap();
    match Reader::open(&path) {
        Err(e @ RingError::Version(2)) => assert!(e.to_string().contains("version 2"), "{e}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // A writer replaces a foreign file (without touching it: a reader of
    // it would not have been told anything), and keeps its permissions.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    }
    let foreign = File::open(&path).unwrap();
    let mut w = Writer::create(&path, 16, &[]).unwrap();
    assert_eq!(fs::read(&path).unwrap().len() as u64, ring_bytes(16));
    assert_eq!(foreign.metadata().unwrap().len(), v2.len() as u64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    let mut r = Reader::open(&path).unwrap();
    w.publish(&nth(1));
    assert_eq!(r.read(), Read::Event(nth(1)));
    assert_eq!(names_in(&dir), ["ring"]);
    fs::remove_dir_all(&dir).unwrap();
}

/// A reader in another process names the events: the ring's instrument
/// table (written before the ring is at its path) maps each id to its
/// venue, symbol and decimals.
#[test]
fn a_reader_names_the_events_from_the_rings_instrument_table() {
    use tickwire_feed::sink::Instrument;
    let dir = temp_dir("named");
    let path = dir.join("ring");
    let names: Vec<Instrument> = [("binance-spot", "BTCUSDT", 2, 8), ("okx", "ETH-USDT", 2, 6)]
        .into_iter()
        .map(|(venue, symbol, price_scale, size_scale)| Instrument {
            venue: venue.into(),
            symbol: symbol.into(),
            price_scale,
            size_scale,
        })
        .collect();
    let mut w = Writer::create(&path, 64, &names).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 128 + 2 * 128 + 64 * 128);
    let mut r = Reader::open(&path).unwrap();
    w.publish(&nth(1));
    let Read::Event(e) = r.read() else {
        panic!("no event")
    };
    let named = r.instrument(e.instrument).unwrap();
    assert_eq!(
        (
            named.venue.as_str(),
            named.symbol.as_str(),
            named.price_scale,
            named.size_scale
        ),
        ("okx", "ETH-USDT", 2, 6)
    );
    assert_eq!(r.instruments().len(), 2);
    fs::remove_dir_all(&dir).unwrap();
}

/// The environment variable that makes [`ring_writer_child_process`] the
/// writer of a ring at its value (otherwise it does nothing).
const CHILD_RING: &str = "TICKWIRE_SHM_TEST_CHILD_RING";
/// Events per step of the child's first phase: less than its ring's 64
/// slots, so none is overwritten before the parent reads it.
const STEP: u64 = 48;
const STEPS: u64 = 100;
/// Events of the second phase, published without waiting: ten laps.
const LAPS: u64 = 640;
/// Events of the third phase, raced against the reader.
const RACE: u64 = 300_000;

fn instruments() -> Vec<tickwire_feed::sink::Instrument> {
    (0..5)
        .map(|i| tickwire_feed::sink::Instrument {
            venue: "venue".into(),
            symbol: format!("SYM{i}"),
            price_scale: i,
            size_scale: 8,
        })
        .collect()
}

/// The writer's side of [`a_reader_in_another_process_reads_through_a_read_only_mapping`],
/// run by the test in a child process (this test binary again): it
/// publishes in the phases the parent asks for on its stdin, and says
/// what it did on its stdout.
#[test]
#[ignore = "the writer half of a_reader_in_another_process_reads_through_a_read_only_mapping, run by it"]
#[allow(clippy::print_stdout)] // Its stdout is the parent's to read.
fn ring_writer_child_process() {
    let Some(path) = std::env::var_os(CHILD_RING) else {
        return;
    };
    let mut asked = std::io::stdin().lines().map(Result::unwrap);
    let mut w = Writer::create(&path, 64, &instruments()).unwrap();
    println!("child: created {:x}", w.generation());
    let mut n = 0;
    for _ in 0..STEPS {
        assert_eq!(asked.next().as_deref(), Some("next"));
        for _ in 0..STEP {
            assert!(w.publish(&nth(n)));
            n += 1;
        }
        println!("child: published {n}");
    }
    assert_eq!(asked.next().as_deref(), Some("lap"));
    for _ in 0..LAPS {
        w.publish(&nth(n));
        n += 1;
    }
    println!("child: published {n}");
    assert_eq!(asked.next().as_deref(), Some("race"));
    for _ in 0..RACE {
        w.publish(&nth(n));
        n += 1;
    }
    drop(w);
    println!("child: ended {n}");
}

/// The child, killed if the test ends before it does.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How this process maps `path`: the permissions column of its line in
/// `/proc/self/maps` (`r--s`: read-only, shared).
#[cfg(target_os = "linux")]
fn mapped_as(path: &Path) -> Vec<String> {
    let path = fs::canonicalize(path).unwrap();
    fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(&*path.to_string_lossy()))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_owned())
        .collect()
}

/// A writer in another process, a reader here through its read-only
/// mapping (no Miri: a real file, mapped by two processes). Paced by the
/// reader, every event arrives, in order and whole; ten laps published
/// at once are said lost and the reader goes on from the oldest left;
/// raced, every event read is whole and in order and read + lost is all.
#[test]
fn a_reader_in_another_process_reads_through_a_read_only_mapping() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let dir = temp_dir("process");
    let path = dir.join("ring");
    let mut child = Child(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "shm::ring_writer_child_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_RING, &path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut to_child = child.0.stdin.take().unwrap();
    let (said, hear) = std::sync::mpsc::channel();
    let from_child = BufReader::new(child.0.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in from_child.lines().map_while(Result::ok) {
            // (The test harness may have begun the line: `test ... `.)
            if let Some(at) = line.find("child: ") {
                let _ = said.send(line[at + "child: ".len()..].to_owned());
            }
        }
    });
    let next_said = || {
        hear.recv_timeout(Duration::from_secs(60))
            .expect("the child said nothing within a minute")
    };
    let mut ask = |what: &str| writeln!(to_child, "{what}").unwrap();

    let created = next_said();
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(created, format!("created {:x}", r.generation()));
    #[cfg(target_os = "linux")]
    assert_eq!(mapped_as(&path), ["r--s"], "one read-only shared mapping");
    assert_eq!(r.instruments().len(), 5);
    assert_eq!(r.instruments()[3].symbol, "SYM3");
    assert_eq!(r.state(), State::Live);

    // Paced: each step waits for the reader, so nothing is lost.
    let mut n = 0;
    for _ in 0..STEPS {
        ask("next");
        assert_eq!(next_said(), format!("published {}", n + STEP));
        for _ in 0..STEP {
            assert_eq!(r.read(), Read::Event(nth(n)));
            n += 1;
        }
        assert_eq!(r.read(), Read::Empty);
    }

    // Ten laps ahead: the reader is told what it lost, then reads on.
    ask("lap");
    assert_eq!(next_said(), format!("published {}", n + LAPS));
    let Read::Lost(lost) = r.read() else {
        panic!("a reader ten laps behind was not told")
    };
    assert!(lost >= LAPS - 64, "{lost} lost");
    n += lost;
    while let Read::Event(e) = r.read() {
        assert_eq!(e, nth(n));
        n += 1;
    }
    assert_eq!(n, STEPS * STEP + LAPS, "read to the last event");

    // Raced.
    ask("race");
    let end = n + RACE;
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut read, mut lost) = (0, 0);
    while n < end {
        match r.read() {
            Read::Event(e) => {
                // Every event is the next one: a skip is said as `Lost`
                // first, never silent.
                assert_eq!(e, nth(n), "torn, out of order or skipped unsaid");
                read += 1;
                n += 1;
            }
            Read::Lost(k) => {
                assert!(k > 0, "nothing lost said as lost");
                lost += k;
                n += k;
            }
            Read::Empty => {
                assert!(
                    Instant::now() < deadline,
                    "{read} read, {lost} lost by the deadline"
                );
                std::hint::spin_loop();
            }
            Read::Reattached { .. } => panic!("nothing replaced the ring"),
        }
    }
    assert_eq!(n, end, "{read} read, {lost} lost");
    assert_eq!(read + lost, RACE, "read + lost is every event raced");
    assert!(read > 0);
    assert_eq!(next_said(), format!("ended {end}"));
    assert!(child.0.wait().unwrap().success());
    assert_eq!(r.state(), State::Ended);
    assert_eq!(r.read(), Read::Empty);
    fs::remove_dir_all(&dir).unwrap();
}
