//! The machine level: `top`'s machine picture (meminfo explained by the
//! processes' PSS, the kernel, the page cache, GPU memory, what is free).

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use memtally_core::analyze::top::Machine;

use crate::render::table::escape_controls;
use crate::render::units::{human, human_opt};
use crate::ui::app::App;

/// The picture's lines: (label, bytes or a signed figure, what it is).
pub fn lines(m: &Machine, readable: usize, gpu: Option<u64>) -> Vec<(String, String, u64, String)> {
    let mut out =
        vec![("in use".to_string(), human(m.used), m.used, "total - free, made of:".to_string())];
    out.push((
        "  processes".into(),
        human(m.processes_pss),
        m.processes_pss,
        format!("PSS of the {readable} processes read"),
    ));
    if let Some(k) = m.kernel {
        out.push(("  kernel".into(), human(k), k, "slab, kernel stacks, page tables".into()));
    }
    if let Some(c) = m.cache_unmapped {
        out.push((
            "  cache".into(),
            human(c),
            c,
            "page cache and shared memory no process maps".into(),
        ));
    }
    let other = if m.unattributed < 0 {
        format!("-{}", human(m.unattributed.unsigned_abs()))
    } else {
        human(m.unattributed as u64)
    };
    out.push((
        "  other".into(),
        other,
        m.unattributed.max(0) as u64,
        "unreadable processes, drivers (GPU), huge pages".into(),
    ));
    if let Some(g) = gpu {
        out.push((
            "GPU".into(),
            human(g),
            g,
            "GPU memory of processes (DRM/dma-buf fdinfo)".into(),
        ));
    }
    out.push(("free".into(), human(m.free), m.free, "MemFree".into()));
    out
}

fn bar(part: u64, total: u64, width: usize) -> String {
    if total == 0 {
        return String::new();
    }
    let eighths = (part as u128 * width as u128 * 8 / total as u128) as usize;
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
    text.push(Line::from(Span::styled(head, bold)));
    let readable = top.scan.processes.len() - top.scan.restricted.len();
    let bar_width = (area.width as usize).saturating_sub(76).clamp(4, 30);
    for (label, figure, bytes, what) in lines(m, readable, top.report.totals.get("gpu")) {
        let pct = if m.total > 0 { bytes as f64 * 100.0 / m.total as f64 } else { 0.0 };
        text.push(Line::from(format!(
            "  {label:<11} {figure:>7} {pct:>3.0}% {:<bar_width$}  {what}",
            bar(bytes, m.total, bar_width)
        )));
    }
    text.push(Line::from(""));
    text.push(Line::from(Span::styled("largest processes (PSS)", bold)));
    let mut largest: Vec<_> = top.scan.processes.iter().collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.sizes.pss));
    let room = (area.height as usize).saturating_sub(text.len() + 2);
    for p in largest.into_iter().take(room.min(5)) {
        text.push(Line::from(format!(
            "  {:>7} {:>7}  {}",
            p.info.pid,
            human_opt(p.sizes.pss),
            escape_controls(p.info.command())
        )));
    }
    text.push(Line::from(""));
    text.push(Line::from("Enter: the processes   ?: keys"));
    frame.render_widget(Paragraph::new(text), area);
}
