//! Interoperability with a WebSocket server nobody here wrote: Python's
//! `websockets` package over TLS on loopback.
//!
//! The Python interpreter comes from `TICKWIRE_PYTHON` (set by `.ci/run`,
//! which installs `websockets` into a venv); without it the test tries
//! `python3`, and skips with one line if `websockets` is not importable.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use tickwire_net::{CloseCode, Disconnect, Driver, Endpoint};

use crate::util::{Ev, Recorder, pki, run_until, test_config, test_tls};

const SERVER: &str = r#"
import asyncio, ssl, sys
from websockets.asyncio.server import serve

async def handler(ws):
    await ws.send("hello from python")
    await ws.send(bytes(range(256)))
    async for message in ws:
        if message == "bye":
            await ws.close(1000, "bye")
            return
        await ws.send(message)

async def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[1], sys.argv[2])
    async with serve(handler, "127.0.0.1", 0, ssl=ctx) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()

asyncio.run(main())
"#;

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> Option<String> {
    if let Ok(python) = std::env::var("TICKWIRE_PYTHON") {
        return Some(python);
    }
    let ok = Command::new("python3")
        .args(["-c", "import websockets.asyncio.server"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| "python3".to_owned())
}

#[test]
fn python_websockets_server_over_tls() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python with `websockets` (set TICKWIRE_PYTHON)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tickwire-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key, script) = (
        dir.join("cert.pem"),
        dir.join("key.pem"),
        dir.join("server.py"),
    );
    std::fs::write(&cert, &pki().server_cert_pem).unwrap();
    std::fs::write(&key, &pki().server_key_pem).unwrap();
    std::fs::write(&script, SERVER).unwrap();
    let mut child = Kill(
        Command::new(&python)
            .arg(&script)
            .arg(&cert)
            .arg(&key)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python starts"),
    );
    let mut port = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let port: u16 = port.trim().parse().expect("the server prints its port");

    let mut driver = Driver::new(test_config(), &test_tls(), Recorder::once()).unwrap();
    let id = driver
        .connect(Endpoint::parse(&format!("wss://localhost:{port}/")).unwrap())
        .unwrap();
    run_until(&mut driver, "the greeting", |r| r.messages.len() == 2);
    let big = "κ".repeat(30_000); // 60 kB: several TLS records, one frame
    driver.send_text(id, &big).unwrap();
    driver.send_binary(id, &[9, 8, 7]).unwrap();
    run_until(&mut driver, "the echoes", |r| r.messages.len() == 4);
    driver.send_text(id, "bye").unwrap();
    run_until(&mut driver, "the close", |r| !r.closed.is_empty());

    let r = driver.handler();
    let got: Vec<&Ev> = r.messages.iter().map(|(_, e)| e).collect();
    assert_eq!(got[0], &Ev::Text("hello from python".into()));
    assert_eq!(got[1], &Ev::Binary((0..=255).collect()));
    assert_eq!(got[2], &Ev::Text(big));
    assert_eq!(got[3], &Ev::Binary(vec![9, 8, 7]));
    assert_eq!(
        r.closed,
        [(
            id,
            Disconnect::Remote {
                code: Some(CloseCode::NORMAL)
            }
        )]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
