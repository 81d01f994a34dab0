//! JSON text exactly as JavaScript's `JSON.stringify` writes it, so lines we write match pi's
//! byte for byte. serde_json already escapes strings the same way; numbers differ (`0.0` vs
//! `0`, `1.5e-6` vs `0.0000015`), so floats go through JavaScript's `Number#toString` rules.
//! Also the serde helpers that keep a JSON `null` apart from an absent field and read tagged
//! objects (`type`, `role`) without serde's buffering of internally tagged enums.

use std::io;

use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::ser::{Formatter, Serializer};
use serde_json::{Map, Value};

struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(js_number(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        w.write_all(js_number(value as f64).as_bytes())
    }
}

/// JavaScript's `String(x)` for a finite number (non-finite numbers become `null`, as
/// `JSON.stringify` writes them).
pub fn js_number(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` is the shortest round-trip form: `d[.ddd]e<exp>`.
    let sci = format!("{:e}", x.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    // value = 0.digits × 10^n
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// `JSON.stringify(value)` for any serializable value.
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut buf = Vec::new();
    if write_js(&mut buf, value).is_err() {
        return String::new();
    }
    // serde_json only writes valid UTF-8.
    String::from_utf8(buf).unwrap_or_default()
}

/// Appends `JSON.stringify(value)` to `buf`, for lines written piece by piece.
pub fn write_js<T: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    value.serialize(&mut Serializer::with_formatter(buf, JsFormatter))
}

/// Deserializes a present field (even `null`) as `Some(..)`, so `null` and absent stay apart
/// (use with `#[serde(default, deserialize_with = "present")]`).
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The tag of an object read as an internally tagged enum named `name` whose variants are
/// `variants` (in declaration order): the variant's index, or serde's own error for that enum.
pub fn tag_index(
    v: &Value,
    tag: &'static str,
    name: &str,
    variants: &'static [&'static str],
) -> Result<usize, serde_json::Error> {
    // serde also reads such an enum from a list whose first element is the tag.
    let found = match v {
        Value::Object(o) => o.get(tag),
        Value::Array(a) => a.first(),
        _ => {
            let expected = format!("internally tagged enum {name}");
            return Err(serde_json::Error::invalid_type(
                unexpected(v),
                &expected.as_str(),
            ));
        }
    };
    match found {
        None => Err(serde_json::Error::missing_field(tag)),
        Some(Value::String(s)) => variants
            .iter()
            .position(|k| k == s)
            .ok_or_else(|| serde_json::Error::unknown_variant(s, variants)),
        Some(other) => Err(serde_json::Error::invalid_type(
            unexpected(other),
            &"variant identifier",
        )),
    }
}

fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, f) => Unexpected::Float(f.unwrap_or(0.0)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// Reads the variant struct of a tagged object: a struct that keeps every field it does not
/// name in `extra`. The tag lands there and is taken out again, so the result is what serde's
/// internally tagged enums give, without their buffering the whole object first.
pub fn untagged_fields<T: DeserializeOwned>(
    v: &Value,
    tag: &str,
    extra: fn(&mut T) -> &mut Map<String, Value>,
) -> Result<T, serde_json::Error> {
    let mut t = T::deserialize(v)?;
    extra(&mut t).shift_remove(tag);
    Ok(t)
}

/// A JSON object of `pairs` in their order, as `json!({..})` builds it but without a copy of
/// its insertion code (and a `to_value` of every value) at each call site. The values are
/// taken out of the slice.
pub fn object(pairs: &mut [(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert((*k).to_string(), v.take());
    }
    Value::Object(m)
}
