//! Random names for the new files and directories memtally makes before
//! they take their real names: made exclusively (`O_EXCL`, `mkdirat`),
//! so a name someone else took first is never used, only tried again.

use std::ffi::CString;
use std::hash::{BuildHasher, Hasher};
use std::io;

/// Tries `make` on fresh names `PREFIX<random>SUFFIX` until one is new
/// (a bounded number of times): what it made, and the name.
pub(crate) fn create_unique<T>(
    prefix: &str,
    suffix: &str,
    mut make: impl FnMut(&CString) -> io::Result<T>,
) -> io::Result<(T, CString)> {
    let mut last = None;
    for _ in 0..64 {
        let name = CString::new(format!("{prefix}{}{suffix}", random()))
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        match make(&name) {
            Ok(t) => return Ok((t, name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// 16 hex digits no one can guess: std's hasher keys come from the
/// operating system's random source, new keys for each hasher.
fn random() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:016x}", h.finish())
}
