//! The squarified treemap layout (Bruls, Huizing, van Wijk, "Squarified
//! Treemaps", 2000): values into rectangles whose areas are proportional
//! to them, rows built greedily while they make the worst aspect ratio
//! of the row no worse. Pure: numbers in, rectangles out.

/// A rectangle in drawing units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn area(&self) -> f64 {
        self.w * self.h
    }

    /// The rectangle shrunk by `d` on every side (never below nothing).
    pub fn inset(&self, d: f64) -> Rect {
        let dx = d.min(self.w / 2.0);
        let dy = d.min(self.h / 2.0);
        Rect { x: self.x + dx, y: self.y + dy, w: self.w - 2.0 * dx, h: self.h - 2.0 * dy }
    }
}

/// Lays `values` out in `area`, each rectangle's area proportional to its
/// value, the whole area used. The rectangles come back in the order of
/// `values`; a value of zero (or below) gets an empty rectangle at the
/// area's corner. Larger values are placed first, whatever the order given.
pub fn squarify(values: &[f64], area: Rect) -> Vec<Rect> {
    let empty = Rect { x: area.x, y: area.y, w: 0.0, h: 0.0 };
    let mut out = vec![empty; values.len()];
    let total: f64 = values.iter().filter(|v| **v > 0.0).sum();
    if total <= 0.0 || area.area() <= 0.0 {
        return out;
    }
    let scale = area.area() / total;
    let mut order: Vec<usize> = (0..values.len()).filter(|&i| values[i] > 0.0).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    let mut free = area;
    let mut row: Vec<usize> = Vec::new();
    let a = |i: usize| values[i] * scale;
    for (k, &i) in order.iter().enumerate() {
        let side = free.w.min(free.h);
        if row.is_empty() || worst(&row, Some(i), side, &a) <= worst(&row, None, side, &a) {
            row.push(i);
        } else {
            free = place(&row, free, &a, &mut out);
            row.clear();
            row.push(i);
        }
        if k + 1 == order.len() {
            free = place(&row, free, &a, &mut out);
        }
    }
    let _ = free;
    out
}

/// The worst aspect ratio of `row` (plus `extra`) laid along a side of
/// length `side`.
fn worst(row: &[usize], extra: Option<usize>, side: f64, a: &dyn Fn(usize) -> f64) -> f64 {
    let areas = row.iter().copied().chain(extra).map(a);
    let (mut sum, mut max, mut min) = (0.0f64, 0.0f64, f64::INFINITY);
    for v in areas {
        sum += v;
        max = max.max(v);
        min = min.min(v);
    }
    let (s2, w2) = (sum * sum, side * side);
    (w2 * max / s2).max(s2 / (w2 * min))
}

/// Places one row along the shorter side of `free`; returns what is left.
fn place(row: &[usize], free: Rect, a: &dyn Fn(usize) -> f64, out: &mut [Rect]) -> Rect {
    let sum: f64 = row.iter().map(|&i| a(i)).sum();
    if free.w >= free.h {
        // A column at the left, as tall as the free area.
        let w = if free.h > 0.0 { (sum / free.h).min(free.w) } else { 0.0 };
        let mut y = free.y;
        for &i in row {
            let h = if w > 0.0 { a(i) / w } else { 0.0 };
            out[i] = Rect { x: free.x, y, w, h };
            y += h;
        }
        Rect { x: free.x + w, y: free.y, w: free.w - w, h: free.h }
    } else {
        // A row at the top, as wide as the free area.
        let h = if free.w > 0.0 { (sum / free.w).min(free.h) } else { 0.0 };
        let mut x = free.x;
        for &i in row {
            let w = if h > 0.0 { a(i) / h } else { 0.0 };
            out[i] = Rect { x, y: free.y, w, h };
            x += w;
        }
        Rect { x: free.x, y: free.y + h, w: free.w, h: free.h - h }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f64 = 1e-9;

    fn inside(r: &Rect, a: &Rect) -> bool {
        r.x >= a.x - EPS
            && r.y >= a.y - EPS
            && r.x + r.w <= a.x + a.w + EPS
            && r.y + r.h <= a.y + a.h + EPS
    }

    fn overlap(p: &Rect, q: &Rect) -> f64 {
        let w = (p.x + p.w).min(q.x + q.w) - p.x.max(q.x);
        let h = (p.y + p.h).min(q.y + q.h) - p.y.max(q.y);
        if w > EPS && h > EPS {
            w * h
        } else {
            0.0
        }
    }

    #[test]
    fn the_paper_s_example_is_laid_out_as_in_the_paper() {
        // Bruls et al., figure 2: 6 6 4 3 2 2 1 in a 6 x 4 rectangle.
        let area = Rect { x: 0.0, y: 0.0, w: 6.0, h: 4.0 };
        let r = squarify(&[6.0, 6.0, 4.0, 3.0, 2.0, 2.0, 1.0], area);
        // The two 6s make the first column, 3 wide, 2 high each.
        assert!((r[0].w - 3.0).abs() < EPS && (r[0].h - 2.0).abs() < EPS, "{:?}", r[0]);
        assert!((r[1].y - 2.0).abs() < EPS && (r[1].x).abs() < EPS, "{:?}", r[1]);
        // Then 4 and 3 in a row across the top of the remaining 3 x 4.
        assert!((r[2].x - 3.0).abs() < EPS && (r[2].y).abs() < EPS, "{:?}", r[2]);
        assert!((r[2].h - r[3].h).abs() < EPS);
        for (i, v) in [6.0, 6.0, 4.0, 3.0, 2.0, 2.0, 1.0].iter().enumerate() {
            assert!((r[i].area() - v).abs() < 1e-6, "{i}: {:?}", r[i]);
        }
    }

    #[test]
    fn areas_are_proportional_inside_the_area_and_never_overlap() {
        let area = Rect { x: 10.0, y: 20.0, w: 1200.0, h: 700.0 };
        let values: Vec<f64> = (0..200).map(|i| ((i * 7919) % 1000 + 1) as f64).collect();
        let total: f64 = values.iter().sum();
        let r = squarify(&values, area);
        let mut covered = 0.0;
        for (i, v) in values.iter().enumerate() {
            assert!(inside(&r[i], &area), "{i}: {:?}", r[i]);
            let want = v / total * area.area();
            assert!((r[i].area() - want).abs() < want * 1e-6, "{i}: {} vs {want}", r[i].area());
            covered += r[i].area();
            for j in 0..i {
                assert!(overlap(&r[i], &r[j]) < 1e-6, "{i} and {j} overlap");
            }
        }
        assert!((covered - area.area()).abs() < 1e-3);
    }

    #[test]
    fn rectangles_stay_near_square_and_zeros_are_empty() {
        let area = Rect { x: 0.0, y: 0.0, w: 800.0, h: 600.0 };
        let r = squarify(&[100.0, 0.0, 100.0, 100.0, 100.0], area);
        assert_eq!(r[1].area(), 0.0);
        for i in [0, 2, 3, 4] {
            let ratio = r[i].w.max(r[i].h) / r[i].w.min(r[i].h);
            assert!(ratio < 2.0, "{i}: {:?}", r[i]);
        }
        assert!(squarify(&[0.0, -1.0], area).iter().all(|r| r.area() == 0.0));
        assert!(squarify(&[], area).is_empty());
    }
}
