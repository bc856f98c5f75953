//! `memtally serve` under clients that hold sockets without speaking and
//! under a scan that never finishes (issue 12): silent sockets are closed
//! within a second and never take a scrape's place, scrapes beyond the
//! in-flight cap get 503 at once, and a stuck scan gives the last good
//! result marked stale or 503 within the scan deadline; and (issue 27)
//! under slowloris and idle keep-alive sockets, from one address or many,
//! real scrapes are all answered. Every socket is on loopback (127/8,
//! several addresses standing for several peers); every loop and wait is
//! bounded.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::peer::connect_from;
use crate::support::stall::Stalled;
use crate::support::{memtally, Server};

/// The recorded tree of one python3 process (pid 11364).
fn fixture() -> PathBuf {
    crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc")
}

/// One `GET /metrics` on a new connection: the whole answer (empty when
/// the server closed without one) and how long it took.
fn scrape(addr: SocketAddr) -> (String, Duration) {
    scrape_from(Ipv4Addr::LOCALHOST, addr)
}

/// [`scrape`] from the loopback address `from`.
fn scrape_from(from: Ipv4Addr, addr: SocketAddr) -> (String, Duration) {
    let t = Instant::now();
    let mut s = connect_from(from, addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    (String::from_utf8_lossy(&answer).into_owned(), t.elapsed())
}

/// How long until the server closes `s` (which sends nothing more), at most `limit`.
fn closed_after(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let t = Instant::now();
    let mut buf = [0u8; 512];
    while t.elapsed() < limit {
        s.set_read_timeout(Some(limit - t.elapsed() + Duration::from_millis(1))).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return Some(t.elapsed()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(t.elapsed()),
        }
    }
    None
}

/// 100 sockets that connect and never send a byte (4 from each of 25
/// addresses, within the cap per address), more than the 64 requests
/// answered at once: real scrapes next to them are all served.
#[test]
fn silent_sockets_do_not_stop_real_scrapes() {
    let root = fixture();
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let silent: Vec<TcpStream> = loopback(10, 25)
        .into_iter()
        .flat_map(|ip| (0..4).map(move |_| ip))
        .map(|ip| connect_from(ip, srv.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..10 {
        let (answer, took) = scrape_from(Ipv4Addr::new(127, 0, 0, 2), srv.addr);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "scrape {i} next to 100 silent sockets: {answer:?}"
        );
        assert!(answer.contains("pid=\"11364\""), "{answer}");
        assert!(took < Duration::from_secs(5), "scrape {i} took {took:?}");
    }
    drop(silent);
}

/// A socket that sends nothing is closed within about a second; one that
/// has begun a request keeps the longer time to finish its head.
#[test]
fn a_silent_socket_is_closed_within_a_second() {
    let root = fixture();
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let mut silent = TcpStream::connect(srv.addr).unwrap();
    let mut started = TcpStream::connect(srv.addr).unwrap();
    started.write_all(b"GET /metr").unwrap();
    let took = closed_after(&mut silent, Duration::from_secs(10)).expect("silent socket closed");
    assert!(took < Duration::from_millis(2500), "a silent socket was closed after {took:?}");
    // The one that spoke is still open at 2 s, and closed by the 5 s header timeout.
    let t = Instant::now();
    assert_eq!(closed_after(&mut started, Duration::from_secs(2)), None, "closed too soon");
    let rest = closed_after(&mut started, Duration::from_secs(10)).expect("slow client closed");
    let total = t.elapsed().min(Duration::from_secs(2)) + rest;
    assert!(total < Duration::from_secs(9), "a stalled request head lived {total:?}");
}

/// A copy of the recorded tree; the process directory can be made to
/// stall with [`Stalled::mount`].
fn tree_copy(dir: &Path) -> PathBuf {
    let out = std::process::Command::new("cp")
        .args(["-r", fixture().to_str().unwrap(), dir.join("proc").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join("proc")
}

/// The two stuck scans below each wait out the 8 s scan deadline, each
/// with its own server, tree and hung mount: side by side, they wait once.
#[test]
fn stuck_scans_answer_at_the_deadline_and_beyond_the_cap_at_once() {
    std::thread::scope(|s| {
        s.spawn(scrapes_beyond_the_in_flight_cap_get_503_at_once);
        s.spawn(a_stuck_scan_answers_the_last_good_result_marked_stale);
    });
}

/// 12 scrapes at once (4 from each of 3 addresses, within the cap per
/// address) while the scan hangs on a file system that never answers:
/// the 4 in flight get 503 (no result yet) at the 8 s deadline, the other
/// 8 get 503 at once, none is dropped.
fn scrapes_beyond_the_in_flight_cap_get_503_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree_copy(tmp.path());
    let stall = match Stalled::mount(&root.join("11364")) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no stalling file system here ({why})");
            return;
        }
    };
    let srv = Server::start(&[
        "--proc-root",
        root.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--min-interval",
        "1s",
    ]);
    let addr = srv.addr;
    let answers: Vec<(String, Duration)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..12u8)
            .map(|i| s.spawn(move || scrape_from(Ipv4Addr::new(127, 0, 0, 1 + i % 3), addr)))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    drop(srv);
    drop(stall);
    let (mut at_once, mut at_deadline) = (0, 0);
    for (answer, took) in &answers {
        assert!(answer.starts_with("HTTP/1.1 503"), "{took:?}: {answer:?}");
        assert!(answer.contains("retry-after"), "{answer}");
        if answer.contains("busy: too many scrapes") {
            assert!(*took < Duration::from_secs(3), "a refused scrape took {took:?}");
            at_once += 1;
        } else {
            assert!(answer.contains("scan still running after 8 s"), "{answer}");
            assert!(*took < Duration::from_secs(12), "a scrape waited {took:?}");
            at_deadline += 1;
        }
    }
    eprintln!(
        "12 scrapes of a stuck scan: {at_once} got 503 at once, {at_deadline} at the deadline"
    );
    assert_eq!((at_once, at_deadline), (8, 4), "{answers:?}");
}

/// A scan that never finishes (its tree's process directory stops
/// answering after one good scan): the next scrape gets the last good
/// result, marked stale, within the deadline.
fn a_stuck_scan_answers_the_last_good_result_marked_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree_copy(tmp.path());
    let srv = Server::start(&[
        "--proc-root",
        root.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--min-interval",
        "1s",
    ]);
    let (good, _) = scrape(srv.addr);
    assert!(good.starts_with("HTTP/1.1 200") && good.contains("pid=\"11364\""), "{good}");
    // Past --min-interval (its floor): the next scrape scans again.
    std::thread::sleep(Duration::from_millis(1100));
    let stall = match Stalled::mount(&root.join("11364")) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no stalling file system here ({why})");
            return;
        }
    };
    let (answer, took) = scrape(srv.addr);
    drop(srv);
    drop(stall);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(answer.contains("x-memtally-stale: scan still running after 8 s"), "{answer}");
    assert!(answer.contains("pid=\"11364\""), "{answer}");
    assert!(took >= Duration::from_secs(7) && took < Duration::from_secs(12), "took {took:?}");
}

/// Hostile clients driven from one thread until dropped: slowloris
/// sockets (a request begun, one more header byte every half second,
/// never finished) and idle keep-alive sockets (one whole request, its
/// answer read, then nothing), each reconnected as soon as the server
/// closes or refuses it, as a determined attacker would.
struct Attack {
    stop: Arc<AtomicBool>,
    /// Passes over every socket done so far (each opens or keeps it).
    passes: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What one hostile socket does.
#[derive(Clone, Copy)]
enum Hostile {
    Slowloris,
    KeepAlive,
}

impl Attack {
    /// `per_address` sockets of `kind` from each address of `from`.
    fn start(to: SocketAddr, groups: Vec<(Hostile, Vec<Ipv4Addr>, usize)>) -> Attack {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let passes = Arc::new(AtomicUsize::new(0));
        let done = Arc::clone(&passes);
        let thread = std::thread::spawn(move || {
            let mut sockets: Vec<(Hostile, Ipv4Addr, Option<TcpStream>)> = groups
                .iter()
                .flat_map(|(kind, ips, n)| {
                    ips.iter().flat_map(move |ip| (0..*n).map(move |_| (*kind, *ip, None)))
                })
                .collect();
            while !flag.load(Ordering::Relaxed) {
                for (kind, ip, sock) in &mut sockets {
                    *sock = match sock.take() {
                        None => open(*kind, *ip, to),
                        Some(s) => keep(*kind, s),
                    };
                }
                done.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        Attack { stop, passes, thread: Some(thread) }
    }

    /// Waits (bounded) until every socket was opened, then kept once:
    /// the attack has taken hold.
    fn wait_hold(&self) {
        let t = Instant::now();
        while self.passes.load(Ordering::Relaxed) < 2 {
            assert!(t.elapsed() < Duration::from_secs(60), "the attack never took hold");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Attack {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A new hostile socket, or `None` when the server would not have it.
fn open(kind: Hostile, from: Ipv4Addr, to: SocketAddr) -> Option<TcpStream> {
    let mut s = connect_from(from, to).ok()?;
    match kind {
        Hostile::Slowloris => s.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nx-a: ").ok()?,
        Hostile::KeepAlive => {
            s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").ok()?;
            // Its answer (the small index page), then it idles.
            s.set_read_timeout(Some(Duration::from_millis(300))).ok()?;
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
        }
    }
    s.set_nonblocking(true).ok()?;
    Some(s)
}

/// The socket kept for another round, or `None` once the server closed
/// or answered it (then it is opened again).
fn keep(kind: Hostile, mut s: TcpStream) -> Option<TcpStream> {
    let mut buf = [0u8; 4096];
    match s.read(&mut buf) {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        _ => return None,
    }
    if let Hostile::Slowloris = kind {
        s.write_all(b"a").ok()?;
    }
    Some(s)
}

fn loopback(first: u8, n: u8) -> Vec<Ipv4Addr> {
    (first..first + n).map(|d| Ipv4Addr::new(127, 0, 0, d)).collect()
}

/// 64 slowloris and 64 idle keep-alive sockets from 127.0.0.1, and as
/// many again spread over 32 more addresses (4 each, within the cap per
/// address), against a scraper on 127.0.0.2: every one of its 20
/// scrapes gets 200, promptly.
#[test]
fn slowloris_and_idle_keep_alive_sockets_do_not_stop_real_scrapes() {
    let root = fixture();
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let attack = Attack::start(
        srv.addr,
        vec![
            (Hostile::Slowloris, loopback(1, 1), 64),
            (Hostile::KeepAlive, loopback(1, 1), 64),
            (Hostile::Slowloris, loopback(10, 16), 4),
            (Hostile::KeepAlive, loopback(30, 16), 4),
        ],
    );
    // The attack takes hold before the scraper comes.
    attack.wait_hold();
    let scraper = Ipv4Addr::new(127, 0, 0, 2);
    let mut failed = Vec::new();
    for i in 0..20 {
        let (answer, took) = scrape_from(scraper, srv.addr);
        if !answer.starts_with("HTTP/1.1 200") || took > Duration::from_secs(5) {
            failed.push((i, took, answer.lines().next().unwrap_or("").to_string()));
        }
        // Spread over four passes of the attack and more.
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(attack);
    eprintln!("20 real scrapes beside 256 hostile sockets: {} failed: {failed:?}", failed.len());
    assert!(failed.is_empty(), "scrapes refused or slow under attack: {failed:?}");
}

/// One address holds at most 4 connections: the 5th and later are
/// answered 503 at once (said, not dropped), the first 4 are served.
#[test]
fn one_address_holds_at_most_four_connections() {
    let root = fixture();
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let from = Ipv4Addr::new(127, 0, 0, 3);
    // Requests begun, kept open by the 5 s head timeout.
    let held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect_from(from, srv.addr).unwrap();
            s.write_all(b"GET /metr").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..6 {
        let t = Instant::now();
        let mut extra = connect_from(from, srv.addr).unwrap();
        extra.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut answer = Vec::new();
        let _ = extra.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 503"), "connection {} from {from}: {answer:?}", i + 5);
        assert!(answer.contains("from this address"), "{answer}");
        assert!(t.elapsed() < Duration::from_millis(900), "refused after {:?}", t.elapsed());
    }
    // Another address is not held back by this one's.
    let (answer, _) = scrape_from(Ipv4Addr::new(127, 0, 0, 4), srv.addr);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    drop(held);
}

/// `--min-interval` below a second would let one client keep a core
/// busy scanning: refused when the command line is read.
#[test]
fn a_min_interval_below_a_second_is_refused() {
    for bad in ["0s", "500ms", "999ms"] {
        let mut child = memtally()
            .args(["serve", "--listen", "127.0.0.1:0", "--min-interval", bad])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if t.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        assert_eq!(status.and_then(|s| s.code()), Some(2), "--min-interval {bad} served: {err}");
        assert!(err.contains("--min-interval") && err.contains("at least 1s"), "{err}");
    }
    let ok = memtally().args(["serve", "--min-interval", "1s", "--help"]).output().unwrap();
    assert!(ok.status.success());
}
