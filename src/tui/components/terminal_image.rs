//! What the terminal can show beyond text — inline images (Kitty graphics or iTerm2) and
//! OSC 8 hyperlinks — detected from the environment, plus the image escape sequences and
//! the pixel sizes read from PNG, JPEG, GIF and WebP headers.

use std::sync::{OnceLock, RwLock};

/// Inline image protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    Kitty,
    ITerm2,
}

/// Terminal features beyond plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub images: Option<ImageProtocol>,
    pub true_color: bool,
    pub hyperlinks: bool,
}

impl Capabilities {
    /// Detection over an environment lookup. tmux and screen get neither images nor links
    /// (they swallow or mangle them); Kitty, Ghostty and WezTerm speak Kitty graphics;
    /// iTerm2 its own protocol; VS Code and Alacritty links only; unknown terminals nothing.
    pub fn detect_from(env: impl Fn(&str) -> Option<String>) -> Capabilities {
        let lower = |k: &str| env(k).unwrap_or_default().to_ascii_lowercase();
        let (program, term) = (lower("TERM_PROGRAM"), lower("TERM"));
        let colorterm = lower("COLORTERM");
        let true_color = colorterm == "truecolor" || colorterm == "24bit";
        let full = |images| Capabilities {
            images,
            true_color: true,
            hyperlinks: true,
        };
        if env("TMUX").is_some() || term.starts_with("tmux") || term.starts_with("screen") {
            return Capabilities {
                images: None,
                true_color,
                hyperlinks: false,
            };
        }
        if env("KITTY_WINDOW_ID").is_some()
            || program == "kitty"
            || program == "ghostty"
            || term.contains("ghostty")
            || env("GHOSTTY_RESOURCES_DIR").is_some()
            || env("WEZTERM_PANE").is_some()
            || program == "wezterm"
        {
            return full(Some(ImageProtocol::Kitty));
        }
        if env("ITERM_SESSION_ID").is_some() || program == "iterm.app" {
            return full(Some(ImageProtocol::ITerm2));
        }
        if program == "vscode" || program == "alacritty" {
            return full(None);
        }
        Capabilities {
            images: None,
            true_color,
            hyperlinks: false,
        }
    }
}

fn global() -> &'static RwLock<Option<Capabilities>> {
    static CAPS: OnceLock<RwLock<Option<Capabilities>>> = OnceLock::new();
    CAPS.get_or_init(|| RwLock::new(None))
}

/// This process's terminal capabilities (detected once, or as set by [`set_capabilities`]).
pub fn capabilities() -> Capabilities {
    if let Some(c) = *global().read().unwrap_or_else(|e| e.into_inner()) {
        return c;
    }
    let detected = Capabilities::detect_from(|k| std::env::var(k).ok());
    *global().write().unwrap_or_else(|e| e.into_inner()) = Some(detected);
    detected
}

/// Overrides the detected capabilities (settings, tests).
pub fn set_capabilities(caps: Capabilities) {
    *global().write().unwrap_or_else(|e| e.into_inner()) = Some(caps);
}

/// Pixel size of one terminal cell; 9×18 until the terminal answers `CSI 16 t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellSize {
    pub width_px: u32,
    pub height_px: u32,
}

impl Default for CellSize {
    fn default() -> Self {
        CellSize {
            width_px: 9,
            height_px: 18,
        }
    }
}

/// An image's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSize {
    pub width_px: u32,
    pub height_px: u32,
}

/// Rows an image occupies when scaled to `columns` cells wide (at least one).
pub fn image_rows(size: ImageSize, columns: usize, cell: CellSize) -> usize {
    let target_w = columns as f64 * f64::from(cell.width_px);
    let scale = target_w / f64::from(size.width_px.max(1));
    let rows = (f64::from(size.height_px) * scale / f64::from(cell.height_px.max(1))).ceil();
    (rows as usize).max(1)
}

const KITTY_CHUNK: usize = 4096;

/// Kitty graphics: transmit-and-display a PNG (`a=T,f=100`), quietly (`q=2`), in 4096-byte
/// base64 chunks (`m=1` while more follow, `m=0` on the last). `C=1` keeps the cursor put.
pub fn encode_kitty(base64: &str, columns: usize, rows: usize, image_id: Option<u32>) -> String {
    let mut params = format!("a=T,f=100,q=2,C=1,c={columns},r={rows}");
    if let Some(id) = image_id {
        params.push_str(&format!(",i={id}"));
    }
    if base64.len() <= KITTY_CHUNK {
        return format!("\x1b_G{params};{base64}\x1b\\");
    }
    let mut out = String::with_capacity(base64.len() + base64.len() / KITTY_CHUNK * 16 + 64);
    let chunks: Vec<&[u8]> = base64.as_bytes().chunks(KITTY_CHUNK).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        let chunk = std::str::from_utf8(chunk).unwrap_or("");
        let more = u8::from(i + 1 < chunks.len());
        if i == 0 {
            out.push_str(&format!("\x1b_G{params},m=1;{chunk}\x1b\\"));
        } else {
            out.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
        }
    }
    out
}

/// Deletes a Kitty image and frees its data.
pub fn kitty_delete(image_id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={image_id},q=2\x1b\\")
}

/// iTerm2 inline file, `columns` cells wide, height from the aspect ratio.
pub fn encode_iterm2(base64: &str, columns: usize) -> String {
    format!("\x1b]1337;File=inline=1;width={columns};height=auto:{base64}\x07")
}

/// Whether a rendered line carries an image sequence (such lines are not re-wrapped).
pub fn is_image_line(line: &str) -> bool {
    line.contains("\x1b_G") || line.contains("\x1b]1337;File=")
}

/// Pixel size from the file header of a PNG, JPEG, GIF or WebP.
pub fn image_size(bytes: &[u8], mime: &str) -> Option<ImageSize> {
    let be16 = |o: usize| {
        Some(u32::from(u16::from_be_bytes([
            *bytes.get(o)?,
            *bytes.get(o + 1)?,
        ])))
    };
    let le16 = |o: usize| {
        Some(u32::from(u16::from_le_bytes([
            *bytes.get(o)?,
            *bytes.get(o + 1)?,
        ])))
    };
    let le24 = |o: usize| {
        Some(u32::from_le_bytes([
            *bytes.get(o)?,
            *bytes.get(o + 1)?,
            *bytes.get(o + 2)?,
            0,
        ]))
    };
    let size = |w, h| {
        Some(ImageSize {
            width_px: w,
            height_px: h,
        })
    };
    match mime {
        "image/png" if bytes.starts_with(b"\x89PNG") => {
            let be32 = |o: usize| Some(u32::from_be_bytes(bytes.get(o..o + 4)?.try_into().ok()?));
            size(be32(16)?, be32(20)?)
        }
        "image/gif" if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") => {
            size(le16(6)?, le16(8)?)
        }
        "image/jpeg" if bytes.starts_with(&[0xff, 0xd8]) => {
            let mut i = 2;
            while i + 9 < bytes.len() {
                if bytes[i] != 0xff {
                    i += 1;
                    continue;
                }
                let marker = bytes[i + 1];
                if (0xc0..=0xc2).contains(&marker) {
                    return size(be16(i + 7)?, be16(i + 5)?);
                }
                let len = be16(i + 2)? as usize;
                if len < 2 {
                    return None;
                }
                i += 2 + len;
            }
            None
        }
        "image/webp" if bytes.get(0..4) == Some(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") => {
            match bytes.get(12..16)? {
                b"VP8 " => size(le16(26)? & 0x3fff, le16(28)? & 0x3fff),
                b"VP8L" => {
                    let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
                    size((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
                }
                b"VP8X" => size(le24(24)? + 1, le24(27)? + 1),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn capabilities_from_environment() {
        let caps = Capabilities::detect_from(env(&[("KITTY_WINDOW_ID", "1")]));
        assert_eq!(caps.images, Some(ImageProtocol::Kitty));
        let caps = Capabilities::detect_from(env(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "x")]));
        assert_eq!((caps.images, caps.hyperlinks), (None, false));
        let caps = Capabilities::detect_from(env(&[("TERM_PROGRAM", "iTerm.app")]));
        assert_eq!(caps.images, Some(ImageProtocol::ITerm2));
        let caps = Capabilities::detect_from(env(&[("TERM_PROGRAM", "vscode")]));
        assert_eq!((caps.images, caps.hyperlinks), (None, true));
        let caps = Capabilities::detect_from(env(&[("TERM", "xterm-256color")]));
        assert_eq!((caps.images, caps.hyperlinks), (None, false));
    }

    #[test]
    fn header_sizes() {
        let gif = b"GIF89a\x0a\x00\x05\x00rest";
        assert_eq!(
            image_size(gif, "image/gif"),
            Some(ImageSize {
                width_px: 10,
                height_px: 5
            })
        );
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0];
        jpeg.extend([
            0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x00, 0xc8, 0, 0, 0,
        ]);
        assert_eq!(
            image_size(&jpeg, "image/jpeg"),
            Some(ImageSize {
                width_px: 200,
                height_px: 300
            })
        );
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        webp.extend([0u8; 8]);
        webp.extend([0x3f, 0x01, 0x00, 0xc7, 0x00, 0x00]);
        assert_eq!(
            image_size(&webp, "image/webp"),
            Some(ImageSize {
                width_px: 320,
                height_px: 200
            })
        );
        assert_eq!(image_size(b"nope", "image/png"), None);
        assert_eq!(
            image_rows(
                ImageSize {
                    width_px: 90,
                    height_px: 36
                },
                10,
                CellSize::default()
            ),
            2
        );
    }

    #[test]
    fn kitty_chunks_large_payloads() {
        let data = "A".repeat(9000);
        let seq = encode_kitty(&data, 10, 3, Some(7));
        let parts: Vec<&str> = seq.split("\x1b\\").filter(|p| !p.is_empty()).collect();
        assert_eq!(parts.len(), 3);
        assert!(parts[0].starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=10,r=3,i=7,m=1;AAAA"));
        assert_eq!(
            parts[0].len(),
            "\x1b_Ga=T,f=100,q=2,C=1,c=10,r=3,i=7,m=1;".len() + 4096
        );
        assert!(parts[1].starts_with("\x1b_Gm=1;"));
        assert_eq!(parts[2], format!("\x1b_Gm=0;{}", "A".repeat(9000 - 8192)));
        assert_eq!(kitty_delete(7), "\x1b_Ga=d,d=I,i=7,q=2\x1b\\");
    }
}
