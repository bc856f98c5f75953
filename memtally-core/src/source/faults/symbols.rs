//! Names a return address in a file mapping: the function from the
//! binary's DWARF (inlined frames too, through the addr2line crate) or
//! its symbol table (a function whose size holds the address), the
//! binary's own or its separate debug file's (`debugfile`).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use crate::source::faults::debugfile::{debug_file, DEBUG_ROOT};

use object::{Object, ObjectSegment, ObjectSymbol, ReadCache, SymbolKind};

/// One binary, opened once.
struct Binary {
    loader: addr2line::Loader,
    /// Its loadable segments: (file offset, file size, address).
    segments: Vec<(u64, u64, u64)>,
    /// Its function symbols (static and dynamic): address, size, name,
    /// by address.
    functions: Vec<(u64, u64, String)>,
}

impl Binary {
    fn open(path: &str) -> Option<Binary> {
        let file = File::open(path).ok()?;
        let cache = ReadCache::new(file);
        let obj = object::File::parse(&cache).ok()?;
        let mut functions = functions_of(&obj);
        // The DWARF and the full symbol table of a stripped binary, from
        // its separate debug file where one is installed.
        let debug = debug_file(Path::new(path), &obj, Path::new(DEBUG_ROOT));
        let loader = match &debug {
            Some(debug) => {
                if let Some(obj) = File::open(debug).ok().and_then(|f| {
                    let cache = ReadCache::new(f);
                    let obj = object::File::parse(&cache).ok().map(|o| functions_of(&o));
                    obj
                }) {
                    functions.extend(obj);
                }
                addr2line::Loader::new(debug).or_else(|_| addr2line::Loader::new(path))
            }
            None => addr2line::Loader::new(path),
        }
        .ok()?;
        functions.sort();
        functions.dedup_by_key(|f| f.0);
        Some(Binary { loader, segments: segments(&obj), functions })
    }

    /// The names at `offset` (inlined functions first, as the DWARF has
    /// them), or the symbol table's one.
    fn names(&self, offset: u64) -> Vec<String> {
        let Some(probe) = file_address(&self.segments, offset) else { return Vec::new() };
        let mut names = Vec::new();
        if let Ok(mut frames) = self.loader.find_frames(probe) {
            while let Ok(Some(frame)) = frames.next() {
                if let Some(f) = frame.function.as_ref().and_then(|f| f.demangle().ok()) {
                    names.push(f.into_owned());
                }
            }
        }
        if names.is_empty() {
            // The symbol table's function that holds the address (the
            // nearest one below would name another's code where a stripped
            // binary keeps only its exported symbols).
            let i = self.functions.partition_point(|f| f.0 <= probe);
            if let Some((addr, size, name)) = i.checked_sub(1).map(|i| &self.functions[i]) {
                if probe < addr + size {
                    names.push(addr2line::demangle_auto(name.into(), None).into_owned());
                }
            }
        }
        names
    }
}

/// (file offset, file size, address) of an ELF's loadable segments.
pub(crate) fn segments<'d, R: object::ReadRef<'d>>(
    obj: &object::File<'d, R>,
) -> Vec<(u64, u64, u64)> {
    obj.segments()
        .map(|s| {
            let (offset, size) = s.file_range();
            (offset, size, s.address())
        })
        .collect()
}

/// The address in the binary of a byte at `offset` in its file, from its
/// `segments`.
pub(crate) fn file_address(segments: &[(u64, u64, u64)], offset: u64) -> Option<u64> {
    let &(start, _, addr) =
        segments.iter().find(|&&(start, size, _)| offset >= start && offset < start + size)?;
    Some(offset - start + addr)
}

/// An ELF's sized function symbols (static and dynamic): address, size,
/// name.
fn functions_of<'d, R: object::ReadRef<'d>>(obj: &object::File<'d, R>) -> Vec<(u64, u64, String)> {
    obj.symbols()
        .chain(obj.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
        .collect()
}

/// The binaries opened so far, by path.
#[derive(Default)]
pub(crate) struct Symbols {
    binaries: HashMap<String, Option<Binary>>,
}

impl Symbols {
    /// The functions at `offset` of the file at `path` (innermost first;
    /// empty when it has no symbol there or cannot be read).
    pub(crate) fn names(&mut self, path: &str, offset: u64) -> Vec<String> {
        let binary = self.binaries.entry(path.to_string()).or_insert_with(|| Binary::open(path));
        binary.as_ref().map(|b| b.names(offset)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_to_find() -> usize {
        a_function_to_find as *const () as usize
    }

    /// This very test binary's function is found at its address.
    #[test]
    fn names_a_function_of_this_binary() {
        let ip = a_function_to_find() as u64;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let (path, offset) = maps
            .lines()
            .find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let (lo, hi) = f[0].split_once('-')?;
                let lo = u64::from_str_radix(lo, 16).ok()?;
                let hi = u64::from_str_radix(hi, 16).ok()?;
                let off = u64::from_str_radix(f[2], 16).ok()?;
                let path = f.get(5)?.to_string();
                (lo <= ip && ip < hi).then_some((path, ip - lo + off))
            })
            .expect("a file mapping holds this code");
        let names = Symbols::default().names(&path, offset);
        assert!(names.iter().any(|n| n.contains("a_function_to_find")), "{names:?}");
    }
}
