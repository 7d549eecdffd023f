//! The run store against a real S3-compatible server started here on 127.0.0.1:
//! `moto_server` from PyPI's `moto[server]` (scripts/setup.sh installs it into .venv).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use store::RunStore;

/// `.venv/bin/moto_server` of the workspace, else the one on PATH.
fn moto_server() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/moto_server");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("moto_server")
    }
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn http(port: u16, request: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(request.as_bytes()).ok()?;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    Some(out)
}

fn start_server() -> Server {
    let port = free_port();
    let child = Command::new(moto_server())
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server (scripts/setup.sh installs moto[server] into .venv)");
    let server = Server { child, port };
    let t = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t.elapsed() < Duration::from_secs(60), "moto_server did not listen within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

#[test]
fn s3_round_trip_against_a_local_server() {
    let server = start_server();
    let port = server.port;
    let reply = http(
        port,
        &format!("PUT /koma-test HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    )
    .expect("create the bucket");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    // The environment variables a worker or learner reads (see deploy/).
    for (k, v) in [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", &format!("http://127.0.0.1:{port}")),
        ("AWS_ALLOW_HTTP", "true"),
    ] {
        std::env::set_var(k, v);
    }
    let s = RunStore::open("s3://koma-test/runs/r1").unwrap();
    s.put("samples/w1-a.chunk", vec![7; 3000]).unwrap();
    s.put("samples/w2-b.chunk", b"two".to_vec()).unwrap();
    s.put("models/latest.json", b"{\"step\":0}".to_vec()).unwrap();
    assert_eq!(s.get("samples/w1-a.chunk").unwrap().unwrap(), vec![7; 3000]);
    assert_eq!(s.get("samples/none.chunk").unwrap(), None);
    let keys: Vec<String> = s.list("samples").unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(keys, ["samples/w1-a.chunk", "samples/w2-b.chunk"]);
    s.copy("samples/w2-b.chunk", "models/x").unwrap();
    assert_eq!(s.get("models/x").unwrap().unwrap(), b"two");
    s.delete("models/x").unwrap();
    assert_eq!(s.get("models/x").unwrap(), None);
    // Conditional writes (the learner's lease, models/latest.json) use the server's
    // preconditions: a second create and a stale version are refused.
    let v = s.put_if("learner.lease", b"one".to_vec(), None).unwrap().expect("created");
    assert!(s.put_if("learner.lease", b"again".to_vec(), None).unwrap().is_none());
    let read = s.get_versioned("learner.lease").unwrap().unwrap();
    s.put_if("learner.lease", b"two".to_vec(), Some(&read)).unwrap().expect("replaced");
    assert!(s.put_if("learner.lease", b"stale".to_vec(), Some(&v)).unwrap().is_none());
    assert_eq!(s.get("learner.lease").unwrap().unwrap(), b"two");
    s.delete("learner.lease").unwrap();
    let lease = store::lease::Lease::acquire(&s, "learner.lease", Duration::from_secs(60)).unwrap();
    let e = store::lease::Lease::acquire(&s, "learner.lease", Duration::from_secs(60)).unwrap_err();
    assert!(e.to_string().contains(&lease.record().owner), "{e}");
    // The prefix keeps runs of one bucket apart.
    let other = RunStore::open("s3://koma-test/runs/r2").unwrap();
    assert!(other.list("samples").unwrap().is_empty());
    // A store that is down fails within seconds (a worker then spools its chunks).
    drop(server);
    let t = Instant::now();
    assert!(s.put("samples/w1-c.chunk", b"late".to_vec()).is_err());
    assert!(t.elapsed() < Duration::from_secs(60), "took {:?}", t.elapsed());
}
