//! Live children for the tests of reading processes (the library's
//! selections and races; memtally-cli's test support includes this file
//! by path): forked processes that map and touch memory and wait to be
//! killed.
//!
//! The child runs only async-signal-safe calls (mmap, memset, fork, write,
//! pause), so forking from the multi-threaded test harness is sound.

/// Maps `len` bytes of private anonymous memory and writes `byte` to all
/// of it; exits the (forked) process if the kernel refuses.
///
/// # Safety
/// For forked children: it calls `_exit` on failure.
pub unsafe fn map_and_touch(len: usize, byte: i32) -> *mut libc::c_void {
    let p = libc::mmap(
        std::ptr::null_mut(),
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if p == libc::MAP_FAILED {
        libc::_exit(1);
    }
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

/// Forks a child that runs `child` (async-signal-safe calls only; it
/// should end in [`pause_forever`] or a loop of its own) and waits until
/// it calls [`Ready::signal`] or exits. Returns the child and whether it
/// signalled.
pub fn fork_ready(child: impl FnOnce(&Ready)) -> (Forked, bool) {
    let mut fds = [0i32; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe {
            libc::close(fds[0]);
            libc::setpgid(0, 0);
        }
        child(&Ready(fds[1]));
        unsafe { libc::_exit(0) };
    }
    let mut b = 0u8;
    let n = unsafe {
        libc::close(fds[1]);
        let n = libc::read(fds[0], (&mut b as *mut u8).cast(), 1);
        libc::close(fds[0]);
        n
    };
    (Forked { pid }, n == 1)
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
