//! The skeleton of a document whose items print as they are read (`show`
//! and `vmmap` with `--format json`, and their CSV and `--regions` lines):
//! the bytes gathered and written in large pieces, the JSON framing
//! (`{head keys,"regions":[` item `,` item … `]`, the closing keys, `}`),
//! and the write that failed while printing as a
//! [`RegionSink`](memtally_core::model::RegionSink), kept for the end.

use std::io::{self, Write};

use serde::Serialize;

use memtally_core::model::Flow;

/// Bytes gathered before a write to the output.
const FLUSH_AT: usize = 128 * 1024;

/// A streamed document's buffer, framing and failed write.
pub struct StreamDoc {
    buf: Vec<u8>,
    /// Whether an item is printed (the next one takes a comma).
    items: bool,
    /// The write that failed while printing as a sink ([`Self::keep`]).
    failed: Option<io::Error>,
}

impl Default for StreamDoc {
    fn default() -> StreamDoc {
        StreamDoc { buf: Vec::with_capacity(FLUSH_AT + 4096), items: false, failed: None }
    }
}

/// No keys before the items (`vmmap`'s document starts with its regions).
pub struct NoKeys;

/// No keys: an object that has none.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for NoKeys {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoKeys".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object", "additionalProperties": false })
    }
}

impl Serialize for NoKeys {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        serializer.serialize_map(Some(0))?.end()
    }
}

/// The keys of `doc`, sorted: an object's, or none for `None`.
fn keys(doc: &impl Serialize) -> io::Result<serde_json::Map<String, serde_json::Value>> {
    match crate::render::json::sorted(doc)? {
        serde_json::Value::Object(map) => Ok(map),
        serde_json::Value::Null => Ok(serde_json::Map::new()),
        other => Err(io::Error::other(format!("not a JSON object: {other}"))),
    }
}

impl StreamDoc {
    /// The buffer, for lines that are not JSON items (CSV rows, table lines).
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// `{`, the keys of `head` (sorted), and the opening of the array `key`.
    /// Head and tail must have a JSON Schema, as [`json::line`](crate::render::json::line)'s documents.
    pub fn open(&mut self, head: &impl crate::render::json::Doc, key: &str) -> io::Result<()> {
        self.buf.push(b'{');
        for (k, v) in keys(head)? {
            serde_json::to_writer(&mut self.buf, &k)?;
            self.buf.push(b':');
            serde_json::to_writer(&mut self.buf, &v)?;
            self.buf.push(b',');
        }
        serde_json::to_writer(&mut self.buf, key)?;
        self.buf.extend_from_slice(b":[");
        Ok(())
    }

    /// One item of the array, written by `write` after a comma where one
    /// is due.
    pub fn item(&mut self, write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> io::Result<()> {
        if self.items {
            self.buf.push(b',');
        }
        self.items = true;
        write(&mut self.buf)
    }

    /// Writes what is gathered to `out` once there is enough of it.
    pub fn flush_if_full(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// `]`, the keys of `tail` (sorted, the document's `schema` among
    /// them) and `}` with a newline.
    pub fn close(&mut self, tail: &impl crate::render::json::Doc) -> io::Result<()> {
        self.buf.push(b']');
        let mut tail = keys(tail)?;
        crate::render::json::with_schema(&mut tail);
        for (k, v) in tail {
            self.buf.push(b',');
            serde_json::to_writer(&mut self.buf, &k)?;
            self.buf.push(b':');
            serde_json::to_writer(&mut self.buf, &v)?;
        }
        self.buf.extend_from_slice(b"}\n");
        Ok(())
    }

    /// Writes everything gathered to `out`.
    pub fn write_out(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// A sink's answer to `written`: go on, or stop and keep the error
    /// for [`take_failed`](Self::take_failed).
    pub fn keep(&mut self, written: io::Result<()>) -> Flow {
        match written {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.failed = Some(e);
                Flow::Stop
            }
        }
    }

    /// The write that stopped the read, if one did.
    pub fn take_failed(&mut self) -> Option<io::Error> {
        self.failed.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    struct Head {
        pid: u32,
        comm: &'static str,
    }

    fn doc(items: &[u32], head: &impl crate::render::json::Doc) -> String {
        let mut d = StreamDoc::default();
        d.open(head, "regions").unwrap();
        for i in items {
            d.item(|w| serde_json::to_writer(w, i).map_err(io::Error::other)).unwrap();
        }
        d.close(&serde_json::json!({"z": 1, "a": [2]})).unwrap();
        let mut out = Vec::new();
        d.write_out(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn frames_the_items_between_sorted_head_and_tail_keys() {
        assert_eq!(
            doc(&[1, 2, 3], &Head { pid: 7, comm: "x" }),
            "{\"comm\":\"x\",\"pid\":7,\"regions\":[1,2,3],\"a\":[2],\"schema\":1,\"z\":1}\n"
        );
        assert_eq!(doc(&[], &NoKeys), "{\"regions\":[],\"a\":[2],\"schema\":1,\"z\":1}\n");
        assert_eq!(doc(&[4], &None::<Head>), "{\"regions\":[4],\"a\":[2],\"schema\":1,\"z\":1}\n");
    }

    #[test]
    fn a_failed_write_stops_the_sink_and_is_kept() {
        let mut d = StreamDoc::default();
        assert_eq!(d.keep(Ok(())), Flow::Continue);
        assert_eq!(d.keep(Err(io::Error::other("closed"))), Flow::Stop);
        assert_eq!(d.take_failed().map(|e| e.to_string()).as_deref(), Some("closed"));
        assert!(d.take_failed().is_none());
    }
}
