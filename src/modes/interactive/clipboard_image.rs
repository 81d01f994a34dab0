//! Reading an image off the system clipboard for the paste-image key (Ctrl+V, Alt+V on
//! Windows). As pi does, the image is saved to a `pi-clipboard-<random>.<ext>` file in the temp
//! directory and its path is typed into the editor; the model then looks at it with `read`.
//!
//! The platform's own tools do the reading: `wl-paste` on Wayland (and WSL), `xclip` on X11,
//! `osascript` on macOS. Each runs with a timeout, and the whole read runs on a helper thread
//! ([`spawn_read`]) so the UI never waits for a clipboard owner that does not answer.

use crate::util::reply::{reply, ReplyRx};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::util::process::{self, RunOptions};

/// Listing the clipboard's types should be instant; reading the data may take a moment.
const LIST_TIMEOUT: Duration = Duration::from_millis(1000);
const READ_TIMEOUT: Duration = Duration::from_millis(3000);
/// Larger clipboard contents are not an image anyone means to send.
const MAX_BYTES: usize = 50 * 1024 * 1024;
/// The image types providers accept, most preferred first.
const SUPPORTED_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// Where the clipboard is read from and where a pasted image is saved.
#[derive(Clone, Debug)]
pub struct ClipboardEnv {
    pub wayland: bool,
    pub wsl: bool,
    pub macos: bool,
    /// Termux has no clipboard images at all.
    pub termux: bool,
    /// Run the clipboard tools from this folder instead of `PATH` (tests put fakes there).
    pub tool_dir: Option<PathBuf>,
    /// Where pasted images are written.
    pub save_dir: PathBuf,
}

impl ClipboardEnv {
    /// The clipboard of the session pi runs in.
    pub fn detect() -> ClipboardEnv {
        let var = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let wsl = var("WSL_DISTRO_NAME")
            || var("WSLENV")
            || std::fs::read_to_string("/proc/version").is_ok_and(|v| {
                let v = v.to_lowercase();
                v.contains("microsoft") || v.contains("wsl")
            });
        ClipboardEnv {
            wayland: var("WAYLAND_DISPLAY")
                || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland"),
            wsl,
            macos: cfg!(target_os = "macos"),
            termux: var("TERMUX_VERSION"),
            tool_dir: None,
            save_dir: std::env::temp_dir(),
        }
    }

    fn command(&self, program: &str) -> Command {
        match &self.tool_dir {
            Some(dir) => Command::new(dir.join(program)),
            None => Command::new(program),
        }
    }
}

#[derive(Debug, PartialEq)]
pub struct ClipboardImage {
    pub bytes: Vec<u8>,
    pub mime_type: String,
}

/// What a read of the clipboard found.
#[derive(Debug, PartialEq)]
pub enum ClipboardRead {
    Image(ClipboardImage),
    /// The clipboard holds no image of a type pi sends.
    NoImage,
    /// None of the tools that could read it is installed; says which to install.
    NoTool(String),
}

/// Reads the clipboard on a helper thread; the answer arrives on the receiver.
pub fn spawn_read(env: ClipboardEnv) -> ReplyRx<ClipboardRead> {
    let (tx, rx) = reply();
    let spawned = std::thread::Builder::new()
        .name("clipboard-image".into())
        .spawn(move || {
            let _ = tx.send(read(&env));
        });
    if spawned.is_err() {
        // No thread, no read: the dropped sender reports it as a closed channel.
        return ReplyRx::never();
    }
    rx
}

/// Reads an image from the clipboard with whichever tool the platform has.
pub fn read(env: &ClipboardEnv) -> ClipboardRead {
    if env.termux {
        return ClipboardRead::NoImage;
    }
    let attempts: &[ToolReader] = if env.macos {
        &[read_via_osascript]
    } else if env.wayland || env.wsl {
        &[read_via_wl_paste, read_via_xclip]
    } else {
        &[read_via_xclip]
    };
    let mut tool_found = false;
    for attempt in attempts {
        match attempt(env) {
            Ok(Some(image)) => return ClipboardRead::Image(image),
            Ok(None) => tool_found = true,
            Err(Missing) => {}
        }
    }
    if tool_found {
        ClipboardRead::NoImage
    } else if env.macos {
        ClipboardRead::NoTool("osascript".into())
    } else if env.wayland {
        ClipboardRead::NoTool("wl-clipboard (wl-paste)".into())
    } else {
        ClipboardRead::NoTool("xclip".into())
    }
}

/// Saves a pasted image as `pi-clipboard-<random>.<ext>` in the save folder (created
/// exclusively, readable only by the user, kept after pi exits so the reference stays valid);
/// returns its path.
pub fn save(env: &ClipboardEnv, image: &ClipboardImage) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    let ext = extension_for(&image.mime_type).unwrap_or("png");
    let mut file = tempfile::Builder::new()
        .prefix("pi-clipboard-")
        .suffix(&format!(".{ext}"))
        .rand_bytes(12)
        .tempfile_in(&env.save_dir)?;
    file.write_all(&image.bytes)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

fn extension_for(mime_type: &str) -> Option<&'static str> {
    match base_type(mime_type).as_str() {
        "image/png" => Some("png"),
        "image/jpeg" => Some("jpg"),
        "image/webp" => Some("webp"),
        "image/gif" => Some("gif"),
        _ => None,
    }
}

/// `image/png;foo=bar` → `image/png`.
fn base_type(mime_type: &str) -> String {
    mime_type
        .split(';')
        .next()
        .unwrap_or(mime_type)
        .trim()
        .to_lowercase()
}

/// The best type among those the clipboard offers: a supported one in order of preference,
/// else any image type.
fn preferred_type(offered: &[String]) -> Option<String> {
    SUPPORTED_TYPES
        .iter()
        .find_map(|want| offered.iter().find(|t| base_type(t) == *want))
        .or_else(|| offered.iter().find(|t| base_type(t).starts_with("image/")))
        .cloned()
}

/// The tool is not installed.
struct Missing;

type ToolReader = fn(&ClipboardEnv) -> Result<Option<ClipboardImage>, Missing>;

fn read_via_wl_paste(env: &ClipboardEnv) -> Result<Option<ClipboardImage>, Missing> {
    let Some(list) = run(env, "wl-paste", &["--list-types"], LIST_TIMEOUT)? else {
        return Ok(None);
    };
    let Some(chosen) = preferred_type(&lines(&list)) else {
        return Ok(None);
    };
    let data = run(
        env,
        "wl-paste",
        &["--type", &chosen, "--no-newline"],
        READ_TIMEOUT,
    )?;
    Ok(data.and_then(|bytes| image(bytes, &chosen)))
}

fn read_via_xclip(env: &ClipboardEnv) -> Result<Option<ClipboardImage>, Missing> {
    let targets = run(
        env,
        "xclip",
        &["-selection", "clipboard", "-t", "TARGETS", "-o"],
        LIST_TIMEOUT,
    )?;
    let mut candidates: Vec<String> = targets
        .and_then(|t| preferred_type(&lines(&t)))
        .into_iter()
        .collect();
    candidates.extend(SUPPORTED_TYPES.iter().map(|t| t.to_string()));
    for mime_type in candidates {
        let data = run(
            env,
            "xclip",
            &["-selection", "clipboard", "-t", &mime_type, "-o"],
            READ_TIMEOUT,
        )?;
        if let Some(found) = data.and_then(|bytes| image(bytes, &mime_type)) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// macOS: AppleScript prints the clipboard's PNG data as `«data PNGf89504E47…»`.
fn read_via_osascript(env: &ClipboardEnv) -> Result<Option<ClipboardImage>, Missing> {
    let out = run(
        env,
        "osascript",
        &["-e", "the clipboard as «class PNGf»"],
        READ_TIMEOUT,
    )?;
    let Some(out) = out else { return Ok(None) };
    let text = String::from_utf8_lossy(&out);
    let Some(hex) = text
        .trim()
        .strip_prefix("«data PNGf")
        .and_then(|h| h.strip_suffix('»'))
    else {
        return Ok(None);
    };
    Ok(decode_hex(hex).and_then(|bytes| image(bytes, "image/png")))
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Clipboard data of `mime_type`, if it is a type pi sends and not empty.
fn image(bytes: Vec<u8>, mime_type: &str) -> Option<ClipboardImage> {
    let mime_type = base_type(mime_type);
    if bytes.is_empty() || !SUPPORTED_TYPES.contains(&mime_type.as_str()) {
        return None;
    }
    Some(ClipboardImage { bytes, mime_type })
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// Runs a clipboard tool: `Err` when it is not installed, `Ok(None)` when it failed or took
/// longer than `timeout` (then it is killed), else its output.
fn run(
    env: &ClipboardEnv,
    program: &str,
    args: &[&str],
    timeout: Duration,
) -> Result<Option<Vec<u8>>, Missing> {
    let options = RunOptions {
        timeout: Some(timeout),
        max_output: MAX_BYTES,
        capture_stderr: false,
        ..Default::default()
    };
    let mut out = process::run(env.command(program).args(args), &options);
    // A tool written a moment ago may still be open for writing in a forked child.
    for _ in 0..20 {
        match &out {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(10));
                out = process::run(env.command(program).args(args), &options);
            }
            _ => break,
        }
    }
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Missing),
        Err(_) => return Ok(None),
    };
    let ok = !out.killed() && out.status.is_some_and(|s| s.success());
    Ok(ok.then_some(out.stdout))
}

/// A fake clipboard tool for tests: a shell script named `program` in `dir`.
#[cfg(test)]
pub(crate) fn fake_tool(dir: &std::path::Path, program: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(program);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\nfake-png-body";

    fn env(dir: &std::path::Path, wayland: bool) -> ClipboardEnv {
        ClipboardEnv {
            wayland,
            wsl: false,
            macos: false,
            termux: false,
            tool_dir: Some(dir.to_path_buf()),
            save_dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn wl_paste_reads_the_preferred_type() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("clip.jpg"), b"\xff\xd8\xffjpeg").unwrap();
        let clip = dir.path().join("clip.jpg");
        fake_tool(
            dir.path(),
            "wl-paste",
            &format!(
                "case \"$1\" in --list-types) printf 'text/plain\\nimage/jpeg\\nimage/bmp\\n';; \
                 --type) [ \"$2\" = image/jpeg ] && cat '{}';; esac",
                clip.display()
            ),
        );
        let read = read(&env(dir.path(), true));
        assert_eq!(
            read,
            ClipboardRead::Image(ClipboardImage {
                bytes: b"\xff\xd8\xffjpeg".to_vec(),
                mime_type: "image/jpeg".into()
            })
        );
    }

    #[test]
    fn xclip_without_an_image_finds_none() {
        let dir = tempfile::tempdir().unwrap();
        fake_tool(
            dir.path(),
            "xclip",
            "[ \"$4\" = TARGETS ] && printf 'UTF8_STRING\\n' && exit 0; exit 1",
        );
        assert_eq!(read(&env(dir.path(), false)), ClipboardRead::NoImage);
    }

    #[test]
    fn no_tool_says_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read(&env(dir.path(), false)),
            ClipboardRead::NoTool("xclip".into())
        );
        assert_eq!(
            read(&env(dir.path(), true)),
            ClipboardRead::NoTool("wl-clipboard (wl-paste)".into())
        );
    }

    #[test]
    fn a_hanging_tool_is_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        fake_tool(dir.path(), "xclip", "exec sleep 30");
        let start = Instant::now();
        let out = run(
            &env(dir.path(), false),
            "xclip",
            &[],
            Duration::from_millis(100),
        );
        assert!(matches!(out, Ok(None)));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn saves_with_the_type_extension() {
        let dir = tempfile::tempdir().unwrap();
        let image = ClipboardImage {
            bytes: PNG.to_vec(),
            mime_type: "image/png".into(),
        };
        let path = save(&env(dir.path(), false), &image).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("pi-clipboard-") && name.ends_with(".png"),
            "{name}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), PNG);
    }

    #[test]
    fn decodes_osascript_hex() {
        assert_eq!(decode_hex("89504E47"), Some(vec![0x89, b'P', b'N', b'G']));
        assert_eq!(decode_hex("8"), None);
        assert_eq!(decode_hex("zz"), None);
    }
}
