//! The streamed search against the whole-file one it replaced (kept here as the oracle):
//! the same rows for every chunk size, so chunk boundaries never show.

use super::*;

/// The search as it was before streaming: the whole file in memory.
fn whole_file(data: &[u8], regex: &Regex, context: usize, wanted: usize) -> Option<Vec<String>> {
    if memchr::memchr(0, data).is_some() {
        return None;
    }
    let found = matching_lines(data, regex, wanted);
    if found.is_empty() {
        return None;
    }
    let show = |line: usize, bytes: &[u8], is_match: bool| {
        let (text, cut) = clean_line(bytes);
        format!(
            "{line}{}{text}{}",
            if is_match { ':' } else { '-' },
            if cut { "+" } else { "" }
        )
    };
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let all: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    let mut rows = Vec::new();
    let mut next = 1;
    for (i, &(no, _, _)) in found.iter().enumerate() {
        let first = no.saturating_sub(context).max(next);
        let last = (no + context).min(all.len());
        let stop = found.get(i + 1).map_or(last, |n| last.min(n.0 - 1));
        for line in first..no {
            rows.push(show(line, all[line - 1], false));
        }
        rows.push(show(no, all[no - 1], true));
        for line in no + 1..=stop {
            rows.push(show(line, all[line - 1], false));
        }
        next = stop.max(no) + 1;
    }
    Some(rows)
}

fn streamed(
    path: &Path,
    regex: &Regex,
    context: usize,
    wanted: usize,
    chunk: usize,
    max_line: usize,
) -> Option<Vec<String>> {
    let abort = Abort::new();
    let search = Search {
        regex,
        context,
        wanted,
        abort: &abort,
    };
    let hits = search_file_in(path, &search, chunk, max_line)?;
    assert_eq!(
        hits.matches,
        hits.rows.iter().filter(|r| r.is_match).count()
    );
    Some(
        hits.rows
            .iter()
            .map(|r| {
                let sep = if r.is_match { ':' } else { '-' };
                format!("{}{sep}{}{}", r.line, r.text, if r.cut { "+" } else { "" })
            })
            .collect(),
    )
}

#[test]
fn chunk_boundaries_never_change_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let long = "x".repeat(700);
    let files: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"foo".to_vec(),
        b"foo\n".to_vec(),
        b"a\nfoo\nb\nc\nfoo bar\n\nfoo\nd\ne\nf\ng\nfoo".to_vec(),
        b"foo\r\nbar\r\nfoo\r\n\r\n".to_vec(),
        format!("{long}foo\nshort\nfoo{long}\n\n\nfoo\n").into_bytes(),
        (0..200)
            .map(|i| format!("line {i} {}\n", if i % 7 == 3 { "foo" } else { "bar" }))
            .collect::<String>()
            .into_bytes(),
        "é foo ü\nñ\n\u{1F600}foo\n".as_bytes().to_vec(),
        b"\xff\xfe foo\nbar\n".to_vec(),
        b"foo\nbar\x00\n".to_vec(),
    ];
    let patterns = ["foo", "^", "o$", "fo+\\s", "foo\\nbar", "^$", "é|\u{1F600}"];
    for data in &files {
        std::fs::write(&path, data).unwrap();
        for pattern in patterns {
            let regex = regex::bytes::RegexBuilder::new(&format!("(?:{pattern})"))
                .multi_line(true)
                .build()
                .unwrap();
            for context in [0, 1, 2, 5] {
                for wanted in [1, 2, 3, 101] {
                    let expected = whole_file(data, &regex, context, wanted);
                    for chunk in [1, 2, 3, 7, 64, CHUNK] {
                        let got = streamed(&path, &regex, context, wanted, chunk, MAX_LINE);
                        assert_eq!(
                            got,
                            expected,
                            "{:?} /{pattern}/ context {context} wanted {wanted} chunk {chunk}",
                            String::from_utf8_lossy(data)
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_line_longer_than_the_cap_is_searched_in_pieces_and_shown_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let mut data = b"before\n".to_vec();
    data.extend(std::iter::repeat_n(b'a', 10_000));
    data.extend_from_slice(b"needle");
    data.extend(std::iter::repeat_n(b'b', 10_000));
    data.extend_from_slice(b"\nafter needle\nlast");
    std::fs::write(&path, &data).unwrap();
    let regex = regex::bytes::Regex::new("needle").unwrap();
    let rows = streamed(&path, &regex, 1, 10, 100, 1000).unwrap();
    let shown = format!("{}... [truncated]+", "a".repeat(500));
    assert_eq!(
        rows,
        vec![
            "1-before".to_string(),
            format!("2:{shown}"),
            "3:after needle".to_string(),
            "4-last".to_string(),
        ]
    );
    // The same with the line kept whole.
    assert_eq!(streamed(&path, &regex, 1, 10, 100, MAX_LINE), Some(rows));
}
