//! Byte-sequence corpus for the stdin parser: what real terminals send, whole and split at
//! every byte, plus random garbage that must never panic.

use super::*;
use crate::tui::keys::{KeyCode, KeyEvent, KeyKind, Mods};
use crate::util::sort;

fn k(code: KeyCode, mods: Mods) -> ParsedInput {
    ParsedInput::Event(InputEvent::Key(KeyEvent::new(code, mods)))
}
fn plain(code: KeyCode) -> ParsedInput {
    k(code, Mods::NONE)
}
fn ch(c: char) -> ParsedInput {
    plain(KeyCode::Char(c))
}
fn m(shift: bool, alt: bool, ctrl: bool) -> Mods {
    Mods {
        shift,
        alt,
        ctrl,
        super_key: false,
    }
}
fn kind(code: KeyCode, mods: Mods, kind: KeyKind) -> ParsedInput {
    let mut e = KeyEvent::new(code, mods);
    e.kind = kind;
    ParsedInput::Event(InputEvent::Key(e))
}

/// Feeds everything at once, then flushes as a timeout would.
fn parse_all(bytes: &[u8], kitty: bool) -> Vec<ParsedInput> {
    let mut p = StdinBuffer::new();
    p.kitty_active = kitty;
    let mut out = p.feed(bytes);
    out.extend(p.flush_timeout());
    out
}

/// Feeds the bytes split at `cut` (two reads), then flushes.
fn parse_split(bytes: &[u8], cuts: &[usize], kitty: bool) -> Vec<ParsedInput> {
    let mut p = StdinBuffer::new();
    p.kitty_active = kitty;
    let mut out = Vec::new();
    let mut last = 0;
    for &c in cuts {
        out.extend(p.feed(&bytes[last..c]));
        last = c;
    }
    out.extend(p.feed(&bytes[last..]));
    out.extend(p.flush_timeout());
    out
}

fn corpus() -> Vec<(&'static [u8], bool, Vec<ParsedInput>)> {
    use KeyCode::*;
    let none = Mods::NONE;
    vec![
        // Plain text, control bytes.
        (b"a", false, vec![ch('a')]),
        (b"A", false, vec![ch('A')]),
        ("é😀".as_bytes(), false, vec![ch('é'), ch('😀')]),
        ("中".as_bytes(), false, vec![ch('中')]),
        (b"\r", false, vec![plain(Enter)]),
        (b"\n", false, vec![k(Char('j'), Mods::CTRL)]),
        (b"\n", true, vec![k(Enter, Mods::SHIFT)]),
        (b"\t", false, vec![plain(Tab)]),
        (b"\x7f", false, vec![plain(Backspace)]),
        (b"\x00", false, vec![k(Char(' '), Mods::CTRL)]),
        (b"\x01", false, vec![k(Char('a'), Mods::CTRL)]),
        (b"\x03", false, vec![k(Char('c'), Mods::CTRL)]),
        (b"\x1a", false, vec![k(Char('z'), Mods::CTRL)]),
        (b"\x1d", false, vec![k(Char(']'), Mods::CTRL)]),
        (b"\x1f", false, vec![k(Char('-'), Mods::CTRL)]),
        // Escape and Alt.
        (b"\x1b", false, vec![plain(Escape)]),
        (b"\x1b\x1b", false, vec![plain(Escape), plain(Escape)]),
        (b"\x1bx", false, vec![k(Char('x'), Mods::ALT)]),
        (b"\x1bd", false, vec![k(Char('d'), Mods::ALT)]),
        (b"\x1b\r", false, vec![k(Enter, Mods::ALT)]),
        (b"\x1b\r", true, vec![k(Enter, Mods::SHIFT)]),
        (b"\x1b\x7f", false, vec![k(Backspace, Mods::ALT)]),
        (b"\x1bB", false, vec![k(Left, Mods::ALT)]),
        (b"\x1b\x1d", false, vec![k(Char(']'), m(false, true, true))]),
        (b"\x1b[", false, vec![k(Char('['), Mods::ALT)]),
        // WezTerm: ESC ESC [ A is Escape, then Up.
        (b"\x1b\x1b[A", false, vec![plain(Escape), plain(Up)]),
        // Legacy xterm.
        (b"\x1b[A", false, vec![plain(Up)]),
        (b"\x1b[B", false, vec![plain(Down)]),
        (b"\x1b[C", false, vec![plain(Right)]),
        (b"\x1b[D", false, vec![plain(Left)]),
        (b"\x1bOA", false, vec![plain(Up)]),
        (b"\x1b[H", false, vec![plain(Home)]),
        (b"\x1bOH", false, vec![plain(Home)]),
        (b"\x1b[F", false, vec![plain(End)]),
        (b"\x1bOF", false, vec![plain(End)]),
        (b"\x1b[1~", false, vec![plain(Home)]),
        (b"\x1b[4~", false, vec![plain(End)]),
        (b"\x1b[2~", false, vec![plain(Insert)]),
        (b"\x1b[3~", false, vec![plain(Delete)]),
        (b"\x1b[5~", false, vec![plain(PageUp)]),
        (b"\x1b[6~", false, vec![plain(PageDown)]),
        (b"\x1b[Z", false, vec![k(Tab, Mods::SHIFT)]),
        (b"\x1b[1;5C", false, vec![k(Right, Mods::CTRL)]),
        (b"\x1b[1;3D", false, vec![k(Left, Mods::ALT)]),
        (b"\x1b[1;2A", false, vec![k(Up, Mods::SHIFT)]),
        (b"\x1b[3;5~", false, vec![k(Delete, Mods::CTRL)]),
        (b"\x1b[3;3~", false, vec![k(Delete, Mods::ALT)]),
        (b"\x1bOP", false, vec![plain(F(1))]),
        (b"\x1bOS", false, vec![plain(F(4))]),
        (b"\x1b[15~", false, vec![plain(F(5))]),
        (b"\x1b[17~", false, vec![plain(F(6))]),
        (b"\x1b[21~", false, vec![plain(F(10))]),
        (b"\x1b[24~", false, vec![plain(F(12))]),
        (b"\x1b[[A", false, vec![plain(F(1))]),
        (b"\x1bOM", false, vec![plain(Enter)]),
        // rxvt.
        (b"\x1b[a", false, vec![k(Up, Mods::SHIFT)]),
        (b"\x1bOd", false, vec![k(Left, Mods::CTRL)]),
        (b"\x1b[2$", false, vec![k(Insert, Mods::SHIFT)]),
        (b"\x1b[3^", false, vec![k(Delete, Mods::CTRL)]),
        // Kitty CSI-u.
        (b"\x1b[97u", true, vec![ch('a')]),
        (b"\x1b[97;5u", true, vec![k(Char('a'), Mods::CTRL)]),
        (b"\x1b[99;5u", true, vec![k(Char('c'), Mods::CTRL)]),
        (
            b"\x1b[112;6u",
            true,
            vec![k(Char('p'), m(true, false, true))],
        ),
        (b"\x1b[97:65;2u", true, vec![k(Char('A'), Mods::SHIFT)]),
        (b"\x1b[49:33;2u", true, vec![k(Char('!'), Mods::SHIFT)]),
        (b"\x1b[13u", true, vec![plain(Enter)]),
        (b"\x1b[13;2u", true, vec![k(Enter, Mods::SHIFT)]),
        (b"\x1b[13;3u", true, vec![k(Enter, Mods::ALT)]),
        (b"\x1b[57414;2u", true, vec![k(Enter, Mods::SHIFT)]),
        (b"\x1b[27u", true, vec![plain(Escape)]),
        (b"\x1b[9;2u", true, vec![k(Tab, Mods::SHIFT)]),
        (b"\x1b[127;5u", true, vec![k(Backspace, Mods::CTRL)]),
        (b"\x1b[32;5u", true, vec![k(Char(' '), Mods::CTRL)]),
        (b"\x1b[45;5u", true, vec![k(Char('-'), Mods::CTRL)]),
        (
            b"\x1b[97;5:2u",
            true,
            vec![kind(Char('a'), Mods::CTRL, KeyKind::Repeat)],
        ),
        (
            b"\x1b[97;1:3u",
            true,
            vec![kind(Char('a'), none, KeyKind::Release)],
        ),
        (b"\x1b[1;1:3A", true, vec![kind(Up, none, KeyKind::Release)]),
        (
            b"\x1b[3;1:3~",
            true,
            vec![kind(Delete, none, KeyKind::Release)],
        ),
        // Caps Lock (64) is ignored.
        (b"\x1b[97;69u", true, vec![k(Char('a'), Mods::CTRL)]),
        // Cyrillic 'с' with Ctrl on the 'c' key reports the base layout key.
        (
            "\x1b[1089::99;5u".as_bytes(),
            true,
            vec![k(Char('c'), Mods::CTRL)],
        ),
        // Kitty keypad and F13.
        (b"\x1b[57399u", true, vec![ch('0')]),
        (b"\x1b[57419u", true, vec![plain(Up)]),
        (b"\x1b[57376u", true, vec![plain(F(13))]),
        // Kitty duplicate printable: the raw 'a' after CSI 97u is dropped, a later one is not.
        (b"\x1b[97ua", true, vec![ch('a')]),
        (b"\x1b[97uab", true, vec![ch('a'), ch('b')]),
        (b"\x1b[97uba", true, vec![ch('a'), ch('b'), ch('a')]),
        // xterm modifyOtherKeys.
        (b"\x1b[27;2;13~", false, vec![k(Enter, Mods::SHIFT)]),
        (b"\x1b[27;5;99~", false, vec![k(Char('c'), Mods::CTRL)]),
        (
            b"\x1b[27;6;80~",
            false,
            vec![k(Char('p'), m(true, false, true))],
        ),
        (b"\x1b[27;3;13~", false, vec![k(Enter, Mods::ALT)]),
        // Bracketed paste.
        (
            b"\x1b[200~hello\nworld\x1b[201~",
            false,
            vec![ParsedInput::Event(InputEvent::Paste("hello\nworld".into()))],
        ),
        (
            b"x\x1b[200~\x1b[A\x03\x1b[201~y",
            false,
            vec![
                ch('x'),
                ParsedInput::Event(InputEvent::Paste("\x1b[A\x03".into())),
                ch('y'),
            ],
        ),
        (
            b"\x1b[200~\x1b[201~",
            false,
            vec![ParsedInput::Event(InputEvent::Paste(String::new()))],
        ),
        // Terminal replies.
        (b"\x1b[?7u", false, vec![ParsedInput::KittyFlags(7)]),
        (
            b"\x1b[6;18;9t",
            false,
            vec![ParsedInput::CellSize {
                height: 18,
                width: 9,
            }],
        ),
        (
            b"\x1b]11;rgb:ffff/8080/0000\x1b\\",
            false,
            vec![ParsedInput::BackgroundColor {
                r: 255,
                g: 128,
                b: 0,
            }],
        ),
        (
            b"\x1b]11;rgb:00/00/00\x07a",
            false,
            vec![ParsedInput::BackgroundColor { r: 0, g: 0, b: 0 }, ch('a')],
        ),
        // SGR mouse and focus are framed whole and reported as Other.
        (
            b"\x1b[<0;10;5Ma",
            false,
            vec![ParsedInput::Other("\x1b[<0;10;5M".into()), ch('a')],
        ),
        (b"\x1b[I", false, vec![ParsedInput::Other("\x1b[I".into())]),
        (
            b"\x1b_Gi=1;OK\x1b\\",
            false,
            vec![ParsedInput::Other("\x1b_Gi=1;OK\x1b\\".into())],
        ),
        // Sequences back to back.
        (
            b"ab\x1b[Ac\x1b[1;5D\r",
            false,
            vec![
                ch('a'),
                ch('b'),
                plain(Up),
                ch('c'),
                k(Left, Mods::CTRL),
                plain(Enter),
            ],
        ),
    ]
}

#[test]
fn corpus_parses_whole() {
    for (bytes, kitty, want) in corpus() {
        assert_eq!(parse_all(bytes, kitty), want, "input {bytes:?}");
    }
}

#[test]
fn corpus_parses_split_at_every_byte() {
    for (bytes, kitty, want) in corpus() {
        for cut in 1..bytes.len() {
            assert_eq!(
                parse_split(bytes, &[cut], kitty),
                want,
                "input {bytes:?} split at {cut}"
            );
        }
        let every: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(
            parse_split(bytes, &every, kitty),
            want,
            "input {bytes:?} one byte per read"
        );
    }
}

#[test]
fn lone_escape_waits_for_timeout() {
    let mut p = StdinBuffer::new();
    assert_eq!(p.feed(b"\x1b"), vec![]);
    assert!(p.has_pending());
    assert_eq!(p.flush_timeout(), vec![plain(KeyCode::Escape)]);
    assert!(!p.has_pending());
    assert_eq!(p.flush_timeout(), vec![]);
}

#[test]
fn paste_spans_many_reads_and_ignores_timeouts() {
    let mut p = StdinBuffer::new();
    assert_eq!(p.feed(b"\x1b[200~line 1\n"), vec![]);
    assert!(!p.has_pending());
    assert_eq!(p.flush_timeout(), vec![]);
    assert_eq!(p.feed(b"line 2\x1b[20"), vec![]);
    assert_eq!(
        p.feed(b"1~\x1b[B"),
        vec![
            ParsedInput::Event(InputEvent::Paste("line 1\nline 2".into())),
            plain(KeyCode::Down)
        ]
    );
}

#[test]
fn kitty_reply_turns_the_protocol_on() {
    let mut p = StdinBuffer::new();
    assert!(!p.kitty_active());
    assert_eq!(p.feed(b"\x1b[?0u"), vec![ParsedInput::KittyFlags(0)]);
    assert!(p.kitty_active());
    assert_eq!(p.feed(b"\x1b\r"), vec![k(KeyCode::Enter, Mods::SHIFT)]);
    p.set_kitty_active(false);
}

#[test]
fn eight_bit_meta_and_broken_utf8() {
    // 0xE1 alone could start a UTF-8 character; after the timeout it is Meta+a.
    let mut p = StdinBuffer::new();
    assert_eq!(p.feed(&[0xe1]), vec![]);
    assert_eq!(p.flush_timeout(), vec![k(KeyCode::Char('a'), Mods::ALT)]);
    // A continuation byte on its own can only be Meta.
    assert_eq!(p.feed(&[0xb0]), vec![k(KeyCode::Char('0'), Mods::ALT)]);
    // A lead byte followed by ASCII: the lead byte is dropped as invalid, the text kept.
    let out = p.feed(&[0xe2, b'x']);
    assert_eq!(out.last(), Some(&ch('x')));
}

#[test]
fn unterminated_csi_does_not_swallow_following_keys() {
    let out = parse_all(b"\x1b[12\x03", false);
    assert_eq!(out.last(), Some(&k(KeyCode::Char('c'), Mods::CTRL)));
}

/// xorshift: deterministic, dependency-free randomness for the property test.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_bytes_in_random_splits_never_panic_and_lose_no_text() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let alphabet: &[u8] =
        b"\x1b[]O;:~u0123456789?<MmPt_\\\x07\r\n\x7fabcAZ\xc3\xa9\xe4\xb8\xad\xff";
    for _ in 0..3000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        let mut cuts: Vec<usize> = (0..rng.below(6)).map(|_| rng.below(len + 1)).collect();
        sort::sort(&mut cuts);
        let kitty = rng.below(2) == 0;
        let split = parse_split(&bytes, &cuts, kitty);
        let whole = parse_all(&bytes, kitty);
        assert_eq!(split, whole, "input {bytes:?} cuts {cuts:?}");
    }
    // A printable run with no ESC is always delivered in full.
    let text = "plain text, ünïcödé 中文 😀";
    let got: String = parse_split(text.as_bytes(), &[3, 9, 10, 20], false)
        .iter()
        .filter_map(|p| match p.event()?.key()?.code {
            KeyCode::Char(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(got, text);
}

#[test]
fn an_overlong_csi_frames_alike_however_it_is_split() {
    // Found by the fuzzer: a CSI sequence past MAX_CSI was cut where the read happened to
    // end, so the bytes after the limit read as keys or as part of the sequence by chance.
    let mut bytes = b"\x1b[".to_vec();
    bytes.extend(b"1;".repeat(MAX_CSI));
    bytes.extend(b"Axyz");
    let whole = parse_all(&bytes, false);
    for cut in [
        3,
        MAX_CSI - 1,
        MAX_CSI,
        MAX_CSI + 1,
        MAX_CSI + 2,
        bytes.len() - 2,
    ] {
        assert_eq!(parse_split(&bytes, &[cut], false), whole, "cut at {cut}");
    }
}
