//! [`Image`]: an inline image in terminals that can show one (Kitty graphics, iTerm2), and a
//! `[Image: [mime] WxH]` placeholder elsewhere (tmux, screen, most terminals).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::terminal_image::{
    capabilities, encode_iterm2, encode_kitty, image_rows, image_size, Capabilities, CellSize,
    ImageProtocol, ImageSize,
};
use crate::tui::text::truncate_to_width;
use crate::tui::theme::{Theme, Token};
use crate::tui::Component;
use crate::util::encoding::base64_decode;

/// Base64 characters decoded to find the size (headers sit near the start; JPEG's may
/// follow a large EXIF block).
const HEADER_SCAN: usize = 256 * 1024;

/// Unknown sizes render as if 800×600.
const FALLBACK_SIZE: ImageSize = ImageSize {
    width_px: 800,
    height_px: 600,
};

/// An image given as base64 data and a MIME type.
pub struct Image {
    base64: String,
    mime: String,
    size: Option<ImageSize>,
    theme: Arc<Theme>,
    filename: Option<String>,
    max_width_cells: usize,
    caps: Capabilities,
    cell: CellSize,
    image_id: Option<u32>,
    cache: Option<(usize, Vec<String>)>,
}

impl Image {
    pub fn new(base64: impl Into<String>, mime: &str, theme: Arc<Theme>) -> Image {
        let base64 = base64.into();
        let mut end = base64.len().min(HEADER_SCAN);
        end -= end % 4;
        let size = base64
            .get(..end)
            .and_then(base64_decode)
            .and_then(|bytes| image_size(&bytes, mime));
        Image {
            base64,
            mime: mime.to_string(),
            size,
            theme,
            filename: None,
            max_width_cells: 60,
            caps: capabilities(),
            cell: CellSize::default(),
            image_id: None,
            cache: None,
        }
    }

    pub fn with_filename(mut self, name: impl Into<String>) -> Image {
        self.filename = Some(name.into());
        self
    }

    pub fn with_max_width(mut self, cells: usize) -> Image {
        self.max_width_cells = cells;
        self
    }

    pub fn with_capabilities(mut self, caps: Capabilities) -> Image {
        self.caps = caps;
        self.cache = None;
        self
    }

    /// The cell size the terminal reported (`CSI 16 t`).
    pub fn set_cell_size(&mut self, cell: CellSize) {
        self.cell = cell;
        self.cache = None;
    }

    /// Pixel size from the header, if it could be read.
    pub fn size(&self) -> Option<ImageSize> {
        self.size
    }

    /// The Kitty image id in use (the renderer deletes it when the line is redrawn).
    pub fn image_id(&self) -> Option<u32> {
        self.image_id
    }

    fn placeholder(&self) -> String {
        let mut parts = Vec::new();
        if let Some(f) = &self.filename {
            parts.push(f.clone());
        }
        parts.push(format!("[{}]", self.mime));
        if let Some(s) = self.size {
            parts.push(format!("{}x{}", s.width_px, s.height_px));
        }
        self.theme
            .fg(Token::Muted, &format!("[Image: {}]", parts.join(" ")))
    }
}

fn next_image_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    // The pid in the high bits keeps ids apart from other programs sharing the terminal.
    (std::process::id() << 16) | (NEXT.fetch_add(1, Ordering::Relaxed) & 0xffff)
}

impl Component for Image {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((w, lines)) = &self.cache {
            if *w == width {
                return lines.clone();
            }
        }
        let columns = width.saturating_sub(2).min(self.max_width_cells).max(1);
        let rows = image_rows(self.size.unwrap_or(FALLBACK_SIZE), columns, self.cell);
        let lines = match self.caps.images {
            Some(protocol) if width > 2 => {
                let up = if rows > 1 {
                    format!("\x1b[{}A", rows - 1)
                } else {
                    String::new()
                };
                let (sequence, down) = match protocol {
                    ImageProtocol::Kitty => {
                        let id = *self.image_id.get_or_insert_with(next_image_id);
                        let down = if rows > 1 {
                            format!("\x1b[{}B", rows - 1)
                        } else {
                            String::new()
                        };
                        (encode_kitty(&self.base64, columns, rows, Some(id)), down)
                    }
                    ImageProtocol::ITerm2 => (encode_iterm2(&self.base64, columns), String::new()),
                };
                // Reserve the rows with empty lines, then draw from the last one upwards.
                let mut lines = vec![String::new(); rows - 1];
                lines.push(format!("{up}{sequence}{down}"));
                lines
            }
            _ => vec![truncate_to_width(&self.placeholder(), width, "", false)],
        };
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::{strip_ansi, visible_width};
    use crate::tui::theme::ColorMode;
    use crate::util::encoding::base64_encode;

    /// A 1×1 PNG's first bytes (signature and IHDR are all the size parser reads).
    fn tiny_png() -> String {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(18u32.to_be_bytes());
        png.extend(36u32.to_be_bytes());
        png.extend([8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);
        base64_encode(&png)
    }

    fn theme() -> Arc<Theme> {
        Arc::new(Theme::builtin("dark", ColorMode::NoColor).unwrap())
    }

    fn caps(images: Option<ImageProtocol>) -> Capabilities {
        Capabilities {
            images,
            true_color: true,
            hyperlinks: false,
        }
    }

    #[test]
    fn kitty_sequence_for_a_tiny_png() {
        let data = tiny_png();
        let mut img = Image::new(data.clone(), "image/png", theme())
            .with_capabilities(caps(Some(ImageProtocol::Kitty)))
            .with_max_width(2);
        assert_eq!(
            img.size(),
            Some(ImageSize {
                width_px: 18,
                height_px: 36
            })
        );
        let lines = img.render(40);
        // 2 cells × 9 px = 18 px wide → scale 1 → 36 px tall = 2 rows of 18 px.
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], "");
        let id = img.image_id().unwrap();
        assert_eq!(
            lines[1],
            format!("\x1b[1A\x1b_Ga=T,f=100,q=2,C=1,c=2,r=2,i={id};{data}\x1b\\\x1b[1B")
        );
        assert_eq!(visible_width(&lines[1]), 0);
    }

    #[test]
    fn iterm2_and_placeholder() {
        let data = tiny_png();
        let mut img = Image::new(data.clone(), "image/png", theme())
            .with_capabilities(caps(Some(ImageProtocol::ITerm2)))
            .with_max_width(1);
        let lines = img.render(40);
        // 1 cell × 9 px → scale ½ → 18 px tall = one row, so no cursor movement.
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines.last().unwrap(),
            &format!("\x1b]1337;File=inline=1;width=1;height=auto:{data}\x07")
        );
        let mut plain = Image::new(data, "image/png", theme())
            .with_capabilities(caps(None))
            .with_filename("dot.png");
        assert_eq!(
            strip_ansi(&plain.render(80)[0]),
            "[Image: dot.png [image/png] 18x36]"
        );
        assert!(visible_width(&plain.render(10)[0]) <= 10);
    }
}
