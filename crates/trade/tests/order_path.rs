//! The order path's building blocks allocate nothing once made (counted).

use std::fmt::Write;

use tickwire_trade::{Asked, ClientOrderId, Out, Pending};

#[global_allocator]
static ALLOC: tickwire_testkit::CountingAllocator = tickwire_testkit::CountingAllocator;

#[test]
fn writing_messages_and_filing_requests_allocate_nothing() {
    let mut out = Out::new(4096, 16);
    let mut pending = Pending::new(16);
    let ((), n) = tickwire_testkit::allocations(|| {
        for k in 0..10u64 {
            let id = pending.file(Asked::Place(ClientOrderId(k)), k, k).unwrap();
            out.message(|m| {
                write!(m, "{{\"id\":{id},\"price\":")?;
                m.decimal(123_456, 2)?;
                m.write_str("}")
            })
            .unwrap();
            assert!(pending.answer(id).is_some());
        }
        out.clear();
    });
    assert_eq!(n, 0);
}
