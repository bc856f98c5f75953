//! smaps / maps text: the parser and every analysis over what it returns.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memtally_core::analyze::{categorize, show};
use memtally_core::model::Sizes;
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
    let sum = Sizes::total(&regions);
    let procs = vec![memtally_core::model::Process {
        pid: 1,
        comm: String::new(),
        cmdline: String::new(),
        source: memtally_core::model::SizeSource::Smaps,
        regions,
        rollup: None,
        streamed: None,
    }];
    for by in [show::ShowBy::Category, show::ShowBy::Path, show::ShowBy::Perms] {
        let rep = show::build(procs.clone(), by, &["dirty".into(), "rss".into()], Some(3));
        assert_eq!(rep.totals.rss, sum.rss);
        let _ = memtally_core::analyze::snapshot::linux_snapshot(&rep.processes, Default::default(), vec![]);
    }
    let _ = memtally_core::analyze::classic::classic(&procs[0].regions);
});
