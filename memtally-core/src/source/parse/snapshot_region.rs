//! A snapshot region read in place, as memtally writes it: one pass over
//! its bytes, strings borrowed, figures written straight into their
//! [`Sizes`] slots. `diff` reads every region of two snapshots and keeps
//! few; through serde_json (framed, then parsed, then three strings
//! allocated) that was most of its time. Keys are matched where they lie
//! against the key the last region had at the same place, as three masked
//! 8-byte words; a string's end is found by `memchr` (a crate already in
//! the build: reading the strings took 54M instructions with a byte loop,
//! 45M with it); integers are added up unchecked to 19 digits. Each step
//! measured on the 14 MB pair of docs/benchmarks.md (`diff` section).
//!
//! Anything this reader does not expect (an escape in a string, a nested
//! or non-integer value, a repeated field, a name this build does not
//! know, the end of the bytes) makes it answer `None`, and the caller
//! reads the same bytes with the serde reader (`model::snap_region_de`),
//! whose outcome, error or region, is the one that counts. So this reader
//! only has to agree with it on what it accepts, which the tests check.

use crate::model::region::Purge;
use crate::model::sizes::{Sizes, KNOWN_KEYS};
use crate::model::snapshot::{path_key_of, region_id, SnapRegion};

/// A region whose strings are borrowed from the document's bytes.
#[derive(Debug)]
pub(crate) struct RegionInPlace<'a> {
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub perms: &'a str,
    pub path: Option<&'a str>,
    pub category: &'a str,
    pub region_type: Option<&'a str>,
    pub purge: Option<Purge>,
    pub offset: Option<u64>,
    pub inode: Option<u64>,
    pub sizes: Sizes,
}

impl RegionInPlace<'_> {
    /// The region, owned.
    pub fn to_region(&self) -> SnapRegion {
        SnapRegion {
            start: self.start,
            end: self.end,
            perms: self.perms.to_string(),
            path: self.path.map(str::to_string),
            category: self.category.to_string(),
            region_type: self.region_type.map(str::to_string),
            purge: self.purge,
            offset: self.offset,
            inode: self.inode,
            sizes: self.sizes.clone(),
        }
    }

    /// [`SnapRegion::id`] of the owned region, without owning it.
    pub fn id(&self) -> u64 {
        region_id(self.start, self.end, self.perms, self.path)
    }

    /// [`SnapRegion`]'s per-path grouping name.
    pub fn path_key(&self) -> &str {
        path_key_of(self.path, self.region_type)
    }
}

/// A key of a region object: one of the region's own fields (an index in
/// [`OWN_KEYS`]) or a known figure (an index in [`KNOWN_KEYS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Own(usize),
    Figure(usize),
}

/// The region's own fields, in the order [`region`] numbers them.
const OWN_KEYS: [&str; 9] =
    ["start", "end", "perms", "path", "category", "region_type", "purge", "offset", "inode"];

impl Key {
    /// The key named `name` exactly (as bytes), if it is one.
    fn named(name: &[u8]) -> Option<Key> {
        if let Some(at) = OWN_KEYS.iter().position(|k| k.as_bytes() == name) {
            return Some(Key::Own(at));
        }
        KNOWN_KEYS.iter().position(|k| k.name.as_bytes() == name).map(Key::Figure)
    }

    fn name(self) -> &'static [u8] {
        match self {
            Key::Own(at) => OWN_KEYS[at].as_bytes(),
            Key::Figure(at) => KNOWN_KEYS[at].name.as_bytes(),
        }
    }
}

/// A key's name and closing `"` as they lie in the bytes, matched against
/// the bytes ahead as three 8-byte words under a mask: one comparison of
/// a few instructions where a slice's was a call to `memcmp`, once a key.
#[derive(Debug, Clone, Copy)]
struct Expected {
    key: Key,
    /// The name's length (the key's name, not looked up again a key).
    len: usize,
    words: [u64; 3],
    masks: [u64; 3],
}

/// How many bytes [`Expected`] compares at once.
const AHEAD: usize = 24;

/// `b` as three little-endian words.
fn words(b: &[u8; AHEAD]) -> [u64; 3] {
    let mut w = [0u64; 3];
    for (slot, chunk) in w.iter_mut().zip(b.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        *slot = u64::from_le_bytes(word);
    }
    w
}

impl Expected {
    fn of(key: Key) -> Expected {
        let name = key.name();
        let (mut bytes, mut mask) = ([0u8; AHEAD], [0u8; AHEAD]);
        // A name too long for the words (none is) is compared as a slice.
        if name.len() < AHEAD {
            bytes[..name.len()].copy_from_slice(name);
            bytes[name.len()] = b'"';
            mask[..=name.len()].fill(0xff);
        }
        Expected { key, len: name.len(), words: words(&bytes), masks: words(&mask) }
    }

    /// Whether `rest` starts with the key's name and a `"`.
    fn starts(&self, rest: &[u8]) -> bool {
        match rest.first_chunk::<AHEAD>() {
            Some(ahead) if self.len < AHEAD => {
                let w = words(ahead);
                (0..3).fold(0, |d, k| d | ((w[k] ^ self.words[k]) & self.masks[k])) == 0
            }
            _ => {
                let name = self.key.name();
                rest.len() > name.len() && rest[name.len()] == b'"' && &rest[..name.len()] == name
            }
        }
    }
}

/// memtally writes every region's keys in one order: which key each place
/// held in the last region, so the next region's key is matched where it
/// lies (its name and the closing `"`, one comparison), not read and then
/// searched for among the names.
#[derive(Debug, Default)]
pub(crate) struct KeyHint(Vec<Option<Expected>>);

impl KeyHint {
    /// The key whose name starts `c`'s bytes (its opening `"` consumed) at
    /// the `place`th key of its object, consumed with its closing `"`;
    /// `None` for a key that is none of the known ones, or not as memtally
    /// writes keys (see [`Cursor::raw_string`]).
    fn key(&mut self, place: usize, c: &mut Cursor<'_>) -> Option<Key> {
        if let Some(Some(expected)) = self.0.get(place) {
            // A name has no `"`, `\\` or control byte, so a key that
            // starts with it and a `"` is that name, as the full read
            // below would find it.
            if expected.starts(&c.b[c.i..]) {
                c.i += expected.len + 1;
                return Some(expected.key);
            }
        }
        // Keys are matched as bytes: a key with anything but the ASCII of
        // a known name matches none (and is left to serde).
        let key = Key::named(c.raw_string()?)?;
        if self.0.len() <= place {
            self.0.resize(place + 1, None);
        }
        self.0[place] = Some(Expected::of(key));
        Some(key)
    }
}

/// The region object at the start of `bytes` (its `{` first) and how many
/// bytes it takes, through its `}`; `None` for anything but a region as
/// memtally writes it (see the module's notes).
pub(crate) fn region<'a>(
    bytes: &'a [u8],
    hint: &mut KeyHint,
) -> Option<(RegionInPlace<'a>, usize)> {
    let mut c = Cursor { b: bytes, i: 0 };
    if c.byte()? != b'{' {
        return None;
    }
    let mut r = RegionInPlace {
        start: None,
        end: None,
        perms: "",
        path: None,
        category: "",
        region_type: None,
        purge: None,
        offset: None,
        inode: None,
        sizes: Sizes::default(),
    };
    let (mut perms, mut category) = (None, None);
    let mut seen = 0u16;
    for place in 0.. {
        if c.byte()? != b'"' {
            return None;
        }
        let key = hint.key(place, &mut c)?;
        if c.byte()? != b':' {
            return None;
        }
        match key {
            Key::Figure(at) => {
                let value = c.number_or_null()?;
                // A derived figure's name (no slot) is read and dropped, as
                // the serde reader does.
                if let Some(slot) = r.sizes.slot_at(at) {
                    *slot = value;
                }
            }
            Key::Own(own) => {
                // A repeated field is the serde reader's error to word.
                if seen & (1 << own) != 0 {
                    return None;
                }
                seen |= 1 << own;
                match own {
                    0 => r.start = c.number_or_null()?,
                    1 => r.end = c.number_or_null()?,
                    2 => perms = Some(c.str()?),
                    3 => r.path = c.str_or_null()?,
                    4 => category = Some(c.str()?),
                    5 => r.region_type = c.str_or_null()?,
                    6 => {
                        r.purge = match c.str_or_null()? {
                            None => None,
                            Some(code @ ("N" | "V" | "E" | "-")) => Some(Purge::from_code(code)),
                            Some(_) => return None,
                        }
                    }
                    7 => r.offset = c.number_or_null()?,
                    _ => r.inode = c.number_or_null()?,
                }
            }
        }
        match c.byte()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    r.perms = perms.unwrap_or("");
    r.category = category?;
    Some((r, c.i))
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    /// The next byte that is not JSON whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(c);
            }
            self.i += 1;
        }
        None
    }

    fn byte(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    /// The bytes of a string whose `"` was consumed, when it has no
    /// escape or control byte; the closing `"` consumed too.
    fn raw_string(&mut self) -> Option<&'a [u8]> {
        let rest = &self.b[self.i..];
        let k = memchr::memchr2(b'"', b'\\', rest)?;
        let s = &rest[..k];
        // Or-ed over every byte, not searched: a loop without an early
        // exit the compiler runs a vector at a time.
        let control = s.iter().fold(false, |any, &c| any | (c < 0x20));
        if rest[k] != b'"' || control {
            return None;
        }
        self.i += k + 1;
        Some(s)
    }

    /// [`Cursor::raw_string`] as text (valid UTF-8).
    fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.raw_string()?).ok()
    }

    fn str(&mut self) -> Option<&'a str> {
        if self.byte()? != b'"' {
            return None;
        }
        self.string()
    }

    fn null(&mut self) -> Option<()> {
        self.b[self.i..].starts_with(b"null").then(|| self.i += 4)
    }

    fn str_or_null(&mut self) -> Option<Option<&'a str>> {
        match self.peek()? {
            b'n' => self.null().map(|_| None),
            _ => self.str().map(Some),
        }
    }

    /// A JSON integer that fits in 64 bits, or `null`; a sign, fraction or
    /// exponent is not one.
    fn number_or_null(&mut self) -> Option<Option<u64>> {
        let first = self.peek()?;
        if first == b'n' {
            return self.null().map(|_| None);
        }
        let rest = &self.b[self.i..];
        if first == b'0' {
            // Most figures are 0, and a JSON number that starts with 0 is
            // 0 (`01` is none; `0.5` and `0e1` are not integers).
            if !ends_number(*rest.get(1)?) {
                return None;
            }
            self.i += 1;
            return Some(Some(0));
        }
        // One pass: nineteen digits are under 10^19, below `u64::MAX`, so
        // they add up unchecked; a longer number is added up again, checked.
        let (mut v, mut n) = (0u64, 0);
        while let Some(&d) = rest.get(n) {
            if !d.is_ascii_digit() {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            n += 1;
        }
        if n == 0 {
            return None;
        }
        // Past the digits: a delimiter, not a fraction, an exponent or the
        // end of the bytes (the number may go on).
        if !ends_number(*rest.get(n)?) {
            return None;
        }
        if n >= 20 {
            v = rest[..n]
                .iter()
                .try_fold(0u64, |v, d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')))?;
        }
        self.i += n;
        Some(Some(v))
    }
}

/// Whether `b` may follow a number in a region object: a delimiter, not
/// a fraction or an exponent.
fn ends_number(b: u8) -> bool {
    matches!(b, b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the serde reader makes of `json`, as JSON text (an error as its kind).
    fn by_serde(json: &str) -> Option<String> {
        let r: SnapRegion = serde_json::from_str(json).ok()?;
        Some(serde_json::to_string(&r).unwrap())
    }

    #[test]
    fn what_it_reads_it_reads_as_serde_does() {
        let cases = [
            r#"{"start":4096,"end":8192,"perms":"rw-p","path":null,"category":"heap","offset":0,"inode":0,"size":4096,"rss":4096,"private_dirty":4096,"anonymous":4096}"#,
            r#"{ "category" : "code" , "path" : "/usr/lib/libc.so.6", "perms":"r-xp", "start":1, "end":18446744073709551615 }"#,
            r#"{"category":"MALLOC","region_type":"MALLOC","purge":"V","start":null,"end":null,"size":1,"dirty":2}"#,
            r#"{"category":"x","rss":1,"rss":5,"pss":null}"#,
            r#"{"category":"x","path":"/tmp/caf\u00e9"}"#,
            r#"{"category":"x","path":"/tmp/café ☕"}"#,
            r#"{"category":"x","new_figure":7}"#,
            r#"{"category":"x","rss":1.5}"#,
            r#"{"category":"x","rss":-1}"#,
            r#"{"category":"x","rss":"1"}"#,
            r#"{"category":"x","rss":01}"#,
            r#"{"category":"x","rss":0.5}"#,
            r#"{"category":"x","rss":0e1}"#,
            r#"{"category":"x","rss":00}"#,
            r#"{"category":"x","path":"a\u0001b"}"#,
            "{\"category\":\"x\",\"path\":\"a\u{1}b\"}",
            r#"{"category":"x","path":"a\"b"}"#,
            r#"{"category":"x","start":18446744073709551616}"#,
            r#"{"category":"x","start":99999999999999999999}"#,
            r#"{"category":"x","start":100000000000000000000}"#,
            r#"{"category":"x","start":9999999999999999999,"end":10000000000000000000}"#,
            r#"{"category":"x","category":"y"}"#,
            r#"{"category":"x","purge":"Q"}"#,
            r#"{"category":"x","perms":null}"#,
            r#"{"start":1}"#,
            r#"{}"#,
            r#"{"category":"x","a":{"b":1}}"#,
        ];
        let mut fast = 0;
        for json in cases {
            let want = by_serde(json);
            if let Some((r, n)) = region(json.as_bytes(), &mut KeyHint::default()) {
                fast += 1;
                assert_eq!(n, json.len(), "{json}");
                let got = r.to_region();
                assert_eq!(Some(serde_json::to_string(&got).unwrap()), want, "{json}");
                assert_eq!(r.id(), got.id(), "{json}");
                assert_eq!(r.path_key(), got.path_key(), "{json}");
                let serde: SnapRegion = serde_json::from_str(json).unwrap();
                assert_eq!(got.sizes, serde.sizes, "{json}");
            }
        }
        assert_eq!(fast, 6, "the plain cases are read in place");
    }

    #[test]
    fn the_key_hint_of_one_order_misleads_no_other() {
        let mut hint = KeyHint::default();
        let mut read = 0;
        for json in [
            r#"{"category":"a","rss":1,"pss":2,"swap":3}"#,
            r#"{"category":"a","pss":4,"rss":5,"swap_pss":6}"#,
            r#"{"category":"a","swap":7,"pss":8}"#,
            r#"{"category":"a","rss":9,"pss":10,"swap":11}"#,
            r#"{"categoryx":"c","category":"c"}"#,
            r#"{"category":"c","rssx":1}"#,
            r#"{"path":"/a","category":"b","rss":12,"start":1}"#,
            r#"{"category":"c","path":"/a","start":2,"rss":13}"#,
            r#"{"category":"c","rss":14}"#,
        ] {
            // A name this reader does not know is left to serde (and
            // must not mislead the next region's read).
            let Some((r, _)) = region(json.as_bytes(), &mut hint) else { continue };
            read += 1;
            let serde: SnapRegion = serde_json::from_str(json).unwrap();
            assert_eq!(r.to_region().id(), serde.id(), "{json}");
            assert_eq!(r.category, serde.category, "{json}");
            assert_eq!(r.sizes, serde.sizes, "{json}");
        }
        assert_eq!(read, 7, "all but the two unknown names are read in place");
    }

    #[test]
    fn a_key_matched_as_words_is_the_key_matched_as_bytes() {
        let keys = (0..OWN_KEYS.len()).map(Key::Own).chain((0..KNOWN_KEYS.len()).map(Key::Figure));
        let names: Vec<&[u8]> = keys.clone().map(Key::name).collect();
        for key in keys {
            let e = Expected::of(key);
            for other in &names {
                // Each name, and each cut or grown by a byte, followed by
                // a quote and then by short or long rest.
                let mut variants = vec![other.to_vec(), other[1..].to_vec()];
                variants.push([other, &b"x"[..]].concat());
                for v in variants {
                    for tail in [&b""[..], b":", b":0,\"rss\":1234567890123456789012"] {
                        let bytes = [&v[..], b"\"", tail].concat();
                        let by_slice = bytes.len() > key.name().len()
                            && bytes[key.name().len()] == b'"'
                            && &bytes[..key.name().len()] == key.name();
                        assert_eq!(
                            e.starts(&bytes),
                            by_slice,
                            "{key:?} {:?}",
                            String::from_utf8_lossy(&bytes)
                        );
                        assert_eq!(by_slice, v == key.name(), "{key:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_region_cut_short_is_left_to_the_framer() {
        let json =
            r#"{"start":4096,"end":8192,"perms":"rw-p","path":"/a","category":"heap","rss":4096}"#;
        for n in 0..json.len() {
            assert!(
                region(&json.as_bytes()[..n], &mut KeyHint::default()).is_none(),
                "{}",
                &json[..n]
            );
        }
        let (_, n) = region(format!("{json},{json}").as_bytes(), &mut KeyHint::default()).unwrap();
        assert_eq!(n, json.len());
    }
}
