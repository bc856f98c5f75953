//! Live children for the tests of reading processes (the library's
//! selections and races; memtally-cli's test support includes this file
//! by path): forked processes that map and touch memory and wait to be
//! killed.
//!
//! The child runs only async-signal-safe calls (mmap, memset, mprotect,
//! fork, write, pause), so forking from the multi-threaded test harness is
//! sound.

/// Maps `len` bytes of anonymous read-write memory, private or shared as
/// `sharing` says (`MAP_PRIVATE`, `MAP_SHARED`), untouched; exits the
/// (forked) process if the kernel refuses.
///
/// # Safety
/// For forked children: it calls `_exit` on failure.
pub unsafe fn map_anonymous(len: usize, sharing: i32) -> *mut libc::c_void {
    let p = libc::mmap(
        std::ptr::null_mut(),
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        sharing | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if p == libc::MAP_FAILED {
        libc::_exit(1);
    }
    p
}

/// Maps `len` bytes of private anonymous memory and writes `byte` to all
/// of it; exits the (forked) process if the kernel refuses.
///
/// # Safety
/// For forked children: it calls `_exit` on failure.
pub unsafe fn map_and_touch(len: usize, byte: i32) -> *mut libc::c_void {
    let p = map_anonymous(len, libc::MAP_PRIVATE);
    libc::memset(p, byte, len);
    p
}

/// A forked child, in a process group of its own (with any children it
/// forked); the whole group is killed, and the child reaped, on drop.
pub struct Forked {
    pub pid: i32,
}

impl Forked {
    /// Kills it now; it is reaped on drop (a zombie until then).
    pub fn kill(&self) {
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// What a child of [`fork_ready`] calls once it is set up.
pub struct Ready(i32);

impl Ready {
    /// Tells the parent the child is ready (one byte through the pipe).
    pub fn signal(&self) {
        unsafe { libc::write(self.0, b"r".as_ptr().cast(), 1) };
    }
}

/// Forks a child that runs `child` with the write end of a pipe
/// (async-signal-safe calls only), then exits. Returns its PID and the
/// read end, which sees the end of the file once the child, and any
/// children it forked, have closed theirs or exited.
pub fn fork_piped(child: impl FnOnce(i32)) -> (i32, std::fs::File) {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe { libc::close(fds[0]) };
        child(fds[1]);
        unsafe { libc::_exit(0) };
    }
    unsafe { libc::close(fds[1]) };
    (pid, unsafe { std::fs::File::from_raw_fd(fds[0]) })
}

/// Forks a child that runs `child` (async-signal-safe calls only; it
/// should end in [`pause_forever`] or a loop of its own) and waits until
/// it calls [`Ready::signal`] or exits. Returns the child and whether it
/// signalled.
pub fn fork_ready(child: impl FnOnce(&Ready)) -> (Forked, bool) {
    use std::io::Read;
    let (pid, mut pipe) = fork_piped(|fd| {
        // A group of its own, so that drop kills what it forked too.
        unsafe { libc::setpgid(0, 0) };
        child(&Ready(fd));
    });
    let ready = pipe.read_exact(&mut [0u8]).is_ok();
    (Forked { pid }, ready)
}

/// The end of a forked child: sleeps until it is killed.
pub fn pause_forever() -> ! {
    loop {
        unsafe { libc::pause() };
    }
}

/// A child that holds `bytes` of touched private memory, with `kids`
/// children of its own that hold nothing (a tree of `1 + kids`).
pub fn family(bytes: usize, kids: usize) -> Forked {
    let (child, ready) = fork_ready(|ready| unsafe {
        map_and_touch(bytes, 0x5a);
        for _ in 0..kids {
            if libc::fork() == 0 {
                pause_forever();
            }
        }
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the child mapped its {bytes} bytes and forked {kids}");
    child
}

/// A child with about `pages` mappings: one block whose pages alternate
/// between read-only and read-write (so none merge), the writable ones
/// touched. Its smaps takes a while to read, long enough for a test to
/// kill it in the middle.
pub fn many_mappings(pages: usize) -> Forked {
    let (child, ready) = fork_ready(|ready| unsafe {
        let p = map_and_touch(pages * 4096, 0x5a);
        for i in (0..pages).step_by(2) {
            libc::mprotect((p as *mut u8).add(i * 4096).cast(), 4096, libc::PROT_READ);
        }
        ready.signal();
        pause_forever()
    });
    assert!(ready, "the child mapped its {pages} pages");
    child
}

/// A shell script in `dir` that execs itself for ever (bounded: it stops
/// after `secs`), each exec a new address space.
pub fn exec_loop(dir: &std::path::Path, secs: u64) -> std::process::Child {
    let script = dir.join("again.sh");
    let end = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
        + secs;
    std::fs::write(&script, format!("[ $(date +%s) -lt {end} ] || exit 0\nexec /bin/sh \"$0\"\n"))
        .unwrap();
    std::process::Command::new("/bin/sh")
        .arg(&script)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}
