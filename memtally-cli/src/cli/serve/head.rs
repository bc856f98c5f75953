//! A request head read whole before the connection is served: a client
//! that trickles its head (slowloris) never takes a serving place, and
//! what was read is given to hyper first ([`Prefixed`]) as if unread.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// How reading a request head ended.
pub enum Head {
    /// The bytes read, ending with the blank line that ends the head, or
    /// more than `limit` bytes without one (hyper answers that with 431).
    Read(Vec<u8>),
    /// The client closed, failed, or missed a deadline: nothing to answer.
    Gone,
}

/// Reads from `stream` until a request head is complete (or longer than
/// `limit`): its first byte by `first_byte`, the whole head by `whole`.
/// A plain socket or a TLS stream alike.
pub async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
    limit: usize,
    first_byte: Instant,
    whole: Instant,
) -> Head {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        let deadline = if head.is_empty() { first_byte } else { whole };
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) | Ok(Ok(0)) | Ok(Err(_)) => return Head::Gone,
            Ok(Ok(n)) => {
                // The end may straddle two reads: look from 3 bytes back.
                let from = head.len().saturating_sub(3);
                head.extend_from_slice(&chunk[..n]);
                if ends_head(&head[from..]) || head.len() > limit {
                    return Head::Read(head);
                }
            }
        }
    }
}

/// Whether `bytes` hold the blank line that ends a head (CRLF CRLF, or
/// the bare LF LF that hyper accepts too).
fn ends_head(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w == b"\r\n\r\n") || bytes.windows(2).any(|w| w == b"\n\n")
}

/// A connection whose first bytes were read already: they are read
/// again first, then the socket.
pub struct Prefixed<S> {
    read: Vec<u8>,
    at: usize,
    stream: S,
}

impl<S> Prefixed<S> {
    pub fn new(read: Vec<u8>, stream: S) -> Prefixed<S> {
        Prefixed { read, at: 0, stream }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.at < this.read.len() {
            let n = buf.remaining().min(this.read.len() - this.at);
            buf.put_slice(&this.read[this.at..this.at + n]);
            this.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_ends_at_its_blank_line() {
        assert!(ends_head(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
        assert!(ends_head(b"GET / HTTP/1.1\nhost: x\n\n"));
        assert!(!ends_head(b"GET / HTTP/1.1\r\nhost: x\r\n"));
        assert!(!ends_head(b"GET / HTTP/1.1\r\nx-a: aaaa"));
    }
}
