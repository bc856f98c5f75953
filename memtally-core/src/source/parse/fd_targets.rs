//! `PID/fd_targets`, the file `memtally capture` writes in place of the
//! `fd/` symlinks (see `source::gpu`): `FD<TAB>TARGET` per line.

use super::ParseError;

/// (fd, link target) of each `FD<TAB>TARGET` line, sorted by fd. Accepts
/// any bytes (UTF-8, read lossily): a line without a tab or whose fd is not
/// a number is skipped, so it never fails; the `Result` is the one
/// signature of the parsers in this folder.
pub fn parse(input: &[u8]) -> Result<Vec<(u32, String)>, ParseError> {
    let mut out: Vec<(u32, String)> = String::from_utf8_lossy(input)
        .lines()
        .filter_map(|l| {
            let (fd, target) = l.split_once('\t')?;
            Some((fd.trim().parse().ok()?, target.to_string()))
        })
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_fd_tab_target_lines_sorted() {
        let t = super::parse(b"9\t/dmabuf:\nx\t/dev/dri/card0\n4\t/dev/dri/renderD128\nno tab\n")
            .unwrap();
        assert_eq!(t, [(4, "/dev/dri/renderD128".to_string()), (9, "/dmabuf:".to_string())]);
    }
}
