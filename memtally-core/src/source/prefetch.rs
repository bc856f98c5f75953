//! Reading a `/proc` file on a helper thread while the caller parses:
//! for smaps the kernel walks page tables inside `read()`, and that is
//! most of the cost, so the two run at once (docs/benchmarks.md).

use std::fs::File;
use std::io::{BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// A `BufRead` over a file whose `read()` calls run on a helper thread,
/// one chunk ahead of (and at the same time as) the consumer.
pub(crate) struct PrefetchReader {
    chunks: Receiver<std::io::Result<Chunk>>,
    /// Emptied chunks go back to the reader thread to be filled again, so
    /// the same few buffers (and their already-mapped pages) are reused.
    spare: SyncSender<Vec<u8>>,
    current: Chunk,
    pos: usize,
    /// A read error, or the end, has been seen: nothing more will come.
    finished: bool,
}

/// A buffer and how much of it holds data.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

/// How much the helper thread gathers before handing it over. A seq_file
/// (smaps, maps) gives at most a page or so per `read()`, so a chunk is
/// many reads: handing over each would cost a thread wake-up per page.
pub(crate) const CHUNK: usize = 64 * 1024;
/// Chunks in flight between the two threads.
const CHUNKS_AHEAD: usize = 8;

impl PrefetchReader {
    pub(crate) fn new(mut file: File) -> PrefetchReader {
        let (chunk_tx, chunk_rx) = sync_channel::<std::io::Result<Chunk>>(CHUNKS_AHEAD);
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(CHUNKS_AHEAD + 2);
        std::thread::spawn(move || loop {
            let mut buf = spare_rx.try_recv().unwrap_or_else(|_| vec![0u8; CHUNK]);
            let mut len = 0;
            let mut end = false;
            let mut error = None;
            // Fill most of the chunk; stop early at the end or on an error.
            while CHUNK - len >= 8 * 1024 {
                match file.read(&mut buf[len..]) {
                    Ok(0) => {
                        end = true;
                        break;
                    }
                    Ok(n) => len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            // Data read before an error is delivered first, then the error.
            if len > 0 && chunk_tx.send(Ok(Chunk { buf, len })).is_err() {
                return;
            }
            if let Some(e) = error {
                let _ = chunk_tx.send(Err(e));
                return;
            }
            if end {
                let _ = chunk_tx.send(Ok(Chunk { buf: Vec::new(), len: 0 }));
                return;
            }
        });
        PrefetchReader {
            chunks: chunk_rx,
            spare: spare_tx,
            current: Chunk { buf: Vec::new(), len: 0 },
            pos: 0,
            finished: false,
        }
    }
}

impl Read for PrefetchReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PrefetchReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.current.len && !self.finished {
            match self.chunks.recv() {
                Ok(Ok(chunk)) if chunk.len == 0 => self.finished = true,
                Ok(Ok(chunk)) => {
                    let used = std::mem::replace(&mut self.current, chunk);
                    self.pos = 0;
                    if used.buf.len() == CHUNK {
                        let _ = self.spare.try_send(used.buf);
                    }
                }
                Ok(Err(e)) => {
                    self.finished = true;
                    return Err(e);
                }
                // The helper thread ended without a word: treat as the end.
                Err(_) => self.finished = true,
            }
        }
        let end = self.current.len;
        Ok(&self.current.buf[self.pos.min(end)..end])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.current.len);
    }
}
