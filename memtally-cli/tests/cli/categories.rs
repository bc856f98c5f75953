//! Categories by what a mapping is (issue 13): private `/dev/zero` is
//! anonymous memory, shared `/dev/zero` shared memory, hugetlbfs memory its
//! own category (not "GPU / device"). Live, and on a recorded variant
//! (testdata/fixtures/linux-variants/README.md) for huge pages where the
//! machine has no huge page pool.

use serde_json::Value;

use crate::support::{repo, run_json, Forked, MIB};

/// The region of `doc` that contains `addr`.
fn region_at(doc: &Value, addr: u64) -> &Value {
    doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["start"].as_u64().unwrap() <= addr && addr < r["end"].as_u64().unwrap())
        .unwrap_or_else(|| panic!("no region holds {addr:x}"))
}

/// Forks a child that maps 8 MiB MAP_PRIVATE and 4 MiB MAP_SHARED of
/// /dev/zero and writes both, and tries 2 MiB of MAP_HUGETLB (0 when the
/// kernel refuses); returns (pid, private, shared, hugetlb) addresses.
fn spawn_zero_mapper() -> (Forked, u64, u64, u64) {
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let zero = c"/dev/zero";
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe {
            let fd = libc::open(zero.as_ptr(), libc::O_RDWR);
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            let null = std::ptr::null_mut();
            let private = libc::mmap(null, 8 * MIB, rw, libc::MAP_PRIVATE, fd, 0);
            let shared = libc::mmap(null, 4 * MIB, rw, libc::MAP_SHARED, fd, 0);
            if fd < 0 || private == libc::MAP_FAILED || shared == libc::MAP_FAILED {
                libc::_exit(1);
            }
            libc::memset(private, 0x5a, 8 * MIB);
            libc::memset(shared, 0x5a, 4 * MIB);
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB;
            let mut huge = libc::mmap(null, 2 * MIB, rw, flags, -1, 0);
            if huge == libc::MAP_FAILED {
                huge = std::ptr::null_mut();
            } else {
                libc::memset(huge, 0x5a, 2 * MIB);
            }
            let mut msg = [0u8; 24];
            msg[..8].copy_from_slice(&(private as u64).to_ne_bytes());
            msg[8..16].copy_from_slice(&(shared as u64).to_ne_bytes());
            msg[16..].copy_from_slice(&(huge as u64).to_ne_bytes());
            libc::write(fds[1], msg.as_ptr().cast(), msg.len());
            loop {
                libc::pause();
            }
        }
    }
    unsafe { libc::close(fds[1]) };
    let mut msg = [0u8; 24];
    let n = unsafe { libc::read(fds[0], msg.as_mut_ptr().cast(), msg.len()) };
    unsafe { libc::close(fds[0]) };
    let child = Forked { pid };
    assert_eq!(n, 24, "the child mapped /dev/zero");
    let word = |i: usize| u64::from_ne_bytes(msg[i * 8..i * 8 + 8].try_into().unwrap());
    (child, word(0), word(1), word(2))
}

#[test]
fn live_private_dev_zero_is_anonymous_and_shared_is_shared_memory() {
    let (child, private, shared, huge) = spawn_zero_mapper();
    let doc = run_json(&["show", &child.pid.to_string(), "--format", "json"]);
    let p = region_at(&doc, private);
    assert_eq!(p["path"], "/dev/zero");
    assert_eq!(p["category"], "heap", "private /dev/zero: {p}");
    assert_eq!(p["private_dirty"].as_u64(), Some(8 * MIB as u64));
    assert_eq!(p["anonymous"].as_u64(), Some(8 * MIB as u64));
    let s = region_at(&doc, shared);
    assert_eq!(s["path"], "/dev/zero (deleted)");
    assert_eq!(s["category"], "shared_memory", "shared /dev/zero: {s}");
    if huge == 0 {
        println!("skipped the live hugetlb mapping: MAP_HUGETLB failed (no huge page pool)");
    } else {
        let h = region_at(&doc, huge);
        assert_eq!(h["category"], "huge_pages", "MAP_HUGETLB: {h}");
    }
}

#[test]
fn recorded_hugetlbfs_is_huge_pages_not_a_device() {
    let root = repo().join("testdata/fixtures/linux-variants/hugetlb/proc");
    let root = root.to_str().unwrap();
    let doc = run_json(&["--proc-root", root, "show", "11364", "--format", "json"]);
    let by_path = |path: &str| {
        doc["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == path)
            .unwrap_or_else(|| panic!("no {path}"))
            .clone()
    };
    assert_eq!(by_path("/mnt/huge/memtally-variant")["category"], "huge_pages");
    assert_eq!(by_path("/anon_hugepage (deleted)")["category"], "huge_pages");
    assert_eq!(by_path("/dev/zero")["category"], "heap");
    assert_eq!(by_path("/dev/zero (deleted)")["category"], "shared_memory");
    let huge = doc["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "huge_pages")
        .expect("a huge pages category");
    assert_eq!(huge["label"], "huge pages (hugetlb)");
    assert_eq!(huge["regions"], 2);
    assert_eq!(huge["private_hugetlb"].as_u64(), Some(6 * MIB as u64));
    assert!(doc["categories"].as_array().unwrap().iter().all(|c| c["category"] != "device"));
}
