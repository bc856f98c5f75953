//! memtally-core's integration tests, in one binary: properties of the
//! parsers and sums (proptest), the two-thread vmmap parse against the
//! sequential one on every fixture, and the library's reads of live
//! processes and recordings (selections, races, churn, rollup parity).

mod support;

mod churn;
mod diff_parity;
mod fuzz_bodies;
mod fuzz_replay;
mod layout;
mod properties;
mod races;
mod rollup_parity;
mod selections;
mod snapshot_stream;
