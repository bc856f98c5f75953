//! `memtally serve` under clients that hold sockets without speaking and
//! under a scan that never finishes (issue 12): silent sockets are closed
//! within a second and never take a scrape's place, scrapes beyond the
//! in-flight cap get 503 at once, and a stuck scan gives the last good
//! result marked stale or 503 within the scan deadline. Every socket is
//! on 127.0.0.1; every loop and wait is bounded.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::stall::Stalled;
use crate::support::Server;

/// The recorded tree of one python3 process (pid 11364).
fn fixture() -> PathBuf {
    crate::support::repo().join("testdata/fixtures/linux/python3-mmap/proc")
}

/// One `GET /metrics` on a new connection: the whole answer (empty when
/// the server closed without one) and how long it took.
fn scrape(addr: SocketAddr) -> (String, Duration) {
    let t = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
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

/// 100 sockets that connect and never send a byte, more than the 64
/// connections served at once: real scrapes next to them are all served.
#[test]
fn silent_sockets_do_not_stop_real_scrapes() {
    let root = fixture();
    let srv = Server::start(&["--proc-root", root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let silent: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(srv.addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..10 {
        let (answer, took) = scrape(srv.addr);
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

/// 12 scrapes at once while the scan hangs on a file system that never
/// answers: the 4 in flight get 503 (no result yet) at the 8 s deadline,
/// the other 8 get 503 at once, none is dropped.
#[test]
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
        "0s",
    ]);
    let addr = srv.addr;
    let answers: Vec<(String, Duration)> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..12).map(|_| s.spawn(move || scrape(addr))).collect();
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
#[test]
fn a_stuck_scan_answers_the_last_good_result_marked_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree_copy(tmp.path());
    let srv = Server::start(&[
        "--proc-root",
        root.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--min-interval",
        "0s",
    ]);
    let (good, _) = scrape(srv.addr);
    assert!(good.starts_with("HTTP/1.1 200") && good.contains("pid=\"11364\""), "{good}");
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
