//! The paste-image key and pasted paths: a clipboard image becomes a temp file whose path is
//! typed into the editor (pi's way), the model reads it with `read`, and a pasted image path
//! stays text.

use super::*;
use crate::ai::{Content, Message};
use crate::modes::interactive::clipboard_image::fake_tool;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-fake-body";

/// Steps the loop until the editor holds more than `typed` (the paste arrives later, from the
/// clipboard tool's thread).
fn wait_for_editor_text(h: &mut Harness, typed: &str) -> String {
    h.wait_for("the pasted path", |h| {
        h.app.view.editor.get_text().len() > typed.len()
    });
    h.app.view.editor.get_text()
}

#[test]
fn ctrl_v_pastes_the_clipboard_image_as_a_path_the_model_reads() {
    let mut h = harness_setup("paste-img", &[], false, &mut |dir, session, env| {
        session.agent_mut().model.input.push("image".into());
        let tools = env.clipboard.tool_dir.clone().unwrap();
        std::fs::create_dir_all(&tools).unwrap();
        let clip = dir.join("clip.png");
        std::fs::write(&clip, PNG).unwrap();
        fake_tool(
            &tools,
            "xclip",
            &format!(
                "[ \"$4\" = TARGETS ] && printf 'TARGETS\\nimage/png\\n' && exit 0\n\
                 [ \"$4\" = image/png ] && cat '{}'",
                clip.display()
            ),
        );
    });
    h.type_bytes("look at ");
    h.type_bytes("\x16");
    let text = wait_for_editor_text(&mut h, "look at ");
    let path = text.strip_prefix("look at ").expect("typed text kept");
    assert!(
        path.starts_with(&h.dir.path().to_string_lossy().into_owned())
            && path.contains("pi-clipboard-")
            && path.ends_with(".png"),
        "{text}"
    );
    assert_eq!(std::fs::read(path).unwrap(), PNG);

    push_reply(
        "paste-img",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: json!({ "path": path }),
            }],
            ..Default::default()
        },
    );
    push_reply("paste-img", Reply::text("A tiny image."));
    h.type_bytes("\r");
    h.wait_idle();
    h.wait_text("A tiny image.");
    let messages = h.with(|s| s.messages().to_vec());
    let Message::User(user) = &messages[0] else {
        panic!("first message is the prompt: {messages:?}")
    };
    assert!(crate::session::ops::user_content_text(&user.content).contains(path));
    let image = messages.iter().find_map(|m| match m {
        Message::ToolResult(r) => r.content.iter().find_map(|c| match c {
            Content::Image(i) => Some(i.clone()),
            _ => None,
        }),
        _ => None,
    });
    let image = image.expect("read attached the pasted image");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(image.data, crate::util::encoding::base64_encode(PNG));
}

#[test]
fn no_image_on_the_clipboard_changes_nothing() {
    let mut h = harness_setup("paste-none", &[], false, &mut |_, _, env| {
        let tools = env.clipboard.tool_dir.clone().unwrap();
        std::fs::create_dir_all(&tools).unwrap();
        fake_tool(
            &tools,
            "xclip",
            "[ \"$4\" = TARGETS ] && echo UTF8_STRING; exit 1",
        );
    });
    h.type_bytes("\x16");
    h.wait_for("the clipboard read", |h| h.app.jobs.clipboard().is_none());
    assert_eq!(h.app.view.editor.get_text(), "");
    assert!(!h.screen().contains("Cannot paste"), "{}", h.screen());
}

#[test]
fn no_clipboard_tool_says_what_to_install() {
    let mut h = harness("paste-notool");
    h.type_bytes("\x16");
    h.wait_text("Cannot paste images: no clipboard tool found. Install xclip.");
    assert_eq!(h.app.view.editor.get_text(), "");
}

#[test]
fn a_pasted_image_path_stays_text_with_a_space_before_it() {
    let mut h = harness("paste-path");
    let image = h.dir.path().join("shot.png");
    std::fs::write(&image, PNG).unwrap();
    h.type_bytes("see");
    h.type_bytes(&format!("\x1b[200~{}\x1b[201~", image.display()));
    assert_eq!(
        h.app.view.editor.get_text(),
        format!("see {}", image.display())
    );
}
