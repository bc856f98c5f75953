//! The counted places a connection takes while it lives: one of a
//! fixed number ([`Slot`]), and one of its peer's few ([`PeerSlot`]), so
//! one address (or one IPv6 /64) cannot hold every place there is.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One of a counted number of places; given back when dropped.
pub struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// One of `cap` places, or `None` when all are taken.
    pub fn take(count: &Arc<AtomicUsize>, cap: usize) -> Option<Slot> {
        if count.fetch_add(1, Ordering::Relaxed) >= cap {
            count.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Slot(Arc::clone(count)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The connections reading their request heads, oldest first. When all
/// places are taken, the connection that has waited longest is closed to
/// make room for the new one: a real client sends its head at once and
/// leaves within a round trip, so only slow or silent sockets are ever
/// the oldest, and no number of them (from however many addresses) can
/// keep a new connection out.
#[derive(Default)]
pub struct Waiting(Mutex<WaitingHeads>);

#[derive(Default)]
struct WaitingHeads {
    next: u64,
    /// By age; the task reading each head, to close it (`None` until the
    /// task is spawned).
    heads: BTreeMap<u64, Option<tokio::task::AbortHandle>>,
}

/// A connection's place among the waiting heads; given back when dropped.
pub struct WaitTicket {
    waiting: Arc<Waiting>,
    id: u64,
}

impl Waiting {
    /// A place among `cap`, closing the connection waiting longest when
    /// all are taken; `true` beside the ticket when one was closed.
    pub fn enter(waiting: &Arc<Waiting>, cap: usize) -> (WaitTicket, bool) {
        let mut w = waiting.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut evicted = false;
        while w.heads.len() >= cap.max(1) {
            if let Some((_, task)) = w.heads.pop_first() {
                evicted = true;
                if let Some(task) = task {
                    task.abort();
                }
            }
        }
        let id = w.next;
        w.next += 1;
        w.heads.insert(id, None);
        (WaitTicket { waiting: Arc::clone(waiting), id }, evicted)
    }

    /// Names the task reading the head of `ticket`, so that it can be closed.
    pub fn attach(&self, ticket: u64, task: tokio::task::AbortHandle) {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = w.heads.get_mut(&ticket) {
            *slot = Some(task);
        }
    }

    /// How many heads are being read.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().unwrap().heads.len()
    }
}

impl WaitTicket {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for WaitTicket {
    fn drop(&mut self) {
        let mut w = self.waiting.0.lock().unwrap_or_else(PoisonError::into_inner);
        w.heads.remove(&self.id);
    }
}

/// Connections open per peer.
#[derive(Default)]
pub struct Peers(Mutex<HashMap<IpAddr, usize>>);

/// One of a peer's places; given back when dropped.
pub struct PeerSlot {
    peers: Arc<Peers>,
    key: IpAddr,
}

impl Peers {
    /// One of `cap` places for `ip`, or `None` when it holds them all.
    pub fn take(peers: &Arc<Peers>, ip: IpAddr, cap: usize) -> Option<PeerSlot> {
        let key = peer_key(ip);
        let mut open = peers.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(key).or_insert(0);
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(PeerSlot { peers: Arc::clone(peers), key })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self.peers.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                // The map holds only peers with connections open: it
                // cannot grow with every address ever seen.
                open.remove(&self.key);
            }
        }
    }
}

/// Who a peer is: an IPv4 address (also when mapped into IPv6), or an
/// IPv6 /64, which one host or one customer usually holds whole.
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_holds_at_most_its_cap_and_gets_places_back() {
        let peers = Arc::new(Peers::default());
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let held: Vec<_> = (0..4).map(|_| Peers::take(&peers, a, 4).unwrap()).collect();
        assert!(Peers::take(&peers, a, 4).is_none());
        // The same address mapped into IPv6 is the same peer.
        assert!(Peers::take(&peers, "::ffff:127.0.0.1".parse().unwrap(), 4).is_none());
        assert!(Peers::take(&peers, b, 4).is_some());
        drop(held);
        assert!(Peers::take(&peers, a, 4).is_some());
        assert!(peers.0.lock().unwrap().is_empty(), "no peer without connections is kept");
    }

    #[test]
    fn a_full_waiting_room_closes_its_oldest_head() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(async {
            let waiting = Arc::new(Waiting::default());
            let mut tasks = Vec::new();
            for _ in 0..3 {
                let (ticket, evicted) = Waiting::enter(&waiting, 3);
                assert!(!evicted);
                let id = ticket.id();
                let task = tokio::spawn(async move {
                    let _ticket = ticket;
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                });
                waiting.attach(id, task.abort_handle());
                tasks.push(task);
            }
            assert_eq!(waiting.len(), 3);
            // A fourth: the first (oldest) is closed, the others wait on.
            let (fourth, evicted) = Waiting::enter(&waiting, 3);
            assert!(evicted);
            assert!(tasks.remove(0).await.unwrap_err().is_cancelled());
            assert_eq!(waiting.len(), 3);
            for t in &tasks {
                assert!(!t.is_finished());
            }
            // A head read whole leaves, and its place is free again.
            drop(fourth);
            assert_eq!(waiting.len(), 2);
            let (_fifth, evicted) = Waiting::enter(&waiting, 3);
            assert!(!evicted);
        });
    }

    #[test]
    fn an_ipv6_peer_is_its_64() {
        let peers = Arc::new(Peers::default());
        let _one = Peers::take(&peers, "2001:db8::1".parse().unwrap(), 1).unwrap();
        assert!(Peers::take(&peers, "2001:db8::ffff:2".parse().unwrap(), 1).is_none());
        assert!(Peers::take(&peers, "2001:db8:0:1::1".parse().unwrap(), 1).is_some());
    }
}
