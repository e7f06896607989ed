//! A handler acts from inside its callbacks: `Conn::fetch` (the id known at
//! once, the response arriving with it), `Conn::connect`, and
//! `Conn::send_text_to` another connection: no flag to set and carry out
//! later through `Driver::handler_mut`.

use tickwire_codec::OpCode;
use tickwire_net::{
    Conn, ConnId, Disconnect, Driver, DriverError, Endpoint, Handler, Payload, Reconnect,
    ResponseHead, Role, SendError, Stamps,
};

use crate::util::{Ev, TestServer, pki, run_until, test_config, test_tls};

/// On the stream's `"stale"`, fetches the snapshot and tells the order
/// connection, all from `on_message`; opens the order connection from
/// `on_open`.
#[derive(Default)]
struct Bot {
    stream: Option<ConnId>,
    orders: Option<ConnId>,
    snapshot: String,
    orders_url: String,
    /// The id `Conn::fetch` returned, and the one the response came with.
    asked: Option<ConnId>,
    answered: Vec<(ConnId, u16, String)>,
    opened: Vec<ConnId>,
    too_large: Option<SendError>,
    full: Option<(usize, SendError)>,
    no_slot: Option<(usize, DriverError)>,
}

impl Handler for Bot {
    fn on_open(&mut self, conn: &mut Conn<'_>) {
        self.opened.push(conn.id());
        if Some(conn.id()) == self.stream && self.orders.is_none() {
            let orders = Endpoint::parse(&self.orders_url).unwrap();
            self.orders = Some(conn.connect(orders).unwrap());
        }
    }

    fn on_message(&mut self, conn: &mut Conn<'_>, payload: Payload<'_>, _stamps: Stamps) {
        if payload.as_str() != Some("stale") {
            return;
        }
        let snapshot = Endpoint::parse(&self.snapshot).unwrap();
        self.asked = Some(conn.fetch(snapshot).unwrap());
        let orders = self.orders.unwrap();
        conn.send_text_to(orders, "cancel all").unwrap();
        // The queue is bounded and never grows: a message larger than it
        // is refused at once, and so is the 257th message of a callback.
        let huge = "x".repeat(test_config().outbox_size + 1);
        self.too_large = conn.send_text_to(orders, &huge).err();
        let mut queued = 1;
        while queued < 300 {
            match conn.send_text_to(orders, "") {
                Ok(()) => queued += 1,
                Err(e) => {
                    self.full = Some((queued, e));
                    break;
                }
            }
        }
        // Every slot taken: a fetch more is refused, the slots taken so far
        // are kept.
        let mut fetches = 0;
        loop {
            let snapshot = Endpoint::parse(&self.snapshot).unwrap();
            match conn.fetch(snapshot) {
                Ok(_) => fetches += 1,
                Err(e) => {
                    self.no_slot = Some((fetches, e));
                    break;
                }
            }
        }
    }

    fn on_response(&mut self, id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        let text = String::from_utf8_lossy(&body[..len]).into_owned();
        self.answered.push((id, head.status, text));
    }

    fn on_close(&mut self, _id: ConnId, _role: Role, _reason: &Disconnect) -> Reconnect {
        Reconnect::No
    }
}

#[test]
fn a_handler_fetches_connects_and_sends_to_another_connection_from_its_callbacks() {
    let tls = Some(pki().server.clone());
    let orders = TestServer::start(tls.clone(), |peer, _, log| {
        peer.upgrade()?;
        let _ = log.send(format!("{:?}", peer.recv_data()?));
        peer.drain_until_eof();
        Ok(())
    });
    let snapshots = TestServer::start(tls.clone(), |peer, _, log| {
        let head = peer.read_http_head()?;
        let _ = log.send(head.lines().next().unwrap_or_default().to_owned());
        peer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"book\":\"ok\"}")?;
        peer.drain_until_eof();
        Ok(())
    });
    // The stream waits for the order connection to be up (its request
    // logged by the test) before it says "stale".
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let go_rx = std::sync::Mutex::new(go_rx);
    let stream = TestServer::start(tls, move |peer, _, _| {
        peer.upgrade()?;
        let _ = go_rx.lock().unwrap().recv();
        peer.send(OpCode::Text, b"stale")?;
        peer.drain_until_eof();
        Ok(())
    });
    let bot = Bot {
        snapshot: format!("https://localhost:{}/depth?limit=5", snapshots.port),
        orders_url: orders.url(true, "/orders"),
        ..Bot::default()
    };
    let mut driver = Driver::new(test_config(), &test_tls(), bot).unwrap();
    let id = driver
        .connect(Endpoint::parse(&stream.url(true, "/stream")).unwrap())
        .unwrap();
    driver.handler_mut().stream = Some(id);
    run_until(&mut driver, "both connections open", |b| {
        b.opened.len() == 2
    });
    go_tx.send(()).unwrap();
    // The one asked for, and the one that took the last free slot.
    run_until(&mut driver, "both snapshots", |b| b.answered.len() == 2);
    let bot = driver.handler();
    let asked = bot.asked.unwrap();
    let (_, status, body) = bot
        .answered
        .iter()
        .find(|(id, ..)| *id == asked)
        .expect("the response came with the id fetch gave");
    assert_eq!((*status, body.as_str()), (200, "{\"book\":\"ok\"}"));
    assert_eq!(snapshots.next_log(), "GET /depth?limit=5 HTTP/1.1");
    assert_eq!(
        orders.next_log(),
        format!("{:?}", Ev::Text("cancel all".into()))
    );
    assert_eq!(bot.too_large, Some(SendError::TooLarge));
    assert_eq!(bot.full, Some((256, SendError::Full)));
    // Two slots are the stream's and the orders'; the first fetch is the
    // one whose response came.
    let slots = test_config().max_connections;
    assert_eq!(bot.no_slot, Some((slots - 3, DriverError::NoFreeSlot)));
}
