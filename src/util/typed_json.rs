//! Reading a JSON value into a typed (serde) shape with an error that names the field:
//! `"names[1]": invalid type: integer `3`, expected a string`, `missing "message.content"`.
//! `serde_json::from_value` says what was wrong but not where; a protocol message read from
//! another program (an extension's call) needs both, so its author can fix it.

use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::Value;

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Why a value does not have the expected shape, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// From the outside in.
    pub path: Vec<Step>,
    pub problem: Problem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A required field is absent (its name is the path's last step).
    Missing,
    /// A string names none of an enum's variants (serde's message says which exist).
    UnknownVariant { variant: String, message: String },
    /// Anything else serde says (wrong type, bad value).
    Invalid(String),
}

impl FieldError {
    /// The path as written in JavaScript: `message.content`, `names[1]`.
    pub fn path_text(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Key(k) if out.is_empty() => out.push_str(k),
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// The same error seen from one level further out.
    fn within(mut self, step: Step) -> FieldError {
        self.path.insert(0, step);
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path_text();
        match &self.problem {
            Problem::Missing => write!(f, "missing \"{path}\""),
            Problem::UnknownVariant { message, .. } | Problem::Invalid(message) => {
                if path.is_empty() {
                    f.write_str(message)
                } else {
                    write!(f, "\"{path}\": {message}")
                }
            }
        }
    }
}

impl std::error::Error for FieldError {}

impl de::Error for FieldError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FieldError {
            path: Vec::new(),
            problem: Problem::Invalid(msg.to_string()),
        }
    }

    fn missing_field(field: &'static str) -> Self {
        FieldError {
            path: vec![Step::Key(field.to_string())],
            problem: Problem::Missing,
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let names: Vec<String> = expected.iter().map(|e| format!("`{e}`")).collect();
        FieldError {
            path: Vec::new(),
            problem: Problem::UnknownVariant {
                variant: variant.to_string(),
                message: format!(
                    "unknown value `{variant}`, expected one of {}",
                    names.join(", ")
                ),
            },
        }
    }
}

/// `value` read as a `T`, or the first place it does not fit.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, FieldError> {
    T::deserialize(Reader(value))
}

/// A `serde` deserializer over a borrowed `Value` that records where an error happened.
struct Reader<'a>(&'a Value);

impl<'de> de::Deserializer<'de> for Reader<'de> {
    type Error = FieldError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                iter: items.iter().enumerate(),
            }),
            Value::Object(fields) => visitor.visit_map(Fields {
                iter: fields.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, FieldError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        match self.0 {
            // Unit variants, as protocols spell them: `"deliverAs": "steer"`.
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // serde's external tagging, `{"<variant>": <its value>}`: the value is read in place
            // (adjacent tagging would buffer it when it came first, a copy of every variant's
            // reader in the binary).
            Value::Object(fields) if fields.len() == 1 => {
                let (tag, value) = fields.iter().next().expect("one field");
                visitor.visit_enum(Tagged { tag, value })
            }
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => match n.as_f64() {
            Some(f) => de::Unexpected::Float(f),
            None => de::Unexpected::Other("number"),
        },
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// An externally tagged variant: its name and its value. An error in the value is reported
/// under the name (`"ui.select".title`); an unknown name with an empty path.
struct Tagged<'a> {
    tag: &'a String,
    value: &'a Value,
}

impl<'de> de::EnumAccess<'de> for Tagged<'de> {
    type Error = FieldError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), FieldError> {
        let variant = seed.deserialize(BorrowedStrDeserializer::new(self.tag))?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for Tagged<'de> {
    type Error = FieldError;

    fn unit_variant(self) -> Result<(), FieldError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, FieldError> {
        seed.deserialize(Reader(self.value))
            .map_err(|e| e.within(Step::Key(self.tag.clone())))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        de::Deserializer::deserialize_seq(Reader(self.value), visitor)
            .map_err(|e| e.within(Step::Key(self.tag.clone())))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, FieldError> {
        de::Deserializer::deserialize_map(Reader(self.value), visitor)
            .map_err(|e| e.within(Step::Key(self.tag.clone())))
    }
}

struct Items<'a> {
    iter: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
}

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = FieldError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, FieldError> {
        match self.iter.next() {
            Some((i, v)) => seed
                .deserialize(Reader(v))
                .map(Some)
                .map_err(|e| e.within(Step::Index(i))),
            None => Ok(None),
        }
    }
}

struct Fields<'a> {
    iter: serde_json::map::Iter<'a>,
    value: Option<(&'a String, &'a Value)>,
}

impl<'de> de::MapAccess<'de> for Fields<'de> {
    type Error = FieldError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, FieldError> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some((k, v));
                seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, FieldError> {
        let Some((k, v)) = self.value.take() else {
            return Err(de::Error::custom("a value was read before its key"));
        };
        seed.deserialize(Reader(v))
            .map_err(|e| e.within(Step::Key(k.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Message {
        content: String,
        custom_type: Option<String>,
        details: Option<Value>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    enum Deliver {
        Steer,
        FollowUp,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        message: Message,
        names: Option<Vec<String>>,
        deliver_as: Option<Deliver>,
        count: Option<u64>,
    }

    #[test]
    fn a_good_value_reads_as_serde_json_would() {
        let v = json!({"message": {"content": "hi", "details": {"a": [1, null]}},
            "names": ["a"], "deliverAs": "followUp", "count": 3, "extra": true});
        let p: Params = from_value(&v).unwrap();
        assert_eq!(p.message.content, "hi");
        assert_eq!(p.message.details, Some(json!({"a": [1, null]})));
        assert_eq!(p.message.custom_type, None);
        assert_eq!(p.deliver_as, Some(Deliver::FollowUp));
        assert_eq!(p.count, Some(3));
    }

    #[test]
    fn errors_name_the_field() {
        let err = |v: Value| from_value::<Params>(&v).unwrap_err().to_string();
        assert_eq!(err(json!({})), "missing \"message\"");
        assert_eq!(err(json!({"message": {}})), "missing \"message.content\"");
        assert_eq!(
            err(json!({"message": {"content": 5}})),
            "\"message.content\": invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            err(json!({"message": {"content": ""}, "names": ["a", 3]})),
            "\"names[1]\": invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            err(json!({"message": {"content": ""}, "deliverAs": "later"})),
            "\"deliverAs\": unknown value `later`, expected one of `steer`, `followUp`"
        );
        assert_eq!(
            err(json!({"message": {"content": ""}, "count": -1})),
            "\"count\": invalid value: integer `-1`, expected u64"
        );
    }
}
