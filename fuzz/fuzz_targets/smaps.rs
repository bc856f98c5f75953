//! smaps / maps text: the parser and every analysis over what it returns.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memtally_core::analyze::{categorize, report, total};
use memtally_core::source::smaps::SmapsReader;

fuzz_target!(|data: &[u8]| {
    let mut regions = Vec::new();
    for r in SmapsReader::new(data) {
        match r {
            Ok(r) => regions.push(r),
            Err(_) => break,
        }
    }
    for r in &regions {
        let _ = categorize(r);
    }
    let sum = total(&regions);
    let procs = [memtally_core::model::Process {
        pid: 1,
        comm: String::new(),
        cmdline: String::new(),
        source: memtally_core::model::SizeSource::Smaps,
        regions,
        rollup: None,
        streamed: None,
    }];
    for by in [report::ShowBy::Category, report::ShowBy::Path, report::ShowBy::Perms] {
        let rep = report::build(&procs, by, &["dirty".into(), "rss".into()], Some(3));
        assert_eq!(rep.totals.rss, sum.rss);
        let _ = memtally_core::render::show::json_value(&rep);
    }
    let _ = memtally_core::analyze::classic::classic(&procs[0].regions);
});
