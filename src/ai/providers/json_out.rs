//! Writes a request body's JSON straight into one buffer, byte for byte as serde_json's
//! compact printer prints the same `Value`: a provider serializes a long conversation from
//! its typed messages without building a `Value` tree over a copy of it each turn (issue 35).

use serde::Serialize;

/// Writes `s` as a JSON string, escaped as serde_json escapes it.
pub fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    string_contents(out, s);
    out.push(b'"');
}

/// The escaped inside of a JSON string (no quotes), so one string can be written in pieces.
pub fn string_contents(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0c => b'f',
            0x00..=0x1f => 0,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        if short == 0 {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.push(b'\\');
            out.push(short);
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Any serializable value, as serde_json prints it.
pub fn value<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    // Writing to a Vec cannot fail; a value that cannot be serialized (a map with non-string
    // keys) never reaches a request.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// A JSON object being written: `{` on start, `}` on [`Obj::end`].
pub struct Obj<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn start(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, first: true }
    }

    /// Writes `"key":` and hands back the buffer for the value.
    pub fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        string(self.out, key);
        self.out.push(b':');
        self.out
    }

    pub fn str(&mut self, key: &str, s: &str) {
        let out = self.key(key);
        string(out, s);
    }

    pub fn field<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) {
        let out = self.key(key);
        value(out, v);
    }

    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// A JSON array being written: `[` on start, `]` on [`Arr::end`].
pub struct Arr<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Arr<'a> {
    pub fn start(out: &'a mut Vec<u8>) -> Self {
        out.push(b'[');
        Arr { out, first: true }
    }

    /// Writes the separator and hands back the buffer for the next item.
    pub fn item(&mut self) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out
    }

    pub fn end(self) {
        self.out.push(b']');
    }
}

/// The buffer as a string (it only ever holds what the writers above put in: UTF-8).
pub fn into_string(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let all: String = (0u8..0x80).map(char::from).collect::<String>() + "é 日本 🙂 \u{2028}";
        let mut out = Vec::new();
        string(&mut out, &all);
        assert_eq!(into_string(out), serde_json::Value::String(all).to_string());
    }

    #[test]
    fn objects_and_arrays_print_as_the_same_value_does() {
        let mut out = Vec::new();
        let mut o = Obj::start(&mut out);
        o.str("a", "x\"y");
        o.field("n", &1.5f64);
        let mut arr = Arr::start(o.key("list"));
        value(arr.item(), &serde_json::json!({"k": [1, null]}));
        string(arr.item(), "z");
        arr.end();
        o.end();
        let expected = serde_json::json!({"a": "x\"y", "n": 1.5, "list": [{"k": [1, null]}, "z"]});
        assert_eq!(into_string(out), expected.to_string());
    }
}
