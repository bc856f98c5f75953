//! The seed Perl script's table, line for line; and its nine counters in
//! exact bytes as JSON and CSV.

use std::io::Write;

use serde_json::json;

use memtally_core::analyze::classic::Classic;

use crate::render::blocks::{write_text, Block};
use crate::render::{Printer, Screen};

impl Printer for Classic {
    fn table(&self, out: &mut dyn Write, screen: Screen) -> std::io::Result<()> {
        let width = screen.width;
        write_text(blocks(self), width, out)
    }

    fn json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let doc: serde_json::Map<String, serde_json::Value> =
            counters(self).into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        crate::render::json::line(out, &doc)
    }

    fn csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(["counter", "bytes"])?;
        for (k, v) in counters(self) {
            w.write_record([k.to_string(), v.to_string()])?;
        }
        w.flush()
    }
}

/// The counters by name, in the table's order (the JSON and CSV keys).
fn counters(c: &Classic) -> [(&'static str, u64); 9] {
    [
        ("file_executable", c.mapped_executable),
        ("file_rodata", c.mapped_rodata),
        ("file_data", c.mapped_rwdata),
        ("file_unknown", c.mapped_unknown),
        ("anon_writable_code", c.writable_code),
        ("anon_data", c.data),
        ("anon_rodata", c.rodata),
        ("anon_unreadable", c.unreadable),
        ("anon_unknown", c.unbacked_unknown),
    ]
}

/// The schema of the JSON document: each counter bytes, every one there,
/// nothing else (docs/schema/, [`crate::render::schema`]).
#[cfg(feature = "schema")]
pub(crate) fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = counters(&Classic::default()).iter().map(|(k, _)| *k).collect();
    let properties: serde_json::Map<String, serde_json::Value> =
        names.iter().map(|k| (k.to_string(), json!({ "type": "integer", "minimum": 0 }))).collect();
    schemars::json_schema!({ "type": "object", "properties": properties, "required": names })
}

/// Perl prints numbers with `%.15g`; page-aligned sizes are whole kB, but
/// an unaligned range would give a fraction, printed as Perl would.
fn perl_kb(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        return (bytes / 1024).to_string();
    }
    // %.15g keeps 15 significant digits and drops trailing zeros.
    let v = bytes as f64 / 1024.0;
    let digits_before = (v.trunc() as u64).to_string().len();
    let keep = 15usize.saturating_sub(digits_before);
    format!("{v:.keep$}").trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The seed's lines as blocks: a heading per kind of backing, a line per
/// counter padded as the seed pads it (`show --classic` equals the seed's
/// output byte for byte; every line is far narrower than any terminal).
pub(crate) fn blocks(c: &Classic) -> Vec<Block> {
    let lines = [
        ("Backed by file:", None),
        ("  Executable               ", Some(c.mapped_executable)),
        ("  RO data                  ", Some(c.mapped_rodata)),
        ("  Data                     ", Some(c.mapped_rwdata)),
        ("  Unknown                  ", Some(c.mapped_unknown)),
        ("Anonymous:", None),
        ("  Writable code (stack)    ", Some(c.writable_code)),
        ("  Data (malloc, mmap)      ", Some(c.data)),
        ("  RO data                  ", Some(c.rodata)),
        ("  Unreadable               ", Some(c.unreadable)),
        ("  Unknown                  ", Some(c.unbacked_unknown)),
    ];
    lines
        .into_iter()
        .map(|(label, value)| match value {
            Some(v) => Block::Line(format!("{label}{}", perl_kb(v))),
            None => Block::Heading(label.into()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn prints_whole_kb_and_fractions_like_perl() {
        assert_eq!(super::perl_kb(6156 * 1024), "6156");
        assert_eq!(super::perl_kb(512), "0.5");
        assert_eq!(super::perl_kb(0), "0");
    }
}
