//! Connections from a chosen loopback address: the whole of 127/8 is
//! loopback on Linux, so a test can be several peers (an attacker on
//! 127.0.0.1, a scraper on 127.0.0.2) without leaving the machine.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::FromRawFd;

/// A TCP connection to `to` whose source address is `from` (bound before
/// connecting, which std's `TcpStream::connect` cannot do).
pub fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let SocketAddr::V4(to) = to else {
        return Err(std::io::Error::other("connect_from: IPv4 only"));
    };
    let sin = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a new socket we own; the addresses are valid sockaddr_in
    // values that live across the calls; on failure the fd is closed.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = TcpStream::from_raw_fd(fd);
        let src = sin(from, 0);
        if libc::bind(fd, (&src as *const libc::sockaddr_in).cast(), len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let dst = sin(*to.ip(), to.port());
        if libc::connect(fd, (&dst as *const libc::sockaddr_in).cast(), len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
}
