//! memtally-core's integration tests, in one binary: properties of the
//! parsers and sums (proptest), and the two-thread vmmap parse against the
//! sequential one on every fixture.

mod support;

mod fuzz_bodies;
mod fuzz_replay;
mod layout;
mod properties;
mod vmmap_split;
