//! The one strict JSON reader for every JSON file of a bundle (and every record the harness
//! reads back): exactly one JSON value (no trailing bytes), no object with the same key twice at
//! any depth, nesting at most `MAX_DEPTH`, and then the typed parse with the record's own serde
//! rules (`deny_unknown_fields` where the type says so). serde_json alone keeps the last of two
//! equal keys (`"NetworkMode": "host", "NetworkMode": "none"` reads as `none`) inside maps and
//! `Value`s, which lets a bundle say one thing to one reader and another thing to another.
//!
//! How: a first pass drives serde_json's own parser with a visitor that builds nothing but a
//! set of the decoded keys of the object being read (so `"a"` and `"\u0061"` are the same key),
//! then the typed parse reads the same bytes. Both passes are linear in the input (each key is
//! inserted once into a hash set); the grammar is serde_json's in both, so the two can never
//! disagree about what the bytes are. This module never prints: error text carries bundle
//! strings (a duplicate key, serde's "unknown field"), and callers escape it for a terminal.

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// Deepest nesting of arrays and objects accepted (serde_json's own limit is 128).
pub const MAX_DEPTH: usize = 64;

/// Why bytes are not strict JSON of the wanted type. The text carries input strings: escape it
/// before it reaches a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictJsonError(String);

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StrictJsonError {}

/// Parse `bytes` strictly as `T`: [`check`] first, then serde_json's typed parse.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StrictJsonError> {
    check(bytes)?;
    serde_json::from_slice(bytes).map_err(|e| StrictJsonError(e.to_string()))
}

/// Whether `bytes` is exactly one JSON value with no duplicate key at any depth and nesting at
/// most [`MAX_DEPTH`]. Linear time; allocates only the keys of the objects on the current path.
pub fn check(bytes: &[u8]) -> Result<(), StrictJsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Strict { depth: 0 }
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| StrictJsonError(e.to_string()))
}

/// The first pass: accepts any JSON value, remembers nothing but the keys of each open object.
#[derive(Clone, Copy)]
struct Strict {
    depth: usize,
}

impl Strict {
    fn deeper<E: de::Error>(self) -> Result<Strict, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(Strict {
            depth: self.depth + 1,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        let mut keys: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            map.next_value_seed(inner)?;
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[test]
    fn a_duplicate_key_is_rejected_at_any_depth() {
        for text in [
            r#"{"NetworkMode":"host","NetworkMode":"none"}"#,
            r#"{"a":{"b":[{"c":1,"c":2}]}}"#,
            r#"[[{"k":1,"j":2,"k":3}]]"#,
            r#"{"a":1,"\u0061":2}"#,
        ] {
            let error = check(text.as_bytes()).unwrap_err().to_string();
            assert!(error.contains("duplicate key"), "{text}: {error}");
        }
    }

    #[test]
    fn equal_keys_in_sibling_objects_are_fine() {
        check(br#"{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":1}]}"#).unwrap();
    }

    #[test]
    fn maps_and_values_are_strict_too() {
        // serde_json alone keeps the last key here; the strict reader refuses.
        let text = br#"{"x":1,"x":2}"#;
        assert_eq!(
            serde_json::from_slice::<BTreeMap<String, u32>>(text).unwrap()["x"],
            2
        );
        assert!(from_slice::<BTreeMap<String, u32>>(text).is_err());
        assert!(from_slice::<serde_json::Value>(text).is_err());
    }

    #[test]
    fn trailing_bytes_and_deep_nesting_are_rejected() {
        assert!(check(b"{} {}").is_err());
        assert!(check(b"1 x").is_err());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(check(deep.as_bytes())
            .unwrap_err()
            .to_string()
            .contains("nesting"));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        check(ok.as_bytes()).unwrap();
    }

    #[test]
    fn the_typed_rules_still_apply() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct R {
            #[allow(dead_code)]
            a: u32,
        }
        assert!(from_slice::<R>(br#"{"a":1}"#).is_ok());
        let error = from_slice::<R>(br#"{"a":1,"b":2}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field"), "{error}");
    }
}
