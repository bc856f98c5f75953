//! The counted places a connection takes while it lives: one of a
//! fixed number ([`Slot`]), and one of its peer's few ([`PeerSlot`]), so
//! one address (or one IPv6 /64) cannot hold every place there is.

use std::collections::HashMap;
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
    fn an_ipv6_peer_is_its_64() {
        let peers = Arc::new(Peers::default());
        let _one = Peers::take(&peers, "2001:db8::1".parse().unwrap(), 1).unwrap();
        assert!(Peers::take(&peers, "2001:db8::ffff:2".parse().unwrap(), 1).is_none());
        assert!(Peers::take(&peers, "2001:db8:0:1::1".parse().unwrap(), 1).is_some());
    }
}
