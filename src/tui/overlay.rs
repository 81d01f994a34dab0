//! Overlays: where one goes on screen ([`OverlayOptions`] → [`Layout`]) and how its rows are
//! spliced over the base frame ([`composite`]).
//!
//! Positions are screen-relative: row 0 is the terminal's top line, whatever part of the
//! transcript is scrolled there. Splicing works by columns with
//! [`slice_with_width`], so wide characters and styles on either side survive; a wide
//! character cut by an overlay edge becomes a space rather than half a glyph.

use super::components::terminal_image::is_image_line;
use super::text::{slice_with_width, visible_width};
use super::LINE_RESET;

/// Which point of the screen an overlay hugs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anchor {
    #[default]
    Center,
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
    TopCenter,
    BottomCenter,
    LeftCenter,
    RightCenter,
}

/// A size or position: absolute cells, or a percentage of the terminal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Extent {
    Cells(usize),
    Percent(f32),
}

impl Extent {
    fn of(self, reference: usize) -> usize {
        match self {
            Extent::Cells(n) => n,
            Extent::Percent(p) => (reference as f32 * p.max(0.0) / 100.0).floor() as usize,
        }
    }
}

/// Space kept free between an overlay and the terminal edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Margin {
    pub top: usize,
    pub right: usize,
    pub bottom: usize,
    pub left: usize,
}

impl Margin {
    pub fn all(n: usize) -> Self {
        Margin {
            top: n,
            right: n,
            bottom: n,
            left: n,
        }
    }
}

/// How an overlay is sized and placed. `Default` is a centred box up to 80 columns wide.
#[derive(Default)]
pub struct OverlayOptions {
    /// Width; default `min(80, available)`.
    pub width: Option<Extent>,
    pub min_width: Option<usize>,
    /// Exact height: shorter output is padded with blank rows, longer output cut.
    pub height: Option<Extent>,
    pub max_height: Option<Extent>,
    pub anchor: Anchor,
    /// Shift from the anchored position (positive = right / down).
    pub offset_x: isize,
    pub offset_y: isize,
    /// Absolute row (cells) or position within the free rows (`Percent(0)` top, `100` bottom);
    /// overrides the anchor vertically.
    pub row: Option<Extent>,
    /// Like `row`, horizontally.
    pub col: Option<Extent>,
    pub margin: Margin,
    /// Shown without taking keyboard focus.
    pub non_capturing: bool,
    /// Shown only while this returns true for `(columns, rows)`.
    pub visible: Option<Box<dyn Fn(usize, usize) -> bool>>,
}

impl OverlayOptions {
    pub fn is_visible(&self, cols: usize, rows: usize) -> bool {
        self.visible.as_ref().is_none_or(|f| f(cols, rows))
    }
}

/// Where an overlay lands: its width, the row cap to apply, and its top-left cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub width: usize,
    pub max_height: Option<usize>,
    pub row: usize,
    pub col: usize,
}

/// Resolves `options` for an overlay `height` rows tall on a `cols`×`rows` terminal.
pub fn layout(options: &OverlayOptions, height: usize, cols: usize, rows: usize) -> Layout {
    let m = options.margin;
    let avail_w = cols.saturating_sub(m.left + m.right).max(1);
    let avail_h = rows.saturating_sub(m.top + m.bottom).max(1);

    let mut width = options.width.map_or(avail_w.min(80), |w| w.of(cols));
    if let Some(min) = options.min_width {
        width = width.max(min);
    }
    let width = width.clamp(1, avail_w);

    let max_height = match (options.height, options.max_height) {
        (Some(h), _) => Some(h.of(rows)),
        (None, Some(h)) => Some(h.of(rows)),
        (None, None) => None,
    }
    .map(|h| h.clamp(1, avail_h));
    let height = max_height.map_or(height, |max| height.min(max));

    let row = match options.row {
        Some(Extent::Cells(r)) => r,
        Some(Extent::Percent(p)) => m.top + Extent::Percent(p).of(avail_h.saturating_sub(height)),
        None => anchor_row(options.anchor, height, avail_h, m.top),
    };
    let col = match options.col {
        Some(Extent::Cells(c)) => c,
        Some(Extent::Percent(p)) => m.left + Extent::Percent(p).of(avail_w.saturating_sub(width)),
        None => anchor_col(options.anchor, width, avail_w, m.left),
    };
    let row = row.saturating_add_signed(options.offset_y);
    let col = col.saturating_add_signed(options.offset_x);
    // Keep the box inside the margins, preferring the top-left edge when it cannot fit.
    let row = row.min(rows.saturating_sub(m.bottom + height)).max(m.top);
    let col = col.min(cols.saturating_sub(m.right + width)).max(m.left);
    Layout {
        width,
        max_height,
        row,
        col,
    }
}

fn anchor_row(anchor: Anchor, height: usize, avail: usize, top: usize) -> usize {
    match anchor {
        Anchor::TopLeft | Anchor::TopCenter | Anchor::TopRight => top,
        Anchor::BottomLeft | Anchor::BottomCenter | Anchor::BottomRight => {
            top + avail.saturating_sub(height)
        }
        Anchor::LeftCenter | Anchor::Center | Anchor::RightCenter => {
            top + avail.saturating_sub(height) / 2
        }
    }
}

fn anchor_col(anchor: Anchor, width: usize, avail: usize, left: usize) -> usize {
    match anchor {
        Anchor::TopLeft | Anchor::LeftCenter | Anchor::BottomLeft => left,
        Anchor::TopRight | Anchor::RightCenter | Anchor::BottomRight => {
            left + avail.saturating_sub(width)
        }
        Anchor::TopCenter | Anchor::Center | Anchor::BottomCenter => {
            left + avail.saturating_sub(width) / 2
        }
    }
}

/// One overlay's rendered rows at their resolved place.
pub struct Placed {
    pub lines: Vec<String>,
    pub layout: Layout,
}

/// Renders an overlay's rows into place: cut to the layout's height cap, padded to an
/// exact `height` when one was asked for.
pub fn place(
    options: &OverlayOptions,
    render: impl FnOnce(usize) -> Vec<String>,
    cols: usize,
    rows: usize,
) -> Placed {
    let sizing = layout(options, 0, cols, rows);
    let mut lines = render(sizing.width);
    if let Some(max) = sizing.max_height {
        lines.truncate(max);
        if options.height.is_some() {
            lines.resize(max, String::new());
        }
    }
    let layout = layout(options, lines.len(), cols, rows);
    Placed { lines, layout }
}

/// Splices `overlays` (bottom first) over the screen part of `base`. The frame is padded to
/// at least the screen height so overlays have rows to land on even over a short transcript.
pub fn composite(base: &mut Vec<String>, overlays: &[Placed], cols: usize, rows: usize) {
    if overlays.is_empty() {
        return;
    }
    let needed = overlays
        .iter()
        .map(|o| o.layout.row + o.lines.len())
        .max()
        .unwrap_or(0);
    let height = base.len().max(rows).max(needed);
    base.resize(height, String::new());
    let screen_top = height - rows.min(height);
    for overlay in overlays {
        let Layout {
            width, row, col, ..
        } = overlay.layout;
        for (i, line) in overlay.lines.iter().enumerate() {
            if let Some(target) = base.get_mut(screen_top + row + i) {
                // An image row is escape payload, not columns: splicing would corrupt it.
                if !is_image_line(target) {
                    *target = splice(target, line, col, width, cols);
                }
            }
        }
    }
}

/// `base` with columns `[col, col + width)` replaced by `overlay` (cut or padded to
/// `width`), the rest of `base` kept on both sides; never wider than `total`.
pub fn splice(base: &str, overlay: &str, col: usize, width: usize, total: usize) -> String {
    let (before, before_w) = slice_with_width(base, 0, col, true);
    let (over, over_w) = slice_with_width(overlay, 0, width, true);
    let after_start = col + width;
    let base_w = visible_width(base).min(total);
    let (after, after_w) = if base_w > after_start {
        slice_with_width(base, after_start, total.saturating_sub(after_start), true)
    } else {
        (String::new(), 0)
    };
    // Pad where a wide character was cut by an edge, so every column stays put.
    let after_pad = base_w.saturating_sub(after_start).saturating_sub(after_w);
    let mut out = String::with_capacity(base.len() + overlay.len() + 32);
    out.push_str(&before);
    push_spaces(&mut out, col.saturating_sub(before_w));
    out.push_str(LINE_RESET);
    out.push_str(&over);
    push_spaces(&mut out, width.saturating_sub(over_w));
    out.push_str(LINE_RESET);
    if !after.is_empty() || after_pad > 0 {
        push_spaces(&mut out, after_pad);
        out.push_str(&after);
    }
    out
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    fn opts() -> OverlayOptions {
        OverlayOptions::default()
    }

    #[test]
    fn anchors_place_the_box_at_edges_and_centres() {
        let o = |anchor| OverlayOptions {
            width: Some(Extent::Cells(10)),
            anchor,
            ..opts()
        };
        let at = |anchor| {
            let l = layout(&o(anchor), 4, 40, 20);
            (l.row, l.col)
        };
        assert_eq!(at(Anchor::Center), (8, 15));
        assert_eq!(at(Anchor::TopLeft), (0, 0));
        assert_eq!(at(Anchor::TopRight), (0, 30));
        assert_eq!(at(Anchor::BottomLeft), (16, 0));
        assert_eq!(at(Anchor::BottomRight), (16, 30));
        assert_eq!(at(Anchor::TopCenter), (0, 15));
        assert_eq!(at(Anchor::BottomCenter), (16, 15));
        assert_eq!(at(Anchor::LeftCenter), (8, 0));
        assert_eq!(at(Anchor::RightCenter), (8, 30));
    }

    #[test]
    fn sizes_margins_offsets_and_absolute_positions() {
        let l = layout(&opts(), 3, 100, 30);
        assert_eq!(l.width, 80);
        let o = OverlayOptions {
            width: Some(Extent::Percent(50.0)),
            min_width: Some(60),
            max_height: Some(Extent::Percent(10.0)),
            margin: Margin::all(2),
            anchor: Anchor::TopLeft,
            offset_x: 3,
            offset_y: -5,
            ..opts()
        };
        let l = layout(&o, 9, 100, 30);
        assert_eq!((l.width, l.max_height), (60, Some(3)));
        assert_eq!((l.row, l.col), (2, 5), "offset clamped into the margin");
        let o = OverlayOptions {
            width: Some(Extent::Cells(500)),
            row: Some(Extent::Cells(7)),
            col: Some(Extent::Percent(100.0)),
            margin: Margin {
                left: 1,
                right: 1,
                ..Margin::default()
            },
            ..opts()
        };
        let l = layout(&o, 2, 40, 10);
        assert_eq!((l.width, l.row, l.col), (38, 7, 1));
        let o = OverlayOptions {
            width: Some(Extent::Cells(10)),
            row: Some(Extent::Percent(100.0)),
            col: Some(Extent::Cells(35)),
            ..opts()
        };
        let l = layout(&o, 2, 40, 10);
        assert_eq!((l.row, l.col), (8, 30), "absolute col kept on screen");
    }

    #[test]
    fn exact_height_pads_and_cuts() {
        let o = OverlayOptions {
            height: Some(Extent::Cells(3)),
            ..opts()
        };
        let p = place(&o, |_| vec!["a".into()], 20, 10);
        assert_eq!(p.lines, ["a", "", ""]);
        let p = place(&o, |_| vec!["a".into(); 5], 20, 10);
        assert_eq!(p.lines.len(), 3);
    }

    #[test]
    fn splice_keeps_both_sides_and_their_styles() {
        let base = "\x1b[31mred text here\x1b[0m";
        let out = splice(base, "OV", 4, 3, 20);
        assert_eq!(strip_ansi(&out), "red OV t here");
        assert!(out.starts_with("\x1b[31mred "));
        // The right side re-opens the red that was active where it starts.
        assert!(
            out.contains(&format!("{LINE_RESET}\x1b[31mt here")),
            "{out:?}"
        );
    }

    #[test]
    fn splice_over_wide_characters_keeps_columns() {
        // Overlay edges fall in the middle of 你 (cols 0-1) and 世 (cols 4-5).
        let out = splice("你好世界", "ab", 1, 4, 20);
        assert_eq!(strip_ansi(&out), " ab   界");
        assert_eq!(visible_width(&out), 8);
        // Past the end of a short base line, the overlay is padded into place.
        let out = splice("hi", "ov", 5, 2, 20);
        assert_eq!(strip_ansi(&out), "hi   ov");
    }

    #[test]
    fn composite_pads_a_short_frame_to_the_screen() {
        let mut base = vec!["one".to_string(), "two".to_string()];
        let placed = Placed {
            lines: vec!["XX".into()],
            layout: Layout {
                width: 2,
                max_height: None,
                row: 3,
                col: 1,
            },
        };
        composite(&mut base, &[placed], 10, 5);
        let text: Vec<String> = base.iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(text, ["one", "two", "", " XX", ""]);
    }

    #[test]
    fn image_rows_are_left_whole_under_an_overlay() {
        let image = "\x1b_Ga=T,f=100,i=3;QUJD\x1b\\".to_string();
        let mut base = vec!["text".to_string(), image.clone()];
        let placed = Placed {
            lines: vec!["XX".into(), "YY".into()],
            layout: Layout {
                width: 2,
                max_height: None,
                row: 0,
                col: 1,
            },
        };
        composite(&mut base, &[placed], 10, 2);
        assert_eq!(strip_ansi(&base[0]), "tXXt");
        assert_eq!(base[1], image);
    }
}
