//! DRM and dma-buf fdinfo.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memtally_core::source::gpu::fdinfo::parse;

fuzz_target!(|data: &[u8]| {
    let _ = parse(data, 3, Some("/dev/dri/renderD128"), false);
    let _ = parse(data, 4, Some("/dmabuf:"), true);
    let _ = memtally_core::source::gpu::parse_fd_targets(data);
});
