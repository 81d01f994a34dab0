//! Opening a URL in the user's browser, best effort: only when there is a desktop to open it
//! on (macOS, or an X11/Wayland display) and a person at the terminal, so headless runs, tests
//! and SSH sessions never start an opener. Sign-in flows always print the URL as well.

use std::io::IsTerminal;

/// Hands `url` to the desktop's opener, if there is one; never waits for it.
pub fn open(url: &str) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let mut cmd = std::process::Command::new(opener);
    cmd.arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own session: the browser it starts must not share pi's terminal.
    let options = super::process::SpawnOptions {
        new_session: true,
        ..Default::default()
    };
    let _ = super::process::spawn(&mut cmd, options);
}
