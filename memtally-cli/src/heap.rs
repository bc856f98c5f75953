//! The C library's heap, tuned once at start-up.

/// Asks glibc for one malloc arena for the whole program, unless the user
/// set `MALLOC_ARENA_MAX` themselves.
///
/// glibc gives each thread that allocates an arena of its own (up to eight
/// per core), and memory freed in one arena is not reused by another. `top`,
/// `snapshot`, `serve` and `ui` read on several threads, so each kept its own
/// partly empty heap: at 3,075 processes `top --all` peaked at 16.7 MiB with
/// the default arenas and 14.9 MiB with one, at the same CPU (7 paired runs:
/// 326.7 and 311.6 ms; docs/benchmarks.md, "top --all"). The reading threads
/// allocate little (each reuses one buffer), so one arena's lock costs them
/// nothing measurable. musl has a single heap already.
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first in `main`, before any thread starts; it only
        // sets a tunable of the allocator.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}
