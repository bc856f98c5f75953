//! The machine level: `top`'s machine picture, the waterfall of
//! `memtally machine` (MemTotal split into lines that add up to it).

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use memtally_core::analyze::machine::Line as MachineLine;
use memtally_core::analyze::top::Machine;

use crate::render::table::escape_controls;
use crate::render::units::{human, human_opt, signed};
use crate::ui::app::App;

/// The picture's lines: (label, figure, bytes for the bar, what it is):
/// used and buff/cache as `free` prints them, then the machine waterfall
/// (`memtally machine`): MemTotal split into lines that add up to it, each
/// with its source.
pub fn lines(m: &Machine, gpu: Option<u64>) -> Vec<(String, String, u64, String)> {
    let mut out = vec![(
        "used".to_string(),
        human(m.used),
        m.used,
        crate::render::machine::USED_MEANS.to_string(),
    )];
    if let Some(c) = m.buff_cache {
        out.push(("buff/cache".into(), human(c), c, "Buffers + Cached + SReclaimable".into()));
    }
    for l in m.lines.iter().filter(|l| l.bytes != 0) {
        out.push((
            format!("  {}", l.name),
            signed(l.bytes),
            l.bytes.max(0) as u64,
            l.source.clone(),
        ));
        // THP is a part of the anonymous lines, not a line of its own.
        let thp = m.thp.and_then(|t| t.anon).filter(|&a| a > 0);
        if let (Some(thp), MachineLine::AnonUnread) = (thp, l.name) {
            out.push((
                "    of them THP".into(),
                human(thp),
                thp,
                "AnonHugePages: anonymous memory in transparent huge pages (in the lines above)"
                    .into(),
            ));
        }
    }
    if let Some(g) = gpu {
        out.push((
            "GPU".into(),
            human(g),
            g,
            "GPU memory of processes (DRM/dma-buf fdinfo)".into(),
        ));
    }
    out
}

fn bar(part: u64, total: u64, width: usize) -> String {
    if total == 0 {
        return String::new();
    }
    // A line larger than MemTotal (crafted meminfo) fills the bar, and no
    // more: unclamped, 16 EiB over 1 GiB asked for a string of 2^38 cells.
    let eighths = (part.min(total) as u128 * width as u128 * 8 / total as u128) as usize;
    let mut s = "█".repeat(eighths / 8);
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    s.push_str(PARTS[eighths % 8]);
    s
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(top) = &app.top else { return };
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut text: Vec<Line> = Vec::new();
    let Some(m) = &top.report.machine else {
        text.push(Line::from("no machine picture: this /proc tree has no readable meminfo"));
        text.push(Line::from(""));
        text.push(Line::from("Enter: the processes"));
        frame.render_widget(Paragraph::new(text), area);
        return;
    };
    let mut head = format!("machine (from meminfo)  total {}", human(m.total));
    if let Some(a) = m.available {
        head.push_str(&format!("  available {}", human(a)));
    }
    if let Some(s) = m.swap.as_ref().filter(|s| s.total > 0) {
        head.push_str(&format!("  swap used {} of {}", human(s.used), human(s.total)));
    }
    text.push(Line::from(Span::styled(head, bold)));
    let bar_width = (area.width as usize).saturating_sub(86).clamp(4, 30);
    // What each line is made of, cut with a marker where the screen ends
    // (cut hard, "as free(1) p" read as a sentence).
    let what_room =
        usize::from(area.width).saturating_sub(2 + 21 + 1 + 7 + 1 + 4 + 1 + bar_width + 2);
    for (label, figure, bytes, what) in lines(m, top.report.totals.gpu) {
        let pct = if m.total > 0 { bytes as f64 * 100.0 / m.total as f64 } else { 0.0 };
        let what = crate::render::width::cut(&what, what_room);
        text.push(Line::from(format!(
            "  {label:<21} {figure:>7} {pct:>3.0}% {:<bar_width$}  {what}",
            bar(bytes, m.total, bar_width)
        )));
    }
    let mut largest: Vec<_> = top.scan.processes.iter().collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.sizes.pss));
    // Rows left under the picture, after a blank, the heading and the
    // two footer lines; with none, no heading stands over nothing.
    let room = (area.height as usize).saturating_sub(text.len() + 2 + 2);
    if room > 0 && !largest.is_empty() {
        text.push(Line::from(""));
        text.push(Line::from(Span::styled("largest processes (PSS)", bold)));
    }
    // As many as the screen holds below the picture (5 left 20 lines
    // empty at 200x50), each on one line.
    let command_room = usize::from(area.width).saturating_sub(2 + 7 + 1 + 7 + 2);
    for p in largest.into_iter().take(room) {
        let command = escape_controls(p.info.command());
        let command = crate::render::width::cut(&command, command_room);
        text.push(Line::from(format!(
            "  {:>7} {:>7}  {command}",
            p.info.pid,
            human_opt(p.sizes.pss),
        )));
    }
    text.push(Line::from(""));
    text.push(Line::from("Enter: the processes   ?: keys"));
    frame.render_widget(Paragraph::new(text), area);
}

#[cfg(test)]
mod tests {
    use memtally_core::model::ZramStat;

    /// The explorer's machine level has the zram and zswap lines, THP as
    /// a part of the anonymous lines, and swap in its heading's figures.
    #[test]
    fn zram_zswap_and_thp_are_on_the_machine_level() {
        let mi = memtally_core::source::parse::meminfo::parse(
            b"MemTotal: 1000000 kB\nMemFree: 500000 kB\nAnonPages: 40000 kB\nAnonHugePages: 4096 kB\nSwapTotal: 1000 kB\nSwapFree: 0 kB\nZswap: 64 kB\n",
        )
        .unwrap();
        let mut m = memtally_core::analyze::machine::machine(&mi, &[]).unwrap();
        let stat = ZramStat { mem_used_total: 8 << 20, ..Default::default() };
        m.add_zram(vec![("zram0".into(), stat)], Vec::new());
        let lines = super::lines(&m, None);
        let find = |label: &str| lines.iter().find(|l| l.0 == label).map(|l| l.2);
        assert_eq!(find("  zram"), Some(8 << 20));
        assert_eq!(find("  zswap"), Some(64 << 10));
        assert_eq!(find("    of them THP"), Some(4 << 20));
        let at = |label: &str| lines.iter().position(|l| l.0 == label).unwrap();
        assert_eq!(at("    of them THP"), at("  anon_unread") + 1);
    }

    /// A line past MemTotal (crafted meminfo) fills the bar and no more.
    #[test]
    fn a_bar_stops_at_its_width() {
        assert_eq!(super::bar(u64::MAX, 1 << 30, 30).chars().count(), 30);
        assert_eq!(super::bar(1 << 29, 1 << 30, 30).chars().count(), 15);
    }
}
