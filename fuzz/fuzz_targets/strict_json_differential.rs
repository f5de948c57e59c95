//! Fuzz target: the strict JSON reader against serde_json on the same bytes. Whenever
//! serde_json rejects, strict must reject; whenever strict accepts, both read the same value;
//! strict may reject what serde_json accepts only for a duplicate key or nesting beyond its
//! bound, and a duplicate it reports must really be there (re-read through a map of lists).

#![no_main]

use libfuzzer_sys::fuzz_target;
use scopebox_schema::strict_json;
use serde_json::Value;

/// Whether some object in `data` has the same key twice: serde_json's own `Value` cannot tell
/// (last key wins), so the bytes are re-read by a visitor that sorts every object's keys.
fn has_duplicate(data: &[u8]) -> bool {
    use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
    struct Dup;
    impl<'de> Visitor<'de> for Dup {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("json")
        }
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E>(self, _: &str) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            let mut any = false;
            while let Some(d) = seq.next_element_seed(DupSeed)? {
                any |= d;
            }
            Ok(any)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut keys = Vec::new();
            let mut any = false;
            while let Some(k) = map.next_key::<String>()? {
                any |= map.next_value_seed(DupSeed)?;
                keys.push(k);
            }
            let n = keys.len();
            keys.sort();
            keys.dedup();
            Ok(any || keys.len() != n)
        }
    }
    struct DupSeed;
    impl<'de> serde::de::DeserializeSeed<'de> for DupSeed {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            d.deserialize_any(Dup)
        }
    }
    use serde::de::DeserializeSeed;
    DupSeed
        .deserialize(&mut serde_json::Deserializer::from_slice(data))
        .unwrap_or(false)
}

fuzz_target!(|data: &[u8]| {
    let serde = serde_json::from_slice::<Value>(data);
    let strict = strict_json::from_slice::<Value>(data);
    match (&serde, &strict) {
        (Err(_), Ok(_)) => panic!("strict accepted what serde_json rejects"),
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the two readers disagree on the value"),
        (Ok(_), Err(e)) => {
            let text = e.to_string();
            let expected = text.contains("duplicate key") || text.contains("nesting deeper");
            assert!(
                expected,
                "strict rejected valid JSON for another reason: {text}"
            );
            if text.contains("duplicate key") {
                assert!(
                    has_duplicate(data),
                    "strict reported a duplicate that is not there"
                );
            }
        }
        (Err(_), Err(_)) => {}
    }
});
