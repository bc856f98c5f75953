//! `watch --format perfetto`: the samples as counter tracks in the Chrome
//! trace event format (JSON object form, `{"traceEvents":[…]}`), which
//! ui.perfetto.dev and chrome://tracing open. Written as samples arrive,
//! an event a line; [`Trace::finish`] closes the document (the watch calls
//! it at --count's end, at Ctrl-C, SIGTERM or SIGHUP) so the file is one
//! valid JSON value. docs/interop.md says what each track is;
//! testdata/schema/trace-event-format.json, written from the format's
//! document rather than from these types, is its shape.
//!
//! Each figure of a series is one counter (`"ph":"C"`) with one argument,
//! `bytes` (a counter of several arguments is drawn stacked, which these
//! figures are not): a process's under its PID, named by the figure
//! (`pss`); the selection's total (`total pss`) and its categories
//! (`heap pss`) under [`SELECTION_PID`], which no process has. A `process_name`
//! metadata event (`"ph":"M"`) names each PID the first time it appears.
//! Timestamps are microseconds since the watch started.

use std::collections::HashSet;
use std::io::{self, Write};

use serde::Serialize;

use memtally_core::analyze::trend::{Sample, Scope};
use memtally_core::model::Named;

use crate::render::watch::columns;

/// The PID the selection's total and categories are drawn under:
/// Linux's PID_MAX_LIMIT (2^22), which no process has (PIDs stay below
/// `pid_max`, at most this), nor a macOS one. Not 0: trace processors
/// take PID 0 for the kernel's idle task.
pub const SELECTION_PID: u32 = 1 << 22;

/// A trace being written.
#[derive(Debug, Default)]
pub struct Trace {
    /// Whether the document's opening and a first event are written.
    opened: bool,
    /// Events written (the next needs a comma before it).
    events: u64,
    /// PIDs already named by a metadata event.
    named: HashSet<u32>,
}

#[derive(Serialize)]
struct Counter<'a> {
    name: &'a str,
    ph: &'static str,
    ts: u64,
    pid: u32,
    tid: u32,
    args: Bytes,
}

#[derive(Serialize)]
struct Bytes {
    bytes: u64,
}

#[derive(Serialize)]
struct Metadata<'a> {
    name: &'static str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    args: Name<'a>,
}

#[derive(Serialize)]
struct Name<'a> {
    name: &'a str,
}

impl Trace {
    /// Writes the counters of sample `now`, taken `t` seconds after the
    /// watch started (`wss`: with the working-set figures).
    pub fn sample(
        &mut self,
        t: f64,
        now: &Sample,
        wss: bool,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let ts = (t * 1e6).round() as u64;
        for ((scope, key), (label, sizes)) in now {
            let (pid, prefix) = match scope {
                Scope::Process => match key.parse::<u32>() {
                    Ok(pid) => (pid, None),
                    Err(_) => continue,
                },
                Scope::Total => (SELECTION_PID, Some("total")),
                Scope::Category => (SELECTION_PID, Some(key.as_str())),
            };
            if self.named.insert(pid) {
                let name = match scope {
                    Scope::Process => format!("{label} ({pid})"),
                    Scope::Total | Scope::Category => "memtally: the selection".to_string(),
                };
                let m = Metadata {
                    name: "process_name",
                    ph: "M",
                    pid,
                    tid: pid,
                    args: Name { name: &name },
                };
                self.event(&m, out)?;
            }
            for f in columns(wss) {
                let Some(bytes) = sizes.figure(f.0) else { continue };
                let name = match prefix {
                    Some(p) => format!("{p} {}", f.name()),
                    None => f.name().to_string(),
                };
                let c = Counter { name: &name, ph: "C", ts, pid, tid: pid, args: Bytes { bytes } };
                self.event(&c, out)?;
            }
        }
        out.flush()
    }

    /// Closes the document (opening it first when no sample came).
    pub fn finish(self, out: &mut dyn Write) -> io::Result<()> {
        if !self.opened {
            out.write_all(b"{\"traceEvents\":[")?;
        }
        out.write_all(b"\n],\"displayTimeUnit\":\"ms\"}\n")?;
        out.flush()
    }

    fn event(&mut self, e: &impl Serialize, out: &mut dyn Write) -> io::Result<()> {
        if !self.opened {
            out.write_all(b"{\"traceEvents\":[")?;
            self.opened = true;
        }
        out.write_all(if self.events == 0 { b"\n" } else { b",\n" })?;
        serde_json::to_writer(&mut *out, e)?;
        self.events += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtally_core::model::Sizes;

    fn sample(pss: u64) -> Sample {
        let mut s = Sample::new();
        let sizes = Sizes { pss: Some(pss), rss: Some(2 * pss), ..Sizes::default() };
        s.insert((Scope::Process, "42".into()), ("cat \"x\"".into(), sizes.clone()));
        s.insert((Scope::Total, "total".into()), ("1 processes".into(), sizes.clone()));
        s.insert((Scope::Category, "heap".into()), ("heap / anon rw".into(), sizes));
        s
    }

    #[test]
    fn samples_are_counters_in_one_closed_document() {
        let mut out = Vec::new();
        let mut trace = Trace::default();
        trace.sample(0.0, &sample(4096), false, &mut out).unwrap();
        trace.sample(0.25, &sample(8192), false, &mut out).unwrap();
        trace.finish(&mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).expect("one JSON document");
        let events = doc["traceEvents"].as_array().unwrap();
        let named: Vec<_> = events.iter().filter(|e| e["ph"] == "M").collect();
        assert_eq!(named.len(), 2, "PID 42 and the selection, once each: {named:?}");
        let names: Vec<_> = named.iter().map(|e| (&e["pid"], &e["args"]["name"])).collect();
        assert!(names.contains(&(&42.into(), &"cat \"x\" (42)".into())), "{names:?}");
        let pss: Vec<(u64, u64)> = events
            .iter()
            .filter(|e| e["ph"] == "C" && e["pid"] == 42 && e["name"] == "pss")
            .map(|e| (e["ts"].as_u64().unwrap(), e["args"]["bytes"].as_u64().unwrap()))
            .collect();
        assert_eq!(pss, [(0, 4096), (250_000, 8192)]);
        assert!(events.iter().any(|e| e["name"] == "heap pss" && e["pid"] == SELECTION_PID));
        assert!(events.iter().any(|e| e["name"] == "total rss" && e["pid"] == SELECTION_PID));
    }

    #[test]
    fn a_watch_without_samples_is_an_empty_trace() {
        let mut out = Vec::new();
        Trace::default().finish(&mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["traceEvents"].as_array().map(Vec::len), Some(0));
    }
}
