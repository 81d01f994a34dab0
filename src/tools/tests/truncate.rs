use super::*;

#[test]
fn head_untouched_when_within_limits() {
    let t = truncate_head("a\nb\n", 10, 100);
    assert!(!t.truncated);
    assert_eq!(t.total_lines, 2);
    assert_eq!(t.content, "a\nb\n");
    assert_eq!(t.truncated_by, None);
}

#[test]
fn head_by_lines() {
    let text = (1..=10)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let t = truncate_head(&text, 3, 1000);
    assert_eq!(t.content, "1\n2\n3");
    assert_eq!(t.truncated_by, Some("lines"));
    assert_eq!((t.output_lines, t.total_lines, t.output_bytes), (3, 10, 5));
}

#[test]
fn head_by_bytes_never_partial() {
    let t = truncate_head("aaaa\nbbbb\ncccc", 100, 10);
    assert_eq!(t.content, "aaaa\nbbbb");
    assert_eq!(t.truncated_by, Some("bytes"));
    assert_eq!(t.output_lines, 2);
    assert!(!t.last_line_partial);
}

#[test]
fn head_first_line_exceeds() {
    let t = truncate_head("0123456789abc\nx", 100, 10);
    assert!(t.first_line_exceeds_limit);
    assert_eq!(t.content, "");
    assert_eq!((t.output_lines, t.truncated_by), (0, Some("bytes")));
}

#[test]
fn tail_by_lines_and_bytes() {
    let text = (1..=10)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let t = truncate_tail(&text, 3, 1000);
    assert_eq!(t.content, "8\n9\n10");
    assert_eq!(t.truncated_by, Some("lines"));
    let t = truncate_tail("aaaa\nbbbb\ncccc", 100, 10);
    assert_eq!(t.content, "bbbb\ncccc");
    assert_eq!(t.truncated_by, Some("bytes"));
}

#[test]
fn tail_partial_last_line_is_utf8_safe() {
    let line = "é".repeat(10); // 20 bytes
    let t = truncate_tail(&format!("x\n{line}"), 100, 5);
    assert!(t.last_line_partial);
    assert_eq!(t.content, "éé"); // 5 bytes back lands mid-char: moved forward to a boundary
    assert_eq!(t.output_lines, 1);
    assert_eq!(t.output_bytes, 4);
}

#[test]
fn a_trailing_newline_ends_the_last_line_instead_of_counting_one() {
    // pi 1.x (0.73.1 counted 3001 and 1).
    let text = "a\n".repeat(3000);
    let t = truncate_head(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    assert_eq!(t.total_lines, 3000);
    assert_eq!(t.output_lines, 2000);
    let t = truncate_tail(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    assert_eq!((t.total_lines, t.output_lines), (3000, 2000));
    assert!(t.content.starts_with("a\n") && t.content.ends_with('a'));
    assert_eq!(truncate_head("", 1, 1).total_lines, 0);
    // Exactly at the cap with a final newline: nothing is cut.
    let t = truncate_head(&"a\n".repeat(2000), DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    assert!(!t.truncated);
    assert_eq!(t.total_lines, 2000);
}

#[test]
fn serializes_like_pi() {
    let v = serde_json::to_value(truncate_head("a", 10, 10)).unwrap();
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "content",
            "truncated",
            "truncatedBy",
            "totalLines",
            "totalBytes",
            "outputLines",
            "outputBytes",
            "lastLinePartial",
            "firstLineExceedsLimit",
            "maxLines",
            "maxBytes"
        ]
    );
    assert!(v["truncatedBy"].is_null());
}

#[test]
fn sizes_and_lines() {
    assert_eq!(format_size(512), "512B");
    assert_eq!(format_size(51200), "50.0KB");
    assert_eq!(format_size(1280), "1.3KB");
    assert_eq!(format_size(1536 * 1024), "1.5MB");
    assert_eq!(
        truncate_line("abcdef", 3),
        ("abc... [truncated]".to_string(), true)
    );
    assert_eq!(truncate_line("abc", 3), ("abc".to_string(), false));
    assert_eq!(
        truncate_line("😀😀", 3),
        ("😀... [truncated]".to_string(), true)
    );
}
