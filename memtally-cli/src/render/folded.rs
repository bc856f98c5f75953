//! Folded stacks, the text flamegraph.pl, inferno, speedscope and
//! Pyroscope read: a line per stack, its frames outermost first joined by
//! `;`, a space, then an integer count (here bytes). A frame is a name
//! from a process (a command, a path): its control characters are escaped
//! as every text view escapes them (`\n`, `\t`, `?`: table::escape_controls),
//! so no line break splits a line, and its own `;`, which would split the
//! frame, becomes `:`; the same in every folded output (`faults`, `top`,
//! `snapshot`). A frame may hold spaces, since readers take the count
//! after the line's last space.

use std::io::{self, Write};

use crate::render::table::escape_controls;

/// Appends `name` to `line` as one frame (after a `;` unless `line` is
/// empty).
pub fn push_frame(line: &mut String, name: &str) {
    if !line.is_empty() {
        line.push(';');
    }
    let name = escape_controls(name.to_string());
    line.extend(name.chars().map(|ch| if ch == ';' { ':' } else { ch }));
}

/// The folded line of `frames` with `count`, without its line break.
pub fn line<'a>(frames: impl IntoIterator<Item = &'a str>, count: u64) -> String {
    let mut line = String::new();
    for f in frames {
        push_frame(&mut line, f);
    }
    line.push(' ');
    line.push_str(&count.to_string());
    line
}

/// Writes one folded line of `frames` with `count`; nothing for a count
/// of 0 (a stack of no width, which a flame graph does not draw).
pub fn write<'a>(
    out: &mut dyn Write,
    frames: impl IntoIterator<Item = &'a str>,
    count: u64,
) -> io::Result<()> {
    if count == 0 {
        return Ok(());
    }
    writeln!(out, "{}", line(frames, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_join_with_semicolons_and_their_own_are_replaced() {
        assert_eq!(line(["a b", "c;d", "e\nf", "g\x1bh\r"], 42), "a b;c:d;e\\nf;g?h? 42");
        assert_eq!(line(["x"], 0), "x 0");
    }
}
