//! Issue 35.5: a slowloris spread wide. Any local user can bind any
//! 127.0.0.0/8 source address, so the cap per address does not bound one
//! attacker: 200 addresses × 4 sockets (800, more than the 512 places for
//! heads being read) trickle request heads that never end, each socket
//! reopened as soon as the server closes it. A real scraper beside them
//! (curl, on another address) must keep getting 200. Before the fix,
//! 130 addresses × 4 took every place and 76-83% of scrapes got 503.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::peer::connect_from;
use crate::support::Server;

/// A slowloris socket from `from`: a head begun and never finished.
fn open(from: Ipv4Addr, to: SocketAddr) -> Option<TcpStream> {
    let mut s = connect_from(from, to).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nx-a: ").ok()?;
    s.set_nonblocking(true).ok()?;
    Some(s)
}

/// The socket for another round, or `None` once the server closed or
/// answered it (it is then opened again).
fn keep(mut s: TcpStream) -> Option<TcpStream> {
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        _ => return None,
    }
    s.write_all(b"a").ok()?;
    Some(s)
}

#[test]
fn a_slowloris_from_200_addresses_does_not_stop_a_real_scraper() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skipped: curl is not installed");
        return;
    }
    let root = crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc");
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let to = srv.addr;
    // 127.1.0.1 ... 127.1.0.200: one /24 less than the scraper's, and
    // every address within the cap of 4.
    let attackers: Vec<Ipv4Addr> = (1..=200).map(|d| Ipv4Addr::new(127, 1, 0, d)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicUsize::new(0));
    let thread = {
        let (stop, held) = (Arc::clone(&stop), Arc::clone(&held));
        std::thread::spawn(move || {
            let mut socks: Vec<(Ipv4Addr, Option<TcpStream>)> =
                attackers.iter().flat_map(|ip| (0..4).map(move |_| (*ip, None))).collect();
            while !stop.load(Ordering::Relaxed) {
                for (ip, sock) in &mut socks {
                    *sock = match sock.take() {
                        None => open(*ip, to),
                        Some(s) => keep(s),
                    };
                }
                held.fetch_max(
                    socks.iter().filter(|(_, s)| s.is_some()).count(),
                    Ordering::Relaxed,
                );
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    // The attack takes hold before the scraper comes: more sockets open
    // than there are places (bounded wait).
    let t = Instant::now();
    while held.load(Ordering::Relaxed) <= 512 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let url = format!("http://{to}/metrics");
    let mut failed = Vec::new();
    let t = Instant::now();
    let n = 30;
    for i in 0..n {
        let out = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"])
            .args(["--interface", "127.0.0.2", &url])
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&out.stdout).to_string();
        if code != "200" {
            failed.push((i, code));
        }
        // Spread over several passes of the attack (one each 300 ms).
        std::thread::sleep(Duration::from_millis(50));
    }
    let attacking = held.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    eprintln!(
        "{n} curl scrapes in {:?} beside 800 slowloris sockets from 200 addresses (at most {attacking} open at once): {} failed: {failed:?}",
        t.elapsed(),
        failed.len()
    );
    // The attack was real: it held more sockets than there are places.
    assert!(attacking > 512, "the attack held at most {attacking} sockets");
    assert!(failed.is_empty(), "scrapes refused under a wide slowloris: {failed:?}");
}
