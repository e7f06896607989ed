//! A handler acts from inside its callbacks: `Conn::fetch` (the id known at
//! once, the response arriving with it), `Conn::connect`, and
//! `Conn::send_text_to` another connection: no flag to set and carry out
//! later through `Driver::handler_mut`.

use tickwire_codec::OpCode;
use tickwire_net::{
    Conn, ConnId, Disconnect, Driver, Endpoint, Handler, Payload, Reconnect, ResponseHead, Role,
    SendError, Stamps,
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
    answered: Option<(ConnId, u16, String)>,
    opened: Vec<ConnId>,
    too_many: Option<SendError>,
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
        // is refused at once.
        let huge = "x".repeat(test_config().outbox_size + 1);
        self.too_many = conn.send_text_to(orders, &huge).err();
    }

    fn on_response(&mut self, id: ConnId, head: ResponseHead, body: &mut [u8], len: usize) {
        let text = String::from_utf8_lossy(&body[..len]).into_owned();
        self.answered = Some((id, head.status, text));
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
    run_until(&mut driver, "the snapshot", |b| b.answered.is_some());
    let bot = driver.handler();
    let (answered, status, body) = bot.answered.clone().unwrap();
    assert_eq!(
        Some(answered),
        bot.asked,
        "the response came with the id fetch gave"
    );
    assert_eq!((status, body.as_str()), (200, "{\"book\":\"ok\"}"));
    assert_eq!(snapshots.next_log(), "GET /depth?limit=5 HTTP/1.1");
    assert_eq!(
        orders.next_log(),
        format!("{:?}", Ev::Text("cancel all".into()))
    );
    assert_eq!(bot.too_many, Some(SendError::TooLarge));
}
