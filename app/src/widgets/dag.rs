//! A dependency graph laid out by level: nodes in columns (longest path from an input), sized to
//! their labels, ordered in each column to keep edges short, and edges routed through the gaps
//! between nodes with an arrowhead at the node they feed.

use super::palette::{BLUE, ORANGE};
use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, Vec2};

/// Vertical gap between two nodes of a column, and the room an edge needs to pass between
/// them, points.
const ROW_GAP: f32 = 10.0;

/// How one node is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeStyle {
    /// A reduction (drawn orange; the others blue).
    pub reduction: bool,
    /// Drawn with a thick ring: the reduction being stepped through.
    pub highlight: bool,
}

/// Orders the nodes of each column by the mean slot of their inputs (one barycentre sweep
/// from left to right), so edges cross less; `slot[i]` is node i's row in its column.
fn order(layers: &[usize], edges: &[(usize, usize)], cols: usize) -> Vec<usize> {
    let n = layers.len();
    let mut slot = vec![0usize; n];
    let mut by_col: Vec<Vec<usize>> = vec![Vec::new(); cols];
    for (i, &l) in layers.iter().enumerate() {
        if let Some(c) = by_col.get_mut(l) {
            slot[i] = c.len();
            c.push(i);
        }
    }
    for col in by_col.iter_mut().skip(1) {
        let key = |i: usize| {
            let ins: Vec<f32> = edges
                .iter()
                .filter(|(_, b)| *b == i)
                .filter_map(|(a, _)| slot.get(*a).map(|&s| s as f32))
                .collect();
            if ins.is_empty() {
                f32::MAX
            } else {
                ins.iter().sum::<f32>() / ins.len() as f32
            }
        };
        let mut keyed: Vec<(f32, usize)> = col.iter().map(|&i| (key(i), i)).collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (s, (_, i)) in keyed.iter().enumerate() {
            slot[*i] = s;
        }
        *col = keyed.into_iter().map(|(_, i)| i).collect();
    }
    slot
}

/// Draws the graph: `layers[i]` is node i's column, `styles[i]` how it is drawn, edges are
/// `(from, to)` (indices out of range are skipped).
pub fn dag(
    ui: &mut egui::Ui,
    labels: &[String],
    layers: &[usize],
    styles: &[NodeStyle],
    edges: &[(usize, usize)],
) {
    let n = labels.len().min(layers.len());
    let cols = layers.iter().take(n).copied().max().unwrap_or(0) + 1;
    let width = ui.available_width().max(200.0);
    let font = crate::theme::label_font(ui.ctx(), 10.5);
    let pad = Vec2::new(font.size * 0.7, font.size * 0.35);
    // Each node's size from its label as painted.
    let sizes: Vec<Vec2> = labels
        .iter()
        .take(n)
        .map(|l| {
            let w = super::marks::text_width(ui, l, &font);
            Vec2::new(w, font.size * 1.25) + 2.0 * pad
        })
        .collect();
    let slot = order(&layers[..n], edges, cols);
    // Column widths from their widest node; the spare width goes between the columns.
    let mut col_w = vec![0.0_f32; cols];
    let mut rows_in = vec![0usize; cols];
    for i in 0..n {
        let c = layers[i];
        col_w[c] = col_w[c].max(sizes[i].x);
        rows_in[c] = rows_in[c].max(slot[i] + 1);
    }
    let used: f32 = col_w.iter().sum();
    let gap = ((width - used) / cols as f32).max(12.0);
    let mut col_x = Vec::with_capacity(cols);
    let mut x = gap / 2.0;
    for w in &col_w {
        col_x.push(x + w / 2.0);
        x += w + gap;
    }
    let node_h = sizes.first().map_or(24.0, |s| s.y);
    let row_h = node_h + ROW_GAP;
    let max_rows = rows_in.iter().copied().max().unwrap_or(1).max(1);
    let (rect, _) = ui.allocate_exact_size(
        // ROW_GAP above the first row: an edge routed over a top node stays inside.
        Vec2::new(
            width.max(x - gap / 2.0),
            row_h * max_rows as f32 + ROW_GAP + 4.0,
        ),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let node_rect = |i: usize| {
        let c = Pos2::new(
            rect.left() + col_x[layers[i]],
            rect.top() + ROW_GAP + 2.0 + node_h / 2.0 + row_h * slot[i] as f32,
        );
        Rect::from_center_size(c, sizes[i])
    };
    let rects: Vec<Rect> = (0..n).map(node_rect).collect();
    let text = ui.visuals().text_color();
    let edge_col = text.gamma_multiply(0.55);
    for &(a, b) in edges {
        let (Some(ra), Some(rb)) = (rects.get(a), rects.get(b)) else {
            continue;
        };
        let points = route(*ra, *rb, &rects, layers, (a, b), row_h);
        p.add(Shape::line(points.clone(), Stroke::new(1.2, edge_col)));
        if let [.., from, to] = points.as_slice() {
            arrowhead(&p, *from, *to, font.size * 0.55, edge_col);
        }
    }
    for i in 0..n {
        let r = rects[i];
        let style = styles.get(i).copied().unwrap_or_default();
        let fill = if style.reduction { ORANGE } else { BLUE };
        p.rect_filled(r, 4.0, fill);
        if style.highlight {
            p.rect_stroke(
                r.expand(3.0),
                6.0,
                Stroke::new(3.0, text),
                egui::StrokeKind::Outside,
            );
        }
        super::marks::text(
            &p,
            r.center(),
            egui::Align2::CENTER_CENTER,
            &labels[i],
            font.clone(),
            super::palette::text_on(fill),
        );
    }
}

/// An edge from node `ra`'s right side to node `rb`'s left side: straight when nothing is in
/// the way; otherwise, at each column it crosses, moved into the nearest gap between that
/// column's nodes, so no edge passes under a node.
fn route(
    ra: Rect,
    rb: Rect,
    rects: &[Rect],
    layers: &[usize],
    (a, b): (usize, usize),
    row_h: f32,
) -> Vec<Pos2> {
    let start = ra.right_center();
    let end = rb.left_center();
    let mut points = vec![start];
    let (la, lb) = (layers[a], layers[b]);
    for col in (la.min(lb) + 1)..la.max(lb) {
        let in_col: Vec<&Rect> = rects
            .iter()
            .zip(layers)
            .filter(|(_, l)| **l == col)
            .map(|(r, _)| r)
            .collect();
        let Some(cx) = in_col.first().map(|r| r.center().x) else {
            continue;
        };
        let t = ((cx - start.x) / (end.x - start.x)).clamp(0.0, 1.0);
        let mut y = start.y + t * (end.y - start.y);
        if let Some(hit) = in_col
            .iter()
            .find(|r| y > r.top() - ROW_GAP / 3.0 && y < r.bottom() + ROW_GAP / 3.0)
        {
            // The nearer gap: just above or just below the node in the way.
            let (up, down) = (hit.top() - ROW_GAP / 2.0, hit.bottom() + ROW_GAP / 2.0);
            y = if (y - up).abs() <= (down - y).abs() && up > hit.top() - row_h {
                up
            } else {
                down
            };
            let half = in_col.iter().map(|r| r.width()).fold(0.0, f32::max) / 2.0;
            points.push(Pos2::new(cx - half - 4.0, y));
            points.push(Pos2::new(cx + half + 4.0, y));
        }
    }
    points.push(end);
    points
}

/// A filled arrowhead at `to`, pointing from `from`.
fn arrowhead(p: &egui::Painter, from: Pos2, to: Pos2, size: f32, colour: Color32) {
    let dir = (to - from).normalized();
    if !dir.x.is_finite() || !dir.y.is_finite() {
        return;
    }
    let back = to - dir * size * 1.6;
    let side = Vec2::new(-dir.y, dir.x) * size * 0.7;
    p.add(Shape::convex_polygon(
        vec![to, back + side, back - side],
        colour,
        Stroke::NONE,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_ordered_by_its_inputs_rows() {
        // Column 0: nodes 0, 1, 2; column 1: node 3 fed by 2, node 4 fed by 0.
        let layers = [0, 0, 0, 1, 1];
        let slot = order(&layers, &[(2, 3), (0, 4)], 2);
        assert_eq!(&slot[..3], &[0, 1, 2]);
        assert_eq!(
            (slot[4], slot[3]),
            (0, 1),
            "node 4 (input in row 0) goes first"
        );
    }

    #[test]
    fn an_edge_is_routed_around_a_node_in_its_way() {
        let r = |x: f32, y: f32| Rect::from_center_size(Pos2::new(x, y), Vec2::new(40.0, 20.0));
        // Three columns in one row: the edge 0 → 2 would pass under node 1.
        let rects = [r(20.0, 50.0), r(120.0, 50.0), r(220.0, 50.0)];
        let layers = [0, 1, 2];
        let pts = route(rects[0], rects[2], &rects, &layers, (0, 2), 30.0);
        assert!(pts.len() > 2, "{pts:?}");
        for q in &pts[1..pts.len() - 1] {
            assert!(!rects[1].expand(1.0).contains(*q), "{q:?} is inside node 1");
        }
        // Nothing in the way: one straight segment.
        let pts = route(rects[0], rects[1], &rects, &layers, (0, 1), 30.0);
        assert_eq!(pts.len(), 2);
    }
}
