//! Which connections are served, and for how long. A connection passes
//! three gates, refused with a quick 503 rather than queued:
//!
//! 1. its peer holds fewer than [`MAX_PER_PEER`] connections (one local
//!    user or one remote host cannot take every place);
//! 2. it reads its request head among at most [`MAX_WAITING`]; the head
//!    must begin within [`FIRST_BYTE_TIMEOUT`] and be whole within
//!    [`HEADER_TIMEOUT`]. When all places are taken, the connection that
//!    has waited longest is closed to make room ([`Waiting`]): a real
//!    client's head arrives with its first packet, so slow sockets from
//!    any number of addresses (a local user may bind all of 127/8, an
//!    IPv6 customer a /56) cannot keep it out;
//! 3. its head is whole, and fewer than [`MAX_CONNECTIONS`] requests are
//!    being answered: slowloris sockets, which never finish a head, never
//!    reach a serving place.
//!
//! Each connection carries one request (`connection: close`): a scraper
//! comes back every few seconds at the most, and a connection kept idle
//! in between would hold a place for nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};

use super::head::{read_head, Head, Prefixed};
use super::limits::{Peers, Slot, Waiting};
use super::{handle, State, MAX_HEADERS, MAX_HEADER_BYTES};

/// Connections one peer (an IPv4 address, an IPv6 /64) holds at once, in
/// every stage; more are refused at once. Prometheus scrapes one target
/// over one connection; a pair of them, a curl beside, still fit.
pub const MAX_PER_PEER: usize = 4;
/// A request head must be whole within this time of the connection.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// No connection lives longer than this, whatever it does.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);
/// Requests being answered at once (counted once their head is whole);
/// more get 503.
pub const MAX_CONNECTIONS: usize = 64;
/// A new connection must send its first byte within this time, or it is
/// closed. Once a request has begun, [`HEADER_TIMEOUT`] applies.
pub const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(1);
/// Connections reading their request heads at once; a new one beyond
/// closes the one waiting longest. Apart from [`MAX_CONNECTIONS`]: silent and slow sockets never take the
/// places of clients whose requests have arrived.
pub const MAX_WAITING: usize = 512;
/// How often the accept loop looks for a signal, and how long in-flight
/// answers get to finish once one came (within [`crate::signal::GRACE`]).
const STOP_STEP: Duration = Duration::from_millis(100);
const WIND_DOWN: Duration = Duration::from_millis(500);

pub async fn accept_loop(
    listener: std::net::TcpListener,
    state: Arc<State>,
    tls: Option<super::web_config::tls::Tls>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(false)
        .max_header_size(MAX_HEADER_BYTES)
        .max_buf_size(MAX_HEADER_BYTES.max(8192) * 2)
        .max_headers(MAX_HEADERS);
    let live = Arc::new(AtomicUsize::new(0));
    let waiting = Arc::new(Waiting::default());
    let peers = Arc::new(Peers::default());
    while crate::signal::received().is_none() {
        let (stream, peer) = match tokio::time::timeout(STOP_STEP, listener.accept()).await {
            Err(_) => continue,
            Ok(Ok(accepted)) => accepted,
            Ok(Err(e)) => {
                // Out of file descriptors and the like: wait, do not spin.
                eprintln!("memtally: accept: {e}");
                tokio::time::sleep(STOP_STEP).await;
                continue;
            }
        };
        // Beyond a cap a plain connection is answered 503; a TLS one is
        // closed (a plain answer would be no TLS record).
        let Some(peer_slot) = Peers::take(&peers, peer.ip(), MAX_PER_PEER) else {
            if tls.is_none() {
                tokio::spawn(refuse(stream, BUSY_PEER));
            }
            continue;
        };
        // Never refused for want of a waiting place: the one waiting
        // longest is closed instead (issue 35.5: 200 loopback addresses × 4
        // slowloris sockets took all 512 places, and most real scrapes got 503).
        let (wait_slot, _) = Waiting::enter(&waiting, MAX_WAITING);
        let ticket = wait_slot.id();
        let (state, live, http, tls) =
            (Arc::clone(&state), Arc::clone(&live), http.clone(), tls.clone());
        let task = tokio::spawn(async move {
            let _peer_slot = peer_slot;
            let now = tokio::time::Instant::now();
            let (first_byte, whole) = (now + FIRST_BYTE_TIMEOUT, now + HEADER_TIMEOUT);
            let Some(acceptor) = tls else {
                let mut stream = stream;
                let head = read_head(&mut stream, MAX_HEADER_BYTES, first_byte, whole).await;
                drop(wait_slot);
                let Head::Read(head) = head else { return };
                let Some(slot) = Slot::take(&live, MAX_CONNECTIONS) else {
                    refuse(stream, BUSY).await;
                    return;
                };
                return serve(http, state, Prefixed::new(head, stream), slot).await;
            };
            // TLS: the client's hello by the first-byte deadline, the
            // handshake and the head within the head's.
            if tokio::time::timeout_at(first_byte, stream.readable()).await.is_err() {
                return;
            }
            let handshake = super::web_config::tls::accept(&acceptor, stream);
            let Ok(Ok(mut stream)) = tokio::time::timeout_at(whole, handshake).await else {
                return;
            };
            let head = read_head(&mut stream, MAX_HEADER_BYTES, whole, whole).await;
            drop(wait_slot);
            let Head::Read(head) = head else { return };
            let Some(slot) = Slot::take(&live, MAX_CONNECTIONS) else {
                use tokio::io::AsyncWriteExt;
                let _ = tokio::time::timeout(Duration::from_secs(1), async {
                    let _ = stream.write_all(BUSY).await;
                    let _ = stream.shutdown().await;
                })
                .await;
                return;
            };
            serve(http, state, Prefixed::new(head, stream), slot).await;
        });
        // Before the task first runs: this loop does not yield in between.
        waiting.attach(ticket, task.abort_handle());
    }
    // Stopped by a signal: no new connections; answers under way get a
    // moment to finish.
    drop(listener);
    let end = tokio::time::Instant::now() + WIND_DOWN;
    while live.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Serves the one request of a connection whose head was read whole.
async fn serve<S>(
    http: hyper::server::conn::http1::Builder,
    state: Arc<State>,
    io: Prefixed<S>,
    slot: Slot,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let conn = http.serve_connection(
        TokioIo::new(io),
        hyper::service::service_fn(move |req| handle(Arc::clone(&state), req)),
    );
    let _slot = slot;
    let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
}

/// Answers a connection beyond a cap with `answer` (a whole 503) and
/// closes it: said, not dropped, so the client tries again instead of
/// seeing a connection closed without a word.
async fn refuse(stream: tokio::net::TcpStream, answer: &'static [u8]) {
    // Smaller than any socket buffer: one write sends it all.
    if tokio::time::timeout(Duration::from_secs(1), stream.writable()).await.is_ok() {
        let _ = stream.try_write(answer);
    }
    // Read what the client sent (briefly) before closing: a close with
    // unread bytes resets the connection, and the client might lose the
    // answer.
    let end = tokio::time::Instant::now() + Duration::from_millis(200);
    let mut buf = [0u8; 2048];
    while tokio::time::timeout_at(end, stream.readable()).await.is_ok() {
        match stream.try_read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
    }
}

/// The whole answer to a connection beyond [`MAX_CONNECTIONS`] or [`MAX_WAITING`].
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 31\r\n\r\nbusy: too many connections now\n";

/// The whole answer to a peer's connection beyond [`MAX_PER_PEER`].
const BUSY_PEER: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 69\r\n\r\nbusy: too many connections from this address now (at most 4 at once)\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_answers_say_their_length() {
        for answer in [BUSY, BUSY_PEER] {
            let text = std::str::from_utf8(answer).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap();
            assert_eq!(length, body.len(), "{text}");
        }
        assert!(std::str::from_utf8(BUSY_PEER).unwrap().contains(&MAX_PER_PEER.to_string()));
    }
}
